#!/usr/bin/env bats
# One decision, saved whole: create judges once and saves the decision
# (ROOT/ID/policy.json, the final spec with it); start, exec, update and
# delete obey it as saved, whatever the operator config says by then, and
# refuse a state dir that does not hold one.

load profile_helpers

GUARANTEE=decision

setup() {
	requires_root
}

teardown() {
	[ -n "${USERNS_PID:-}" ] && kill -9 "$USERNS_PID" 2>/dev/null
	teardown_profile
}

# The container's pids.max, read on the host (v1's pids hierarchy where
# there is one, else v2's).
pids_max() {
	local pid rel
	pid=$("$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" state "$1" | jq -r .pid)
	rel=$(awk -F: '$2 == "pids" {print $3}' "/proc/$pid/cgroup")
	if [ -n "$rel" ]; then
		cat "/sys/fs/cgroup/pids$rel/pids.max"
	else
		rel=$(awk -F: '$1 == 0 {print $3}' "/proc/$pid/cgroup")
		cat "/sys/fs/cgroup$rel/pids.max"
	fi
}

@test "decision: exec and update after the operator config changed get what create decided (the id pool, the limits)" {
	prepare_bundle spec
	# The operator's pool is not the built-in one, and config.json maps
	# its own ids right where the built-in pool would be: allowed at create.
	printf '{"audit_log": "%s", "limits": {"pids": 50, "nofile": 512}, "userns": {"first_id": 3221225472, "blocks": 1, "pool_dir": "%s"}}\n' \
		"$AUDIT_LOG" "$BUNDLE/pool" >"$MOAT_CONFIG"
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 1073741824, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 1073741824, "size": 65536}]'
	start_sleeper
	# The operator config changes: the built-in pool, lower limits.
	printf '{"audit_log": "%s", "limits": {"pids": 20, "nofile": 256}}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
	moat exec "$CID" sh -c 'ulimit -n; cat /proc/self/uid_map'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 512 ]
	[ "$(awk '{print $1, $2, $3}' <<<"${lines[1]}")" = "0 1073741824 65536" ]
	# update: the ceiling create saved (50), not today's (20).
	moat update --pids-limit 40 "$CID"
	[ "$status" -eq 0 ]
	[ "$(pids_max "$CID")" = 40 ]
}

@test "decision: delete gives a G12 block back to the pool create took it from, after the operator moved the pool" {
	prepare_bundle spec
	printf '{"audit_log": "%s", "userns": {"first_id": 3221225472, "blocks": 1, "pool_dir": "%s"}}\n' \
		"$AUDIT_LOG" "$BUNDLE/pool-a" >"$MOAT_CONFIG"
	start_sleeper
	[ -e "$BUNDLE/pool-a/3221225472" ]
	printf '{"audit_log": "%s", "userns": {"first_id": 3221225472, "blocks": 1, "pool_dir": "%s"}}\n' \
		"$AUDIT_LOG" "$BUNDLE/pool-b" >"$MOAT_CONFIG"
	moat delete --force "$CID"
	[ "$status" -eq 0 ]
	[ ! -e "$ROOT/$CID" ]
	[ ! -e "$BUNDLE/pool-a/3221225472" ]
}

@test "decision: the saved spec is the final one (the hardened bind, the profile's scratch mounts, the user namespace)" {
	prepare_bundle spec
	mkdir -p "$BUNDLE/srv"
	update_config --arg s "$BUNDLE/srv" '.mounts += [{"destination": "/srv", "type": "bind", "source": $s, "options": ["rbind"]}]'
	start_sleeper
	spec="$ROOT/$CID/policy.json"
	jq -e '.version == 5' "$spec"
	# The bundle is writable but never executable (G13), and the init
	# got it so: the saved spec says so too.
	jq -e '.spec.mounts[] | select(.destination == "/srv") | .options | index("noexec")' "$spec"
	jq -e '.spec.mounts[] | select(.destination == "/tmp" and .type == "tmpfs")' "$spec"
	jq -e '.spec.linux.namespaces[] | select(.type == "user")' "$spec"
	jq -e '.spec.root.readonly == true and .spec.process.noNewPrivileges == true' "$spec"
	moat exec "$CID" sh -c 'mount | grep " /srv "'
	[ "$status" -eq 0 ]
	[[ "$output" == *noexec* ]]
}

