#!/usr/bin/env bats
# containerd: `ctr run --runtime io.containerd.runc.v2 --runc-binary moat`
# (the runc v2 shim running moat as its runc), and the CRI plugin's runtime
# handler "moat" of contrib/containerd-config.toml, which is what a
# Kubernetes RuntimeClass selects: driven here with the kubelet's own calls
# (cri.bash), as crictl is not available.

load helpers
load cri

setup_file() {
	require_engines
}

teardown() {
	local id
	for id in $(ctr_cli containers ls -q 2>/dev/null); do
		ctr_cli tasks delete --force "$id" >/dev/null 2>&1 || true
		ctr_cli containers delete "$id" >/dev/null 2>&1 || true
	done
	for id in ${PODS:-}; do
		cri_remove_pod "$id" >/dev/null 2>&1 || true
	done
	# The parent slices a systemd cgroupsPath made (the kubelet's, on a node).
	if [ -n "${SLICE_ROOT:-}" ]; then
		find /sys/fs/cgroup -depth -type d -path "*/$SLICE_ROOT*" -exec rmdir {} + 2>/dev/null || true
	fi
}

# ctr run with moat as the shim's runc binary.
crun_moat() { ct run --runtime io.containerd.runc.v2 --runc-binary "$MOAT" "$@"; }

# A detached ctr task running a shell script, its output in $log.
start_detached() {
	name="moat-c$BATS_TEST_NUMBER"
	log="$BATS_TEST_TMPDIR/$name.log"
	crun_moat -d --log-uri "file://$log" "$IMAGE" "$name" sh -c \
		'trap "echo got-hup" HUP; trap "echo got-term; exit 0" TERM; echo started; while :; do sleep 0.1; done'
	[ "$status" -eq 0 ]
	wait_for 10 grep -q started "$log"
	pid=$(ctr_cli tasks ls | awk -v n="$name" '$1 == n { print $2 }')
	[ -n "$pid" ]
}

task_status() { ctr_cli tasks ls | awk -v n="$1" '$1 == n { print $3 }'; }

@test "ctr run --rm: output and the exit status" {
	crun_moat --rm "$IMAGE" "moat-c$BATS_TEST_NUMBER" sh -c 'echo hello from moat; exit 3'
	[ "$status" -eq 3 ]
	[ "$output" = "hello from moat" ]
}

