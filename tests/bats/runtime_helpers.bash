# shellcheck shell=bash
# Helpers shared by the runtime's bats files (load after helpers).

# The host pid of container $1's init.
container_pid() {
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" state "$1" | jq -r .pid
}

# recvtty (tests/cmd) listening on $SOCK, arguments before the socket path
# passed on (--mode ...); returns once it accepts connections. Its stdin is
# the caller's (`start_recvtty --mode single <input`): said explicitly, as
# bash gives a background job /dev/null otherwise.
start_recvtty() {
	"$TESTBIN/recvtty" "$@" "$SOCK" <&0 &
	RECVTTY_PID=$!
	for _ in $(seq 1 100); do
		[ -S "$SOCK" ] && return 0
		sleep 0.02
	done
	echo "recvtty did not listen on $SOCK" >&2
	return 1
}

# recvtty exits once the container side of the pty hangs up.
wait_recvtty() {
	wait "$RECVTTY_PID"
	RECVTTY_PID=""
}

# For teardown: a recvtty a failed test left waiting.
stop_recvtty() {
	[ -z "${RECVTTY_PID:-}" ] || kill "$RECVTTY_PID" 2>/dev/null || true
	RECVTTY_PID=""
}
