#!/usr/bin/env bats
# G12: container root is not host root. Every container gets a user
# namespace whose ids 0-65535 are a block of 65536 host ids no other live
# container holds; the rootfs and the engines' volumes are idmapped so they
# still look right inside; host files elsewhere belong to nobody; per-user
# quotas are the block's, not host root's. Checked from inside, and from
# the host only for what the host sees (a file's owner, root's quota).

load profile_helpers

GUARANTEE=g12

setup() {
	requires_root
	VOLUME=""
	HOSTNS_PID=""
}

teardown() {
	[ -n "${HOSTNS_PID:-}" ] && kill -9 "$HOSTNS_PID" 2>/dev/null
	[ -n "${OVL:-}" ] && umount "$OVL/merged" 2>/dev/null
	[ -n "${SUBMOUNT:-}" ] && umount "$SUBMOUNT" 2>/dev/null
	[ -n "$VOLUME" ] && mountpoint -q "$VOLUME" && umount "$VOLUME"
	[ -n "$VOLUME" ] && rm -rf "$(dirname "$VOLUME")"
	[ -n "${NETNS:-}" ] && ip netns del "$NETNS" 2>/dev/null
	teardown_profile
}

# The host uid of a live container's init (Uid: real effective saved fs).
host_uid() {
	local pid
	pid=$("$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" state "$1" | jq -r .pid)
	awk '/^Uid:/ { print $2 }' "/proc/$pid/status"
}

check_mapped_root() {
	in_container 'id -u; id -g; cat /proc/self/uid_map /proc/self/gid_map
		stat -c "%u:%g" /bin/busybox
		grep CapEff /proc/self/status'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" = 0 ]
	# One line each: 0 onto a 65536-block of the pool, not 0 0 4294967295.
	read -r inside outside count <<<"${lines[2]}"
	[ "$inside" = 0 ]
	[ "$count" = 65536 ]
	[ "$outside" -ge $((0x40000000)) ]
	[ $((outside % 65536)) -eq 0 ]
	[ "${lines[3]}" = "${lines[2]}" ]
	# The host-root-owned image shows as container root's (idmapped).
	[ "${lines[4]}" = 0:0 ]
	[ "${lines[5]}" = "CapEff:	0000000000000000" ]
	[ "${#lines[@]}" -eq 6 ]
}

@test "g12: inside, uid_map maps 0-65535 onto a block of the pool, nothing onto host 0 (moat spec)" {
	prepare_bundle spec
	check_mapped_root
	audit_has "$CID" '.overrides[] | select(.path == "linux.namespaces.user" and .kind == "added")'
	audit_has "$CID" 'select((.userns // "") | startswith("0 ")) | select(any(.overrides[]; .path == "linux.uidMappings") | not)'
}

@test "g12: the permissive config gets a user namespace too" {
	prepare_bundle permissive
	check_mapped_root
}

@test "g12: moat state says which block a container holds; the host sees its init as that uid" {
	prepare_bundle spec
	start_sleeper
	moat state "$CID"
	[ "$status" -eq 0 ]
	map=$(jq -r .moatUserns <<<"$output")
	uid=$(host_uid "$CID")
	[ "$map" = "0 $uid 65536" ]
	[ "$uid" -ge $((0x40000000)) ]
}

@test "g12: two live containers hold disjoint blocks" {
	prepare_bundle spec
	start_sleeper
	a=$(host_uid "$CID")
	start_sleeper
	b=$(host_uid "$CID")
	[ $((a % 65536)) -eq 0 ] && [ $((b % 65536)) -eq 0 ]
	[ "$a" -ne "$b" ]
	# Blocks are 65536 wide: different starts are disjoint ranges.
	[ $((a > b ? a - b : b - a)) -ge 65536 ]
}

@test "g12: a host-root-owned file bound read-write is not writable from inside, and belongs to nobody" {
	prepare_bundle spec
	mkdir -p "$BUNDLE/host"
	echo original >"$BUNDLE/host/rootfile"
	chmod 644 "$BUNDLE/host/rootfile"
	update_config --arg s "$BUNDLE/host/rootfile" \
		'.mounts += [{"destination": "/mnt/rootfile", "type": "bind", "source": $s, "options": ["rbind", "rw"]}]'
	in_container 'stat -c "%u:%g" /mnt/rootfile; echo changed >/mnt/rootfile && echo WROTE; chmod 666 /mnt/rootfile && echo CHMOD; cat /mnt/rootfile'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 65534:65534 ]
	[[ "${lines[1]}" == *"Permission denied"* ]]
	[[ "${lines[2]}" == *"Operation not permitted"* ]]
	[ "${lines[3]}" = original ]
	[ "$(cat "$BUNDLE/host/rootfile")" = original ]
}

