#!/usr/bin/env bats
# G15 on the host side of direct use: --workdir (sandbox and session create)
# is bound writable and executable at /work, so it obeys G5's writable-bind
# rule, with one answer under every operator config: a directory of the
# caller's outside the system trees, or one in writable_bind_trees; no link
# on the way. And the session's init (PID 1 inside) and every exec's child
# carry neither a secret the profile stripped nor a host path on their
# command lines: the attacks are run from inside, as a payload would.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	requires_root
	setup_bundle
	WORK="$(mktemp -d /tmp/moat-wdwork.XXXXXX)"
	PLANT="moat-wd-planted-$$-$BATS_TEST_NUMBER"
	# The built-in operator config (no key set: the defaults), beside the
	# bundle's (audit_log and image_cache only) and one whose audit log is
	# in /tmp itself, beside the workdirs.
	BUILTIN_CONFIG="$BUNDLE/builtin.json"
	echo '{}' >"$BUILTIN_CONFIG"
	TMP_AUDIT="$(mktemp /tmp/moat-wdaudit.XXXXXX)"
	TMP_AUDIT_CONFIG="$BUNDLE/tmp-audit.json"
	printf '{"audit_log": "%s", "image_cache": "%s"}\n' "$TMP_AUDIT" "$IMAGE_CACHE" >"$TMP_AUDIT_CONFIG"
	REFUSED=()
	CLEAN=()
}

teardown() {
	local d
	for s in $(ls "$ROOT/.session" 2>/dev/null); do
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session rm "$s" || true
	done
	# What a moat that let the payload write there left (a8fdf38 did).
	for d in "${REFUSED[@]}"; do
		rm -f "$d/$PLANT"
	done
	for d in "${CLEAN[@]}"; do
		rm -rf "$d"
	done
	rm -rf "$WORK"
	rm -f "$TMP_AUDIT"
	teardown_bundle
}

# moat ARGS under the operator config $1 (stdout in $output, stderr in
# $stderr).
mc() {
	local cfg="$1"
	shift
	MOAT_CONFIG="$cfg" moat_sep "$@"
}

# --workdir $2 refused for verb $1 (sandbox or session create) under every
# config: exit 1, one line naming it, no payload run, no bundle made.
refused_everywhere() {
	local verb="$1" w="$2" cfg
	REFUSED+=("$w")
	for cfg in "$BUILTIN_CONFIG" "$MOAT_CONFIG" "$TMP_AUDIT_CONFIG"; do
		if [ "$verb" = sandbox ]; then
			mc "$cfg" sandbox --rootfs "$BUNDLE/rootfs" --workdir "$w" -- sh -c "touch /work/$PLANT; echo ran"
		else
			mc "$cfg" session create --rootfs "$BUNDLE/rootfs" --workdir "$w"
		fi
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
		[[ "$stderr" == "moat: $verb: --workdir $w: "* ]]
		[ ! -e "$w/$PLANT" ]
		[ -z "$(ls -A "$ROOT/.sandbox" "$ROOT/.session" 2>/dev/null)" ]
	done
}

@test "--workdir: system trees, and a link to one, are refused with one line under every config; nothing is made" {
	local srv
	srv="$(mktemp -d /srv/moat-wd.XXXXXX)"
	CLEAN+=("$srv")
	ln -s /usr/local/sbin "$BUNDLE/sbin-link"
	for w in /opt /usr/local/sbin "$srv" "$BUNDLE/sbin-link" /; do
		refused_everywhere sandbox "$w"
	done
	[[ "$stderr" == *"the host's root"* ]]
	refused_everywhere sandbox "$BUNDLE/sbin-link"
	[[ "$stderr" == *"a symbolic link on the path"* ]]
	refused_everywhere sandbox /usr/local/sbin
	[[ "$stderr" == *"a system tree"* ]]
	if [ -d /usr/lib/systemd/system ]; then
		refused_everywhere sandbox /usr/lib/systemd/system
	fi
	for w in /opt "$srv" "$BUNDLE/sbin-link"; do
		refused_everywhere "session create" "$w"
	done
}

@test "--workdir: a link anywhere on the path is refused, though it leads to a directory of the caller's" {
	mkdir "$WORK/real"
	ln -s "$WORK" "$BUNDLE/work-link"
	refused_everywhere sandbox "$BUNDLE/work-link/real"
	[[ "$stderr" == *"a symbolic link on the path"* ]]
}

@test "--workdir: /tmp itself, a directory every user may write to, /home, moat's own state are refused" {
	local open
	open="$(mktemp -d /tmp/moat-wdopen.XXXXXX)"
	CLEAN+=("$open")
	chmod 0777 "$open"
	refused_everywhere sandbox /tmp
	refused_everywhere sandbox "$open"
	[[ "$stderr" == *"writable by every user"* ]]
	refused_everywhere sandbox /home
	mkdir -p "$ROOT"
	refused_everywhere sandbox "$ROOT"
	[[ "$stderr" == *"moat's own state"* ]]
}

