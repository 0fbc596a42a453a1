#!/usr/bin/env bats
# What moat does with a resource the host has no cgroup file for (issue 39:
# every host layout). linux.resources.blockIO.weight goes where runc and
# crun put it (blkio.bfq.weight or blkio.weight on v1, io.bfq.weight or
# io.weight on v2); a host without BFQ has neither, and the weight, a
# share and not a limit, is left alone and told on stderr and in the audit
# line, the container runs. Each test establishes which host it is on and
# skips on the other, with the reason.

load helpers
load runtime_helpers

setup() {
	requires_root
	setup_bundle
	ID="w-$BATS_TEST_NUMBER-$$"
	update_config '.process.args = ["sleep", "100"]'
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then CG_V2=true; else CG_V2=false; fi
}

teardown() {
	teardown_bundle
}

# The directory of the container's cgroup that carries the block weight
# ("" where no hierarchy carries blkio).
blkio_dir() {
	if $CG_V2; then
		echo "/sys/fs/cgroup/moat/$1"
	elif [ -d "/sys/fs/cgroup/blkio/moat/$1" ]; then
		echo "/sys/fs/cgroup/blkio/moat/$1"
	fi
}

# The weight file a container's cgroup at $1 has, the BFQ one first, as
# runc and crun look for them; "" if it has none.
weight_file() {
	local d="$1" f
	[ -n "$d" ] || return 0
	for f in blkio.bfq.weight blkio.weight io.bfq.weight io.weight; do
		if [ -f "$d/$f" ]; then
			echo "$d/$f"
			return 0
		fi
	done
}

# Which weight file this host gives a container: made once without a
# weight, looked at, deleted.
host_weight_file() {
	moat create -b "$BUNDLE" "$ID-probe"
	[ "$status" -eq 0 ]
	HOST_WEIGHT="$(weight_file "$(blkio_dir "$ID-probe")")"
	HOST_WEIGHT="${HOST_WEIGHT##*/}"
	moat delete --force "$ID-probe"
	[ "$status" -eq 0 ]
}

@test "blockIO.weight where the host has a weight file: written there, nothing told" {
	host_weight_file
	[ -n "$HOST_WEIGHT" ] || skip "this host has no blkio or io weight file (no BFQ): the next test covers it"
	update_config '.linux.resources.blockIO = {"weight": 300}'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "$warnings" != *blockIO* ]]
	f="$(weight_file "$(blkio_dir "$ID")")"
	cat "$f" >&2
	case "$HOST_WEIGHT" in
	# io.weight takes [1, 10000]: runc's and crun's linear mapping.
	io.weight) grep -qw 2930 "$f" ;;
	*) grep -qw 300 "$f" ;;
	esac
	moat delete --force "$ID"
	[ "$status" -eq 0 ]
}

@test "blockIO.weight where the host has no weight file (no BFQ): the container runs, the weight is told ignored" {
	host_weight_file
	[ -z "$HOST_WEIGHT" ] || skip "this host has $HOST_WEIGHT: the weight is written (previous test)"
	update_config '.linux.resources.blockIO = {"weight": 300}'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	echo "$warnings" | grep -x "moat: create $ID: warning: linux.resources.blockIO.weight: asked 300, ignored (this host .*)"
	[ "$(echo "$warnings" | grep -c blockIO)" -eq 1 ]
	tail -n 1 "$AUDIT_LOG" | jq -e '.overrides[] | select(.kind == "ignored" and .path == "linux.resources.blockIO.weight" and .asked == "300")'
	moat start "$ID"
	[ "$status" -eq 0 ]
	wait_status "$ID" running

	# update tells it the same way, and the other values still apply.
	echo '{"blockIO": {"weight": 500}, "pids": {"limit": 20}}' >"$BUNDLE/res.json"
	moat update -r "$BUNDLE/res.json" "$ID"
	[ "$status" -eq 0 ]
	echo "$warnings" | grep -x "moat: update $ID: warning: linux.resources.blockIO.weight: asked 500, ignored (this host .*)"
	if $CG_V2; then p=/sys/fs/cgroup/moat/$ID; else p=/sys/fs/cgroup/pids/moat/$ID; fi
	[ "$(cat "$p/pids.max")" = 20 ]
	tail -n 1 "$AUDIT_LOG" | jq -e '.overrides[] | select(.kind == "ignored" and .asked == "500")'

	moat delete --force "$ID"
	[ "$status" -eq 0 ]
	assert_nothing_left "$ID"
}

@test "run tells the ignored weight too, and a weight of 0 (unset) asks for nothing" {
	host_weight_file
	[ -z "$HOST_WEIGHT" ] || skip "this host has $HOST_WEIGHT: the weight is written"
	update_config '.linux.resources.blockIO = {"weight": 100} | .process.args = ["true"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "$warnings" == *"linux.resources.blockIO.weight: asked 100, ignored"* ]]
	moat delete --force "$ID"
	update_config '.linux.resources.blockIO = {"weight": 0}'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "$warnings" != *blockIO* ]]
}
