#!/usr/bin/env bats
# G13: nothing written at run time can be executed. Every writable mount
# is noexec (the engines' volume trees excepted), /dev is read-only, and
# executable memfds are refused (vm.memfd_noexec = 2 in the container's
# pid namespace). What must keep working does: POSIX shared memory and
# semaphores in /dev/shm (Python's multiprocessing), JIT memory (anonymous
# and memfd mappings made executable). tests/cmd/execprobe does each.

load profile_helpers

GUARANTEE=g13

setup() {
	requires_root
	[ -e /proc/sys/vm/memfd_noexec ] || skip "kernel without vm.memfd_noexec (before 6.3)"
}

teardown() {
	teardown_profile
	[ -z "${WTREE:-}" ] || rm -rf "$WTREE"
}

# From inside: a copy of execprobe written to each writable place cannot
# run (or not even be written, in /dev); a memfd cannot be executed; the
# things a runtime needs still work. The writable bind is a tree the
# operator lists (writable_bind_trees).
check_noexec() {
	add_testbin execprobe
	WTREE="$(mktemp -d /tmp/moat-g13.XXXXXX)"
	# G12: an operator's tree is not idmapped; container root writes where
	# others may.
	chmod 1777 "$WTREE"
	printf '{"audit_log": "%s", "writable_bind_trees": ["%s"]}\n' "$AUDIT_LOG" "$WTREE" >"$MOAT_CONFIG"
	update_config --arg s "$WTREE" '.mounts += [{"destination": "/w", "type": "bind", "source": $s, "options": ["rbind", "rw", "exec"]}]'
	in_container 'for d in /tmp /var/tmp /dev/shm /dev /w; do execprobe copy-exec $d; done
		execprobe memfd-exec; execprobe memfd-exec seal; execprobe memfd-exec exec
		cat /proc/sys/vm/memfd_noexec
		echo must work:; execprobe anon-jit; execprobe memfd-jit; execprobe memfd-jit seal; execprobe shm; execprobe sem'
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "moat: warning: mounts["*"]: binding $WTREE noexec (G13)" ]]
	[[ "${lines[1]}" == "exec /tmp/execprobe-copy-"*": Permission denied (errno 13)" ]]
	[[ "${lines[2]}" == "exec /var/tmp/execprobe-copy-"*": Permission denied (errno 13)" ]]
	[[ "${lines[3]}" == "exec /dev/shm/execprobe-copy-"*": Permission denied (errno 13)" ]]
	[[ "${lines[4]}" == "write /dev/execprobe-copy-"*": Read-only file system (errno 30)" ]]
	[[ "${lines[5]}" == "exec /w/execprobe-copy-"*": Permission denied (errno 13)" ]]
	[ "${lines[6]}" = "execveat(memfd): Permission denied (errno 13)" ]
	[ "${lines[7]}" = "execveat(memfd): Permission denied (errno 13)" ]
	[ "${lines[8]}" = "memfd_create: Permission denied (errno 13)" ]
	[ "${lines[9]}" = 2 ]
	[ "${lines[10]}" = "must work:" ]
	[ "${lines[11]}" = ok ]
	[ "${lines[12]}" = ok ]
	[ "${lines[13]}" = ok ]
	[ "${lines[14]}" = ok ]
	[ "${lines[15]}" = ok ]
	[ "${#lines[@]}" -eq 16 ]
	# The host's own value is untouched: the sysctl is per pid namespace.
	[ "$(cat /proc/sys/vm/memfd_noexec)" = "$HOST_MEMFD_NOEXEC" ]
}

@test "G13 spec: nothing written at run time runs; JIT memory and /dev/shm work" {
	HOST_MEMFD_NOEXEC=$(cat /proc/sys/vm/memfd_noexec)
	prepare_bundle spec
	check_noexec
}

@test "G13 docker.19: nothing written at run time runs; JIT memory and /dev/shm work" {
	HOST_MEMFD_NOEXEC=$(cat /proc/sys/vm/memfd_noexec)
	prepare_bundle docker.19
	update_config '.process.user = {"uid": 0, "gid": 0}'
	check_noexec
}

@test "G13 permissive: nothing written at run time runs; JIT memory and /dev/shm work" {
	HOST_MEMFD_NOEXEC=$(cat /proc/sys/vm/memfd_noexec)
	prepare_bundle permissive
	check_noexec
}

@test "G13 podman.18 (a user namespace): executable memfds refused there too" {
	prepare_bundle podman.18
	add_testbin execprobe
	chmod 755 "$BUNDLE"
	chown -R 100000:100000 "$BUNDLE/rootfs"
	in_container 'execprobe memfd-exec; execprobe memfd-exec exec; execprobe memfd-jit; cat /proc/sys/vm/memfd_noexec'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "execveat(memfd): Permission denied (errno 13)" ]
	[ "${lines[1]}" = "memfd_create: Permission denied (errno 13)" ]
	[ "${lines[2]}" = ok ]
	[ "${lines[3]}" = 2 ]
}

@test "G13 exec: a process moat exec starts cannot run a memfd or what it writes to /dev/shm" {
	prepare_bundle permissive
	add_testbin execprobe
	start_sleeper
	moat exec "$CID" sh -c 'execprobe memfd-exec; execprobe copy-exec /dev/shm; execprobe sem'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "execveat(memfd): Permission denied (errno 13)" ]
	[[ "${lines[1]}" == "exec /dev/shm/execprobe-copy-"*": Permission denied (errno 13)" ]]
	[ "${lines[2]}" = ok ]
}

@test "G13 the audit log and moat features tell whether vm.memfd_noexec holds" {
	prepare_bundle spec
	run "$MOAT" features
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r '.annotations["run.moat.memfd-noexec"]')" = 2 ]
	in_container 'true'
	[ "$status" -eq 0 ]
	# Only where the kernel lacks it does create's line carry a notice.
	[ "$(audit_lines "$CID" | jq -s '[.[] | .overrides[]? | select(.path == "sysctl.vm.memfd_noexec")] | length')" = 0 ]
}
