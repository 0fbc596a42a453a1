#!/usr/bin/env bash
# Trace the syscalls real agent workloads make inside a moat container, to
# (re)make the agent seccomp level's allow-list (runtime/seccomp/seccomp_level.c).
#
#   tests/agent/trace.sh [WORKLOAD ...]     (default: all of workloads/)
#
# Each workload runs in its own container (bundle.sh: the host's /usr bound
# read-only, the workloads bound at /workloads) under the
# level named by $LEVEL (default: moat's default filter, so that the traces
# show what a workload asks for, not what the agent level lets through).
# strace attaches to the init between create and start and follows every
# process; the init's own calls before its execve (moat's) are dropped.
# Writes tests/agent/traces/WORKLOAD.txt: "NAME CALLS REFUSED" per
# syscall, REFUSED counting ENOSYS/EPERM answers (the filter's or the
# kernel's: libc falls back); the workloads' own output says "NAME ok".
# Needs root, strace, and the workloads' programs on the host (python3,
# node, gcc, make, python3-pip; libpython3.11-testsuite for pytests).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
moat="${MOAT:-$repo/build/moat}"
level="${LEVEL:-}"
out_dir="${TRACE_DIR:-$here/traces}"
work="$(mktemp -d /tmp/moat-trace.XXXXXX)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out_dir"

# shellcheck source=bundle.sh
. "$here/bundle.sh"

# strace -f output -> "NAME CALLS REFUSED", dropping the init's calls
# before its first successful execve.
summarize() {
	awk -v init="$2" '
		function count(name, line) {
			calls[name]++
			if (line ~ /= -1 (ENOSYS|EPERM) /) refused[name]++
		}
		{
			pid = $1
			if (pid == init && !execd) {
				if ($2 ~ /^execve\(/ && $0 ~ /\) = 0$/) execd = 1
				else next
			}
			if ($2 == "<..." && $4 == "resumed>") { count($3, $0); next }
			if ($2 ~ /^[a-z0-9_]+\(/) { n = $2; sub(/\(.*/, "", n); count(n, $0) }
		}
		END { for (n in calls) printf "%s %d %d\n", n, calls[n], refused[n] + 0 }
	' "$1" | sort
}

trace_one() {
	local name="$1" b="$work/$1" id="trace-$$-${1%%.*}" pid
	mkdir -p "$b"
	printf '{"audit_log": "%s/audit.jsonl"}\n' "$b" >"$b/moat-config.json"
	agent_bundle "$b" "$moat" "$level"
	jq --arg c "$(agent_command "$name")" '.process.args = ["sh", "-c", $c]' \
		"$b/config.json" >"$b/c" && mv "$b/c" "$b/config.json"
	"$moat" --root "$b/state" --config "$b/moat-config.json" create -b "$b" "$id"
	pid="$("$moat" --root "$b/state" state "$id" | jq -r .pid)"
	strace -f -qq -o "$b/strace.out" -p "$pid" &
	local tracer=$!
	until grep -q "^TracerPid:[[:space:]]*[1-9]" "/proc/$pid/status"; do sleep 0.05; done
	"$moat" --root "$b/state" --config "$b/moat-config.json" start "$id"
	wait "$tracer" || true
	"$moat" --root "$b/state" --config "$b/moat-config.json" delete --force "$id" || true
	summarize "$b/strace.out" "$pid" >"$out_dir/${name%.*}.txt"
}

workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || mapfile -t workloads < <(ls "$here/workloads")
for w in "${workloads[@]}"; do
	echo "== $w"
	trace_one "$w"
done
