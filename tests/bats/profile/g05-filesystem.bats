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
	if [ -n "${PSEUDO_DIR:-}" ]; then
		umount "$PSEUDO_DIR/proc" 2>/dev/null || true
		rm -rf "$PSEUDO_DIR"
	fi
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
# (profile strict)[: why]" and leave nothing behind.
check_refused() {
	local src="$1" shown="$2"
	update_config --arg s "$src" '.mounts += [{"destination": "/mnt", "type": "bind", "source": $s, "options": ["rbind", "rw"]}]'
	next_id
	moat create -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" =~ ^moat:\ create\ $CID:\ mounts\[[0-9]+\]:\ refusing\ to\ bind\ $shown\ into\ the\ container\ \(profile\ strict\)(:\ .*)?$ ]]
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

# ---- pseudo filesystems only at their own place (issue 9, item 2) ----

# The attack: a second procfs at /mnt/proc2, in which core_pattern would
# be writable by the container's uid 0 (a "|/payload" there runs as host
# root at the next crash). Opening for append writes nothing, so the test
# never changes the host's core_pattern even when the attack works.
check_second_procfs() {
	update_config '.mounts += [{"type": "proc", "source": "proc", "destination": "/mnt/proc2"}]'
	in_container '(: >>/mnt/proc2/sys/kernel/core_pattern) 2>&1 && echo core_pattern writable; cat /mnt/proc2/kcore 2>&1 | head -c 1 | wc -c'
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$output" = "moat: run $CID: mounts[$(($(jq '.mounts | length' "$BUNDLE/config.json") - 1))]: refusing a proc mount at /mnt/proc2 (profile strict): pseudo filesystems only at their own place (proc at /proc, sysfs at /sys, cgroup at /sys/fs/cgroup, mqueue at /dev/mqueue, devpts at /dev/pts)" ]
	assert_nothing_left "$CID"
}

@test "G5 spec: a second procfs at /mnt/proc2 is refused at create, nothing left" {
	prepare_bundle spec
	check_second_procfs
}

@test "G5 docker.01: a second procfs at /mnt/proc2 is refused at create, nothing left" {
	prepare_bundle docker.01
	check_second_procfs
}

@test "G5 permissive: a second procfs at /mnt/proc2 is refused at create, nothing left" {
	prepare_bundle permissive
	check_second_procfs
}

@test "G5 every pseudo filesystem elsewhere, and any mount over or in /proc and /sys, is refused" {
	prepare_bundle spec
	local m
	for m in '{"type": "sysfs", "source": "sysfs", "destination": "/mnt/sys2"}' \
		'{"type": "cgroup2", "source": "cgroup2", "destination": "/mnt/cg"}' \
		'{"type": "cgroup", "source": "cgroup", "destination": "/sys/fs/cgroup/x"}' \
		'{"type": "mqueue", "source": "mqueue", "destination": "/tmp/mq"}' \
		'{"type": "devpts", "source": "devpts", "destination": "/mnt/pts"}' \
		'{"type": "proc", "source": "proc", "destination": "//proc/../mnt/p"}' \
		'{"type": "proc", "source": "proc", "destination": "/proc/1/root"}' \
		'{"type": "tmpfs", "source": "tmpfs", "destination": "/proc/sys"}' \
		'{"type": "tmpfs", "source": "tmpfs", "destination": "//proc"}' \
		'{"type": "tmpfs", "source": "tmpfs", "destination": "/proc/kcore"}' \
		'{"type": "tmpfs", "source": "tmpfs", "destination": "/sys/kernel"}' \
		'{"type": "tmpfs", "source": "tmpfs", "destination": "/"}' \
		'{"type": "tmpfs", "source": "tmpfs", "destination": "/mnt", "options": ["remount"]}' \
		'{"type": "bind", "source": "rootfs/bin", "destination": "/proc/sys/kernel", "options": ["rbind"]}' \
		'{"type": "proc", "source": "rootfs/bin", "destination": "/proc/sysrq-trigger", "options": ["bind"]}'; do
		update_config --argjson m "$m" '.mounts += [$m]'
		in_container 'echo ran'
		[ "$status" -eq 1 ] || { echo "allowed: $m" >&2; return 1; }
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == "moat: run $CID: mounts["*"]: refusing "*" (profile strict)"* ]]
		assert_nothing_left "$CID"
		update_config 'del(.mounts[-1])'
	done
}

@test "G5 a mount led into /proc through a symlink in the image is refused, nothing left" {
	prepare_bundle spec
	ln -s /proc "$BUNDLE/rootfs/lnk"
	update_config '.mounts += [{"type": "tmpfs", "source": "tmpfs", "destination": "/lnk/sys"}]'
	in_container '(: >>/proc/sys/kernel/core_pattern) 2>&1 && echo core_pattern writable'
	[ "$status" -eq 1 ]
	[ "$output" = "moat: run $CID: mount /lnk/sys: refusing a mount inside /proc or /sys (reached through a symlink in the rootfs)" ]
	assert_nothing_left "$CID"
}

# A procfs of the host's mounted under a bind source: it would come along
# with an rbind, unmasked.
@test "G5 a bind source on a pseudo filesystem, or an rbind holding one, is refused" {
	prepare_bundle spec
	PSEUDO_DIR="$(mktemp -d /tmp/moat-pseudo.XXXXXX)"
	mkdir "$PSEUDO_DIR/proc"
	mount -t proc proc "$PSEUDO_DIR/proc"
	check_refused "$PSEUDO_DIR" "$PSEUDO_DIR"
	[[ "$output" == *": it is on or holds a pseudo filesystem" ]]
	check_refused "$PSEUDO_DIR/proc/sys" "$PSEUDO_DIR/proc/sys"
	[[ "$output" == *": it is on or holds a pseudo filesystem" ]]
}

