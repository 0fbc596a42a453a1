#!/usr/bin/env bats
# Mounts from config.json, and the ones the profile forces (G5, G6, G9),
# seen from inside the container; escapes checked on the host.

load helpers

setup() {
	requires_root
	setup_bundle
	ID="t-$BATS_TEST_NUMBER-$$"
	# Bind sources live outside the bundle: the bundle holds the audit log,
	# whose directory the profile refuses to bind.
	HOSTDIR="$(mktemp -d /tmp/moat-mounts.XXXXXX)"
	ESCAPE="moat-escape-$BATS_TEST_NUMBER-$$"
	HOST_MOUNTS=()
}

teardown() {
	for ((i = ${#HOST_MOUNTS[@]} - 1; i >= 0; i--)); do
		umount "${HOST_MOUNTS[$i]}" 2>/dev/null || true
	done
	teardown_bundle
	rm -rf "$HOSTDIR"
	# Only ever created by a broken runtime; removed so that a failure
	# leaves nothing either.
	rm -rf "/tmp/$ESCAPE" "/etc/$ESCAPE" "/opt/$ESCAPE"
}

# A mount's line of /proc/self/mountinfo, from the container's output.
mountinfo_line() {
	echo "$output" | awk -v d="$1" '$5 == d'
}

@test "read-only bind: readable, a write fails with Read-only file system" {
	mkdir "$HOSTDIR/src"
	echo hello >"$HOSTDIR/src/file"
	update_config --arg s "$HOSTDIR/src" \
		'.mounts += [{"destination": "/mnt/ro", "type": "bind", "source": $s, "options": ["rbind", "ro"]}]'
	run_in_container 'cat /mnt/ro/file; echo x >/mnt/ro/file; echo y >/mnt/ro/new'
	[ "$status" -ne 0 ]
	[ "${lines[0]}" = hello ]
	[[ "${lines[1]}" == *"/mnt/ro/file: Read-only file system" ]]
	[[ "${lines[2]}" == *"/mnt/ro/new: Read-only file system" ]]
	[ "$(cat "$HOSTDIR/src/file")" = hello ]
	[ ! -e "$HOSTDIR/src/new" ]
}

@test "read-write bind in an operator's writable tree: writes land on the host; nosuid,nodev,noexec anyway" {
	mkdir "$HOSTDIR/src"
	printf '{"audit_log": "%s", "writable_bind_trees": ["%s"]}\n' "$AUDIT_LOG" "$HOSTDIR" >"$MOAT_CONFIG"
	# G12: container root is a stranger to this host-root-owned dir (no
	# engine volume, not idmapped): it writes where others may.
	chmod 1777 "$HOSTDIR/src"
	update_config --arg s "$HOSTDIR/src" \
		'.mounts += [{"destination": "/mnt/rw", "type": "bind", "source": $s, "options": ["rbind", "rw", "suid", "dev"]}]'
	run_in_container 'echo written >/mnt/rw/file && cat /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	[ "$(cat "$HOSTDIR/src/file")" = written ]
	line=$(mountinfo_line /mnt/rw)
	[ -n "$line" ]
	opts=$(echo "$line" | awk '{print $6}')
	[[ ",$opts," == *,rw,* ]]
	[[ ",$opts," == *,nosuid,* ]]
	[[ ",$opts," == *,nodev,* ]]
	[[ ",$opts," == *,noexec,* ]]
}

@test "read-write bind outside the writable trees: read-only, told on stderr and in the audit log" {
	mkdir "$HOSTDIR/src"
	update_config --arg s "$HOSTDIR/src" \
		'.mounts += [{"destination": "/mnt/rw", "type": "bind", "source": $s, "options": ["rbind", "rw"]}]'
	run_in_container 'echo written >/mnt/rw/file'
	[ "$status" -ne 0 ]
	[ "${lines[0]}" = "moat: warning: mounts[7]: binding $HOSTDIR/src read-only: writable binds are only the engines' per-container and volume trees, the bundle and the trees listed in writable_bind_trees of the operator config" ]
	[[ "${lines[1]}" == *"/mnt/rw/file: Read-only file system" ]]
	[ ! -e "$HOSTDIR/src/file" ]
	jq -e --arg s "$HOSTDIR/src" 'select(.verb == "run") | .overrides[] | select(.path == "mounts[/mnt/rw].options" and .enforced == "rbind,nosuid,nodev,ro,rro,noexec")' "$AUDIT_LOG"
}

@test "bind of a single file" {
	echo content >"$HOSTDIR/file"
	update_config --arg s "$HOSTDIR/file" \
		'.mounts += [{"destination": "/etc/bound", "type": "bind", "source": $s, "options": ["bind", "ro"]}]'
	run_in_container 'cat /etc/bound; test -f /etc/bound && echo is-a-file'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = content ]
	[ "${lines[1]}" = is-a-file ]
}

@test "tmpfs with options: size, mode and uid apply; suid, dev and exec asked are still nosuid,nodev" {
	update_config '.mounts += [{"destination": "/data", "type": "tmpfs", "source": "tmpfs",
		"options": ["size=1m", "mode=700", "uid=5", "suid", "dev"]}]'
	run_in_container 'stat -c "%a %u" /data; df -k /data | tail -n 1; cat /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "700 5" ]
	[ "$(echo "${lines[1]}" | awk '{print $2}')" = 1024 ]
	opts=$(mountinfo_line /data | awk '{print $6}')
	[[ ",$opts," == *,nosuid,* ]]
	[[ ",$opts," == *,nodev,* ]]
	[[ "$(mountinfo_line /data | awk '{print $9}')" = tmpfs ]]
}

