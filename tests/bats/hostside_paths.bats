#!/usr/bin/env bats
# The host side of direct use (issue 36, attacks 1 and 3): a path the
# operator names in a tree the payload wrote (its workdir) is opened as
# host root following no link, and its type is checked before use. Each
# attack is planted from inside, as the payload would, then the operator's
# verb runs on it.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	setup_bundle
	WORK="$(mktemp -d /tmp/moat-hostwork.XXXXXX)"
	# A host directory and a secret the payload knows the paths of (it
	# may write any text into a link) but no mount shows it.
	VICTIM="$(mktemp -d /tmp/moat-hostvictim.XXXXXX)"
	echo "host secret $RANDOM" >"$VICTIM/secret"
	chmod 600 "$VICTIM/secret"
}

teardown() {
	for s in $(ls "$ROOT/.session" 2>/dev/null); do
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session rm "$s" || true
	done
	rm -rf "$WORK" "$VICTIM"
	teardown_bundle
}

# moat ARGS: stdout in $output and $lines, stderr in $stderr.
mt() {
	moat_sep "$@"
	mapfile -t lines <<<"$output"
}

# A session on the busybox rootfs with $WORK as its /work; its id in $SID.
new_session() {
	mt session create --rootfs "$BUNDLE/rootfs" --workdir "$WORK" "$@"
	[ "$status" -eq 0 ]
	SID="$output"
	[[ "$SID" == session-* ]]
}

# The payload's command in the session (what it plants).
payload() {
	mt session exec "$SID" -- sh -c "$1"
	[ "$status" -eq 0 ]
}

LINK_TEXT="a symbolic link on the path; moat follows none on the host side"

@test "hostside --stdin: the host's / or a device is refused, one line, and the command never runs" {
	mt sandbox --rootfs "$BUNDLE/rootfs" --workdir "$WORK" --stdin / -- sh -c 'cd /proc/self/fd/0 && ls; touch /work/ran'
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: sandbox: --stdin /: a directory; a regular file or a FIFO only" ]
	[ -z "$output" ]
	[ ! -e "$WORK/ran" ]
	mt sandbox --rootfs "$BUNDLE/rootfs" --stdin /dev/zero -- head -c 1
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: sandbox: --stdin /dev/zero: a character device; a regular file or a FIFO only" ]
	[ -z "$(ls -A "$ROOT/.sandbox" 2>/dev/null)" ]
}

@test "hostside session exec --stdin: a link the payload planted to / (last or in the middle) is refused" {
	new_session
	payload 'ln -s / /work/in && ln -s / /work/d && mkdir /work/dir'
	mt session exec --stdin "$WORK/in" "$SID" -- sh -c 'ls /proc/self/fd/0/; touch /work/ran'
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session exec $SID: --stdin $WORK/in: $LINK_TEXT" ]
	[ ! -e "$WORK/ran" ]
	mt session exec --stdin "$WORK/d/etc/hostname" "$SID" -- sh -c 'cat; touch /work/ran'
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session exec $SID: --stdin $WORK/d/etc/hostname: $LINK_TEXT" ]
	[ ! -e "$WORK/ran" ]
	mt session exec --stdin "$WORK/dir" "$SID" -- sh -c 'ls /proc/self/fd/0/; touch /work/ran'
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session exec $SID: --stdin $WORK/dir: a directory; a regular file or a FIFO only" ]
	[ ! -e "$WORK/ran" ]
	# /dev/stdin is a link (to a magic link): "-" is moat's own stdin.
	mt session exec --stdin /dev/stdin "$SID" -- cat
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session exec $SID: --stdin /dev/stdin: $LINK_TEXT" ]
}

@test "hostside session exec --stdin: a FIFO the payload left does not hold moat past --timeout" {
	new_session
	payload 'mkfifo /work/fifo'
	local start=$SECONDS
	status=0
	# timeout only bounds the hang the old code had (open waited for a
	# writer before the deadline was armed).
	timeout 20 "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session exec --timeout 2s \
		--stdin "$WORK/fifo" "$SID" -- sh -c 'cat; echo read-to-end' \
		>"$BUNDLE/.out" 2>"$BUNDLE/.err" </dev/null || status=$?
	cat "$BUNDLE/.out" "$BUNDLE/.err" >&2
	[ "$status" -ne 124 ]
	[ $((SECONDS - start)) -lt 15 ]
	[ "$status" -eq 0 ]
	[ "$(cat "$BUNDLE/.out")" = read-to-end ]
}

