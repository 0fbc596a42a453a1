#!/usr/bin/env bats
# OCI hooks: the six kinds, in order, each with the state JSON on stdin;
# createContainer and startContainer inside the container's namespaces;
# failures, timeouts, poststop on delete.

load helpers
load runtime_helpers

setup() {
	requires_root
	setup_bundle
	ID="t-$BATS_TEST_NUMBER-$$"
	# Where hooks write what they saw: outside the bundle (the profile
	# refuses to bind the audit log's directory), bound into the container
	# for the hooks that run there.
	LOGDIR="$(mktemp -d /tmp/moat-hooks.XXXXXX)"
	chmod 777 "$LOGDIR"
	# G5: a bind is writable only in a tree the operator lists.
	printf '{"audit_log": "%s", "writable_bind_trees": ["%s"]}\n' "$AUDIT_LOG" "$LOGDIR" >"$MOAT_CONFIG"
	# One recorder for both sides: the host's sh runs it for host hooks,
	# the rootfs's busybox sh for the container's. Argument: the kind.
	cat >"$LOGDIR/record" <<-'EOF'
		#!/bin/sh
		d=$(dirname "$0")
		cat >"$d/$1.json"
		{
			echo "pid $$"
			for ns in mnt net pid uts ipc; do echo "$ns $(readlink /proc/self/ns/$ns)"; done
			echo "hostname $(hostname)"
			echo "root $(stat -c %i /)"
		} >"$d/$1.env"
		env >"$d/$1.environ"
		echo "$1" >>"$d/order"
		# G12: container root is no host root: the order file a host hook
		# starts stays writable for the hooks inside.
		chmod 666 "$d/order" 2>/dev/null || true
	EOF
	chmod 755 "$LOGDIR/record"
	update_config --arg d "$LOGDIR" '.process.args = ["sleep", "100"]
		| .mounts += [{"destination": $d, "type": "bind", "source": $d, "options": ["rbind", "rw"]}]'
}

teardown() {
	teardown_bundle
	rm -rf "$LOGDIR"
}

# A hook of KIND that records into $LOGDIR (same path inside and out).
add_hook() {
	update_config --arg k "$1" --arg r "$LOGDIR/record" \
		'.hooks[$k] += [{"path": "/bin/sh", "args": ["sh", $r, $k]}]'
}

order() {
	[ -f "$LOGDIR/order" ] && xargs <"$LOGDIR/order"
}

