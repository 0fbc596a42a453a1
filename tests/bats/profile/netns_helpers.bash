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

# The topology of issue 20: a network namespace made before create and
# joined by path (never moved or touched by moat), a veth to a far side
# whose lo holds the addresses JOINED_FAR, each with a listener on the
# ports JOINED_PORTS (default 80, 443 and 8080), and the default route via
# the far end; config.json joins it. $1: the container end's
# address/prefix; $2: the far end's. Sets JOINED_NS and FAR_NS.
make_joined_topology() {
	local a p ports=(80 443 8080)
	[ -z "${JOINED_PORTS[*]:-}" ] || ports=("${JOINED_PORTS[@]}")
	make_netns far
	FAR_NS="$NS"
	make_netns joined
	JOINED_NS="$NS"
	# Created inside the namespaces: the names never meet the host's.
	ip -n "$JOINED_NS" link add c0 type veth peer name p0 netns "$FAR_NS"
	ip -n "$JOINED_NS" addr add "$1" dev c0
	ip -n "$JOINED_NS" link set c0 up
	ip -n "$JOINED_NS" route add default via "${2%/*}"
	ip -n "$FAR_NS" addr add "$2" dev p0
	ip -n "$FAR_NS" link set p0 up
	for a in "${JOINED_FAR[@]}"; do
		ip -n "$FAR_NS" addr add "$a/32" dev lo
	done
	for p in "${ports[@]}"; do
		listen_in "$FAR_NS" "$p"
	done
	update_config --arg p "/run/netns/$JOINED_NS" \
		'.linux.namespaces = [.linux.namespaces[] | if .type == "network" then .path = $p else . end]'
}
