#!/usr/bin/env bats
# moat session: a sandbox that stays, many commands in it. Every test ends
# by removing its sessions and checking that nothing is left: no session
# dir, no container state, no cgroup, no process.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	setup_bundle
	WORK="$(mktemp -d /tmp/moat-sesswork.XXXXXX)"
	MARK=$((800000 + RANDOM))
}

teardown() {
	for s in $(ls "$ROOT/.session" 2>/dev/null); do
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session rm "$s" || true
	done
	rm -rf "$WORK"
	teardown_bundle
}

# moat session ARGS, with stdout in $output and stderr in $stderr.
ms() {
	local out="$BUNDLE/.ms-out" errf="$BUNDLE/.ms-err"
	status=0
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session "$@" >"$out" 2>"$errf" </dev/null || status=$?
	output="$(cat "$out")"
	stderr="$(cat "$errf")"
	mapfile -t lines <"$out"
	echo "session $* (status=$status):" >&2
	echo "$output" | head -c 4000 >&2
	echo "stderr: $stderr" >&2
}

# A session on the busybox rootfs (extra flags passed on); its id in $SID.
new_session() {
	ms create --rootfs "$BUNDLE/rootfs" "$@"
	[ "$status" -eq 0 ]
	SID="$output"
	[[ "$SID" == session-* ]]
}

rec() { jq -r "$1" "$BUNDLE/rec.json"; }

# The session's cgroup in the hierarchy that counts pids: v1's pids one, or
# the cgroup2 root of a pure v2 host.
session_cg() {
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		echo /sys/fs/cgroup/moat/"$1"
	else
		echo /sys/fs/cgroup/pids/moat/"$1"
	fi
}

# The host pids of the session's processes, from its cgroup.
session_pids() {
	local d
	d="$(session_cg "$1")"
	cat "$d"/cgroup.procs "$d"/*/cgroup.procs 2>/dev/null || true
}

nothing_left() {
	local left
	left="$(ls -A "$ROOT/.session" 2>/dev/null || true)"
	[ -z "$left" ] || { echo "sessions left: $left"; return 1; }
	left="$(ls "$ROOT" 2>/dev/null || true)"
	[ -z "$left" ] || { echo "state left: $left"; return 1; }
	# The cgroups of this test's sessions only (its audit log names them):
	# other sessions on the machine are not this test's to judge.
	local id
	for id in $(jq -r 'select(.verb == "session create") | .id // empty' "$AUDIT_LOG" 2>/dev/null); do
		left="$(ls -d /sys/fs/cgroup/*/moat/"$id" /sys/fs/cgroup/moat/"$id" 2>/dev/null || true)"
		[ -z "$left" ] || { echo "cgroup left: $left"; return 1; }
	done
	! grep -q "$BUNDLE" /proc/self/mountinfo || { echo "mount left"; return 1; }
	! pgrep -f "^sleep $MARK" >/dev/null || { echo "process left"; return 1; }
}

@test "session: create, exec twice (files persist), list, rm; nothing left" {
	new_session --workdir "$WORK"
	ms exec "$SID" -- sh -c 'echo one >/tmp/state; echo made >/work/out.txt; echo err >&2; exit 5'
	[ "$status" -eq 5 ]
	[ "$output" = "" ]
	[ "$stderr" = err ]
	ms exec --result "$BUNDLE/rec.json" "$SID" -- sh -c 'cat /tmp/state; pwd'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = one ]
	[ "${lines[1]}" = /work ]
	[ "$(cat "$WORK/out.txt")" = made ]
	[ "$(rec .id)" = "$SID" ]
	[ "$(rec .exit_code)" = 0 ]
	[ "$(rec .timed_out)" = false ]
	[ "$(rec .stdout.bytes)" = 10 ]
	[ "$(rec '.peak_memory_bytes > 0')" = true ]
	[ "$(rec '.limits.pids')" = 64 ]
	ms list --json
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r '.[0].id')" = "$SID" ]
	[ "$(echo "$output" | jq -r '.[0].idle_timeout_s')" = 1800 ]
	[ "$(echo "$output" | jq -r '.[0].workdir')" = "$(realpath "$WORK")" ]
	ms list
	[[ "${lines[1]}" == "$SID "* ]]
	ms rm "$SID"
	[ "$status" -eq 0 ]
	ms rm "$SID"
	[ "$status" -eq 0 ]
	ms exec "$SID" -- true
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session exec $SID: no such session: No such file or directory" ]
	nothing_left
}

