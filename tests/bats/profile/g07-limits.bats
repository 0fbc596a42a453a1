#!/usr/bin/env bats
# G7: limits. pids (64), memory (512 MiB, no swap), CPU (1 CPU),
# RLIMIT_CORE 0, RLIMIT_NOFILE at most 1024: the lower of config.json and
# the profile wins. The cgroup values are read on the host; what they mean
# is felt inside (a fork bomb, a memory hog).

load profile_helpers

GUARANTEE=g7

setup() {
	requires_root
}

teardown() {
	teardown_profile
}

# The limits of the cgroup of host pid $1, as "pids mem swap quota period",
# from cgroup v1 (hybrid) or v2 files; swap is what is left beyond memory
# (v1: memsw - mem; "-" where the kernel has no swap accounting, on v1
# or v2).
host_limits() {
	local pid="$1" pids mem swap quota period d
	if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
		d=$(cgroup_dir unified "$pid")
		pids=$(cat "$d/pids.max")
		mem=$(cat "$d/memory.max")
		swap=-
		[ ! -e "$d/memory.swap.max" ] || swap=$(cat "$d/memory.swap.max")
		read -r quota period <"$d/cpu.max"
	else
		pids=$(cat "$(cgroup_dir pids "$pid")/pids.max")
		d=$(cgroup_dir memory "$pid")
		mem=$(cat "$d/memory.limit_in_bytes")
		swap=-
		[ ! -e "$d/memory.memsw.limit_in_bytes" ] ||
			swap=$(($(cat "$d/memory.memsw.limit_in_bytes") - mem))
		d=$(cgroup_dir cpu "$pid")
		quota=$(cat "$d/cpu.cfs_quota_us")
		period=$(cat "$d/cpu.cfs_period_us")
	fi
	echo "$pids $mem $swap $quota $period"
}

# A running container's limits on the host, then its rlimits inside, for
# the init and for a process moat exec starts. $1: "pids mem quota period"
# expected.
check_limits() {
	local want_pids want_mem want_quota want_period pids mem swap quota period pid
	read -r want_pids want_mem want_quota want_period <<<"$1"
	start_sleeper
	moat state "$CID"
	pid=$(echo "$output" | jq -r .pid)
	read -r pids mem swap quota period <<<"$(host_limits "$pid")"
	echo "host: pids=$pids mem=$mem swap=$swap quota=$quota period=$period" >&2
	[ "$pids" = "$want_pids" ]
	[ "$mem" = "$want_mem" ]
	[ "$swap" = 0 ] || [ "$swap" = - ]
	[ "$quota" = "$want_quota" ]
	[ "$period" = "$want_period" ]
	grep -E '^Max (core file size|open files) ' "/proc/$pid/limits" >&2
	[[ "$(grep '^Max core file size' "/proc/$pid/limits")" =~ ^Max\ core\ file\ size\ +0\ +0\ +bytes ]]
	moat exec "$CID" sh -c 'ulimit -c; ulimit -Hc; ulimit -n; ulimit -Hn'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" = 0 ]
	[ "${lines[2]}" -le 1024 ]
	[ "${lines[3]}" -le 1024 ]
}

@test "G7 spec: pids 64, memory 512 MiB without swap, 1 CPU, no core, nofile <= 1024" {
	prepare_bundle spec
	check_limits "64 536870912 100000 100000"
}

@test "G7 docker.19 (pids 50, 64 MiB, 0.5 CPU): its lower values stay" {
	prepare_bundle docker.19
	check_limits "50 67108864 50000 100000"
}

@test "G7 permissive (64 GiB, 100000 pids, 4 CPUs, nofile 1048576): the profile's values" {
	prepare_bundle permissive
	[ "$(jq '.linux.resources.memory.limit' "$BUNDLE/config.json")" = 68719476736 ]
	check_limits "64 536870912 100000 100000"
}

@test "G7 permissive: a fork bomb stops at the pids limit" {
	prepare_bundle permissive
	# Forks until the kernel refuses (the subshell dies then), counts the
	# processes without forking, kills them all, and forks once more.
	create_with_output '(i=0; while [ $i -lt 1000 ]; do sleep 1000 & i=$((i + 1)); done) 2>/tmp/err
		set -- /proc/[0-9]*; echo "processes: $#"
		kill -9 -1; wait
		cat /tmp/err; echo "fork works again"'
	pid=$(cat "$BUNDLE/$CID.pid")
	pids_dir=$(cgroup_dir pids "$pid")
	start_until_stopped
	[[ "${lines[0]}" =~ ^processes:\ ([0-9]+)$ ]]
	[ "${BASH_REMATCH[1]}" -le 64 ]
	[ "${lines[1]}" = "sh: can't fork: Resource temporarily unavailable" ]
	[ "${lines[2]}" = "fork works again" ]
	# The kernel counted the refusals in the container's cgroup, at 64.
	[ "$(cat "$pids_dir/pids.max")" = 64 ]
	grep -E '^max [1-9]' "$pids_dir/pids.events"
}

@test "G7 permissive (asks 64 GiB): a memory hog is OOM-killed at 512 MiB" {
	prepare_bundle permissive
	create_with_output 'dd if=/dev/zero of=/dev/null bs=600M count=1 2>&1; echo "dd: $?"'
	pid=$(cat "$BUNDLE/$CID.pid")
	mem_dir=$(cgroup_dir memory "$pid")
	start_until_stopped
	# Killed (137), or the allocation refused.
	[[ "$output" =~ dd:\ 137|memory\ exhausted|Cannot\ allocate\ memory ]]
	if [ -e "$mem_dir/memory.max_usage_in_bytes" ]; then
		[ "$(cat "$mem_dir/memory.max_usage_in_bytes")" -le 536870912 ]
		grep -E '^oom_kill [1-9]' "$mem_dir/memory.oom_control"
	else
		[ "$(cat "$mem_dir/memory.peak")" -le 536870912 ]
		grep -E '^oom_kill [1-9]' "$mem_dir/memory.events"
	fi
}

