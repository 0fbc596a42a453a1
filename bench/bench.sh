#!/bin/bash
# make bench: moat next to crun, runc and the floor (bench/floor.c), measured
# side by side in one run, as ratios (targets: bench/README.md).  See bench/README.md.
#
# Environment: MOAT (default build/moat), BUILD, BENCH_RUNS (default 30;
# below 20 is the quick mode), BENCH_WARMUP (3), BENCH_SCALE (1,50,200;
# quick: 1,10), BENCH_SCALE_EXTRA (30), BENCH_ENGINE_RUNS (BENCH_RUNS),
# BENCH_ENGINES=0 (skip the engines), BENCH_OUT (bench/results/latest.json),
# BUSYBOX (/bin/busybox), CRUN, RUNC, BENCH_BASELINE=<commit> (build that
# commit aside, in a git worktree under the scratch dir, and measure it as
# runtime "base" in the run and lifecycle phases).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
BUILD=${BUILD:-$repo/build}
case "$BUILD" in /*) ;; *) BUILD=$repo/$BUILD ;; esac
MOAT=${MOAT:-$BUILD/moat}
RUNS=${BENCH_RUNS:-30}
WARMUP=${BENCH_WARMUP:-3}
quick=0
[ "$RUNS" -lt 20 ] && quick=1
if [ $quick = 1 ]; then SCALE=${BENCH_SCALE:-1,10}; else SCALE=${BENCH_SCALE:-1,50,200}; fi
# 30 creates a level: with 10, the median of create at 200 / at 1 moved
# from 0.89 to 1.54 between five benches of one tree within an hour.
SCALE_EXTRA=${BENCH_SCALE_EXTRA:-30}
ENGINE_RUNS=${BENCH_ENGINE_RUNS:-$RUNS}
OUT_JSON=${BENCH_OUT:-$here/results/latest.json}
BUSYBOX=${BUSYBOX:-/bin/busybox}
PREFIX="mb$$"
GAP_MS=${BENCH_GAP_MS:-50}
RT_NAMES=(moat crun runc)

say() { printf 'bench: %s\n' "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (namespaces, cgroups, mounts)"
[ -x "$MOAT" ] || die "$MOAT not built (make)"

# ---------- what the bench needs ----------
need_pkgs=""
command -v crun >/dev/null || need_pkgs="$need_pkgs crun"
command -v runc >/dev/null || [ -x /usr/sbin/runc ] || need_pkgs="$need_pkgs runc"
command -v jq >/dev/null || need_pkgs="$need_pkgs jq"
command -v hyperfine >/dev/null || need_pkgs="$need_pkgs hyperfine"
command -v strace >/dev/null || need_pkgs="$need_pkgs strace"
command -v cc >/dev/null || need_pkgs="$need_pkgs gcc libc6-dev"
is_static() { [[ "$(ldd "$1" 2>&1 || true)" == *"not a dynamic executable"* ]]; }
if ! is_static "$BUSYBOX"; then
    need_pkgs="$need_pkgs busybox-static"
    BUSYBOX=/bin/busybox
fi
install_pkgs() {
    # shellcheck disable=SC2086 # a list of names
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need_pkgs >/dev/null
}
if [ -n "$need_pkgs" ]; then
    say "installing:$need_pkgs"
    install_pkgs || { apt-get update -qq && install_pkgs; } || die "could not install$need_pkgs"
fi
CRUN=${CRUN:-$(command -v crun)}
RUNC=${RUNC:-$(command -v runc || echo /usr/sbin/runc)}
is_static "$BUSYBOX" || die "$BUSYBOX is not static"

# ---------- scratch, and undoing what we did ----------
T=$(mktemp -d /run/moat-bench.XXXXXX)
# The state roots live under $T. /run is a tmpfs on a systemd host (Debian
# 12's too); where it is not (a VM whose /run is its root ext4 without a
# journal), ext4 skips every inode freed in the last minute when it allocates
# one, so the cost of a create follows how many files the previous minute
# deleted, for every runtime: there the scratch gets a tmpfs of its own.
T_TMPFS=0
if [ "$(stat -f -c %T /run)" != tmpfs ]; then
    mount -t tmpfs -o mode=0700 moat-bench "$T" || die "could not mount a tmpfs on $T"
    T_TMPFS=1
    say "/run is $(stat -f -c %T /run), not tmpfs: the scratch and the state roots are on a tmpfs at $T"
fi
export BENCH_TMP=$T BENCH_ID_PREFIX=$PREFIX
mounted_cgroups=()
DEPTH_NAMES=()
cleanup() {
    local rt d c
    # Anything a failed phase left (ours only: ids carry our prefix).
    for rt in "${RT_NAMES[@]}" "${DEPTH_NAMES[@]}"; do
        for d in "$T/root-$rt"/"$PREFIX"-*; do
            [ -e "$d" ] || continue
            runtime_cmd $rt delete --force "$(basename "$d")" >/dev/null 2>&1 || true
        done
    done
    # The v1 hierarchies we mounted, unless someone made cgroups in them since.
    for d in "${mounted_cgroups[@]}"; do
        # moat keeps its parent /moat, as crun and runc keep theirs; empty, it
        # is ours to remove here.
        rmdir "$d/moat" 2>/dev/null || true
        if [ -z "$(find "$d" -mindepth 1 -maxdepth 1 -type d 2>/dev/null)" ]; then
            c=${d##*/}
            if umount "$d"; then
                # The kernel may keep the unmounted hierarchy, holding the
                # controller away from cgroup2 (seen with hugetlb on 6.18):
                # then only a v1 mount reaches it, so one is put back.
                if grep -qw "$c" /sys/fs/cgroup/unified/cgroup.controllers; then
                    rmdir "$d" 2>/dev/null || true
                    say "unmounted $d"
                elif mount -t cgroup -o "$c" cgroup "$d"; then
                    say "left v1 $c mounted at $d: unmounted, the kernel kept it from cgroup2"
                fi
            fi
        else
            say "left $d mounted: it has cgroups now"
        fi
    done
    if [ -e "$T/ns/crun-mnt" ]; then
        umount "$T/ns/crun-mnt" 2>/dev/null || true
        umount "$T/ns" 2>/dev/null || true
    fi
    if [ -d "$T/baseline" ]; then
        git -C "$repo" worktree remove --force "$T/baseline" 2>/dev/null || true
    fi
    if [ "${BENCH_KEEP:-0}" = 1 ]; then
        say "kept $T (BENCH_KEEP=1)"
        return
    fi
    if [ $T_TMPFS = 1 ]; then
        umount "$T" 2>/dev/null || say "could not unmount the tmpfs on $T"
    fi
    if grep -q " $T" /proc/self/mountinfo; then
        say "mounts left under $T; not removing it"
    else
        rm -rf "$T"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# crun 1.8 refuses hybrid hosts where a controller (hugetlb here) is only on
