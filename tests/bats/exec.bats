#!/usr/bin/env bats
# moat exec: a command line or an engine's process.json, in the running
# container's namespaces and cgroup, under the same profile as its init.

load helpers
load runtime_helpers

setup() {
	requires_root
	setup_bundle
	ID="t-$BATS_TEST_NUMBER-$$"
	SOCK="$BUNDLE/console.sock"
	RECVTTY_PID=""
	update_config '.process.args = ["sleep", "100"]'
}

teardown() {
	teardown_bundle
	stop_recvtty
}

run_detached() {
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
}

# An engine's process.json with a short command instead of its own.
fixture_process() {
	jq --argjson a "$2" '.args = $a' "$FIXTURES/$1" >"$BUNDLE/process.json"
}

@test "exec ID CMD runs CMD in the container and returns its output" {
	run_detached
	moat exec "$ID" sh -c 'hostname; echo "$0 $1"' one two
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = moat ]
	[ "${lines[1]}" = "one two" ]
}

@test "the exit status of the exec'd process propagates" {
	run_detached
	moat exec "$ID" sh -c 'exit 42'
	[ "$status" -eq 42 ]
	moat exec "$ID" sh -c 'kill -TERM $$'
	[ "$status" -eq $((128 + 15)) ]
	moat exec "$ID" true
	[ "$status" -eq 0 ]
}

@test "--process FILE: each engine's non-tty process.json runs" {
	run_detached
	for f in docker.03.docker-exec.process.json ctr.03.ctr-task-exec.process.json podman.03.podman-exec.process.json; do
		fixture_process "$f" '["sh", "-c", "echo exec-hi; ulimit -n"]'
		moat exec --process "$BUNDLE/process.json" "$ID"
		[ "$status" -eq 0 ]
		[ "${lines[0]}" = exec-hi ]
		# podman asks for 20000 open files: the profile's cap holds.
		[ "${lines[1]}" -le 1024 ]
	done
}

@test "--process FILE: docker exec -u 1:1 -w /tmp -e X=1 gets its user, cwd and env" {
	run_detached
	fixture_process docker.05.docker-exec-u-1-1-w-tmp-e-X-1.process.json \
		'["sh", "-c", "id -u; id -g; id -G; pwd; echo X=$X"]'
	moat exec --process "$BUNDLE/process.json" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" = 1 ]
	[ "${lines[2]}" = 1 ]
	[ "${lines[3]}" = /tmp ]
	[ "${lines[4]}" = X=1 ]
}

@test "--process FILE with a terminal, as engines call it: --console-socket --detach --pid-file" {
	run_detached
	for f in docker.04.docker-exec-it-tty.process.json ctr.04.ctr-task-exec-t-tty.process.json podman.04.podman-exec-it-tty.process.json; do
		fixture_process "$f" '["sh", "-c", "tty; test -t 0 && echo stdin-tty"]'
		start_recvtty --mode capture "$BUNDLE/captured" --no-stdin
		moat exec --process "$BUNDLE/process.json" --console-socket "$SOCK" --detach --pid-file "$BUNDLE/exec.pid" "$ID"
		[ "$status" -eq 0 ]
		[[ "$(cat "$BUNDLE/exec.pid")" =~ ^[0-9]+$ ]]
		wait_recvtty
		mapfile -t got < <(tr -d '\r' <"$BUNDLE/captured")
		[[ "${got[0]}" == /dev/pts/[0-9]* ]]
		[ "${got[1]}" = stdin-tty ]
	done
}

@test "--env, --cwd and --user; credential-looking --env names are dropped" {
	run_detached
	moat exec --env FOO=bar --env GITHUB_TOKEN=ghp_x --cwd /tmp --user 1000:1001 "$ID" \
		sh -c 'echo "FOO=$FOO"; echo "TOKEN=$GITHUB_TOKEN"; pwd; id -u; id -g'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = FOO=bar ]
	[ "${lines[1]}" = TOKEN= ]
	[ "${lines[2]}" = /tmp ]
	[ "${lines[3]}" = 1000 ]
	[ "${lines[4]}" = 1001 ]
}

