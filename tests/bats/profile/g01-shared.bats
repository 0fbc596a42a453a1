#!/usr/bin/env bats
# The network guard's programs and lists are shared between containers
# with the same rules (README, "Network"): the first create builds them and
# pins them under /sys/fs/bpf/moat/<hash>/, later ones attach the pinned
# programs. What must hold: containers with the same lists run the same
# programs, containers with other lists other programs, and each still
# counts its own refusals (events --stats, delete's audit line).

load profile_helpers

GUARANTEE=g1s

setup() {
	requires_root
	command -v bpftool >/dev/null || skip "needs bpftool"
	[ -e /sys/fs/cgroup/unified/cgroup.procs ] || [ -e /sys/fs/cgroup/cgroup.procs ] ||
		skip "needs a cgroup v2 hierarchy"
}

teardown() {
	teardown_profile
}

# The id of the program attached to container $1's cgroup at connect4.
connect4_prog() {
	local dir
	for dir in "/sys/fs/cgroup/unified/moat/$1" "/sys/fs/cgroup/moat/$1"; do
		[ -e "$dir/cgroup.procs" ] || continue
		bpftool cgroup show "$dir" | awk '$2 == "cgroup_inet4_connect" || $2 == "connect4" { print $1 }'
		return 0
	done
	echo "no cgroup v2 directory for $1" >&2
	return 1
}

# An operator config with its own deny list (unique to this test run, so
# that the programs are built by this test).
config_with_deny() {
	printf '{"audit_log": "%s", "egress_deny": ["%s"]}\n' "$AUDIT_LOG" "$1" >"$MOAT_CONFIG"
}

@test "G1 shared: two containers with the same lists run the same programs and count their refusals apart" {
	prepare_bundle spec
	add_testbin sysprobe
	config_with_deny "203.0.113.$(($$ % 250 + 1))/32"
	start_sleeper --profile egress
	a="$CID"
	start_sleeper --profile egress
	b="$CID"
	prog_a=$(connect4_prog "$a")
	prog_b=$(connect4_prog "$b")
	echo "connect4 programs: $a $prog_a, $b $prog_b" >&2
	[ -n "$prog_a" ]
	[ "$prog_a" = "$prog_b" ]

	moat exec "$a" sh -c 'sysprobe connect 169.254.169.254 80; sysprobe connect 169.254.169.254 80'
	[ "${lines[0]}" = "connect(169.254.169.254:80): Operation not permitted (errno 1)" ]
	moat exec "$b" sysprobe sendto 10.1.2.3 53
	[ "$output" = "sendto(10.1.2.3:53): Operation not permitted (errno 1)" ]

	moat events --stats "$a"
	[ "$status" -eq 0 ]
	[ "$(jq -c '.data.network.refused | map({addr, port, proto, count})' <<<"$output")" = '[{"addr":"169.254.169.254","port":80,"proto":"tcp","count":2}]' ]
	moat events --stats "$b"
	[ "$status" -eq 0 ]
	[ "$(jq -c '.data.network.refused | map({addr, port, proto, count})' <<<"$output")" = '[{"addr":"10.1.2.3","port":53,"proto":"udp","count":1}]' ]

	# Deleting one forgets its refusals only.
	moat delete -f "$a"
	[ "$status" -eq 0 ]
	audit_has "$a" 'select(.verb == "delete") | .refused_connects | select((.refused | length) == 1 and .refused[0].addr == "169.254.169.254" and .refused[0].count == 2)'
	moat events --stats "$b"
	[ "$(jq -c '.data.network.refused | map({addr, count})' <<<"$output")" = '[{"addr":"10.1.2.3","count":1}]' ]
	# A new container with the same lists starts from nothing.
	start_sleeper --profile egress
	[ "$(connect4_prog "$CID")" = "$prog_b" ]
	moat events --stats "$CID"
	[ "$(jq -c '.data.network | {refused, overflow}' <<<"$output")" = '{"refused":[],"overflow":0}' ]
	moat delete -f "$b"
	moat delete -f "$CID"
}

