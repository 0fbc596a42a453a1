#!/usr/bin/env bats
# The command line as a person and an engine use it, next to runc's
# contract (issue 15): --debug detail in the log, list/delete/kill/update/ps
# forms, flags runc and crun know tolerated and typos refused, clamps told
# on stderr, a broken operator config not blocking cleanup.

load helpers

setup() {
	requires_root
	setup_bundle
	c1="cli$BATS_TEST_NUMBER-$$-a"
	c2="cli$BATS_TEST_NUMBER-$$-b"
}

teardown() {
	teardown_bundle
}

sleeper() {
	update_config '.process.args = ["sleep", "1000"]'
	moat run -d -b "$BUNDLE" "$1"
	[ "$status" -eq 0 ]
}

@test "--debug writes what moat decided and did to --log as JSON lines, and nothing without it" {
	update_config '.process.args = ["sleep", "1000"] | .linux.resources.memory.limit = 4294967296'
	log="$BUNDLE/debug.json"
	moat_sep --debug --log "$log" --log-format json create -b "$BUNDLE" "$c1"
	[ "$status" -eq 0 ]
	# stdout untouched; stderr has only the clamp line.
	[ -z "$output" ]
	# Every line is runc's {"level","msg","time"}.
	jq -e -s 'length > 5 and all(.[]; (keys == ["level", "msg", "time"]) and .level == "debug")' "$log"
	msgs="$(jq -r .msg "$log")"
	[[ "$msgs" == *"create: profile strict"*"memory 536870912"* ]]
	[[ "$msgs" == *"override changed linux.resources.memory.limit: asked 4294967296, enforced 536870912"* ]]
	[[ "$msgs" == *"namespace network: new"* ]]
	[[ "$msgs" == *"cgroup "*"$c1"* ]]
	[[ "$msgs" == *"phase after-cgroup: "*" ms"* ]]
	[[ "$msgs" == *"phase before-ready: "* ]]
	if [ "$(jq -r .netguard "$ROOT/$c1/state.json" 2>/dev/null)" = cgroup-bpf ] ||
		grep -q cgroup-bpf "$ROOT/$c1/state.json"; then
		[[ "$msgs" == *"bpf cgroup_skb/egress: 1 program(s)"* ]]
		[[ "$msgs" == *"bpf cgroup/connect4: 1 program(s)"* ]]
	fi
	# Without --debug: no debug line, only errors.
	moat --log "$BUNDLE/plain.json" --log-format json state "$c1"
	[ "$status" -eq 0 ]
	[ ! -s "$BUNDLE/plain.json" ]
	# Text format: level=debug.
	moat --debug --log "$BUNDLE/text.log" state "$c1"
	# state obeys the saved decision: it loads the operator config, not a profile.
	grep -qE 'level=debug msg="state: operator config [^ ]+ \(profile strict\)' "$BUNDLE/text.log"
}

@test "list: -q prints ids only, sorted; --format json names the owner" {
	update_config '.process.args = ["sleep", "1000"]'
	moat create -b "$BUNDLE" "$c2"
	[ "$status" -eq 0 ]
	moat create -b "$BUNDLE" "$c1"
	[ "$status" -eq 0 ]
	moat list -q
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '%s\n%s' "$c1" "$c2")" ]
	moat list --quiet
	[ "${lines[0]}" = "$c1" ]
	moat list
	[[ "${lines[0]}" == ID* ]]
	[[ "${lines[1]}" == "$c1 "* ]]
	[[ "${lines[2]}" == "$c2 "* ]]
	[[ "${lines[1]}" == *" root" ]]
	moat list --format json
	[ "$(echo "$output" | jq -r '[.[].id] | join(" ")')" = "$c1 $c2" ]
	[ "$(echo "$output" | jq -r '.[0].owner')" = root ]
}

@test "delete --force of an id that does not exist succeeds (runc, crun); without --force it fails" {
	moat delete --force "nothere-$$"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	moat delete "nothere-$$"
	[ "$status" -eq 1 ]
	[[ "$output" == *'does not exist'* ]]
	# Bad ids stay bad input, forced or not.
	moat delete --force "../x"
	[ "$status" -eq 1 ]
	# A missing --root: nothing to delete either.
	run "$MOAT" --root "$BUNDLE/none" --config "$MOAT_CONFIG" delete -f "nothere-$$"
	[ "$status" -eq 0 ]
}

@test "kill ID 0 is a liveness check" {
	sleeper "$c1"
	moat kill "$c1" 0
	[ "$status" -eq 0 ]
	moat state "$c1"
	[ "$(echo "$output" | jq -r .status)" = running ]
	moat kill "$c1" KILL
	wait_status "$c1" stopped
	moat kill "$c1" 0
	[ "$status" -eq 1 ]
	[[ "$output" == *"not running"* ]]
}