@test "session: create --json prints an object; stdout is not held open by the session" {
	# $(...) returns only when every writer of the pipe is gone: the
	# session's init must not hold moat's stdout.
	local out
	out="$(timeout 20 "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session create --json --rootfs "$BUNDLE/rootfs")"
	SID="$(echo "$out" | jq -r .id)"
	[[ "$SID" == session-* ]]
	ms rm "$SID"
	nothing_left
}

@test "session: the init runs nothing but reaps what ended execs leave" {
	new_session
	# Ten orphans, each exiting at once: none stays a zombie.
	ms exec "$SID" -- sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do (sh -c "exit 0" &) ; done; sleep 0.2'
	[ "$status" -eq 0 ]
	ms exec "$SID" -- sh -c 'sleep 0.2; ps -o pid,stat,comm'
	[ "$status" -eq 0 ]
	[ -z "$(echo "$output" | grep -E ' Z ')" ]
	[ "$(echo "$output" | grep -c .)" -eq 3 ] # the header, the init, ps
	ms rm "$SID"
	nothing_left
}

@test "session exec: what the command left running in the background is killed when it ends; the session lives on" {
	new_session
	ms exec "$SID" -- sh -c "sleep $MARK >/dev/null 2>&1 </dev/null & (sleep $MARK >/dev/null 2>&1 </dev/null &); echo started"
	[ "$status" -eq 0 ]
	[ "$output" = started ]
	[ -z "$(pgrep -f "^sleep $MARK")" ]
	ms exec "$SID" -- echo alive
	[ "$output" = alive ]
	ms rm "$SID"
	nothing_left
}

@test "session exec: --timeout kills the whole tree, TERM ignored; the session lives on" {
	new_session
	ms exec --timeout 1s --result "$BUNDLE/rec.json" "$SID" -- \
		sh -c "trap '' TERM; (trap '' TERM; sleep $MARK) & sleep $MARK"
	[ "$status" -eq 124 ]
	[ "$(rec .timed_out)" = true ]
	[[ "$stderr" == *"timed out"* ]]
	[ -z "$(pgrep -f "^sleep $MARK")" ]
	ms exec "$SID" -- echo alive
	[ "$output" = alive ]
	ms rm "$SID"
	nothing_left
}

@test "session exec: the command's own cgroup is made only where it is counted or frozen (v1: cpuacct, memory, pids, freezer)" {
	mountpoint -q /sys/fs/cgroup/pids || skip "no cgroup v1 pids hierarchy"
	new_session
	ms exec "$SID" -- cat /proc/self/cgroup
	[ "$status" -eq 0 ]
	# the session's cgroup namespace: its own cgroup is /
	for h in pids memory freezer; do
		echo "$output" | grep -Eq "^[0-9]+:([a-z_]+,)*$h(,[a-z_]+)*:/exec-[0-9a-f]+\$"
	done
	for h in cpu cpuset devices blkio name=systemd; do
		if echo "$output" | grep -Eq "^[0-9]+:([a-z_]+,)*$h(,[a-z_]+)*:"; then
			echo "$output" | grep -Eq "^[0-9]+:([a-z_]+,)*$h(,[a-z_=]+)*:/\$"
		fi
	done
	ms rm "$SID"
	nothing_left
}

@test "session exec: moat killed with SIGKILL takes its command's tree, not the session" {
	new_session
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session exec "$SID" -- \
		sh -c "sleep $MARK & sleep $MARK" >/dev/null 2>&1 </dev/null &
	local pid=$!
	for _ in $(seq 100); do [ "$(pgrep -fc "^sleep $MARK")" -eq 2 ] && break; sleep 0.05; done
	[ "$(pgrep -fc "^sleep $MARK")" -eq 2 ]
	kill -9 "$pid"
	for _ in $(seq 100); do pgrep -f "^sleep $MARK" >/dev/null || break; sleep 0.05; done
	[ -z "$(pgrep -f "^sleep $MARK")" ]
	# only the init is left in the session, and no exec cgroup
	[ "$(session_pids "$SID" | wc -l)" -eq 1 ]
	[ -z "$(ls -d "$(session_cg "$SID")"/exec-* 2>/dev/null)" ]
	ms exec "$SID" -- echo alive
	[ "$output" = alive ]
	ms rm "$SID"
	nothing_left
}

