#!/usr/bin/env bats
# G1 under `egress` (SPEC.md, the paragraph on profiles) and G2: an agent's
# SSRF defense. A test host in a network namespace of the test's own holds
# a public-looking address (198.51.100.7, 2001:db8:ffff::7), a private one
# ($NET.1), a nameserver on a private address ($NET.53, named in the
# container's resolv.conf), the metadata addresses and IPv6 forms that
# embed denied IPv4 addresses, with listeners (reached by TCP connect,
# TCP Fast Open, UDP sendto and sendmsg): under egress the public ones
# and the nameserver's port 53 answer and every other one is refused with
# EPERM at once; under an allowlist only the listed address:port connects;
# under strict nothing does. Nothing leaves the machine.

load profile_helpers
load netns_helpers

GUARANTEE=g1e

setup() {
	requires_root
	command -v ip >/dev/null || skip "needs ip (iproute2)"
	NET="10.251.$(($$ % 250))"
	setup_netns
}

teardown() {
	teardown_netns
}

# The test host: netns $NS with listeners on TCP 8080 and 53 (every
# address) and its addresses; the container's resolv.conf (an engine-style
# bind) names $NET.53.
make_test_host() {
	make_netns host
	HOST_NS="$NS"
	ip netns exec "$HOST_NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 2>/dev/null || true
	listen_in "$HOST_NS" 8080
	listen_in "$HOST_NS" 53
	echo "nameserver $NET.53" >"$BUNDLE/resolv.conf"
	update_config --arg s "$BUNDLE/resolv.conf" \
		'.mounts += [{"destination": "/etc/resolv.conf", "type": "bind", "source": $s, "options": ["rbind", "ro"]}]'
}

# A veth between the container's network namespace and the test host:
# $1 is the created container's pid (an engine's network set up between
# create and start), or netns:NAME (a namespace made before create and
# joined by path). With BRIDGE=1 the host end is a port of a bridge that
# holds the host's addresses, as Docker's docker0 does.
wire_container() {
	local target="$1" cont="m1ec$BATS_TEST_NUMBER-$$" host="m1eh$BATS_TEST_NUMBER-$$" a
	local in_cont=(nsenter -t "$target" -n) dev="$host"
	if [[ "$target" == netns:* ]]; then
		target="${target#netns:}"
		in_cont=(ip netns exec "$target")
	fi
	VETH_HOST="$host"
	ip link add "$host" type veth peer name "$cont"
	ip link set "$cont" netns "$target"
	ip link set "$host" netns "$HOST_NS"
	VETH_HOST=""
	"${in_cont[@]}" ip addr add "$NET.2/24" dev "$cont"
	"${in_cont[@]}" ip addr add 2001:db8:1::2/64 dev "$cont" nodad
	"${in_cont[@]}" ip link set "$cont" up
	"${in_cont[@]}" ip route add default via "$NET.1"
	"${in_cont[@]}" ip -6 route add default via 2001:db8:1::1 dev "$cont"
	if [ "${BRIDGE:-0}" = 1 ]; then
		dev=br0
		ip -n "$HOST_NS" link add br0 type bridge
		ip -n "$HOST_NS" link set "$host" master br0
		ip -n "$HOST_NS" link set "$host" up
	fi
	ip -n "$HOST_NS" addr add "$NET.1/24" dev "$dev"
	for a in "$NET.53" 198.51.100.7 169.254.169.254 100.100.100.200 168.63.129.16 10.10.10.10; do
		ip -n "$HOST_NS" addr add "$a/32" dev "$dev"
	done
	ip -n "$HOST_NS" addr add 2001:db8:1::1/64 dev "$dev" nodad
	for a in 2001:db8:ffff::7 fd00:ec2::254 64:ff9b::a9fe:a9fe 2002:a9fe:a9fe::1 \
		64:ff9b::a0a:a0a 2002:a0a:a0a::1 ::a9fe:a9fe fd12::7; do
		ip -n "$HOST_NS" addr add "$a/128" dev "$dev" nodad
	done
	ip -n "$HOST_NS" link set "$dev" up
}

EPERM="Operation not permitted (errno 1)"

