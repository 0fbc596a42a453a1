# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154,SC2016,SC2001  # bats sets status/output; PROBE is for the tests; sed is clearer here
# Shared by the engine tests. The engines are the private ones setup.sh
# started (env.sh has their sockets); every container a test makes lives in
# them, so teardown may remove them all.

bats_require_minimum_version 1.5.0
# shellcheck source-path=SCRIPTDIR source=env.sh
. "$BATS_TEST_DIRNAME/env.sh"

# In setup_file: fail early, and clearly, when setup.sh has not run.
require_engines() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	if ! [ -S "$DOCKER_SOCK" ] || ! [ -S "$CONTAINERD_SOCK" ]; then
		echo "the engines are not running: run tests/bats/engines/setup.sh first" >&2
		return 1
	fi
}

# Run an engine command with stdout in $output and stderr in $stderr (the
# docker CLI warns on stderr about this host's disabled ip_forward).
dk() { run --separate-stderr docker_cli "$@"; log_run docker "$@"; }
pm() { run --separate-stderr podman_cli "$@"; log_run podman "$@"; }
ct() { run --separate-stderr ctr_cli "$@"; log_run ctr "$@"; }

log_run() {
	echo "# $* -> status $status" >&2
	[ -z "$output" ] || echo "$output" | sed 's/^/#   out: /' >&2
	[ -z "${stderr:-}" ] || echo "$stderr" | sed 's/^/#   err: /' >&2
}

# Run a command under a pseudo-terminal (the engines want a real one for -t).
in_tty() {
	local cmd
	printf -v cmd '%q ' "$@"
	run --separate-stderr script -qec "$cmd" /dev/null
	log_run tty "$@"
}

# The host-side file of a process's cgroup: cgroup_file PID CONTROLLER FILE
# (v1 controller hierarchies, or the unified one).
cgroup_file() {
	local pid="$1" ctrl="$2" file="$3" path
	path=$(awk -F: -v c="$ctrl" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' \
		"/proc/$pid/cgroup" | head -1)
	if [ -n "$path" ] && [ -e "/sys/fs/cgroup/$ctrl$path/$file" ]; then
		echo "/sys/fs/cgroup/$ctrl$path/$file"
		return 0
	fi
	path=$(awk -F: '$1 == "0" { print $3 }' "/proc/$pid/cgroup")
	[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && echo "/sys/fs/cgroup$path/$file"
}

# The pids and memory limits of a process's cgroup, v1 or v2 names.
pids_limit() { cat "$(cgroup_file "$1" pids pids.max)"; }
memory_limit() {
	local f
	f=$(cgroup_file "$1" memory memory.limit_in_bytes)
	[ -n "$f" ] || f=$(cgroup_file "$1" memory memory.max)
	cat "$f"
}

# Frozen: v1 freezer.state, v2 cgroup.events.
is_frozen() {
	local f
	f=$(cgroup_file "$1" freezer freezer.state)
	if [ -n "$f" ]; then
		[ "$(cat "$f")" = FROZEN ]
	else
		grep -qx 'frozen 1' "$(cgroup_file "$1" "" cgroup.events)"
	fi
}

# wait_for SECONDS CMD...: poll CMD (bounded), fail the test if it never holds.
wait_for() {
	wait_until "$@" || {
		echo "timed out after $1 s waiting for: ${*:2}" >&2
		return 1
	}
}

# The argv logger's log, emptied for one test.
reset_argv_log() { : >"$ARGV_LOG"; }

# The shell of a test container: print the interfaces with an address,
# CapEff, NoNewPrivs, whether / is writable, then try a TCP connect.
# Used by each engine's "profile holds from inside" test.
PROBE='echo "ifaces: $(ip -o addr | awk "{print \$2}" | sort -u | tr "\n" " ")"
grep -E "^(CapEff|CapBnd|NoNewPrivs)" /proc/self/status
touch /probe-root 2>/dev/null && echo "root: writable" || echo "root: read-only"
touch /tmp/probe 2>/dev/null && echo "tmp: writable" || echo "tmp: read-only"'

# The profile as $PROBE prints it: no capabilities, no_new_privs, a
# read-only root with a writable /tmp (FILE: check a log file instead).
assert_profile() {
	local text="${1:+$(cat "$1")}"
	text="${text:-$output}"
	grep -q 'CapEff:	0000000000000000' <<<"$text"
	grep -q 'CapBnd:	0000000000000000' <<<"$text"
	grep -q 'NoNewPrivs:	1' <<<"$text"
	grep -q 'root: read-only' <<<"$text"
	grep -q 'tmp: writable' <<<"$text"
}

# connect_probe ADDR PORT: busybox nc's verdict on a TCP connect (no
# listener needed: "Connection refused" means packets went both ways,
# "Operation not permitted" that the guard refused the connect).
connect_probe() { echo "nc -w 2 $1 $2 </dev/null 2>&1 | tail -1"; }
# udp_probe ADDR: busybox nslookup's first complaint about a DNS query to ADDR.
udp_probe() { echo "timeout 5 nslookup -timeout=1 -retry=1 example.com $1 2>&1 | head -1"; }