@test "session exec: the command never runs before its watchdog exists (moat SIGKILLed at the watchdog's fork)" {
	new_session
	# pdeathrace holds the command's process where it would execve (or
	# waits for moat's go), holds moat at its next fork (the watchdog's),
	# then SIGKILLs moat and lets the process go on.
	run timeout 60 "$TESTBIN/pdeathrace" --at-next-fork "$MOAT" --root "$ROOT" \
		--config "$MOAT_CONFIG" session exec "$SID" -- sh -c 'echo ran >/tmp/ran'
	echo "$output" >&2
	[ "$status" -ne 77 ] || skip "ptrace is not permitted here"
	[ "$status" -eq 0 ]
	[[ "$output" == "child exited 1" || "$output" == "child killed by signal 9" ]]
	ms exec "$SID" -- sh -c 'test -e /tmp/ran && echo ran || echo never'
	[ "$output" = never ]
	ms rm "$SID"
	nothing_left
}

@test "session exec: a command that cannot run is told so when its process fails before moat's go" {
	new_session
	# pdeathrace holds moat at the watchdog's fork until the command's
	# process has failed (or waits for the go), then lets moat go on.
	run --separate-stderr timeout 60 "$TESTBIN/pdeathrace" --fork-after-child \
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session exec "$SID" -- ./missing
	echo "$output" >&2
	[ "$status" -ne 77 ] || skip "ptrace is not permitted here"
	[ "$status" -eq 0 ]
	[ "$output" = "moat exited 1" ]
	[ "$stderr" = "moat: session exec $SID: exec: \"./missing\": stat ./missing: no such file or directory" ]
	ms rm "$SID"
	nothing_left
}

@test "session exec: when moat and its watchdog both die, the next exec kills the orphaned tree" {
	new_session
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session exec "$SID" -- \
		sh -c "sleep $MARK & sleep $MARK" >/dev/null 2>&1 </dev/null &
	local pid=$! wd
	for _ in $(seq 100); do [ "$(pgrep -fc "^sleep $MARK")" -eq 2 ] && break; sleep 0.05; done
	[ "$(pgrep -fc "^sleep $MARK")" -eq 2 ]
	# The watchdog: moat's child that leads its own session and is moat.
	wd="$(ps -o pid=,sid=,comm= --ppid "$pid" | awk '$1 == $2 && $3 == "moat" { print $1 }')"
	[ -n "$wd" ]
	kill -9 "$wd" "$pid"
	sleep 0.3
	[ "$(pgrep -fc "^sleep $MARK")" -eq 2 ] # left behind
	ms exec "$SID" -- true
	[ "$status" -eq 0 ]
	[ -z "$(pgrep -f "^sleep $MARK")" ]
	[ -z "$(ls -d "$(session_cg "$SID")"/exec-* 2>/dev/null)" ]
	[ -z "$(ls "$ROOT/.session/$SID" | grep '^exec-')" ]
	ms rm "$SID"
	nothing_left
}

@test "session exec: a memory bomb is OOM-killed under the session's --memory, said in one line on stderr and in the record; the session lives on" {
	new_session --memory 32m
	ms exec --timeout 20s --result "$BUNDLE/rec.json" "$SID" -- \
		sh -c 'x=aaaaaaaaaaaaaaaa; while :; do x=$x$x; done'
	[ "$(rec .oom_killed)" = true ]
	[ "$(rec .timed_out)" = false ]
	[ "$(echo "$stderr" | grep -c .)" -eq 1 ]
	[[ "$stderr" == "moat: session exec $SID: out of memory: "*" killed" ]]
	ms exec "$SID" -- echo alive
	[ "$output" = alive ]
	ms rm "$SID"
	nothing_left
}

@test "session exec: the record says when the pids limit refused a fork" {
	new_session --pids 10
	ms exec --result "$BUNDLE/rec.json" "$SID" -- sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1 & done 2>/dev/null; wait'
	[ "$(rec .pids_limit_hit)" = true ]
	ms exec --result "$BUNDLE/rec.json" "$SID" -- true
	[ "$(rec .pids_limit_hit)" = false ]
	ms rm "$SID"
	nothing_left
}

@test "session exec: each record counts its own command's refused syscalls" {
	add_testbin sysprobe
	new_session
	ms exec --result "$BUNDLE/rec.json" "$SID" -- sh -c 'sysprobe bpf; sysprobe bpf; sysprobe kexec'
	[ "${lines[0]}" = "bpf: Operation not permitted (errno 1)" ]
	jq -e '.refused_syscalls == {"bpf": 2, "kexec_load": 1}' "$BUNDLE/rec.json"
	tail -n 1 "$AUDIT_LOG" | jq -e '.outcome.refused_syscalls == {"bpf": 2, "kexec_load": 1}'
	ms exec --result "$BUNDLE/rec.json" "$SID" -- true
	jq -e '.refused_syscalls == {}' "$BUNDLE/rec.json"
	ms rm "$SID"
	nothing_left
}

