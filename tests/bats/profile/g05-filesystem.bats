#!/usr/bin/env bats
# G5: a read-only root filesystem; every mount nosuid,nodev (but /dev's
# tmpfs and devpts, which hold the allowed device nodes); binds of dangerous
# host paths refused at create with one clear line, leaving nothing behind,
# also when the source is a symlink leading there.

load profile_helpers

GUARANTEE=g5

setup() {
	requires_root
}

teardown() {
	teardown_profile
}

# What a root container sees: / read-only, cannot be remounted, and a
# mount table where only /dev's tmpfs, devpts and binds of the allowed
# device nodes (in /dev, and /dev/null over masked files) allow devices.
check_readonly_nosuid_nodev() {
	in_container 'touch /x 2>&1; mkdir /newdir 2>&1
		mount -o remount,rw / 2>&1
		awk "{
			fs = \"\"
			for (i = 7; i <= NF; i++) if (\$i == \"-\") { fs = \$(i + 1); break }
			if (\$6 !~ /(^|,)nosuid(,|\$)/) print \"suid:\", \$5
			devok = \$5 == \"/dev\" || \$5 == \"/dev/pts\" ||
				(fs == \"devtmpfs\" && \$4 ~ /^\\/(null|zero|full|random|urandom|tty|ptmx)\$/)
			if (!devok && \$6 !~ /(^|,)nodev(,|\$)/) print \"dev:\", \$5
			if (\$5 == \"/\" && \$6 !~ /(^|,)ro(,|\$)/) print \"rw: /\"
		}" /proc/self/mountinfo
		echo done'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "touch: /x: Read-only file system" ]
	[ "${lines[1]}" = "mkdir: can't create directory '/newdir': Read-only file system" ]
	[ "${lines[2]}" = "mount: permission denied (are you root?)" ]
	[ "${lines[3]}" = done ]
	[ "${#lines[@]}" -eq 4 ]
	[ ! -e "$BUNDLE/rootfs/x" ]
}

@test "G5 spec: / read-only, every mount nosuid,nodev" {
	prepare_bundle spec
	check_readonly_nosuid_nodev
}

@test "G5 docker.20 (privileged, root read-write): / read-only, every mount nosuid,nodev" {
	prepare_bundle docker.20
	[ "$(jq '.root.readonly // false' "$BUNDLE/config.json")" = false ]
	check_readonly_nosuid_nodev
}

@test "G5 permissive (root.readonly false, a bind with suid,dev): / read-only, every mount nosuid,nodev" {
	prepare_bundle permissive
	[ "$(jq '.root.readonly' "$BUNDLE/config.json")" = false ]
	jq -e '.mounts[] | select(.destination == "/data") | .options | index("suid")' "$BUNDLE/config.json"
	check_readonly_nosuid_nodev
}

@test "G5 ctr.17: the host's /etc/hosts and /etc/resolv.conf are bound read-only" {
	prepare_bundle ctr.17
	jq -e '.mounts[] | select(.source == "/etc/hosts")' "$BUNDLE/config.json"
	# Opening for append writes nothing, even if it were allowed.
	in_container '(: >>/etc/hosts) 2>&1; (: >>/etc/resolv.conf) 2>&1; echo done
		awk "\$5 == \"/etc/hosts\" || \$5 == \"/etc/resolv.conf\" { print \$5, \$6 }" /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	[ "${lines[2]}" = done ]
	# G12: the host's root-owned files refuse container root (EACCES)
	# before the read-only mount can (EROFS); the mounts are read-only.
	[[ "${lines[0]}" == *"/etc/hosts: Read-only file system"* || "${lines[0]}" == *"/etc/hosts: Permission denied"* ]]
	[[ "${lines[1]}" == *"/etc/resolv.conf: Read-only file system"* || "${lines[1]}" == *"/etc/resolv.conf: Permission denied"* ]]
	[[ "${lines[3]}" == "/etc/hosts ro,"* ]]
	[[ "${lines[4]}" == "/etc/resolv.conf ro,"* ]]
}

@test "G5 exec: / is read-only for a process moat exec starts" {
	prepare_bundle permissive
	start_sleeper
	moat exec "$CID" touch /x
	[ "$status" -ne 0 ]
	[ "$output" = "touch: /x: Read-only file system" ]
}

# create with one more bind of $1 must fail with the line
# "moat: create ID: mounts[N]: refusing to bind $2 into the container
# (profile strict)" and leave nothing behind.
check_refused() {
	local src="$1" shown="$2"
	update_config --arg s "$src" '.mounts += [{"destination": "/mnt", "type": "bind", "source": $s, "options": ["rbind", "rw"]}]'
	next_id
	moat create -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" =~ ^moat:\ create\ $CID:\ mounts\[[0-9]+\]:\ refusing\ to\ bind\ $shown\ into\ the\ container\ \(profile\ strict\)$ ]]
	assert_nothing_left "$CID"
	update_config 'del(.mounts[-1])'
}

@test "G5 permissive as it is (docker.sock and /etc binds): create refused, nothing left" {
	prepare_bundle permissive-raw
	next_id
	moat create -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "moat: create $CID: mounts["*"]: refusing to bind /var/run/docker.sock into the container (profile strict)" ]]
	assert_nothing_left "$CID"
	moat state "$CID"
	[ "$status" -eq 1 ]
}

@test "G5 binds of engine sockets, /, /etc, /proc, /sys, /dev, /root, /boot, engine state are refused" {
	prepare_bundle spec
	for src in /var/run/docker.sock /run/containerd/containerd.sock /run/crio/crio.sock \
		/ /etc /etc/shadow /proc /proc/1/root /sys /dev /root /boot /var/lib/docker /var/lib /var; do
		check_refused "$src" "$src"
	done
}

@test "G5 a bind source that is a symlink to a refused path is refused (its real path named)" {
	prepare_bundle spec
	ln -s /etc "$BUNDLE/host-etc"
	check_refused "$BUNDLE/host-etc" /etc
	ln -s ../../../../../../../../ "$BUNDLE/up"
	check_refused "$BUNDLE/up" /
}

@test "G5 a bind source that is a symlink to /proc/1/root fails at create, nothing left" {
	prepare_bundle spec
	ln -s /proc/1/root "$BUNDLE/pid1-root"
	update_config --arg s "$BUNDLE/pid1-root" '.mounts += [{"destination": "/mnt", "type": "bind", "source": $s, "options": ["rbind"]}]'
	next_id
	moat create -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "moat: create $CID: mounts["*"]: "*"pid1-root"* || "$output" == *"refusing to bind / "* ]]
	assert_nothing_left "$CID"
}

@test "G5 the engine configs' own refused binds: docker.19 asking for /var/lib/docker" {
	prepare_bundle docker.19
	check_refused /var/lib/docker/overlay2 /var/lib/docker/overlay2
}