# ---- binds writable only where the engines keep per-container files
# ---- and volumes, the bundle, and the operator's trees (item 3) ----

@test "G5 binds of /run, /var/run and their subtrees (D-Bus, systemd, user sessions) are refused" {
	prepare_bundle spec
	local src
	for src in /run /run/dbus /run/systemd /run/user /run/lock /var/run/dbus; do
		[ -e "$src" ] || continue
		check_refused "$src" "$src"
	done
}

@test "G5 a bind of a unix socket outside the engines' trees is refused" {
	prepare_bundle spec
	mkdir -p "$BUNDLE/host"
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$BUNDLE/host/agent.sock"
	[ -S "$BUNDLE/host/agent.sock" ]
	check_refused "$BUNDLE/host/agent.sock" "$BUNDLE/host/agent.sock"
	[[ "$output" == *": a unix socket outside the engines' per-container trees" ]]
}

# The attack: write into (and run from) a host path a pod author chose.
# Each is bound rw; from inside, a write fails and stderr says which key
# would allow it.
check_host_paths_readonly() {
	local i=0 src script=""
	for src in /home /srv /var/lib/dpkg /var/lib/systemd /var/spool /var/mail /var/cache; do
		[ -d "$src" ] || continue
		update_config --arg s "$src" --arg d "/h$i" '.mounts += [{"destination": $d, "type": "bind", "source": $s, "options": ["rbind", "rw"]}]'
		script="$script touch /h$i/.moat-g5-probe-$$ 2>&1;"
		i=$((i + 1))
	done
	in_container "$script echo done"
	# Never leave the probe on the host, even when the attack worked.
	for src in /home /srv /var/lib/dpkg /var/lib/systemd /var/spool /var/mail /var/cache; do
		rm -f "$src/.moat-g5-probe-$$"
	done
	[ "$status" -eq 0 ]
	local ro=0 warn=0 l
	for l in "${lines[@]}"; do
		[[ "$l" == *"moat-g5-probe-$$: Read-only file system" ]] && ro=$((ro + 1))
		[[ "$l" == "moat: warning: mounts["*"]: binding "*" read-only: "*"writable_bind_trees of the operator config" ]] && warn=$((warn + 1))
	done
	[ "$ro" -eq "$i" ]
	[ "$warn" -eq "$i" ]
	[ "${lines[-1]}" = done ]
	audit_has "$CID" 'select(.verb == "run") | .overrides[] | select(.path | test("^mounts\\[/.*\\]\\.options$")) | select(.asked | test("rw")) | select(.enforced | test("(^|,)ro(,|$)"))'
}

@test "G5 spec: binds of /home, /srv, /var/lib/dpkg, /var/spool ... are read-only, told on stderr" {
	prepare_bundle spec
	check_host_paths_readonly
}

@test "G5 docker.19: binds of /home, /srv, /var/lib/dpkg, /var/spool ... are read-only, told on stderr" {
	prepare_bundle docker.19
	check_host_paths_readonly
}

@test "G5 permissive: binds of /home, /srv, /var/lib/dpkg, /var/spool ... are read-only, told on stderr" {
	prepare_bundle permissive
	check_host_paths_readonly
}

@test "G5 a tree the operator lists in writable_bind_trees is writable (and noexec); the bundle too" {
	prepare_bundle spec
	WTREE="$(mktemp -d /tmp/moat-wtree.XXXXXX)"
	printf '{"audit_log": "%s", "writable_bind_trees": ["%s"]}\n' "$AUDIT_LOG" "$WTREE" >"$MOAT_CONFIG"
	mkdir -p "$BUNDLE/data"
	# G12 idmaps only the engines' trees: here container root is a stranger
	# and writes where others may.
	chmod 1777 "$WTREE" "$BUNDLE/data"
	update_config --arg s "$WTREE" '.mounts += [{"destination": "/w", "type": "bind", "source": $s, "options": ["rbind", "rw"]},
		{"destination": "/b", "type": "bind", "source": "data", "options": ["rbind", "rw"]}]'
	in_container 'echo a >/w/f && echo b >/b/f && echo written'
	local rc=0
	[ "$status" -eq 0 ] && [ "$output" = written ] && [ "$(cat "$WTREE/f")" = a ] && [ "$(cat "$BUNDLE/data/f")" = b ] || rc=1
	rm -rf "$WTREE"
	return $rc
}

@test "G5 writable_bind_trees: \"/\" and relative paths are refused in the operator config" {
	prepare_bundle spec
	printf '{"audit_log": "%s", "writable_bind_trees": ["/"]}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
	in_container 'true'
	[ "$status" -eq 1 ]
	[[ "$output" == *"writable_bind_trees[0]: expected an absolute path other than /" ]]
	printf '{"audit_log": "%s", "writable_bind_trees": ["srv"]}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
	in_container 'true'
	[ "$status" -eq 1 ]
	[[ "$output" == *"writable_bind_trees[0]: expected an absolute path other than /" ]]
}

@test "G5 a bind of the bundle's own rootfs is read-only (it would undo the read-only root)" {
	prepare_bundle spec
	update_config '.mounts += [{"destination": "/mnt/root", "type": "bind", "source": "rootfs", "options": ["rbind", "rw"]}]'
	in_container 'touch /mnt/root/planted 2>&1; echo done'
	[ "$status" -eq 0 ]
	[[ "$output" == *"touch: /mnt/root/planted: Read-only file system"* ]]
	[ ! -e "$BUNDLE/rootfs/planted" ]
}