@test "ctr run -t gets a terminal (console socket)" {
	in_tty "${CTR[@]}" run --rm -t --runtime io.containerd.runc.v2 --runc-binary "$MOAT" \
		"$IMAGE" "moat-c$BATS_TEST_NUMBER" sh -c 'tty; exit 2'
	[ "$status" -eq 2 ]
	[[ "$output" == */dev/pts/* ]]
}

@test "ctr task exec (status), exec -t, ps" {
	start_detached
	ct task exec --exec-id e1 "$name" sh -c 'echo exec-hi; exit 4'
	[ "$status" -eq 4 ]
	[ "$output" = exec-hi ]
	in_tty "${CTR[@]}" task exec -t --exec-id e2 "$name" tty
	[ "$status" -eq 0 ]
	[[ "$output" == */dev/pts/* ]]
	ct task ps "$name"
	[ "$status" -eq 0 ]
	[[ "$output" == *"$pid"* ]]
}

@test "ctr task pause / resume" {
	start_detached
	ct task pause "$name"
	[ "$status" -eq 0 ]
	[ "$(task_status "$name")" = PAUSED ]
	is_frozen "$pid"
	ct task resume "$name"
	[ "$status" -eq 0 ]
	[ "$(task_status "$name")" = RUNNING ]
	! is_frozen "$pid" || false
}

@test "ctr task kill: HUP and TERM reach the process, KILL stops it; delete leaves nothing" {
	start_detached
	ct task kill -s HUP "$name"
	[ "$status" -eq 0 ]
	wait_for 10 grep -q got-hup "$log"
	[ "$(task_status "$name")" = RUNNING ]
	ct task kill -s TERM "$name"
	[ "$status" -eq 0 ]
	wait_for 10 eval '[ "$(task_status "$name")" = STOPPED ]'
	grep -q got-term "$log"

	ct task delete "$name"
	ct container delete "$name"
	start_detached
	ct task kill -s KILL "$name"
	[ "$status" -eq 0 ]
	wait_for 10 eval '[ "$(task_status "$name")" = STOPPED ]'
	ct task delete "$name"
	[ "$status" -eq 0 ]
	! kill -0 "$pid" 2>/dev/null || false
	[ ! -e "/run/containerd/runc/$CTR_NS/$name" ]
}

@test "ctr run --net-host --privileged: moat's profile holds (lo only, no capabilities)" {
	crun_moat --rm --net-host --privileged "$IMAGE" "moat-c$BATS_TEST_NUMBER" sh -c "$PROBE"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ifaces: lo "* ]]
	assert_profile
}

@test "ctr --runc-systemd-cgroup: a systemd cgroupsPath maps to cgroupfs without systemd" {
	local slice="moattest-pod$BATS_TEST_NUMBER$$.slice"
	SLICE_ROOT=moattest.slice
	crun_moat -d --runc-systemd-cgroup --cgroup "$slice:cri-containerd:c$$" "$IMAGE" \
		"moat-c$BATS_TEST_NUMBER" sleep 100
	[ "$status" -eq 0 ]
	pid=$(ctr_cli tasks ls | awk -v n="moat-c$BATS_TEST_NUMBER" '$1 == n { print $2 }')
	grep -E "^[0-9]+:pids:/moattest.slice/$slice/cri-containerd-c$$.scope$" "/proc/$pid/cgroup" ||
		grep -E "^0::/moattest.slice/$slice/cri-containerd-c$$.scope$" "/proc/$pid/cgroup"
	[ "$(pids_limit "$pid")" = 64 ]
}

@test "containerd loaded the moat handler of contrib/containerd-config.toml" {
	run ctr --address "$CONTAINERD_SOCK" plugins ls
	echo "$output" | grep -E 'io.containerd.grpc.v1 +cri .* ok'
	run containerd --config "$CONTAINERD_CONFIG" config dump
	[ "$status" -eq 0 ]
	echo "$output" | grep -A30 -F '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.moat]' |
		grep -E 'runtime_type = "io.containerd.runc.v2"'
	echo "$output" | grep -A30 -F '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.moat.options]' |
		grep -F "BinaryName = \"$MOAT\""
}

# The kubelet's calls for a pod with runtimeClassName: moat.
run_pod() { # run_pod NAME HANDLER NETWORK(0 pod, 2 node) PRIVILEGED [NAMESERVER [KEY VALUE]]
	logdir="$BATS_TEST_TMPDIR/pod-$1"
	mkdir -p "$logdir"
	pod_cfg=$(pod_config "$1-$BATS_TEST_NUMBER" "$logdir" "$3" "$4" "${5:-}" "${6:-}" "${7:-}")
	cri_run_pod "$2" "$pod_cfg"
	PODS="${PODS:-} $pod_id"
}

@test "RuntimeClass handlers moat and moat-egress: a pod on the CNI network" {
	# The control: the same pod with the egress profile and the gateway as
	# its cluster DNS (a private service IP in Kubernetes) reaches the
	# gateway's port 53 and nothing else of it (runc cannot run a pod
	# sandbox here: its oom_score_adj of -998 needs CAP_SYS_RESOURCE, which
	# root lacks on this machine).
	run_pod control moat-egress 0 0 "$POD_GW"
	cc=$(container_config app "$IMAGE" 0 sh -c "echo \"port53: \$($(connect_probe "$POD_GW" 53))\"; echo \"port9: \$($(connect_probe "$POD_GW" 9))\"; $(connect_probe 169.254.169.254 80); echo done; sleep 1000")
	cri_start_container "$pod_cfg" "$cc"
	wait_for 20 grep -q 'stdout F done' "$logdir/app.log"
	cat "$logdir/app.log" >&2
	grep -q "port53: nc: can't connect to remote host ($POD_GW): Connection refused" "$logdir/app.log"
	grep -q "port9: nc: can't connect to remote host ($POD_GW): Operation not permitted" "$logdir/app.log"
	grep -q "(169.254.169.254): Operation not permitted" "$logdir/app.log"

	run_pod moat moat 0 0
	cc=$(container_config app "$IMAGE" 0 sh -c "$PROBE; $(connect_probe "$POD_GW" 9); echo done; sleep 1000")
	cri_start_container "$pod_cfg" "$cc"
	wait_for 20 grep -q 'stdout F done' "$logdir/app.log"
	cat "$logdir/app.log" >&2
	grep -q 'ifaces: eth0 lo' "$logdir/app.log"
	grep -q "($POD_GW): Operation not permitted" "$logdir/app.log"
	assert_profile "$logdir/app.log"
}

@test "RuntimeClass moat-egress: the pod annotation run.moat.egress-allow reaches moat (pod_annotations) and narrows it to an allowlist" {
	run_pod narrow moat-egress 0 0 "$POD_GW" run.moat.egress-allow "198.51.100.0/24:443"
	cc=$(container_config app "$IMAGE" 0 sh -c "echo \"public: \$($(connect_probe 203.0.113.1 443))\"; echo \"dns: \$($(connect_probe "$POD_GW" 53))\"; echo done; sleep 1000")
	cri_start_container "$pod_cfg" "$cc"
	wait_for 20 grep -q 'stdout F done' "$logdir/app.log"
	cat "$logdir/app.log" >&2
	# A public address outside the allowlist: refused at connect.
	grep -q "public: nc: can't connect to remote host (203.0.113.1): Operation not permitted" "$logdir/app.log"
	# The pod's nameserver still answers on port 53.
	grep -q "dns: nc: can't connect to remote host ($POD_GW): Connection refused" "$logdir/app.log"
}

@test "RuntimeClass handler moat: a sidecar on localhost works; exec goes through the profile" {
	run_pod sidecar moat 0 0
	cc=$(container_config server "$IMAGE" 0 nc -ll -p 8080 -e echo from-sidecar)
	cri_start_container "$pod_cfg" "$cc"
	server=$ctr_id
	cc=$(container_config client "$IMAGE" 0 sleep 1000)
	cri_start_container "$pod_cfg" "$cc"
	client=$ctr_id
	wait_for 20 eval 'cri_exec_sync "$client" sh -c "nc -w 2 127.0.0.1 8080 </dev/null" && [ "$exec_stdout" = from-sidecar ]'
	cri_exec_sync "$client" sh -c 'grep CapEff /proc/self/status; exit 3'
	[ "$exec_exit" = 3 ]
	[[ "$exec_stdout" == *"CapEff:	0000000000000000"* ]]
	[ "$(cri_container_state "$server")" = "1 0" ]
}

@test "RuntimeClass handler moat: shareProcessNamespace: a pod's containers see each other's processes, in the pause container's user namespace and block (G12)" {
	CRI_PID_MODE=0
	run_pod sharedpid moat 0 0
	cri_start_container "$pod_cfg" "$(container_config one "$IMAGE" 0 sleep 1001)"
	one=$ctr_id
	cri_start_container "$pod_cfg" "$(container_config two "$IMAGE" 0 sleep 1002)"
	two=$ctr_id
	cri_exec_sync "$two" sh -c 'ps -o args | grep -c "^sleep 100[12]\$"; ps -o pid,args | awk "\$1 == 1 { print \$2, \$3 }"; cat /proc/self/uid_map; id -u; readlink /proc/self/ns/user'
	echo "$exec_stdout" >&2
	[ "$exec_exit" = 0 ]
	mapfile -t lines <<<"$exec_stdout"
	[ "${lines[0]}" = 2 ]
	# pid 1 is the pod's pause container (sleep, in the tests' image).
	[ "${lines[1]}" = "sleep 2147483647" ]
	read -r inside outside count <<<"${lines[2]}"
	[ "$inside $count" = "0 65536" ]
	[ "$outside" -ge $((0x40000000)) ]
	[ "${lines[3]}" = 0 ]
	cri_exec_sync "$one" sh -c 'cat /proc/self/uid_map; readlink /proc/self/ns/user'
	[ "$exec_exit" = 0 ]
	mapfile -t mine <<<"$exec_stdout"
	[ "${mine[0]}" = "${lines[2]}" ]
	[ "${mine[1]}" = "${lines[4]}" ]
}

@test "RuntimeClass handler moat: a privileged pod on the host network is still sandboxed" {
	run_pod hostnet moat 2 1
	cc=$(container_config app "$IMAGE" 1 sh -c "$PROBE; exit 7")
	cri_start_container "$pod_cfg" "$cc"
	wait_for 20 eval '[ "$(cri_container_state "$ctr_id")" = "2 7" ]'
	cat "$logdir/app.log" >&2
	grep -q 'ifaces: lo $' "$logdir/app.log"
	assert_profile "$logdir/app.log"
}
