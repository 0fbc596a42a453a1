#!/usr/bin/env bats
# moat's systemd cgroup driver and the pure cgroup v2 details, on a host
# where systemd is PID 1 (the check-host guest; tests/host/guest.sh runs
# this). Each limit is checked from inside the container after systemd had
# its chance to rewrite the cgroup (daemon-reload), and every unit moat
# registers must be gone after delete.

load ../bats/helpers
load ../bats/runtime_helpers

setup() {
	requires_root
	[ "$(cat /proc/1/comm)" = systemd ] || skip "systemd is not PID 1 here"
	[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || skip "not a pure cgroup v2 host"
	setup_bundle
	ID="sd-$BATS_TEST_NUMBER-$$"
	SLICE="moatsd${BATS_TEST_NUMBER}x$$"
	update_config '.process.args = ["sleep", "300"]'
}

teardown() {
	teardown_bundle
	systemctl stop "$SLICE.slice" "$SLICE-pod1.slice" "system-$SLICE.slice" 2>/dev/null || true
	systemctl reset-failed 2>/dev/null || true
}

# moat with --systemd-cgroup, as containerd, CRI-O and Podman call it.
sdmoat() {
	moat --systemd-cgroup "$@"
}

container_status() {
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" state "$1" | jq -r .status
}

unit_prop() { # unit_prop UNIT PROPERTY
	systemctl show -P "$2" "$1"
}

# What a busybox sh in the container gets when it connects to ADDR:80.
connect_verdict() {
	sdmoat exec "$ID" sh -c "nc -w 2 $1 80 </dev/null 2>&1; true"
}

@test "systemd: a transient scope with Delegate=yes, at the cgroup moat made, limits kept across daemon-reload" {
	update_config --arg p "system.slice:moat:$ID" '.linux.cgroupsPath = $p'
	sdmoat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	unit="moat-$ID.scope"
	cg="/sys/fs/cgroup/system.slice/$unit"
	[ "$(unit_prop "$unit" ActiveState)" = active ]
	[ "$(unit_prop "$unit" ControlGroup)" = "/system.slice/$unit" ]
	[ "$(unit_prop "$unit" Delegate)" = yes ]
	[ "$(unit_prop "$unit" Slice)" = system.slice ]
	pid=$(container_pid "$ID")
	[ "$(cat /proc/"$pid"/cgroup)" = "0::/system.slice/$unit" ]
	# systemd asked who owns the pid: the container's unit.
	[ "$(systemctl status "$pid" 2>/dev/null | head -1 | awk '{print $2}')" = "$unit" ]

	# systemd rewrites a unit's cgroup files from its properties whenever it
	# realizes the unit: these must still be moat's.
	systemctl daemon-reload
	[ "$(cat "$cg/memory.max")" = $((512 * 1024 * 1024)) ]
	[ "$(cat "$cg/memory.swap.max")" = 0 ]
	[ "$(cat "$cg/pids.max")" = 64 ]
	[ "$(cat "$cg/cpu.max")" = "100000 100000" ]
	sdmoat start "$ID"
	[ "$status" -eq 0 ]
	# From inside: the container's own cgroup (its namespace's root), and a
	# fork bomb stops at 64 tasks.
	sdmoat exec "$ID" cat /proc/self/cgroup
	[ "$output" = "0::/" ]
	# (A subshell forks until refused, and dies then; counted without forking.)
	sdmoat exec "$ID" sh -c '(i=0; while [ $i -lt 100 ]; do sleep 60 & i=$((i+1)); done) 2>/dev/null; set -- /proc/[0-9]*; echo $#; kill -9 -1'
	[ "$output" -le 64 ]
	[ "$output" -ge 50 ]
	# The BPF network guard is where the cgroup is: EPERM, not "unreachable".
	run connect_verdict 10.1.2.3
	[[ "$output" == *"not permitted"* ]]

	sdmoat delete --force "$ID"
	[ "$status" -eq 0 ]
	[ ! -d "$cg" ]
	run systemctl is-active "$unit"
	[ "$output" != active ]
	[ "$(unit_prop "$unit" LoadState)" != loaded ] || [ "$(unit_prop "$unit" ActiveState)" = inactive ]
}

@test "systemd: kubepods-style slice path: the scope lands in the nested slices" {
	update_config --arg p "$SLICE-pod1.slice:cri-containerd:$ID" '.linux.cgroupsPath = $p'
	sdmoat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	unit="cri-containerd-$ID.scope"
	rel="/$SLICE.slice/$SLICE-pod1.slice/$unit"
	[ "$(unit_prop "$unit" ControlGroup)" = "$rel" ]
	[ "$(unit_prop "$unit" Slice)" = "$SLICE-pod1.slice" ]
	grep -qx "$(container_pid "$ID")" "/sys/fs/cgroup$rel/cgroup.procs"
	# Controllers enabled all the way down.
	for d in "/sys/fs/cgroup/$SLICE.slice" "/sys/fs/cgroup/$SLICE.slice/$SLICE-pod1.slice"; do
		for c in cpu memory pids io; do
			grep -qw "$c" "$d/cgroup.subtree_control"
		done
	done
	sdmoat delete --force "$ID"
	[ "$status" -eq 0 ]
	[ ! -d "/sys/fs/cgroup$rel" ]
	[ "$(unit_prop "$unit" ActiveState)" != active ]
}

@test "systemd: a name that is a slice becomes a transient slice, stopped on delete" {
	update_config --arg p "system.slice:x:system-$SLICE.slice" '.linux.cgroupsPath = $p'
	sdmoat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	unit="system-$SLICE.slice"
	[ "$(unit_prop "$unit" ActiveState)" = active ]
	[ "$(unit_prop "$unit" ControlGroup)" = "/system.slice/$unit" ]
	grep -qx "$(container_pid "$ID")" "/sys/fs/cgroup/system.slice/$unit/cgroup.procs"
	sdmoat delete --force "$ID"
	[ "$status" -eq 0 ]
	[ "$(unit_prop "$unit" ActiveState)" != active ]
	[ ! -d "/sys/fs/cgroup/system.slice/$unit" ]
}

@test "systemd: a slice name systemd would put elsewhere is refused, nothing left" {
	update_config --arg p "system.slice:x:$SLICE.slice" '.linux.cgroupsPath = $p'
	sdmoat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"systemd: unit $SLICE.slice is at /$SLICE.slice, not at /system.slice/$SLICE.slice"* ]]
	[ ! -d "/sys/fs/cgroup/system.slice/$SLICE.slice" ]
	[ "$(unit_prop "$SLICE.slice" ActiveState)" != active ]
	[ ! -d "$ROOT/$ID" ]
}