@test "a destination through an absolute symlink to /etc lands in the rootfs's /etc, not the host's" {
	ln -s /etc "$BUNDLE/rootfs/linketc"
	update_config --arg d "/linketc/$ESCAPE" \
		'.mounts += [{"destination": $d, "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]'
	run_in_container "cat /proc/self/mountinfo"
	[ "$status" -eq 0 ]
	[ -n "$(mountinfo_line "/etc/$ESCAPE")" ]
	[ -d "$BUNDLE/rootfs/etc/$ESCAPE" ]
	[ ! -e "/etc/$ESCAPE" ]
}

@test "a destination through ../../.. symlinks stays in the rootfs; the host's /tmp is not touched" {
	ln -s ../../../../../../../../../tmp "$BUNDLE/rootfs/linktmp"
	mkdir -p "$BUNDLE/rootfs/a/b"
	ln -s ../../../../../../../.. "$BUNDLE/rootfs/a/b/up"
	update_config --arg d1 "/linktmp/$ESCAPE" --arg d2 "/a/b/up/opt/$ESCAPE" \
		'.mounts += [{"destination": $d1, "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]},
		             {"destination": $d2, "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]'
	run_in_container "cat /proc/self/mountinfo"
	[ "$status" -eq 0 ]
	[ -n "$(mountinfo_line "/opt/$ESCAPE")" ]
	[ -d "$BUNDLE/rootfs/tmp/$ESCAPE" ]
	[ -d "$BUNDLE/rootfs/opt/$ESCAPE" ]
	[ ! -e "/tmp/$ESCAPE" ]
	[ ! -e "/opt/$ESCAPE" ]
}

@test "a destination with .. components stays in the rootfs" {
	update_config --arg d "/../../../../opt/$ESCAPE" \
		'.mounts += [{"destination": $d, "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]'
	run_in_container "cat /proc/self/mountinfo"
	[ "$status" -eq 0 ]
	[ -n "$(mountinfo_line "/opt/$ESCAPE")" ]
	[ ! -e "/opt/$ESCAPE" ]
}

@test "a dangling symlink destination leading out: a clear error, nothing made on the host" {
	ln -s "../../../../../../../../opt/$ESCAPE" "$BUNDLE/rootfs/dangling"
	update_config '.mounts += [{"destination": "/dangling", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"mount /dangling"* ]]
	[ ! -e "/opt/$ESCAPE" ]
	assert_nothing_left "$ID"
}

@test "propagation options are accepted and applied" {
	mkdir "$HOSTDIR/src"
	update_config --arg s "$HOSTDIR/src" '.mounts += [
		{"destination": "/p/rprivate", "type": "bind", "source": $s, "options": ["rbind", "rprivate"]},
		{"destination": "/p/rslave", "type": "bind", "source": $s, "options": ["rbind", "rslave"]},
		{"destination": "/p/slave", "type": "bind", "source": $s, "options": ["bind", "slave"]},
		{"destination": "/p/private", "type": "tmpfs", "source": "tmpfs", "options": ["private"]},
		{"destination": "/p/unbindable", "type": "tmpfs", "source": "tmpfs", "options": ["runbindable"]},
		{"destination": "/p/shared", "type": "tmpfs", "source": "tmpfs", "options": ["rshared"]}]'
	run_in_container 'cat /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	for d in rprivate rslave slave private unbindable shared; do
		[ -n "$(mountinfo_line "/p/$d")" ]
	done
	# Optional fields (7th on) name the propagation: none for private.
	[ "$(mountinfo_line /p/private | awk '{print $7}')" = - ]
	[ "$(mountinfo_line /p/unbindable | awk '{print $7}')" = unbindable ]
	[[ "$(mountinfo_line /p/shared | awk '{print $7}')" == shared:* ]]
}

