#!/usr/bin/env bats
# G14: Landlock behind the mounts. The container's processes may write only
# beneath the writable mounts of the mount plan and execute only outside its
# noexec mounts; with ABI 6 they cannot reach an abstract unix socket of a
# process outside their Landlock domain. To show that Landlock (and not a
# mount) refuses, a createContainer hook mounts what the plan does not
# know: a writable tmpfs at /root and an exec tmpfs over /tmp. With the
# operator's "landlock": "off" the same script writes and runs there.
# Every test skips on a kernel without Landlock ABI 2 (Debian 12's guest).

load profile_helpers
load netns_helpers

GUARANTEE=g14

setup() {
	requires_root
	LANDLOCK="$("$MOAT" features | jq -r '.annotations["run.moat.landlock"]')"
	ABI=0
	[[ "$LANDLOCK" =~ ^abi\ ([0-9]+): ]] && ABI="${BASH_REMATCH[1]}"
	[ "$ABI" -ge 2 ] || skip "no Landlock here: $LANDLOCK"
	setup_netns
	prepare_bundle spec
	add_testbin sysprobe
}

teardown() {
	[ -z "${VOLUME:-}" ] || rm -rf "${VOLUME%/_data}"
	teardown_netns
}

landlock_mode() {
	printf '{"audit_log": "%s", "landlock": "%s"}\n' "$AUDIT_LOG" "$1" >"$MOAT_CONFIG"
}

# Mounts the plan does not know: /root writable, /tmp executable.
hook_mounts() {
	update_config '.hooks.createContainer = [{"path": "/bin/sh", "args": ["sh", "-c", "mount -t tmpfs none /root && mount -t tmpfs none /tmp"]}]'
}

BYPASS='echo z >/root/f && echo wrote /root; cp /bin/busybox /tmp/echo && /tmp/echo ran /tmp; :'

@test "G14: a write outside the writable mounts and an exec from scratch get EACCES, though a hook made them possible" {
	hook_mounts
	in_container "$BYPASS"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "sh: can't create /root/f: Permission denied" ]
	[ "${lines[1]}" = "sh: /tmp/echo: Permission denied" ]
	# The mounts allow both: Landlock refused them.
	landlock_mode off
	in_container "$BYPASS"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "wrote /root" ]
	[ "${lines[1]}" = "ran /tmp" ]
}

@test "G14: a /dev/console a hook bound gets no write right (moat binds none)" {
	update_config '.hooks.createContainer = [{"path": "/bin/sh", "args": ["sh", "-c", "mount -t tmpfs none /root && touch /root/c /dev/console && mount --bind /root/c /dev/console"]}]'
	in_container 'echo x >/dev/console && echo wrote'
	[ "$output" = "sh: can't create /dev/console: Permission denied" ]
	landlock_mode off
	in_container 'echo x >/dev/console && echo wrote'
	[ "$output" = wrote ]
}

@test "G14: moat exec gets the same rules" {
	hook_mounts
	start_sleeper
	moat exec "$CID" sh -c "$BYPASS"
	[ "${lines[0]}" = "sh: can't create /root/f: Permission denied" ]
	[ "${lines[1]}" = "sh: /tmp/echo: Permission denied" ]
	moat kill "$CID" KILL
	wait_status "$CID" stopped
	moat delete "$CID"
	landlock_mode off
	start_sleeper
	moat exec "$CID" sh -c "$BYPASS"
	[ "${lines[0]}" = "wrote /root" ]
	[ "${lines[1]}" = "ran /tmp" ]
	moat delete --force "$CID"
}

