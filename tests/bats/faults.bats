#!/usr/bin/env bats
# Faults: moat killed with SIGKILL in the middle of create, the container's
# init killed while moat waits for it, a full state dir, many creates at
# once. After each, `delete --force` (or create's own undo) leaves nothing:
# no state dir, cgroup in any hierarchy, mount, process or BPF program.
#
# The kill -9 and "fault point" tests need the fault points of a DEBUG=1
# build (`make BUILD=build-debug DEBUG=1`); with any other binary they skip.

load helpers

setup() {
	requires_root
	setup_bundle
	# Container ids are unique to this bundle: cgroups are host-wide.
	U="${BUNDLE##*.}"
	update_config '.process.args = ["sleep", "100"]'
}

teardown() {
	[ -z "${SUID_DUMPABLE_WAS:-}" ] || echo "$SUID_DUMPABLE_WAS" >/proc/sys/fs/suid_dumpable
	if [ -n "${TINY:-}" ] && mountpoint -q "$TINY"; then
		for d in "$TINY"/*/; do
			[ -d "$d" ] && "$MOAT" --root "$TINY" --config "$MOAT_CONFIG" delete --force "$(basename "$d")" >/dev/null 2>&1
		done
		umount "$TINY"
	fi
	[ -z "${TINY:-}" ] || rmdir "$TINY"
	teardown_bundle
}

needs_fault_points() {
	"$MOAT" --version | grep -q "DEBUG fault points" ||
		skip "$MOAT has no fault points: build it with make BUILD=build-debug DEBUG=1"
}

# Bounded wait for a shell condition.
wait_for() {
	for _ in $(seq 1 600); do
		eval "$1" && return 0
		sleep 0.05
	done
	echo "timed out waiting for: $1" >&2
	return 1
}

# No process has the bundle on its command line or as its cwd or root.
no_process_in_bundle() {
	local p
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = "$$" ] && continue
		grep -qsF "$BUNDLE" "$p/cmdline" && return 1
		case "$(readlink "$p/cwd" 2>/dev/null)$(readlink "$p/root" 2>/dev/null)" in
		*"$BUNDLE"*) return 1 ;;
		esac
	done
	return 0
}

# The BPF programs attached to a container's cgroup v2 directory.
bpf_prog_ids() {
	local dir
	for dir in "/sys/fs/cgroup/unified/moat/$1" "/sys/fs/cgroup/moat/$1"; do
		if [ -d "$dir" ] && [ -e "$dir/cgroup.procs" ] && command -v bpftool >/dev/null; then
			bpftool cgroup show "$dir" 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1}'
			return 0
		fi
	done
}

# The programs moat keeps pinned for later containers with the same
# rules (README, "Network"): a bounded cache, not a leak.
pinned_prog_ids() {
	local pin
	for pin in /sys/fs/bpf/moat/*/*; do
		[ -e "$pin" ] || continue
		bpftool prog show pinned "$pin" 2>/dev/null | awk -F: 'NR == 1 { print $1 }'
	done
}

bpf_progs_gone() {
	local id pinned
	pinned=" $(pinned_prog_ids | tr '\n' ' ') "
	for id in "$@"; do
		[[ "$pinned" == *" $id "* ]] && continue
		bpftool prog show id "$id" >/dev/null 2>&1 && return 1
	done
	return 0
}