@test "systemd: update reaches systemd too (daemon-reload keeps the new limits)" {
	update_config --arg p "system.slice:moat:$ID" '.linux.cgroupsPath = $p'
	sdmoat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	cg="/sys/fs/cgroup/system.slice/moat-$ID.scope"
	sdmoat update --pids-limit 20 --memory 67108864 "$ID"
	[ "$status" -eq 0 ]
	systemctl daemon-reload
	[ "$(cat "$cg/pids.max")" = 20 ]
	[ "$(cat "$cg/memory.max")" = 67108864 ]
	[ "$(unit_prop "moat-$ID.scope" TasksMax)" = 20 ]
}

@test "v2: pause freezes the whole cgroup, resume thaws it; systemd leaves it frozen" {
	update_config --arg p "system.slice:moat:$ID" '.linux.cgroupsPath = $p'
	sdmoat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	cg="/sys/fs/cgroup/system.slice/moat-$ID.scope"
	sdmoat pause "$ID"
	[ "$status" -eq 0 ]
	grep -qx "frozen 1" "$cg/cgroup.events"
	systemctl daemon-reload
	grep -qx "frozen 1" "$cg/cgroup.events"
	[ "$(container_status "$ID")" = paused ]
	sdmoat resume "$ID"
	[ "$status" -eq 0 ]
	grep -qx "frozen 0" "$cg/cgroup.events"
	sdmoat exec "$ID" true
	[ "$status" -eq 0 ]
}

@test "v2: delete --force kills every process of the cgroup (cgroup.kill), forks included" {
	update_config --arg p "system.slice:moat:$ID" '.linux.cgroupsPath = $p'
	update_config '.process.args = ["sh", "-c", "(while :; do sleep 1 & wait; done) & (sleep 1000 &) ; exec sleep 1000"]'
	sdmoat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	cg="/sys/fs/cgroup/system.slice/moat-$ID.scope"
	sleep 2
	pids=$(cat "$cg/cgroup.procs")
	[ "$(echo "$pids" | wc -l)" -ge 3 ]
	sdmoat delete --force "$ID"
	[ "$status" -eq 0 ]
	[ ! -d "$cg" ]
	for p in $pids; do [ ! -e "/proc/$p" ] || [ "$(awk '{print $3}' "/proc/$p/stat")" = Z ]; done
}

@test "v2: an OOM kill in the container shows in events (memory.events oom_kill)" {
	update_config --arg p "system.slice:moat:$ID" '.linux.cgroupsPath = $p'
	update_config '.linux.resources.memory.limit = 16777216'
	sdmoat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	cg="/sys/fs/cgroup/system.slice/moat-$ID.scope"
	[ "$(cat "$cg/memory.max")" = 16777216 ]
	# events, as engines run it, tells an OOM kill as it happens.
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" events --interval 60 "$ID" >"$BUNDLE/events" 2>&1 &
	events_pid=$!
	sleep 2
	# A memory hog: a shell string doubling in size.
	sdmoat exec "$ID" sh -c 'a=xxxxxxxxxxxxxxxx; while :; do a="$a$a"; done'
	[ "$status" -ne 0 ]
	grep -q "^oom_kill [1-9]" "$cg/memory.events"
	sleep 3
	kill "$events_pid"
	wait "$events_pid" || true
	cat "$BUNDLE/events"
	grep -qx "{\"type\":\"oom\",\"id\":\"$ID\"}" "$BUNDLE/events"
	sdmoat events --stats "$ID"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.data.memory.usage.failcnt >= 1'
}

@test "no systemd form (absolute path) with --systemd-cgroup: plain cgroupfs, no unit" {
	update_config --arg p "/moat-sd-$ID" '.linux.cgroupsPath = $p'
	sdmoat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(cat "/proc/$(container_pid "$ID")/cgroup")" = "0::/moat-sd-$ID" ]
	sdmoat delete --force "$ID"
	[ ! -d "/sys/fs/cgroup/moat-sd-$ID" ]
}
