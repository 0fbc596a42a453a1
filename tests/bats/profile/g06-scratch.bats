#!/usr/bin/env bats
# G6: the only writable scratch is tmpfs: /tmp and /var/tmp, mode 1777,
# nosuid,nodev,noexec, at most 64 MiB (the profile's tmpfs_size) whatever
# size config.json asks.

load profile_helpers

GUARANTEE=g6

setup() {
	requires_root
}

teardown() {
	teardown_profile
}

# For /tmp and /var/tmp: "DIR FSTYPE MODE SIZE_KB OPTIONS", then what a
# copied binary and a 80 MiB write get there. $1: what the write gets
# ("No space left on device"; a pattern).
check_scratch() {
	local full="${1:-*No space left on device}"
	in_container 'for d in /tmp /var/tmp; do
			opts=$(awk -v d=$d "\$5 == d { print \$6 }" /proc/self/mountinfo)
			echo "$d $(stat -f -c %T $d) $(stat -c %a $d) $(df -k $d | awk "NR == 2 { print \$2 }") $opts"
		done
		cp /bin/busybox /tmp/bb && /tmp/bb true 2>&1; echo "exec rc=$?"
		dd if=/dev/zero of=/var/tmp/big bs=1M count=80 2>&1 | grep -v records; rm -f /var/tmp/big
		dd if=/dev/zero of=/tmp/big bs=1M count=80 2>&1 | grep -v records; rm -f /tmp/big
		echo done'
	[ "$status" -eq 0 ]
	for i in 0 1; do
		read -r dir fstype mode size opts <<<"${lines[$i]}"
		[ "$fstype" = tmpfs ]
		[ "$mode" = 1777 ]
		[ "$size" -gt 0 ]
		[ "$size" -le 65536 ]
		[[ ",$opts," == *,nosuid,* ]]
		[[ ",$opts," == *,nodev,* ]]
		[[ ",$opts," == *,noexec,* ]]
		[[ ",$opts," == *,rw,* ]]
		[ "$dir" = "$([ "$i" = 0 ] && echo /tmp || echo /var/tmp)" ]
	done
	[[ "${lines[2]}" == *"/tmp/bb: Permission denied" ]]
	[ "${lines[3]}" = "exec rc=126" ]
	# shellcheck disable=SC2053
	[[ "${lines[4]}" == $full ]]
	# shellcheck disable=SC2053
	[[ "${lines[5]}" == $full ]]
	[ "${lines[6]}" = done ]
	[ "${#lines[@]}" -eq 7 ]
}

@test "G6 spec: /tmp and /var/tmp are 64 MiB noexec tmpfs, mode 1777" {
	prepare_bundle spec
	check_scratch
}

@test "G6 docker.19 (uid 1, a tmpfs of its own): /tmp and /var/tmp as the profile says" {
	prepare_bundle docker.19
	# tmpfs pages count against the container's memory: under docker.19's
	# own 64 MiB limit the writer is OOM-killed before the tmpfs fills.
	[ "$(jq '.linux.resources.memory.limit' "$BUNDLE/config.json")" = 67108864 ]
	check_scratch '@(*No space left on device|Killed)'
}

@test "G6 spec: nothing but tmpfs (and proc, devpts, mqueue, device nodes) is writable" {
	prepare_bundle spec
	in_container 'awk "{
			fs = \"\"
			for (i = 7; i <= NF; i++) if (\$i == \"-\") { fs = \$(i + 1); break }
			if (\$6 ~ /(^|,)rw(,|\$)/ && fs !~ /^(tmpfs|proc|devpts|mqueue|devtmpfs)\$/) print \"writable:\", \$5, fs
		}" /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
}

@test "G6 permissive (/tmp tmpfs size=10g,exec,suid,dev): capped, noexec" {
	prepare_bundle permissive
	jq -e '.mounts[] | select(.destination == "/tmp") | .options | index("size=10g")' "$BUNDLE/config.json"
	check_scratch
}

@test "G6 every tmpfs a config asks for is nosuid,nodev and size-limited" {
	prepare_bundle docker.19
	jq -e '.mounts[] | select(.destination == "/scratch" and .type == "tmpfs")' "$BUNDLE/config.json"
	update_config '.mounts += [{"destination": "/big", "type": "tmpfs", "source": "tmpfs", "options": ["size=100g", "suid", "dev", "exec"]}]'
	in_container 'for d in /scratch /big /dev/shm; do
			echo "$d $(df -k $d | awk "NR == 2 { print \$2 }") $(awk -v d=$d "\$5 == d { print \$6 }" /proc/self/mountinfo)"
		done'
	[ "$status" -eq 0 ]
	for l in "${lines[@]}"; do
		read -r dir size opts <<<"$l"
		[ "$size" -le 65536 ] || { echo "$dir: $size KiB" >&2; return 1; }
		[[ ",$opts," == *,nosuid,* ]]
		[[ ",$opts," == *,nodev,* ]]
	done
	[ "${#lines[@]}" -eq 3 ]
}