everything_gone() {
	local id="$1"
	shift
	assert_nothing_left "$id"
	wait_for no_process_in_bundle
	[ $# -eq 0 ] || wait_for "bpf_progs_gone $*"
	# Every hierarchy, the unified one included.
	! ls -d /sys/fs/cgroup/*/moat/"$id" /sys/fs/cgroup/moat/"$id" 2>/dev/null
}

# kill9_at STAGE: create pauses at STAGE, moat gets SIGKILL there, then
# delete --force must clean up whatever the stage had made.
kill9_at() {
	local stage="$1" id="k-$1-$U" pid progs
	MOAT_DEBUG_PAUSE="$stage" "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" \
		create -b "$BUNDLE" "$id" >"$BUNDLE/create.out" 2>"$BUNDLE/create.err" </dev/null &
	pid=$!
	wait_for "grep -q 'paused at $stage' '$BUNDLE/create.err'"
	progs="$(bpf_prog_ids "$id")"
	echo "$stage: BPF programs attached: $(echo $progs)" >&2
	kill -9 "$pid"
	wait "$pid" || true
	moat delete --force "$id"
	[ "$status" -eq 0 ]
	everything_gone "$id" $progs
	moat state "$id"
	[ "$status" -eq 1 ]
	[[ "$output" == *"does not exist"* ]]
}

@test "kill -9 at after-statedir, then delete --force: nothing left" {
	needs_fault_points
	kill9_at after-statedir
}

@test "kill -9 at after-cgroup, then delete --force: nothing left" {
	needs_fault_points
	kill9_at after-cgroup
}

@test "kill -9 at after-clone, then delete --force: nothing left" {
	needs_fault_points
	kill9_at after-clone
}

@test "kill -9 at after-mounts, then delete --force: nothing left" {
	needs_fault_points
	kill9_at after-mounts
}

@test "kill -9 at before-ready, then delete --force: nothing left" {
	needs_fault_points
	kill9_at before-ready
}

@test "kill -9 at before-ready with hooks, then delete --force" {
	needs_fault_points
	update_config '.hooks = {"createRuntime": [{"path": "/bin/true"}], "poststop": [{"path": "/bin/true"}]}'
	kill9_at before-ready
}

# ptrace_attach_as UID PID: PTRACE_ATTACH to PID as host uid UID; status 0
# when it attached.
ptrace_attach_as() {
	setpriv --reuid="$1" --regid="$1" --clear-groups /usr/bin/python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pid = int(sys.argv[1])
if libc.ptrace(16, pid, 0, 0) != 0:
    print("attach:", os.strerror(ctypes.get_errno()))
    sys.exit(1)
os.waitpid(pid, 0)
libc.ptrace(17, pid, 0, 0)
print("attached")' "$2"
}

# The kernel makes a process dumpable again after a change of ids or user
# namespace where fs.suid_dumpable is 1: set for the test, restored after.
suid_dumpable_1() {
	SUID_DUMPABLE_WAS=$(cat /proc/sys/fs/suid_dumpable)
	echo 1 >/proc/sys/fs/suid_dumpable
}

# A user namespace joined by path belongs to whoever made it: there its
# owner has CAP_SYS_PTRACE over moat's process that joins it to clone the
# init, which is still host uid 0 to the host's files.
@test "kill -9 at in-joined-userns: the process cloning the init in a joined user namespace cannot be ptraced by its owner (fs.suid_dumpable 1); then delete --force: nothing left" {
	needs_fault_points
	suid_dumpable_1
	setpriv --reuid=65534 --regid=65534 --clear-groups unshare --user --map-root-user sleep 1000 &
	holder=$!
	wait_for "[ \"\$(readlink /proc/$holder/ns/user)\" != \"\$(readlink /proc/self/ns/user)\" ]"
	update_config --arg p "/proc/$holder/ns/user" '.linux.namespaces += [{"type": "user", "path": $p}]
		| del(.linux.uidMappings, .linux.gidMappings)'
	local id="userns-owner-$U"
	MOAT_DEBUG_PAUSE=in-joined-userns "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" \
		create -b "$BUNDLE" "$id" >"$BUNDLE/create.out" 2>"$BUNDLE/create.err" </dev/null &
	pid=$!
	wait_for "grep -q 'paused at in-joined-userns' '$BUNDLE/create.err'"
	mid=$(pgrep -P "$pid")
	[ "$(readlink "/proc/$mid/ns/user")" = "$(readlink "/proc/$holder/ns/user")" ]
	run ptrace_attach_as 65534 "$mid"
	attach_status=$status
	echo "$output" >&2
	kill -9 "$mid" "$pid"
	wait "$pid" || true
	kill -9 "$holder"
	wait "$holder" || true
	moat delete --force "$id"
	[ "$status" -eq 0 ]
	everything_gone "$id"
	[ "$attach_status" -ne 0 ]
}

# The init in its own user namespace, after it became that namespace's
# root: its block's uid owns it, as it does a process of a container
# sharing the block (docker --pid container:X).
@test "kill -9 at before-ready: the init, root of its user namespace, cannot be ptraced by its block's uid (fs.suid_dumpable 1); then delete --force: nothing left" {
	needs_fault_points
	suid_dumpable_1
	local id="dumpable-$U"
	MOAT_DEBUG_PAUSE=before-ready "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" \
		create -b "$BUNDLE" "$id" >"$BUNDLE/create.out" 2>"$BUNDLE/create.err" </dev/null &
	pid=$!
	wait_for "grep -q 'paused at before-ready' '$BUNDLE/create.err'"
	init=$(pgrep -P "$pid")
	block=$(awk '/^Uid:/ { print $2 }' "/proc/$init/status")
	[ "$block" -ge $((0x40000000)) ]
	run ptrace_attach_as "$block" "$init"
	attach_status=$status
	echo "$output" >&2
	kill -9 "$pid"
	wait "$pid" || true
	moat delete --force "$id"
	[ "$status" -eq 0 ]
	everything_gone "$id"
	[ "$attach_status" -ne 0 ]
}

# create_failed_cleanly PID ID: the background create PID exits 1 with one
# line naming the verb and id, and leaves nothing.
create_failed_cleanly() {
	local rc=0
	wait "$1" || rc=$?
	cat "$BUNDLE/create.err" >&2
	[ "$rc" -eq 1 ]
	[ "$(wc -l <"$BUNDLE/create.err")" -eq 1 ]
	grep -q "^moat: create $2: " "$BUNDLE/create.err"
	everything_gone "$2"
}

@test "the init killed while moat runs a createRuntime hook: create fails cleanly" {
	local id="i1-$U" pid init
	update_config --arg b "$BUNDLE" '.hooks = {"createRuntime": [{"path": "/bin/sh",
		"args": ["sh", "-c", "cat > \($b)/hook-state; while [ ! -e \($b)/hook-go ]; do sleep 0.05; done"]}]}'
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" create -b "$BUNDLE" "$id" \
		>"$BUNDLE/create.out" 2>"$BUNDLE/create.err" </dev/null &
	pid=$!
	wait_for "[ -s '$BUNDLE/hook-state' ]"
	init="$(jq -r .pid "$BUNDLE/hook-state")"
	[ "$init" -gt 0 ]
	kill -9 "$init"
	touch "$BUNDLE/hook-go"
	create_failed_cleanly "$pid" "$id"
}

@test "the init killed while it runs a createContainer hook: create fails cleanly" {
	local id="i2-$U" pid init
	update_config '.hooks = {"createContainer": [{"path": "/bin/sleep", "args": ["sleep", "100"]}]}'
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" create -b "$BUNDLE" "$id" \
		>"$BUNDLE/create.out" 2>"$BUNDLE/create.err" </dev/null &
	pid=$!
	# The init's child is the hook.
	wait_for "init=\$(jq -r .pid '$ROOT/$id/state.json' 2>/dev/null) && [ \"\$init\" -gt 0 ] && [ -n \"\$(cat /proc/\$init/task/*/children 2>/dev/null)\" ]"
	init="$(jq -r .pid "$ROOT/$id/state.json")"
	kill -9 "$init"
	create_failed_cleanly "$pid" "$id"
}

