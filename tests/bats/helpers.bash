# shellcheck shell=bash
# Shared setup for moat's integration tests, in runc's layout.
# MOAT: the binary under test; MOAT_TESTBIN: the static helpers of tests/cmd.

MOAT="${MOAT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/build/moat}"
TESTBIN="${MOAT_TESTBIN:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/build/tests/cmd}"
FIXTURES="$(cd "$BATS_TEST_DIRNAME/.." && pwd)/fixtures"
[ -d "$FIXTURES" ] || FIXTURES="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/tests/fixtures"
BUSYBOX="${BUSYBOX:-/bin/busybox}"

# A fresh bundle: busybox rootfs, `moat spec` config with terminal off, a
# private --root and a private audit log (through an operator config).
setup_bundle() {
	BUNDLE="$(mktemp -d "${BATS_TMPDIR:-/tmp}/moat-bats.XXXXXX")"
	ROOT="$BUNDLE/state"
	mkdir -p "$BUNDLE/rootfs/bin" "$BUNDLE/rootfs/proc" "$BUNDLE/rootfs/dev" \
		"$BUNDLE/rootfs/sys" "$BUNDLE/rootfs/tmp" "$BUNDLE/rootfs/etc" \
		"$BUNDLE/rootfs/root" "$BUNDLE/rootfs/var/tmp"
	cp "$BUSYBOX" "$BUNDLE/rootfs/bin/busybox"
	for a in $("$BUSYBOX" --list); do
		[ "$a" = busybox ] || ln -s busybox "$BUNDLE/rootfs/bin/$a"
	done
	echo "root:x:0:0:root:/root:/bin/sh" >"$BUNDLE/rootfs/etc/passwd"
	echo "root:x:0:" >"$BUNDLE/rootfs/etc/group"
	AUDIT_LOG="$BUNDLE/audit.jsonl"
	MOAT_CONFIG="$BUNDLE/moat-config.json"
	IMAGE_CACHE="$BUNDLE/images"
	printf '{"audit_log": "%s", "image_cache": "%s"}\n' "$AUDIT_LOG" "$IMAGE_CACHE" >"$MOAT_CONFIG"
	(cd "$BUNDLE" && "$MOAT" spec)
	update_config '.process.terminal = false | .process.args = ["true"]'
}

# Copy a static test helper into the rootfs (tests/cmd/NAME.c).
add_testbin() {
	cp "$TESTBIN/$1" "$BUNDLE/rootfs/bin/$1"
}

teardown_bundle() {
	[ -n "${BUNDLE:-}" ] || return 0
	if [ -d "$ROOT" ]; then
		for d in "$ROOT"/*/; do
			[ -d "$d" ] || continue
			"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" delete --force "$(basename "$d")" >/dev/null 2>&1 || true
		done
	fi
	rm -rf "$BUNDLE"
}

# moat wrapper: like bats' run, with our --root and config; logs what
# happened. Output goes through a file, not a pipe: a created or detached
# container inherits moat's stdio and would hold a pipe open for its life.
moat() {
	local out="$BUNDLE/.moat-out"
	status=0
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" "$@" >"$out" 2>&1 </dev/null || status=$?
	# The clamps and ignored requests moat tells on stderr ("moat: VERB ID:
	# warning: ...") go to $warnings: $output and $lines stay what the verb
	# and the container printed.
	grep -aE "$MOAT_WARNING_RE" "$out" >"$out.warn" || true
	grep -avE "$MOAT_WARNING_RE" "$out" >"$out.kept" || true
	warnings="$(cat "$out.warn")"
	output="$(cat "$out.kept")"
	mapfile -t lines <"$out.kept"
	echo "moat $* (status=$status):" >&2
	cat "$out" >&2
}
MOAT_WARNING_RE='^moat: [a-z]+ [^ :]+: warning: '


# Same, keeping stderr apart in $stderr.
moat_sep() {
	local out="$BUNDLE/.moat-out" errf="$BUNDLE/.moat-err"
	status=0
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" "$@" >"$out" 2>"$errf" </dev/null || status=$?
	output="$(cat "$out")"
	stderr="$(cat "$errf")"
	echo "moat $* (status=$status): $output / $stderr" >&2
}

update_config() {
	local tmp="$BUNDLE/config.json.tmp"
	jq "$@" "$BUNDLE/config.json" >"$tmp" && mv "$tmp" "$BUNDLE/config.json"
}

# Run a shell command inside a fresh container, capture status and output.
run_in_container() {
	update_config --arg c "$1" '.process.args = ["sh", "-c", $c]'
	moat run -b "$BUNDLE" "ctr-$$-$RANDOM"
}

# Wait (bounded) for a container to reach a status.
wait_status() {
	local id="$1" want="$2"
	for _ in $(seq 1 100); do
		st=$("$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" state "$id" 2>/dev/null | jq -r .status)
		[ "$st" = "$want" ] && return 0
		sleep 0.05
	done
	echo "container $id: status $st, wanted $want" >&2
	return 1
}

# Host-side leftovers of a container id: state dir, cgroups, mounts.
assert_nothing_left() {
	local id="$1"
	[ ! -e "$ROOT/$id" ] || { echo "state dir left: $ROOT/$id" >&2; return 1; }
	if find /sys/fs/cgroup -maxdepth 4 -type d -name "$id" 2>/dev/null | grep -q .; then
		echo "cgroup left for $id" >&2
		find /sys/fs/cgroup -maxdepth 4 -type d -name "$id" >&2
		return 1
	fi
	if grep -q "$BUNDLE" /proc/self/mountinfo; then
		echo "mount left under $BUNDLE" >&2
		return 1
	fi
}

requires_root() {
	[ "$(id -u)" = 0 ] || skip "needs root"
}

# moat started by a caller that leaks its process state, as a job runner,
# an init script under nohup or a Python or Go parent does: SIGHUP, SIGQUIT
# and SIGPIPE ignored, SIGUSR1 and SIGTERM blocked, umask 0077; and 32 and
# 33, which glibc keeps for itself, ignored through the raw syscall (a
# harness here left them so).
moat_from_leaky_caller() {
	local out="$BUNDLE/.moat-out"
	status=0
	/usr/bin/python3 -c '
import ctypes, os, signal, sys
class KernelSigaction(ctypes.Structure):
    _fields_ = [("handler", ctypes.c_void_p), ("flags", ctypes.c_ulong),
                ("restorer", ctypes.c_void_p), ("mask", ctypes.c_uint64)]
ignore = KernelSigaction(1, 0, None, 0)  # SIG_IGN
for s in (32, 33):
    ctypes.CDLL(None).syscall(13, s, ctypes.byref(ignore), None, 8)  # rt_sigaction
for s in (signal.SIGHUP, signal.SIGQUIT, signal.SIGPIPE):
    signal.signal(s, signal.SIG_IGN)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGTERM})
os.umask(0o077)
os.execv(sys.argv[1], sys.argv[1:])' "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" "$@" >"$out" 2>&1 </dev/null || status=$?
	output="$(cat "$out")"
	echo "moat $* from a leaky caller (status=$status): $output" >&2
}

# For tests/cmd/pidreuse: the shell command (its PREP) that makes the state
# of container $1 name pidreuse's victim (pid and start time), as if that
# process were the container's init.
forge_state_prep() {
	local file="$ROOT/$1/state.json"
	echo "jq --argjson p \"\$VICTIM_PID\" --argjson s \"\$VICTIM_START\" \
'.pid = \$p | .pidStartTime = \$s' '$file' >'$BUNDLE/state.forged' \
&& mv '$BUNDLE/state.forged' '$file'"
}