# probe|expected under egress. "ok" or "E" (EPERM at connect/sendto).
PROBES=(
	"connect 198.51.100.7 8080|ok"
	"connect6 2001:db8:ffff::7 8080|ok"
	"connect NS 53|ok"
	"sendto NS 53|ok"
	"connect NS 8080|E"
	"sendto NS 5353|E"
	"connect PRIV 8080|E"
	"connect 10.10.10.10 8080|E"
	"connect 169.254.169.254 8080|E"
	"connect 100.100.100.200 8080|E"
	"connect 168.63.129.16 8080|E"
	"sendto 224.0.0.251 5353|E"
	"connect6 fd00:ec2::254 8080|E"
	"connect6 ::ffff:169.254.169.254 8080|E"
	"connect6 ::ffff:PRIV 8080|E"
	"connect6 64:ff9b::a9fe:a9fe 8080|E"
	"connect6 2002:a9fe:a9fe::1 8080|E"
	"connect6 ::a9fe:a9fe 8080|E"
	"connect6 64:ff9b::a0a:a0a 8080|E"
	"connect6 2002:a0a:a0a::1 8080|E"
	"connect6 fd12::7 8080|E"
	"fastopen 169.254.169.254 8080|E"
	"fastopen6 ::ffff:PRIV 8080|E"
	"sendmsg 100.100.100.200 53|E"
	"sendmsg6 64:ff9b::a9fe:a9fe 53|E"
)

probe_cmd() {
	local p="${1%%|*}"
	p="${p//NS/$NET.53}"
	echo "${p//PRIV/$NET.1}"
}

# What sysprobe prints for probe $1 with outcome $2 (ok / E).
probe_want() {
	local cmd op host port
	cmd=$(probe_cmd "$1")
	read -r op host port <<<"$cmd"
	[ "$2" = ok ] && {
		echo ok
		return
	}
	case "$op" in
	*6) echo "${op%6}([$host]:$port): $EPERM" ;;
	*) echo "$op($host:$port): $EPERM" ;;
	esac
}

# Run every probe (plus loopback inside) in a container wired to the test
# host; $1.. : global flags. Checks each line against the outcomes given
# as "INDEX=OUTCOME" overrides in $WANT_OVERRIDE (else the egress column).
run_probes() {
	local script="" i want got p
	add_testbin sysprobe
	script='nc -ll -p 9090 -e true </dev/null >/dev/null 2>&1 &
		for i in $(seq 1 100); do
			grep -q ":2382 .* 0A " /proc/net/tcp && break
			sleep 0.05
		done
		sysprobe connect 127.0.0.1 9090;'
	for p in "${PROBES[@]}"; do
		script="$script sysprobe $(probe_cmd "$p");"
	done
	if [ "${WIRING:-own}" = joined ]; then
		make_netns joined
		ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 2>/dev/null || true
		wire_container "netns:$NS"
		update_config --arg p "/run/netns/$NS" \
			'.linux.namespaces = [.linux.namespaces[] | if .type == "network" then .path = $p else . end]'
	fi
	create_with_output "$@" "$script kill %1" || {
		cat "$BUNDLE/$CID.out" >&2
		return 1
	}
	[ "${WIRING:-own}" = joined ] || wire_container "$(cat "$BUNDLE/$CID.pid")"
	start_until_stopped
	# create's warnings come first in the file; the probes after them.
	mapfile -t lines < <(grep -v '^moat: warning: ' <<<"$output")
	[ "${lines[0]}" = ok ] || {
		echo "loopback: got '${lines[0]}'" >&2
		return 1
	}
	for i in "${!PROBES[@]}"; do
		want="${PROBES[$i]#*|}"
		[ -z "${OUTCOME[$i]:-}" ] || want="${OUTCOME[$i]}"
		got="${lines[$((i + 1))]}"
		[ "$got" = "$(probe_want "${PROBES[$i]}" "$want")" ] || {
			echo "sysprobe $(probe_cmd "${PROBES[$i]}"): got '$got', want $want" >&2
			return 1
		}
	done
}

# OUTCOME[i] for every probe: E except those given as indexes.
only_ok() {
	local i
	OUTCOME=()
	for i in "${!PROBES[@]}"; do
		OUTCOME[i]=E
	done
	for i in "$@"; do
		OUTCOME[i]=ok
	done
}

@test "G1 egress: public addresses and the nameserver's port 53 answer; private, metadata, multicast and their IPv6 embeddings get EPERM" {
	prepare_bundle spec
	make_test_host
	OUTCOME=()
	run_probes --profile egress
}

@test "G1 egress through an engine's resolv.conf-less rootfs: the rootfs's /etc/resolv.conf names the nameserver" {
	prepare_bundle spec
	make_test_host
	update_config 'del(.mounts[] | select(.destination == "/etc/resolv.conf"))'
	echo "nameserver $NET.53" >"$BUNDLE/rootfs/etc/resolv.conf"
	OUTCOME=()
	run_probes --profile egress
}