@test "update --memory takes runc's size suffixes; a clamp is told on stderr in one line" {
	sleeper "$c1"
	cg="$(jq -r .cgroup "$ROOT/$c1/state.json")"
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then mem="/sys/fs/cgroup$cg/memory.max"; else mem="/sys/fs/cgroup/memory$cg/memory.limit_in_bytes"; fi
	moat_sep update --memory 256m "$c1"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(cat "$mem")" = 268435456 ]
	moat_sep update --memory 1g "$c1"
	[ "$status" -eq 0 ]
	[ "$(cat "$mem")" = 536870912 ]
	moat_sep update --memory 2147483648 "$c1"
	[ "$status" -eq 0 ]
	[ "$(cat "$mem")" = 536870912 ]
	[ "$(echo "$stderr" | wc -l)" = 1 ]
	[[ "$stderr" == "moat: update $c1: warning: linux.resources.memory.limit: asked 2147483648, holds 536870912 (above the profile's limit)" ]]
	moat update --memory 1q "$c1"
	[ "$status" -eq 1 ]
	[[ "$output" == *"--memory: expected bytes"* ]]
}

@test "create tells every clamp and ignored annotation on stderr" {
	update_config '.process.args = ["sleep", "1000"] | .linux.resources.memory.limit = 2147483648
		| .annotations = {"run.moat.memory-limit": "2G", "run.moat.foo": "1", "run.moat.pids-limit": "10"}'
	moat_sep create -b "$BUNDLE" "$c1"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"moat: create $c1: warning: linux.resources.memory.limit: asked 2147483648, holds 536870912 (above the profile's limit)"* ]]
	[[ "$stderr" == *"moat: create $c1: warning: annotations.run.moat.memory-limit: asked 2G, holds 536870912 (annotations may only tighten the profile)"* ]]
	[[ "$stderr" == *"moat: create $c1: warning: annotations.run.moat.foo: asked 1, ignored (not a run.moat annotation moat knows)"* ]]
	# A tightening annotation is honoured, not warned about; nor is the
	# routine hardening (mounts added, namespaces made).
	[[ "$stderr" != *"pids-limit"* ]]
	[[ "$stderr" != *"mounts"* ]]
	[ "$(echo "$stderr" | wc -l)" = 3 ]
	# run tells them before the container's own output.
	update_config '.process.args = ["echo", "payload-output"]'
	moat run -b "$BUNDLE" "$c2"
	[ "$status" -eq 0 ]
	[ "$output" = payload-output ]
	[[ "$warnings" == *"moat: run $c2: warning: linux.resources.memory.limit"* ]]
	run sh -c "'$MOAT' --root '$ROOT' --config '$MOAT_CONFIG' run -b '$BUNDLE' '$c2' 2>&1"
	[ "$status" -eq 0 ]
	[[ "$output" == *"moat: run $c2: warning: linux.resources.memory.limit"*payload-output ]]
}

@test "flag typos are refused; flags runc and crun know are tolerated" {
	moat list --bogus
	[ "$status" -eq 1 ]
	[[ "$output" == *"unknown flag --bogus (moat list --help lists the flags)"* ]]
	update_config '.process.args = ["true"]'
	moat run --detatch -b "$BUNDLE" "$c1"
	[ "$status" -eq 1 ]
	[[ "$output" == *"unknown flag --detatch"* ]]
	assert_nothing_left "$c1"
	moat --bogus-global list
	[ "$status" -eq 1 ]
	# runc's and crun's: global, create/run, exec, kill, delete, update.
	update_config '.process.args = ["sleep", "1000"]'
	moat --cgroup-manager cgroupfs --rootless false --log-level debug run -d --no-subreaper -b "$BUNDLE" "$c1"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	moat exec --ignore-paused --cap CAP_KILL --apparmor x --process-label y --no-new-privs "$c1" true
	[ "$status" -eq 0 ]
	moat update --blkio-weight 100 --kernel-memory 1m --memory-reservation 1m "$c1"
	[ "$status" -eq 0 ]
	moat kill --regex x "$c1" KILL
	[ "$status" -eq 0 ]
	wait_status "$c1" stopped
	moat delete --regex x "$c1"
	[ "$status" -eq 0 ]
	# A flag known to one verb is a typo on another.
	moat state --ignore-paused "$c1"
	[ "$status" -eq 1 ]
}

@test "ps ID -- ARGS runs ps with them, keeping the container's processes" {
	command -v ps >/dev/null || skip "no ps"
	sleeper "$c1"
	pid="$(jq -r .pid "$ROOT/$c1/state.json")"
	moat ps "$c1" -- -ef
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *PID*CMD* ]]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" == *" $pid "*"sleep 1000"* ]]
	# ps(1) gets the arguments as they are, as runc passes them on.
	moat ps "$c1" -eo pid,comm
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" == *"$pid sleep" ]]
	moat ps --format json "$c1"
	[ "$(echo "$output" | jq -r '.[0]')" = "$pid" ]
}