@test "session exec: a relative command with a slash runs from --cwd, as runc does" {
	new_session
	ms exec --cwd /bin "$SID" -- ./echo from-bin
	[ "$status" -eq 0 ]
	[ "$output" = from-bin ]
	ms exec --cwd / "$SID" -- bin/echo below-root
	[ "$status" -eq 0 ]
	[ "$output" = below-root ]
	ms exec --cwd /tmp "$SID" -- ./echo
	[ "$status" -ne 0 ]
	[[ "$stderr" == *'stat ./echo: no such file or directory'* ]]
	ms rm "$SID"
	nothing_left
}

@test "session exec: --output-limit, --env, --cwd, --stdin, --json on its own line" {
	new_session
	printf 'in1\nin2\n' >"$WORK/in.txt"
	ms exec --output-limit 100 --json "$SID" -- sh -c 'head -c 1000 /dev/zero | tr "\0" x'
	[ "$status" -eq 0 ]
	[ "${#lines[0]}" -eq 100 ] || [ "${lines[0]:0:100}" = "$(printf 'x%.0s' $(seq 100))" ]
	echo "${lines[-1]}" | jq -e '.stdout.bytes == 100 and .stdout.dropped == 900'
	ms exec --env FOO=bar --cwd /tmp --stdin "$WORK/in.txt" "$SID" -- sh -c 'echo $FOO; pwd; wc -l'
	[ "${lines[0]}" = bar ]
	[ "${lines[1]}" = /tmp ]
	[ "${lines[2]}" = 2 ]
	ms rm "$SID"
	nothing_left
}

@test "session put and get: files and trees, owned by the session user inside, symlinks not followed" {
	new_session
	mkdir -p "$WORK/src/sub"
	echo a >"$WORK/src/a.txt"
	echo b >"$WORK/src/sub/b.txt"
	chmod 750 "$WORK/src/sub"
	ln -s /etc/shadow "$WORK/src/link"
	ms put "$SID" "$WORK/src" /tmp
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"skipped $WORK/src/link: a symlink"* ]]
	ms put "$SID" "$WORK/src/a.txt" /tmp/renamed.txt
	[ "$status" -eq 0 ]
	ms exec "$SID" -- sh -c 'cat /tmp/src/a.txt /tmp/src/sub/b.txt /tmp/renamed.txt; stat -c "%u %a" /tmp/src/sub /tmp/src/a.txt; ls /tmp/src'
	[ "${lines[0]}" = a ]
	[ "${lines[1]}" = b ]
	[ "${lines[2]}" = a ]
	[ "${lines[3]}" = "0 750" ]
	[ "${lines[4]}" = "0 644" ]
	[ "$(echo "$output" | grep -c link)" -eq 0 ]
	# out: a symlink made inside to the host's / is not followed
	ms exec "$SID" -- sh -c 'ln -s / /tmp/src/escape; ln -s /etc/passwd /tmp/src/pw; echo new >/tmp/src/sub/c.txt'
	mkdir "$WORK/out"
	ms get "$SID" /tmp/src "$WORK/out"
	[ "$status" -eq 0 ]
	[ "$(cat "$WORK/out/src/sub/c.txt")" = new ]
	[ "$(cat "$WORK/out/src/a.txt")" = a ]
	[ ! -e "$WORK/out/src/escape" ] && [ ! -L "$WORK/out/src/escape" ]
	[ ! -e "$WORK/out/src/pw" ]
	[[ "$stderr" == *"skipped src/escape: a symlink"* ]]
	[ "$(stat -c %u "$WORK/out/src/a.txt")" = "$(id -u)" ]
	# a path through a symlink resolves inside the session's root
	ms get "$SID" /tmp/src/escape/etc/passwd "$WORK/out/pw"
	[ "$status" -eq 0 ]
	[ "$(cat "$WORK/out/pw")" = "$(cat "$BUNDLE/rootfs/etc/passwd")" ]
	ms put "$SID" "$WORK/src/a.txt" /a.txt
	[ "$status" -eq 1 ]
	[[ "$stderr" == "moat: session put $SID: /a.txt: Read-only file system" ]]
	# more than a pipe holds: the copy fails before reading it, one line
	# still (moat used to die of SIGPIPE without a word)
	head -c 1M /dev/zero >"$WORK/big"
	ms put "$SID" "$WORK/big" /big
	[ "$status" -eq 1 ]
	[[ "$stderr" == "moat: session put $SID: /big: Read-only file system" ]]
	ms get "$SID" /no/such "$WORK/out"
	[ "$status" -eq 1 ]
	ms rm "$SID"
	nothing_left
}

