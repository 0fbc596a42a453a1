#!/usr/bin/env bats
# process.terminal: the pty reaches the engine through --console-socket
# (received here by tests/cmd/recvtty), and the payload has a terminal.

load helpers
load runtime_helpers

setup() {
	requires_root
	setup_bundle
	ID="t-$BATS_TEST_NUMBER-$$"
	SOCK="$BUNDLE/console.sock"
	RECVTTY_PID=""
	update_config '.process.terminal = true'
}

teardown() {
	teardown_bundle
	stop_recvtty
}

@test "create with --console-socket: tty is /dev/pts/0, stdin and stdout are terminals" {
	update_config '.process.args = ["sh", "-c", "tty; test -t 0 && echo stdin-tty; test -t 1 && echo stdout-tty; test -t 2 && echo stderr-tty"]'
	start_recvtty --mode capture "$BUNDLE/captured" --no-stdin
	moat create -b "$BUNDLE" --console-socket "$SOCK" "$ID"
	[ "$status" -eq 0 ]
	moat start "$ID"
	[ "$status" -eq 0 ]
	wait_recvtty
	wait_status "$ID" stopped
	mapfile -t got < <(tr -d '\r' <"$BUNDLE/captured")
	[ "${got[0]}" = /dev/pts/0 ]
	[ "${got[1]}" = stdin-tty ]
	[ "${got[2]}" = stdout-tty ]
	[ "${got[3]}" = stderr-tty ]
}

@test "consoleSize sets the terminal's rows and columns" {
	update_config '.process.consoleSize = {"height": 45, "width": 123} | .process.args = ["stty", "size"]'
	start_recvtty --mode capture "$BUNDLE/captured" --no-stdin
	moat run -d -b "$BUNDLE" --console-socket "$SOCK" "$ID"
	[ "$status" -eq 0 ]
	wait_recvtty
	[ "$(tr -d '\r' <"$BUNDLE/captured")" = "45 123" ]
}

@test "input typed at the console reaches the payload" {
	# Bounded: a lost input fails the test instead of hanging it.
	update_config '.process.args = ["sh", "-c", "read -t 20 line; echo \"got:$line\""]'
	echo "typed text" >"$BUNDLE/input"
	start_recvtty --mode single <"$BUNDLE/input" >"$BUNDLE/captured"
	moat run -d -b "$BUNDLE" --console-socket "$SOCK" "$ID"
	[ "$status" -eq 0 ]
	wait_recvtty
	grep -q "^got:typed text" <(tr -d '\r' <"$BUNDLE/captured")
}

@test "a non-root user owns its terminal and can reopen it" {
	update_config '.process.user = {"uid": 1000, "gid": 1000}
		| .process.args = ["sh", "-c", "stat -c %u $(tty); echo reopened >$(tty) && echo ok"]'
	start_recvtty --mode capture "$BUNDLE/captured" --no-stdin
	moat run -d -b "$BUNDLE" --console-socket "$SOCK" "$ID"
	[ "$status" -eq 0 ]
	wait_recvtty
	mapfile -t got < <(tr -d '\r' <"$BUNDLE/captured")
	[ "${got[0]}" = 1000 ]
	[ "${got[1]}" = reopened ]
	[ "${got[2]}" = ok ]
}

@test "run without --console-socket relays the terminal on moat's own stdio" {
	update_config '.process.args = ["sh", "-c", "tty; test -t 0 && echo stdin-tty"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | tr -d '\r' | xargs)" = "/dev/pts/0 stdin-tty" ]
	assert_nothing_left "$ID"
}

@test "process.terminal without --console-socket: create refuses, nothing left" {
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"process.terminal is set: --console-socket is required"* ]]
	assert_nothing_left "$ID"
}

@test "a console socket path that does not exist: a clear error, nothing left" {
	moat create -b "$BUNDLE" --console-socket "$BUNDLE/missing/console.sock" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"console socket $BUNDLE/missing/console.sock: No such file or directory"* ]]
	assert_nothing_left "$ID"
}

@test "a console socket path nobody listens on: a clear error, nothing left" {
	touch "$BUNDLE/not-a-socket"
	moat create -b "$BUNDLE" --console-socket "$BUNDLE/not-a-socket" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"console socket $BUNDLE/not-a-socket"* ]]
	assert_nothing_left "$ID"
}

@test "without process.terminal the payload has no terminal" {
	update_config '.process.terminal = false | .process.args = ["sh", "-c", "test -t 0 || echo no-tty; tty"]'
	moat run -b "$BUNDLE" "$ID"
	[ "${lines[0]}" = no-tty ]
	[ "${lines[1]}" = "not a tty" ]
}
