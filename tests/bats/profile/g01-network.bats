#!/usr/bin/env bats
# G1: no network beyond loopback. A container asking for the host's network
# gets a fresh namespace with only lo; whatever namespace it is in, traffic
# other than loopback is refused (connect/sendto fail EPERM at once), even on
# a veth an engine moves in between create and start, and in a pod's
# namespace joined by path. `--profile egress` opens public addresses
# only (G2 refused too); g01-egress.bats tests it in depth.
#
# Every address used here lives in network namespaces these tests create:
# nothing leaves the machine.

load profile_helpers
load netns_helpers

GUARANTEE=g1

setup() {
	requires_root
	command -v ip >/dev/null || skip "needs ip (iproute2)"
	NET="10.250.$(($$ % 250))"
	setup_netns
}

teardown() {
	teardown_netns
}

# A veth pair between the container of pid $1 (end $NET.2/24, default
# route via $NET.1) and netns $2 (end $NET.1/24 plus 169.254.169.254/32),
# as Docker sets up a bridge network between create and start.
attach_veth() {
	local pid="$1" ns="$2" cont="m1c$BATS_TEST_NUMBER-$$"
	VETH_HOST="m1h$BATS_TEST_NUMBER-$$"
	ip link add "$VETH_HOST" type veth peer name "$cont"
	ip link set "$cont" netns "$pid"
	ip link set "$VETH_HOST" netns "$ns"
	VETH_HOST=""
	nsenter -t "$pid" -n ip addr add "$NET.2/24" dev "$cont"
	nsenter -t "$pid" -n ip link set "$cont" up
	nsenter -t "$pid" -n ip route add default via "$NET.1"
	ip -n "$ns" addr add "$NET.1/24" dev "m1h$BATS_TEST_NUMBER-$$"
	ip -n "$ns" addr add 169.254.169.254/32 dev "m1h$BATS_TEST_NUMBER-$$"
	ip -n "$ns" link set "m1h$BATS_TEST_NUMBER-$$" up
}

# Inside: only lo; a listener in the container answers on loopback;
# anything else is refused at once.
check_loopback_only() {
	add_testbin sysprobe
	in_container 'ip -o link | cut -d: -f2 | tr -d " "
		tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "
		nc -ll -p 8080 -e true </dev/null >/dev/null 2>&1 &
		for i in $(seq 1 100); do
			cat /proc/net/tcp /proc/net/tcp6 | awk "\$2 ~ /:1F90\$/ && \$4 == \"0A\" { f = 1 } END { exit !f }" && break
			sleep 0.05
		done
		sysprobe connect 127.0.0.1 8080
		sysprobe connect 10.1.2.3 80
		sysprobe sendto 10.1.2.3 53
		sysprobe connect6 2001:db8::1 80
		kill %1'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = lo ]
	[ "${lines[1]}" = lo ]
	[ "${lines[2]}" = ok ]
	[ "${lines[3]}" = "connect(10.1.2.3:80): Operation not permitted (errno 1)" ]
	[ "${lines[4]}" = "sendto(10.1.2.3:53): Operation not permitted (errno 1)" ]
	[ "${lines[5]}" = "connect([2001:db8::1]:80): Operation not permitted (errno 1)" ]
	[ "${#lines[@]}" -eq 6 ]
}

@test "G1 spec: only lo, loopback works, other addresses EPERM" {
	prepare_bundle spec
	check_loopback_only
}

@test "G1 ctr.17 (host network, privileged): a fresh namespace, only lo" {
	prepare_bundle ctr.17
	[ "$(jq '[.linux.namespaces[] | select(.type == "network")] | length' "$BUNDLE/config.json")" = 0 ]
	check_loopback_only
}

@test "G1 permissive (host network): a fresh namespace, only lo" {
	prepare_bundle permissive
	check_loopback_only
}

@test "G1 permissive: the container's network namespace is not the host's" {
	prepare_bundle permissive
	start_sleeper
	moat state "$CID"
	pid=$(echo "$output" | jq -r .pid)
	[ "$(readlink "/proc/$pid/ns/net")" != "$(readlink /proc/1/ns/net)" ]
	[ "$(readlink "/proc/$pid/ns/net")" != "$(readlink /proc/self/ns/net)" ]
}

@test "G1 strict: a veth moved in between create and start carries nothing" {
	prepare_bundle spec
	add_testbin sysprobe
	make_netns peer
	ns="$NS"
	listen_in "$ns" 8080
	create_with_output "sysprobe connect $NET.1 8080
		sysprobe sendto $NET.1 8081
		sysprobe connect 169.254.169.254 8080
		ping -c 1 -W 1 $NET.1 >/dev/null 2>&1 && echo ping answered || echo ping got nothing
		ip -o addr show | grep -c '$NET.2/24'"
	pid=$(cat "$BUNDLE/$CID.pid")
	attach_veth "$pid" "$ns"
	# The veth works from the host's side of it: without the guard the
	# container could use it.
	ip netns exec "$ns" "$BUSYBOX" nc -w 2 "$NET.1" 8080 </dev/null
	start_until_stopped
	[ "${lines[0]}" = "connect($NET.1:8080): Operation not permitted (errno 1)" ]
	[ "${lines[1]}" = "sendto($NET.1:8081): Operation not permitted (errno 1)" ]
	[ "${lines[2]}" = "connect(169.254.169.254:8080): Operation not permitted (errno 1)" ]
	[ "${lines[3]}" = "ping got nothing" ]
	[ "${lines[4]}" = 1 ]
}

