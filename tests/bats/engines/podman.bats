#!/usr/bin/env bats
# Podman (podman -> conmon -> moat), configured by contrib/containers.conf
# (moat the default runtime, listed in runtime_supports_json), and with
# --runtime PATH. Podman has no daemon: each command runs the runtime itself
# (start, kill, pause, update, delete) or through conmon (create, exec).

load helpers

setup_file() {
	require_engines
}

teardown() {
	podman_cli rm -af -t 0 >/dev/null 2>&1 || true
}

# podman run with this host's rlimits (root lacks CAP_SYS_RESOURCE here).
prun() { pm run "${PODMAN_RUN_OPTS[@]}" "$@"; }

start_detached() {
	name="moat-p$BATS_TEST_NUMBER"
	prun -d --name "$name" --network none "$@" "$IMAGE" sh -c \
		'trap "echo got-hup" HUP; trap "echo got-term; exit 0" TERM; echo started; while :; do sleep 0.1; done'
	[ "$status" -eq 0 ]
	wait_for 10 eval 'podman_cli logs "$name" 2>&1 | grep -q started'
	pid=$(podman_cli inspect -f '{{.State.Pid}}' "$name")
}

@test "podman run: moat is the default runtime of contrib/containers.conf" {
	pm info --format '{{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Path}}'
	[ "$status" -eq 0 ]
	[ "$output" = "moat $MOAT" ]
	prun --rm --network none "$IMAGE" sh -c 'echo hello from moat; exit 3'
	[ "$status" -eq 3 ]
	[ "$output" = "hello from moat" ]
}

@test "podman --runtime PATH: output and exit status" {
	pm --runtime "$MOAT" run "${PODMAN_RUN_OPTS[@]}" --rm --network none "$IMAGE" sh -c 'echo via path; exit 5'
	[ "$status" -eq 5 ]
	[ "$output" = "via path" ]
}

@test "podman with runtime_supports_json: conmon passes --log-format=json, errors come from moat's log" {
	reset_argv_log
	pm --runtime "$LOGGED_MOAT" run "${PODMAN_RUN_OPTS[@]}" --rm --network none "$IMAGE" true
	[ "$status" -eq 0 ]
	grep -E -- ' --log-format=json --log [^ ]+ create ' "$ARGV_LOG"
	# Podman maps moat's error text to the exit status of a shell.
	run -127 --separate-stderr podman_cli --runtime "$LOGGED_MOAT" run "${PODMAN_RUN_OPTS[@]}" --rm --network none "$IMAGE" /nonexistent
	[[ "$stderr" == *'/nonexistent'*'no such file or directory'* ]]
	# Read from the JSON log, not from moat's stderr line.
	[[ "$stderr" != *"moat: create"* ]]
	run -126 --separate-stderr podman_cli --runtime "$LOGGED_MOAT" run "${PODMAN_RUN_OPTS[@]}" --rm --network none "$IMAGE" /etc/passwd
	[[ "$stderr" == *'permission denied'* ]]
}

@test "podman without runtime_supports_json: no --log-format, errors from moat's stderr" {
	reset_argv_log
	run --separate-stderr "${PODMAN_NOJSON[@]}" --runtime "$LOGGED_MOAT" run "${PODMAN_RUN_OPTS[@]}" --rm --network none "$IMAGE" sh -c 'echo hi; exit 3'
	log_run podman-nojson
	[ "$status" -eq 3 ]
	[ "$output" = hi ]
	grep -q ' create ' "$ARGV_LOG"
	! grep -q -- '--log-format' "$ARGV_LOG" || false
	run -127 --separate-stderr "${PODMAN_NOJSON[@]}" --runtime "$LOGGED_MOAT" run "${PODMAN_RUN_OPTS[@]}" --rm --network none "$IMAGE" /nonexistent
	log_run podman-nojson
	[[ "$stderr" == *"moat: create "*'/nonexistent'*'no such file or directory'* ]]
	run -126 --separate-stderr "${PODMAN_NOJSON[@]}" --runtime "$LOGGED_MOAT" run "${PODMAN_RUN_OPTS[@]}" --rm --network none "$IMAGE" /etc/passwd
	log_run podman-nojson
	[[ "$stderr" == *'permission denied'* ]]
}