@test "rslave bind: a mount the host makes later shows up inside" {
	mkdir -p "$HOSTDIR/src/sub"
	mount --bind "$HOSTDIR/src" "$HOSTDIR/src"
	HOST_MOUNTS+=("$HOSTDIR/src")
	mount --make-shared "$HOSTDIR/src"
	update_config --arg s "$HOSTDIR/src" \
		'.mounts += [{"destination": "/shared", "type": "bind", "source": $s, "options": ["rbind", "rslave"]}]
		| .process.args = ["sleep", "100"]'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	mount -t tmpfs -o size=1m moat-late "$HOSTDIR/src/sub"
	HOST_MOUNTS+=("$HOSTDIR/src/sub")
	echo late >"$HOSTDIR/src/sub/file"
	moat exec "$ID" cat /shared/sub/file
	[ "$status" -eq 0 ]
	[ "$output" = late ]
}

@test "masked paths: files read empty, directories show nothing" {
	host_has_kcore=false
	[ -e /proc/kcore ] && host_has_kcore=true
	run_in_container 'for f in /proc/kcore /proc/keys /proc/timer_list /proc/interrupts /proc/kallsyms; do
		[ -e $f ] || continue
		if cat $f >/tmp/out; then echo "$f $(wc -c </tmp/out)"; else echo "$f unreadable"; fi
	done
		echo "firmware $(ls -A /sys/firmware 2>/dev/null | wc -l)"
		echo "acpi $(ls -A /proc/acpi 2>/dev/null | wc -l)"'
	[ "$status" -eq 0 ]
	for f in /proc/keys /proc/timer_list /proc/interrupts /proc/kallsyms; do
		echo "$output" | grep -qx "$f 0"
	done
	if $host_has_kcore; then
		echo "$output" | grep -qx "/proc/kcore 0"
	fi
	echo "$output" | grep -qx "firmware 0"
	echo "$output" | grep -qx "acpi 0"
	# The host has something there: masking is what made them empty.
	[ "$(head -c 100 /proc/interrupts | wc -c)" -gt 0 ]
	[ "$(head -c 100 /proc/timer_list | wc -c)" -gt 0 ]
}

@test "masked paths from config.json are masked too" {
	mkdir -p "$BUNDLE/rootfs/secret"
	echo s3cret >"$BUNDLE/rootfs/secret/key"
	echo s3cret >"$BUNDLE/rootfs/etc/secret-file"
	update_config '.linux.maskedPaths += ["/secret", "/etc/secret-file"]'
	run_in_container 'ls -A /secret 2>/dev/null | wc -l; cat /etc/secret-file >/tmp/out && wc -c </tmp/out'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" = 0 ]
	! grep -q s3cret <<<"$output"
}

