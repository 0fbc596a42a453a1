#!/usr/bin/env bats
# linux.seccomp from config.json: its actions, errno values and argument
# conditions, as the payload sees them, with the built-in filter stacked on
# top (G8).

load helpers

setup() {
	requires_root
	setup_bundle
	add_testbin sysprobe
	ID="t-$BATS_TEST_NUMBER-$$"
}

teardown() {
	teardown_bundle
	if [ -n "${AGENT_PID:-}" ]; then kill "$AGENT_PID" 2>/dev/null || true; fi
}

# A config filter that allows everything but the rules given as JSON.
seccomp_allow_but() {
	update_config --argjson rules "$1" '.linux.seccomp = {
		"defaultAction": "SCMP_ACT_ALLOW",
		"architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
		"syscalls": $rules}'
}

@test "a denied syscall returns the configured errno: mkdir with EPERM" {
	seccomp_allow_but '[{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]'
	run_in_container 'mkdir /tmp/x; touch /tmp/y && echo touched; ls /tmp'
	[ "${lines[0]}" = "mkdir: can't create directory '/tmp/x': Operation not permitted" ]
	[ "${lines[1]}" = touched ]
	[ "${lines[2]}" = y ]
	[ "${#lines[@]}" -eq 3 ]
}

@test "errnoRet other than EPERM is returned as is; absent, it is EPERM" {
	seccomp_allow_but '[{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 28},
		{"names": ["rmdir", "unlinkat"], "action": "SCMP_ACT_ERRNO"}]'
	run_in_container 'mkdir /tmp/x; rmdir /var/tmp'
	[ "${lines[0]}" = "mkdir: can't create directory '/tmp/x': No space left on device" ]
	[[ "${lines[1]}" == *"Operation not permitted" ]]
}

@test "defaultErrnoRet: syscalls off an allowlist get the configured errno" {
	# Docker's default profile, as dockerd wrote it, without mkdir.
	profile=$(jq '.linux.seccomp' "$FIXTURES/docker.01.docker-run-rm-network-none-attached.config.json")
	update_config --argjson p "$profile" '.linux.seccomp = ($p
		| .defaultErrnoRet = 13
		| .syscalls |= map(.names -= ["mkdir", "mkdirat"]))'
	run_in_container 'mkdir /tmp/x; echo still-running'
	[ "${lines[0]}" = "mkdir: can't create directory '/tmp/x': Permission denied" ]
	[ "${lines[1]}" = still-running ]
}

@test "an engine's default profile alone runs a shell fine (podman's, ENOSYS by default)" {
	profile=$(jq '.linux.seccomp' "$FIXTURES/podman.01.podman-run-rm-network-none.config.json")
	update_config --argjson p "$profile" '.linux.seccomp = $p'
	run_in_container 'mkdir /tmp/x && ls -d /tmp/x && echo ok'
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = ok ]
}

@test "argument conditions: personality denied only for the value named (SCMP_CMP_EQ)" {
	seccomp_allow_but '[{"names": ["personality"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
		"args": [{"index": 0, "value": 8, "op": "SCMP_CMP_EQ"}]}]'
	run_in_container 'sysprobe personality 8; sysprobe personality 0'
	[[ "${lines[0]}" == *"Operation not permitted (errno 1)" ]]
	[ "${lines[1]}" = ok ]
}

@test "argument conditions on two arguments must both hold (socket AF_INET, SOCK_STREAM)" {
	# SCMP_CMP_MASKED_EQ: the type argument carries SOCK_CLOEXEC and the like.
	seccomp_allow_but '[{"names": ["socket"], "action": "SCMP_ACT_ERRNO", "errnoRet": 97,
		"args": [{"index": 0, "value": 2, "op": "SCMP_CMP_EQ"},
		         {"index": 1, "value": 15, "valueTwo": 1, "op": "SCMP_CMP_MASKED_EQ"}]}]'
	run_in_container 'sysprobe socket inet stream; sysprobe socket inet dgram; sysprobe socket unix stream'
	[[ "${lines[0]}" == *"Address family not supported by protocol (errno 97)" ]]
	[ "${lines[1]}" = ok ]
	[ "${lines[2]}" = ok ]
}