@test "g12: a file the container writes in an engine volume shows on the host with the owner it has inside" {
	prepare_bundle spec
	# A Docker-style named volume: one of the engines' writable trees (G5),
	# idmapped.
	VOLUME="/var/lib/docker/volumes/moat-g12-$$-$RANDOM/_data"
	mkdir -p "$VOLUME"
	update_config --arg s "$VOLUME" \
		'.mounts += [{"destination": "/data", "type": "bind", "source": $s, "options": ["rbind", "rw"]}]'
	start_sleeper
	moat exec "$CID" sh -c 'stat -c "%u:%g" /data; touch /data/by-root && stat -c "%u:%g" /data/by-root'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0:0 ]
	[ "${lines[1]}" = 0:0 ]
	moat exec --user 1000:1000 "$CID" sh -c 'touch /data/by-1000 2>&1; echo $?'
	[ "$status" -eq 0 ]
	# A fresh root-owned volume dir is 755: uid 1000 may not write there.
	[ "${lines[-1]}" != 0 ]
	chmod 1777 "$VOLUME"
	moat exec --user 1000:1000 "$CID" touch /data/by-1000
	[ "$status" -eq 0 ]
	[ "$(stat -c %u:%g "$VOLUME/by-root")" = 0:0 ]
	[ "$(stat -c %u:%g "$VOLUME/by-1000")" = 1000:1000 ]
}

@test "g12: an engine volume the kernel cannot idmap (an overlay) is left as it is: found before judging, told on stderr, in the audit line and in the saved decision" {
	prepare_bundle spec
	VOLUME="/var/lib/docker/volumes/moat-g12-$$-$RANDOM/_data"
	mkdir -p "$VOLUME" "$BUNDLE/vol/lower" "$BUNDLE/vol/upper" "$BUNDLE/vol/work"
	echo host >"$BUNDLE/vol/lower/file"
	# overlayfs cannot be idmapped (EINVAL), whatever the kernel.
	mount -t overlay overlay -o "lowerdir=$BUNDLE/vol/lower,upperdir=$BUNDLE/vol/upper,workdir=$BUNDLE/vol/work" "$VOLUME"
	update_config --arg s "$VOLUME" \
		'.mounts += [{"destination": "/data", "type": "bind", "source": $s, "options": ["rbind", "rw"]}]'
	start_sleeper
	has_line "moat: warning: idmap /data: not idmapped (Invalid argument): host-owned files show as nobody (65534) inside"
	moat exec "$CID" stat -c %u:%g /data/file
	[ "$status" -eq 0 ]
	[ "$output" = 65534:65534 ]
	audit_has "$CID" '.overrides[] | select(.path == "idmap /data" and (.enforced | startswith("not idmapped (Invalid argument)")))'
	jq -e '.overrides[] | select(.path == "idmap /data")' "$ROOT/$CID/policy.json"
}

@test "g12: the container exhausts its own inotify quota; host root's stays whole" {
	prepare_bundle spec
	add_testbin inotifyfill
	cat /proc/sys/fs/inotify/max_user_instances >&2
	update_config '.process.args = ["inotifyfill", "fill"]'
	next_id
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" run -d -b "$BUNDLE" "$CID" >"$BUNDLE/$CID.out" 2>&1 </dev/null
	for _ in $(seq 1 100); do
		grep -q opened "$BUNDLE/$CID.out" && break
		sleep 0.1
	done
	cat "$BUNDLE/$CID.out" >&2
	# The container ran into its limit (as many as host root may hold,
	# but counted against its own block's uid) ...
	grep -Eq '^opened [0-9]+: Too many open files \(errno 24\)$' "$BUNDLE/$CID.out"
	n=$(sed -n 's/^opened \([0-9]*\):.*/\1/p' "$BUNDLE/$CID.out")
	[ "$n" -ge 1 ]
	# ... while it holds them, host root can still make one.
	run "$TESTBIN/inotifyfill" one
	echo "host root: $output" >&2
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
}

