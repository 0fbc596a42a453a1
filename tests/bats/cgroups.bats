#!/usr/bin/env bats
# linux.resources and linux.cgroupsPath, read back from the container's
# cgroup files on the host; the profile's limits win where they are lower
# (G7). Works on cgroup v1/hybrid (limits in the v1 controllers) and on a
# pure v2 host.

load helpers
load runtime_helpers

setup() {
	requires_root
	setup_bundle
	ID="t-$BATS_TEST_NUMBER-$$"
	# A top-level cgroup of this test's own, removed in teardown.
	CG_TOP="moat-test-$BATS_TEST_NUMBER-$$"
	CG_SLICE="moattest${BATS_TEST_NUMBER}x$$"
	update_config '.process.args = ["sleep", "100"]'
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then CG_V2=true; else CG_V2=false; fi
}

teardown() {
	teardown_bundle
	local d
	for d in /sys/fs/cgroup/"$CG_TOP" /sys/fs/cgroup/*/"$CG_TOP" /sys/fs/cgroup/*/moat/"$CG_TOP" /sys/fs/cgroup/*/"$CG_SLICE.slice" \
		/sys/fs/cgroup/"$CG_SLICE.slice"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}

# The directory of cgroup path $1 for controller $2 ("memory", "pids"...).
cg_dir() {
	if $CG_V2; then echo "/sys/fs/cgroup$1"; else echo "/sys/fs/cgroup/$2$1"; fi
}

# One value of the cgroup at path $1: memory, swap (memory+swap, or swap
# alone on v2), pids, cpu ("quota period"), cpus, mems.
cg_value() {
	local p="$1"
	case "$2" in
	memory) if $CG_V2; then cat "$(cg_dir "$p")/memory.max"; else cat "$(cg_dir "$p" memory)/memory.limit_in_bytes"; fi ;;
	swap) if $CG_V2; then cat "$(cg_dir "$p")/memory.swap.max"; else cat "$(cg_dir "$p" memory)/memory.memsw.limit_in_bytes"; fi ;;
	pids) cat "$(cg_dir "$p" pids)/pids.max" ;;
	cpu) if $CG_V2; then cat "$(cg_dir "$p")/cpu.max"; else
		echo "$(cat "$(cg_dir "$p" cpu)/cpu.cfs_quota_us") $(cat "$(cg_dir "$p" cpu)/cpu.cfs_period_us")"; fi ;;
	cpus) cat "$(cg_dir "$p" cpuset)/cpuset.cpus" ;;
	mems) cat "$(cg_dir "$p" cpuset)/cpuset.mems" ;;
	esac
}

# Memory with swap = 0: v1's memory+swap equals the limit, v2's swap is 0.
# A kernel that accounts no swap (swapaccount=0, no memory.memsw.* or
# memory.swap.max) has no file to hold it and moat writes none: nothing to
# read there.
no_swap_for() {
	local f
	f="$(cg_dir "$1")/memory.swap.max"
	$CG_V2 || f="$(cg_dir "$1" memory)/memory.memsw.limit_in_bytes"
	if [ ! -e "$f" ]; then
		echo "no ${f##*/}: this kernel accounts no swap, nothing to check" >&2
		return 0
	fi
	if $CG_V2; then [ "$(cg_value "$1" swap)" = 0 ]; else [ "$(cg_value "$1" swap)" = "$(cg_value "$1" memory)" ]; fi
}

