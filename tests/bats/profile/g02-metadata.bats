#!/usr/bin/env bats
# G2: the cloud metadata addresses are unreachable in every profile, egress
# included: 169.254.0.0/16, 100.100.100.200 (Alibaba), 168.63.129.16
# (Azure), fd00:ec2::254, and every IPv6 form embedding them (IPv4-mapped,
# IPv4-compatible, NAT64, 6to4). Under egress a public address gets past
# the guard (no route here: "Network is unreachable"), which shows the
# refusals are G2's own. g01-egress.bats has listeners behind them.

load profile_helpers
load netns_helpers

GUARANTEE=g2

setup() {
	requires_root
	setup_netns
}

teardown() {
	teardown_netns
}

PROBES=(
	"connect 169.254.169.254 80|connect(169.254.169.254:80): Operation not permitted (errno 1)"
	"sendto 169.254.169.254 53|sendto(169.254.169.254:53): Operation not permitted (errno 1)"
	"connect 169.254.0.1 80|connect(169.254.0.1:80): Operation not permitted (errno 1)"
	"connect6 fd00:ec2::254 80|connect([fd00:ec2::254]:80): Operation not permitted (errno 1)"
	"sendto6 fd00:ec2::254 53|sendto([fd00:ec2::254]:53): Operation not permitted (errno 1)"
	"connect6 ::ffff:169.254.169.254 80|connect([::ffff:169.254.169.254]:80): Operation not permitted (errno 1)"
	"sendto6 ::ffff:169.254.169.254 53|sendto([::ffff:169.254.169.254]:53): Operation not permitted (errno 1)"
	"connect 100.100.100.200 80|connect(100.100.100.200:80): Operation not permitted (errno 1)"
	"sendto 168.63.129.16 53|sendto(168.63.129.16:53): Operation not permitted (errno 1)"
	"connect6 64:ff9b::a9fe:a9fe 80|connect([64:ff9b::a9fe:a9fe]:80): Operation not permitted (errno 1)"
	"connect6 2002:a9fe:a9fe::1 80|connect([2002:a9fe:a9fe::1]:80): Operation not permitted (errno 1)"
	"connect6 ::a9fe:a9fe 80|connect([::a9fe:a9fe]:80): Operation not permitted (errno 1)"
	"sendto6 64:ff9b::6464:64c8 53|sendto([64:ff9b::6464:64c8]:53): Operation not permitted (errno 1)"
	"connect6 2002:a83f:8110::1 80|connect([2002:a83f:8110::1]:80): Operation not permitted (errno 1)"
)

# $1: the profile; $2: what a non-metadata address gets under it.
check_metadata() {
	local profile="$1" other="$2" script="" i
	add_testbin sysprobe
	for p in "${PROBES[@]}"; do
		script="$script sysprobe ${p%%|*};"
	done
	in_container --profile "$profile" "$script sysprobe connect 198.51.100.7 80"
	for i in "${!PROBES[@]}"; do
		[ "${lines[$i]}" = "${PROBES[$i]#*|}" ] || {
			echo "$profile: sysprobe ${PROBES[$i]%%|*}: got '${lines[$i]}'" >&2
			return 1
		}
	done
	[ "${lines[${#PROBES[@]}]}" = "connect(198.51.100.7:80): $other" ]
}

EPERM="Operation not permitted (errno 1)"
UNREACHABLE="Network is unreachable (errno 101)"

@test "G2 spec: metadata refused under strict and egress" {
	prepare_bundle spec
	check_metadata strict "$EPERM"
	check_metadata egress "$UNREACHABLE"
}

@test "G2 docker.02 (bridge network): metadata refused under strict and egress" {
	prepare_bundle docker.02
	check_metadata strict "$EPERM"
	check_metadata egress "$UNREACHABLE"
}

@test "G2 permissive (host network): metadata refused under strict and egress" {
	prepare_bundle permissive
	check_metadata strict "$EPERM"
	check_metadata egress "$UNREACHABLE"
}

@test "G2 an operator config cannot open the metadata range" {
	prepare_bundle spec
	printf '{"audit_log": "%s", "egress_deny": []}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
	check_metadata egress "$UNREACHABLE"
}

@test "G2 an allowlist of everything cannot open the metadata addresses or their IPv6 forms" {
	prepare_bundle spec
	printf '{"audit_log": "%s", "egress_allow": ["0.0.0.0/0", "::/0"]}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
	check_metadata egress "$UNREACHABLE"
}

@test "G2 exec under egress: metadata refused" {
	prepare_bundle permissive
	add_testbin sysprobe
	start_sleeper --profile egress
	for p in "${PROBES[@]}"; do
		# shellcheck disable=SC2086
		moat exec "$CID" sysprobe ${p%%|*}
		[ "$output" = "${p#*|}" ]
	done
	moat exec "$CID" sysprobe connect 198.51.100.7 80
	[ "$output" = "connect(198.51.100.7:80): $UNREACHABLE" ]
}