# Wait (bounded) until the order file has $1 lines.
wait_hooks() {
	for _ in $(seq 1 100); do
		[ "$(wc -l <"$LOGDIR/order" 2>/dev/null || echo 0)" -ge "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

@test "all six kinds run, in order, each at its step of the lifecycle" {
	for k in prestart createRuntime createContainer; do
		add_hook "$k"
	done
	# A slow startContainer: poststart must still wait for it and for the
	# payload's exec (runtime-spec), and then sees the payload running.
	update_config --arg r "$LOGDIR/record" --arg d "$LOGDIR" '
		.hooks.startContainer = [{"path": "/bin/sh", "args": ["sh", "-c", "sleep 0.2; exec sh \($r) startContainer"]}]
		| .hooks.poststart = [{"path": "/bin/sh", "args": ["sh", $r, "poststart"]},
			{"path": "/bin/sh", "args": ["sh", "-c", "cat /proc/$(jq -r .pid)/comm >\($d)/poststart.comm"]}]'
	add_hook poststop
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(order)" = "prestart createRuntime createContainer" ]

	moat start "$ID"
	[ "$status" -eq 0 ]
	wait_hooks 5
	# startContainer runs before the payload is exec'd and poststart after
	# it: poststart is last.
	[ "$(order)" = "prestart createRuntime createContainer startContainer poststart" ]
	[ "$(cat "$LOGDIR/poststart.comm")" = sleep ]

	moat kill "$ID" KILL
	wait_status "$ID" stopped
	[ "$(order | wc -w)" -eq 5 ]
	moat delete "$ID"
	[ "$status" -eq 0 ]
	[ "$(order)" = "prestart createRuntime createContainer startContainer poststart poststop" ]
}

@test "each hook gets the state JSON on stdin with the right status, pid, id and bundle" {
	for k in prestart createRuntime createContainer startContainer poststart poststop; do
		add_hook "$k"
	done
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	pid=$(container_pid "$ID")
	moat start "$ID"
	wait_hooks 5
	moat delete --force "$ID"
	[ "$status" -eq 0 ]

	check() { # kind status pid
		local f="$LOGDIR/$1.json"
		[ "$(jq -r .ociVersion "$f")" != null ]
		[ "$(jq -r .id "$f")" = "$ID" ]
		[ "$(jq -r .bundle "$f")" = "$BUNDLE" ]
		[ "$(jq -r .status "$f")" = "$2" ] || { echo "$1: status $(jq -r .status "$f"), wanted $2" >&2; return 1; }
		[ "$(jq -r '.pid // 0' "$f")" = "$3" ] || { echo "$1: pid $(jq -r .pid "$f"), wanted $3" >&2; return 1; }
	}
	check prestart creating "$pid"
	check createRuntime creating "$pid"
	check createContainer creating "$pid"
	check startContainer created "$pid"
	check poststart running "$pid"
	check poststop stopped 0
}

@test "createContainer and startContainer run inside the container's namespaces, the others on the host" {
	update_config '.hostname = "hooked"'
	for k in prestart createRuntime createContainer startContainer poststart; do
		add_hook "$k"
	done
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	wait_hooks 5
	pid=$(container_pid "$ID")
	root_ino=$(stat -c %i "$BUNDLE/rootfs")
	for k in createContainer startContainer; do
		for ns in mnt net pid uts ipc; do
			grep -Fqx "$ns $(readlink "/proc/$pid/ns/$ns")" "$LOGDIR/$k.env"
		done
		grep -qx "hostname hooked" "$LOGDIR/$k.env"
	done
	# startContainer runs after pivot_root, in the container's own root
	# (createContainer comes before it, runtime-spec says).
	grep -qx "root $root_ino" "$LOGDIR/startContainer.env"
	for k in prestart createRuntime poststart; do
		for ns in mnt net pid uts; do
			grep -Fqx "$ns $(readlink "/proc/self/ns/$ns")" "$LOGDIR/$k.env"
		done
		grep -qx "root $(stat -c %i /)" "$LOGDIR/$k.env"
	done
}

@test "a hook gets its args and env exactly" {
	update_config --arg d "$LOGDIR" '.hooks.prestart = [{"path": "/bin/sh",
		"args": ["custom-argv0", "-c", "echo \"$0|$1|$#\" >\($d)/args; tr \"\\\\0\" \"\\\\n\" </proc/$$/cmdline >\($d)/argv; env >\($d)/env", "one two", ""],
		"env": ["HOOKVAR=hook value", "PATH=/usr/bin:/bin"]}]'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	# sh -c SCRIPT ARG0 ARG1: "$0" is "one two", "$1" the empty string.
	[ "$(cat "$LOGDIR/args")" = "one two||1" ]
	[ "$(head -n 1 "$LOGDIR/argv")" = custom-argv0 ]
	grep -qx "HOOKVAR=hook value" "$LOGDIR/env"
	# Nothing of moat's own environment.
	! grep -q "^MOAT" "$LOGDIR/env"
	! grep -q "^BATS" "$LOGDIR/env"
}

@test "a failing prestart hook fails create and leaves nothing" {
	update_config '.hooks.prestart = [{"path": "/bin/sh", "args": ["sh", "-c", "exit 3"]}]'
	add_hook createRuntime
	moat create -b "$BUNDLE" --pid-file "$BUNDLE/pid" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"prestart hook /bin/sh: exited with status 3"* ]]
	# The hooks after it did not run.
	[ ! -e "$LOGDIR/order" ]
	assert_nothing_left "$ID"
	[ ! -e "$BUNDLE/pid" ]
}

@test "a failing createRuntime or createContainer hook fails create and leaves nothing" {
	for k in createRuntime createContainer; do
		update_config --arg k "$k" 'del(.hooks) | .hooks[$k] = [{"path": "/bin/false"}]'
		moat create -b "$BUNDLE" "$ID"
		[ "$status" -eq 1 ]
		[[ "$output" == *"$k hook /bin/false"* ]]
		assert_nothing_left "$ID"
	done
}

@test "a failing startContainer hook: the payload never runs" {
	update_config --arg d "$LOGDIR" '.hooks.startContainer = [{"path": "/bin/false"}]
		| .process.args = ["sh", "-c", "touch \($d)/payload-ran"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -ne 0 ]
	[ ! -e "$LOGDIR/payload-ran" ]
	assert_nothing_left "$ID"
}

@test "a hook that does not exist is a clear error, nothing left" {
	update_config '.hooks.prestart = [{"path": "/no/such/hook"}]'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"/no/such/hook"*"No such file or directory"* ]]
	assert_nothing_left "$ID"
}

@test "a hook past its timeout is killed and fails create" {
	update_config --arg d "$LOGDIR" '.hooks.prestart = [{"path": "/bin/sh",
		"args": ["sh", "-c", "echo $$ >\($d)/hook.pid; exec sleep 100"], "timeout": 1}]'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"prestart hook /bin/sh"*"timed out"* ]]
	assert_nothing_left "$ID"
	! kill -0 "$(cat "$LOGDIR/hook.pid")" 2>/dev/null
}