@test "read-only paths: a write to /proc/sys fails with Read-only file system" {
	update_config '.linux.readonlyPaths = []'
	run_in_container 'echo other >/proc/sys/kernel/hostname; echo 1 >/proc/sys/vm/drop_caches; hostname'
	[[ "${lines[0]}" == *"/proc/sys/kernel/hostname: Read-only file system" ]]
	[[ "${lines[1]}" == *"/proc/sys/vm/drop_caches: Read-only file system" ]]
	[ "${lines[2]}" = moat ]
}

@test "the root is read-only even when config.json says root.readonly false" {
	update_config '.root.readonly = false'
	run_in_container 'touch /newfile; echo x >/etc/passwd'
	[ "$status" -ne 0 ]
	[[ "${lines[0]}" == *"/newfile: Read-only file system" ]]
	[[ "${lines[1]}" == *"/etc/passwd: Read-only file system" ]]
	[ ! -e "$BUNDLE/rootfs/newfile" ]
}

@test "/tmp and /var/tmp: writable tmpfs, mode 1777, noexec, 64 MiB even when config asks more" {
	update_config '.mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["size=1g", "exec"]}]'
	run_in_container 'for d in /tmp /var/tmp; do echo x >$d/f && stat -c "%a" $d && df -k $d | tail -n 1 | awk "{print \$2}"; done
		cp /bin/busybox /tmp/bb && /tmp/bb true'
	[ "$status" -ne 0 ]
	[ "${lines[0]}" = 1777 ]
	[ "${lines[1]}" = 65536 ]
	[ "${lines[2]}" = 1777 ]
	[ "${lines[3]}" = 65536 ]
	[[ "${lines[4]}" == *"/tmp/bb: Permission denied" ]]
}

@test "binds of dangerous host paths are refused with a clear error, nothing left" {
	touch "$HOSTDIR/docker.sock"
	for src in / /etc /proc /var/lib/docker "$HOSTDIR/docker.sock"; do
		update_config --arg s "$src" \
			'.mounts = [.mounts[] | select(.destination != "/mnt")] + [{"destination": "/mnt", "type": "bind", "source": $s, "options": ["rbind", "ro"]}]'
		moat create -b "$BUNDLE" "$ID"
		[ "$status" -eq 1 ]
		[[ "$output" == *"refusing to bind $src into the container"* ]]
		assert_nothing_left "$ID"
	done
}

@test "a symlink to /etc as a bind source is refused too" {
	ln -s /etc "$HOSTDIR/looks-harmless"
	update_config --arg s "$HOSTDIR/looks-harmless" \
		'.mounts += [{"destination": "/mnt", "type": "bind", "source": $s, "options": ["rbind"]}]'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"refusing to bind /etc into the container"* ]]
	assert_nothing_left "$ID"
}

@test "a host file the profile allows read-only (/etc/hosts) is read-only inside even when asked rw" {
	update_config '.mounts += [{"destination": "/etc/hosts", "type": "bind", "source": "/etc/hosts", "options": ["rbind", "rw"]}]'
	run_in_container 'cat /etc/hosts >/dev/null && echo readable; echo "6.6.6.6 evil" >>/etc/hosts'
	[ "$status" -ne 0 ]
	[ "${lines[0]}" = readable ]
	# G12: the host's root-owned file refuses container root before the
	# read-only mount does; the mount is read-only all the same.
	[[ "${lines[1]}" == *"/etc/hosts: Read-only file system" || "${lines[1]}" == *"/etc/hosts: Permission denied" ]]
	! grep -q evil /etc/hosts
	run_in_container 'cat /proc/self/mountinfo'
	opts=$(mountinfo_line /etc/hosts | awk '{print $6}')
	[[ ",$opts," == *,ro,* ]]
}

@test "a missing bind source is a clear error, nothing left" {
	update_config --arg s "$HOSTDIR/missing" \
		'.mounts += [{"destination": "/mnt", "type": "bind", "source": $s, "options": ["rbind"]}]'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"bind source $HOSTDIR/missing: No such file or directory"* ]]
	assert_nothing_left "$ID"
}

