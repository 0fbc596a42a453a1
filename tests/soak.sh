#!/bin/bash
# soak.sh [N]: N container lifecycles in a row (create, start, wait until
# stopped, delete), then a check that the host has not grown: state dirs,
# cgroup dirs, mounts, network namespaces, BPF programs and zombies must
# be back to their counts exactly; MemAvailable loosely (SOAK_MEM_SLACK_KB,
# default 128 MiB: dying memory cgroups and the page cache move it).
#
# moat's own processes are short-lived, so the leaks that matter are the
# ones a lifecycle would leave on the host. Exits 1 on any growth.
# MOAT: the binary (default build/moat beside this script).
set -euo pipefail

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
count_state() { find "$ROOT" -mindepth 1 -maxdepth 1 -not -name .cache 2>/dev/null | wc -l; }
count_cgroups() {
	find /sys/fs/cgroup -maxdepth 4 -type d -name "soak-$U-*" 2>/dev/null | wc -l
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
count_bpf() {
	if command -v bpftool >/dev/null; then
		bpftool prog list 2>/dev/null | grep -c '^[0-9]*:' || true
	else
		echo 0
	fi
}
# Zombies a lifecycle could leave: moat itself and the payload (`true`).
count_zombies() {
	ps -eo stat=,comm= | awk '$1 ~ /^Z/ && ($2 == "moat" || $2 == "true")' | wc -l
}
count_fds() { awk '{print $1}' /proc/sys/fs/file-nr; }
mem_available() { awk '/^MemAvailable:/ {print $2}' /proc/meminfo; }

EXACT="state cgroups mounts nsfs_mounts bundle_mounts netns bpf zombies"
declare -A before after
measure() {
	local -n into="$1"
	local what
	for what in $EXACT fds; do
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
for what in $EXACT fds mem; do
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