# A Docker-style volume (exec allowed, G13) with a noexec tmpfs in it: the
# init lists /data/a/y, the sibling of the mount at /data/a/scratch.
sleeper_with_volume() {
	VOLUME="/var/lib/docker/volumes/moat-g14-$$-$RANDOM/_data"
	mkdir -p "$VOLUME/a/scratch" "$VOLUME/a/y"
	update_config --arg s "$VOLUME" '.mounts += [
		{"destination": "/data", "type": "bind", "source": $s, "options": ["rbind", "rw"]},
		{"destination": "/data/a/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]'
	hook_mounts
	start_sleeper
}

# A directory the payload makes later on the way to the noexec mount is not
# in the list: exec reads no directory, so it gets no right.
later_directory_gets_no_exec() {
	moat exec "$CID" sh -c 'mkdir /data/a/z && cp /bin/busybox /data/a/z/echo && echo made'
	[ "$output" = made ]
	moat exec "$CID" /data/a/z/echo ran
	[ "$status" -ne 0 ]
	[ "$output" = "moat: exec $CID: exec: \"/data/a/z/echo\": permission denied" ]
}

@test "G14: moat exec takes the init's list of exec paths, and follows no symlink a payload put on the way" {
	sleeper_with_volume
	run sh -c 'jq -r .landlockExec "$1" | grep -cx /data/a/y' sh "$ROOT/$CID/state.json"
	[ "$output" = 1 ]
	[ ! -e "$ROOT/$CID/landlock-exec" ]
	later_directory_gets_no_exec
	# The payload moves /data/a away and puts there a symlink to /tmp
	# (made executable by the hook): /data/a/y is now /tmp/y.
	moat exec "$CID" sh -c 'mv /data/a /data/a2 && ln -s /tmp /data/a && mkdir /tmp/y && cp /bin/busybox /tmp/y/echo && echo moved'
	[ "$output" = moved ]
	moat exec "$CID" /data/a/y/echo ran
	rm -rf "${VOLUME%/_data}"
	[ "$status" -ne 0 ]
	[ "$output" = "moat: exec $CID: exec: \"/data/a/y/echo\": permission denied" ]
	moat delete --force "$CID"
}

@test "G14: a container of an older moat, its exec list in a file of its own, gets the same rules" {
	sleeper_with_volume
	# As a moat before the list went into state.json left it.
	jq -r .landlockExec "$ROOT/$CID/state.json" >"$ROOT/$CID/landlock-exec"
	jq 'del(.landlockExec)' "$ROOT/$CID/state.json" >"$ROOT/$CID/state.new"
	mv "$ROOT/$CID/state.new" "$ROOT/$CID/state.json"
	run grep -cx /data/a/y "$ROOT/$CID/landlock-exec"
	[ "$output" = 1 ]
	later_directory_gets_no_exec
	rm -rf "${VOLUME%/_data}"
	moat delete --force "$CID"
}

@test "G14: what a container legitimately writes still works" {
	WTREE="$(mktemp -d /tmp/moat-g14.XXXXXX)"
	chmod 1777 "$WTREE"
	: >"$WTREE/file"
	chmod 666 "$WTREE/file"
	printf '{"audit_log": "%s", "writable_bind_trees": ["%s"]}\n' "$AUDIT_LOG" "$WTREE" >"$MOAT_CONFIG"
	# A writable bind of a single file gets the file rights alone (the
	# kernel refuses a directory's on a file).
	update_config --arg s "$WTREE" '.mounts += [{"destination": "/w", "type": "bind", "source": $s, "options": ["rbind", "rw"]},
		{"destination": "/wfile", "type": "bind", "source": ($s + "/file"), "options": ["bind", "rw"]}]'
	in_container 'set -e
		for d in /tmp /var/tmp /dev/shm /w; do
			mkdir $d/a $d/b; echo x >$d/a/f; mv $d/a/f $d/b/g; ln -s g $d/b/l
			: >$d/b/g; rm -r $d/a $d/b
		done
		echo x >/dev/null; head -c 4 /dev/zero >/dev/full 2>&1 || true
		echo y >/wfile; echo 500 >/proc/self/oom_score_adj; echo ok'
	run_status=$status
	file_content="$(cat "$WTREE/file")"
	rm -rf "$WTREE"
	[ "$run_status" -eq 0 ]
	[ "${lines[-1]}" = ok ]
	[ "$file_content" = y ]
}

