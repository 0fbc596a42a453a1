#!/usr/bin/env bats
# The engines' contract, against moat directly: each call exactly as the
# runc v2 shim or podman/conmon makes it (shared samples of their argv), and
# the error texts they match (the shim ignores "does not exist" on delete
# and "container not running" / "no such process" on kill; it shows the last
# "level":"error" line of --log; podman parses that file as JSON).
# Needs no engine, only root.

load helpers

REPO_FIXTURES="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/fixtures"

setup() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	B="$BATS_TEST_TMPDIR/bundle"
	ROOT="$BATS_TEST_TMPDIR/state"
	LOG="$BATS_TEST_TMPDIR/log.json"
	mkdir -p "$B/rootfs"/{bin,proc,dev,sys,tmp,etc,root}
	cp /bin/busybox "$B/rootfs/bin/busybox"
	for a in sh sleep true echo cat; do ln -s busybox "$B/rootfs/bin/$a"; done
	echo '{"audit_log": "'"$BATS_TEST_TMPDIR/audit.jsonl"'"}' >"$BATS_TEST_TMPDIR/moat.json"
	(cd "$B" && "$MOAT" spec)
	jq '.process.terminal = false | .process.args = ["sh", "-c", "trap \"echo got-hup >/tmp/hup\" HUP; while :; do sleep 0.1; done"]' \
		"$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	ID="contract-$BATS_TEST_NUMBER"
}