@test "session put: a pid the session's init gave up is not taken for it (nothing written into the new holder's mounts)" {
	new_session
	echo planted >"$WORK/file"
	mkdir "$WORK/dst"
	# pidreuse: the state names a victim, whose pid goes to a new process
	# (in the host's namespaces) as moat opens /proc/PID/ns/.
	local prep
	prep="$(forge_state_prep "$SID")"
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		run "$TESTBIN/pidreuse" --at-ns-open "$prep" \
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session put "$SID" "$WORK/file" "$WORK/dst/file"
	echo "$output" >&2
	[ "$status" -ne 77 ] || skip "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"pid reused"* ]]
	[ ! -e "$WORK/dst/file" ]
	[[ "$output" == *"moat exited 1"* ]]
}

@test "session put: a fifo the payload left at the destination is refused, not waited on for ever" {
	new_session
	echo a >"$WORK/a.txt"
	ms exec "$SID" -- mkfifo /tmp/a.txt
	[ "$status" -eq 0 ]
	# timeout only bounds the hang the old code had; nothing is timed.
	status=0
	timeout 60 "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session put "$SID" "$WORK/a.txt" /tmp \
		>"$BUNDLE/.ms-out" 2>"$BUNDLE/.ms-err" </dev/null || status=$?
	cat "$BUNDLE/.ms-err" >&2
	[ "$status" -eq 1 ]
	[ "$(cat "$BUNDLE/.ms-err")" = "moat: session put $SID: /tmp: File exists" ]
	ms exec "$SID" -- stat -c %F /tmp/a.txt
	[ "$output" = fifo ]
	ms rm "$SID"
	nothing_left
}

@test "session put and get: a hard link the payload left at the destination is refused, its other name untouched" {
	new_session
	ms exec "$SID" -- sh -c 'echo mine >/tmp/victim && mkdir /tmp/in && ln /tmp/victim /tmp/in/f'
	[ "$status" -eq 0 ]
	echo host >"$WORK/f"
	ms put "$SID" "$WORK/f" /tmp/in
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session put $SID: /tmp/in: Too many links" ]
	ms exec "$SID" -- cat /tmp/victim
	[ "$output" = mine ]
	# get: the same into a host directory where a name is a hard link.
	mkdir "$WORK/out"
	echo keep >"$WORK/other"
	ln "$WORK/other" "$WORK/out/victim"
	ms get "$SID" /tmp/victim "$WORK/out"
	[ "$status" -eq 1 ]
	[ "$(cat "$WORK/other")" = keep ]
	ms rm "$SID"
	nothing_left
}

@test "session get: a sparse file the payload made takes no more of the host's disk than it takes inside" {
	new_session
	# 1 GiB that the 64 MiB scratch holds: a hole, and one byte of data.
	ms exec "$SID" -- sh -c 'truncate -s 1G /tmp/big && echo x | dd of=/tmp/big bs=1 seek=536870912 conv=notrunc 2>/dev/null'
	[ "$status" -eq 0 ]
	mkdir "$WORK/out"
	ms get "$SID" /tmp/big "$WORK/out"
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$WORK/out/big")" -eq 1073741824 ]
	[ "$(dd if="$WORK/out/big" bs=1 skip=536870912 count=1 2>/dev/null)" = x ]
	# Allocated: a few blocks, not a gigabyte.
	[ "$(du -k "$WORK/out/big" | cut -f 1)" -lt 1024 ]
	ms rm "$SID"
	nothing_left
}