# cgroup2; mount the leftovers as v1, as a systemd hybrid host does (same fix
# as shared/engines/start-engines.sh), for the bench only.
if [ -r /sys/fs/cgroup/unified/cgroup.controllers ] && [ "$(stat -fc %T /sys/fs/cgroup)" = tmpfs ]; then
    for c in $(cat /sys/fs/cgroup/unified/cgroup.controllers); do
        grep -q "^${c}[[:space:]]" /proc/cgroups || continue
        mountpoint -q "/sys/fs/cgroup/$c" && continue
        made_dir=0
        [ -d "/sys/fs/cgroup/$c" ] || made_dir=1
        mkdir -p "/sys/fs/cgroup/$c"
        if mount -t cgroup -o "$c" cgroup "/sys/fs/cgroup/$c" 2>"$T/mount.err"; then
            mounted_cgroups+=("/sys/fs/cgroup/$c")
            say "mounted v1 $c for crun (undone at the end)"
        else
            # The kernel refuses while cgroup2 holds the controller with
            # cgroups in it (mount(8) then names an unrelated hierarchy).
            say "v1 $c not mounted for crun, it stays on cgroup2: $(head -n1 "$T/mount.err")"
            # A plain directory left on the cgroup tmpfs looks like a
            # hierarchy to tools that do not check the filesystem.
            [ $made_dir = 0 ] || rmdir "/sys/fs/cgroup/$c"
        fi
    done
