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
	MEMFD_NOEXEC=0
	[ ! -e /proc/sys/vm/memfd_noexec ] || MEMFD_NOEXEC=1
}

# The host's vm.memfd_noexec ("none" where the kernel has none).
host_memfd_noexec() {
	cat /proc/sys/vm/memfd_noexec 2>/dev/null || echo none
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
	# MFD_NOEXEC_SEAL and MFD_EXEC are 6.3's too: asked only where they exist.
	local seal='execprobe memfd-exec seal; execprobe memfd-exec exec' jitseal='execprobe memfd-jit seal'
	[ "$MEMFD_NOEXEC" = 1 ] || seal='' jitseal=''
	in_container "for d in /tmp /var/tmp /dev/shm /dev /w; do execprobe copy-exec \$d; done
		execprobe memfd-exec; $seal
		cat /proc/sys/vm/memfd_noexec 2>/dev/null || echo none
		echo must work:; execprobe anon-jit; execprobe memfd-jit; $jitseal
		execprobe shm; execprobe sem"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "moat: warning: mounts["*"]: binding $WTREE noexec (G13)" ]]
	[[ "${lines[1]}" == "exec /tmp/execprobe-copy-"*": Permission denied (errno 13)" ]]
	[[ "${lines[2]}" == "exec /var/tmp/execprobe-copy-"*": Permission denied (errno 13)" ]]
	[[ "${lines[3]}" == "exec /dev/shm/execprobe-copy-"*": Permission denied (errno 13)" ]]
	[[ "${lines[4]}" == "write /dev/execprobe-copy-"*": Read-only file system (errno 30)" ]]
	[[ "${lines[5]}" == "exec /w/execprobe-copy-"*": Permission denied (errno 13)" ]]
	if [ "$MEMFD_NOEXEC" = 1 ]; then
		[ "${lines[6]}" = "execveat(memfd): Permission denied (errno 13)" ]
		[ "${lines[7]}" = "execveat(memfd): Permission denied (errno 13)" ]
		[ "${lines[8]}" = "memfd_create: Permission denied (errno 13)" ]
		[ "${lines[9]}" = 2 ]
		local rest=10 n=16
	else
		# Degraded: the kernel cannot refuse an executable memfd (what
		# moat features and the audit line say, checked below).
		[ "${lines[6]}" = ok ]
		[ "${lines[7]}" = none ]
		local rest=8 n=13
	fi
	[ "${lines[rest]}" = "must work:" ]
	for ((i = rest + 1; i < n; i++)); do
		[ "${lines[i]}" = ok ]
	done
	[ "${#lines[@]}" -eq "$n" ]
	# The host's own value is untouched: the sysctl is per pid namespace.
	[ "$(host_memfd_noexec)" = "$HOST_MEMFD_NOEXEC" ]
}

@test "G13 spec: nothing written at run time runs; JIT memory and /dev/shm work" {
	HOST_MEMFD_NOEXEC=$(host_memfd_noexec)
	prepare_bundle spec
	check_noexec
}

@test "G13 docker.19: nothing written at run time runs; JIT memory and /dev/shm work" {
	HOST_MEMFD_NOEXEC=$(host_memfd_noexec)
	prepare_bundle docker.19
	update_config '.process.user = {"uid": 0, "gid": 0}'
	check_noexec
}

@test "G13 permissive: nothing written at run time runs; JIT memory and /dev/shm work" {
	HOST_MEMFD_NOEXEC=$(host_memfd_noexec)
	prepare_bundle permissive
	check_noexec
}

@test "G13 podman.18 (a user namespace): executable memfds refused there too" {
	prepare_bundle podman.18
	add_testbin execprobe
	chmod 755 "$BUNDLE"
	chown -R 100000:100000 "$BUNDLE/rootfs"
	if [ "$MEMFD_NOEXEC" = 0 ]; then
		# Degraded: the memfd runs, the rest of G13 holds.
		in_container 'execprobe memfd-exec; execprobe copy-exec /tmp; execprobe memfd-jit'
		[ "$status" -eq 0 ]
		[ "${lines[0]}" = ok ]
		[[ "${lines[1]}" == "exec /tmp/execprobe-copy-"*": Permission denied (errno 13)" ]]
		[ "${lines[2]}" = ok ]
		return
	fi
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
	if [ "$MEMFD_NOEXEC" = 1 ]; then
		[ "${lines[0]}" = "execveat(memfd): Permission denied (errno 13)" ]
	else
		[ "${lines[0]}" = ok ]
	fi
	[[ "${lines[1]}" == "exec /dev/shm/execprobe-copy-"*": Permission denied (errno 13)" ]]
	[ "${lines[2]}" = ok ]
}

@test "G13 the audit log and moat features tell whether vm.memfd_noexec holds" {
	prepare_bundle spec
	run "$MOAT" features
	[ "$status" -eq 0 ]
	local said
	said=$(echo "$output" | jq -r '.annotations["run.moat.memfd-noexec"]')
	in_container 'true'
	[ "$status" -eq 0 ]
	# Only where the kernel lacks it does create's line carry a notice.
	local notices
	notices=$(audit_lines "$CID" | jq -c -s '[.[] | .overrides[]? | select(.path == "sysctl.vm.memfd_noexec")]')
	if [ "$MEMFD_NOEXEC" = 1 ]; then
		[ "$said" = 2 ]
		[ "$notices" = '[]' ]
	else
		[ "$said" = "unavailable (kernel before 6.3)" ]
		[ "$(echo "$notices" | jq -r 'length')" -ge 1 ]
		echo "$notices" | jq -e 'all(.[]; .kind == "ignored" and .asked == "2" and .enforced == "not in this kernel: executable memfds not refused")' >/dev/null
	fi
}