@test "a masked directory is an empty read-only directory, as runc's; a masked file reads empty" {
	mkdir -p "$BUNDLE/rootfs/secret"
	echo s3cret >"$BUNDLE/rootfs/secret/key"
	echo s3cret >"$BUNDLE/rootfs/etc/secret-file"
	update_config '.linux.maskedPaths += ["/secret", "/etc/secret-file"]'
	run_in_container 'ls -A /secret && echo "listed $(ls -A /secret | wc -l)"
		cat /secret/key; touch /secret/new; mkdir /secret/d; wc -c </etc/secret-file'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "listed 0" ]
	[[ "${lines[1]}" == *"/secret/key"*"No such file or directory" ]]
	[[ "${lines[2]}" == *"/secret/new"*"Read-only file system" ]]
	[[ "${lines[3]}" == *"/secret/d"*"Read-only file system" ]]
	[ "${lines[4]}" = 0 ]
	! grep -q s3cret <<<"$output"
	[ ! -e "$BUNDLE/rootfs/secret/new" ]
}

# An image built FROM scratch: /bin and nothing else.
scratch_rootfs() {
	rm -rf "$BUNDLE/rootfs"
	mkdir -p "$BUNDLE/rootfs/bin"
	cp "$BUSYBOX" "$BUNDLE/rootfs/bin/busybox"
	for a in sh ls cat echo stat grep awk wc touch; do
		ln -s busybox "$BUNDLE/rootfs/bin/$a"
	done
}

@test "a rootfs with /bin only (FROM scratch): the mount points are made, /tmp is the profile's tmpfs" {
	scratch_rootfs
	run_in_container 'for d in /proc /sys /dev /dev/pts /dev/shm /tmp /var/tmp; do echo "$d $(stat -f -c %T $d)"; done
		echo x >/tmp/f && echo x >/var/tmp/f && echo written'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "/proc proc" ]
	[ "${lines[1]}" = "/sys sysfs" ]
	[ "${lines[2]}" = "/dev tmpfs" ]
	[ "${lines[3]}" = "/dev/pts devpts" ]
	[ "${lines[4]}" = "/dev/shm tmpfs" ]
	[ "${lines[5]}" = "/tmp tmpfs" ]
	[ "${lines[6]}" = "/var/tmp tmpfs" ]
	[ "${lines[7]}" = written ]
}

@test "a read-only rootfs without /tmp or /var/tmp runs: the profile's tmpfs there is left out and told" {
	scratch_rootfs
	mkdir "$BUNDLE/rootfs/proc" "$BUNDLE/rootfs/sys" "$BUNDLE/rootfs/dev"
	mount --bind "$BUNDLE/rootfs" "$BUNDLE/rootfs"
	HOST_MOUNTS+=("$BUNDLE/rootfs")
	mount -o remount,bind,ro "$BUNDLE/rootfs"
	update_config --arg c 'for d in /proc /dev/pts /dev/shm; do echo "$d $(stat -f -c %T $d)"; done
		ls -d /tmp /var/tmp 2>&1; echo x >/dev/shm/f && echo written' '.process.args = ["sh", "-c", $c]'
	moat_sep run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	mapfile -t lines <<<"$output"
	[ "${lines[0]}" = "/proc proc" ]
	[ "${lines[1]}" = "/dev/pts devpts" ]
	[ "${lines[2]}" = "/dev/shm tmpfs" ]
	[[ "${lines[3]}" == *"/tmp: No such file or directory" ]]
	[[ "${lines[4]}" == *"/var/tmp: No such file or directory" ]]
	[ "${lines[5]}" = written ]
	grep -q 'warning: mounts\[/tmp\]: the profile.s tmpfs is not mounted: the rootfs is read-only' <<<"$stderr"
	grep -q 'warning: mounts\[/var/tmp\]' <<<"$stderr"
	jq -e 'select(.verb == "run") | .overrides[] | select(.path == "mounts[/tmp]" and (.enforced | test("not mounted")))' "$AUDIT_LOG" >/dev/null
	umount "$BUNDLE/rootfs"
	HOST_MOUNTS=()
	[ ! -e "$BUNDLE/rootfs/tmp" ]
}