@test "argument conditions: SCMP_CMP_NE and SCMP_CMP_GT" {
	seccomp_allow_but '[{"names": ["personality"], "action": "SCMP_ACT_ERRNO", "errnoRet": 22,
		"args": [{"index": 0, "value": 0, "op": "SCMP_CMP_NE"}]},
		{"names": ["socket"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13,
		"args": [{"index": 0, "value": 2, "op": "SCMP_CMP_GT"}]}]'
	run_in_container 'sysprobe personality 8; sysprobe personality 0; sysprobe socket inet6; sysprobe socket inet; sysprobe socket unix'
	[[ "${lines[0]}" == *"(errno 22)" ]]
	[ "${lines[1]}" = ok ]
	[[ "${lines[2]}" == *"Permission denied (errno 13)" ]]
	[ "${lines[3]}" = ok ]
	[ "${lines[4]}" = ok ]
}

@test "SCMP_ACT_KILL kills the process with SIGSYS; run exits 128+31" {
	seccomp_allow_but '[{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_KILL"}]'
	update_config '.process.args = ["mkdir", "/tmp/x"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -eq $((128 + 31)) ]
	assert_nothing_left "$ID"
}

@test "SCMP_ACT_KILL_PROCESS on a child: the shell sees it die of SIGSYS" {
	seccomp_allow_but '[{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_KILL_PROCESS"}]'
	run_in_container 'mkdir /tmp/x; echo "status $?"'
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "status $((128 + 31))" ]
}

@test "the built-in filter still applies on top: config.json allowing unshare and bpf changes nothing" {
	seccomp_allow_but '[{"names": ["unshare", "bpf", "keyctl", "mount"], "action": "SCMP_ACT_ALLOW"}]'
	run_in_container 'grep -E "^Seccomp(_filters)?:" /proc/self/status | cut -f 2; sysprobe unshare user; sysprobe bpf; sysprobe keyctl; sysprobe mount'
	[ "${lines[0]}" = 2 ]
	[ "${lines[1]}" = 2 ]
	for i in 2 3 4 5; do
		[[ "${lines[$i]}" == *"Operation not permitted (errno 1)" ]]
	done
}

@test "without linux.seccomp only the built-in filter is loaded" {
	update_config 'del(.linux.seccomp)'
	run_in_container 'grep -E "^Seccomp(_filters)?:" /proc/self/status | cut -f 2; sysprobe unshare net'
	[ "${lines[0]}" = 2 ]
	[ "${lines[1]}" = 1 ]
	[[ "${lines[2]}" == *"Operation not permitted (errno 1)" ]]
}

@test "syscall names this libseccomp does not know are skipped" {
	seccomp_allow_but '[{"names": ["no_such_syscall_in_any_kernel", "mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]'
	run_in_container 'mkdir /tmp/x'
	[[ "$output" == *"Operation not permitted" ]]
}

@test "an unknown action or operator is a clear error, nothing left" {
	seccomp_allow_but '[{"names": ["mkdir"], "action": "SCMP_ACT_BOGUS"}]'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"SCMP_ACT_BOGUS"* ]]
	assert_nothing_left "$ID"

	seccomp_allow_but '[{"names": ["personality"], "action": "SCMP_ACT_ERRNO", "args": [{"index": 0, "value": 8, "op": "SCMP_CMP_BOGUS"}]}]'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"SCMP_CMP_BOGUS"* ]]
	assert_nothing_left "$ID"
}

@test "an exec'd process gets config.json's filter too" {
	seccomp_allow_but '[{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]'
	update_config '.process.args = ["sleep", "100"]'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	moat exec "$ID" sh -c 'mkdir /tmp/x; grep ^Seccomp_filters: /proc/self/status | cut -f 2'
	[ "${lines[0]}" = "mkdir: can't create directory '/tmp/x': Operation not permitted" ]
	[ "${lines[1]}" = 2 ]
}

# A config filter sending mkdir (and unshare, which the built-in filter
# refuses) to a seccomp agent at $BUNDLE/agent.sock; the agent answers EXDEV.
seccomp_with_agent() {
	seccomp_allow_but '[{"names": ["mkdir", "mkdirat", "unshare"], "action": "SCMP_ACT_NOTIFY"}]'
	update_config --arg p "$BUNDLE/agent.sock" '.linux.seccomp.listenerPath = $p | .linux.seccomp.listenerMetadata = "agent-meta"'
}