@test "G1 egress: without a nameserver in resolv.conf its port 53 is refused too" {
	prepare_bundle spec
	make_test_host
	echo "# no nameserver" >"$BUNDLE/resolv.conf"
	OUTCOME=()
	OUTCOME[2]=E
	OUTCOME[3]=E
	run_probes --profile egress
}

@test "G1 strict: nothing but loopback, not the public host, not the nameserver" {
	prepare_bundle spec
	make_test_host
	only_ok
	run_probes
}

# The same probes in the other topologies: a namespace joined by path,
# made and wired before create (a CNI-prepared pod, `docker run --network
# container:X`), and the container's own namespace behind a bridge.
@test "G1 topology matrix: joined by path and behind a bridge, under egress, strict and an allowlist" {
	prepare_bundle spec
	make_test_host
	local wiring bridge
	for wiring in joined own; do
		bridge=0
		[ "$wiring" = own ] && bridge=1
		OUTCOME=()
		BRIDGE=$bridge WIRING=$wiring run_probes --profile egress || {
			echo "egress, $wiring, bridge=$bridge" >&2
			return 1
		}
		ip -n "$HOST_NS" link del br0 2>/dev/null || true
		[ "$wiring" = own ] || ip netns del "$NS"
		only_ok
		BRIDGE=$bridge WIRING=$wiring run_probes || {
			echo "strict, $wiring, bridge=$bridge" >&2
			return 1
		}
		ip -n "$HOST_NS" link del br0 2>/dev/null || true
		[ "$wiring" = own ] || ip netns del "$NS"
		printf '{"audit_log": "%s", "egress_allow": ["198.51.100.7/32:8080"]}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
		only_ok 0 2 3
		BRIDGE=$bridge WIRING=$wiring run_probes --profile egress || {
			echo "allowlist, $wiring, bridge=$bridge" >&2
			return 1
		}
		ip -n "$HOST_NS" link del br0 2>/dev/null || true
		[ "$wiring" = own ] || ip netns del "$NS"
		printf '{"audit_log": "%s"}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
		update_config 'del(.linux.namespaces[] | select(.type == "network")) | .linux.namespaces += [{"type": "network"}]'
	done
}

@test "G1 egress allowlist (egress_allow): only the listed address:port and DNS connect" {
	prepare_bundle spec
	make_test_host
	printf '{"audit_log": "%s", "egress_allow": ["198.51.100.7/32:8080"]}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
	PROBES+=("connect 198.51.100.7 53|E")
	only_ok 0 2 3
	run_probes --profile egress
}

@test "G1 egress_allow_private: the operator opens one private address:port, the rest stays public-only" {
	prepare_bundle spec
	make_test_host
	printf '{"audit_log": "%s", "egress_allow_private": ["%s/32:8080"]}\n' "$AUDIT_LOG" "$NET.1" >"$MOAT_CONFIG"
	PROBES+=("connect PRIV 53|E")
	OUTCOME=()
	OUTCOME[6]=ok
	OUTCOME[14]=ok # ::ffff:$NET.1, a dual-stack socket's form of it
	OUTCOME[22]=ok # the same by TCP Fast Open
	run_probes --profile egress
}

@test "G1 egress: run.moat.egress-allow narrows to entries the operator allows; a loosening one is ignored with a warning" {
	prepare_bundle spec
	make_test_host
	update_config --arg a "198.51.100.7/32:8080,$NET.1/32,169.254.169.254" \
		'.annotations["run.moat.egress-allow"] = $a'
	only_ok 0 2 3
	run_probes --profile egress
	grep -q "warning: annotations.run.moat.egress-allow: $NET.1/32 ignored (outside what the operator allows)" "$BUNDLE/$CID.out"
	grep -q "warning: annotations.run.moat.egress-allow: 169.254.169.254 ignored (a cloud metadata address, G2)" "$BUNDLE/$CID.out"
}