@test "decision: a state dir without a saved decision (an older moat's) is refused with a clear error; delete still cleans up" {
	prepare_bundle spec
	start_sleeper
	cp "$ROOT/$CID/policy.json" "$BUNDLE/policy.json.saved"
	rm "$ROOT/$CID/policy.json"
	# exec's own failures exit 255, as runc's.
	moat exec "$CID" true
	[ "$status" -eq 255 ]
	[ "$output" = "moat: exec $CID: no policy.json in its state dir (made by an older moat): delete the container and create it again" ]
	moat update --pids-limit 10 "$CID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"made by an older moat"* ]]
	echo '{"version": 1, "profile": {"name": "strict", "egress": false}, "overrides": []}' >"$ROOT/$CID/policy.json"
	moat exec "$CID" true
	[ "$status" -eq 255 ]
	[[ "$output" == "moat: exec $CID: policy.json: version 1, written by another moat"*"delete the container and create it again" ]]
	# Version 4: the format before lists held by the guard's programs were
	# saved as counts ("held": true); each moat refuses the other's.
	jq '.version = 4' "$BUNDLE/policy.json.saved" >"$ROOT/$CID/policy.json"
	moat exec "$CID" true
	[ "$status" -eq 255 ]
	[[ "$output" == "moat: exec $CID: policy.json: version 4, written by another moat"*"delete the container and create it again" ]]
	moat delete --force "$CID"
	[ "$status" -eq 0 ]
	[ ! -e "$ROOT/$CID" ]
}

@test "decision: a user namespace joined by path that maps host root is judged on the host before anything is set up, and the refusal is in the audit line" {
	prepare_bundle spec
	unshare --user --map-root-user sleep 1000 &
	USERNS_PID=$!
	for _ in $(seq 100); do
		[ "$(readlink "/proc/$USERNS_PID/ns/user")" != "$(readlink /proc/self/ns/user)" ] && break
		sleep 0.05
	done
	update_config --arg p "/proc/$USERNS_PID/ns/user" '.linux.namespaces += [{"type": "user", "path": $p}]
		| del(.linux.uidMappings, .linux.gidMappings)'
	next_id
	moat run -b "$BUNDLE" "$CID" true
	kill -9 "$USERNS_PID"
	wait "$USERNS_PID" || true
	[ "$status" -eq 1 ]
	[ "$output" = "moat: run $CID: user namespace /proc/$USERNS_PID/ns/user: the user namespace joined maps host uid 0: container root would be host root" ]
	[ ! -e "$ROOT/$CID" ]
	audit_has "$CID" '.overrides[] | select(.path == "linux.namespaces.user" and .kind == "refused")'
}

# Create and start on a host with no cgroup v2 hierarchy (a mount namespace
# of the test's own where /sys/fs/cgroup/unified is unmounted), so that the
# network guard is the fallback start installs.
create_start_without_cgroup2() {
	unshare -m --propagation private sh -c '
		umount -l /sys/fs/cgroup/unified 2>/dev/null || true
		[ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" != cgroup2fs ] || exit 3
		"$@"' sh "$@"
}

@test "decision: start's fallback guard (no cgroup v2) installs the lists create judged, after the operator config changed" {
	[ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] ||
		[ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ] ||
		skip "needs a hybrid host (cgroup2 at /sys/fs/cgroup/unified) to hide cgroup v2 from moat"
	prepare_bundle spec
	add_testbin sysprobe
	# At create: egress, and a public range the operator denies.
	printf '{"audit_log": "%s", "profile": "egress", "egress_deny": ["198.51.100.0/24"]}\n' \
		"$AUDIT_LOG" >"$MOAT_CONFIG"
	next_id
	update_config '.process.args = ["sysprobe", "connect", "198.51.100.7", "80"]'
	create_start_without_cgroup2 "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" \
		create -b "$BUNDLE" "$CID" >"$BUNDLE/$CID.out" 2>&1 </dev/null
	[ "$(jq -r .netguard "$ROOT/$CID/state.json")" = fallback ]
	# Before start the operator drops the entry: start obeys create.
	printf '{"audit_log": "%s", "profile": "egress"}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
	run create_start_without_cgroup2 "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" start "$CID"
	[ "$status" -eq 0 ]
	wait_status "$CID" stopped
	cat "$BUNDLE/$CID.out" >&2
	# A prohibit rule answers EACCES; with no rule, the fresh namespace
	# has no route there (ENETUNREACH).
	grep -q "Permission denied" "$BUNDLE/$CID.out"
}
