#!/bin/bash
# soak.sh [N]: N container lifecycles in a row (create, start, wait until
# stopped, delete), then a check that the host has not grown: state dirs,
# cgroup dirs, mounts under the bundle and state root, BPF programs and
# zombies must be back to their counts exactly; MemAvailable loosely
# (SOAK_MEM_SLACK_KB, default 128 MiB: dying memory cgroups and the page
# cache move it). The host-wide counts (every mount, nsfs mounts, network
# namespaces) move with whatever else runs on the host: they are printed,
# and held exact only with SOAK_STRICT=1 (a quiet host, `make soak`).
#
# moat's own processes are short-lived, so the leaks that matter are the
# ones a lifecycle would leave on the host. Exits 1 on any growth.
# MOAT: the binary (default build/moat beside this script).
set -euo pipefail
trap 'echo "soak: line $LINENO: $BASH_COMMAND failed" >&2' ERR

N="${1:-100}"
HERE="$(cd "$(dirname "$0")" && pwd)"
export MOAT="${MOAT:-$HERE/../build/moat}"
MEM_SLACK_KB="${SOAK_MEM_SLACK_KB:-131072}"
export BATS_TEST_DIRNAME="$HERE/bats"
# shellcheck source=bats/helpers.bash
source "$HERE/bats/helpers.bash"

die() {
	echo "soak: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$MOAT" ] || die "no moat binary at $MOAT"
setup_bundle
trap teardown_bundle EXIT
U="${BUNDLE##*.}"
update_config '.process.args = ["true"]'

# Counts that must come back exactly. Each is narrowed to what a moat
# lifecycle can leave, so that other work on the host does not show.
count_state() { { find "$ROOT" -mindepth 1 -maxdepth 1 -not -name .cache 2>/dev/null || true; } | wc -l; }
count_cgroups() {
	# Other work on the host removes cgroups while find walks: not ours.
	{ find /sys/fs/cgroup -maxdepth 4 -type d -name "soak-$U-*" 2>/dev/null || true; } | wc -l
}
# Mounts: all of them (a leak could land anywhere), nsfs ones (a pinned
# namespace) and those under the bundle.
count_mounts() { wc -l </proc/self/mountinfo; }
count_nsfs_mounts() { grep -c ' - nsfs ' /proc/self/mountinfo || true; }
count_bundle_mounts() { grep -cF "$BUNDLE" /proc/self/mountinfo || true; }
count_netns() {
	{
		ip netns list 2>/dev/null || true
		ls -A /run/netns 2>/dev/null || true
	} | wc -l
}
# BPF: moat's programs (moat_*) less those attached to other containers'
# cgroups, so that a leaked program (held by nothing, or on a cgroup of
# ours) shows and other work on the host does not.
count_bpf() {
	command -v bpftool >/dev/null || { echo 0; return; }
	local v2=/sys/fs/cgroup/unified
	[ -e "$v2/cgroup.procs" ] || v2=/sys/fs/cgroup
	{
		{ bpftool prog list 2>/dev/null || true; } | awk '/^[0-9]+: .* name moat_/ { sub(":", "", $1); print "prog", $1 }'
		{ bpftool cgroup tree "$v2" 2>/dev/null || true; } | awk -v ours="soak-$U-" '
			/^\// { other = index($0, ours) == 0 }
			/^ +[0-9]+ / && other { print "other", $1 }'
	} | awk '$1 == "prog" { p[$2] = 1 } $1 == "other" { o[$2] = 1 }
		END { for (i in p) if (!(i in o)) n++; print n + 0 }'
}

# Zombies a lifecycle could leave: moat itself and the payload (`true`).
count_zombies() {
	# cat, not awk FILES: processes exit while we read, and mawk stops at
	# the first file that is gone.
	{ cat /proc/[0-9]*/stat 2>/dev/null || true; } |
		awk '$3 == "Z" && ($2 == "(moat)" || $2 == "(true)") { n++ } END { print n + 0 }'
}
count_fds() { awk '{print $1}' /proc/sys/fs/file-nr; }
mem_available() { awk '/^MemAvailable:/ {print $2}' /proc/meminfo; }

EXACT="state cgroups bundle_mounts bpf zombies"
HOSTWIDE="mounts nsfs_mounts netns"
[ "${SOAK_STRICT:-0}" = 0 ] || { EXACT="$EXACT $HOSTWIDE"; HOSTWIDE=; }
declare -A before after
# shellcheck disable=SC2034 # into is a nameref to the caller's array
measure() {
	local -n into="$1"
	local what
	for what in $EXACT $HOSTWIDE fds; do
		into["$what"]="$("count_$what")"
	done
	into["mem"]="$(mem_available)"
}

# Lifecycles before the first measurement: caches (the seccomp filter in
# the state root) and the kernel's lazily made objects settle first.
lifecycle() {
	local id="$1" st
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" create -b "$BUNDLE" "$id" </dev/null >/dev/null ||
		die "create $id failed"
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" start "$id" </dev/null >/dev/null ||
		die "start $id failed"
	for _ in $(seq 1 1000); do
		st="$("$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" state "$id" </dev/null | jq -r .status)" ||
			die "state $id failed"
		[ "$st" = stopped ] && break
		sleep 0.01
	done
	[ "$st" = stopped ] || die "$id did not stop (status $st)"
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" delete "$id" </dev/null >/dev/null ||
		die "delete $id failed"
}

for i in 1 2 3; do
	lifecycle "soak-$U-warm$i"
done
measure before
for i in $(seq 1 "$N"); do
	lifecycle "soak-$U-$i"
	[ $((i % 100)) -ne 0 ] || echo "soak: $i of $N lifecycles" >&2
done

# A zombie waits for its new parent to reap it, and a freed cgroup's BPF
# programs go a moment later: wait (bounded) for the counts to settle.
for _ in $(seq 1 100); do
	measure after
	settled=1
	for what in $EXACT; do
		[ "${after[$what]}" -le "${before[$what]}" ] || settled=0
	done
	[ "$settled" = 1 ] && break
	sleep 0.1
done

failed=0
printf '%-14s %10s %10s\n' what before after >&2
for what in $EXACT $HOSTWIDE fds mem; do
	printf '%-14s %10s %10s\n' "$what" "${before[$what]}" "${after[$what]}" >&2
done
for what in $EXACT; do
	if [ "${after[$what]}" -gt "${before[$what]}" ]; then
		echo "soak: $what grew from ${before[$what]} to ${after[$what]} over $N lifecycles" >&2
		failed=1
	fi
done
if [ $((before[mem] - after[mem])) -gt "$MEM_SLACK_KB" ]; then
	echo "soak: MemAvailable fell by $((before[mem] - after[mem])) KiB (slack $MEM_SLACK_KB)" >&2
	failed=1
fi
[ "$failed" = 0 ] || exit 1
echo "soak: $N lifecycles, nothing grew" >&2
