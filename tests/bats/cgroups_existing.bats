#!/usr/bin/env bats
# Cgroups moat did not make, around a container's leaf. A cgroupsPath that
# names an existing one: delete kills and removes everything below the
# leaf, so create refuses a leaf that already holds processes or child
# cgroups, in any hierarchy (create skips that check for a leaf it has
# just made). Child cgroups made below a leaf: delete removes them too
# (it tries one rmdir first, and lists the leaf only when that fails).

load helpers

setup() {
	requires_root
	setup_bundle
	ID="ce-$BATS_TEST_NUMBER-$$"
	CG_TOP="moat-ce-$BATS_TEST_NUMBER-$$"
	update_config --arg p "/$CG_TOP" '.process.args = ["sleep", "100"] | .linux.cgroupsPath = $p'
	# One hierarchy where the leaf exists already: cgroup2 (pure v2, or the
	# hybrid host's unified mount).
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		HIER=/sys/fs/cgroup
	else
		HIER=/sys/fs/cgroup/unified
	fi
	[ -f "$HIER/cgroup.procs" ] || skip "no cgroup2 hierarchy mounted"
	mkdir "$HIER/$CG_TOP"
}

teardown() {
	[ -z "${SLEEPER:-}" ] || { kill "$SLEEPER" 2>/dev/null; wait "$SLEEPER" 2>/dev/null; }
	teardown_bundle
	local d
	for d in /sys/fs/cgroup/"$CG_TOP" /sys/fs/cgroup/*/"$CG_TOP" \
		/sys/fs/cgroup/moat/"$ID" /sys/fs/cgroup/*/moat/"$ID"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}

refused_and_kept() {
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"already holds processes or child cgroups"* ]]
	[ -d "$HIER/$CG_TOP" ]
	[ ! -e "$ROOT/$ID" ]
	# What create made in the other hierarchies is gone again.
	for d in /sys/fs/cgroup/*/"$CG_TOP"; do
		[ "$d" = "$HIER/$CG_TOP" ] || [ ! -d "$d" ]
	done
}

@test "create refuses an existing leaf holding a child cgroup, and leaves it" {
	mkdir "$HIER/$CG_TOP/child"
	refused_and_kept
	[ -d "$HIER/$CG_TOP/child" ]
}

@test "create refuses an existing leaf holding a process, and leaves it" {
	sleep 100 &
	SLEEPER=$!
	echo "$SLEEPER" >"$HIER/$CG_TOP/cgroup.procs"
	refused_and_kept
	kill -0 "$SLEEPER"
	grep -qx "$SLEEPER" "$HIER/$CG_TOP/cgroup.procs"
	# Out again, so that teardown can remove the cgroup.
	echo "$SLEEPER" >"$HIER/cgroup.procs"
}

@test "delete removes child cgroups below the leaf, in every hierarchy" {
	update_config '.process.args = ["sleep", "100"] | del(.linux.cgroupsPath)'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	# What a container (or an engine below it) makes in its cgroup.
	local leaves=() d
	for d in /sys/fs/cgroup/moat/"$ID" /sys/fs/cgroup/*/moat/"$ID"; do
		[ -d "$d" ] || continue
		mkdir -p "$d/sub/subsub" "$d/sub2"
		leaves+=("$d")
	done
	[ "${#leaves[@]}" -ge 1 ]
	moat delete --force "$ID"
	[ "$status" -eq 0 ]
	for d in "${leaves[@]}"; do
		[ ! -e "$d" ] || { echo "left: $d" >&2; find "$d" >&2; false; }
	done
}