@test "hostside --stdin -: moat's own stdin, a pipe or a file, is passed on; a socket is refused" {
	printf 'one\ntwo\n' >"$WORK/in.txt"
	status=0
	output="$("$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" sandbox \
		--rootfs "$BUNDLE/rootfs" --stdin - -- wc -l <"$WORK/in.txt")" || status=$?
	[ "$status" -eq 0 ]
	[ "$output" = 2 ]
	status=0
	output="$(printf 'a\nb\nc\n' | "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" sandbox \
		--rootfs "$BUNDLE/rootfs" --stdin - -- wc -l)" || status=$?
	[ "$status" -eq 0 ]
	[ "$output" = 3 ]
	mt sandbox --rootfs "$BUNDLE/rootfs" --stdin "$WORK/in.txt" -- wc -l
	[ "$status" -eq 0 ]
	[ "$output" = 2 ]
	status=0
	python3 -c 'import socket, subprocess, sys
a, b = socket.socketpair()
sys.exit(subprocess.call(sys.argv[1:], stdin=a))' \
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" sandbox --rootfs "$BUNDLE/rootfs" --stdin - -- cat \
		>"$BUNDLE/.out" 2>"$BUNDLE/.err" || status=$?
	[ "$status" -eq 1 ]
	[ "$(cat "$BUNDLE/.err")" = "moat: sandbox: --stdin -: moat's stdin is a socket; a pipe or a regular file only" ]
}

@test "hostside session get: a destination through a link the payload planted is refused, nothing written there" {
	new_session
	payload "echo '* * * * * root payload' >/tmp/n && ln -s $VICTIM /work/results"
	mt session get "$SID" /tmp/n "$WORK/results/n"
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session get $SID: $WORK/results/n: $LINK_TEXT" ]
	mt session get "$SID" /tmp/n "$WORK/results"
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session get $SID: $WORK/results: $LINK_TEXT" ]
	[ "$(ls "$VICTIM")" = secret ]
	[ -L "$WORK/results" ]
	# --result of an exec the same way
	mt session exec --result "$WORK/results/rec.json" "$SID" -- true
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session exec $SID: --result $WORK/results/rec.json: $LINK_TEXT" ]
	[ "$(ls "$VICTIM")" = secret ]
}

@test "hostside session put: a source through a link the payload planted is refused, nothing copied in" {
	new_session
	payload "ln -s $VICTIM/secret /work/data && ln -s $VICTIM /work/dir"
	mt session put "$SID" "$WORK/data" /tmp/
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session put $SID: $WORK/data: $LINK_TEXT" ]
	mt session put "$SID" "$WORK/dir/secret" /tmp/
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session put $SID: $WORK/dir/secret: $LINK_TEXT" ]
	payload 'mkfifo /work/fifo'
	mt session put "$SID" "$WORK/fifo" /tmp/
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session put $SID: $WORK/fifo: a FIFO; a regular file or a directory only" ]
	mt session exec "$SID" -- ls -A /tmp
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# get's top the same way: a FIFO (or device, socket) is refused
	payload 'mkfifo /tmp/ff'
	mt session get "$SID" /tmp/ff "$WORK/ff"
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: session get $SID: /tmp/ff: neither a regular file nor a directory; not copied" ]
	[ ! -e "$WORK/ff" ]
}

@test "hostside session get: modes no more than 0755/0644, less the caller's umask" {
	new_session
	payload 'mkdir /tmp/t && echo x >/tmp/t/exe && echo y >/tmp/t/data &&
		(chmod 4777 /tmp/t/exe 2>/dev/null || chmod 777 /tmp/t/exe) &&
		chmod 666 /tmp/t/data && chmod 777 /tmp/t && stat -c %a /tmp/t /tmp/t/data'
	[ "${lines[0]}" = 777 ]
	[ "${lines[1]}" = 666 ]
	(umask 022 && mt session get "$SID" /tmp/t "$WORK/out1" && [ "$status" -eq 0 ])
	[ "$(stat -c %a "$WORK/out1" "$WORK/out1/exe" "$WORK/out1/data" | tr '\n' ' ')" = "755 755 644 " ]
	(umask 077 && mt session get "$SID" /tmp/t "$WORK/out2" && [ "$status" -eq 0 ])
	[ "$(stat -c %a "$WORK/out2" "$WORK/out2/exe" "$WORK/out2/data" | tr '\n' ' ')" = "700 700 600 " ]
	# a regular file over an existing one the same way
	(umask 022 && mt session get "$SID" /tmp/t/data "$WORK/out1/data" && [ "$status" -eq 0 ])
	[ "$(stat -c %a "$WORK/out1/data")" = 644 ]
}