# Every controller directory of cgroup path $1 is gone.
cgroup_gone() {
	! ls -d /sys/fs/cgroup"$1" /sys/fs/cgroup/*"$1" 2>/dev/null | grep -q .
}

@test "no cgroupsPath: /moat/ID, holding the init, with the profile's limits" {
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	p="/moat/$ID"
	grep -qx "$(container_pid "$ID")" "$(cg_dir "$p" pids)/cgroup.procs"
	grep -qx "$(container_pid "$ID")" "$(cg_dir "$p" memory)/cgroup.procs"
	[ "$(cg_value "$p" memory)" = $((512 * 1024 * 1024)) ]
	no_swap_for "$p"
	[ "$(cg_value "$p" pids)" = 64 ]
	[ "$(cg_value "$p" cpu)" = "100000 100000" ]

	moat delete --force "$ID"
	[ "$status" -eq 0 ]
	cgroup_gone "$p"
}

# /moat is kept, as crun and runc keep the parents they make: the next
# container finds it. What delete must remove is the container's own
# cgroup, and any level moat named between /moat and it.
@test "delete leaves /moat but nothing of the container below it, in every hierarchy" {
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	moat delete --force "$ID"
	[ "$status" -eq 0 ]
	cgroup_gone "/moat/$ID"
	[ -d "$(cg_dir /moat pids)" ]

	update_config --arg p "/moat/$CG_TOP/$ID" '.linux.cgroupsPath = $p'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ -d "$(cg_dir "/moat/$CG_TOP/$ID" pids)" ]
	moat delete --force "$ID"
	[ "$status" -eq 0 ]
	cgroup_gone "/moat/$CG_TOP"
	[ -d "$(cg_dir /moat pids)" ]
}

@test "memory: a limit below the profile's applies, swap is 0" {
	update_config '.linux.resources.memory = {"limit": 104857600, "swap": 209715200}'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(cg_value "/moat/$ID" memory)" = 104857600 ]
	no_swap_for "/moat/$ID"
}

@test "memory: a limit above the profile's (or none, or -1) gets the profile's" {
	for limit in 4294967296 -1; do
		update_config --argjson l "$limit" '.linux.resources.memory = {"limit": $l}'
		moat run -d -b "$BUNDLE" "$ID"
		[ "$status" -eq 0 ]
		[ "$(cg_value "/moat/$ID" memory)" = $((512 * 1024 * 1024)) ]
		moat delete --force "$ID"
	done
}

@test "memory: the container cannot use more than its limit" {
	update_config '.linux.resources.memory = {"limit": 16777216}
		| .process.args = ["sh", "-c", "dd if=/dev/zero of=/tmp/fill bs=1M count=48 2>/dev/null; ls -l /tmp/fill | awk \"{print \\$5}\""]'
	moat run -b "$BUNDLE" "$ID"
	# dd is killed or fails; what it wrote is under the limit.
	size=$(echo "$output" | grep -E '^[0-9]+$' | tail -n 1)
	[ -n "$size" ]
	[ "$size" -lt 16777216 ]
}

@test "pids: 20 stays 20, 1000 and unlimited become the profile's 64" {
	for pair in 20:20 1000:64 -1:64 0:64; do
		update_config --argjson l "${pair%%:*}" '.linux.resources.pids = {"limit": $l}'
		moat run -d -b "$BUNDLE" "$ID"
		[ "$status" -eq 0 ]
		[ "$(cg_value "/moat/$ID" pids)" = "${pair##*:}" ]
		moat delete --force "$ID"
		[ "$status" -eq 0 ]
	done
}

@test "pids: the limit holds inside, fork fails past it" {
	update_config '.linux.resources.pids = {"limit": 8}'
	# Counted with a glob: no fork needed once the limit is reached.
	# The inner sh gives up at the first failed fork; its sleeps stay.
	update_config '.process.args = ["sh", "-c", "sh -c \"for i in \\$(seq 1 12); do sleep 100 & done\"; set -- /proc/[0-9]*; echo procs $#"]'
	moat run -b "$BUNDLE" "$ID"
	[[ "$output" == *"can't fork"* ]]
	n=$(echo "$output" | awk '$1 == "procs" {print $2}')
	[ "$n" -le 8 ]
	[ "$n" -ge 2 ]
}

@test "cpu: quota and period below one CPU apply; above it, one CPU in config's period" {
	update_config '.linux.resources.cpu = {"quota": 50000, "period": 100000}'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(cg_value "/moat/$ID" cpu)" = "50000 100000" ]
	moat delete --force "$ID"

	update_config '.linux.resources.cpu = {"quota": 25000, "period": 50000}'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$(cg_value "/moat/$ID" cpu)" = "25000 50000" ]
	moat delete --force "$ID"

	update_config '.linux.resources.cpu = {"quota": 400000, "period": 200000}'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$(cg_value "/moat/$ID" cpu)" = "200000 200000" ]
	moat delete --force "$ID"

	update_config '.linux.resources.cpu = {"quota": -1}'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$(cg_value "/moat/$ID" cpu)" = "100000 100000" ]
}

# The first CPU and memory node this test may use (0 on most hosts, not on
# one whose cgroup or affinity leaves them out).
first_allowed() {
	awk -v k="$1:" '$1 == k { split($2, a, /[-,]/); print a[1] }' /proc/self/status
}

@test "cpuset: cpus and mems are written" {
	local cpu mem
	cpu="$(first_allowed Cpus_allowed_list)"
	mem="$(first_allowed Mems_allowed_list)"
	update_config --arg c "$cpu" --arg m "$mem" '.linux.resources.cpu = {"cpus": $c, "mems": $m}'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(cg_value "/moat/$ID" cpus)" = "$cpu" ]
	[ "$(cg_value "/moat/$ID" mems)" = "$mem" ]
	moat exec "$ID" grep ^Cpus_allowed_list: /proc/self/status
	[ "$(echo "$output" | cut -f 2)" = "$cpu" ]
}

@test "cpuset: cpus the host does not have are a clear error, nothing left" {
	update_config '.linux.resources.cpu = {"cpus": "4095"}'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *cpuset* ]]
	assert_nothing_left "$ID"
}

# v1: a parent moat makes hands its cpus and mems to each new child
# (clone_children), so a create neither reads nor writes them; a child
# under a parent it did not make (no clone_children) is still given them.
@test "cpuset v1: a parent moat makes passes cpus and mems to its children" {
	$CG_V2 && skip "pure cgroup v2: no v1 cpuset hierarchy"
	[ -d /sys/fs/cgroup/cpuset ] || skip "no v1 cpuset hierarchy mounted"
	local top=/sys/fs/cgroup/cpuset
	update_config --arg p "/$CG_TOP/$ID" '.linux.cgroupsPath = $p'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(cat "$top/$CG_TOP/cgroup.clone_children")" = 1 ]
	[ "$(cg_value "/$CG_TOP/$ID" cpus)" = "$(cat "$top/cpuset.cpus")" ]
	[ "$(cg_value "/$CG_TOP/$ID" mems)" = "$(cat "$top/cpuset.mems")" ]
	moat exec "$ID" true
	[ "$status" -eq 0 ]
	moat delete --force "$ID"

	# A parent made by someone else, without clone_children.
	rmdir "$top/$CG_TOP"
	mkdir "$top/$CG_TOP"
	cat "$top/cpuset.cpus" >"$top/$CG_TOP/cpuset.cpus"
	cat "$top/cpuset.mems" >"$top/$CG_TOP/cpuset.mems"
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(cat "$top/$CG_TOP/cgroup.clone_children")" = 0 ]
	[ "$(cg_value "/$CG_TOP/$ID" cpus)" = "$(cat "$top/cpuset.cpus")" ]
	[ "$(cg_value "/$CG_TOP/$ID" mems)" = "$(cat "$top/cpuset.mems")" ]
}

@test "cgroupsPath absolute: the cgroup is exactly there" {
	update_config --arg p "/$CG_TOP/$ID" '.linux.cgroupsPath = $p'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	p="/$CG_TOP/$ID"
	grep -qx "$(container_pid "$ID")" "$(cg_dir "$p" pids)/cgroup.procs"
	[ "$(cg_value "$p" pids)" = 64 ]
	[ ! -e "$(cg_dir "/moat/$ID" pids)" ]
	moat delete "$ID"
	[ "$status" -eq 1 ]
	moat delete --force "$ID"
	[ "$status" -eq 0 ]
	cgroup_gone "$p"
}

@test "cgroupsPath relative: below the hierarchy's root" {
	update_config --arg p "$CG_TOP/$ID" '.linux.cgroupsPath = $p'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	grep -qx "$(container_pid "$ID")" "$(cg_dir "/$CG_TOP/$ID" memory)/cgroup.procs"
}

@test "cgroupsPath in systemd form slice:prefix:name maps to the slice's cgroupfs path" {
	# systemd nests a slice per dash: no dash in the test's own name.
	update_config --arg p "$CG_SLICE-pod1.slice:cri-moat:$ID" '.linux.cgroupsPath = $p'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	p="/$CG_SLICE.slice/$CG_SLICE-pod1.slice/cri-moat-$ID.scope"
	grep -qx "$(container_pid "$ID")" "$(cg_dir "$p" pids)/cgroup.procs"
	[ "$(cg_value "$p" pids)" = 64 ]
	moat delete --force "$ID"
	cgroup_gone "$p"
}

@test "cgroupsPath with .. is refused, nothing created anywhere" {
	for p in "/$CG_TOP/../../$CG_TOP-escape" "$CG_TOP/../$CG_TOP-x" "../../../../$CG_TOP" "/$CG_TOP/.." \
		"/$CG_TOP/./x" "../$CG_TOP.slice:p:$ID"; do
		update_config --arg p "$p" '.linux.cgroupsPath = $p'
		moat create -b "$BUNDLE" "$ID"
		[ "$status" -eq 1 ]
		[[ "$output" == *cgroupsPath* ]]
		assert_nothing_left "$ID"
		! ls -d /sys/fs/cgroup/"$CG_TOP"* /sys/fs/cgroup/*/"$CG_TOP"* 2>/dev/null | grep -q .
	done
}