fi

# ---------- tools and bundles ----------
mkdir -p "$BUILD/bench"
for prog in floor driver; do
    if [ ! -x "$BUILD/bench/$prog" ] || [ "$here/$prog.c" -nt "$BUILD/bench/$prog" ]; then
        cc -std=gnu11 -O2 -Wall -Wextra -Werror -Wshadow -o "$BUILD/bench/$prog" "$here/$prog.c"
    fi
done
FLOOR=$BUILD/bench/floor
DRIVER=$BUILD/bench/driver
# A copy: a `make` elsewhere in the tree must not swap the binary mid-run.
BENCH_MOAT_SRC=$MOAT
cp "$MOAT" "$T/moat"
MOAT=$T/moat

B=$T/bundle
mkdir -p "$B/rootfs"/{bin,proc,dev,sys,tmp,etc,root,var/tmp}
cp "$BUSYBOX" "$B/rootfs/bin/busybox"
for a in $("$BUSYBOX" --list); do
    [ "$a" = busybox ] || ln -s busybox "$B/rootfs/bin/$a"
done
echo "root:x:0:0:root:/root:/bin/sh" >"$B/rootfs/etc/passwd"
echo "root:x:0:" >"$B/rootfs/etc/group"
# One plain config for all three (runc's default spec); moat adds its profile.
(cd "$B" && "$RUNC" spec)
jq '.process.terminal = false | .process.args = ["true"]' "$B/config.json" >"$T/plain.json"
mv "$T/plain.json" "$B/config.json"
mk_bundle() { # mk_bundle NAME JQ-FILTER [JQ-ARGS...]: a bundle sharing the rootfs
    local name=$1 filter=$2
    shift 2
    mkdir -p "$T/$name"
    jq --arg r "$B/rootfs" "$@" ".root.path = \$r | $filter" "$B/config.json" >"$T/$name/config.json"
}
mk_bundle bundle-sleep '.process.args = ["sleep", "1000"]'
printf '{"audit_log": "%s"}\n' "$T/audit.jsonl" >"$T/moat-config.json"

declare -A RT_CMD=(
    [moat]="$MOAT --root $T/root-moat --config $T/moat-config.json"
    [crun]="$CRUN --root $T/root-crun"
    [runc]="$RUNC --root $T/root-runc"
)
# RT_CMD is the driver's form; a leading "mntns=PATH" (crun on a hybrid
# host, below) becomes nsenter for the shell's own calls.
rt_sh() { local c=${RT_CMD[$1]}; [[ $c == mntns=* ]] && c="nsenter --mount=${c#mntns=}"; echo "$c"; }
runtime_cmd() { local rt=$1; shift; $(rt_sh "$rt") "$@"; }
rt_args() { local rt; for rt in "$@"; do printf '%s\n' "$rt=${RT_CMD[$rt]}"; done; }
# The previous main (or any commit), built aside: a regression shows as
# moat/base above 1 in the same run.
base_commit=""
if [ -n "${BENCH_BASELINE:-}" ]; then
    base_commit=$(git -C "$repo" rev-parse --verify "$BENCH_BASELINE^{commit}") ||
        die "BENCH_BASELINE=$BENCH_BASELINE is not a commit"
    say "building the baseline ${base_commit:0:12} aside"
    git -C "$repo" worktree add --detach "$T/baseline" "$base_commit" >/dev/null 2>&1 ||
        die "git worktree add $T/baseline failed"
    # BUILD on the command line: make bench exports ours.
    make -C "$T/baseline" -j"$(nproc)" BUILD=build all >"$T/baseline.log" 2>&1 ||
        die "the baseline does not build: $(tail -3 "$T/baseline.log")"
    cp "$T/baseline/build/moat" "$T/moat-base"
    RT_CMD[base]="$T/moat-base --root $T/root-base --config $T/moat-config.json"
    RT_NAMES+=(base)
