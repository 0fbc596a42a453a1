#!/usr/bin/env bats
# G10: nothing reaches back out to the caller. The container's processes
# (the init and every moat exec) are in a session and process group of
# their own: the caller's terminal is not their controlling terminal (no
# /dev/tty to type into with TIOCSTI), and kill(0, ...) inside reaches only
# the container's group. TIOCSTI and TIOCLINUX are refused by the built-in
# filter even on the container's own pty, the high-bit form included.

load profile_helpers

GUARANTEE=g10t

setup() {
	requires_root
	command -v script >/dev/null || skip "needs script(1)"
	command -v setsid >/dev/null || skip "needs setsid(1)"
}

teardown() {
	teardown_profile
}

# Under script(1), so that moat has a pty for a controlling terminal as it
# has when typed at a shell: run MOAT_ARGS..., then read what a host shell
# would read next from that terminal. script's stdin stays open and silent
# for the time (EOF would end the read before any injected line). Sets
# $output and $lines without the pty's carriage returns.
under_terminal() {
	local cmd out="$BUNDLE/.term-out" q
	printf -v q '%q ' "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" "$@"
	cmd="$q; echo \"moat exited \$?\"; read -r -t 2 line && echo \"host read: \$line\"; echo host-done"
	status=0
	SHELL=/bin/bash timeout 60 script -qec "$cmd" /dev/null < <(sleep 5) >"$out" 2>&1 || status=$?
	output="$(tr -d '\r' <"$out")"
	mapfile -t lines <<<"$output"
	echo "under script: $* (status=$status):" >&2
	echo "$output" >&2
}

# Its session, process group and pid: "sid S pgrp G pid P" of sh itself.
SID_SCRIPT='set -- $(cat /proc/$$/stat); echo "sid $6 pgrp $5 pid $1"'

# The payload tries the caller's terminal: through /dev/tty, and through
# the fd 0 moat passed on (a pty whose session is the caller's).
INJECT_SCRIPT="$SID_SCRIPT"'; sysprobe tiocsti /dev/tty; sysprobe tiocsti -; sysprobe tiocsti-high -; echo payload-done'

check_no_injection() {
	[ "$status" -eq 0 ]
	has_line "sid 1 pgrp 1 pid 1"
	has_line "open(/dev/tty): No such device or address (errno 6)"
	has_line "ioctl(TIOCSTI): Operation not permitted (errno 1)"
	has_line "ioctl(TIOCSTI|1<<32): Operation not permitted (errno 1)"
	has_line payload-done
	has_line "moat exited 0"
	has_line host-done
	[[ "$output" != *"host read:"* ]]
}

@test "G10 spec: under a terminal, the payload cannot type into the caller's shell (TIOCSTI)" {
	prepare_bundle spec
	add_testbin sysprobe
	next_id
	update_config --arg c "$INJECT_SCRIPT" '.process.args = ["sh", "-c", $c]'
	under_terminal run -b "$BUNDLE" "$CID"
	check_no_injection
}

@test "G10 docker.19 (uid 1): under a terminal, no TIOCSTI into the caller's shell" {
	prepare_bundle docker.19
	add_testbin sysprobe
	next_id
	update_config --arg c "$INJECT_SCRIPT" '.process.args = ["sh", "-c", $c]'
	under_terminal run -b "$BUNDLE" "$CID"
	check_no_injection
}

@test "G10 permissive: under a terminal, no TIOCSTI into the caller's shell" {
	prepare_bundle permissive
	add_testbin sysprobe
	next_id
	update_config --arg c "$INJECT_SCRIPT" '.process.args = ["sh", "-c", $c]'
	under_terminal run -b "$BUNDLE" "$CID"
	check_no_injection
}

@test "G10 exec: under a terminal, a moat exec process cannot type into the caller's shell" {
	prepare_bundle permissive
	add_testbin sysprobe
	start_sleeper
	under_terminal exec "$CID" sh -c 'set -- $(cat /proc/$$/stat); [ "$6" = $$ ] && [ "$5" = $$ ] && echo own-session
		sysprobe tiocsti /dev/tty; sysprobe tiocsti -; sysprobe tiocsti-high -; echo payload-done'
	[ "$status" -eq 0 ]
	has_line own-session
	has_line "open(/dev/tty): No such device or address (errno 6)"
	has_line "ioctl(TIOCSTI): Operation not permitted (errno 1)"
	has_line "ioctl(TIOCSTI|1<<32): Operation not permitted (errno 1)"
	has_line payload-done
	has_line "moat exited 0"
	has_line host-done
	[[ "$output" != *"host read:"* ]]
}

# With process.terminal the container's own pty is the controlling
# terminal of its session (so /dev/tty opens): the filter alone refuses
# TIOCSTI there (the kernel would allow it), its high-bit form, and
# TIOCLINUX (a pty answers ENOTTY to it without the filter).
TTY_SCRIPT="$SID_SCRIPT"'; [ -t 0 ] && echo stdin-is-a-tty; sysprobe tiocsti /dev/tty; sysprobe tiocsti-high /dev/tty; sysprobe tioclinux /dev/tty; echo payload-done'

check_own_pty() {
	[ "$status" -eq 0 ]
	has_line stdin-is-a-tty
	has_line "ioctl(TIOCSTI): Operation not permitted (errno 1)"
	has_line "ioctl(TIOCSTI|1<<32): Operation not permitted (errno 1)"
	has_line "ioctl(TIOCLINUX): Operation not permitted (errno 1)"
	has_line payload-done
	has_line host-done
	[[ "$output" != *MOAT-INJECTED* ]]
}

