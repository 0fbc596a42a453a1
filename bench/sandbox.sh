#!/bin/bash
# make bench, sandbox part: `moat sandbox --rootfs` of /bin/true next to
# `moat run` of the same bundle, `bwrap --unshare-all` (Debian's bubblewrap,
# the floor for direct use), `runsc do` when it runs here, and the second
# and later `moat sandbox --image` runs (the image cache), and `moat session
# exec` of /bin/true in a live session next to `moat exec` into a running
# container. Medians of SANDBOX_RUNS (default 30) runs each, interleaved so
# that machine noise hits them alike; prints the overhead of sandbox over run
# (target < 20%) and sandbox over bwrap in wall and CPU time (target <= 2x).
# Then SESSIONS (default 50) sessions alive at once, an exec
# in each, all at the same time: the errors are counted (target: none).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
MOAT=${MOAT:-$repo/build/moat}
RUNS=${SANDBOX_RUNS:-30}
BUSYBOX=${BUSYBOX:-/bin/busybox}
say() { printf 'bench-sandbox: %s\n' "$*" >&2; }
# Times are read from bash's own clock (EPOCHREALTIME, microseconds): a
# $(date +%s%N) at the end of a run forks and execs date inside the interval
# it measures (about 1 ms on this VM, as much as a fifth of a session exec).
[ -n "${EPOCHREALTIME:-}" ] || { say "needs bash 5 (EPOCHREALTIME)"; exit 1; }

[ "$(id -u)" = 0 ] || { say "needs root"; exit 1; }
T=$(mktemp -d /var/tmp/moat-bench-sandbox.XXXXXX)
ROOT=$T/state
# The state root on a tmpfs, as /run is on a systemd host; see bench.sh for
# what ext4 without a journal does to a create where /run is not one.
ROOT_TMPFS=0
if [ "$(stat -f -c %T /run)" != tmpfs ]; then
	mkdir "$ROOT"
	mount -t tmpfs -o mode=0700 moat-bench "$ROOT" || { say "could not mount a tmpfs on $ROOT"; exit 1; }
	ROOT_TMPFS=1