@test "G1 shared: a container with other lists gets other programs, which refuse what its lists deny" {
	prepare_bundle spec
	add_testbin sysprobe
	config_with_deny "203.0.113.$(($$ % 250 + 1))/32"
	start_sleeper --profile egress
	a="$CID"
	config_with_deny "198.51.100.$(($$ % 250 + 1))/32"
	start_sleeper --profile egress
	b="$CID"
	prog_a=$(connect4_prog "$a")
	prog_b=$(connect4_prog "$b")
	echo "connect4 programs: $a $prog_a, $b $prog_b" >&2
	[ -n "$prog_a" ] && [ -n "$prog_b" ]
	[ "$prog_a" != "$prog_b" ]
	# Each refuses its own list's address, and not the other's (which is
	# public: its connect goes on, and fails later or not at all).
	moat exec "$b" sysprobe connect "198.51.100.$(($$ % 250 + 1))" 80
	[ "$output" = "connect(198.51.100.$(($$ % 250 + 1)):80): Operation not permitted (errno 1)" ]
	moat exec "$a" sysprobe connect "198.51.100.$(($$ % 250 + 1))" 80
	[ "$output" != "connect(198.51.100.$(($$ % 250 + 1)):80): Operation not permitted (errno 1)" ]
	moat delete -f "$a"
	moat delete -f "$b"
}

@test "G1 shared: the programs are pinned once per set of lists, and a container still gets its guard when the pins are gone" {
	prepare_bundle spec
	add_testbin sysprobe
	config_with_deny "192.0.2.$(($$ % 250 + 1))/32"
	start_sleeper --profile egress
	a="$CID"
	prog=$(connect4_prog "$a")
	pinned=$(bpftool prog show | awk -v id="$prog" '$1 == id":" { print "yes" }')
	[ "$pinned" = yes ]
	# Another create with the same lists finds the entry; one whose pins
	# were removed (an operator's rm, an eviction) builds them again.
	entries_before=$(ls /sys/fs/bpf/moat | wc -l)
	start_sleeper --profile egress
	b="$CID"
	[ "$(ls /sys/fs/bpf/moat | wc -l)" -eq "$entries_before" ]
	[ "$(connect4_prog "$b")" = "$prog" ]
	for d in /sys/fs/bpf/moat/*; do
		[ -e "$d/connect4" ] || continue
		id=$(bpftool prog show pinned "$d/connect4" | awk -F: 'NR == 1 { print $1 }')
		[ "$id" = "$prog" ] && rm -r "$d"
	done
	start_sleeper --profile egress
	c="$CID"
	[ "$(connect4_prog "$c")" != "$prog" ]
	moat exec "$c" sysprobe connect 169.254.169.254 80
	[ "$output" = "connect(169.254.169.254:80): Operation not permitted (errno 1)" ]
	# The unpinned programs still guard the first container.
	moat exec "$a" sysprobe connect 169.254.169.254 80
	[ "$output" = "connect(169.254.169.254:80): Operation not permitted (errno 1)" ]
	moat delete -f "$a"
	moat delete -f "$b"
	moat delete -f "$c"
}

# The kernel switches a cgroup-BPF hook on for the whole host when its first
# program is attached and off when the last goes, patching its text on every
# CPU each time: moat keeps one allow-all program per hook it uses on an
# empty cgroup of its own, so that containers coming and going do not.
@test "G1 shared: /moat/.bpf-keys keeps the hooks on: one allow-all program per hook, no process, made again once removed" {
	local v2=/sys/fs/cgroup/unified/moat/.bpf-keys
	[ -e /sys/fs/cgroup/unified/cgroup.procs ] || v2=/sys/fs/cgroup/moat/.bpf-keys
	# Removing it is safe at any time; the next create makes it again.
	[ ! -d "$v2" ] || rmdir "$v2"
	prepare_bundle spec
	start_sleeper
	[ -d "$v2" ]
	[ -z "$(cat "$v2/cgroup.procs")" ]
	hooks() { bpftool cgroup show "$v2" | awk '$NF == "moat_keys" { print $2 }' | sort | tr '\n' ' '; }
	want="cgroup_device cgroup_inet4_connect cgroup_inet6_connect cgroup_inet_egress cgroup_inet_ingress cgroup_udp4_sendmsg cgroup_udp6_sendmsg "
	[ "$(hooks)" = "$want" ]
	# A second container leaves them as they are: one of each.
	start_sleeper
	[ "$(hooks)" = "$want" ]
	# Each allows everything (r0 = 1, exit), and only there.
	id=$(bpftool cgroup show "$v2" | awk '$2 == "cgroup_inet4_connect" { print $1 }')
	[ "$(bpftool prog dump xlated id "$id" | grep -c '^ *[0-9]*:')" -eq 2 ]
	bpftool prog dump xlated id "$id" | grep -q 'r0 = 1'
	# Attached nowhere else, so that no process ever runs under them.
	[ "$(bpftool cgroup tree "${v2%/moat/.bpf-keys}" | awk '/^\// { p = $1 } $NF == "moat_keys" { print p }' | sort -u)" = "$v2" ]
}