fi

S=$T/samples.tsv
: >"$S"
SKIPS=$T/skips.tsv
: >"$SKIPS"
skip() { say "skipped $1: $2"; printf '%s\t%s\n' "$1" "$2" >>"$SKIPS"; }
metric() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$S"; }

# crun 1.8 refuses a hybrid host whose cgroup2 mount holds a controller
# ("cgroups in hybrid mode not supported"), and a controller in use there
# cannot be mounted as v1. Then crun runs in a mount namespace of its own
# without the cgroup2 mount (v1 controllers only); the driver enters it
# before exec, so nothing extra is timed. moat keeps the host's view.
if ! runtime_cmd crun run --bundle "$B" "$PREFIX-crun-probe" </dev/null >"$T/crun-probe.log" 2>&1 &&
    grep -q "hybrid mode not supported" "$T/crun-probe.log"; then
    mkdir -p "$T/ns"
    touch "$T/ns/crun-mnt"
    mount --bind "$T/ns" "$T/ns" && mount --make-private "$T/ns"
    unshare --mount="$T/ns/crun-mnt" --propagation slave umount -l /sys/fs/cgroup/unified ||
        die "could not make crun's mount namespace"
    RT_CMD[crun]="mntns=$T/ns/crun-mnt ${RT_CMD[crun]}"
    skip crun.cgroup2 "crun 1.8 refuses this hybrid host: it runs without the cgroup2 mount (v1 controllers only; moat also sets up cgroup2 and its BPF guard)"
fi

mapfile -t RTS < <(rt_args "${RT_NAMES[@]}")

"$FLOOR" "$B/rootfs" || die "the floor does not run here"
for rt in "${RT_NAMES[@]}"; do
    runtime_cmd $rt run --bundle "$B" "$PREFIX-$rt-check" </dev/null >"$T/check.log" 2>&1 ||
        die "$rt cannot run the bundle: $(cat "$T/check.log")"
done
start_s=$SECONDS

# ---------- (1) run, (2) create+start+wait+delete, (3) peak RSS ----------
# Two modes: with a ${GAP_MS} ms pause before each lifecycle (what a
# container start on a quiet host sees) and back to back (".b2b").
say "run of /bin/true: $RUNS runs each after $WARMUP warm-up, floor ${RT_NAMES[*]} alternating, ${GAP_MS} ms gaps"
BENCH_GAP_MS=$GAP_MS "$DRIVER" run "$RUNS" "$WARMUP" "$B" "floor=$FLOOR" "${RTS[@]}" >>"$S"
say "the same back to back"
BENCH_GAP_MS=0 BENCH_SUFFIX=.b2b "$DRIVER" run "$RUNS" "$WARMUP" "$B" "floor=$FLOOR" "${RTS[@]}" >>"$S"
# The same figure by a harness moat does not own: hyperfine, back to back
# (a container id can be reused once run has deleted it).
hf_rts=(moat crun)
if [[ ${RT_CMD[crun]} == mntns=* ]]; then
    hf_rts=(moat)
    skip hyperfine.crun "crun runs in a mount namespace of its own here: hyperfine would time nsenter too"
fi
hf_cmds=()
for rt in "${hf_rts[@]}"; do hf_cmds+=("${RT_CMD[$rt]} run --bundle $B $PREFIX-$rt-hf"); done
if hyperfine -N --style none --warmup "$WARMUP" --runs "$RUNS" --export-json "$T/hyperfine.json" \
    "${hf_cmds[@]}" >"$T/hyperfine.log" 2>&1; then
    jq -r --arg rts "${hf_rts[*]}" '.results | to_entries[] | .key as $k | [($rts | split(" ")[$k]), (.value.median * 1e6 | round),
        ((.value.user + .value.system) * 1e6 | round)] | @tsv' "$T/hyperfine.json" |
        while IFS=$'\t' read -r rt wall cpu; do
            metric hyperfine.run.b2b "$rt" "$wall"
            metric hyperfine.cpu.run.b2b "$rt" "$cpu"
        done