fi
cleanup() {
	for s in $(ls "$ROOT/.session" 2>/dev/null); do
		"$MOAT" --root "$ROOT" --config "$T/log/config.json" session rm "$s" >/dev/null 2>&1
	done
	for d in "$ROOT"/*/; do
		[ -d "$d" ] && "$MOAT" --root "$ROOT" --config "$T/log/config.json" delete --force "$(basename "$d")" >/dev/null 2>&1
	done
	[ $ROOT_TMPFS = 0 ] || umount "$ROOT" || { say "could not unmount $ROOT; $T left"; return; }
	rm -rf "$T"
}
trap cleanup EXIT

B=$T/bundle
mkdir -p "$B/rootfs"/{bin,proc,dev,sys,tmp,etc,root,var/tmp,work} "$T/log"
cp "$BUSYBOX" "$B/rootfs/bin/busybox"
for a in sh true; do ln -s busybox "$B/rootfs/bin/$a"; done
printf '{"audit_log": "%s/log/audit.jsonl", "image_cache": "%s/images"}\n' "$T" "$T" >"$T/log/config.json"
M=("$MOAT" --root "$ROOT" --config "$T/log/config.json")
(cd "$B" && "$MOAT" spec)
jq '.process.terminal = false | .process.args = ["/bin/true"]' "$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"

# An OCI layout of the same rootfs, one tar layer.
L=$T/layout
mkdir -p "$L/blobs/sha256"
tar -C "$B/rootfs" -cf "$T/layer.tar" .
blob() { local d; d=$(sha256sum "$1" | cut -d' ' -f1); cp "$1" "$L/blobs/sha256/$d"; echo "$d"; }
dl=$(blob "$T/layer.tar")
echo '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}' >"$T/cfg"
dc=$(blob "$T/cfg")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%d}]}' \
	"$dc" "$(stat -c %s "$T/cfg")" "$dl" "$(stat -c %s "$T/layer.tar")" >"$T/man"
dm=$(blob "$T/man")
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%d}]}' \
	"$dm" "$(stat -c %s "$T/man")" >"$L/index.json"
t0=${EPOCHREALTIME/[.,]/}
"${M[@]}" sandbox --image "$L" -- /bin/true
say "first --image run (unpack into the cache): $(((${EPOCHREALTIME/[.,]/} - t0) / 1000)) ms"

SID=$("${M[@]}" session create --rootfs "$B/rootfs")
# A running container for `moat exec`, on the same rootfs.
mkdir -p "$T/long"
jq --arg r "$B/rootfs" '.root.path = $r | .process.args = ["/bin/busybox", "sleep", "100000"]' \
	"$B/config.json" >"$T/long/config.json"
"${M[@]}" run -d --bundle "$T/long" bench-long >/dev/null

declare -A samples
kinds="run sandbox image session exec bwrap"
command -v bwrap >/dev/null || kinds=${kinds/ bwrap/}
if command -v runsc >/dev/null && runsc --rootless=false do /bin/true >/dev/null 2>&1; then
	kinds="$kinds runsc"
else
	say "runsc: not installed or does not run here; left out"
fi
one() {
	case $1 in
	run) "${M[@]}" run --bundle "$B" "bench-$2" ;;
	sandbox) "${M[@]}" sandbox --rootfs "$B/rootfs" -- /bin/true ;;
	image) "${M[@]}" sandbox --image "$L" -- /bin/true ;;
	bwrap) bwrap --unshare-all --die-with-parent --ro-bind "$B/rootfs" / --proc /proc --dev /dev /bin/true ;;
	runsc) runsc do /bin/true ;;
	session) "${M[@]}" session exec "$SID" -- /bin/true ;;
	exec) "${M[@]}" exec bench-long /bin/true ;;
	esac
}
for i in $(seq 3); do for k in $kinds; do one "$k" "w$i" >/dev/null; done; done
for i in $(seq "$RUNS"); do
	for k in $kinds; do
		t0=${EPOCHREALTIME/[.,]/}
		one "$k" "$i" >/dev/null
		samples[$k]+="$((${EPOCHREALTIME/[.,]/} - t0)) "
	done
done
calc() { awk "BEGIN { print $1 }"; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-34s %10s\n' "median of $RUNS runs of /bin/true" "ms"
for k in $kinds; do
	m=$(echo "${samples[$k]}" | median)
	declare "med_$k=$m"
	case $k in
	run) label="moat run" ;;
	sandbox) label="moat sandbox --rootfs" ;;
	image) label="moat sandbox --image (cached)" ;;
	bwrap) label="bwrap --unshare-all" ;;
	runsc) label="runsc do" ;;
	session) label="moat session exec (live session)" ;;
	exec) label="moat exec (running container)" ;;
	esac
	printf '%-34s %10.2f\n' "$label" "$(calc "$m / 1000")"
done
printf 'sandbox over run: %+.1f%% (target < +20%%)\n' "$(calc "($med_sandbox - $med_run) * 100 / $med_run")"
printf 'cached --image over --rootfs: %+.1f%%\n' "$(calc "($med_image - $med_sandbox) * 100 / $med_sandbox")"
printf 'session exec: %.2f ms (target <= 5 ms); over moat exec: %+.1f%%\n' \
	"$(calc "$med_session / 1000")" "$(calc "($med_session - $med_exec) * 100 / $med_exec")"
# CPU (user + system of moat and its children, from wait4), the figure
# that does not depend on what else the machine runs.
DRIVER=${BUILD:-$repo/build}/bench/driver
if [ ! -x "$DRIVER" ] || [ "$here/driver.c" -nt "$DRIVER" ]; then
	mkdir -p "$(dirname "$DRIVER")"
	cc -std=gnu11 -O2 -Wall -Wextra -Werror -Wshadow -o "$DRIVER" "$here/driver.c"
fi
"$DRIVER" cmd "$RUNS" 3 execs "session=${M[*]} session exec $SID -- /bin/true" \
	"exec=${M[*]} exec bench-long /bin/true" >"$T/execs.tsv"
cpu_of() { awk -v rt="$1" '$1 == "cpu.execs" && $2 == rt { print $3 }' "$T/execs.tsv" | median; }
cpu_session=$(cpu_of session)
cpu_exec=$(cpu_of exec)
printf 'session exec CPU: %.2f ms; moat exec CPU: %.2f ms (%.2fx)\n' \
	"$(calc "$cpu_session / 1000")" "$(calc "$cpu_exec / 1000")" "$(calc "$cpu_session / $cpu_exec")"
# The sandbox against bwrap (issue 21: at most 2x), wall from the medians
# above and CPU from wait4, paired the same way.
if [ -n "${med_bwrap:-}" ]; then
	"$DRIVER" cmd "$RUNS" 3 sandbox "sandbox=${M[*]} sandbox --rootfs $B/rootfs -- /bin/true" \
		"bwrap=bwrap --unshare-all --die-with-parent --ro-bind $B/rootfs / --proc /proc --dev /dev /bin/true" \
		>"$T/sandbox.tsv"
	cpu_sb() { awk -v rt="$1" '$1 == "cpu.sandbox" && $2 == rt { print $3 }' "$T/sandbox.tsv" | median; }
	printf 'sandbox --rootfs over bwrap --unshare-all: %.2fx wall, %.2fx CPU (%.2f against %.2f ms; target <= 2x)\n' \
		"$(calc "$med_sandbox / $med_bwrap")" "$(calc "$(cpu_sb sandbox) / $(cpu_sb bwrap)")" \
		"$(calc "$(cpu_sb sandbox) / 1000")" "$(calc "$(cpu_sb bwrap) / 1000")"
fi
"${M[@]}" delete --force bench-long
"${M[@]}" session rm "$SID"

# docker exec of the same beside it, in the private dockerd that
# tests/bats/engines/setup.sh starts (its busybox image, docker's default
# runtime); said skipped, and why, where that dockerd is not running.
docker_exec() (
	env_sh=${BENCH_ENGINES_ENV:-$repo/tests/bats/engines/env.sh}
	[ -r "$env_sh" ] || { echo "docker exec: skipped (no $env_sh)"; exit 0; }
	# shellcheck disable=SC1090
	. "$env_sh"
	timeout 10 "${DOCKER[@]}" version >/dev/null 2>&1 ||
		{ echo "docker exec: skipped (dockerd not running; tests/bats/engines/setup.sh starts it)"; exit 0; }
	"${DOCKER[@]}" image inspect "$IMAGE" >/dev/null 2>&1 ||
		{ echo "docker exec: skipped (image $IMAGE not loaded in docker)"; exit 0; }
	name=moat-bench-exec-$$
	"${DOCKER[@]}" run -d --name "$name" "$IMAGE" sleep 100000 >/dev/null
	trap '"${DOCKER[@]}" rm -f "$name" >/dev/null 2>&1' EXIT
	for _ in 1 2 3; do "${DOCKER[@]}" exec "$name" true; done
	took=""
	for _ in $(seq "$RUNS"); do
		t0=${EPOCHREALTIME/[.,]/}
		"${DOCKER[@]}" exec "$name" true
		took+="$((${EPOCHREALTIME/[.,]/} - t0)) "
	done
	printf 'docker exec of true (default runtime): %.2f ms; moat session exec: %.2f ms\n' \
		"$(calc "$(echo "$took" | median) / 1000")" "$(calc "$med_session / 1000")"
)
docker_exec

# Many sessions alive at once, each running EXECS execs (default 3) one
# after the other, all sessions at the same time.
N=${SESSIONS:-50}
EXECS=${SESSION_EXECS:-3}
for i in $(seq "$N"); do "${M[@]}" session create --rootfs "$B/rootfs" --pids 8 >>"$T/sessions"; done
t0=${EPOCHREALTIME/[.,]/}
# shellcheck disable=SC2016 # expanded by the inner sh
errors=$(xargs -P "$N" -I{} sh -c 'n=$1; shift; for _ in $(seq "$n"); do "$@" session exec {} -- sh -c "echo ok" 2>&1 || echo FAILED; done' \
	_ "$EXECS" "${M[@]}" <"$T/sessions" | grep -vc '^ok$' || true)
ms=$(((${EPOCHREALTIME/[.,]/} - t0) / 1000))
printf '%d sessions alive, %d execs in each, all at once: %d errors, %d ms in all\n' "$N" "$EXECS" "$errors" "$ms"
# One session's exec while the others are alive: its cost must not grow
# with them (exec looks at its own session only).
one=$(head -n 1 "$T/sessions")
many=""
for i in $(seq "$RUNS"); do
	t0=${EPOCHREALTIME/[.,]/}
	"${M[@]}" session exec "$one" -- /bin/true >/dev/null
	many+="$((${EPOCHREALTIME/[.,]/} - t0)) "
done
printf 'session exec with %d sessions alive: %.2f ms (with 1: %.2f)\n' "$N" \
	"$(calc "$(echo "$many" | median) / 1000")" "$(calc "$med_session / 1000")"
while read -r s; do "${M[@]}" session rm "$s"; done <"$T/sessions"
[ "$errors" -eq 0 ] || { say "session execs failed"; exit 1; }
[ -z "$(ls "$ROOT")" ] || { say "state left in $ROOT"; exit 1; }