@test "a read-only rootfs without /proc: a clear error naming it, as runc's" {
	scratch_rootfs
	mount --bind "$BUNDLE/rootfs" "$BUNDLE/rootfs"
	HOST_MOUNTS+=("$BUNDLE/rootfs")
	mount -o remount,bind,ro "$BUNDLE/rootfs"
	run_in_container 'true'
	[ "$status" -eq 1 ]
	[[ "$output" == *"mount /proc: creating /proc in the rootfs: Read-only file system"* ]]
}

# A tree with a tmpfs mounted inside it, writable by container root (G12:
# a stranger to host-root-owned files).
tree_with_submount() {
	mkdir -p "$HOSTDIR/src/sub"
	chmod 1777 "$HOSTDIR/src"
	mount -t tmpfs -o size=1m,mode=1777 moat-sub "$HOSTDIR/src/sub"
	HOST_MOUNTS+=("$HOSTDIR/src/sub")
}

@test "\"rbind\",\"ro\" in a writable tree: the top is read-only, a submount stays writable, as runc's; \"rro\" makes it read-only too" {
	tree_with_submount
	printf '{"audit_log": "%s", "writable_bind_trees": ["%s"]}\n' "$AUDIT_LOG" "$HOSTDIR" >"$MOAT_CONFIG"
	update_config --arg s "$HOSTDIR/src" '.mounts += [
		{"destination": "/mnt/ro", "type": "bind", "source": $s, "options": ["rbind", "ro"]},
		{"destination": "/mnt/rro", "type": "bind", "source": $s, "options": ["rbind", "rro"]}]'
	run_in_container 'echo x >/mnt/ro/top; echo ro >/mnt/ro/sub/file && echo sub written
		echo x >/mnt/rro/top; echo rro >/mnt/rro/sub/other'
	[[ "${lines[0]}" == *"/mnt/ro/top: Read-only file system" ]]
	[ "${lines[1]}" = "sub written" ]
	[[ "${lines[2]}" == *"/mnt/rro/top: Read-only file system" ]]
	[[ "${lines[3]}" == *"/mnt/rro/sub/other: Read-only file system" ]]
	[ "$(cat "$HOSTDIR/src/sub/file")" = ro ]
	[ ! -e "$HOSTDIR/src/sub/other" ]
	[ ! -e "$HOSTDIR/src/top" ]
}

@test "a bind the profile makes read-only is read-only down to its submounts, whatever config.json asked" {
	tree_with_submount
	update_config --arg s "$HOSTDIR/src" '.mounts += [
		{"destination": "/mnt/ro", "type": "bind", "source": $s, "options": ["rbind", "ro"]},
		{"destination": "/mnt/rw", "type": "bind", "source": $s, "options": ["rbind", "rw", "rrw"]}]'
	run_in_container 'echo x >/mnt/ro/sub/file; echo x >/mnt/rw/sub/file; echo x >/mnt/rw/top'
	[[ "${lines[-3]}" == *"/mnt/ro/sub/file: Read-only file system" ]]
	[[ "${lines[-2]}" == *"/mnt/rw/sub/file: Read-only file system" ]]
	[[ "${lines[-1]}" == *"/mnt/rw/top: Read-only file system" ]]
	[ ! -e "$HOSTDIR/src/sub/file" ]
	jq -e 'select(.verb == "run") | .overrides[] | select(.path == "mounts[/mnt/ro].options" and .enforced == "rbind,ro,nosuid,nodev,rro,noexec")' "$AUDIT_LOG"
	jq -e 'select(.verb == "run") | .overrides[] | select(.path == "mounts[/mnt/rw].options" and .enforced == "rbind,nosuid,nodev,ro,rro,noexec")' "$AUDIT_LOG"
}
