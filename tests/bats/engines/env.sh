# shellcheck shell=bash
# shellcheck disable=SC2034  # used by the files that source this one
# Settings shared by setup.sh, stop.sh and the engine tests. Source it.
# Every engine gets private paths (its own sockets, data and state dirs), so
# these tests never talk to, or disturb, a dockerd or containerd that the
# machine runs for something else.

ENGINES_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$ENGINES_DIR/../../.." && pwd)"

# The binary under test, and setup.sh's copy of it that the engines run (a
# rebuild of the tree during a run does not swap it under their feet).
MOAT_BUILT="${MOAT:-$REPO_DIR/build/moat}"

# Private run dir (pid files, sockets, runtime state) and data dir (images,
# layers, logs). stop.sh removes the first; the second is kept for re-runs
# unless stop.sh --purge.
ENG_RUN="${ENG_RUN:-/run/moat-engines}"
ENG_STATE="${ENG_STATE:-/var/lib/moat-engines}"
ENG_LOG="$ENG_STATE/log"
MOAT="$ENG_RUN/bin/moat"
# $MOAT is a wrapper passing $MOAT_ENGINE_CONFIG to the copy, $MOAT_BIN.
MOAT_BIN="$ENG_RUN/bin/moat-bin"
MOAT_ENGINE_CONFIG="$ENG_RUN/moat-config.json"
[ -x "$MOAT" ] || MOAT="$MOAT_BUILT"

IMAGE="${IMAGE:-localhost/moat-busybox:latest}"
IMAGE_TAR="$ENG_STATE/busybox-image.tar"
# The CRI plugin's sandbox image (namespace k8s.io): the same, sleeping.
PAUSE_IMAGE="localhost/moat-pause:latest"
PAUSE_TAR="$ENG_STATE/pause-image.tar"

CONTAINERD_SOCK="$ENG_RUN/containerd/containerd.sock"
CONTAINERD_CONFIG="$ENG_RUN/containerd-config.toml"
DOCKER_SOCK="$ENG_RUN/docker.sock"
DOCKER_CONFIG="$ENG_RUN/daemon.json"
PODMAN_CONF="$ENG_RUN/containers.conf"
CTR_NS="moat-tests" # also the cgroup parent of ctr's containers
ARGV_LOG="$ENG_RUN/logger/argv.log"
LOGGED_MOAT="$ENG_RUN/logger/moat"

# The parent cgroups of each engine's containers: names of our own, which
# stop.sh removes (ctr's parent is its namespace).
CGROUP_DOCKER="moat-engines-docker"
CGROUP_PODMAN="moat-engines-podman"
CGROUP_PODS="moat-engines-pods"
CGROUP_PARENTS="$CGROUP_DOCKER $CGROUP_PODMAN $CGROUP_PODS moat-tests"

# Docker's default bridge: a bridge of our own (created by setup.sh, removed
# by stop.sh), and no iptables or sysctl changes on the host.
BRIDGE="${BRIDGE:-moatbr0}"
BRIDGE_CIDR="${BRIDGE_CIDR:-172.31.213.1/24}"
BRIDGE_GW="${BRIDGE_CIDR%/*}"
# The CRI plugin's pod network (CNI bridge plugin) on a bridge of ours too.
POD_BRIDGE="${POD_BRIDGE:-moatbr1}"
POD_SUBNET="${POD_SUBNET:-172.31.214.0/24}"
POD_GW="${POD_SUBNET%0/24}1"

# Root here lacks CAP_SYS_RESOURCE: no process may raise a hard rlimit, and
# podman asks for nofile=1048576 by default. Ask for what we have.
_hard_nofile=$(ulimit -Hn)
[ "$_hard_nofile" = unlimited ] && _hard_nofile=1048576
_hard_nproc=$(ulimit -Hu)
{ [ "$_hard_nproc" = unlimited ] || [ "$_hard_nproc" -gt 32768 ]; } && _hard_nproc=32768
# And a cgroup parent of ours (podman's default, libpod_parent, is anyone's).
PODMAN_RUN_OPTS=(--ulimit "nofile=$_hard_nofile:$_hard_nofile" --ulimit "nproc=$_hard_nproc:$_hard_nproc"
	--cgroup-parent "/$CGROUP_PODMAN")

# The engines' command lines, as arrays (so that script(1) can run them too).
DOCKER=(env "DOCKER_HOST=unix://$DOCKER_SOCK" /usr/bin/docker)
CTR=(ctr --address "$CONTAINERD_SOCK" -n "$CTR_NS")
PODMAN=(env "CONTAINERS_CONF=$PODMAN_CONF" podman --root "$ENG_STATE/podman"
	--runroot "$ENG_RUN/podman" --tmpdir "$ENG_RUN/libpod" --storage-driver overlay
	--cgroup-manager cgroupfs --events-backend file)
# The same podman with a containers.conf that does not list moat in
# runtime_supports_json (conmon then passes no --log-format).
PODMAN_NOJSON=("${PODMAN[@]}")
PODMAN_NOJSON[1]="CONTAINERS_CONF=$ENG_RUN/containers-nojson.conf"
docker_cli() { "${DOCKER[@]}" "$@"; }
ctr_cli() { "${CTR[@]}" "$@"; }
podman_cli() { "${PODMAN[@]}" "$@"; }

eng_log() { printf '[engines %s] %s\n' "$(date +%T)" "$*" >&2; }
eng_die() { eng_log "ERROR: $*"; exit 1; }

# wait_until SECONDS CMD...: poll CMD every 0.1 s.
wait_until() {
	local tries=$(($1 * 10))
	shift
	while [ "$tries" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		tries=$((tries - 1))
	done
	return 1
}