@test "the exec'd process inherits the init's env and cwd without flags" {
	update_config '.process.env = ["PATH=/bin", "FROM_CONFIG=yes"] | .process.cwd = "/var/tmp"'
	run_detached
	moat exec "$ID" sh -c 'echo $FROM_CONFIG; pwd'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = yes ]
	[ "${lines[1]}" = /var/tmp ]
}

@test "--tty with --console-socket, attached: the exit status comes back" {
	run_detached
	start_recvtty --mode capture "$BUNDLE/captured" --no-stdin
	moat exec --tty --console-socket "$SOCK" "$ID" sh -c 'tty; exit 3'
	[ "$status" -eq 3 ]
	wait_recvtty
	[[ "$(tr -d '\r' <"$BUNDLE/captured")" == /dev/pts/[0-9]* ]]
}

@test "--detach --pid-file: exec returns at once, the process runs in the container's cgroup" {
	run_detached
	moat exec --detach --pid-file "$BUNDLE/exec.pid" "$ID" sleep 100
	[ "$status" -eq 0 ]
	pid=$(cat "$BUNDLE/exec.pid")
	kill -0 "$pid"
	grep -q sleep "/proc/$pid/cmdline"
	# The same cgroup as the init, in every hierarchy.
	[ "$(cat "/proc/$pid/cgroup")" = "$(cat "/proc/$(container_pid "$ID")/cgroup")" ]
	grep -q ":/moat/$ID\$" "/proc/$pid/cgroup"
	for ns in pid net mnt ipc uts cgroup user; do
		[ "$(readlink "/proc/$pid/ns/$ns")" = "$(readlink "/proc/$(container_pid "$ID")/ns/$ns")" ]
	done
}

@test "the exec'd process: no capabilities, no_new_privs, both seccomp filters" {
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
		{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
	run_detached
	fixture_process docker.03.docker-exec.process.json '["cat", "/proc/self/status"]'
	for how in cmdline process; do
		if [ $how = cmdline ]; then
			moat exec "$ID" cat /proc/self/status
		else
			moat exec --process "$BUNDLE/process.json" "$ID"
		fi
		[ "$status" -eq 0 ]
		for set in CapInh CapPrm CapEff CapBnd CapAmb; do
			echo "$output" | grep -Eq "^$set:\s+0000000000000000$"
		done
		echo "$output" | grep -Eq '^NoNewPrivs:\s+1$'
		echo "$output" | grep -Eq '^Seccomp:\s+2$'
		echo "$output" | grep -Eq '^Seccomp_filters:\s+2$'
	done
	moat exec "$ID" mkdir /tmp/x
	[ "$status" -ne 0 ]
	[[ "$output" == *"Operation not permitted"* ]]
}

@test "the exec'd process is in the init's pid, net, mnt, ipc, uts and cgroup namespaces" {
	run_detached
	# Compared from the host: under G14 (Landlock) the exec'd process has
	# a Landlock domain of its own, which may not look into the init's
	# (/proc/1/ns is a ptrace-mode read).
	moat exec --detach --pid-file "$BUNDLE/exec.pid" "$ID" sleep 100
	[ "$status" -eq 0 ]
	local same=0 n
	for n in pid net mnt ipc uts cgroup; do
		[ "$(readlink "/proc/$(cat "$BUNDLE/exec.pid")/ns/$n")" = "$(readlink "/proc/$(container_pid "$ID")/ns/$n")" ] && same=$((same + 1))
	done
	[ "$same" -eq 6 ]
	moat exec "$ID" cat /proc/self/cgroup
	[ "$status" -eq 0 ]
	# In the cgroup namespace rooted at the container's cgroup.
	! echo "$output" | grep -E '^[0-9]+:' | grep -vq ':/$'
	# And pid 1 is the init, not the exec'd process.
	moat exec "$ID" cat /proc/1/cmdline
	[[ "$output" == sleep* ]]
}

@test "the exec'd process gets no fd of moat's" {
	run_detached
	moat exec "$ID" ls /proc/self/fd
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | xargs)" = "0 1 2 3" ]
}

