#!/usr/bin/env bats
# Where runc and moat should behave alike because the profile is not the
# reason to differ: each test is what a runc user or an engine does and
# sees (issue 25). Deliberate differences are in README's runc table.

load helpers
load runtime_helpers

setup() {
	requires_root
	setup_bundle
	ID="parity-$BATS_TEST_NUMBER-$$"
	CG_TOP="parity-test-$BATS_TEST_NUMBER-$$"
	update_config '.process.args = ["sleep", "100"]'
}

teardown() {
	teardown_bundle
	[ -z "${DATADIR:-}" ] || rm -rf "$DATADIR"
	local d
	for d in /sys/fs/cgroup/*/"$CG_TOP" /sys/fs/cgroup/"$CG_TOP"; do
		[ -d "$d" ] || continue
		[ -f "$d/freezer.state" ] && echo THAWED >"$d/freezer.state"
		[ -f "$d/cgroup.freeze" ] && echo 0 >"$d/cgroup.freeze"
		find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}

# A frozen cgroup would freeze the init as it joins: create must say so
# and return rather than wait forever. `timeout` only keeps a hang from
# stalling the suite.
create_in_frozen_cgroup() {
	update_config --arg p "/$CG_TOP" '.linux.cgroupsPath = $p'
	status=0
	timeout 60 "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" run -d -b "$BUNDLE" "$ID" \
		>"$BUNDLE/out" 2>&1 </dev/null || status=$?
	output="$(cat "$BUNDLE/out")"
	echo "run -d (status=$status): $output" >&2
}

@test "create into a frozen v1 freezer cgroup is refused, nothing left" {
	[ -d /sys/fs/cgroup/freezer ] || skip "no v1 freezer hierarchy"
	mkdir /sys/fs/cgroup/freezer/"$CG_TOP"
	echo FROZEN >/sys/fs/cgroup/freezer/"$CG_TOP"/freezer.state
	create_in_frozen_cgroup
	[ "$status" -eq 1 ]
	[[ "$output" == "moat: run $ID: "*"frozen (freezer.state in freezer)"* ]]
	[ ! -e "$ROOT/$ID" ]
	[ ! -d /sys/fs/cgroup/memory/"$CG_TOP" ]
	[ ! -d /sys/fs/cgroup/pids/"$CG_TOP" ]
	[ -z "$(cat /sys/fs/cgroup/freezer/"$CG_TOP"/cgroup.procs)" ]
}

@test "create into a cgroup frozen with cgroup.freeze (cgroup2) is refused" {
	local unified=/sys/fs/cgroup/unified
	[ -f /sys/fs/cgroup/cgroup.controllers ] && unified=/sys/fs/cgroup
	[ -f "$unified/cgroup.controllers" ] || skip "no cgroup2 hierarchy"
	mkdir "$unified/$CG_TOP"
	echo 1 >"$unified/$CG_TOP/cgroup.freeze"
	create_in_frozen_cgroup
	[ "$status" -eq 1 ]
	[[ "$output" == "moat: run $ID: "*"frozen (cgroup.freeze in "* ]]
	[ ! -e "$ROOT/$ID" ]
	[ -z "$(cat "$unified/$CG_TOP"/cgroup.procs)" ]
}

@test "--debug without --log: runc's debug lines on stderr, for every verb" {
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	for verb in state exec ps; do
		if [ "$verb" = exec ]; then
			moat_sep --debug exec "$ID" true
		else
			moat_sep --debug "$verb" "$ID"
		fi
		[ "$status" -eq 0 ]
		grep -qE "^time=\"[^\"]+\" level=debug msg=\"$verb: .+\"\$" <<<"$stderr"
		[ -z "$(grep -vE '^time="[^"]+" level=debug msg=' <<<"$stderr")" ]
	done
	# Without --debug, nothing.
	moat_sep state "$ID"
	[ -z "$stderr" ]
}

@test "--debug with --log: debug lines of exec in the log, json and text" {
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	moat_sep --debug --log "$BUNDLE/log.json" --log-format json exec "$ID" true
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	jq -e 'select(.level == "debug") | .msg | test("exec")' "$BUNDLE/log.json" | grep -q true
	jq -e '.time' "$BUNDLE/log.json" >/dev/null
	moat_sep --debug --log "$BUNDLE/log.txt" --log-format text exec "$ID" true
	[ "$status" -eq 0 ]
	grep -qE '^time="[^"]+" level=debug msg=".*exec' "$BUNDLE/log.txt"
}

# Each ps(1) line below the header names one of the container's pids.
ps_rows_are_the_containers() {
	local col="$1" pids
	pids="$("$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" ps --format json "$ID" | jq -r '.[]')"
	[ "${#lines[@]}" -ge 3 ]
	for l in "${lines[@]:1}"; do
		grep -qxF "$(awk -v c="$col" '{print $c}' <<<"$l")" <<<"$pids"
	done
}

@test "ps ID and ps ID -e -x: ps(1)'s header and the container's rows only" {
	command -v ps >/dev/null || skip "no ps"
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	moat exec -d "$ID" sleep 99
	[ "$status" -eq 0 ]
	# No arguments: runc runs `ps -ef`.
	moat ps "$ID"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^UID\ +PID\ +PPID\ +C\ +STIME\ +TTY\ +TIME\ +CMD$ ]]
	[[ "$output" == *"sleep 100"* && "$output" == *"sleep 99"* ]]
	ps_rows_are_the_containers 2
	# BSD x: the caller's own processes, which the container's are for runc.
	moat ps "$ID" -e -x
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^\ +PID\ +TTY\ +STAT\ +TIME\ +COMMAND$ ]]
	[[ "$output" == *"sleep 100"* && "$output" == *"sleep 99"* ]]
	ps_rows_are_the_containers 1
}

@test "run --keep keeps the stopped container, its state and cgroup, until delete" {
	update_config '.process.args = ["sh", "-c", "exit 3"]'
	moat run --keep -b "$BUNDLE" "$ID"
	[ "$status" -eq 3 ]
	moat state "$ID"
	[ "$status" -eq 0 ]
	[ "$(jq -r .status <<<"$output")" = stopped ]
	cg="$(find /sys/fs/cgroup -maxdepth 4 -type d -name "$ID" | head -1)"
	[ -n "$cg" ] && [ -f "$cg/cgroup.procs" ]
	[ -z "$(cat "$cg/cgroup.procs")" ]
	moat delete "$ID"
	[ "$status" -eq 0 ]
	assert_nothing_left "$ID"
}

# The container's cgroup directory in each hierarchy (v1 and cgroup2).
container_cgroup_dirs() {
	find /sys/fs/cgroup -maxdepth 4 -type d -path "*/moat/$ID"
}