@test "g12: a config.json mapping that reaches host uid 0 is refused, nothing left behind" {
	prepare_bundle spec
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	next_id
	moat run -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[ "$output" = "moat: run $CID: linux.uidMappings[0]: maps host id 0: container root would be host root (profile strict)" ]
	[ ! -e "$ROOT/$CID" ]
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 1, "size": 1}, {"containerID": 1, "hostID": 0, "size": 1}]'
	moat run -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"linux.gidMappings[1]: maps host id 0"* ]]
	[ ! -e "$ROOT/$CID" ]
}

@test "g12: joining the host's user namespace by path is refused" {
	prepare_bundle spec
	update_config --arg p "/proc/$$/ns/user" '.linux.namespaces += [{"type": "user", "path": $p}]'
	next_id
	moat run -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[ "$output" = "moat: run $CID: refusing to join the host's user namespace: container root would be host root (G12, profile strict)" ]
	[ ! -e "$ROOT/$CID" ]
}

@test "g12: podman's --uidmap config (its own mapping, a rootfs owned by the mapped ids) runs as asked" {
	prepare_bundle podman.18
	chown -R 100000:100000 "$BUNDLE/rootfs"
	in_container 'id -u; cat /proc/self/uid_map; stat -c %u /bin/busybox; touch /tmp/x && echo tmp-ok'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	[ "$(awk '{print $1, $2, $3}' <<<"${lines[1]}")" = "0 100000 65536" ]
	[ "${lines[2]}" = 0 ]
	[ "${lines[3]}" = tmp-ok ]
}

@test "g12: a joined network namespace: sysfs shows its interfaces, its sysctls are set, exec works" {
	prepare_bundle spec
	NETNS="moat-g12-$$-$RANDOM"
	ip netns add "$NETNS"
	ip -n "$NETNS" link add "g12d$$" type veth peer name "g12e$$"
	# Podman's CNI network: a sysctl of that namespace, which the init
	# (in a user namespace that does not own it) may not write: moat does,
	# its gids the container's.
	update_config --arg p "/var/run/netns/$NETNS" \
		'.linux.namespaces |= map(if .type == "network" then .path = $p else . end)
		| .linux.sysctl = {"net.ipv4.ping_group_range": "0 0"}'
	start_sleeper
	moat exec "$CID" sh -c 'ls /sys/class/net | sort | tr "\n" " "; id -u; readlink /proc/self/ns/net; cat /proc/sys/net/ipv4/ping_group_range'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "g12d$$ g12e$$ lo 0" ]
	[ "${lines[1]}" = "net:[$(stat -L -c %i "/var/run/netns/$NETNS")]" ]
	[ "$(tr -s ' \t' '  ' <<<"${lines[2]}")" = "0 0" ]
}

@test "g12: the operator may turn it off (profile show and the audit line say so); an annotation cannot" {
	prepare_bundle spec
	moat profile show
	[ "$(jq -r .userns.enabled <<<"$output")" = true ]
	moat features
	[[ "$(jq -r '.annotations["run.moat.userns"]' <<<"$output")" == on* ]]
	# An annotation is no operator.
	update_config '.annotations["run.moat.userns"] = "false"'
	in_container 'cat /proc/self/uid_map'
	[ "$status" -eq 0 ]
	[ "$(awk '{print $1, $2}' <<<"${lines[0]}")" != "0 0" ]
	printf '{"audit_log": "%s", "userns": {"enabled": false}}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
	moat profile show
	[ "$(jq -r .userns.enabled <<<"$output")" = false ]
	moat features
	[ "$(jq -r '.annotations["run.moat.userns"]' <<<"$output")" = "off (operator config)" ]
	in_container 'cat /proc/self/uid_map'
	[ "$status" -eq 0 ]
	[ "$(awk '{print $1, $2, $3}' <<<"${lines[0]}")" = "0 0 4294967295" ]
	audit_has "$CID" '.overrides[] | select(.path == "linux.namespaces.user" and .kind == "ignored" and (.enforced | contains("turned off")))'
}