@test "session get and put: a tree past --max-entries or --max-bytes is refused in one line, nothing of it left" {
	new_session
	# The payload makes many empty files and one file of 2 MiB of data.
	ms exec "$SID" -- sh -c 'mkdir -p /tmp/many /tmp/fat && cd /tmp/many && seq 1 300 | xargs touch && head -c 2097152 /dev/zero >/tmp/fat/f'
	[ "$status" -eq 0 ]
	mkdir "$WORK/out"
	ms get --max-entries 100 "$SID" /tmp/many "$WORK/out"
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session get $SID: /tmp/many: more than 100 entries (--max-entries)" ]
	[ -z "$(ls -A "$WORK/out")" ]
	ms get --max-bytes 1m "$SID" /tmp/fat "$WORK/out"
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session get $SID: /tmp/fat: more than 1048576 bytes (--max-bytes)" ]
	[ -z "$(ls -A "$WORK/out")" ]
	# Under the caps the same trees come out whole.
	ms get --max-entries 302 "$SID" /tmp/many "$WORK/out"
	[ "$status" -eq 0 ]
	[ "$(ls "$WORK/out/many" | wc -l)" -eq 300 ]
	ms get "$SID" /tmp/fat "$WORK/out"
	[ "$status" -eq 0 ]
	# put: the same caps, nothing of it left in the session.
	ms put --max-entries 100 "$SID" "$WORK/out/many" /tmp/in
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session put $SID: /tmp/in: more than 100 entries (--max-entries)" ]
	ms exec "$SID" -- sh -c 'test ! -e /tmp/in && echo gone'
	[ "$output" = gone ]
	ms rm "$SID"
	nothing_left
}

@test "session: exec, put and get look at their own session only, not at every other (their cost must not grow with the sessions alive); an expired one of their own is removed and refused" {
	new_session
	local mine="$SID"
	new_session --idle-timeout 1s
	local other="$SID"
	echo data >"$BUNDLE/in.txt"
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -e trace=openat,openat2 -o "$BUNDLE/trace" \
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session exec "$mine" -- true
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -e trace=openat,openat2 -o "$BUNDLE/trace2" \
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session put "$mine" "$BUNDLE/in.txt" /tmp/in.txt
	grep -q "$mine" "$BUNDLE/trace"
	[ -z "$(grep -l "$other" "$BUNDLE/trace" "$BUNDLE/trace2")" ]
	sleep 1.2
	ms exec "$other" -- true
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no such session"* ]]
	[ ! -e "$ROOT/$other" ] && [ ! -e "$ROOT/.session/$other" ]
	ms rm "$mine"
	nothing_left
}

@test "session: an idle session and one past its lifetime are removed by the next moat" {
	new_session --idle-timeout 1s
	local idle="$SID"
	new_session --max-lifetime 2s
	local old="$SID"
	new_session
	local kept="$SID"
	sleep 1.2
	ms exec "$old" -- true # keeps it from idling, not from ageing
	sleep 0.9
	ms list --json
	[ "$(echo "$output" | jq -r '[.[].id] | join(" ")')" = "$kept" ]
	[ ! -e "$ROOT/$idle" ] && [ ! -e "$ROOT/$old" ]
	ms rm "$kept"
	nothing_left
}

@test "session: bad input is one line, exit 1, nothing left" {
	ms create --rootfs "$BUNDLE/rootfs" --idle-timout 1s
	[ "$status" -eq 1 ]
	[[ "$stderr" == "moat: session create: unknown flag --idle-timout"* ]]
	ms create --rootfs "$BUNDLE/rootfs" --idle-timeout soon
	[ "$status" -eq 1 ]
	[[ "$stderr" == "moat: session create: --idle-timeout: expected a duration"* ]]
	ms create
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"give one of --rootfs DIR and --image DIR"* ]]
	ms frobnicate
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"expected create, exec, put, get, list or rm"* ]]
	ms exec ../x -- true
	[ "$status" -eq 1 ]
	[ "$(echo "$stderr" | wc -l)" -eq 1 ]
	new_session
	ms exec "$SID"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"missing command"* ]]
	ms exec "$SID" -- /no/such/cmd
	[ "$status" -ne 0 ]
	ms exec "$SID" -- echo still-here
	[ "$output" = still-here ]
	ms rm "$SID"
	nothing_left
}

@test "session: audit lines say which verb, and each exec's command and outcome" {
	new_session
	tail -n 1 "$AUDIT_LOG" | jq -e --arg id "$SID" '.verb == "session create" and .id == $id'
	ms exec "$SID" -- sh -c 'exit 6'
	tail -n 1 "$AUDIT_LOG" | jq -e --arg id "$SID" '.verb == "session exec" and .id == $id and .command == "sh"
		and .exit_status == 6 and .outcome.exit_code == 6 and .outcome.timed_out == false'
	ms rm "$SID"
	tail -n 1 "$AUDIT_LOG" | jq -e --arg id "$SID" '.verb == "session rm" and .id == $id'
	nothing_left
}