@test "a failed create removes the cgroup it made" {
	update_config --arg p "/$CG_TOP/$ID" '.linux.cgroupsPath = $p | .process.args = ["/no/such/binary"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -ne 0 ]
	assert_nothing_left "$ID"
	cgroup_gone "/$CG_TOP/$ID"

	update_config '.hooks.prestart = [{"path": "/bin/false"}]'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	assert_nothing_left "$ID"
	cgroup_gone "/$CG_TOP/$ID"
}

# hugetlb.SIZE's limit file of cgroup path $1, in whichever hierarchy holds
# the controller: v2, a v1 hugetlb hierarchy, or a hybrid host's cgroup2
# mount (a fresh Debian host with systemd's hybrid layout has it there).
# A plain directory there is not a hierarchy: Podman's cgroupfs manager
# makes one on /sys/fs/cgroup's tmpfs for every controller it expects.
hugetlb_limit() {
	if $CG_V2; then
		cat "/sys/fs/cgroup$1/hugetlb.$2.max"
	elif [ "$(stat -f -c %T /sys/fs/cgroup/hugetlb 2>/dev/null)" = cgroupfs ]; then
		cat "/sys/fs/cgroup/hugetlb$1/hugetlb.$2.limit_in_bytes"
	else
		cat "/sys/fs/cgroup/unified$1/hugetlb.$2.max"
	fi
}

