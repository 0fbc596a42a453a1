#!/bin/sh
# moat demo: one container under the strict profile tries eleven hostile
# things; each must be refused. Run as root: tests/demo.sh /path/to/moat
# (`make demo` does). Needs busybox-static and jq (contrib/deps.sh), and
# build/tests/cmd/sysprobe (built with make if missing). Exits non-zero if
# anything was allowed. Leaves nothing behind: container, temp dir, listener.
set -eu

MOAT="${1:?usage: tests/demo.sh /path/to/moat}"
case "$MOAT" in /*) ;; *) MOAT="$(pwd)/$MOAT" ;; esac
REPO="$(cd "$(dirname "$0")/.." && pwd)"
BUSYBOX="${BUSYBOX:-/bin/busybox}"
SYSPROBE="${SYSPROBE:-$(dirname "$MOAT")/tests/cmd/sysprobe}"
ID="moat-demo-$$"

die() {
	echo "demo: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "run as root (moat creates namespaces and cgroups)"
[ -x "$MOAT" ] || die "no moat at $MOAT (make first)"
command -v jq >/dev/null || die "needs jq (contrib/deps.sh)"
[ -x "$BUSYBOX" ] || die "needs $BUSYBOX (busybox-static, contrib/deps.sh)"
if [ ! -x "$SYSPROBE" ]; then
	make -s -C "$REPO" build/tests/cmd/sysprobe >&2 || die "cannot build sysprobe"
	SYSPROBE="$REPO/build/tests/cmd/sysprobe"
fi

TMP="$(mktemp -d /tmp/moat-demo.XXXXXX)"
LISTENER=""
cleanup() {
	[ -z "$LISTENER" ] || kill "$LISTENER" 2>/dev/null || true
	"$MOAT" --root "$TMP/state" --config "$TMP/moat.json" delete --force "$ID" >/dev/null 2>&1 || true
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the bundle: a busybox rootfs, sysprobe, and the hostile script ----
BUNDLE="$TMP/bundle"
mkdir -p "$BUNDLE/rootfs/bin" "$BUNDLE/rootfs/etc" "$BUNDLE/rootfs/demo"
for d in proc sys dev tmp var/tmp root; do mkdir -p "$BUNDLE/rootfs/$d"; done
cp "$BUSYBOX" "$BUNDLE/rootfs/bin/busybox"
for applet in $("$BUSYBOX" --list); do
	[ "$applet" = busybox ] || ln -s busybox "$BUNDLE/rootfs/bin/$applet"
done
cp "$SYSPROBE" "$BUNDLE/rootfs/bin/sysprobe"
echo "root:x:0:0:root:/root:/bin/sh" >"$BUNDLE/rootfs/etc/passwd"
echo "root:x:0:" >"$BUNDLE/rootfs/etc/group"

cat >"$BUNDLE/rootfs/demo/hostile.sh" <<'EOF'
# Runs as root (uid 0) in the container. Each action prints one line:
# REFUSED (what the profile must do) or ALLOWED (a failure of moat).
port="$1"

verdict() { # verdict LABEL OK|REASON
	if [ "$2" = ok ]; then
		echo "ALLOWED  $1"
	else
		echo "REFUSED  $1: $2"
	fi
}

# sysprobe prints "ok" or "what: Reason (errno N)": keep the reason.
probe() { # probe LABEL SYSPROBE-ARGS...
	label="$1"
	shift
	out=$(sysprobe "$@" 2>&1)
	reason="${out#*): }"
	reason="${reason#*: }"
	verdict "$label" "${reason% (errno *)}"
}

probe "connect to 169.254.169.254:80 (cloud metadata)" connect 169.254.169.254 80
probe "connect to the host's listener on 127.0.0.1:$port" connect 127.0.0.1 "$port"
probe "mount a tmpfs" mount /tmp/m
probe "unshare -U (a new user namespace)" unshare user
probe "socket(AF_VSOCK) (a path to the VM host)" socket vsock

if out=$(touch /pwned 2>&1); then verdict "write to /" ok; else verdict "write to /" "${out##*: }"; fi

# moat runs under a terminal, as when typed at a shell: pushed into that
# terminal's input, a line would run in the host shell once moat exits.
probe "type into the caller's terminal (TIOCSTI on /dev/tty)" tiocsti /dev/tty

cp /bin/busybox /tmp/payload
if out=$(/tmp/payload true 2>&1); then
	verdict "exec a file written to /tmp" ok
else
	verdict "exec a file written to /tmp" "${out##*: }"
fi

secret=/proc/kcore
[ -e "$secret" ] || secret=/proc/keys
bytes=$(head -c 4096 "$secret" 2>/dev/null | wc -c)
if [ "$bytes" -gt 0 ]; then
	verdict "read $secret (host kernel data)" ok
else
	verdict "read $secret (host kernel data)" "masked, reads 0 bytes"
fi

# The fork bomb runs in a shell of its own, which dies when the kernel
# refuses a fork; its processes are then counted without forking, and
# killed.
sh -c 'i=0; while [ $i -lt 2000 ]; do sleep 1000 & i=$((i + 1)); done; echo done >/tmp/bomb' 2>/tmp/bomb.err
set -- /proc/[0-9]*
procs=$#
kill -9 -1 2>/dev/null
wait
if [ -e /tmp/bomb ]; then
	verdict "fork bomb (2000 processes)" ok
else
	verdict "fork bomb (2000 processes)" "stopped at $procs processes: $(sed 's/.*can.t fork: //' /tmp/bomb.err | head -n 1)"
fi

dd if=/dev/zero of=/dev/null bs=600M count=1 2>/tmp/dd.err
rc=$?
if [ $rc -eq 0 ]; then
	verdict "memory bomb (600 MiB in one buffer)" ok
elif [ $rc -eq 137 ]; then
	verdict "memory bomb (600 MiB in one buffer)" "OOM-killed at the memory limit"
else
	verdict "memory bomb (600 MiB in one buffer)" "$(tail -n 1 /tmp/dd.err)"
fi
EOF

cat >"$TMP/moat.json" <<EOF
{ "audit_log": "$TMP/audit/audit.jsonl" }
EOF
(cd "$BUNDLE" && "$MOAT" spec)
tmp_config="$BUNDLE/config.json.tmp"

# ---- a listener on the host's loopback ----
port=""
for try in 1 2 3 4 5 6 7 8 9 10; do
	candidate=$((20000 + ($$ * 7 + try * 131) % 20000))
	hex=$(printf '%04X' "$candidate")
	grep -q ":$hex " /proc/net/tcp /proc/net/tcp6 && continue
	"$BUSYBOX" nc -l -p "$candidate" 127.0.0.1 </dev/null >/dev/null 2>&1 &
	LISTENER=$!
	for _ in $(seq 1 50); do
		grep -q "0100007F:$hex 00000000:0000 0A" /proc/net/tcp && { port=$candidate; break; }
		sleep 0.05
	done
	[ -n "$port" ] && break
	kill "$LISTENER" 2>/dev/null || true
	LISTENER=""
done
[ -n "$port" ] || die "could not start a listener on 127.0.0.1"

# config.json asks for what a careless (or hostile) pod author would: every
# capability, the host's network, a writable root, no seccomp, no limits.
jq --arg port "$port" '
	.process.terminal = false
	| .process.args = ["sh", "/demo/hostile.sh", $port]
	| (["CAP_SYS_ADMIN", "CAP_NET_ADMIN", "CAP_SYS_PTRACE", "CAP_SYS_MODULE", "CAP_DAC_OVERRIDE"]) as $caps
	| .process.capabilities = {bounding: $caps, effective: $caps, permitted: $caps, inheritable: $caps, ambient: $caps}
	| .process.noNewPrivileges = false
	| .root.readonly = false
	| .linux.namespaces |= map(select(.type != "network"))
	| .linux.resources.pids = {limit: 100000}
	| .linux.resources.memory = {limit: 68719476736}' \
	"$BUNDLE/config.json" >"$tmp_config"
mv "$tmp_config" "$BUNDLE/config.json"

echo "moat demo: $("$MOAT" --version | head -n 1)"
echo "One container (busybox, uid 0) tries eleven hostile actions. Its config.json"
echo "asks for CAP_SYS_ADMIN and friends, the host's network, a writable root,"
echo "no_new_privs off, 100000 pids and 64 GiB; moat runs it under the strict"
echo "profile all the same. A listener runs on the host at 127.0.0.1:$port;"
echo "moat runs under a terminal (script(1)), as if typed at a shell."
echo

status=0
cat >"$TMP/run.sh" <<EOF
exec "$MOAT" --root "$TMP/state" --config "$TMP/moat.json" run -b "$BUNDLE" "$ID" >"$TMP/out" 2>"$TMP/err" </dev/null
EOF
if command -v script >/dev/null; then
	script -qec "sh $TMP/run.sh" /dev/null </dev/null >/dev/null 2>&1 || status=$?
else
	sh "$TMP/run.sh" || status=$?
fi
cat "$TMP/out"
if [ -s "$TMP/err" ]; then
	# The shell's own "Killed" for the memory bomb; anything else is news.
	grep -v '^Killed$' "$TMP/err" | sed 's/^/  (stderr) /' || true
fi

echo
# The listener was there all along: the host reaches it (that uses it up).
if "$BUSYBOX" nc -w 2 127.0.0.1 "$port" </dev/null >/dev/null 2>&1; then
	echo "host check: the listener on 127.0.0.1:$port answers the host."
else
	echo "host check: the listener on 127.0.0.1:$port did not answer the host either."
fi

# ---- a second procfs (config.json): refused at create ----
# Its core_pattern would be writable by the container's root: a "|/payload"
# there runs as host root at the next crash. The probe only opens it (for
# append, writing nothing), so the host's value is never changed.
echo
echo "A second container's config.json asks for a second procfs at /mnt/proc2:"
mkdir -p "$TMP/bundle-proc2"
jq --arg root "$BUNDLE/rootfs" '.root.path = $root
	| .mounts += [{"type": "proc", "source": "proc", "destination": "/mnt/proc2"}]
	| .process.args = ["sh", "-c", ": >>/mnt/proc2/sys/kernel/core_pattern"]' \
	"$BUNDLE/config.json" >"$TMP/bundle-proc2/config.json"
proc2_allowed=0
if "$MOAT" --root "$TMP/state" --config "$TMP/moat.json" run -b "$TMP/bundle-proc2" "$ID-proc2" \
	>"$TMP/proc2.out" 2>&1 </dev/null; then
	echo "ALLOWED  mount a second procfs (its core_pattern writable)"
	proc2_allowed=1
else
	echo "REFUSED  mount a second procfs: $(sed 's/^moat: run [^:]*: //' "$TMP/proc2.out" | head -n 1)"
fi

echo
echo "Audit log ($TMP/audit/audit.jsonl), the lines for $ID:"
jq -r --arg id "$ID" 'select(.id == $id)
	| "  \(.time) \(.verb) \(.id) profile=\(.profile) result=\(.result) network_guard=\(.network_guard // "-") overrides=\(.overrides // [] | length)"' \
	"$TMP/audit/audit.jsonl"
echo "  what the profile changed at create (kind path: asked -> enforced):"
jq -r --arg id "$ID" 'select(.id == $id and (.verb == "run" or .verb == "create")) | .overrides[]?
	| "    \(.kind) \(.path): \(.asked // "-") -> \(.enforced // "-")"' "$TMP/audit/audit.jsonl"

refused=$(grep -c '^REFUSED ' "$TMP/out" || true)
allowed=$(grep -c '^ALLOWED ' "$TMP/out" || true)
echo
if [ "$allowed" -gt 0 ]; then
	echo "FAILED: $allowed action(s) allowed."
	exit 1
fi
if [ "$proc2_allowed" -ne 0 ]; then
	echo "FAILED: the second procfs was allowed."
	exit 1
fi
if [ "$refused" -ne 11 ]; then
	echo "FAILED: expected 11 verdicts, got $refused (moat run exited $status)."
	exit 1
fi
echo "OK: all 12 actions refused (11 inside the container, the second procfs at create)."

# ---- moat sandbox: one command, no engine, and its result record ----
echo
echo "moat sandbox: a short job writes to /work, floods stdout past its 80-byte"
echo "cap and overstays its 2 s deadline:"
mkdir -p "$TMP/work"
cat >"$TMP/work/job.sh" <<'JOB'
echo "hello from $(hostname), cwd $(pwd)"
echo 42 >answer.txt
head -c 10000000 /dev/zero | tr '\0' x
sleep 600
JOB
status=0
"$MOAT" --root "$TMP/state" --config "$TMP/moat.json" sandbox --rootfs "$BUNDLE/rootfs" \
	--workdir "$TMP/work" --timeout 2s --output-limit 80 --memory 64m \
	--result "$TMP/record.json" -- sh job.sh || status=$?
echo
echo "exit status $status; answer.txt on the host: $(cat "$TMP/work/answer.txt")"
echo "result record ($(jq '.overrides | length' "$TMP/record.json") overrides not shown):"
jq 'del(.overrides)' "$TMP/record.json"
[ "$(jq .timed_out "$TMP/record.json")" = true ] || die "sandbox: expected the deadline to kill it"
[ -z "$(ls -A "$TMP/state/.sandbox")" ] || die "sandbox: a bundle was left behind"
echo "OK: the sandbox ran, was stopped at its deadline, and left nothing behind."