else
    skip hyperfine "hyperfine failed: $(tail -2 "$T/hyperfine.log")"
fi
# Syscalls of one run, children included.
for rt in "${RT_NAMES[@]}"; do
    ns=()
    [[ ${RT_CMD[$rt]} == mntns=* ]] && ns=(nsenter "--mount=$(rt_sh "$rt" | sed 's/^nsenter --mount=\([^ ]*\).*/\1/')")
    # shellcheck disable=SC2046 # the command's words
    if "${ns[@]}" strace -f -c -o "$T/strace-$rt.txt" $(rt_sh "$rt" | sed 's/^nsenter [^ ]* //') run --bundle "$B" "$PREFIX-$rt-strace" \
        </dev/null >/dev/null 2>&1; then
        metric syscalls.run "$rt" "$(awk '$NF == "total" {print $(NF - 2)}' "$T/strace-$rt.txt")"
    else
        skip "syscalls.$rt" "strace -f -c of $rt run failed"
    fi
done
# What docker, podman and Kubernetes' RuntimeDefault send: the engine's own
# seccomp profile (docker's, 357 syscall names), compiled at each create.
if [ -r "$repo/tests/fixtures/docker.01.docker-run-rm-network-none-attached.config.json" ]; then
    mk_bundle bundle-seccomp '.linux.seccomp = $d[0].linux.seccomp' \
        --slurpfile d "$repo/tests/fixtures/docker.01.docker-run-rm-network-none-attached.config.json"
    say "run of /bin/true with docker's seccomp profile in config.json: $RUNS runs each"
    BENCH_METRIC=run.seccomp "$DRIVER" run "$RUNS" "$WARMUP" "$T/bundle-seccomp" "${RTS[@]}" >>"$S"
fi
# The cost of the layers behind the mounts and the filter (issue 24): moat
# as above, against moat with Landlock off and moat at the agent seccomp
# level (operator configs), back to back.
printf '{"audit_log": "%s", "landlock": "off"}\n' "$T/audit.jsonl" >"$T/moat-config-nolandlock.json"
printf '{"audit_log": "%s", "seccomp": "agent"}\n' "$T/audit.jsonl" >"$T/moat-config-agent.json"
RT_CMD[moat-nolandlock]="$MOAT --root $T/root-moat-nolandlock --config $T/moat-config-nolandlock.json"
RT_CMD[moat-agent]="$MOAT --root $T/root-moat-agent --config $T/moat-config-agent.json"
DEPTH_NAMES=(moat-nolandlock moat-agent)
mapfile -t DEPTH_RTS < <(rt_args moat "${DEPTH_NAMES[@]}")
say "run of /bin/true: moat, moat with Landlock off, moat at the agent level: $RUNS runs each, back to back"
BENCH_METRIC=run.depth BENCH_GAP_MS=0 "$DRIVER" run "$RUNS" "$WARMUP" "$B" "${DEPTH_RTS[@]}" >>"$S"
# Issue 20: an operator config with 10,000 egress_deny and 10,000
# egress_allow entries against the default lists, both under egress (the
# guard's programs pinned by the warm-up, the config cached): what the
# long lists add to create and delete, CPU.
awk -v audit="$T/audit.jsonl" 'BEGIN {
    printf "{\"audit_log\": \"%s\", \"egress_deny\": [", audit
    for (i = 0; i < 10000; i++) printf "%s\"203.%d.%d.0/24\"", i ? "," : "", int(i / 256), i % 256
    printf "], \"egress_allow\": ["
    for (i = 0; i < 10000; i++) printf "%s\"%d.%d.%d.0/24\"", i ? "," : "", 40 + int(i / 65536), int(i / 256) % 256, i % 256
    print "]}" }' >"$T/moat-config-lists10k.json"
