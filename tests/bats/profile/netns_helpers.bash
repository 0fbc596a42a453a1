# shellcheck shell=bash
# Network namespaces, veths and listeners of a test's own, for the G1/G2
# tests: every name carries the bats pid and test number (other test runs
# share the machine), listeners are killed by pid, nothing leaves it.

setup_netns() {
	LISTENERS="$BATS_TEST_TMPDIR/listeners"
	: >"$LISTENERS"
	NETNS_CREATED=()
}

teardown_netns() {
	local pid ns
	# Our listeners only, by pid.
	while read -r pid; do
		kill "$pid" 2>/dev/null || true
	done <"$LISTENERS"
	teardown_profile
	for ns in "${NETNS_CREATED[@]}"; do
		ip netns del "$ns" 2>/dev/null || true
	done
	[ -z "${VETH_HOST:-}" ] || ip link del "$VETH_HOST" 2>/dev/null || true
}

# A network namespace of our own, named in $NS (and kept for teardown).
make_netns() {
	NS="moat-$GUARANTEE-$$-$BATS_TEST_NUMBER-$1"
	ip netns add "$NS"
	NETNS_CREATED+=("$NS")
	ip -n "$NS" link set lo up
}

# Wait (bounded) until something listens on TCP port $2 in the network
# namespace of netns name $1, or of pid $1.
wait_listen() {
	local where=(ip netns exec "$1") hex
	[[ "$1" =~ ^[0-9]+$ ]] && where=(nsenter -t "$1" -n)
	hex=$(printf '%04X' "$2")
	for _ in $(seq 1 100); do
		"${where[@]}" cat /proc/net/tcp /proc/net/tcp6 |
			awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" { f = 1 } END { exit !f }' && return 0
		sleep 0.05
	done
	echo "nothing listens on port $2 in the network namespace of $1" >&2
	return 1
}

# A TCP listener in netns $1 on port $2 (every address), accepting any
# number of connections.
listen_in() {
	ip netns exec "$1" "$BUSYBOX" nc -ll -p "$2" -e /bin/true </dev/null >/dev/null 2>&1 &
	echo $! >>"$LISTENERS"
	wait_listen "$1" "$2"
}
