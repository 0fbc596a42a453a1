#!/usr/bin/env bats
# Namespaces, seen from inside the container: each one is the container's
# own, and what config.json names (mappings, a namespace path) is what the
# container gets.

load helpers
load runtime_helpers

setup() {
	requires_root
	setup_bundle
	ID="t-$BATS_TEST_NUMBER-$$"
	NETNS=""
	IPC_QUEUE=""
}

teardown() {
	teardown_bundle
	[ -z "$NETNS" ] || ip netns delete "$NETNS" 2>/dev/null || true
	[ -z "$IPC_QUEUE" ] || ipcrm -q "$IPC_QUEUE" 2>/dev/null || true
}

@test "uts: the container has config.json's hostname and domainname, the host keeps its own" {
	host_name=$(hostname)
	update_config '.hostname = "moat-uts-test" | .domainname = "moat.example"'
	run_in_container 'hostname; cat /proc/sys/kernel/domainname'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = moat-uts-test ]
	[ "${lines[1]}" = moat.example ]
	[ "$(hostname)" = "$host_name" ]
}

@test "uts: the container's uts namespace is not the host's" {
	run_in_container 'readlink /proc/self/ns/uts'
	[ "$status" -eq 0 ]
	[ "$output" != "$(readlink /proc/self/ns/uts)" ]
}

@test "pid: the payload is pid 1 and sees only its own processes" {
	run_in_container 'echo $$; ls -d /proc/[0-9]* | wc -l'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 1 ]
	# sh itself and the ls (and wc) it forked: nothing of the host.
	[ "${lines[1]}" -le 3 ]
}

@test "ipc: a message queue made on the host is not visible inside" {
	IPC_QUEUE=$(ipcmk -Q | grep -Eo '[0-9]+$')
	[ -n "$IPC_QUEUE" ]
	grep -qw "$IPC_QUEUE" /proc/sysvipc/msg
	run_in_container 'cat /proc/sysvipc/msg; readlink /proc/self/ns/ipc'
	[ "$status" -eq 0 ]
	# Only the header line of /proc/sysvipc/msg, then the namespace.
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == *msqid* ]]
	[ "${lines[1]}" != "$(readlink /proc/self/ns/ipc)" ]
}

@test "mount: the container has its own mount namespace and its rootfs as /" {
	run_in_container 'readlink /proc/self/ns/mnt; head -n 1 /proc/self/mountinfo; cat /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" != "$(readlink /proc/self/ns/mnt)" ]
	# The first mount is the rootfs, at /.
	[ "$(echo "${lines[1]}" | awk '{print $5}')" = / ]
	[[ "$(echo "${lines[1]}" | awk '{print $4}')" == */rootfs ]]
	# Nothing of the host's own mounts (its / with its mount source).
	host_root_src=$(awk '$5 == "/" {print $4; exit}' /proc/self/mountinfo)
	! echo "$output" | awk '$5 == "/" {print $4}' | grep -qx "$host_root_src"
	# The container's mount table is not the host's.
	[ "$(echo "$output" | tail -n +3 | md5sum)" != "$(md5sum </proc/self/mountinfo)" ]
}

@test "net: a fresh network namespace with only lo, and lo is up" {
	run_in_container 'ls /sys/class/net; ip -o link show lo; readlink /proc/self/ns/net'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = lo ]
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[1]}" == *"<LOOPBACK,UP,LOWER_UP>"* ]]
	[ "${lines[2]}" != "$(readlink /proc/self/ns/net)" ]
}

@test "net: no network namespace in config.json (host network) still gets a fresh one" {
	update_config '.linux.namespaces |= map(select(.type != "network"))'
	run_in_container 'ls /sys/class/net; readlink /proc/self/ns/net'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = lo ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[1]}" != "$(readlink /proc/self/ns/net)" ]
}

@test "cgroup: the cgroup namespace is rooted at the container's cgroup" {
	run_in_container 'cat /proc/self/cgroup; readlink /proc/self/ns/cgroup'
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" != "$(readlink /proc/self/ns/cgroup)" ]
	n=0
	for l in "${lines[@]:0:${#lines[@]}-1}"; do
		# hierarchy-id:controllers:path, the path is "/" everywhere.
		[ "${l##*:}" = / ]
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

@test "user: uidMappings and gidMappings map root inside to 100000 outside" {
	# The bundle is mktemp's 0700: the mapped root must get through it.
	chmod 755 "$BUNDLE"
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .process.args = ["sleep", "100"]'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	pid=$(container_pid "$ID")
	[ "$(awk '{print $1, $2, $3}' "/proc/$pid/uid_map")" = "0 100000 65536" ]
	[ "$(awk '{print $1, $2, $3}' "/proc/$pid/gid_map")" = "0 100000 65536" ]
	grep -Eq '^Uid:\s+100000\s+100000\s+100000\s+100000$' "/proc/$pid/status"
	grep -Eq '^Gid:\s+100000\s+100000\s+100000\s+100000$' "/proc/$pid/status"
	[ "$(readlink "/proc/$pid/ns/user")" != "$(readlink /proc/self/ns/user)" ]

	moat exec "$ID" sh -c 'id -u; id -g; stat -c %u /bin/busybox'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" = 0 ]
	# The host's root is not mapped: its files belong to nobody inside.
	[ "${lines[2]}" = 65534 ]
}

@test "join: a network namespace named by path is the one the container gets" {
	NETNS="moat-test-$$"
	ip netns add "$NETNS"
	update_config --arg p "/var/run/netns/$NETNS" \
		'.linux.namespaces |= map(if .type == "network" then .path = $p else . end)'
	run_in_container 'readlink /proc/self/ns/net'
	[ "$status" -eq 0 ]
	want="net:[$(stat -L -c %i "/var/run/netns/$NETNS")]"
	[ "$output" = "$want" ]
}

@test "join: the host's own network namespace by /proc/1/ns/net is replaced by a fresh one" {
	update_config '.linux.namespaces |= map(if .type == "network" then .path = "/proc/1/ns/net" else . end)'
	run_in_container 'readlink /proc/self/ns/net; ls /sys/class/net'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" != "$(readlink /proc/1/ns/net)" ]
	[ "${lines[1]}" = lo ]
}

@test "join: the host's network namespace under another path is refused, nothing left" {
	NETNS="moat-test-$$"
	# A second name for the host's own namespace.
	touch "/var/run/netns/$NETNS" 2>/dev/null || { mkdir -p /var/run/netns && touch "/var/run/netns/$NETNS"; }
	mount --bind /proc/self/ns/net "/var/run/netns/$NETNS"
	update_config --arg p "/var/run/netns/$NETNS" \
		'.linux.namespaces |= map(if .type == "network" then .path = $p else . end)'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"refusing to join the host's network namespace"* ]]
	assert_nothing_left "$ID"
}

@test "join: a namespace path that does not exist is a clear error, nothing left" {
	update_config '.linux.namespaces |= map(if .type == "ipc" then .path = "/nonexistent/ns/ipc" else . end)'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"ipc namespace /nonexistent/ns/ipc"*"No such file or directory"* ]]
	assert_nothing_left "$ID"
}
