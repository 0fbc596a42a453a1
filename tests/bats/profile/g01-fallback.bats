#!/usr/bin/env bats
# The fallback guard (no cgroup v2: policy rules in the container's network
# namespace) in a namespace joined by path, as a pod's containers or
# `docker run --network container:X` share one. Its rules hold for the
# whole namespace and outlive the container, so one container's egress
# allowances must never open the namespace to another: moat refuses to
# start a container whose allowances differ from the guard already there.
# A hybrid host takes the fallback here with its unified mount hidden (a
# mount namespace of moat's own); a host without v1 hierarchies skips.

load profile_helpers
load netns_helpers

GUARANTEE=g1fb
JOINED_FAR=(198.51.100.7 10.213.77.1)
JOINED_PORTS=(80)

setup() {
	requires_root
	[ "$(stat -fc %T /sys/fs/cgroup)" = tmpfs ] &&
		[ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] ||
		skip "needs a hybrid host (v1 hierarchies, cgroup2 at /sys/fs/cgroup/unified)"
	setup_netns
	# moat with no cgroup2 in sight: every verb, so create, start, exec
	# and delete agree on the layout.
	REAL_MOAT="$MOAT"
	MOAT="$BATS_TEST_TMPDIR/moat-v1-only"
	cat >"$MOAT" <<EOF
#!/bin/sh
exec unshare -m --propagation private sh -c 'umount /sys/fs/cgroup/unified && exec "\$0" "\$@"' "$REAL_MOAT" "\$@"
EOF
	chmod +x "$MOAT"
	prepare_bundle spec
	add_testbin sysprobe
	make_joined_topology 203.0.113.2/24 203.0.113.1/24
}

teardown() {
	# The lock holder of the lock test, if it failed before releasing it.
	[ -z "${HOLDER:-}" ] || kill "$HOLDER" 2>/dev/null || true
	teardown_netns
}

PROBE="sysprobe connect 10.213.77.1 80; sysprobe connect 198.51.100.7 80"
REFUSED="connect(10.213.77.1:80): Permission denied (errno 13)"
LEAK="already lets 10.0.0.0/8 through, which this container may not reach"

# The operator config: the audit log, plus $1 (JSON members) if given.
operator_config() {
	printf '{"audit_log": "%s"%s}\n' "$AUDIT_LOG" "${1:+, $1}" >"$MOAT_CONFIG"
}

@test "G1 fallback, shared namespace: a later container's allowance does not open a running one's guard" {
	operator_config
	start_sleeper --profile egress
	grep -q '"network_guard":"fallback"' "$AUDIT_LOG"
	local first="$CID"
	moat exec "$first" sh -c "$PROBE"
	[ "${lines[0]}" = "$REFUSED" ]
	[ "${lines[1]}" = "ok" ]

	operator_config '"egress_allow_private": ["10.0.0.0/8"]'
	in_container --profile egress "$PROBE"
	[ "$status" -eq 1 ]
	[[ "$output" == *"allowing 10.0.0.0/8 would open it to the other containers of this network namespace"* ]]
	[ -z "$(ip -n "$JOINED_NS" rule show priority 2)" ]
	[ ! -e "$ROOT/$CID" ]

	moat exec "$first" sh -c "$PROBE"
	[ "${lines[0]}" = "$REFUSED" ]
}

@test "G1 fallback, shared namespace: an allowance left by a deleted container does not reach the next one" {
	operator_config '"egress_allow_private": ["10.0.0.0/8"]'
	in_container --profile egress "$PROBE"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "ok" ]

	operator_config
	in_container --profile egress "$PROBE"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$LEAK"* ]]
	[[ "$output" != *ok* ]]
	[ ! -e "$ROOT/$CID" ]
}

@test "G1 fallback, shared namespace: containers of the same egress settings share it" {
	operator_config '"egress_allow_private": ["10.0.0.0/8"]'
	start_sleeper --profile egress
	in_container --profile egress "$PROBE"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "ok" ]
	[ "${lines[1]}" = "ok" ]
}

@test "G1 fallback, shared namespace: start takes the namespace's lock across its check and install" {
	operator_config
	next_id
	update_config '.process.args = ["sleep", "1000"]'
	moat --profile egress create -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	# Another start (here: the test) holds the lock on the namespace.
	local ns="/run/netns/$JOINED_NS" release="$BATS_TEST_TMPDIR/release"
	local held="$BATS_TEST_TMPDIR/held" ino i
	mkfifo "$release"
	flock "$ns" sh -c "echo held >'$held'; read -r _ <'$release'" &
	HOLDER=$!
	for i in $(seq 1 200); do [ -s "$held" ] && break; sleep 0.05; done
	[ -s "$held" ]
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" start "$CID" &
	local starter=$!
	# start waits on the lock: /proc/locks shows a blocked flock on the
	# namespace's inode, and no rule of the guard is there yet.
	ino="$(stat -Lc %i "$ns")"
	for i in $(seq 1 200); do
		grep -q -- "-> FLOCK .*:$ino " /proc/locks && break
		sleep 0.05
	done
	grep -- "-> FLOCK .*:$ino " /proc/locks
	[ -z "$(ip -n "$JOINED_NS" rule show priority 3)" ]
	echo >"$release"
	wait "$HOLDER"
	HOLDER=
	wait "$starter"
	[ -n "$(ip -n "$JOINED_NS" rule show priority 3)" ]
	moat exec "$CID" sh -c "$PROBE"
	[ "${lines[0]}" = "$REFUSED" ]
}

@test "G1 fallback: start sets no rules in the namespace of a process given the init's pid since" {
	operator_config
	next_id
	update_config '.process.args = ["sleep", "1000"]'
	moat create -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	# pidreuse: the state names a victim, whose pid goes to a process in a
	# network namespace of its own as moat opens /proc/PID/ns/; its routes
	# and rules are listed once moat is done.
	local prep
	prep="$(forge_state_prep "$CID")"
	local check='nsenter -t "$VICTIM_PID" -n sh -c "ip route show table all; ip -6 route show table all; ip rule show"'
	run "$TESTBIN/pidreuse" --at-ns-open --new-netns --after "$check" "$prep" \
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" start "$CID"
	echo "$output" >&2
	[ "$status" -ne 77 ] || skip "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"pid reused"* ]]
	[[ "$output" != *prohibit* ]]
	[[ "$output" == *"moat exited 1"* ]]
}