# mkdir SUB below the container's cgroup in every hierarchy (a v1 cpuset
# child starts with no cpus: it gets its parent's).
make_sub_cgroups() {
	local d p c
	for d in $(container_cgroup_dirs); do
		p="$d"
		for c in ${1//\// }; do
			mkdir -p "$p/$c"
			if [ -f "$p/cpuset.cpus" ]; then
				cat "$p/cpuset.cpus" >"$p/$c/cpuset.cpus"
				cat "$p/cpuset.mems" >"$p/$c/cpuset.mems"
			fi
			p="$p/$c"
		done
	done
}

# The lines of /proc/self/cgroup text on stdin whose hierarchy is mounted
# somewhere (cgroup2's line, and each v1 one with a cgroup mount of its
# first controller): a v1 hierarchy the kernel kept after its last unmount
# is reached by no runtime, so a process stays at its root there.
mounted_hierarchy_lines() {
	local line ctrl
	while IFS= read -r line; do
		ctrl=${line#*:}
		ctrl=${ctrl%%:*}
		ctrl=${ctrl%%,*}
		if [ "${line%%:*}" = 0 ] || grep -qE " - cgroup [^ ]+ ([^ ]*,)?$ctrl(,|\$)" /proc/self/mountinfo; then
			printf '%s\n' "$line"
		fi
	done
}

@test "exec --cgroup SUB and CONTROLLER:SUB run the process in the sub-cgroup" {
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	make_sub_cgroups sub
	# Without --cgroup, every hierarchy: the container's own (its root, as
	# the container's cgroup namespace shows it).
	moat exec "$ID" cat /proc/self/cgroup
	[ "$status" -eq 0 ]
	[ "$(grep -cv ':/$' <<<"$output")" -eq 0 ]
	[ "$(grep -c . <<<"$output")" -eq "$(grep -c . /proc/self/cgroup)" ]
	moat exec --cgroup sub "$ID" cat /proc/self/cgroup
	[ "$status" -eq 0 ]
	[ "$(mounted_hierarchy_lines <<<"$output" | grep -cv ':/sub$')" -eq 0 ]
	[ "$(mounted_hierarchy_lines <<<"$output" | grep -c .)" -ge 1 ]
	if [ -d /sys/fs/cgroup/memory ] && [ ! -f /sys/fs/cgroup/cgroup.controllers ]; then
		mkdir "/sys/fs/cgroup/memory/moat/$ID/msub"
		moat exec --cgroup memory:msub --cgroup pids:sub "$ID" cat /proc/self/cgroup
		[ "$status" -eq 0 ]
		grep -qx '[0-9]*:memory:/msub' <<<"$output"
		grep -qx '[0-9]*:pids:/sub' <<<"$output"
		grep -qx '[0-9]*:freezer:/' <<<"$output"
		grep -qx '0::/' <<<"$output"
	fi
	# A sub-cgroup that is not there, or one out of the container's.
	moat exec --cgroup missing "$ID" true
	[ "$status" -eq 255 ]
	[[ "$output" == "moat: exec $ID: --cgroup missing: no such sub-cgroup in "* ]]
	moat exec --cgroup ../.. "$ID" true
	[ "$status" -eq 255 ]
	[[ "$output" == *'"." and ".." are not allowed'* ]]
}

@test "delete --force removes a cgroup with sub-cgroups holding processes" {
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	make_sub_cgroups a/b
	for d in $(container_cgroup_dirs); do
		[ -d "$d/a/b" ]
	done
	moat exec -d --pid-file "$BUNDLE/exec.pid" "$ID" sleep 99
	[ "$status" -eq 0 ]
	for d in $(container_cgroup_dirs); do
		cat "$BUNDLE/exec.pid" >"$d/a/b/cgroup.procs"
	done
	moat delete --force "$ID"
	[ "$status" -eq 0 ]
	assert_nothing_left "$ID"
	[ -z "$(container_cgroup_dirs)" ]
}

@test "cwd: entered before the user switch as runc; one nobody may enter fails with runc's words" {
	# Only root may search /secret; nobody inside may search /unmapped (its
	# owner is outside the container's user namespace).
	mkdir -m 0700 "$BUNDLE/rootfs/secret" "$BUNDLE/rootfs/unmapped"
	chown 70000:70000 "$BUNDLE/rootfs/unmapped"
	update_config '.process.user.uid = 1000 | .process.user.gid = 1000 | .process.cwd = "/secret" | .process.args = ["sh", "-c", "pwd; id -u"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = /secret ]
	[ "${lines[1]}" = 1000 ]

	update_config '.process.user.uid = 0 | .process.user.gid = 0 | .process.cwd = "/" | .process.args = ["sleep", "100"]'
	moat run -d -b "$BUNDLE" "$ID-2"
	[ "$status" -eq 0 ]
	grep -q '^ *0 *0 ' "/proc/$(container_pid "$ID-2")/uid_map" && skip "no user namespace"
	moat exec --user 1000 --cwd /secret "$ID-2" pwd
	[ "$status" -eq 0 ]
	[ "$output" = /secret ]
	moat exec --user 1000 --cwd /unmapped "$ID-2" pwd
	[ "$status" -eq 255 ]
	[ "$output" = "moat: exec $ID-2: chdir to cwd (\"/unmapped\") set in config.json failed: Permission denied" ]
}

# From the container's user, mount and pid namespaces, root of a user
# namespace nested in them (what unshare -r gives a process that has
# unshare) mounts a fresh procfs only where a fully visible one is left
# in the mount namespace: that one would have no mask.
fresh_procfs_in() {
	status=0
	output="$(nsenter -t "$(container_pid "$1")" -U -m -p -- /bin/busybox unshare -U -m -r -p -f \
		/bin/busybox sh -c 'mount -t proc proc /tmp && echo MOUNTED' 2>&1)" || status=$?
	echo "fresh procfs in $1 (status=$status): $output" >&2
}

@test "--no-pivot: the host's procfs is not left under the rootfs; masks and read-only paths hold" {
	command -v nsenter >/dev/null || skip "no nsenter"
	moat create --no-pivot -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	moat start "$ID"
	[ "$status" -eq 0 ]
	fresh_procfs_in "$ID"
	[[ "$output" != *MOUNTED* ]]
	[[ "$output" == *"permission denied"* ]]
	moat exec "$ID" sh -c 'echo x >/proc/sys/kernel/domainname'
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	moat exec "$ID" cat /proc/timer_list
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# As with pivot_root.
	moat run -d -b "$BUNDLE" "$ID-pivot"
	[ "$status" -eq 0 ]
	fresh_procfs_in "$ID-pivot"
	[[ "$output" == *"permission denied"* ]]
}

@test "a rootfs whose /proc or /sys is a symlink is refused with the reason, nothing left" {
	for d in proc sys; do
		local type=proc
		[ "$d" = sys ] && type=sysfs
		rmdir "$BUNDLE/rootfs/$d"
		ln -s /tmp "$BUNDLE/rootfs/$d"
		moat run -b "$BUNDLE" "$ID-$d"
		[ "$status" -eq 1 ]
		[ "$output" = "moat: run $ID-$d: mount $type at /$d: $type must be mounted on an ordinary directory, and /$d in the rootfs is a symlink" ]
		assert_nothing_left "$ID-$d"
		rm "$BUNDLE/rootfs/$d"
		mkdir "$BUNDLE/rootfs/$d"
	done
}

@test "seccomp: an ENOSYS-by-default allowlist without seccomp(2) runs with the built-in filter above it; a startContainer hook runs" {
	[ "$(uname -m)" = x86_64 ] || skip "syscall numbers of x86_64"
	add_testbin sysprobe
	# Podman's profile (SCMP_ACT_ERRNO, defaultErrnoRet ENOSYS) without
	# seccomp(2) itself, nor getppid (110), nor unshare.
	profile=$(jq '.linux.seccomp' "$FIXTURES/podman.01.podman-run-rm-network-none.config.json")
	update_config --argjson p "$profile" '.linux.seccomp = ($p
		| .syscalls |= map(.names -= ["seccomp", "getppid", "unshare"]))
		| .hooks.startContainer = [{"path": "/bin/sh", "args": ["sh", "-c", "echo hook-ran >/tmp/hook"]}]
		| .process.args = ["sh", "-c", "cat /tmp/hook; sysprobe syscall 110; sysprobe unshare uts"]'
	moat run -b "$BUNDLE" "$ID"
	[ "${lines[0]}" = hook-ran ]
	# Off the config's list and allowed by the built-in filter: the
	# config's errno.
	[[ "${lines[1]}" == *"Function not implemented (errno 38)" ]]
	# Denied by both: G8's answer (EPERM for what it denies on purpose)
	# is the one that holds, a difference the profile makes.
	[[ "${lines[2]}" == *"Operation not permitted (errno 1)" ]]
}

@test "userns: a bind mount listed before the cgroup mount works in a user namespace" {
	# Outside the bundle, whose dir holds the audit log (never bound).
	DATADIR="$(mktemp -d /tmp/parity-data.XXXXXX)"
	chmod 755 "$DATADIR"
	echo bound >"$DATADIR/f"
	mkdir "$BUNDLE/rootfs/mnt"
	update_config --arg s "$DATADIR" '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .mounts |= (map(select(.type != "cgroup"))
			+ [{"destination": "/mnt", "type": "bind", "source": $s, "options": ["rbind", "ro"]},
			   {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
			    "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]}])
		| .process.args = ["sh", "-c", "cat /mnt/f; grep -c \" /sys/fs/cgroup \" /proc/self/mountinfo; grep -c \" /mnt \" /proc/self/mountinfo"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = bound ]
	[ "${lines[1]}" -ge 1 ]
	[ "${lines[2]}" -ge 1 ]
}