RT_CMD[moat-egress]="$MOAT --root $T/root-moat-egress --config $T/moat-config.json --profile egress"
RT_CMD[moat-lists10k]="$MOAT --root $T/root-moat-lists10k --config $T/moat-config-lists10k.json --profile egress"
mapfile -t LIST_RTS < <(rt_args moat-egress moat-lists10k)
say "create, start, delete under egress, 10,000 + 10,000 list entries against the default lists: $RUNS each, back to back"
BENCH_SUFFIX=.lists BENCH_GAP_MS=0 "$DRIVER" shim "$RUNS" "$WARMUP" "$B" "${LIST_RTS[@]}" >>"$S"
say "create, start, wait, delete as separate processes: $RUNS each, ${GAP_MS} ms gaps"
BENCH_GAP_MS=$GAP_MS "$DRIVER" shim "$RUNS" "$WARMUP" "$B" "${RTS[@]}" >>"$S"
say "the same back to back"
BENCH_GAP_MS=0 BENCH_SUFFIX=.b2b "$DRIVER" shim "$RUNS" "$WARMUP" "$B" "${RTS[@]}" >>"$S"

# ---------- (4) the smallest memory limit that still runs true ----------
mem_ok() { # mem_ok RT BYTES
    local id="$PREFIX-$1-mem-$RANDOM" rc=0
    jq --argjson l "$2" '.linux.resources.memory = {"limit": $l}' "$T/mem-base.json" >"$T/bundle-mem/config.json.new"
    mv "$T/bundle-mem/config.json.new" "$T/bundle-mem/config.json"
    timeout -k 2 20 $(rt_sh "$1") run --bundle "$T/bundle-mem" "$id" </dev/null >>"$T/mem.log" 2>&1 || rc=$?
    runtime_cmd "$1" delete --force "$id" >/dev/null 2>&1 || true
    return $rc
}
mk_bundle bundle-mem '.'
cp "$T/bundle-mem/config.json" "$T/mem-base.json"
# A limit "runs true" when 3 runs in a row succeed: near the edge, whether
# the OOM killer strikes depends on timing.
mem_ok3() { mem_ok "$1" "$2" && mem_ok "$1" "$2" && mem_ok "$1" "$2"; }
hi_max=$((64 * 1024)) # KiB
for rt in moat crun runc; do
    if ! mem_ok3 $rt $((hi_max * 1024)); then
        metric memlimit.fail $rt 1
        say "$rt: true fails even with ${hi_max} KiB"
        continue
    fi
    lo=0 hi=$hi_max
    while [ $((hi - lo)) -gt 16 ]; do
        mid=$(((lo + hi) / 2 / 4 * 4))
        if mem_ok3 $rt $((mid * 1024)); then hi=$mid; else lo=$mid; fi
    done
    # Near the edge one run in a few still fails: go up until 5 rechecks
    # in a row pass (at most 16 steps of 16 KiB).
    found=$hi flaky=0
    for _ in $(seq 16); do
        flaky=0
        for _ in 1 2 3 4 5; do mem_ok $rt $((hi * 1024)) || flaky=$((flaky + 1)); done
        [ $flaky = 0 ] && break
        hi=$((hi + 16))
    done
    metric memlimit $rt "$hi"
    metric memlimit.search $rt "$found"
    metric memlimit.recheck_failures $rt $flaky
    say "$rt: smallest memory limit that runs true: $hi KiB (3 in a row from $found KiB, 5 in a row from $hi KiB; fails at $lo KiB)"
done

