#!/usr/bin/env bats
# The host side of direct use (issue 36, attack 2): nothing the payload
# leaves in its workdir runs with more than the workdir owner's ids on the
# host. From inside, as hostile code would: no set-user-ID or set-group-ID
# bit can be set in any container (the built-in filter refuses it, G12),
# and what container root writes in the workdir is the workdir owner's, not
# host root's.

load helpers

# The workdir's owner on the host: an id no host user has.
OWNER=1234
GROUP=2345

setup() {
	setup_bundle
	WORK="$(mktemp -d /tmp/moat-suidwork.XXXXXX)"
	chown "$OWNER:$GROUP" "$WORK"
	# moat run for that user through sudo: --workdir must be the caller's.
	export SUDO_UID="$OWNER"
}

teardown() {
	for s in $(ls "$ROOT/.session" 2>/dev/null); do
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session rm "$s" >/dev/null 2>&1 || true
	done
	rm -rf "$WORK" "$WORK.bin"
	teardown_bundle
}

# moat VERB ARGS: stdout in $output and $lines, stderr in $stderr.
mv_() {
	moat_sep "$@"
	mapfile -t lines <<<"$output"
}

# The attack, run inside with the workdir at /work: a copy of busybox made
# setuid and setgid every way busybox knows; each line says what the kernel
# answered. Nothing may say "set".
ATTACK='
cd /work || exit 9
cp /bin/busybox x || exit 9
for m in 4755 2755 6755 u+s g+s; do
	if chmod "$m" x 2>/dev/null; then echo "set chmod $m"; else echo "refused chmod $m"; fi
done
touch t && chmod 4755 t 2>/dev/null && echo "set touch+chmod"
mkdir -m 2775 d 2>/dev/null && [ -g d ] && echo "set mkdir -m 2775"
mkdir -p e && chmod g+s e 2>/dev/null && echo "set chmod g+s dir"
if command -v install >/dev/null; then
	install -m 4755 /bin/busybox i 2>/dev/null && [ -u i ] && echo "set install -m 4755"
fi
cp -p x p 2>/dev/null
echo done
'

# Nothing in the workdir has an s-bit, all of it is the owner's, and run
# as the owner nothing there gains euid 0.
workdir_is_owners() {
	local left
	left="$(find "$WORK" -perm /6000)"
	[ -z "$left" ] || { echo "s-bit left: $left"; ls -ln "$WORK"; return 1; }
	left="$(find "$WORK" ! -user "$OWNER" -o ! -group "$GROUP")"
	[ -z "$left" ] || { echo "not the owner's: $left"; ls -ln "$WORK"; return 1; }
	# busybox runs the applet its name says.
	mkdir -p "$WORK.bin"
	ln -sfn "$WORK/x" "$WORK.bin/id"
	[ "$(setpriv --reuid="$OWNER" --regid="$GROUP" --clear-groups "$WORK.bin/id" -u)" = "$OWNER" ]
}

refused_every_way() {
	[ "$status" -eq 0 ]
	[[ "$output" != *"set "* ]]
	[ "$(grep -c '^refused chmod' <<<"$output")" = 5 ]
	[ "${lines[-1]}" = done ]
}

@test "hostside suid: sandbox --workdir: chmod 4755/2755/u+s, mkdir -m 2775, touch+chmod are refused (EPERM); the host files are the owner's, no s-bit" {
	mv_ sandbox --rootfs "$BUNDLE/rootfs" --workdir "$WORK" -- sh -c "$ATTACK"
	refused_every_way
	workdir_is_owners
	# The refusal is EPERM, as the kernel would give.
	mv_ sandbox --rootfs "$BUNDLE/rootfs" --workdir "$WORK" -- chmod 4755 /work/x
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"Operation not permitted"* ]]
}

@test "hostside suid: session --workdir: the same attack from an exec is refused; the host files are the owner's, no s-bit" {
	mv_ session create --rootfs "$BUNDLE/rootfs" --workdir "$WORK"
	[ "$status" -eq 0 ]
	local sid="$output"
	mv_ session exec "$sid" -- sh -c "$ATTACK"
	refused_every_way
	# A later exec finds the file as the first left it.
	mv_ session exec "$sid" -- sh -c 'stat -c "%A %u" /work/x; chmod 4755 /work/x'
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "-rwxr-xr-x 0" ]
	[[ "$stderr" == *"Operation not permitted"* ]]
	mv_ session rm "$sid"
	workdir_is_owners
}