@test "g12: the pool: a block is never handed out twice while its holder lives; a stale record is taken again" {
	prepare_bundle spec
	POOL="$BUNDLE/pool"
	printf '{"audit_log": "%s", "userns": {"first_id": 3221225472, "blocks": 1, "pool_dir": "%s"}}\n' \
		"$AUDIT_LOG" "$POOL" >"$MOAT_CONFIG"
	# A record left by a container whose state dir is gone (a crash).
	mkdir -m 700 "$POOL"
	echo "$BUNDLE/gone-root/gone-id" >"$POOL/3221225472"
	start_sleeper
	first="$CID"
	[ "$(host_uid "$first")" = 3221225472 ]
	[ "$(cat "$POOL/3221225472")" = "$(realpath "$ROOT")/$first" ]
	next_id
	moat run -d -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"every block of the id pool is held (1 blocks from host id 3221225472"* ]]
	[ ! -e "$ROOT/$CID" ]
	moat delete --force "$first"
	[ "$status" -eq 0 ]
	[ ! -e "$POOL/3221225472" ]
	start_sleeper
	[ "$(host_uid "$CID")" = 3221225472 ]
}

@test "g12: moat killed mid-create, then delete --force frees the block" {
	prepare_bundle spec
	POOL="$BUNDLE/pool"
	printf '{"audit_log": "%s", "userns": {"first_id": 3221225472, "blocks": 4, "pool_dir": "%s"}}\n' \
		"$AUDIT_LOG" "$POOL" >"$MOAT_CONFIG"
	# A createRuntime hook that never returns holds create after the block
	# is taken and the init is cloned.
	update_config '.hooks.createRuntime = [{"path": "/bin/sleep", "args": ["sleep", "100"]}]'
	next_id
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" create -b "$BUNDLE" "$CID" >/dev/null 2>&1 </dev/null &
	pid=$!
	for _ in $(seq 1 100); do
		[ -n "$(ls "$POOL" 2>/dev/null)" ] && pgrep -P "$pid" -x sleep >/dev/null && break
		sleep 0.1
	done
	hook=$(pgrep -P "$pid" -x sleep)
	[ "$(ls "$POOL" | wc -l)" = 1 ]
	kill -9 "$pid"
	wait "$pid" || true
	kill "$hook"
	moat delete --force "$CID"
	[ "$status" -eq 0 ]
	[ -z "$(ls "$POOL")" ]
	[ ! -e "$ROOT/$CID" ]
}