@test "G1 strict: nothing reaches a listener in the container through the veth" {
	prepare_bundle spec
	make_netns peer
	ns="$NS"
	create_with_output 'nc -ll -p 8080 -e true </dev/null; sleep 1000'
	pid=$(cat "$BUNDLE/$CID.pid")
	attach_veth "$pid" "$ns"
	moat start "$CID"
	[ "$status" -eq 0 ]
	# Listening inside the container's namespace: the SYN from outside
	# is dropped, as is the container's answer.
	wait_listen "$pid" 8080
	run ip netns exec "$ns" "$BUSYBOX" nc -w 2 "$NET.2" 8080 </dev/null
	[ "$status" -ne 0 ]
}

@test "G1 egress: the veth reaches a public peer, never its private address or 169.254.169.254" {
	prepare_bundle spec
	add_testbin sysprobe
	make_netns peer
	ns="$NS"
	listen_in "$ns" 8080
	# The peer's private $NET.1 is refused under egress since issue 11
	# (public addresses only); 198.51.100.7 on the same link is public.
	create_with_output --profile egress "sysprobe connect 198.51.100.7 8080
		sysprobe sendto 198.51.100.7 8081
		sysprobe connect 169.254.169.254 8080
		sysprobe sendto 169.254.169.254 53
		sysprobe connect $NET.1 8080"
	pid=$(cat "$BUNDLE/$CID.pid")
	attach_veth "$pid" "$ns"
	ip -n "$ns" addr add 198.51.100.7/32 dev "m1h$BATS_TEST_NUMBER-$$"
	start_until_stopped
	[ "${lines[0]}" = ok ]
	[ "${lines[1]}" = ok ]
	[ "${lines[2]}" = "connect(169.254.169.254:8080): Operation not permitted (errno 1)" ]
	[ "${lines[3]}" = "sendto(169.254.169.254:53): Operation not permitted (errno 1)" ]
	[ "${lines[4]}" = "connect($NET.1:8080): Operation not permitted (errno 1)" ]
}

@test "G1 strict in a pod's namespace (joined by path): the sidecar on localhost works, the pod's veth does not" {
	prepare_bundle docker.19
	add_testbin sysprobe
	make_netns out
	outside="$NS"
	make_netns pod
	pod="$NS"
	listen_in "$outside" 8080
	# The sidecar: a listener in the pod's namespace.
	listen_in "$pod" 9090
	# The pod's network: a veth to the outside, set up by "CNI".
	VETH_HOST="m1p$BATS_TEST_NUMBER-$$"
	ip link add "$VETH_HOST" type veth peer name "m1q$BATS_TEST_NUMBER-$$"
	ip link set "$VETH_HOST" netns "$pod"
	ip link set "m1q$BATS_TEST_NUMBER-$$" netns "$outside"
	VETH_HOST=""
	ip -n "$pod" addr add "$NET.2/24" dev "m1p$BATS_TEST_NUMBER-$$"
	ip -n "$pod" link set "m1p$BATS_TEST_NUMBER-$$" up
	ip -n "$outside" addr add "$NET.1/24" dev "m1q$BATS_TEST_NUMBER-$$"
	ip -n "$outside" link set "m1q$BATS_TEST_NUMBER-$$" up
	# Reachable without the guard:
	ip netns exec "$pod" "$BUSYBOX" nc -w 2 "$NET.1" 8080 </dev/null
	update_config --arg p "/run/netns/$pod" '.linux.namespaces |= map(if .type == "network" then .path = $p else . end)'
	in_container "sysprobe connect 127.0.0.1 9090; sysprobe connect $NET.1 8080"
	[ "${lines[0]}" = ok ]
	[ "${lines[1]}" = "connect($NET.1:8080): Operation not permitted (errno 1)" ]
}

@test "G1 exec: a process moat exec starts is confined too" {
	prepare_bundle spec
	add_testbin sysprobe
	make_netns peer
	ns="$NS"
	listen_in "$ns" 8080
	next_id
	update_config '.process.args = ["sleep", "1000"]'
	moat create -b "$BUNDLE" --pid-file "$BUNDLE/$CID.pid" "$CID"
	[ "$status" -eq 0 ]
	attach_veth "$(cat "$BUNDLE/$CID.pid")" "$ns"
	moat start "$CID"
	[ "$status" -eq 0 ]
	moat exec "$CID" sysprobe connect "$NET.1" 8080
	[ "$output" = "connect($NET.1:8080): Operation not permitted (errno 1)" ]
	moat exec "$CID" sysprobe sendto "$NET.1" 8081
	[ "$output" = "sendto($NET.1:8081): Operation not permitted (errno 1)" ]
}