@test "a failing poststart hook is a warning: the container keeps running" {
	update_config '.hooks.poststart = [{"path": "/bin/false"}]'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[[ "$output" == *"warning: poststart hook"* ]]
	moat state "$ID"
	[ "$(echo "$output" | jq -r .status)" = running ]
}

@test "poststop runs on delete, also for run, and a failing one does not keep delete from cleaning up" {
	add_hook poststop
	update_config '.process.args = ["true"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(order)" = poststop ]
	[ "$(jq -r .status "$LOGDIR/poststop.json")" = stopped ]
	assert_nothing_left "$ID"

	update_config '.hooks.poststop = [{"path": "/bin/false"}] | .process.args = ["sleep", "100"]'
	moat run -d -b "$BUNDLE" "$ID"
	moat delete --force "$ID"
	[ "$status" -eq 0 ]
	assert_nothing_left "$ID"
}

@test "hooks of one kind run in the order listed" {
	update_config --arg d "$LOGDIR" '.hooks.prestart = [
		{"path": "/bin/sh", "args": ["sh", "-c", "echo first >>\($d)/order"]},
		{"path": "/bin/sh", "args": ["sh", "-c", "echo second >>\($d)/order"]},
		{"path": "/bin/sh", "args": ["sh", "-c", "echo third >>\($d)/order"]}]'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(order)" = "first second third" ]
}

@test "each kind reads runc's state (its keys only), its own env, host ones in the bundle; a hook acts in the container by pid" {
	command -v nsenter >/dev/null || skip "no nsenter"
	# A hook library's way: the pid from the state, then nsenter.
	cat >"$LOGDIR/enter" <<-'EOF'
		#!/bin/sh
		pid=$(jq -r .pid)
		nsenter -t "$pid" -m -u -- /bin/hostname >"$(dirname "$0")/entered"
	EOF
	chmod 755 "$LOGDIR/enter"
	update_config '.hostname = "hooked" | .annotations = {"x.y": "z"}'
	for k in prestart createRuntime createContainer startContainer poststart poststop; do
		update_config --arg k "$k" --arg r "$LOGDIR/record" \
			'.hooks[$k] += [{"path": "/bin/sh", "args": ["sh", $r, $k], "env": ["HOOK_KIND=\($k)"]}]'
	done
	update_config --arg e "$LOGDIR/enter" '.hooks.createRuntime += [{"path": $e}]'
	MOAT_CALLER_ENV=leak moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	moat delete --force "$ID"
	[ "$status" -eq 0 ]
	for k in prestart createRuntime createContainer startContainer poststart poststop; do
		f="$LOGDIR/$k.json"
		# config.json's annotations, and the decisions create recorded
		# beside them (run.moat.landlock, run.moat.seccomp), as `moat state`.
		jq -e --arg id "$ID" --arg b "$BUNDLE" '.id == $id and .bundle == $b and .annotations["x.y"] == "z"
			and ([.annotations | keys[] | select(. != "x.y" and (startswith("run.moat.") | not))] == [])' "$f"
		keys="$(jq -c 'keys_unsorted - ["ociVersion", "id", "status", "pid", "bundle", "annotations"]' "$f")"
		[ "$keys" = "[]" ] || { echo "$k: keys runc does not send: $keys" >&2; return 1; }
		grep -qx "HOOK_KIND=$k" "$LOGDIR/$k.environ"
		[ -z "$(grep MOAT_CALLER_ENV "$LOGDIR/$k.environ" || true)" ]
	done
	[ "$(jq 'has("pid")' "$LOGDIR/poststop.json")" = false ]
	[ "$(cat "$LOGDIR/entered")" = hooked ]
	# Those on the host start in the bundle, as runc's.
	for k in prestart createRuntime poststart poststop; do
		grep -qx "PWD=$BUNDLE" "$LOGDIR/$k.environ"
	done
}

@test "a hook starts with no signal ignored or blocked, whatever moat's caller had (host and container hooks)" {
	for k in prestart createContainer startContainer; do
		# cp's own status, no shell between: busybox ash ignores SIGQUIT
		# for the commands of a `sh -c`.
		update_config --arg k "$k" --arg f "$LOGDIR/$k.sig" \
			'.hooks[$k] += [{"path": "/bin/cp", "args": ["cp", "/proc/self/status", $f]}]'
	done
	update_config '.process.args = ["true"]'
	moat_from_leaky_caller run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	for k in prestart createContainer startContainer; do
		grep "^Sig" "$LOGDIR/$k.sig" >&2
		grep -qx "SigIgn:	0000000000000000" "$LOGDIR/$k.sig"
		grep -qx "SigBlk:	0000000000000000" "$LOGDIR/$k.sig"
	done
}