@test "g12: 200 creates at once get 200 distinct blocks" {
	prepare_bundle spec
	update_config '.process.args = ["true"]'
	ids=()
	for i in $(seq 1 200); do
		ids+=("$GUARANTEE-$BATS_TEST_NUMBER-$$-p$i")
	done
	for id in "${ids[@]}"; do
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" create -b "$BUNDLE" "$id" >/dev/null 2>&1 </dev/null &
	done
	wait
	n=0
	for id in "${ids[@]}"; do
		jq -r .usernsHostId "$ROOT/$id/state.json"
		n=$((n + 1))
	done >"$BUNDLE/blocks"
	for id in "${ids[@]}"; do
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" delete --force "$id" >/dev/null 2>&1 || true
	done
	[ "$n" -eq 200 ]
	[ "$(sort -u "$BUNDLE/blocks" | grep -c .)" -eq 200 ]
	! grep -qx 0 "$BUNDLE/blocks"
	for id in "${ids[@]}"; do
		! grep -qxF "$(realpath "$ROOT")/$id" /run/moat-idpool/* 2>/dev/null
	done
}

# The pid of container $1's init.
init_pid() {
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" state "$1" | jq -r .pid
}

# A host process in namespaces of its own (unshare FLAGS...): its pid in
# $child, unshare's in $HOSTNS_PID (teardown kills it).
start_ns_holder() {
	unshare --kill-child "$@" sleep 1000 >/dev/null 2>&1 3>&- &
	HOSTNS_PID=$!
	for _ in $(seq 1 50); do
		child=$(pgrep -P "$HOSTNS_PID" -x sleep) && break
		sleep 0.1
	done
	[ -n "$child" ]
}

# Its sleep is pid 1 of its namespace: SIGKILL, through --kill-child.
stop_ns_holder() {
	kill -9 "$HOSTNS_PID"
	wait "$HOSTNS_PID" || true
	HOSTNS_PID=""
}

# Make the bundle's config join namespace TYPE (pid, cgroup, mount) by
# PATH.
join_ns() {
	update_config --arg t "$1" --arg p "$2" \
		'.linux.namespaces |= (map(select(.type != $t)) + [{"type": $t, "path": $p}])'
}

@test "g12: two containers sharing a pid namespace (docker --pid container:X) share its user namespace and block: each sees the other's processes" {
	prepare_bundle spec
	start_sleeper
	first="$CID"
	join_ns pid "/proc/$(init_pid "$first")/ns/pid"
	start_sleeper
	second="$CID"
	# The namespace adopted is a fact of the container, not an override.
	joined="moat container $first's, whose namespace /proc/$(init_pid "$first")/ns/pid it shares"
	audit_has "$second" "select(.userns_joined == \"$joined\" and (.userns | startswith(\"0 \")))"
	audit_has "$second" 'select(.verb == "run" and (any(.overrides[]; .path == "linux.namespaces.user" and .kind == "changed") | not))'
	moat exec "$second" sh -c 'ps -o pid,args | grep -c "[s]leep 1000"; readlink /proc/self/ns/user; cat /proc/self/uid_map /proc/self/gid_map; id -u; stat -c %u:%g /bin/busybox'
	[ "$status" -eq 0 ]
	# Both sleeps, the first's as pid 1.
	[ "${lines[0]}" = 2 ]
	userns="${lines[1]}"
	read -r inside outside count <<<"${lines[2]}"
	[ "$inside" = 0 ] && [ "$count" = 65536 ]
	[ "$outside" -ge $((0x40000000)) ]
	[ "${lines[3]}" = "${lines[2]}" ]
	[ "${lines[4]}" = 0 ]
	[ "${lines[5]}" = 0:0 ]
	[ "${#lines[@]}" -eq 6 ]
	moat exec "$first" sh -c 'ps -o pid,args | grep "[s]leep 1000" | awk "{print \$1}" | tr "\n" " "; echo; readlink /proc/self/ns/user; cat /proc/self/uid_map'
	[ "$status" -eq 0 ]
	# Its own pid 1 and the second's sleep.
	[[ "${lines[0]}" =~ ^1\ [0-9]+\ $ ]]
	[ "${lines[1]}" = "$userns" ]
	[ "$(awk '{print $1, $2, $3}' <<<"${lines[2]}")" = "0 $outside 65536" ]
	# One block, two holders, in the pool's record.
	[ "$(host_uid "$first")" = "$outside" ]
	[ "$(host_uid "$second")" = "$outside" ]
	[ "$(cat "/run/moat-idpool/$outside")" = "$(realpath "$ROOT")/$first
$(realpath "$ROOT")/$second" ]
}

@test "g12: a holder whose init's pid went to another process of its user namespace is not taken for live (no block adopted from it)" {
	prepare_bundle spec
	start_sleeper
	first="$CID"
	init="$(init_pid "$first")"
	join_ns pid "/proc/$init/ns/pid"
	next_id
	# pidreuse: the first's state names a victim in its user namespace,
	# whose pid goes, as moat reads the victim's uid_map, to another
	# process of that namespace (as to a process of a container that
	# shares it, once the first's init has exited).
	# moat's output to a file: a container made would hold run's pipe.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		run "$TESTBIN/pidreuse" --at-open uid_map --in-userns "/proc/$init/ns/user" \
		"$(forge_state_prep "$first")" \
		sh -c 'exec "$@" >"$0" 2>&1 </dev/null' "$BUNDLE/create.out" \
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" create -b "$BUNDLE" "$CID"
	echo "$output" >&2
	cat "$BUNDLE/create.out" >&2
	[ "$status" -ne 77 ] || skip "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"pid reused"* ]]
	[[ "$output" == *"moat exited 1"* ]]
	[ "$(cat "$BUNDLE/create.out")" = "moat: create $CID: namespace /proc/$init/ns/pid: joined by path, it belongs to a user namespace that is not a live moat container's: the container's root (G12) could not use it" ]
	[ ! -e "$ROOT/$CID" ]
}

@test "g12: a pid namespace shared by two containers keeps its block while any holder's state lives; delete of one does not free it" {
	prepare_bundle spec
	POOL="$BUNDLE/pool"
	printf '{"audit_log": "%s", "userns": {"first_id": 3221225472, "blocks": 1, "pool_dir": "%s"}}\n' \
		"$AUDIT_LOG" "$POOL" >"$MOAT_CONFIG"
	start_sleeper
	first="$CID"
	join_ns pid "/proc/$(init_pid "$first")/ns/pid"
	start_sleeper
	second="$CID"
	start_sleeper
	third="$CID"
	[ "$(host_uid "$third")" = 3221225472 ]
	[ "$(wc -l <"$POOL/3221225472")" = 3 ]
	moat delete --force "$second"
	[ "$status" -eq 0 ]
	[ "$(cat "$POOL/3221225472")" = "$(realpath "$ROOT")/$first
$(realpath "$ROOT")/$third" ]
	moat exec "$third" true
	[ "$status" -eq 0 ]
	# The first's init is the pid namespace's: its delete ends the third's
	# processes, but the third's state still holds the block.
	moat delete --force "$first"
	[ "$status" -eq 0 ]
	[ "$(cat "$POOL/3221225472")" = "$(realpath "$ROOT")/$third" ]
	update_config '.process.args = ["true"] | .linux.namespaces |= map(del(.path))'
	next_id
	moat run -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"every block of the id pool is held"* ]]
	moat delete --force "$third"
	[ "$status" -eq 0 ]
	[ ! -e "$POOL/3221225472" ]
	moat run -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
}

@test "g12: a user namespace joined by path (a pod with hostUsers: false) with a new pid namespace: the namespaces made are its own, the init is pid 1 of its own, /proc and lo work" {
	prepare_bundle spec
	start_sleeper
	first="$CID"
	pid=$(init_pid "$first")
	update_config --arg p "/proc/$pid/ns/user" '.linux.namespaces += [{"type": "user", "path": $p}]'
	in_container 'echo $$; ps -o args | grep -c "^sleep 1000$"; readlink /proc/self/ns/user; cat /proc/self/uid_map; readlink /proc/self/ns/pid; cat /sys/class/net/lo/flags; touch /tmp/x && stat -c %u /tmp/x'
	[ "$status" -eq 0 ]
	# pid 1 of a pid namespace of its own: the first's sleep is not seen.
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" = 0 ]
	[ "${lines[2]}" = "$(readlink "/proc/$pid/ns/user")" ]
	[ "$(awk '{print $1, $2, $3}' <<<"${lines[3]}")" = "0 $(host_uid "$first") 65536" ]
	[ "${lines[4]}" != "$(readlink "/proc/$pid/ns/pid")" ]
	[ "${lines[4]}" != "$(readlink /proc/self/ns/pid)" ]
	# lo up (IFF_UP | IFF_LOOPBACK), in a network namespace of its own.
	[ "${lines[5]}" = 0x9 ]
	[ "${lines[6]}" = 0 ]
	[ "${#lines[@]}" -eq 7 ]
	# exec joins the same pid namespace: it sees the init as pid 1.
	start_sleeper
	moat exec "$CID" sh -c 'ps -o pid,args | grep "[s]leep 1000"'
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^\ *1\ sleep\ 1000$ ]]
	[ "${#lines[@]}" -eq 1 ]
	# A cgroup namespace of the first's alone: its user namespace adopted,
	# a pid namespace of its own made in it.
	update_config '.linux.namespaces |= map(select(.type != "user"))'
	join_ns cgroup "/proc/$pid/ns/cgroup"
	in_container 'echo $$; readlink /proc/self/ns/user; readlink /proc/self/ns/cgroup; mount | grep -c "^proc on /proc "'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" = "$(readlink "/proc/$pid/ns/user")" ]
	[ "${lines[2]}" = "$(readlink "/proc/$pid/ns/cgroup")" ]
	[ "${lines[3]}" = 1 ]
	# With its container's pid namespace joined too, it sees that one's.
	join_ns pid "/proc/$pid/ns/pid"
	in_container 'ps -o args | grep -c "^sleep 1000$"; readlink /proc/self/ns/user'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" = "$(readlink "/proc/$pid/ns/user")" ]
}

@test "g12: a Kubernetes pod with hostUsers: false: a pause container with the kubelet's mapping, an app joining its user, network, ipc and uts namespaces by path with new pid and mount namespaces" {
	prepare_bundle spec
	chown -R 268435456:268435456 "$BUNDLE/rootfs"
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 268435456, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 268435456, "size": 65536}]'
	start_sleeper
	pause="$CID"
	pid=$(init_pid "$pause")
	update_config --arg p "/proc/$pid/ns" '
		.linux.namespaces = [{"type": "pid"}, {"type": "mount"}, {"type": "cgroup"},
			{"type": "user", "path": ($p + "/user")}, {"type": "network", "path": ($p + "/net")},
			{"type": "ipc", "path": ($p + "/ipc")}, {"type": "uts", "path": ($p + "/uts")}]
		| del(.linux.uidMappings, .linux.gidMappings)'
	in_container 'echo $$; ps -o args | grep -c "^sleep 1000$"; cat /proc/self/uid_map; readlink /proc/self/ns/net; id -u; stat -c %u /bin/busybox; mount | grep -c "^proc on /proc "'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" = 0 ]
	[ "$(awk '{print $1, $2, $3}' <<<"${lines[2]}")" = "0 268435456 65536" ]
	[ "${lines[3]}" = "$(readlink "/proc/$pid/ns/net")" ]
	[ "${lines[4]}" = 0 ]
	[ "${lines[5]}" = 0 ]
	[ "${lines[6]}" -ge 1 ]
	# Its pid namespace belongs to the pod's user namespace, not the host's.
	start_sleeper
	app=$(init_pid "$CID")
	[ "$(readlink "/proc/$app/ns/pid")" != "$(readlink "/proc/$pid/ns/pid")" ]
	[ "$(awk '/^Uid:/ { print $2 }' "/proc/$app/status")" = 268435456 ]
}

@test "g12: a pid namespace of a host process, or of a user namespace not moat's, is refused: a clear error, nothing left behind" {
	prepare_bundle spec
	update_config '.process.args = ["true"]'
	pools_before=$(ls /run/moat-idpool | wc -l)
	# The host's user namespace owns it: the container's root could not
	# mount its /proc.
	start_ns_holder --pid
	join_ns pid "/proc/$child/ns/pid"
	next_id
	moat run -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[ "$output" = "moat: run $CID: pid namespace /proc/$child/ns/pid: joined by path, it belongs to the host's user namespace, where the container's root (G12) cannot mount /proc" ]
	assert_nothing_left "$CID"
	stop_ns_holder
	# An attacker's user namespace mapping container root onto host root:
	# adopting it would make container root host root.
	start_ns_holder --user --map-root-user --pid
	join_ns pid "/proc/$child/ns/pid"
	next_id
	moat run -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[ "$output" = "moat: run $CID: namespace /proc/$child/ns/pid: joined by path, it belongs to a user namespace that is not a live moat container's: the container's root (G12) could not use it" ]
	assert_nothing_left "$CID"
	stop_ns_holder
	! grep -rqxF "$(realpath "$ROOT")/$CID" /run/moat-idpool/
	[ "$(ls /run/moat-idpool | wc -l)" -le $((pools_before + 2)) ]
}

@test "g12: a mount namespace joined by path, and a cgroup namespace of the host's, are refused with a clear error" {
	prepare_bundle spec
	update_config '.process.args = ["true"]'
	start_ns_holder --mount --cgroup
	join_ns mount "/proc/$child/ns/mnt"
	next_id
	moat run -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[ "$output" = "moat: run $CID: mount namespace /proc/$child/ns/mnt: cannot be joined by path with the container's own user namespace (G12): its root could not mount there" ]
	assert_nothing_left "$CID"
	update_config '.linux.namespaces |= map(select(.type != "mount")) + [{"type": "mount"}]'
	join_ns cgroup "/proc/$child/ns/cgroup"
	next_id
	moat run -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[ "$output" = "moat: run $CID: cgroup namespace /proc/$child/ns/cgroup: joined by path, it belongs to the host's user namespace, where the container's root (G12) cannot join it" ]
	assert_nothing_left "$CID"
	stop_ns_holder
}

@test "g12: an overlay rootfs (Docker's, Podman's) shows as container root's, rebuilt from idmapped layers (6.8; before it, said); a missing mount point is made" {
	prepare_bundle spec
	# overlayfs cannot be idmapped as a whole: the engines' rootfs is one.
	OVL="$BUNDLE/ovl"
	mkdir -p "$OVL/upper" "$OVL/work" "$OVL/merged"
	mv "$BUNDLE/rootfs" "$OVL/lower"
	mount -t overlay overlay -o "lowerdir=$OVL/lower,upperdir=$OVL/upper,workdir=$OVL/work" "$OVL/merged"
	echo env >"$BUNDLE/containerenv"
	update_config --arg r "$OVL/merged" --arg s "$BUNDLE/containerenv" '.root.path = $r
		| .mounts += [{"destination": "/run/.containerenv", "type": "bind", "source": $s, "options": ["bind", "ro"]}]'
	in_container 'stat -c %u:%g /bin/busybox /etc/passwd; cat /run/.containerenv; id -u'
	[ "$status" -eq 0 ]
	# The rebuild takes Linux 6.8 (overlayfs' lowerdir+ by fd): before it
	# (Debian 12's 6.1) the rootfs is not idmapped, and moat says so.
	local said
	said=$("$MOAT" --config "$MOAT_CONFIG" features | jq -r '.annotations["run.moat.userns-overlay"]')
	if [ "$said" = "rebuilt from idmapped layers" ]; then
		[ "${lines[0]}" = 0:0 ]
		[ "${lines[1]}" = 0:0 ]
		audit_has "$CID" '.overrides[] | select(.path == "idmap root.path" and (.enforced | startswith("overlay rebuilt")))'
	else
		[ "$said" = "not idmapped (kernel before 6.8): host-owned files show as nobody" ]
		[[ "${lines[0]}" == "moat: warning: idmap root.path: not idmapped ("*"): host-owned files show as nobody (65534) inside" ]]
		lines=("${lines[@]:1}")
		[ "${lines[0]}" = 65534:65534 ]
		[ "${lines[1]}" = 65534:65534 ]
		audit_has "$CID" '.overrides[] | select(.path == "idmap root.path" and (.enforced | startswith("not idmapped")))'
	fi
	[ "${lines[2]}" = env ]
	[ "${lines[3]}" = 0 ]
	[ "${#lines[@]}" -eq 4 ]
	# The engine's own mount is left as it was.
	[ "$(stat -c %u "$OVL/merged/bin/busybox")" = 0 ]
}

# The number of G12 rootfs probes in one `moat run` of the bundle: the probe
# makes a user namespace of its own with clone(CLONE_VFORK|CLONE_NEWUSER).
probes_in_run() {
	next_id
	update_config --arg c "$1" '.process.args = ["sh", "-c", $c]'
	# LeakSanitizer cannot run under ptrace (check-asan runs this file).
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -e trace=clone -o "$BUNDLE/trace" \
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" run -b "$BUNDLE" "$CID" >"$BUNDLE/out" 2>&1
	grep -c 'CLONE_VFORK|CLONE_NEWUSER' "$BUNDLE/trace" || true
}

@test "g12: the rootfs probe is remembered per filesystem type (ROOT/.cache/idmap): a tree of types seen is not probed again, one with a new type is" {
	command -v strace >/dev/null || skip "needs strace"
	prepare_bundle spec
	local cache="$ROOT/.cache/idmap" type
	type=$(findmnt -n -o FSTYPE -T "$BUNDLE/rootfs")
	rm -f "$cache"
	[ "$(probes_in_run 'stat -c %u:%g /bin/busybox')" = 1 ]
	[ "$(cat "$BUNDLE/out")" = 0:0 ]
	[ "$(head -n 1 "$cache")" = "kernel $(uname -r) $(uname -v)" ]
	grep -qx "$type" "$cache"
	[ "$(stat -c %a:%u "$cache")" = 600:0 ]
	# Known now: not probed, idmapped all the same (seen from inside).
	[ "$(probes_in_run 'stat -c %u:%g /bin/busybox')" = 0 ]
	[ "$(cat "$BUNDLE/out")" = 0:0 ]

	# A mount below the rootfs of a type not yet seen: probed.
	mkdir -p "$BUNDLE/rootfs/mnt"
	mount -t ramfs ramfs "$BUNDLE/rootfs/mnt"
	SUBMOUNT="$BUNDLE/rootfs/mnt"
	[ "$(probes_in_run 'id -u')" = 1 ]
	umount "$SUBMOUNT"
	SUBMOUNT=""

	# A file another kernel wrote, or one others may write, is not read.
	sed -i '1s/.*/kernel 0.0.0 #1/' "$cache"
	[ "$(probes_in_run 'id -u')" = 1 ]
	[ "$(head -n 1 "$cache")" = "kernel $(uname -r) $(uname -v)" ]
	chmod 0666 "$cache"
	[ "$(probes_in_run 'id -u')" = 1 ]
	[ "$(stat -c %a "$cache")" = 600 ]
	[ "$(probes_in_run 'id -u')" = 0 ]

	# ROOT/.cache as a link elsewhere: idmap is neither read nor written
	# through it.
	local elsewhere="$BUNDLE/elsewhere"
	mkdir -m 0700 "$elsewhere"
	cp -p "$cache" "$elsewhere/idmap"
	mv "$ROOT/.cache" "$BUNDLE/cache.real"
	ln -s "$elsewhere" "$ROOT/.cache"
	[ "$(probes_in_run 'id -u')" = 1 ]
	rm "$elsewhere/idmap"
	[ "$(probes_in_run 'id -u')" = 1 ]
	[ ! -e "$elsewhere/idmap" ]
}