@test "fault point after-clone: the init's start time unreadable, create fails cleanly (no state names an init without it)" {
	needs_fault_points
	local id="st-$U" pid init
	# Appended: the file emptied below takes the next line at its start.
	MOAT_DEBUG_PAUSE=after-clone "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" \
		create -b "$BUNDLE" "$id" >"$BUNDLE/create.out" 2>>"$BUNDLE/create.err" </dev/null &
	pid=$!
	wait_for "grep -q 'paused at after-clone' '$BUNDLE/create.err'"
	# moat's one child is the init; /proc/INIT/stat reads empty under a
	# mount (gone with the process).
	init="$(cat /proc/"$pid"/task/*/children)"
	[[ "$init" =~ ^[0-9]+\ ?$ ]]
	mount --bind /dev/null "/proc/${init% }/stat"
	: >"$BUNDLE/create.err"
	kill -USR1 "$pid"
	create_failed_cleanly "$pid" "$id"
	grep -q "^moat: create $id: reading the init's start time: " "$BUNDLE/create.err"
}

@test "a full state dir (ENOSPC): create fails cleanly at every point, then works" {
	# Outside the bundle, where assert_nothing_left looks for mounts.
	TINY="$(mktemp -d "${BATS_TMPDIR:-/tmp}/moat-tiny.XXXXXX")"
	mount -t tmpfs -o size=64k,nr_inodes=64,mode=0700 tmpfs "$TINY"
	local free id n=0 ok=0
	# Leave 0, 4, 8 ... KiB free: each create runs out at a later write.
	for free in 0 4 8 12 16 20 24 28 32 40 48 56; do
		id="nospc$free-$U"
		rm -f "$TINY/fill"
		dd if=/dev/zero of="$TINY/fill" bs=1k count=$((64 - free)) 2>/dev/null || true
		rc=0
		"$MOAT" --root "$TINY" --config "$MOAT_CONFIG" create -b "$BUNDLE" "$id" \
			>"$BUNDLE/create.out" 2>"$BUNDLE/create.err" </dev/null || rc=$?
		echo "$free KiB free: status $rc: $(cat "$BUNDLE/create.err")" >&2
		if [ "$rc" -eq 0 ]; then
			ok=$((ok + 1))
			"$MOAT" --root "$TINY" --config "$MOAT_CONFIG" delete --force "$id"
		else
			n=$((n + 1))
			[ "$rc" -eq 1 ]
			[ "$(wc -l <"$BUNDLE/create.err")" -eq 1 ]
			grep -q "^moat: create $id: " "$BUNDLE/create.err"
		fi
		ROOT="$TINY" assert_nothing_left "$id"
		wait_for no_process_in_bundle
	done
	[ "$n" -gt 0 ]
	# With the space back, the same root works.
	rm -f "$TINY/fill"
	"$MOAT" --root "$TINY" --config "$MOAT_CONFIG" create -b "$BUNDLE" "after-$U" </dev/null >/dev/null 2>&1
	"$MOAT" --root "$TINY" --config "$MOAT_CONFIG" delete --force "after-$U"
	ROOT="$TINY" assert_nothing_left "after-$U"
	[ -z "$(ls -A "$TINY" | grep -v '^\.cache$')" ]
	umount "$TINY"
	rmdir "$TINY"
	TINY=
}