# More entries beside a noexec mount than the rules' fds are held for at
# once (landlock.c closes them in batches of 64): every one is granted,
# none is lost from the init's list.
@test "G14: every entry of a large directory on the way to a noexec mount may execute" {
	VOLUME="/var/lib/docker/volumes/moat-g14-$$-$RANDOM/_data"
	mkdir -p "$VOLUME/a/scratch"
	for i in $(seq 1 150); do mkdir "$VOLUME/a/d$i"; done
	update_config --arg s "$VOLUME" '.mounts += [
		{"destination": "/data", "type": "bind", "source": $s, "options": ["rbind", "rw"]},
		{"destination": "/data/a/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]'
	hook_mounts
	start_sleeper
	run sh -c 'jq -r .landlockExec "$1" | grep -c "^/data/a/d"' sh "$ROOT/$CID/state.json"
	[ "$output" = 150 ]
	# Each one runs (the list is what exec grants from).
	moat exec "$CID" sh -c 'cp /bin/busybox /data/a/d1/echo && for i in $(seq 2 150); do ln /data/a/d1/echo /data/a/d$i/echo; done && echo made'
	[ "$output" = made ]
	moat exec "$CID" sh -c 'n=0; for i in $(seq 1 150); do /data/a/d$i/echo -n "" && n=$((n + 1)); done; echo $n'
	[ "$output" = 150 ]
	moat exec "$CID" /data/a/scratch/../d150/echo ran
	[ "$output" = ran ]
	moat delete --force "$CID"
}

@test "G14: under ABI 6 an abstract unix socket of a joined network namespace is refused" {
	[ "$ABI" -ge 6 ] || skip "Landlock ABI $ABI: no scopes"
	make_netns abs
	ip netns exec "$NS" "$TESTBIN/sysprobe" abstract-listen "moat-$NS" >"$BATS_TEST_TMPDIR/listen.out" &
	echo $! >>"$LISTENERS"
	for _ in $(seq 1 100); do
		[ -s "$BATS_TEST_TMPDIR/listen.out" ] && break
		sleep 0.05
	done
	update_config --arg p "/var/run/netns/$NS" '.linux.namespaces |= map(if .type == "network" then .path = $p else . end)'
	in_container "sysprobe abstract-connect moat-$NS"
	[ "$output" = "connect(@abstract): Operation not permitted (errno 1)" ]
	# Pods share their network namespace by design: without Landlock the
	# container reaches the host's listener.
	landlock_mode off
	in_container "sysprobe abstract-connect moat-$NS"
	[ "$output" = ok ]
}

@test "G14: features, state and the audit line say what the container got; config.json cannot choose" {
	update_config '.annotations["run.moat.landlock"] = "off" | .process.args = ["sleep", "1000"]'
	next_id
	moat run -d -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	moat state "$CID"
	[ "$(jq -r '.annotations["run.moat.landlock"]' <<<"$output")" = "$LANDLOCK" ]
	[ "$(grep '"verb":"run"' "$AUDIT_LOG" | tail -1 | jq -r .landlock)" = "$LANDLOCK" ]
	moat delete --force "$CID"
	landlock_mode off
	[ "$("$MOAT" --config "$MOAT_CONFIG" features | jq -r '.annotations["run.moat.landlock"]')" = "off (operator config)" ]
}

@test "G14: the operator may require it; a bad value is a one-line error" {
	landlock_mode require
	in_container true
	[ "$status" -eq 0 ]
	landlock_mode maybe
	in_container true
	[ "$status" -eq 1 ]
	[ "$output" = "moat: run: $MOAT_CONFIG: landlock: expected \"auto\", \"require\" or \"off\"" ]
}
