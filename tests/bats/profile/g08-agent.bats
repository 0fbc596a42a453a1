#!/usr/bin/env bats
# G8's agent level: the built-in filter cut down to the syscalls agent
# workloads make (tests/agent/trace.sh, traces in tests/agent/traces/).
# The workloads themselves pass under it, inside moat, with the host's /usr
# bound read-only (tests/agent/bundle.sh); a probe shows syscalls outside
# the list refused, where the default level lets them through. The level
# is moat sandbox's default, an annotation asks for it, the operator's
# config can make it every container's, and no annotation loosens it.

load profile_helpers

GUARANTEE=g08a

setup() {
	requires_root
	prepare_bundle spec
	add_testbin sysprobe
}

teardown() {
	teardown_profile
}

# Syscalls the default level allows and no traced workload made: old AIO,
# file handles, SysV message queues, POSIX message queues, secret memory,
# and others nobody's agent code calls.
# (x86_64 numbers: io_setup 206, name_to_handle_at 303, msgget 68,
# mq_open 240, memfd_secret 447, remap_file_pages 216, vmsplice 278,
# fanotify_mark 301.)
TIGHTENED="206 303 68 240 447 216 278 301"
# What G8 names: EPERM at both levels (sysprobe passes arguments the
# kernel would refuse past its permission checks). add_key 248, fsopen
# 430, open_tree 428, move_mount 429, pidfd_getfd 438, process_madvise
# 440, mbind 237, kcmp 312, finit_module 313, delete_module 176,
# kexec_file_load 320.
NAMED="248 430 428 429 438 440 237 312 313 176 320"

probe_script() {
	echo "for op in io_uring userfaultfd perf_event_open bpf keyctl ptrace kexec init_module; do sysprobe \$op; done
		for n in $NAMED $TIGHTENED; do sysprobe syscall \$n; done"
}

agent_workload() {
	local ab="$BUNDLE/agent-$1"
	mkdir -p "$ab"
	agent_bundle "$ab" "$MOAT" agent
	next_id
	update_config_in "$ab" --arg c "$(agent_command "$1")" '.process.args = ["sh", "-c", $c]'
	moat run -b "$ab" "$CID"
}

update_config_in() {
	local f="$1/config.json"
	shift
	jq "$@" "$f" >"$f.new" && mv "$f.new" "$f"
}

@test "G8 agent: syscalls outside the list are refused; the default level lets the tightened ones through" {
	update_config '.annotations["run.moat.seccomp"] = "agent"'
	in_container "$(probe_script)"
	local i=0 l
	for l in io_uring_setup userfaultfd perf_event_open bpf keyctl "ptrace(PTRACE_TRACEME)" kexec_load init_module; do
		[[ "${lines[$i]}" == "$l: Operation not permitted (errno 1)" ]]
		i=$((i + 1))
	done
	for n in $NAMED; do
		[ "${lines[$i]}" = "syscall($n): Operation not permitted (errno 1)" ]
		i=$((i + 1))
	done
	for n in $TIGHTENED; do
		[ "${lines[$i]}" = "syscall($n): Function not implemented (errno 38)" ]
		i=$((i + 1))
	done
	# The default level: the named ones still EPERM, the others reach the
	# kernel (which refuses their null arguments its own way).
	update_config 'del(.annotations["run.moat.seccomp"])'
	in_container "for n in $TIGHTENED; do sysprobe syscall \$n; done"
	for l in "${lines[@]}"; do
		[[ "$l" != *"(errno 38)" ]]
	done
	[ "${#lines[@]}" -eq 8 ]
}

@test "G8 agent: moat sandbox runs under it, OCI containers only when asked or by the operator, and no annotation loosens it" {
	moat sandbox --rootfs "$BUNDLE/rootfs" -- sysprobe syscall 206
	[ "$output" = "syscall(206): Function not implemented (errno 38)" ]
	update_config '.process.args = ["sleep", "1000"]'
	next_id
	moat run -d -b "$BUNDLE" "$CID"
	moat state "$CID"
	[ "$(jq -r '.annotations["run.moat.seccomp"]' <<<"$output")" = default ]
	moat exec "$CID" sysprobe syscall 206
	[[ "$output" != *"(errno 38)" ]]
	moat delete --force "$CID"
	# The operator's default; config.json asking the default level back is
	# ignored and told.
	printf '{"audit_log": "%s", "seccomp": "agent"}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
	update_config '.annotations["run.moat.seccomp"] = "default"'
	next_id
	moat run -d -b "$BUNDLE" "$CID"
	[[ "$warnings" == *"annotations.run.moat.seccomp: asked default"* ]]
	moat state "$CID"
	[ "$(jq -r '.annotations["run.moat.seccomp"]' <<<"$output")" = agent ]
	moat exec "$CID" sysprobe syscall 206
	[ "$output" = "syscall(206): Function not implemented (errno 38)" ]
	moat delete --force "$CID"
}

@test "G8 agent: profile show counts each level, the agent level at most 180" {
	moat profile show
	local d a
	d=$(jq .seccomp_levels.default <<<"$output")
	a=$(jq .seccomp_levels.agent <<<"$output")
	[ "$a" -le 180 ]
	[ "$a" -lt "$d" ]
}

@test "G8 agent: Python, Node.js, a C build, shell pipelines and pip pass under it" {
	# shellcheck source=../../agent/bundle.sh
	. "$REPO/tests/agent/bundle.sh"
	for w in python.py node.js build.sh shell.sh pip.sh; do
		agent_workload "$w"
		[ "$status" -eq 0 ]
		[ "${lines[-1]}" = "${w%%.*} ok" ]
	done
}

@test "G8 agent: part of CPython's test suite passes under it" {
	[ -d /usr/lib/python3.11/test/libregrtest ] || skip "libpython3.11-testsuite not installed"
	# shellcheck source=../../agent/bundle.sh
	. "$REPO/tests/agent/bundle.sh"
	agent_workload pytests.sh
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "pytests ok" ]
	[[ "$output" == *"Tests result: SUCCESS"* ]]
}