@test "G2 egress: a resolv.conf nameserver in the metadata range stays refused on port 53, and the judgement says so (stderr, audit line, saved decision)" {
	prepare_bundle spec
	add_testbin sysprobe
	echo "nameserver 169.254.169.253" >"$BUNDLE/resolv.conf"
	update_config --arg s "$BUNDLE/resolv.conf" \
		'.mounts += [{"destination": "/etc/resolv.conf", "type": "bind", "source": $s, "options": ["rbind", "ro"]}]'
	start_sleeper --profile egress
	has_line "moat: warning: nameserver 169.254.169.253/32 of resolv.conf is in the denied range 169.254.0.0/16: DNS through it is refused"
	moat exec "$CID" sysprobe sendto 169.254.169.253 53
	[ "$output" = "sendto(169.254.169.253:53): $EPERM" ]
	audit_has "$CID" '.overrides[] | select(.path == "resolv.conf nameserver 169.254.169.253/32" and (.enforced | startswith("DNS through it refused")))'
	jq -e '.overrides[] | select(.path == "resolv.conf nameserver 169.254.169.253/32")' "$ROOT/$CID/policy.json"
}

@test "G2 egress: a resolv.conf nameserver written as an IPv6 form of a metadata address is judged as that address: refused on port 53, and said (stderr, audit line, saved decision)" {
	prepare_bundle spec
	add_testbin sysprobe
	printf 'nameserver ::ffff:169.254.169.254\nnameserver 64:ff9b::a9fe:a9fe\n' >"$BUNDLE/resolv.conf"
	update_config --arg s "$BUNDLE/resolv.conf" \
		'.mounts += [{"destination": "/etc/resolv.conf", "type": "bind", "source": $s, "options": ["rbind", "ro"]}]'
	start_sleeper --profile egress
	for ns in ::ffff:169.254.169.254 64:ff9b::a9fe:a9fe; do
		has_line "moat: warning: nameserver $ns/128 of resolv.conf is in the denied range 169.254.0.0/16: DNS through it is refused"
		audit_has "$CID" ".overrides[] | select(.path == \"resolv.conf nameserver $ns/128\" and (.enforced | startswith(\"DNS through it refused\")))"
		jq -e --arg p "resolv.conf nameserver $ns/128" '.overrides[] | select(.path == $p)' "$ROOT/$CID/policy.json"
	done
	# What the record says is what holds: the programs refuse them.
	moat exec "$CID" sysprobe sendto ::ffff:169.254.169.254 53
	[[ "$output" == *": $EPERM" ]]
	moat exec "$CID" sysprobe sendto 64:ff9b::a9fe:a9fe 53
	[[ "$output" == *": $EPERM" ]]
}

# The topology of issue 20, as a CNI-prepared pod or `docker run --network
# container:X` gives it: the container joins by path a network namespace
# made before create (never moved or touched by moat), a veth to a far
# side whose lo holds a public address, a private one and the metadata
# addresses, each with a listener on 80, 443 and 8080, and the
# container's default route via the far end. So "refused" below means the
# guard refused, not that nothing answers: 198.51.100.7 does.
JOINED_FAR=(198.51.100.7 10.213.77.1 100.100.100.200 100.100.100.201 100.64.1.1 169.254.169.254 168.63.129.16)


# Connect to every far address on every port from inside; $1: the
# profile, $2: the addresses that must connect (the rest must get EPERM).
check_joined() {
	local script="" a p want i=0
	add_testbin sysprobe
	for a in "${JOINED_FAR[@]}"; do
		for p in 80 443 8080; do
			script="$script sysprobe connect $a $p;"
		done
	done
	in_container --profile "$1" "$script"
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
	for a in "${JOINED_FAR[@]}"; do
		for p in 80 443 8080; do
			want="connect($a:$p): $EPERM"
			[[ " $2 " == *" $a "* ]] && want=ok
			[ "${lines[$i]}" = "$want" ] || {
				echo "$1: connect $a $p: got '${lines[$i]}', want '$want'" >&2
				return 1
			}
			i=$((i + 1))
		done
	done
}

@test "G2 a network namespace joined by path, with routes (public source): metadata refused, the public host answers" {
	prepare_bundle spec
	make_joined_topology 203.0.113.2/24 203.0.113.1/24
	check_joined egress "198.51.100.7"
	check_joined strict ""
	# With CGNAT and 10/8 opened by the operator, only G2's own entries
	# stand between the container and 100.100.100.200 and 169.254/16.
	printf '{"audit_log": "%s", "egress_allow_private": ["100.64.0.0/10", "10.0.0.0/8"]}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
	check_joined egress "198.51.100.7 10.213.77.1 100.100.100.201 100.64.1.1"
}

@test "G2 a network namespace joined by path, with routes (private source): metadata refused, the public host answers" {
	prepare_bundle spec
	make_joined_topology 10.77.0.2/24 10.77.0.1/24
	check_joined egress "198.51.100.7"
}