@test "G6 exec: a process moat exec starts cannot run what it writes to /tmp" {
	prepare_bundle permissive
	start_sleeper
	moat exec "$CID" sh -c 'cp /bin/busybox /tmp/bb && /tmp/bb true'
	[ "$status" -eq 126 ]
	[[ "$output" == *"/tmp/bb: Permission denied" ]]
}

# /dev/shm: a tmpfs capped at the profile's size, nosuid,nodev,noexec;
# /dev read-only once its nodes are in place (issue 9, item 4). Prints
# "SIZE_KB OPTIONS" of /dev/shm, then what a write to /dev and a 80 MiB
# write to /dev/shm get.
check_shm_and_dev() {
	in_container 'echo "$(df -k /dev/shm | awk "NR == 2 { print \$2 }") $(awk "\$5 == \"/dev/shm\" { print \$6 }" /proc/self/mountinfo)"
		(echo x >/dev/planted) 2>&1; mkdir /dev/dir 2>&1
		dd if=/dev/zero of=/dev/shm/big bs=1M count=80 2>&1 | grep -v records; rm -f /dev/shm/big
		awk "\$5 == \"/dev\" { print \$6 }" /proc/self/mountinfo
		echo done'
	[ "$status" -eq 0 ]
	read -r size opts <<<"${lines[0]}"
	[ "$size" -gt 0 ]
	[ "$size" -le 65536 ]
	[[ ",$opts," == *,rw,* ]]
	[[ ",$opts," == *,nosuid,* ]]
	[[ ",$opts," == *,nodev,* ]]
	[[ ",$opts," == *,noexec,* ]]
	[[ "${lines[1]}" == *"/dev/planted: Read-only file system" ]]
	[[ "${lines[2]}" == *"'/dev/dir': Read-only file system" ]]
	[[ "${lines[3]}" == *"No space left on device" || "${lines[3]}" == Killed ]]
	[[ ",${lines[4]}," == *,ro,* ]]
	[[ ",${lines[4]}," == *,noexec,* ]]
	[ "${lines[5]}" = done ]
}

@test "G6 spec: /dev/shm a 64 MiB noexec tmpfs, /dev read-only" {
	prepare_bundle spec
	check_shm_and_dev
}

@test "G6 docker.19: /dev/shm a 64 MiB noexec tmpfs, /dev read-only" {
	prepare_bundle docker.19
	check_shm_and_dev
}

@test "G6 permissive (/dev/shm size=1g, no noexec): capped, noexec; /dev read-only" {
	prepare_bundle permissive
	jq -e '.mounts[] | select(.destination == "/dev/shm") | .options | index("size=1g")' "$BUNDLE/config.json"
	check_shm_and_dev
}

@test "G6 a config without /dev/shm gets one; tmpfs_size caps it" {
	prepare_bundle spec
	update_config 'del(.mounts[] | select(.destination == "/dev/shm"))'
	printf '{"audit_log": "%s", "limits": {"tmpfs_size": "8M"}}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
	in_container 'df -k /dev/shm | awk "NR == 2 { print \$2 }"; awk "\$5 == \"/dev/shm\" { print \$6 }" /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" -le 8192 ]
	[[ ",${lines[1]}," == *,noexec,* ]]
}

# Podman binds its own shm directory (userdata/shm) at /dev/shm: kept (a
# pod's containers share it), but noexec like every writable mount.
@test "G6 podman.01 (the engine's own shm dir bound at /dev/shm): noexec; /dev read-only" {
	prepare_bundle podman.01
	jq -e '.mounts[] | select(.destination == "/dev/shm" and .type == "bind")' "$BUNDLE/config.json"
	in_container 'awk "\$5 == \"/dev/shm\" { print \$6 }" /proc/self/mountinfo; (echo x >/dev/planted) 2>&1; echo done'
	[ "$status" -eq 0 ]
	[[ ",${lines[0]}," == *,noexec,* ]]
	[[ ",${lines[0]}," == *,nosuid,* ]]
	[[ ",${lines[0]}," == *,nodev,* ]]
	[[ "${lines[1]}" == *"/dev/planted: Read-only file system" ]]
}

@test "G6 /dev named \"//dev/\" in config.json is read-only all the same" {
	prepare_bundle spec
	update_config '(.mounts[] | select(.destination == "/dev") | .destination) = "//dev/"'
	in_container '(echo x >/dev/planted) 2>&1; ls /dev/null'
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *"/dev/planted: Read-only file system" ]]
	[ "${lines[1]}" = /dev/null ]
}
