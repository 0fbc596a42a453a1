#!/usr/bin/env bats
# The OCI lifecycle: create, state, start, kill, delete, run.

load helpers

setup() {
	requires_root
	setup_bundle
	# Unique per test and run: cgroup names are shared by every --root.
	c1="lc$BATS_TEST_NUMBER-$$-a"
	c2="lc$BATS_TEST_NUMBER-$$-b"
}

teardown() {
	teardown_bundle
}

@test "create -> created -> start -> running -> kill -> stopped -> delete" {
	update_config '.process.args = ["sleep", "100"]'
	moat create -b "$BUNDLE" --pid-file "$BUNDLE/pid" "$c1"
	[ "$status" -eq 0 ]
	moat state "$c1"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r .status)" = created ]
	[ "$(echo "$output" | jq -r .id)" = "$c1" ]
	[ "$(echo "$output" | jq -r .bundle)" = "$BUNDLE" ]
	pid=$(echo "$output" | jq -r .pid)
	[ "$pid" = "$(cat "$BUNDLE/pid")" ]
	[ -d "/proc/$pid" ]

	moat start "$c1"
	[ "$status" -eq 0 ]
	moat state "$c1"
	[ "$(echo "$output" | jq -r .status)" = running ]
	# The payload replaced the init: sleep is pid $pid now.
	grep -q sleep "/proc/$pid/cmdline"

	moat kill "$c1" KILL
	[ "$status" -eq 0 ]
	wait_status "$c1" stopped
	moat state "$c1"
	[ "$(echo "$output" | jq -r .pid)" = 0 ]

	moat delete "$c1"
	[ "$status" -eq 0 ]
	assert_nothing_left "$c1"
	moat state "$c1"
	[ "$status" -eq 1 ]
	[[ "$output" == *"container \"$c1\" does not exist"* ]]
}

@test "state's created is RFC3339" {
	update_config '.process.args = ["sleep", "100"]'
	moat create -b "$BUNDLE" "$c1"
	moat state "$c1"
	created=$(echo "$output" | jq -r .created)
	[[ "$created" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$ ]]
}

@test "run exits with the container's status" {
	run_in_container 'exit 7'
	[ "$status" -eq 7 ]
	run_in_container 'echo hello'
	[ "$status" -eq 0 ]
	[ "$output" = hello ]
}

@test "run of a signalled container exits 128+signal" {
	update_config '.process.args = ["sleep", "100"]'
	(
		rc=0
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" run -b "$BUNDLE" "$c1" >/dev/null 2>&1 </dev/null || rc=$?
		echo "$rc" >"$BUNDLE/rc"
	) &
	wait_status "$c1" running
	moat kill "$c1" KILL
	[ "$status" -eq 0 ]
	wait
	[ "$(cat "$BUNDLE/rc")" -eq 137 ]
}

# run deletes what it made after the payload exits; a delete --force from
# another process may have been first. run then has nothing to undo: no
# error, and nothing of the container left (nor of a later one by that id).
@test "run, deleted from elsewhere while it waits: no error, nothing left" {
	update_config '.process.args = ["sleep", "100"]'
	(
		rc=0
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" run -b "$BUNDLE" "$c1" >"$BUNDLE/run.out" 2>&1 </dev/null || rc=$?
		echo "$rc" >"$BUNDLE/rc"
	) &
	wait_status "$c1" running
	moat delete --force "$c1"
	[ "$status" -eq 0 ]
	wait
	[ "$(cat "$BUNDLE/rc")" -eq 137 ]
	[ ! -s "$BUNDLE/run.out" ] || { cat "$BUNDLE/run.out"; false; }
	assert_nothing_left "$c1"
}

