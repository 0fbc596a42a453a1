#!/usr/bin/env bats
# G4: no_new_privs is set for the container's processes and for what
# `moat exec` starts, whatever process.noNewPrivileges says.

load profile_helpers

GUARANTEE=g4

setup() {
	requires_root
}

teardown() {
	teardown_profile
}

# The script's shell and a child it forks both have the flag.
check_nnp() {
	in_container 'grep ^NoNewPrivs: /proc/self/status; sh -c "grep ^NoNewPrivs: /proc/self/status"'
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" =~ ^NoNewPrivs:[[:space:]]+1$ ]]
	[[ "${lines[1]}" =~ ^NoNewPrivs:[[:space:]]+1$ ]]
}

@test "G4 spec: NoNewPrivs is 1" {
	prepare_bundle spec
	check_nnp
}

@test "G4 docker.20 (privileged, no noNewPrivileges): NoNewPrivs is 1" {
	prepare_bundle docker.20
	[ "$(jq '.process.noNewPrivileges' "$BUNDLE/config.json")" = null ]
	check_nnp
}

@test "G4 permissive (noNewPrivileges false): NoNewPrivs is 1" {
	prepare_bundle permissive
	[ "$(jq '.process.noNewPrivileges' "$BUNDLE/config.json")" = false ]
	check_nnp
}

@test "G4 exec --process with noNewPrivileges false: NoNewPrivs is 1" {
	prepare_bundle permissive
	start_sleeper
	jq '.process | .args = ["grep", "^NoNewPrivs:", "/proc/self/status"] | .noNewPrivileges = false' \
		"$FIXTURES/permissive.config.json" >"$BUNDLE/process.json"
	moat exec --process "$BUNDLE/process.json" "$CID"
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^NoNewPrivs:[[:space:]]+1$ ]]
	moat exec "$CID" grep ^NoNewPrivs: /proc/self/status
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^NoNewPrivs:[[:space:]]+1$ ]]
}