teardown() {
	[ -d "${ROOT:-/nonexistent}" ] || return 0
	for d in "$ROOT"/*/; do
		[ -d "$d" ] && "$MOAT" --root "$ROOT" delete --force "$(basename "$d")" >/dev/null 2>&1
	done
	return 0
}

# As the shim calls it: global --root, --log, --log-format json first, in
# the bundle. Output through files, not bats' run: a created container or a
# detached exec inherits moat's stdio and would hold a pipe open.
shim() {
	status=0
	(cd "$B" && exec "$MOAT" --config "$BATS_TEST_TMPDIR/moat.json" --root "$ROOT" \
		--log "$LOG" --log-format json "$@") >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" || status=$?
	output=$(cat "$BATS_TEST_TMPDIR/out")
	stderr=$(cat "$BATS_TEST_TMPDIR/err")
	log_run moat "$@"
}

# The last error line of the --log file, as the shim reads it.
last_log_error() { grep '"level":"error"' "$LOG" | tail -1 | jq -r .msg; }

create_started() {
	shim create --bundle "$B" --pid-file "$B/init.pid" "$ID" </dev/null
	[ "$status" -eq 0 ]
	[ -s "$B/init.pid" ]
	shim start "$ID"
	[ "$status" -eq 0 ]
	pid=$(cat "$B/init.pid")
}

wait_stopped() {
	wait_for 10 eval '[ "$("$MOAT" --root "$ROOT" state "$ID" | jq -r .status)" = stopped ]'
}

@test "delete of a missing container: 'does not exist', on stderr and in the JSON log" {
	shim delete "$ID"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"does not exist"* ]]
	[[ "$(last_log_error)" == *"does not exist"* ]]
	# The shim's second call, after a successful delete.
	shim delete --force "$ID"
	[[ "$(last_log_error)" == *"does not exist"* ]]
}

@test "--log lines are runc's: level, msg, RFC3339 time; only errors" {
	create_started
	# A successful create and start write nothing there (podman parses the file).
	[ ! -s "$LOG" ]
	shim kill "$ID" 99
	[ "$status" -ne 0 ]
	line=$(tail -1 "$LOG")
	echo "$line" | jq -e 'keys == ["level", "msg", "time"] and .level == "error"'
	echo "$line" | jq -e '.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$")'
	# podman's form: --log-format=json --log FILE.
	"$MOAT" --root "$ROOT" --log-format=json --log "$LOG.podman" delete nope 2>/dev/null || true
	[ "$(jq -r .level "$LOG.podman")" = error ]
}

@test "kill of a stopped container: 'container not running' or 'no such process'" {
	create_started
	shim kill "$ID" 9
	[ "$status" -eq 0 ]
	wait_stopped
	for sig in 15 9; do
		shim kill "$ID" "$sig"
		[ "$status" -ne 0 ]
		[[ "$stderr" == *"container not running"* || "$stderr" == *"no such process"* ]]
		[[ "$(last_log_error)" == *"container not running"* || "$(last_log_error)" == *"no such process"* ]]
	done
	# And delete then succeeds, as the shim expects.
	shim delete "$ID"
	[ "$status" -eq 0 ]
}

@test "exec into a stopped container fails, and starts nothing" {
	create_started
	shim kill "$ID" 9
	wait_stopped
	cp "$REPO_FIXTURES/docker.03.docker-exec.process.json" "$BATS_TEST_TMPDIR/process.json"
	shim exec --process "$BATS_TEST_TMPDIR/process.json" --detach --pid-file "$B/e1.pid" "$ID"
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"stopped"* || "$stderr" == *"not running"* ]]
	[ -n "$(last_log_error)" ]
	[ ! -s "$B/e1.pid" ]
}

@test "create of an existing id fails and keeps the first container" {
	create_started
	shim create --bundle "$B" --pid-file "$B/second.pid" "$ID" </dev/null
	[ "$status" -eq 1 ]
	[[ "$stderr" == *exist* ]]
	[[ "$(last_log_error)" == *exist* ]]
	[ ! -s "$B/second.pid" ]
	run "$MOAT" --root "$ROOT" state "$ID"
	[ "$(echo "$output" | jq -r .status)" = running ]
	[ "$(echo "$output" | jq -r .pid)" = "$pid" ]
	kill -0 "$pid"
}

@test "state: the fields Go's runc client parses" {
	shim create --bundle "$B" --pid-file "$B/init.pid" "$ID" </dev/null
	shim state "$ID"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e --arg id "$ID" --arg b "$B" --argjson pid "$(cat "$B/init.pid")" '
		.id == $id and .bundle == $b and .pid == $pid and .status == "created"
		and (.ociVersion | type) == "string" and (.annotations | type) == "object"'
	# time.Time's RFC3339Nano: 2006-01-02T15:04:05.999999999Z07:00
	echo "$output" | jq -e '.created | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$")'
	shim start "$ID"
	[ "$("$MOAT" --root "$ROOT" state "$ID" | jq -r .status)" = running ]
}

@test "ps --format json: the container's pids (docker top)" {
	create_started
	shim ps --format json "$ID"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e --argjson pid "$pid" 'type == "array" and all(type == "number") and index($pid) != null'
}

@test "kill with numbers and names (1, 15, HUP, SIGHUP)" {
	create_started
	for sig in 1 HUP SIGHUP; do
		rm -f "/proc/$pid/root/tmp/hup"
		shim kill "$ID" "$sig"
		[ "$status" -eq 0 ]
		wait_for 10 test -e "/proc/$pid/root/tmp/hup"
	done
	shim kill "$ID" 15
	[ "$status" -eq 0 ]
	# sh as pid 1 without a TERM trap ignores it: still running.
	[ "$("$MOAT" --root "$ROOT" state "$ID" | jq -r .status)" = running ]
	shim kill --all "$ID" 9
	[ "$status" -eq 0 ]
	wait_stopped
}

@test "update --resources - with Docker's zero values (docker update --pids-limit)" {
	create_started
	shim update --resources - "$ID" <"$REPO_FIXTURES/docker.10.docker-update-pids-limit-100.update-stdin.json"
	[ "$status" -eq 0 ]
	# 100 asked, the strict profile's 64 applied; the zero memory limit ignored.
	[ "$(pids_limit "$pid")" = 64 ]
	[ "$(memory_limit "$pid")" = $((512 << 20)) ]
	echo '{"pids":{"limit":20}}' >"$BATS_TEST_TMPDIR/r.json"
	# podman's form: --resources=FILE.
	shim update --resources="$BATS_TEST_TMPDIR/r.json" "$ID"
	[ "$status" -eq 0 ]
	[ "$(pids_limit "$pid")" = 20 ]
}

@test "exec --process --detach --pid-file: returns at once, pid file complete" {
	create_started
	jq '.args = ["sleep", "100"]' "$REPO_FIXTURES/docker.03.docker-exec.process.json" >"$BATS_TEST_TMPDIR/p.json"
	shim exec --process "$BATS_TEST_TMPDIR/p.json" --detach --pid-file "$B/e1.pid" "$ID"
	[ "$status" -eq 0 ]
	epid=$(cat "$B/e1.pid")
	[[ "$epid" =~ ^[0-9]+$ ]]
	grep -q sleep "/proc/$epid/cmdline"
	# In the container: its pid namespace, its cgroup.
	[ "$(readlink "/proc/$epid/ns/pid")" = "$(readlink "/proc/$pid/ns/pid")" ]
	[ "$(cat "/proc/$epid/cgroup")" = "$(cat "/proc/$pid/cgroup")" ]
	grep -q 'CapEff:	0000000000000000' "/proc/$epid/status"
}

@test "flags the engines pass and moat may not know are accepted" {
	shim --systemd-cgroup create --bundle "$B" --pid-file "$B/init.pid" --no-new-keyring --no-pivot "$ID" </dev/null
	[ "$status" -eq 0 ]
	[ -s "$B/init.pid" ]
	shim delete --force "$ID"
	[ "$status" -eq 0 ]
}

@test "--version has the commit line dockerd reads for docker info" {
	run "$MOAT" --version
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "moat version "* ]]
	echo "$output" | grep -E '^commit: [0-9a-z]+'
	echo "$output" | grep -E '^spec: 1\.'
}