# Its delete is of the container it made, not of whatever holds the id by
# then: run stopped while another process deletes its container and
# creates a new one by the same id must leave the new one alone. (It
# deleted the new one, looked up by id, before run carried its own.)
@test "run deletes its own container, not a later one by the same id" {
	update_config '.process.args = ["sleep", "100"]'
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" run -b "$BUNDLE" "$c1" >"$BUNDLE/run.out" 2>&1 </dev/null &
	runpid=$!
	wait_status "$c1" running
	kill -STOP "$runpid"
	moat delete --force "$c1"
	[ "$status" -eq 0 ]
	moat create -b "$BUNDLE" "$c1"
	[ "$status" -eq 0 ]
	kill -CONT "$runpid"
	wait "$runpid" || true
	moat state "$c1"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r .status)" = created ]
	moat delete --force "$c1"
	[ "$status" -eq 0 ]
	assert_nothing_left "$c1"
}

# run starts the container from the process that made it: the init's go
# travels over a socketpair, not through exec.fifo, one file fewer on the
# state root. create's start comes from another process: the fifo stays.
@test "run makes no exec.fifo in the state dir; create does" {
	update_config --arg d "$ROOT" --arg o "$BUNDLE" '.process.args = ["true"]
		| .hooks = {"createRuntime": [{"path": "/bin/sh",
			"args": ["sh", "-c", "id=$(jq -r .id); ls -A \($d)/$id >\($o)/$id.ls"]}]}'
	moat run -b "$BUNDLE" "$c1"
	[ "$status" -eq 0 ]
	grep -qx state.json "$BUNDLE/$c1.ls"
	[ "$(grep -c fifo "$BUNDLE/$c1.ls")" -eq 0 ]
	moat create -b "$BUNDLE" "$c2"
	[ "$status" -eq 0 ]
	grep -qx exec.fifo "$BUNDLE/$c2.ls"
	moat start "$c2"
	[ "$status" -eq 0 ]
	wait_status "$c2" stopped
	moat delete "$c2"
	[ "$status" -eq 0 ]
	assert_nothing_left "$c1"
}

@test "run leaves nothing behind" {
	update_config '.process.args = ["true"]'
	moat run -b "$BUNDLE" "$c2"
	[ "$status" -eq 0 ]
	assert_nothing_left "$c2"
}

@test "kill accepts numbers, names and SIG names" {
	update_config '.process.args = ["sleep", "100"]'
	for sig in 9 KILL SIGKILL; do
		moat run -d -b "$BUNDLE" "$c1-$sig"
		[ "$status" -eq 0 ]
		moat kill "$c1-$sig" "$sig"
		[ "$status" -eq 0 ]
		wait_status "$c1-$sig" stopped
		moat delete "$c1-$sig"
		[ "$status" -eq 0 ]
	done
	moat run -d -b "$BUNDLE" "$c1-bad"
	moat kill "$c1-bad" NOTASIGNAL
	[ "$status" -eq 1 ]
	[[ "$output" == *"invalid signal"* ]]
}

@test "kill of a stopped container says container not running" {
	moat create -b "$BUNDLE" "$c1"
	moat start "$c1"
	wait_status "$c1" stopped
	moat kill "$c1" 9
	[ "$status" -eq 1 ]
	[[ "$output" == *"container not running"* ]]
}

@test "kill --all signals every process in the container" {
	update_config '.process.args = ["sh", "-c", "sleep 100 & sleep 100 & wait"]'
	moat run -d -b "$BUNDLE" "$c1"
	[ "$status" -eq 0 ]
	moat kill --all "$c1" KILL
	[ "$status" -eq 0 ]
	wait_status "$c1" stopped
}

@test "delete of a running container needs --force" {
	update_config '.process.args = ["sleep", "100"]'
	moat run -d -b "$BUNDLE" "$c1"
	moat delete "$c1"
	[ "$status" -eq 1 ]
	[[ "$output" == *"not stopped"* ]]
	moat delete --force "$c1"
	[ "$status" -eq 0 ]
	assert_nothing_left "$c1"
}