start_agent() {
	"$TESTBIN/seccompagent" "$BUNDLE/agent.sock" "$BUNDLE/agent.out" 18 &
	AGENT_PID=$!
	for _ in $(seq 1 100); do
		[ -S "$BUNDLE/agent.sock" ] && return 0
		sleep 0.05
	done
	return 1
}

@test "SCMP_ACT_NOTIFY: the agent the operator lists gets the listener and the state, and answers the container's syscalls" {
	seccomp_with_agent
	printf '{"audit_log": "%s", "seccomp_agents": ["%s"]}\n' "$AUDIT_LOG" "$BUNDLE/agent.sock" >"$MOAT_CONFIG"
	start_agent
	run_in_container 'mkdir /tmp/d; ls -d /tmp/d; sysprobe unshare net; echo done'
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *"/tmp/d"*"Invalid cross-device link" ]]
	[[ "${lines[1]}" == *"/tmp/d: No such file or directory" ]]
	# Stacked above the engine's filter, moat's EPERM wins: the agent never
	# hears of unshare.
	[[ "${lines[2]}" == *"Operation not permitted"* ]]
	[ "${lines[3]}" = done ]
	wait "$AGENT_PID"
	jq -e --arg id "$(jq -r .state.id "$BUNDLE/agent.out")" '.fds == ["seccompFd"] and .metadata == "agent-meta" and .state.status == "creating" and .pid == .state.pid and .pid > 0' "$BUNDLE/agent.out"
	[ "$(jq -r .state.bundle "$BUNDLE/agent.out")" = "$BUNDLE" ]
	# mkdir (83) or mkdirat (258) on x86_64, never unshare (272).
	grep -qxE '83|258' "$BUNDLE/agent.out.log"
	! grep -qx 272 "$BUNDLE/agent.out.log"
}

@test "SCMP_ACT_NOTIFY: a listenerPath the operator config does not list is refused, nothing left, no connection" {
	seccomp_with_agent
	start_agent
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "moat: create $ID: linux.seccomp.listenerPath $BUNDLE/agent.sock: not a seccomp agent the operator config lists (seccomp_agents): moat will not hand a container's seccomp listener to a host socket that config.json names" ]
	assert_nothing_left "$ID"
	[ ! -e "$BUNDLE/agent.out" ]
	# Listed, but nobody listens: a clear error, nothing left.
	printf '{"audit_log": "%s", "seccomp_agents": ["%s"]}\n' "$AUDIT_LOG" "$BUNDLE/none.sock" >"$MOAT_CONFIG"
	update_config --arg p "$BUNDLE/none.sock" '.linux.seccomp.listenerPath = $p'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "moat: create $ID: connecting to the seccomp agent at $BUNDLE/none.sock: No such file or directory" ]
	assert_nothing_left "$ID"
	# Without a listenerPath, SCMP_ACT_NOTIFY is an error too.
	seccomp_allow_but '[{"names": ["mkdir"], "action": "SCMP_ACT_NOTIFY"}]'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"linux.seccomp.syscalls[0].action: SCMP_ACT_NOTIFY needs linux.seccomp.listenerPath"* ]]
	assert_nothing_left "$ID"
}

@test "SCMP_ACT_NOTIFY: an exec'd process gets the filter without an agent (ENOSYS); features lists the action" {
	seccomp_with_agent
	printf '{"audit_log": "%s", "seccomp_agents": ["%s"]}\n' "$AUDIT_LOG" "$BUNDLE/agent.sock" >"$MOAT_CONFIG"
	update_config '.process.args = ["sleep", "100"]'
	start_agent
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	moat exec "$ID" mkdir /tmp/e
	[ "$status" -ne 0 ]
	[[ "$output" == *"/tmp/e"*"Function not implemented" ]]
	moat delete --force "$ID"
	wait "$AGENT_PID"
	moat features
	jq -e '.linux.seccomp.actions | index("SCMP_ACT_NOTIFY")' <<<"$output"
	jq -e '.linux.seccomp.supportedFlags | index("SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV")' <<<"$output"
	jq -e '.annotations["run.moat.seccomp-notify"] | startswith("only for the agents the operator config lists")' <<<"$output"
}
