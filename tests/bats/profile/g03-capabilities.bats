#!/usr/bin/env bats
# G3: no capabilities. Every set of the container's processes is empty,
# whatever process.capabilities or a privileged engine config asks.

load profile_helpers

GUARANTEE=g3

setup() {
	requires_root
}

teardown() {
	teardown_profile
}

# $lines: N lines of /proc/PID/status, each a capability set, all empty.
assert_caps_empty() {
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq "$1" ]
	for l in "${lines[@]}"; do
		[[ "$l" =~ ^Cap(Inh|Prm|Eff|Bnd|Amb):[[:space:]]+0000000000000000$ ]]
	done
}

# The five sets of the process running the script, and of its children.
check_no_caps() {
	in_container 'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb):" /proc/self/status; sh -c "grep ^CapBnd: /proc/self/status"'
	assert_caps_empty 6
}

@test "G3 spec: all capability sets are empty" {
	prepare_bundle spec
	check_no_caps
}

@test "G3 docker.20 (privileged): all capability sets are empty" {
	prepare_bundle docker.20
	[ "$(jq '.process.capabilities.bounding | length' "$BUNDLE/config.json")" -gt 30 ]
	check_no_caps
}

@test "G3 permissive (all caps, ambient too): all capability sets are empty" {
	prepare_bundle permissive
	update_config '.process.capabilities.ambient = .process.capabilities.bounding'
	check_no_caps
}

@test "G3 permissive: root cannot do what needs CAP_CHOWN or CAP_DAC_OVERRIDE" {
	prepare_bundle permissive
	in_container 'cd /tmp && echo secret >f && chmod 000 f
		chown 1:1 f 2>&1 || true
		cat f 2>&1 || true'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "chown: f: Operation not permitted" ]
	[ "${lines[1]}" = "cat: can't open 'f': Permission denied" ]
}

@test "G3 exec: a process moat exec starts has no capabilities either" {
	prepare_bundle permissive
	start_sleeper
	moat exec "$CID" grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status
	assert_caps_empty 5
}

@test "G3 exec --process asking for every capability gets none" {
	prepare_bundle spec
	start_sleeper
	jq '.process | .args = ["grep", "-E", "^Cap(Inh|Prm|Eff|Bnd|Amb):", "/proc/self/status"]
		| .capabilities = (["CAP_SYS_ADMIN", "CAP_NET_ADMIN", "CAP_SYS_PTRACE", "CAP_DAC_OVERRIDE"] as $c
			| {bounding: $c, effective: $c, permitted: $c, inheritable: $c, ambient: $c})' \
		"$FIXTURES/permissive.config.json" >"$BUNDLE/process.json"
	moat exec --process "$BUNDLE/process.json" "$CID"
	assert_caps_empty 5
}