@test "delete of a created container kills it (as runc does)" {
	update_config '.process.args = ["sleep", "100"]'
	moat create -b "$BUNDLE" --pid-file "$BUNDLE/pid" "$c1"
	pid=$(cat "$BUNDLE/pid")
	moat delete "$c1"
	[ "$status" -eq 0 ]
	! kill -0 "$pid" 2>/dev/null
	assert_nothing_left "$c1"
}

# The state names a process moat did not start: the pid passed to another
# process (pidreuse hands the victim's pid to a new process the instant
# moat is about to open it), or a state without the init's start time.
# Neither kill nor delete --force may signal that process.
forge_state_pid() {
	VICTIM_PID="$1" VICTIM_START="$2" sh -c "$(forge_state_prep "$c1")"
}

# Still sleeping: not killed (a killed one may be a zombie for a while).
sleeping() {
	[ "$(cut -d' ' -f3 "/proc/$1/stat")" = S ]
}

@test "kill and delete --force spare a process given the init's pid since" {
	update_config '.process.args = ["sleep", "100"]'
	moat create -b "$BUNDLE" "$c1"
	[ "$status" -eq 0 ]
	local prep
	prep="$(forge_state_prep "$c1")"
	for verb in "kill $c1 KILL" "delete --force $c1"; do
		# shellcheck disable=SC2086 # the verb's words
		# (LeakSanitizer cannot run under ptrace.)
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
			run "$TESTBIN/pidreuse" "$prep" \
			"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" $verb
		echo "$verb: $output" >&2
		[ "$status" -ne 77 ] || skip "$output"
		[ "$status" -eq 0 ]
		[[ "$output" == *"pid reused"* ]]
		[[ "$output" == *"victim alive"* ]]
	done
	[[ "$output" == *"moat exited 0"* ]]
	assert_nothing_left "$c1"
}

@test "ps does not run ps(1) as the host ids of a process given the init's pid since" {
	command -v ps >/dev/null || skip "no ps"
	update_config '.process.args = ["sleep", "100"]'
	moat create -b "$BUNDLE" "$c1"
	[ "$status" -eq 0 ]
	# A ps(1) that says which uid it runs as (its directory open to it).
	local bin
	bin="$(mktemp -d /tmp/next9-ps.XXXXXX)"
	chmod 755 "$bin"
	printf '#!/bin/sh\necho "ps(1) ran as uid $(id -u)" >&2\nexec %s "$@"\n' \
		"$(command -v ps)" >"$bin/ps"
	chmod 755 "$bin/ps"
	# The victim's pid goes, as moat opens its uid_map, to a process whose
	# user namespace maps root onto host uid 4242.
	PATH="$bin:$PATH" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		run "$TESTBIN/pidreuse" --at-open uid_map --map-root-to 4242 \
		"$(forge_state_prep "$c1")" \
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" ps "$c1"
	rm -r "$bin"
	echo "$output" >&2
	[ "$status" -ne 77 ] || skip "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"pid reused"* ]]
	[[ "$output" == *"ps(1) ran as uid "* ]]
	[[ "$output" != *"ps(1) ran as uid 4242"* ]]
	[[ "$output" == *"moat exited 0"* ]]
}

@test "a state without the init's start time names no process to signal" {
	update_config '.process.args = ["sleep", "100"]'
	moat create -b "$BUNDLE" "$c1"
	[ "$status" -eq 0 ]
	# Not this shell's child, so that nothing here waits for it.
	(sleep 100 >/dev/null 2>&1 </dev/null & echo $! >"$BUNDLE/victim")
	victim=$(cat "$BUNDLE/victim")
	forge_state_pid "$victim" 0
	moat kill "$c1" KILL
	sleeping "$victim"
	[ "$status" -eq 1 ]
	[[ "$output" == *"container not running"* ]]
	moat delete --force "$c1"
	sleeping "$victim"
	kill "$victim"
	[ "$status" -eq 0 ]
	assert_nothing_left "$c1"
}