@test "G1 egress: a run.moat.egress-allow entry holding metadata addresses is told and recorded without them; G2 still refuses them" {
	prepare_bundle spec
	make_test_host
	# 168.0.0.0/6 holds 169.254.0.0/16 and 168.63.129.16.
	update_config '.annotations["run.moat.egress-allow"] = "168.0.0.0/6,198.51.100.7/32:8080"'
	only_ok 0 2 3
	run_probes --profile egress
	grep -qF "warning: annotations.run.moat.egress-allow: 169.254.0.0/16 168.63.129.16/32 (in 168.0.0.0/6) ignored (a cloud metadata address, G2)" "$BUNDLE/$CID.out"
	# What holds is recorded, not what was asked.
	jq -e '.overrides[] | select(.path == "annotations.run.moat.egress-allow" and .kind == "changed")
		| .enforced == "168.0.0.0/6 except 169.254.0.0/16 168.63.129.16/32,198.51.100.7/32:8080"' \
		"$ROOT/$CID/policy.json"
}

@test "G1 egress: the audit line of create names the effective lists, the nameserver included" {
	prepare_bundle spec
	make_test_host
	printf '{"audit_log": "%s", "egress_allow": ["198.51.100.7/32:443"]}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
	next_id
	moat --profile egress create -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	line=$(jq -c --arg id "$CID" 'select(.verb == "create" and .id == $id) | .effective.network' "$AUDIT_LOG")
	[ "$(jq -r .mode <<<"$line")" = allowlist ]
	[ "$(jq -c .allow <<<"$line")" = '["198.51.100.7/32:443"]' ]
	[ "$(jq -c .dns <<<"$line")" = "[\"$NET.53/32:53\"]" ]
	[ "$(jq -r '.deny | index("168.63.129.16/32")' <<<"$line")" != null ]
	# The nameserver, outside the allowlist, gets port 53 all the same:
	# recorded and told.
	[[ "$output" == *"moat: warning: nameserver $NET.53/32 of resolv.conf is outside the allowlist: reachable on port 53 only, for DNS"* ]]
	jq -e --arg id "$CID" --arg p "resolv.conf nameserver $NET.53/32" \
		'select(.verb == "create" and .id == $id) | .overrides[] | select(.path == $p and .kind == "added")' "$AUDIT_LOG"
	moat profile show --profile egress
	[ "$(jq -c .network.allow <<<"$output")" = '["198.51.100.7/32:443"]' ]
}

@test "G1 egress: lists of 10,000 entries each (egress_deny, egress_allow_private) load, and their last entries hold" {
	prepare_bundle spec
	make_test_host
	# 10,000 entries each, the ones that matter last: the deny list ends
	# with the public host, the private allowlist with $NET.1:8080.
	deny=$(awk 'BEGIN { for (i = 0; i < 9999; i++) printf "\"203.%d.%d.0/24\",", int(i / 256), i % 256 }')
	allow=$(awk 'BEGIN { for (i = 0; i < 9999; i++) printf "\"10.%d.%d.%d/32:443\",", 200 + int(i / 65536), int(i / 256) % 256, i % 256 }')
	printf '{"audit_log": "%s", "egress_deny": [%s"198.51.100.7/32"], "egress_allow_private": [%s"%s/32:8080"]}\n' \
		"$AUDIT_LOG" "$deny" "$allow" "$NET.1" >"$MOAT_CONFIG"
	OUTCOME=()
	OUTCOME[0]=E   # 198.51.100.7, denied by the operator
	OUTCOME[6]=ok  # $NET.1:8080, allowed
	OUTCOME[14]=ok # ::ffff:$NET.1, a dual-stack socket's form of it
	OUTCOME[22]=ok # the same by TCP Fast Open
	run_probes --profile egress
}

@test "G1 egress: a 10,000-entry deny list is read from the cache by the next create and still refuses; changed in one entry (same size), the next create obeys the change" {
	prepare_bundle spec
	make_test_host
	PROBES=("connect 198.51.100.7 8080|E")
	deny=$(awk 'BEGIN { for (i = 0; i < 9999; i++) printf "\"203.%d.%d.0/24\",", int(i / 256), i % 256 }')
	config_ending() {
		printf '{"audit_log": "%s", "egress_deny": [%s"%s"]}\n' "$AUDIT_LOG" "$deny" "$1" >"$MOAT_CONFIG"
	}
	# Each run's veth goes before the next one is made.
	unwire() {
		moat delete -f "$CID"
		ip -n "$HOST_NS" link del "m1eh$BATS_TEST_NUMBER-$$" 2>/dev/null || true
	}
	# 198.51.100.7 is inside the last entry.
	config_ending 198.51.100.0/24
	run_probes --profile egress # parses the config, fills the cache
	entry=$(echo "$ROOT"/.cache/config-*.cache)
	[ -f "$entry" ]
	inode=$(stat -c %i "$entry")
	unwire
	run_probes --profile egress # a hit: the entry is not written again
	[ "$(stat -c %i "$entry")" = "$inode" ]
	unwire
	config_ending 198.51.101.0/24
	OUTCOME=(ok) # 198.51.100.7 no longer denied
	run_probes --profile egress
	[ "$(stat -c %i "$entry")" != "$inode" ]
}