@test "podman run -d, logs, exec (status, user, cwd, env), exec -t" {
	start_detached
	pm logs "$name"
	[ "$output" = started ]
	pm exec "$name" echo exec-hi
	[ "$status" -eq 0 ]
	[ "$output" = exec-hi ]
	pm exec "$name" sh -c 'exit 4'
	[ "$status" -eq 4 ]
	pm exec -u 1:1 -w /tmp -e X=1 "$name" sh -c 'id -u; id -g; pwd; echo "X=$X"'
	[ "$output" = "$(printf '1\n1\n/tmp\nX=1')" ]
	in_tty "${PODMAN[@]}" exec -it "$name" tty
	[ "$status" -eq 0 ]
	[[ "$output" == */dev/pts/* ]]
}

# What the container wrote is read from conmon's log, which conmon fills from
# the terminal's master: podman's attach may miss the output of a container
# that exits at once (under load, 15 in 100 runs with moat, 18 in 100 with
# runc; docker and ctr lose none), while the log always has it.
@test "podman run -it gets a terminal" {
	in_tty "${PODMAN[@]}" run --name "moat-t$BATS_TEST_NUMBER" -it "${PODMAN_RUN_OPTS[@]}" --network none \
		"$IMAGE" sh -c 'tty; exit 2'
	[ "$status" -eq 2 ]
	pm logs "moat-t$BATS_TEST_NUMBER"
	[ "$status" -eq 0 ]
	[[ "$output" == */dev/pts/* ]]
}

@test "podman top, pause / unpause" {
	start_detached
	pm top "$name"
	[ "$status" -eq 0 ]
	[[ "$output" == *"sh -c"* ]]
	pm pause "$name"
	[ "$status" -eq 0 ]
	[ "$(podman_cli inspect -f '{{.State.Status}}' "$name")" = paused ]
	is_frozen "$pid"
	pm unpause "$name"
	[ "$status" -eq 0 ]
	! is_frozen "$pid" || false
	pm exec "$name" echo thawed
	[ "$output" = thawed ]
}

@test "podman update --memory (update --resources=FILE), capped by the profile" {
	start_detached
	pm update --memory 64m "$name"
	[ "$status" -eq 0 ]
	[ "$(memory_limit "$pid")" = $((64 << 20)) ]
	pm update --memory 2g "$name"
	[ "$status" -eq 0 ]
	[ "$(memory_limit "$pid")" = $((512 << 20)) ]
}

@test "podman --annotation run.moat.*: tightens a limit, never loosens one" {
	start_detached --annotation run.moat.pids-limit=10
	[ "$(pids_limit "$pid")" = 10 ]
	podman_cli rm -f -t 0 "$name" >/dev/null
	start_detached --annotation run.moat.pids-limit=100000
	[ "$(pids_limit "$pid")" = 64 ]
}

@test "podman kill -s HUP, stop (SIGTERM handled; SIGKILL after the timeout)" {
	start_detached
	pm kill -s HUP "$name"
	[ "$status" -eq 0 ]
	wait_for 10 eval 'podman_cli logs "$name" 2>&1 | grep -q got-hup'
	pm stop -t 10 "$name"
	[ "$status" -eq 0 ]
	[ "$(podman_cli inspect -f '{{.State.ExitCode}}' "$name")" = 0 ]
	podman_cli logs "$name" 2>&1 | grep -q got-term

	prun -d --name ignores-term --network none "$IMAGE" sh -c 'trap "" TERM; while :; do sleep 0.1; done'
	pm stop -t 1 ignores-term
	[ "$status" -eq 0 ]
	[ "$(podman_cli inspect -f '{{.State.ExitCode}}' ignores-term)" = 137 ]
}

@test "podman start again, then rm -f of a running container leaves nothing" {
	start_detached
	pm stop -t 0 "$name"
	pm start "$name"
	[ "$status" -eq 0 ]
	newpid=$(podman_cli inspect -f '{{.State.Pid}}' "$name")
	[ "$newpid" != "$pid" ]
	kill -0 "$newpid"
	id=$(podman_cli inspect -f '{{.Id}}' "$name")
	pm rm -f -t 0 "$name"
	[ "$status" -eq 0 ]
	! kill -0 "$newpid" 2>/dev/null || false
	# podman passes no --root: moat's default state dir.
	[ ! -e "/run/moat/$id" ]
	[ -z "$(find /sys/fs/cgroup -maxdepth 3 -name "*$id*" 2>/dev/null)" ]
}

@test "podman run --pid container:X: one pid namespace, and the user namespace of X on its block (G12); each sees the other's processes" {
	start_detached
	pm exec "$name" cat /proc/self/uid_map
	[ "$status" -eq 0 ]
	first_map=$output
	prun --rm --network none --pid "container:$name" "$IMAGE" sh -c 'ps -o pid,args | awk "\$1 == 1"; cat /proc/self/uid_map; id -u; readlink /proc/self/ns/user'
	[ "$status" -eq 0 ]
	# pid 1 is the first container's shell.
	[[ "${lines[0]}" == *"echo started"* ]]
	[ "${lines[1]}" = "$first_map" ]
	read -r inside outside count <<<"${lines[1]}"
	[ "$inside $count" = "0 65536" ]
	[ "$outside" -ge $((0x40000000)) ]
	[ "${lines[2]}" = 0 ]
	[ "${lines[3]}" = "$(readlink "/proc/$pid/ns/user")" ]
}

@test "podman run --uidmap: the container's own mapping is kept as asked (G12), the image's files are its root's, a file written in a named volume shows on the host as the mapped id" {
	vol="moat-uidmap-$$"
	pm volume create "$vol"
	[ "$status" -eq 0 ]
	data=$(podman_cli volume inspect -f '{{.Mountpoint}}' "$vol")
	prun --rm --network none --uidmap 0:200000:65536 --gidmap 0:200000:65536 \
		-v "$vol:/data" "$IMAGE" sh -c 'id -u; cat /proc/self/uid_map; stat -c %u /bin/busybox; touch /tmp/x && echo tmp-ok; touch /data/f && echo data-ok'
	host_owner=$(stat -c %u:%g "$data/f" 2>/dev/null || echo none)
	podman_cli volume rm -f "$vol" >/dev/null 2>&1 || true
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	[ "$(awk '{print $1, $2, $3}' <<<"${lines[1]}")" = "0 200000 65536" ]
	[ "${lines[2]}" = 0 ]
	[ "${lines[3]}" = tmp-ok ]
	[ "${lines[4]}" = data-ok ]
	[ "$host_owner" = 200000:200000 ]
}

@test "profile from inside: no capabilities (even --privileged), read-only root, lo only" {
	prun --rm --network none --privileged "$IMAGE" sh -c "$PROBE"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ifaces: lo "* ]]
	assert_profile
}

@test "podman --network host: refused, or a fresh namespace with lo only" {
	prun --rm --network host "$IMAGE" sh -c "$PROBE"
	if [ "$status" -eq 0 ]; then
		[[ "$output" == *"ifaces: lo "* ]]
	else
		[[ "$stderr" == *"network namespace"* ]]
	fi
}