@test "session: an exec's record lists only the overrides it caused, all with --all-overrides" {
	new_session
	ms exec --json "$SID" -- true
	[ "$status" -eq 0 ]
	[ "$(echo "${lines[-1]}" | jq -c .overrides)" = "[]" ]
	ms exec --json --env GH_TOKEN=x "$SID" -- true
	[ "$(echo "${lines[-1]}" | jq -c '[.overrides[] | [.path, .asked]]')" = '[["process.env","GH_TOKEN"]]' ]
	ms exec --json --all-overrides "$SID" -- true
	[ "$(echo "${lines[-1]}" | jq '[.overrides[] | select(.path == "process.noNewPrivileges")] | length')" = 1 ]
	ms rm "$SID"
	nothing_left
}

@test "session: --user at create is each exec's and put's, exec --user overrides; HOME is writable; default deadline and cap" {
	new_session --user 1000:1000
	ms exec --result "$BUNDLE/rec.json" "$SID" -- sh -c 'id -u; echo x >"$HOME/f" && cat "$HOME/f"'
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = x ]
	[ "$(rec .limits.timeout_s)" = 600 ]
	[ "$(rec .limits.output_limit_bytes)" = 16777216 ]
	ms exec --user 0 "$SID" -- id -u
	[ "$output" = 0 ]
	# put makes files the session's user owns, and can write
	echo data >"$WORK/in.txt"
	ms put "$SID" "$WORK/in.txt" /tmp
	ms exec "$SID" -- sh -c 'stat -c "%u:%g" /tmp/in.txt; echo more >>/tmp/in.txt && cat /tmp/in.txt'
	[ "${lines[0]}" = 1000:1000 ]
	[ "${lines[2]}" = more ]
	ms rm "$SID"
	nothing_left
}

# A block of the README between <!-- NAME --> and <!-- /NAME -->.
readme_block() {
	local repo
	repo="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	sed -n "/^<!-- $1 -->\$/,/^<!-- \\/$1 -->\$/p" "$repo/README.md" | sed -e '1,/^```[a-z]*$/d' -e '/^```$/,$d'
}

# The README's examples run in $WORK: the quick start's bundle/rootfs, and
# `moat` (and $MOAT) the build under test with this test's state and config.
readme_setup() {
	mkdir -p "$WORK/bundle" "$WORK/bin" "$WORK/log"
	cp -a "$BUNDLE/rootfs" "$WORK/bundle/rootfs"
	printf '{"audit_log": "%s/log/audit.jsonl", "image_cache": "%s/images"}\n' "$WORK" "$WORK" >"$WORK/config.json"
	cat >"$WORK/bin/moat" <<-WRAP
		#!/bin/sh
		exec "$MOAT" --root "$ROOT" --config "$WORK/config.json" "\$@"
	WRAP
	chmod +x "$WORK/bin/moat"
}

@test "session: the README's shell example runs as written and prints what it says" {
	readme_setup
	readme_block session-example >"$WORK/example.sh"
	grep -q '^moat session rm' "$WORK/example.sh"
	run env -C "$WORK" PATH="$WORK/bin:$PATH" sh -e "$WORK/example.sh" </dev/null
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "hello from /work" ]
	[ "${lines[1]}" = 42 ]
	[ "$(cat "$WORK/n.txt")" = 41 ]
	[ "$(stat -c %u "$WORK/n.txt")" = "$(id -u)" ]
	nothing_left
}

@test "sandbox: the README's --host-usr example runs the host's python3 as written" {
	[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
	readme_setup
	readme_block host-usr-example >"$WORK/example.sh"
	grep -q -- '--host-usr' "$WORK/example.sh"
	run env -C "$WORK" PATH="$WORK/bin:$PATH" sh -e "$WORK/example.sh" </dev/null
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ "$output" = "hello from /work" ]
}

@test "sandbox --host-usr: /usr is the host's, read-only; the root is empty but for mount points and links" {
	status=0
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" sandbox --host-usr -- /bin/sh -c \
		'ls /; touch /usr/x 2>&1; readlink /bin' >"$BUNDLE/out" 2>&1 </dev/null || status=$?
	cat "$BUNDLE/out" >&2
	[ "$status" -eq 0 ]
	grep -q "Read-only file system" "$BUNDLE/out"
	[ "$(tail -n 1 "$BUNDLE/out")" = usr/bin ]
	! grep -qE '^(home|boot|opt|srv)$' "$BUNDLE/out" || false
	[ -z "$(ls "$ROOT")" ]
}