@test "exec into a user-namespaced container runs as the mapped root" {
	chmod 755 "$BUNDLE"
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	run_detached
	moat exec --detach --pid-file "$BUNDLE/exec.pid" "$ID" sleep 100
	[ "$status" -eq 0 ]
	grep -Eq '^Uid:\s+100000\s' "/proc/$(cat "$BUNDLE/exec.pid")/status"
	moat exec "$ID" id -u
	[ "$output" = 0 ]
}

@test "exec into a stopped container fails with a clear error" {
	update_config '.process.args = ["true"]'
	moat create -b "$BUNDLE" "$ID"
	moat start "$ID"
	wait_status "$ID" stopped
	moat exec "$ID" true
	[ "$status" -ne 0 ]
	[[ "$output" == *"cannot exec in a stopped container"* ]]
}

@test "exec into a container that does not exist" {
	moat exec "nope-$$" true
	[ "$status" -ne 0 ]
	[[ "$output" == *"container \"nope-$$\" does not exist"* ]]
}

@test "the audit line of an exec carries its command and exit status" {
	run_detached
	moat exec "$ID" sh -c 'exit 3'
	[ "$status" -eq 3 ]
	tail -n 1 "$AUDIT_LOG" | jq -e '.verb == "exec" and .command == "sh" and .exit_status == 3'
}


@test "exec: a child that loses moat before its parent-death signal is set exits, its command never runs" {
	run_detached
	# pdeathrace SIGKILLs moat the instant the child asks for its
	# parent-death signal (held there by ptrace), then lets it go on: the
	# signal can no longer come, the child must see moat gone by itself.
	run "$TESTBIN/pdeathrace" "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" \
		exec "$ID" sh -c 'echo ran >/tmp/ran'
	echo "$output" >&2
	[ "$status" -ne 77 ] || skip "ptrace is not permitted here"
	[ "$status" -eq 0 ]
	[ "$output" = "child exited 1" ]
	moat exec "$ID" sh -c 'test -e /tmp/ran && echo ran || echo never'
	[ "$output" = never ]
}
@test "exec of a relative command with a slash runs it from --cwd" {
	run_detached
	moat exec --cwd /bin "$ID" ./echo from-bin
	[ "$status" -eq 0 ]
	[ "$output" = from-bin ]
	moat exec --cwd /tmp "$ID" ./echo
	[ "$status" -ne 0 ]
	[[ "$output" == *'stat ./echo: no such file or directory'* ]]
}

@test "exec of a missing program, a relative or missing cwd: clear errors" {
	run_detached
	moat exec "$ID" no-such-program
	[ "$status" -ne 0 ]
	[[ "$output" == *'exec: "no-such-program": executable file not found in $PATH'* ]]
	moat exec --cwd relative "$ID" true
	[ "$status" -ne 0 ]
	[[ "$output" == *"cwd must be an absolute path"* ]]
	moat exec --cwd /no/such/dir "$ID" true
	[ "$status" -ne 0 ]
	[[ "$output" == *"/no/such/dir"* ]]
	# The container is unharmed.
	moat state "$ID"
	[ "$(echo "$output" | jq -r .status)" = running ]
}

@test "--tty --detach without a console socket is refused" {
	run_detached
	moat exec --tty --detach "$ID" true
	[ "$status" -ne 0 ]
	[[ "$output" == *"--console-socket"* ]]
}

@test "exec --cap, --apparmor, --process-label: ignored and told on stderr; the process gets no such capability" {
	run_detached
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" exec --cap CAP_SYS_ADMIN --apparmor unconfined \
		--process-label x "$ID" sh -c 'mkdir -p /tmp/m && mount -t tmpfs none /tmp/m && echo mounted' \
		>"$BUNDLE/out" 2>"$BUNDLE/err" || true
	cat "$BUNDLE/err" >&2
	! grep -q mounted "$BUNDLE/out"
	grep -qxF "moat: exec: warning: --cap CAP_SYS_ADMIN ignored (the profile decides a process's capabilities)" "$BUNDLE/err"
	grep -qxF "moat: exec: warning: --apparmor unconfined ignored (moat sets no AppArmor profile)" "$BUNDLE/err"
	grep -qxF "moat: exec: warning: --process-label x ignored (give it as selinuxLabel in --process)" "$BUNDLE/err"
}