@test "moat version is a verb; exec --help shows runc's order" {
	run "$MOAT" version
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "moat version "* ]]
	run "$MOAT" exec --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"ID [COMMAND [ARG...]]"* ]]
	[[ "$output" != *"[--process F | COMMAND...]"* ]]
}

@test "features lists the capabilities moat knows and says the profile drops them" {
	run "$MOAT" features
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.linux.capabilities | index("CAP_SYS_ADMIN") and index("CAP_CHOWN") and length >= 38'
	echo "$output" | jq -e '.annotations["run.moat.capabilities"] | startswith("none")'
}

@test "a broken operator config: state, list, kill, delete work with a warning; create, run, exec refuse" {
	sleeper "$c1"
	echo '{"limits": {"pids": "lots"}' >"$MOAT_CONFIG"
	moat_sep state "$c1"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r .status)" = running ]
	[[ "$stderr" == *"warning: "*"moat-config.json"*"state goes on with the built-in profile"* ]]
	moat list -q
	[ "$status" -eq 0 ]
	[[ "$output" == *"$c1"* ]]
	moat exec "$c1" true
	[ "$status" -eq 1 ]
	moat update --pids-limit 10 "$c1"
	[ "$status" -eq 1 ]
	moat kill "$c1" KILL
	[ "$status" -eq 0 ]
	wait_status "$c1" stopped
	moat delete "$c1"
	[ "$status" -eq 0 ]
	[ ! -e "$ROOT/$c1" ]
	moat run -b "$BUNDLE" "$c2"
	[ "$status" -eq 1 ]
	[[ "$output" == *"moat: run: "*"moat-config.json: invalid JSON"* ]]
	assert_nothing_left "$c2"
}

@test "events --interval takes Go durations" {
	sleeper "$c1"
	run timeout 1 "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" events --interval 100ms "$c1"
	[ "$(echo "$output" | grep -c '"type":"stats"')" -ge 4 ]
	moat events --interval 1h30m --stats "$c1"
	[ "$status" -eq 0 ]
	moat events --interval 5x "$c1"
	[ "$status" -eq 1 ]
	[[ "$output" == *"--interval: expected a duration"* ]]
}

@test "exec --additional-gids adds the groups" {
	sleeper "$c1"
	moat exec --additional-gids 1234 -g 2345,3456 "$c1" sh -c 'grep ^Groups: /proc/self/status'
	[ "$status" -eq 0 ]
	[[ "$output" == *1234*2345*3456* ]]
	moat exec -g nope "$c1" true
	[ "$status" -eq 1 ]
}

@test "an invalid capability name in process.capabilities is bad input" {
	update_config '.process.capabilities.bounding = ["CAP_CHOWN", "CAP_BOGUS"]'
	moat create -b "$BUNDLE" "$c1"
	[ "$status" -eq 1 ]
	[[ "$output" == *"process.capabilities.bounding[1]: unknown capability CAP_BOGUS"* ]]
	assert_nothing_left "$c1"
}

@test "linux.devices: a safe node under another name is created; a refused one is told on stderr" {
	update_config '.linux.devices = [{"path": "/dev/test1", "type": "c", "major": 1, "minor": 3, "fileMode": 438},
			{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229}]
		| .linux.resources.devices = [{"allow": false, "access": "rwm"},
			{"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwm"},
			{"allow": true, "type": "c", "major": 10, "minor": 229, "access": "rwm"}]
		| .process.args = ["sh", "-c", "[ -c /dev/test1 ] && echo x >/dev/test1 && echo node-ok; [ -e /dev/fuse ] || echo no-fuse"]'
	moat_sep run -b "$BUNDLE" "$c1"
	[ "$status" -eq 0 ]
	[[ "$output" == *node-ok* ]]
	[[ "$output" == *no-fuse* ]]
	[[ "$stderr" == *"moat: run $c1: warning: linux.devices: asked /dev/fuse (c 10:229), holds default devices only"* ]]
	[[ "$stderr" == *"moat: run $c1: warning: linux.resources.devices: asked c 10:229 rwm, holds default devices only"* ]]
}

@test "linux.resources.devices: a config's denial of a safe device holds" {
	update_config '.linux.resources.devices = [{"allow": false, "access": "rwm"},
			{"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwm"},
			{"allow": false, "type": "c", "major": 1, "minor": 5, "access": "rwm"}]
		| .process.args = ["sh", "-c", "echo x >/dev/null && echo null-ok; head -c1 /dev/zero >/dev/null 2>&1 || echo zero-denied"]'
	moat run -b "$BUNDLE" "$c1"
	[ "$status" -eq 0 ]
	[[ "$output" == *null-ok* ]]
	[[ "$output" == *zero-denied* ]]
}
