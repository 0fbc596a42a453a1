#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# Undo setup.sh: remove the containers left in our engines, stop the dockerd
# and containerd it started (by their recorded PIDs, nothing else), the
# shims our containerd started, unmount what they left under our dirs,
# remove our bridge and run dir. --purge also removes the data dir (images).
set -uo pipefail
. "$(dirname "$0")/env.sh"

purge=0
[ "${1:-}" = --purge ] && purge=1

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# stop_pid NAME PIDFILE: SIGTERM, then SIGKILL after 30 s.
stop_pid() {
	local pid
	alive "$2" || { rm -f "$2"; return 0; }
	pid=$(cat "$2")
	eng_log "stopping $1 (pid $pid)"
	kill -TERM "$pid"
	for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then
		eng_log "$1 still alive after 30 s: SIGKILL"
		kill -KILL "$pid"
	fi
	rm -f "$2"
}

if alive "$ENG_RUN/dockerd.pid"; then
	ids=$(docker_cli ps -aq 2>/dev/null)
	# shellcheck disable=SC2086
	[ -z "$ids" ] || docker_cli rm -f $ids >/dev/null 2>&1
fi
# pids_with ARG: processes whose command line holds ARG.
pids_with() {
	local dir
	for dir in /proc/[0-9]*; do
		{ tr '\0' ' ' <"$dir/cmdline"; } 2>/dev/null | grep -q -- "$1" && echo "${dir#/proc/}"
	done
}

if [ -e "$PODMAN_CONF" ]; then
	podman_cli rm -af -t 0 >/dev/null 2>&1
	# conmon runs `podman ... container cleanup` when a container exits: let
	# those finish before their directories go.
	for _ in $(seq 100); do
		[ -z "$(pids_with "--root $ENG_STATE/podman ")" ] && break
		sleep 0.1
	done
fi
if alive "$ENG_RUN/containerd.pid"; then
	for id in $(ctr_cli tasks ls -q 2>/dev/null); do
		ctr_cli tasks kill -s KILL "$id" >/dev/null 2>&1
		ctr_cli tasks delete --force "$id" >/dev/null 2>&1
	done
	for id in $(ctr_cli containers ls -q 2>/dev/null); do
		ctr_cli containers delete "$id" >/dev/null 2>&1
	done
fi

stop_pid dockerd "$ENG_RUN/dockerd.pid"
stop_pid containerd "$ENG_RUN/containerd.pid"

# Shims outlive containerd by design; ours name our socket on their command line.
for pid in $(pids_with "-address $CONTAINERD_SOCK "); do
	eng_log "stopping leftover shim $pid"
	kill -KILL "$pid" 2>/dev/null
done

# Mounts left under our dirs (an engine killed half-way), deepest first.
grep -oE " ($ENG_RUN|$ENG_STATE)/[^ ]*" /proc/self/mountinfo | sort -r | while read -r m; do
	umount -l "$m" 2>/dev/null
done

# The engines' parent cgroups (runtimes remove a container's own cgroup,
# not its parent), empty ones only, deepest first.
for parent in $CGROUP_PARENTS; do
	find /sys/fs/cgroup -mindepth 1 -maxdepth 3 -type d -name "$parent" 2>/dev/null |
		while read -r dir; do
			find "$dir" -depth -type d -exec rmdir {} \; 2>/dev/null
		done
done

if [ -e "$ENG_RUN/created-bridges" ]; then
	while read -r br; do ip link del "$br" 2>/dev/null; done <"$ENG_RUN/created-bridges"
fi
# The shims' sockets, ctr's fifos and the runc shim's default root are under
# /run/containerd whatever the config says: if that was ours, remove what is
# left of it (empty directories, and moat's cache).
if [ -e "$ENG_RUN/created-run-containerd" ] && [ -d /run/containerd ]; then
	rm -rf /run/containerd/runc/*/.cache # moat's seccomp cache in its --root
	find /run/containerd -depth -type d -empty -delete 2>/dev/null
fi
rm -rf "$ENG_RUN"
if [ $purge = 1 ]; then
	rm -rf "$ENG_STATE"
fi
exit 0