@test "delete of a missing container says does not exist" {
	moat delete nope
	[ "$status" -eq 1 ]
	[[ "$output" == *'container "nope" does not exist'* ]]
}

@test "start of a stopped container fails" {
	moat create -b "$BUNDLE" "$c1"
	moat start "$c1"
	wait_status "$c1" stopped
	moat start "$c1"
	[ "$status" -eq 1 ]
	[[ "$output" == *"stopped"* ]]
}

@test "duplicate create of a live id fails and keeps the first" {
	update_config '.process.args = ["sleep", "100"]'
	moat create -b "$BUNDLE" "$c1"
	[ "$status" -eq 0 ]
	moat create -b "$BUNDLE" "$c1"
	[ "$status" -eq 1 ]
	[[ "$output" == *"already exists"* ]]
	moat state "$c1"
	[ "$(echo "$output" | jq -r .status)" = created ]
}

@test "concurrent create of one id: exactly one wins" {
	update_config '.process.args = ["sleep", "100"]'
	for i in $(seq 1 8); do
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" create -b "$BUNDLE" "$c1" >"$BUNDLE/out.$i" 2>&1 &
	done
	wait
	ok=0
	for i in $(seq 1 8); do
		grep -q . "$BUNDLE/out.$i" || ok=$((ok + 1))
	done
	[ "$ok" -eq 1 ]
	moat state "$c1"
	[ "$(echo "$output" | jq -r .status)" = created ]
}

@test "list shows containers, as a table and as JSON" {
	update_config '.process.args = ["sleep", "100"]'
	moat create -b "$BUNDLE" "$c1"
	moat run -d -b "$BUNDLE" "$c2"
	moat list
	[ "$status" -eq 0 ]
	[[ "$output" == *"$c1"*created* ]]
	[[ "$output" == *"$c2"*running* ]]
	moat list --format json
	[ "$(echo "$output" | jq length)" = 2 ]
	[ "$(echo "$output" | jq -r --arg id "$c2" '.[] | select(.id==$id) | .status')" = running ]
}

@test "the pid file is written and complete when create returns" {
	update_config '.process.args = ["sleep", "100"]'
	moat create -b "$BUNDLE" --pid-file "$BUNDLE/c.pid" "$c1"
	[ "$status" -eq 0 ]
	[[ "$(cat "$BUNDLE/c.pid")" =~ ^[0-9]+$ ]]
}

# Issue 15: unknown flags were only a warning; now runc's and crun's known
# flags are tolerated and anything else is refused (cli.bats has both).
@test "--flag=value and --flag value both work, unknown flags are refused" {
	update_config '.process.args = ["sleep", "100"]'
	moat --log-format=json create --bundle="$BUNDLE" --no-new-keyring --some-future-flag "$c1"
	[ "$status" -eq 1 ]
	[[ "$output" == *"unknown flag --some-future-flag"* ]]
	assert_nothing_left "$c1"
	moat --log-format=json create --bundle="$BUNDLE" --no-new-keyring --no-subreaper "$c1"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "errors go to --log as runc-style JSON" {
	moat --log "$BUNDLE/log.json" --log-format json delete nope
	[ "$status" -eq 1 ]
	[ "$(jq -r .level "$BUNDLE/log.json")" = error ]
	[[ "$(jq -r .msg "$BUNDLE/log.json")" == *'container "nope" does not exist'* ]]
	jq -r .time "$BUNDLE/log.json" | grep -Eq '^[0-9]{4}-'
}

@test "--version has a commit line; --help and VERB --help work" {
	run "$MOAT" --version
	[ "$status" -eq 0 ]
	[[ "$output" == *"commit: "* ]]
	run "$MOAT" --help
	[ "$status" -eq 0 ]
	[[ "$output" == *create* ]]
	run "$MOAT" create --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"--bundle"* ]]
}

@test "features prints JSON" {
	run "$MOAT" features
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.linux.namespaces | index("network")'
}