@test "hostside suid: python's os.chmod, os.open(O_CREAT), os.mkdir and os.mknod with s-bits are refused (EPERM)" {
	[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 on the host for --host-usr"
	local py='
import os, stat
os.chdir("/work")
out = []
def try_(what, f):
    try:
        f()
        out.append("set " + what)
    except PermissionError:
        out.append("refused " + what)
open("f", "w").close()
try_("os.chmod 4755", lambda: os.chmod("f", 0o4755))
try_("os.chmod 2755", lambda: os.chmod("f", 0o2755))
fd = os.open("f", os.O_RDONLY)
try_("os.fchmod 6755", lambda: os.fchmod(fd, 0o6755))
try_("os.open O_CREAT 4755", lambda: os.open("o", os.O_CREAT | os.O_WRONLY, 0o4755))
try_("os.open O_TMPFILE 2755", lambda: os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o2755))
try_("os.mkdir 2775", lambda: os.mkdir("d", 0o2775))
try_("os.mknod 4755", lambda: os.mknod("n", stat.S_IFREG | 0o4755))
try_("os.chmod dir g+s", lambda: (os.mkdir("e"), os.chmod("e", 0o2755)))
os.chmod("f", 0o755)
print("\n".join(out))
print("done")
'
	mv_ sandbox --host-usr --workdir "$WORK" -- /usr/bin/python3 -c "$py"
	[ "$status" -eq 0 ]
	[[ "$output" != *"set "* ]]
	[ "$(grep -c '^refused' <<<"$output")" = 8 ]
	[ "${lines[-1]}" = done ]
	[ -z "$(find "$WORK" -perm /6000)" ]
	[ "$(stat -c %u:%g:%a "$WORK/f")" = "$OWNER:$GROUP:755" ]
}

@test "hostside suid: container root's files in the workdir are the workdir owner's; --user writes as the owner too; other ids cannot create there" {
	mv_ sandbox --rootfs "$BUNDLE/rootfs" --workdir "$WORK" -- sh -c 'id -u; echo r >/work/by-root; mkdir /work/dir; stat -c %u:%g /work /work/by-root'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" = 0:0 ]
	[ "${lines[2]}" = 0:0 ]
	[ "$(stat -c %u:%g "$WORK/by-root" "$WORK/dir" | sort -u)" = "$OWNER:$GROUP" ]
	# --user 1000: the workdir is that user's inside, and its writes the
	# owner's on the host.
	mv_ sandbox --rootfs "$BUNDLE/rootfs" --user 1000:1000 --workdir "$WORK" -- sh -c 'stat -c %u:%g /work /work/by-root; echo u >/work/by-user'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 1000:1000 ]
	[ "${lines[1]}" = 1000:1000 ]
	[ "$(stat -c %u:%g "$WORK/by-user")" = "$OWNER:$GROUP" ]
	# A session's user owns the workdir; another id (exec --user 0) cannot
	# create there, even in a directory open to all (EOVERFLOW: its id has
	# no owner on disk): no id but the owner's ever lands on the host.
	# (--workdir itself may not be open to all: a directory in it is.)
	mkdir -m 0777 "$WORK/open"
	chmod 0777 "$WORK/open"
	chown "$OWNER:$GROUP" "$WORK/open"
	mv_ session create --rootfs "$BUNDLE/rootfs" --user 1000:1000 --workdir "$WORK"
	[ "$status" -eq 0 ]
	local sid="$output"
	mv_ session exec --user 0 "$sid" -- sh -c 'touch /work/open/by-other'
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"Value too large"* || "$stderr" == *"Permission denied"* ]]
	mv_ session exec "$sid" -- sh -c 'touch /work/by-session-user'
	[ "$status" -eq 0 ]
	mv_ session rm "$sid"
	[ ! -e "$WORK/open/by-other" ]
	[ "$(stat -c %u:%g "$WORK/by-session-user")" = "$OWNER:$GROUP" ]
	# A root-owned workdir (moat run directly by root) stays root's.
	chown 0:0 "$WORK"
	unset SUDO_UID
	mv_ sandbox --rootfs "$BUNDLE/rootfs" --user 7:8 --workdir "$WORK" -- sh -c 'echo s >/work/by-7'
	[ "$status" -eq 0 ]
	[ "$(stat -c %u:%g "$WORK/by-7")" = 0:0 ]
}

@test "hostside suid: an engine container with a writable volume cannot set S_ISUID either (volumes keep container root as host root)" {
	local eng="$BUNDLE/engine" vol
	vol="$eng/volumes/v1/_data"
	mkdir -p "$vol"
	printf '{"audit_log": "%s", "engine_roots": {"docker": ["%s"]}}\n' "$AUDIT_LOG" "$eng" >"$MOAT_CONFIG"
	update_config --arg s "$vol" '.mounts += [{"destination": "/data", "type": "bind", "source": $s, "options": ["rbind", "rw"]}]'
	run_in_container 'cp /bin/busybox /data/x && touch /data/by-root; chmod 4755 /data/x && echo set; chmod g+s /data/x && echo set; mkdir -m 2775 /data/d 2>/dev/null; echo done'
	[ "$status" -eq 0 ]
	[[ "$output" != *set* ]]
	[[ "$output" == *"Operation not permitted"* ]]
	[ -z "$(find "$vol" -perm /6000)" ]
	# The volume's mapping is Docker's: container root is host root there.
	[ "$(stat -c %u:%g "$vol/by-root")" = 0:0 ]
}
