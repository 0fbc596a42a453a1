#!/usr/bin/env bats
# moat profile explain -b BUNDLE: every override and refusal create would
# make, and every mount operation in order, printed without creating
# anything (no state dir, cgroup, process or mount).

load profile_helpers

GUARANTEE=explain

setup() {
	requires_root
	prepare_bundle spec
	CG="moat-explain-$BATS_TEST_NUMBER-$$"
	update_config --arg p "/$CG" '.linux.cgroupsPath = $p'
}

teardown() {
	mountpoint -q "$BUNDLE/rootfs" && umount "$BUNDLE/rootfs"
	teardown_profile
	local d
	for d in /sys/fs/cgroup/"$CG" /sys/fs/cgroup/*/"$CG"; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	return 0
}

# Nothing of a container anywhere: the state root, the cgroup, a mount.
assert_nothing_created() {
	[ ! -e "$ROOT" ] || { echo "state root created" >&2; ls -la "$ROOT" >&2; return 1; }
	! ls -d /sys/fs/cgroup/"$CG" /sys/fs/cgroup/*/"$CG" 2>/dev/null | grep -q . || {
		echo "cgroup created" >&2
		return 1
	}
	! grep -q "$BUNDLE" /proc/self/mountinfo
}

symlink_bind() {
	mkdir -p "$BUNDLE/host" "$BUNDLE/rootfs/mnt/share"
	ln -s /usr/share "$BUNDLE/host/share-link"
	update_config --arg s "$BUNDLE/host/share-link" \
		'.mounts += [{"destination": "/mnt/share", "type": "bind", "source": $s, "options": ["rbind"]}]'
}

@test "explain: a volume through a symlink into /usr is shown read-only, and why; nothing created" {
	symlink_bind
	moat profile explain -b "$BUNDLE"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "bundle $BUNDLE, profile strict" ]
	has_line "  changed  mounts[/mnt/share].options: rbind,nosuid,nodev -> rbind,nosuid,nodev,ro,rro"
	[[ "$output" == *"bind $BUNDLE/host/share-link at /mnt/share (rbind,nosuid,nodev,ro,rro)"* ]]
	[[ "$output" == *"added    mounts[/tmp]: (unset) -> tmpfs tmpfs nosuid,nodev,noexec"* ]]
	[[ "$output" == *"changed  linux.resources.pids.limit: unlimited -> 64"* ]]
	[[ "$output" == *". mask /proc/kcore"* ]]
	# The root's attributes come last.
	[[ "${lines[-1]}" == *". root-attrs / (ro,nosuid,nodev)" ]]
	assert_nothing_created
}

@test "explain: refusals are listed and the exit status says create would fail; nothing created" {
	update_config '.mounts += [{"destination": "/var/run/docker.sock", "type": "bind", "source": "/var/run/docker.sock", "options": ["bind"]}, {"destination": "/host-etc", "type": "bind", "source": "/etc", "options": ["rbind"]}]'
	moat profile explain -b "$BUNDLE"
	[ "$status" -eq 1 ]
	[[ "$output" == *"refused  mounts["*"]: bind /var/run/docker.sock -> refused"* ]]
	[[ "$output" == *"refused  mounts["*"]: bind /etc -> refused"* ]]
	[[ "$output" == *"moat: profile: create would fail: mounts["*"refusing"* ]]
	assert_nothing_created
	# A symlink to /etc is judged by where it leads (a fresh bundle: the
	# first one goes first, or it would be left in /tmp).
	teardown_bundle
	prepare_bundle spec
	update_config --arg p "/$CG" '.linux.cgroupsPath = $p'
	mkdir -p "$BUNDLE/host"
	ln -s /etc "$BUNDLE/host/etc-link"
	update_config --arg s "$BUNDLE/host/etc-link" '.mounts += [{"destination": "/x", "type": "bind", "source": $s, "options": ["rbind"]}]'
	moat profile explain -b "$BUNDLE"
	[ "$status" -eq 1 ]
	has_line "  refused  mounts[/x]: bind /etc -> refused"
	assert_nothing_created
}

@test "explain: annotations and --profile are taken into account" {
	update_config '.annotations = {"run.moat.pids-limit": "10", "run.moat.memory-limit": "64G"}'
	moat profile explain --profile egress -b "$BUNDLE"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "bundle $BUNDLE, profile egress" ]
	[[ "$output" == *"linux.resources.pids.limit: unlimited -> 10"* ]]
	[[ "$output" == *"ignored  annotations.run.moat.memory-limit: 64G"* ]]
	assert_nothing_created
	moat profile explain -b /nonexistent/bundle
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "moat: profile: bundle /nonexistent/bundle: No such file or directory" ]]
	moat profile explain
	[ "$status" -eq 1 ]
	[[ "$output" == *"explain needs -b BUNDLE"* ]]
}

@test "explain: the mounts it lists are the ones create makes" {
	symlink_bind
	moat profile explain -b "$BUNDLE"
	[ "$status" -eq 0 ]
	want=$(echo "$output" | sed -nE 's/^ *[0-9]+\. (mount [^ ]+ [^ ]+|bind [^ ]+) at ([^ ]+) .*/\2/p')
	[ -n "$want" ]
	in_container 'cat /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	# mountinfo lists mounts by id, not in the order they were made (a
	# bind's tree is cloned on the host first): compare the sets. Every
	# mount point of the container outside the masks and read-only paths
	# is one explain listed, and each one listed is there.
	got=$(echo "$output" | awk '{print $5}' | grep -Ev '^/$|^/proc/.|^/sys/(firmware|devices|kernel|module)|^/dev/(null|zero|full|random|urandom|tty)$' | sort -u)
	want=$(echo "$want" | sort -u)
	echo "explain: $want" >&2
	echo "mounted: $got" >&2
	[ "$got" = "$want" ]
}

@test "explain: judged on the facts create gathers: a read-only rootfs without /tmp gets no tmpfs there, as create does" {
	rm -rf "$BUNDLE/rootfs/tmp"
	mount --bind "$BUNDLE/rootfs" "$BUNDLE/rootfs"
	mount -o remount,bind,ro "$BUNDLE/rootfs"
	moat profile explain -b "$BUNDLE"
	[ "$status" -eq 0 ]
	[[ "$output" == *"mounts[/tmp]: added by the profile -> not mounted: the rootfs is read-only and has no such directory"* ]]
	! grep -E '^ *[0-9]+\. .* at /tmp ' <<<"$output"
	in_container 'ls -d /tmp 2>&1 || true'
	[ "$status" -eq 0 ]
	[[ "$output" == *"/tmp: No such file or directory"* ]]
}