# `podman` in $WORK/bin: the host's podman with a store of this test's own
# (vfs, nothing mounted), so the README's podman lines touch no image of the
# machine's; in a mount namespace of its own with a tmpfs on
# /var/lib/containers (on /var/lib where there is none), where podman keeps
# its blob-info cache whatever --root says.
readme_podman() {
	local podman
	podman="$(command -v podman)" || skip "podman is not installed (the engine tests install it)"
	mkdir -p "$WORK/podman"
	cat >"$WORK/bin/podman" <<-WRAP
		#!/bin/sh
		exec unshare -m sh -c 'mount -t tmpfs -o size=16m tmpfs /var/lib/containers 2>/dev/null ||
			mount -t tmpfs -o size=16m tmpfs /var/lib && exec "\$0" "\$@"' \\
			"$podman" --root "$WORK/podman/root" --runroot "$WORK/podman/run" --tmpdir "$WORK/podman/tmp" \\
			--storage-driver vfs --events-backend none "\$@"
	WRAP
	chmod +x "$WORK/bin/podman"
}

# The README block $1 run as written in $WORK; its stdout in $output, its
# stderr (podman's progress, debootstrap's I: lines) in $WORK/stderr.
run_readme_sh() {
	readme_block "$1" >"$WORK/example.sh"
	run sh -c 'env -C "$1" PATH="$2" sh -e "$1/example.sh" 2>"$1/stderr" </dev/null' sh "$WORK" "$WORK/bin:$PATH"
	echo "$output" >&2
	cat "$WORK/stderr" >&2
}

@test "sandbox: the README's podman save recipe makes a layout moat runs, as written" {
	readme_setup
	readme_podman
	# The local image the block starts from: the quick start's rootfs.
	tar -C "$WORK/bundle/rootfs" -c . | "$WORK/bin/podman" import - localhost/busybox >/dev/null
	run_readme_sh podman-save-example
	grep -q '^podman save --format oci-dir ' "$WORK/example.sh"
	[ "$status" -eq 0 ]
	[ "$output" = "hello from the image" ]
	[ -f "$WORK/busybox-oci/index.json" ]
	nothing_left
}

@test "sandbox: the README's debootstrap recipe runs as written (rootfs and imported image)" {
	local mirror
	command -v debootstrap >/dev/null || skip "debootstrap is not installed"
	readme_setup
	readme_podman
	readme_block debootstrap-example >"$WORK/example.sh"
	grep -q '^debootstrap ' "$WORK/example.sh"
	mirror="$(grep -o 'http://[^ ]*' "$WORK/example.sh" | head -n 1)"
	wget -q -T 10 -O /dev/null "$mirror/dists/bookworm/Release" || skip "the Debian mirror $mirror does not answer"
	run_readme_sh debootstrap-example
	[ "$status" -eq 0 ]
	# Past debootstrap's "I: ..." progress: Debian's own version file, read
	# inside both ways, and between them podman import's image id.
	mapfile -t lines < <(grep -v '^I: ' <<<"$output")
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[0]}" = "$(cat "$WORK/debian-root/etc/debian_version")" ]
	[[ "${lines[1]}" == sha256:* ]]
	[ "${lines[2]}" = "${lines[0]}" ]
	nothing_left
}

# The README's Python block $1 run in $WORK with the package of this tree;
# its output in $output. $2: a line the block must have.
run_readme_python() {
	local repo
	readme_block "$1" >"$WORK/example.py"
	grep -q "$2" "$WORK/example.py"
	repo="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	run env -C "$WORK" MOAT="$WORK/bin/moat" PYTHONPATH="$repo/contrib/python" PYTHONDONTWRITEBYTECODE=1 \
		/usr/bin/python3 "$WORK/example.py" </dev/null
	echo "$output" >&2
}

@test "session: the README's Python example runs as written and prints what it says" {
	readme_setup
	mkdir -p "$WORK/job"
	run_readme_python session-python '^asyncio.run(main())'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "42 0" ]
	[ "${lines[1]}" = "['0', '1', '2']" ]
	nothing_left
}

@test "session: the README's run_code example runs as written and prints what it says" {
	readme_setup
	run_readme_python run-code-python run_code
	[ "$status" -eq 0 ]
	[ "$output" = 42 ]
	nothing_left
}
