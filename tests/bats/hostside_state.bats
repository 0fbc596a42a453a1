#!/usr/bin/env bats
# G15: moat's housekeeping dirs under the state root (.sandbox, .session,
# .host-usr) are opened beneath the root's fd without following a link and
# must be moat's alone: a link or a foreign dir planted there is refused
# in one line, and nothing is made or written through it.

load helpers

setup() {
	setup_bundle
	mkdir -p "$ROOT"
	chmod 0700 "$ROOT"
	ELSEWHERE="$(mktemp -d /tmp/moat-elsewhere.XXXXXX)"
}

teardown() {
	rm -rf "$ELSEWHERE"
	teardown_bundle
}

@test "hostside: a .sandbox link in the state root is not followed" {
	ln -s "$ELSEWHERE" "$ROOT/.sandbox"
	moat_sep sandbox --rootfs "$BUNDLE/rootfs" -- true
	[ "$status" -eq 1 ]
	[[ "$stderr" == "moat: sandbox"*".sandbox"*"not a link"* ]]
	[ "$(echo "$stderr" | wc -l)" -eq 1 ]
	[ -z "$(ls -A "$ELSEWHERE")" ]
}

@test "hostside: a .session link in the state root is not followed" {
	ln -s "$ELSEWHERE" "$ROOT/.session"
	moat_sep session create --rootfs "$BUNDLE/rootfs"
	[ "$status" -eq 1 ]
	[[ "$stderr" == "moat: session create"*".session"*"not a link"* ]]
	[ -z "$(ls -A "$ELSEWHERE")" ]
	# The other verbs neither list nor remove through it.
	mkdir "$ELSEWHERE/victim"
	moat_sep session rm victim
	[ "$status" -eq 1 ]
	[ -d "$ELSEWHERE/victim" ]
	moat_sep session exec victim -- true
	[ "$status" -eq 1 ]
}

@test "hostside: a .host-usr link in the state root is not followed" {
	ln -s "$ELSEWHERE" "$ROOT/.host-usr"
	moat_sep sandbox --host-usr -- true
	[ "$status" -eq 1 ]
	[[ "$stderr" == "moat: sandbox"*"--host-usr"*".host-usr"* ]]
	[ -z "$(ls -A "$ELSEWHERE")" ]
}

@test "hostside: a .sandbox dir others may write to is refused" {
	mkdir -m 0777 "$ROOT/.sandbox"
	chmod 0777 "$ROOT/.sandbox"
	moat_sep sandbox --rootfs "$BUNDLE/rootfs" -- true
	[ "$status" -eq 1 ]
	[[ "$stderr" == *".sandbox"*"writable by group or others"* ]]
	[ -z "$(ls -A "$ROOT/.sandbox")" ]
}