requires_hugetlb_2mb() {
	[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ] || skip "no 2MB huge pages on this host"
	grep -qw hugetlb /proc/cgroups || skip "no hugetlb controller"
	# Bound to a v1 hierarchy (column 2 not 0) that is mounted nowhere: the
	# kernel can keep one after its last unmount, and then neither v1 nor
	# cgroup2 reaches the controller until a reboot.
	if [ "$(awk '$1 == "hugetlb" { print $2 }' /proc/cgroups)" != 0 ] &&
		! grep -qE ' - cgroup [^ ]+ ([^ ]*,)?hugetlb(,|$)' /proc/self/mountinfo; then
		skip "hugetlb is held by a v1 hierarchy mounted nowhere (a reboot gives it back to cgroup2)"
	fi
}

@test "hugepageLimits: each page size's limit is written; a size left out gets the memory limit (G7)" {
	requires_hugetlb_2mb
	update_config '.linux.resources.memory = {"limit": 104857600}
		| .linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 4194304}]'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(hugetlb_limit "/moat/$ID" 2MB)" = 4194304 ]
	moat delete --force "$ID"
	# Not named: capped at the memory limit, as huge pages are memory that
	# the memory limit does not count.
	update_config '.linux.resources.hugepageLimits = []'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(hugetlb_limit "/moat/$ID" 2MB)" = 104857600 ]
}

@test "hugepageLimits above the memory limit are clamped to it, and told" {
	requires_hugetlb_2mb
	update_config '.linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 1099511627776}]'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(hugetlb_limit "/moat/$ID" 2MB)" = $((512 * 1024 * 1024)) ]
	[[ "$warnings" == *"linux.resources.hugepageLimits[2MB]: asked 1099511627776, holds 536870912 (above the profile's limit)"* ]]
}

@test "hugepageLimits: a page size the host lacks, or no page size, is a clear error, nothing left" {
	requires_hugetlb_2mb
	update_config '.linux.resources.hugepageLimits = [{"pageSize": "3MB", "limit": 4194304}]'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"linux.resources.hugepageLimits: this host has no 3MB huge pages"* ]]
	cgroup_gone "/moat/$ID"
	[ ! -e "$ROOT/$ID" ]
	update_config '.linux.resources.hugepageLimits = [{"pageSize": "../../x", "limit": 1}]'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "moat: run $ID: config.json: linux.resources.hugepageLimits[0].pageSize: \"../../x\" is not a page size (\"2MB\", \"1GB\", \"64KB\")" ]
}