@test "200 creates in parallel on distinct ids all succeed; then nothing is left" {
	local i pids=() failed=0
	for i in $(seq 1 200); do
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" create -b "$BUNDLE" "p$i-$U" \
			>"$BUNDLE/p$i.out" 2>&1 </dev/null &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || { failed=$((failed + 1)); cat "$BUNDLE/p$((i + 1)).out" >&2; }
	done
	[ "$failed" -eq 0 ]
	moat list --format json
	[ "$(echo "$output" | jq '[.[] | select(.status == "created")] | length')" -eq 200 ]
	pids=()
	for i in $(seq 1 200); do
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" delete --force "p$i-$U" \
			>"$BUNDLE/d$i.out" 2>&1 </dev/null &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || { failed=$((failed + 1)); cat "$BUNDLE/d$((i + 1)).out" >&2; }
	done
	[ "$failed" -eq 0 ]
	for i in $(seq 1 200); do
		assert_nothing_left "p$i-$U"
	done
	wait_for no_process_in_bundle
	[ -z "$(ls -A "$ROOT" | grep -v '^\.cache$')" ]
}

@test "20 creates in parallel on one id: exactly one wins, the rest already exists" {
	local i pids=() won=0 lost=0 id="one-$U"
	for i in $(seq 1 20); do
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" create -b "$BUNDLE" "$id" \
			>"$BUNDLE/o$i.out" 2>"$BUNDLE/o$i.err" </dev/null &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		if wait "${pids[$i]}"; then
			won=$((won + 1))
		else
			lost=$((lost + 1))
			grep -q "^moat: create $id: container with id $id already exists$" "$BUNDLE/o$((i + 1)).err" ||
				{ cat "$BUNDLE/o$((i + 1)).err" >&2; false; }
		fi
	done
	[ "$won" -eq 1 ]
	[ "$lost" -eq 19 ]
	moat state "$id"
	[ "$(echo "$output" | jq -r .status)" = created ]
	moat delete --force "$id"
	[ "$status" -eq 0 ]
	everything_gone "$id"
}