@test "G10 terminal: true: the container's pty is its controlling terminal; TIOCSTI and TIOCLINUX get EPERM on it" {
	prepare_bundle spec
	add_testbin sysprobe
	next_id
	update_config --arg c "$TTY_SCRIPT" '.process.terminal = true | .process.args = ["sh", "-c", $c]'
	under_terminal run -b "$BUNDLE" "$CID"
	check_own_pty
	has_line "sid 1 pgrp 1 pid 1"
}

@test "G10 exec -t: the exec's pty is its controlling terminal; TIOCSTI and TIOCLINUX get EPERM on it" {
	prepare_bundle permissive
	add_testbin sysprobe
	start_sleeper
	under_terminal exec -t "$CID" sh -c "$TTY_SCRIPT"
	check_own_pty
	has_line "moat exited 0"
}

# The caller: a shell in a session of its own (setsid) with a sibling
# sleeping in its process group and a TERM trap; moat (run or exec)
# is started by it, in that group. The payload (PAYLOAD_KILL) sends TERM
# and then KILL to its process group. Nothing of the caller's may get
# either: the sibling lives, the trap does not fire, the shell goes on.
PAYLOAD_KILL="$SID_SCRIPT"'; kill -15 0; kill -9 0'

caller_group() {
	local q
	printf -v q '%q ' "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" "$@"
	status=0
	timeout 60 setsid -w bash -c '
		sleep 1000 &
		echo $! >"$1/sibling"
		echo "caller sid $(ps -o sid= $$) pgrp $(ps -o pgid= $$)"
		trap "echo host-trap-fired" TERM
		'"$q"'
		echo "moat exited $?"
		kill -0 "$(cat "$1/sibling")" && echo sibling-alive
		kill "$(cat "$1/sibling")"
		echo caller-alive' bash "$BUNDLE" >"$BUNDLE/.caller-out" 2>&1 </dev/null || status=$?
	output="$(cat "$BUNDLE/.caller-out")"
	mapfile -t lines <"$BUNDLE/.caller-out"
	echo "caller group: $* (status=$status):" >&2
	echo "$output" >&2
	# Whatever happened, no sleeper of ours is left.
	[ ! -s "$BUNDLE/sibling" ] || kill "$(cat "$BUNDLE/sibling")" 2>/dev/null || true
}

# The container's own fate does not matter here (an init, pid 1 of its
# namespace, ignores both signals from inside; an exec process dies of the
# TERM): moat lived to report it.
check_caller_untouched() {
	[ "$status" -eq 0 ]
	[[ "$output" =~ moat\ exited\ [0-9]+ ]]
	has_line sibling-alive
	has_line caller-alive
	[[ "$output" != *host-trap-fired* ]]
}

@test "G10 spec: kill(0, TERM/KILL) inside reaches nothing of the caller's process group" {
	prepare_bundle spec
	next_id
	update_config --arg c "$PAYLOAD_KILL" '.process.args = ["sh", "-c", $c]'
	caller_group run -b "$BUNDLE" "$CID"
	check_caller_untouched
	has_line "sid 1 pgrp 1 pid 1"
}

@test "G10 docker.20 (privileged): kill(0, TERM/KILL) inside reaches nothing of the caller's" {
	prepare_bundle docker.20
	next_id
	update_config --arg c "$PAYLOAD_KILL" '.process.args = ["sh", "-c", $c]'
	caller_group run -b "$BUNDLE" "$CID"
	check_caller_untouched
	has_line "sid 1 pgrp 1 pid 1"
}

@test "G10 permissive: kill(0, TERM/KILL) inside reaches nothing of the caller's" {
	prepare_bundle permissive
	next_id
	update_config --arg c "$PAYLOAD_KILL" '.process.args = ["sh", "-c", $c]'
	caller_group run -b "$BUNDLE" "$CID"
	check_caller_untouched
	has_line "sid 1 pgrp 1 pid 1"
}

@test "G10 exec: a moat exec process has its own session; its kill(0, ...) reaches neither the caller nor the init" {
	prepare_bundle permissive
	start_sleeper
	caller_group exec "$CID" sh -c 'set -- $(cat /proc/$$/stat); [ "$6" = $$ ] && [ "$5" = $$ ] && [ $$ != 1 ] && echo own-session
		kill -15 0; kill -9 0'
	check_caller_untouched
	has_line own-session
	moat state "$CID"
	[ "$(jq -r .status <<<"$output")" = running ]
}

# With a session of its own, an exec'd process no longer gets the caller's
# Ctrl-C with moat: moat exec passes the signals it gets on, as moat run does.
@test "G10 exec: moat exec passes a signal it gets on to the process" {
	prepare_bundle spec
	start_sleeper
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" exec "$CID" sh -c \
		'trap "echo got-TERM; exit 3" TERM; echo ready; sleep 100 & wait' \
		>"$BUNDLE/exec.out" 2>&1 </dev/null &
	local pid=$! i rc=0
	for i in $(seq 1 100); do
		grep -q ready "$BUNDLE/exec.out" && break
		sleep 0.05
	done
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	cat "$BUNDLE/exec.out" >&2
	[ "$rc" -eq 3 ]
	grep -qx got-TERM "$BUNDLE/exec.out"
}