# ---------- (5) N running, one more, then nothing left ----------
bpf_before=$("$DRIVER" bpfcount)
say "scale: $SCALE containers running sleep, $SCALE_EXTRA more created at each level, per runtime"
# moat, crun and runc (the first three): the baseline is not scaled.
"$DRIVER" scale "$SCALE" "$SCALE_EXTRA" "$T/bundle-sleep" "${RTS[@]:0:3}" >>"$S"
for rt in moat crun runc; do
    pat="$PREFIX-$rt-"
    n_state=$(find "$T/root-$rt" -mindepth 1 -maxdepth 1 -name "$pat*" 2>/dev/null | wc -l)
    n_cg=$(find /sys/fs/cgroup -mindepth 1 -maxdepth 6 -type d -name "*$pat*" 2>/dev/null | wc -l)
    n_mnt=$(grep -c -- "$pat" /proc/self/mountinfo || true)
    metric scale.left_statedirs $rt "$n_state"
    metric scale.left_cgroups $rt "$n_cg"
    metric scale.left_mounts $rt "$n_mnt"
done
bpf_after=$("$DRIVER" bpfcount)
metric scale.bpf_progs_added all $((bpf_after - bpf_before))

# ---------- (6) engines ----------
# The engines as tests/bats/engines/setup.sh runs them (private sockets and
# state, moat registered, the busybox image loaded); its env.sh says where.
engines() {
    local env_sh=${BENCH_ENGINES_ENV:-$repo/tests/bats/engines/env.sh}
    if [ "${BENCH_ENGINES:-1}" = 0 ]; then skip engines "BENCH_ENGINES=0"; return; fi
    if [ ! -r "$env_sh" ]; then skip engines "no $env_sh"; return; fi
    # shellcheck disable=SC1090
    # env.sh sets MOAT and MOAT_BUILT of its own: ours are kept as
    # MOAT_BENCH (the copy this run uses) and BENCH_MOAT_SRC.
    (
        MOAT_BENCH=$MOAT
        . "$env_sh"
        engine_docker
        engine_podman
        engine_ctr
    )
}
# engine_cmds METRIC NAME=COMMAND...: alternating, $ENGINE_RUNS each.
engine_cmds() {
    local metric=$1; shift
    say "$metric: $ENGINE_RUNS runs each ($(printf '%s ' "${@%%=*}"))"
    "$DRIVER" cmd "$ENGINE_RUNS" "$WARMUP" "$metric" "$@" >>"$S"
}
engine_docker() {
    local d="${DOCKER[*]}" moat_rt crun_rt rts=()
    if ! timeout 10 "${DOCKER[@]}" version >/dev/null 2>&1; then
        skip engine.docker "dockerd not running (tests/bats/engines/setup.sh starts it)"; return
    fi
    if ! "${DOCKER[@]}" image inspect "$IMAGE" >/dev/null 2>&1; then
        skip engine.docker "image $IMAGE not loaded in docker"; return
    fi
    "${DOCKER[@]}" info --format '{{json .Runtimes}}' >"$T/docker-runtimes.json" 2>/dev/null || echo '{}' >"$T/docker-runtimes.json"
    moat_rt=$(jq -r --arg m "$BENCH_MOAT_SRC" 'to_entries | map(select(.value.runtimeArgs == null))
        | (map(select(.value.path == $m)) + map(select(.value.path | tostring | test("/moat$"))))
        | .[0].key // empty' "$T/docker-runtimes.json")
    crun_rt=$(jq -r --arg c "$CRUN" 'to_entries | map(select(.value.path == $c or .key == "crun")) | .[0].key // empty' "$T/docker-runtimes.json")
    if [ -z "$moat_rt" ]; then
        skip engine.docker "moat is not a docker runtime (registered: $(jq -c 'map_values(.path)' "$T/docker-runtimes.json"))"; return
    fi
    local path
    path=$(jq -r --arg k "$moat_rt" '.[$k].path' "$T/docker-runtimes.json")
    cmp -s "$path" "$MOAT_BENCH" || say "docker: runtime $moat_rt is $path, another build than $BENCH_MOAT_SRC"
    rts+=("moat=$d run --rm --runtime=$moat_rt $IMAGE true")
    if [ -n "$crun_rt" ]; then
        rts+=("crun=$d run --rm --runtime=$crun_rt $IMAGE true")
    else
        skip engine.docker.crun "crun is not a docker runtime here (daemon.json: \"runtimes\": {\"crun\": {\"path\": \"$CRUN\"}}); moat compared with runc only"
    fi
    rts+=("runc=$d run --rm --runtime=runc $IMAGE true")
    engine_cmds engine.docker "${rts[@]}"
}
engine_podman() {
    local p="${PODMAN[*]}" u nofile nproc
    # Root here cannot raise a hard rlimit (no CAP_SYS_RESOURCE) and podman
    # asks for nofile=1048576: ask for what we have (env.sh's options).
    if [ -n "${PODMAN_RUN_OPTS+x}" ]; then
        u="${PODMAN_RUN_OPTS[*]}"
    elif [ -n "${PODMAN_ULIMITS+x}" ]; then
        u="${PODMAN_ULIMITS[*]}"
    else
        nofile=$(ulimit -Hn) nproc=$(ulimit -Hu)
        [ "$nofile" = unlimited ] && nofile=1048576
        { [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; } && nproc=32768
        u="--ulimit nofile=$nofile:$nofile --ulimit nproc=$nproc:$nproc"
    fi
    if ! "${PODMAN[@]}" image exists "$IMAGE" 2>/dev/null; then
        skip engine.podman "image $IMAGE not in podman's storage (tests/bats/engines/setup.sh loads it)"; return
    fi
    engine_cmds engine.podman \
        "moat=$p --runtime $MOAT_BENCH run --rm $u $IMAGE true" \
        "crun=$p --runtime $CRUN run --rm $u $IMAGE true" \
        "runc=$p --runtime $RUNC run --rm $u $IMAGE true"
}
engine_ctr() {
    local c="${CTR[*]}"
    if ! timeout 10 "${CTR[@]}" version >/dev/null 2>&1; then
        skip engine.ctr "containerd not running on $CONTAINERD_SOCK"; return
    fi
    if ! "${CTR[@]}" images ls -q 2>/dev/null | grep -qx "$IMAGE"; then
        skip engine.ctr "image $IMAGE not in containerd namespace $CTR_NS"; return
    fi
    # containerd's runc shim with the runtime as its binary, as a
    # RuntimeClass with BinaryName does.
    engine_cmds engine.ctr \
        "moat=$c run --rm --runc-binary $MOAT_BENCH $IMAGE {id} true" \
        "crun=$c run --rm --runc-binary $CRUN $IMAGE {id} true" \
        "runc=$c run --rm --runc-binary $RUNC $IMAGE {id} true"
}
engines
elapsed=$((SECONDS - start_s))

# ---------- the report ----------
mkdir -p "$(dirname "$OUT_JSON")"
"$here/report.sh" "$S" "$SKIPS" "$OUT_JSON" \
    --arg moat "$BENCH_MOAT_SRC" --arg moat_version "$("$MOAT" --version 2>/dev/null | head -1)" \
    --arg crun_version "$("$CRUN" --version | head -1)" --arg runc_version "$("$RUNC" --version | head -1)" \
    --arg kernel "$(uname -r)" --arg commit "$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" \
    --argjson runs "$RUNS" --argjson warmup "$WARMUP" --arg scale "$SCALE" --argjson seconds "$elapsed" \
    --argjson gap_ms "$GAP_MS" --arg baseline "${base_commit:0:12}" \
    --arg machine "$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)" \
    --arg cgroups "$(if [ -e /sys/fs/cgroup/cgroup.controllers ]; then echo v2; elif [ -d /sys/fs/cgroup/unified ]; then echo hybrid; else echo v1; fi)"
for f in driver.log mem.log; do
    [ -f "$T/$f" ] && cp "$T/$f" "$(dirname "$OUT_JSON")/$f"
done
if grep -q "^driver: exit" "$T/driver.log" 2>/dev/null; then
    say "some commands failed; the first (all in $(dirname "$OUT_JSON")/driver.log):"
    grep -m3 -B3 "^driver: exit" "$T/driver.log" >&2 || true
fi
say "results: $OUT_JSON (${elapsed}s)"