@test "--workdir: a directory of the caller's in /tmp works under every config, an audit log beside it too" {
	local cfg
	for cfg in "$BUILTIN_CONFIG" "$MOAT_CONFIG" "$TMP_AUDIT_CONFIG"; do
		rm -f "$WORK/out"
		mc "$cfg" sandbox --rootfs "$BUNDLE/rootfs" --workdir "$WORK" -- sh -c 'echo made >out; pwd'
		[ "$status" -eq 0 ]
		[ "$output" = /work ]
		[ "$(cat "$WORK/out")" = made ]
	done
	# Relative, from the cwd.
	(cd "$(dirname "$WORK")" && "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" sandbox --rootfs "$BUNDLE/rootfs" --workdir "$(basename "$WORK")" -- sh -c 'echo rel >out2')
	[ "$(cat "$WORK/out2")" = rel ]
}

@test "--workdir: another user's directory is refused, unless sudo ran moat for that user or it is in writable_bind_trees" {
	local theirs
	theirs="$(mktemp -d /tmp/moat-wdtheirs.XXXXXX)"
	CLEAN+=("$theirs")
	chown 1234:1234 "$theirs"
	refused_everywhere sandbox "$theirs"
	[[ "$stderr" == *"not the caller's"* ]]
	# Through sudo the caller is SUDO_UID: that user's directory is its,
	# root's is not.
	SUDO_UID=1234 mc "$MOAT_CONFIG" sandbox --rootfs "$BUNDLE/rootfs" --workdir "$theirs" -- true
	[ "$status" -eq 0 ]
	SUDO_UID=1234 mc "$MOAT_CONFIG" sandbox --rootfs "$BUNDLE/rootfs" --workdir "$WORK" -- true
	[ "$status" -eq 1 ]
	[[ "$stderr" == "moat: sandbox: --workdir $WORK: not the caller's"* ]]
}

@test "--workdir: a directory in writable_bind_trees works, in a system tree too" {
	local tree
	tree="$(mktemp -d /srv/moat-wdtree.XXXXXX)"
	CLEAN+=("$tree")
	mkdir "$tree/job"
	refused_everywhere sandbox "$tree/job"
	printf '{"audit_log": "%s", "image_cache": "%s", "writable_bind_trees": ["%s"]}\n' \
		"$AUDIT_LOG" "$IMAGE_CACHE" "$tree" >"$BUNDLE/wbt.json"
	mc "$BUNDLE/wbt.json" sandbox --rootfs "$BUNDLE/rootfs" --workdir "$tree/job" -- sh -c 'echo made >out'
	[ "$status" -eq 0 ]
	[ "$(cat "$tree/job/out")" = made ]
	mc "$BUNDLE/wbt.json" session create --rootfs "$BUNDLE/rootfs" --workdir "$tree/job"
	[ "$status" -eq 0 ]
}

@test "session: PID 1 and every process inside show neither a stripped --env secret nor the host workdir" {
	local sid
	mc "$MOAT_CONFIG" session create --rootfs "$BUNDLE/rootfs" --workdir "$WORK" --env GITHUB_TOKEN=secret123
	[ "$status" -eq 0 ]
	sid="$output"
	# As the payload: PID 1's command line and environment, and every
	# process's command line.
	mc "$MOAT_CONFIG" session exec "$sid" -- sh -c 'cat /proc/1/cmdline; cat /proc/1/environ; cat /proc/[0-9]*/cmdline; echo; echo looked' </dev/null
	[ "$status" -eq 0 ]
	[[ "$output" == *looked* ]]
	[[ "$output" != *secret123* ]]
	[[ "$output" != *"$WORK"* ]]
	[[ "$output" != *"$BUNDLE"* ]]
	[[ "$output" != *GITHUB_TOKEN* ]]
	# An exec's child is a copy of moat in the container until its execve:
	# one exec watches every command line while others start with a
	# secret in --env and a host path on moat's command line.
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session exec "$sid" -- sh -c \
		'end=$(($(date +%s) + 4)); while [ "$(date +%s)" -lt "$end" ]; do cat /proc/[0-9]*/cmdline 2>/dev/null; echo; done' \
		>"$BUNDLE/seen" 2>&1 </dev/null &
	local watcher=$!
	sleep 0.5
	for _ in 1 2 3 4 5 6 7 8; do
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session exec --env MY_TOKEN=secret456 \
			--result "$BUNDLE/rec.json" "$sid" -- true </dev/null
	done
	wait "$watcher"
	[ -s "$BUNDLE/seen" ]
	! grep -aq secret456 "$BUNDLE/seen"
	! grep -aqF "$WORK" "$BUNDLE/seen"
	! grep -aqF "$BUNDLE" "$BUNDLE/seen"
	mc "$MOAT_CONFIG" session rm "$sid"
}