@test "hostside session get: the payload's file names are printed escaped (no escape sequence, no forged line)" {
	new_session
	payload 'mkdir /tmp/e && echo ok >/tmp/e/plain && ln -s / "/tmp/e/$(printf "\033[2J\nmoat: forged")" && mkfifo "/tmp/e/$(printf "f\033]0;title\007")"'
	mkdir "$WORK/out"
	mt session get "$SID" /tmp/e "$WORK/out"
	[ "$status" -eq 0 ]
	[ "$(cat "$WORK/out/e/plain")" = ok ]
	[ -z "$(printf '%s' "$stderr" | tr -d -c '\033\007')" ]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 2 ]
	[ "$(printf '%s\n' "$stderr" | grep -c '^moat: forged')" -eq 0 ]
	[[ "$stderr" == *'skipped e/\x1b[2J\x0amoat: forged: a symlink'* ]]
	[[ "$stderr" == *'skipped f\x1b]0;title\x07: not a regular file'* ]]
}

@test "hostside --ro-bind: a source through a link the payload planted is refused" {
	chmod 644 "$VICTIM/secret"
	mt sandbox --rootfs "$BUNDLE/rootfs" --workdir "$WORK" -- ln -s "$VICTIM" /work/r
	[ "$status" -eq 0 ]
	mt sandbox --rootfs "$BUNDLE/rootfs" --ro-bind "$WORK/r:/mnt" -- cat /mnt/secret
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: sandbox: --ro-bind $WORK/r: $LINK_TEXT" ]
	[ -z "$output" ]
	[ -z "$(ls -A "$ROOT/.sandbox" 2>/dev/null)" ]
}

@test "hostside --rootfs and --image: a path through a link the payload planted is refused" {
	# A host tree no mount shows, which would run as a root: the payload
	# links its workdir to it (and to a host dir as an image); the
	# operator's next sandbox names those paths as its root or its image.
	cp -a "$BUNDLE/rootfs" "$VICTIM/root"
	cp "$VICTIM/secret" "$VICTIM/root/secret"
	mt sandbox --rootfs "$BUNDLE/rootfs" --workdir "$WORK" -- sh -c "ln -s $VICTIM/root /work/root && ln -s $VICTIM /work/img"
	[ "$status" -eq 0 ]
	mt sandbox --rootfs "$WORK/root" -- cat /secret
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: sandbox: --rootfs $WORK/root: $LINK_TEXT" ]
	[ -z "$output" ]
	mt sandbox --image "$WORK/img" -- true
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: sandbox: image $WORK/img: $LINK_TEXT" ]
	[ -z "$(ls -A "$ROOT/.sandbox" 2>/dev/null)" ]
}

@test "hostside: regular use still works (stdin file, result, put and get of files and trees)" {
	new_session
	mkdir -p "$WORK/src/sub"
	echo a >"$WORK/src/a"
	echo b >"$WORK/src/sub/b"
	mt session put "$SID" "$WORK/src" /tmp
	[ "$status" -eq 0 ]
	mt session put "$SID" "$WORK/src/a" /tmp/a2
	[ "$status" -eq 0 ]
	mt session exec --stdin "$WORK/src/a" --result "$WORK/rec.json" "$SID" -- sh -c 'cat; cat /tmp/src/sub/b /tmp/a2'
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'a\nb\na')" ]
	jq -e '.exit_code == 0' "$WORK/rec.json"
	mt session exec --result "$WORK/rec.json" "$SID" -- false
	jq -e '.exit_code == 1' "$WORK/rec.json"
	mkdir "$WORK/back"
	mt session get "$SID" /tmp/src "$WORK/back"
	[ "$status" -eq 0 ]
	diff -r "$WORK/src" "$WORK/back/src"
	mt session get "$SID" /tmp/a2 "$WORK/back/a3"
	[ "$status" -eq 0 ]
	[ "$(cat "$WORK/back/a3")" = a ]
	# a relative destination, from the cwd
	(cd "$WORK/back" && mt session get "$SID" /tmp/a2 rel && [ "$status" -eq 0 ])
	[ "$(cat "$WORK/back/rel")" = a ]
}