@test "G1 egress: more allow entries than the bound is a clear error at create, nothing left behind" {
	prepare_bundle spec
	list=$(awk 'BEGIN { for (i = 0; i < 16385; i++) printf "\"198.%d.%d.%d/32\",", int(i / 65536), int(i / 256) % 256, i % 256 }')
	printf '{"audit_log": "%s", "egress_allow": [%s]}\n' "$AUDIT_LOG" "${list%,}" >"$MOAT_CONFIG"
	next_id
	moat --profile egress create -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[ "$output" = "moat: create $CID: profile: $MOAT_CONFIG: egress_allow: 16385 entries, at most 16384" ] ||
		[[ "$output" == *"egress_allow: 16385 entries, at most 16384"* ]]
	[ "${#lines[@]}" -eq 1 ]
	[ ! -e "$ROOT/$CID" ]
}

@test "G1 egress: refusals are counted per destination: events --stats shows network.refused, delete's audit line refused_connects, past 256 destinations an overflow count" {
	prepare_bundle spec
	add_testbin sysprobe
	start_sleeper --profile egress
	# Twice the metadata address, once a private address over UDP, then
	# 300 distinct private destinations: 302 destinations, 256 kept, 46 in
	# the overflow.
	moat exec "$CID" sh -c 'sysprobe connect 169.254.169.254 80; sysprobe connect 169.254.169.254 80
		sysprobe sendto 10.1.2.3 53
		for i in $(seq 1 300); do sysprobe connect 10.0.$((i / 200)).$((i % 200 + 1)) 8080 >/dev/null; done'
	[ "${lines[0]}" = "connect(169.254.169.254:80): $EPERM" ]
	[ "${lines[2]}" = "sendto(10.1.2.3:53): $EPERM" ]
	moat events --stats "$CID"
	[ "$status" -eq 0 ]
	net=$(jq -c .data.network <<<"$output")
	[ "$(jq -c '.refused[0] | {addr, port, proto, count}' <<<"$net")" = '{"addr":"169.254.169.254","port":80,"proto":"tcp","count":2}' ]
	[ "$(jq -c '.refused[] | select(.addr == "10.1.2.3") | {port, proto, count}' <<<"$net")" = '{"port":53,"proto":"udp","count":1}' ]
	[ "$(jq '.refused | length' <<<"$net")" -eq 256 ]
	[ "$(jq .overflow <<<"$net")" -eq 46 ]
	# runc's fields are still there.
	moat events --stats "$CID"
	[ "$(jq -r '.data.pids | has("current")' <<<"$output")" = true ]
	moat delete -f "$CID"
	[ "$status" -eq 0 ]
	audit_has "$CID" 'select(.verb == "delete") | .refused_connects | select(.overflow == 46 and (.refused | length) == 256 and .refused[0].count == 2)'
}

@test "G1 strict: a connection from outside to a listener in the container is dropped by the skb program, and counted" {
	prepare_bundle spec
	make_test_host
	update_config '.process.args = ["sh", "-c", "nc -ll -p 9999 -e true </dev/null; sleep 1000"]'
	next_id
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" create -b "$BUNDLE" --pid-file "$BUNDLE/$CID.pid" "$CID" </dev/null >"$BUNDLE/$CID.out" 2>&1
	pid=$(cat "$BUNDLE/$CID.pid")
	wire_container "$pid"
	moat start "$CID"
	[ "$status" -eq 0 ]
	wait_listen "$pid" 9999
	# The SYN reaches the listening socket's ingress program, which drops
	# it: the connect times out, and the count says why.
	run ip netns exec "$HOST_NS" "$BUSYBOX" nc -w 1 "$NET.2" 9999 </dev/null
	[ "$status" -ne 0 ]
	moat events --stats "$CID"
	[ "$status" -eq 0 ]
	[ "$(jq .data.network.dropped_packets <<<"$output")" -ge 1 ]
	moat delete -f "$CID"
	[ "$status" -eq 0 ]
	audit_has "$CID" 'select(.verb == "delete") | .refused_connects | select(.dropped_packets >= 1)'
}