@test "G7 exec: a process moat exec starts is in the container's cgroup, with its rlimits" {
	prepare_bundle permissive
	start_sleeper
	moat exec --detach --pid-file "$BUNDLE/exec.pid" "$CID" sleep 1000
	[ "$status" -eq 0 ]
	moat state "$CID"
	pid=$(echo "$output" | jq -r .pid)
	epid=$(cat "$BUNDLE/exec.pid")
	[ "$(cat "/proc/$epid/cgroup")" = "$(cat "/proc/$pid/cgroup")" ]
	[[ "$(grep '^Max core file size' "/proc/$epid/limits")" =~ ^Max\ core\ file\ size\ +0\ +0\ +bytes ]]
	[[ "$(grep '^Max open files' "/proc/$epid/limits")" =~ ^Max\ open\ files\ +([0-9]+)\ +([0-9]+)\ +files ]]
	[ "${BASH_REMATCH[1]}" -le 1024 ]
	[ "${BASH_REMATCH[2]}" -le 1024 ]
}

@test "G7 exec --process asking for huge rlimits gets the caps" {
	prepare_bundle spec
	start_sleeper
	jq -n '{args: ["sh", "-c", "ulimit -c; ulimit -Hn"], cwd: "/", user: {uid: 0, gid: 0}, env: ["PATH=/bin"],
		rlimits: [{type: "RLIMIT_CORE", soft: 1073741824, hard: 1073741824},
			{type: "RLIMIT_NOFILE", soft: 1048576, hard: 1048576}]}' >"$BUNDLE/process.json"
	moat exec --process "$BUNDLE/process.json" "$CID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" -le 1024 ]
}

@test "G7 annotation run.moat.pids-limit=10 tightens: pids.max 10 on the host" {
	prepare_bundle spec
	update_config '.annotations = {"run.moat.pids-limit": "10"}'
	start_sleeper
	moat state "$CID"
	read -r pids _ <<<"$(host_limits "$(echo "$output" | jq -r .pid)")"
	[ "$pids" = 10 ]
}

@test "G7 annotation run.moat.pids-limit=100000 is ignored, and the audit log says so" {
	prepare_bundle spec
	update_config '.annotations = {"run.moat.pids-limit": "100000", "run.moat.memory-limit": "64G"}'
	start_sleeper
	moat state "$CID"
	read -r pids mem _ <<<"$(host_limits "$(echo "$output" | jq -r .pid)")"
	[ "$pids" = 64 ]
	[ "$mem" = 536870912 ]
	audit_has "$CID" 'select(.verb == "run") | .overrides[]
		| select(.kind == "ignored" and .path == "annotations.run.moat.pids-limit" and .asked == "100000" and .enforced == "64")'
	audit_has "$CID" 'select(.verb == "run") | .overrides[]
		| select(.kind == "ignored" and .path == "annotations.run.moat.memory-limit" and .asked == "64G")'
}

@test "G7 update is bounded by the profile saved at create: an annotation's pids 10 stays the ceiling" {
	prepare_bundle spec
	update_config '.annotations = {"run.moat.pids-limit": "10"}'
	start_sleeper
	moat state "$CID"
	pid=$(echo "$output" | jq -r .pid)
	moat update --pids-limit 60 "$CID"
	[ "$status" -eq 0 ]
	read -r pids _ <<<"$(host_limits "$pid")"
	[ "$pids" = 10 ]
	# Lower still applies.
	moat update --pids-limit 5 "$CID"
	[ "$status" -eq 0 ]
	read -r pids _ <<<"$(host_limits "$pid")"
	[ "$pids" = 5 ]
}

@test "G7 update and exec obey the container's profile, not their own --profile or --config" {
	prepare_bundle spec
	start_sleeper
	moat state "$CID"
	pid=$(echo "$output" | jq -r .pid)
	# An operator config that would allow far more, passed to update.
	printf '{"audit_log": "%s", "limits": {"pids": 4000, "nofile": 65536}}\n' "$AUDIT_LOG" >"$BUNDLE/loose.json"
	run "$MOAT" --root "$ROOT" --config "$BUNDLE/loose.json" --profile egress update --pids-limit 1000 "$CID"
	[ "$status" -eq 0 ]
	[[ "$output" == *"moat: warning: --profile egress ignored: container $CID runs under profile strict, saved at create"* ]]
	read -r pids _ <<<"$(host_limits "$pid")"
	[ "$pids" = 64 ]
	run "$MOAT" --root "$ROOT" --config "$BUNDLE/loose.json" --profile egress exec "$CID" sh -c 'ulimit -n'
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "moat: warning: --profile egress ignored: "* ]]
	[ "${lines[-1]}" -le 1024 ]
}

@test "G7 the same --profile on every verb (an engine's runtimeArgs) is no warning, even when an annotation tightened it" {
	prepare_bundle spec
	update_config '.annotations = {"run.moat.profile": "strict"}'
	start_sleeper --profile egress
	run "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" --profile egress exec "$CID" true
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	jq -e '.profile.name == "strict" and .profile.egress == false' "$ROOT/$CID/policy.json"
}
