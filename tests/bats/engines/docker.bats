#!/usr/bin/env bats
# Docker (dockerd -> containerd -> runc v2 shim -> moat), runtimes "moat"
# and "moat-egress" registered by contrib/docker-daemon.json. Each test
# drives the docker CLI and checks the result from the outside (docker's
# view, the cgroup) and from inside the container.

load helpers

setup_file() {
	require_engines
}

teardown() {
	local ids
	ids=$(docker_cli ps -aq)
	# shellcheck disable=SC2086
	[ -z "$ids" ] || docker_cli rm -f $ids >/dev/null 2>&1 || true
	# A network a test made (moat-egNUMBER-PID), by its name.
	docker_cli network rm "moat-eg$BATS_TEST_NUMBER-$$" >/dev/null 2>&1 || true
}

# A detached moat container running a shell script; its name in $name.
start_detached() {
	name="moat-d$BATS_TEST_NUMBER"
	dk run -d --name "$name" --runtime=moat "$@" "$IMAGE" sh -c \
		'trap "echo got-hup" HUP; trap "echo got-term; exit 0" TERM; echo started; while :; do sleep 0.1; done'
	[ "$status" -eq 0 ]
	wait_for 10 eval 'docker_cli logs "$name" 2>&1 | grep -q started'
	pid=$(docker_cli inspect -f '{{.State.Pid}}' "$name")
	id=$(docker_cli inspect -f '{{.Id}}' "$name")
}

@test "docker info lists the moat runtimes of contrib/docker-daemon.json" {
	dk info --format '{{json .Runtimes}}'
	[ "$status" -eq 0 ]
	echo "$output" | jq -e --arg m "$MOAT" '.moat.path == $m'
	echo "$output" | jq -e '."moat-egress".runtimeArgs == ["--profile", "egress"]'
}

@test "docker run: output, and the exit status of the container" {
	dk run --rm --runtime=moat "$IMAGE" sh -c 'echo hello from moat; exit 3'
	[ "$status" -eq 3 ]
	[ "$output" = "hello from moat" ]
	dk run --rm --runtime=moat "$IMAGE" true
	[ "$status" -eq 0 ]
}

@test "docker run -w /bin ./echo: a relative command with a slash is found from the working directory, as runc" {
	dk run --rm --runtime=moat -w /bin "$IMAGE" ./echo hi
	[ "$status" -eq 0 ]
	[ "$output" = "hi" ]
	# Not found from the root: the working directory is what resolves it.
	run -127 --separate-stderr docker_cli run --rm --runtime=moat -w / "$IMAGE" ./echo hi
	[[ "$stderr" == *'./echo'*'no such file or directory'* ]]
}

@test "docker run: the shim calls moat as runc, with its JSON log" {
	reset_argv_log
	dk run --rm --runtime=moat-logged "$IMAGE" true
	[ "$status" -eq 0 ]
	grep -E -- '--log [^ ]+/log.json --log-format json create --bundle [^ ]+ --pid-file [^ ]+/init.pid ' "$ARGV_LOG"
	grep -E -- ' start [0-9a-f]{64}$' "$ARGV_LOG"
	# create, start and delete succeeded (the later delete --force may not).
	[ "$(grep -c '^EXIT .* 0$' "$ARGV_LOG")" -ge 3 ]
}

@test "docker run: a command that cannot run is moat's error, through the shim's log" {
	run -127 --separate-stderr docker_cli run --rm --runtime=moat "$IMAGE" /nonexistent
	[[ "$stderr" == *'OCI runtime create failed'*'/nonexistent'*'no such file or directory'* ]]
	dk run --rm --runtime=moat "$IMAGE" /etc/passwd
	[ "$status" -eq 126 ]
	[[ "$stderr" == *'permission denied'* ]]
	# Nothing left in moat's state dir (but its seccomp cache).
	[ -z "$(ls "$ENG_RUN/docker/runtime-runc/moby" 2>/dev/null)" ]
}

@test "docker run -d, logs, exec (status, user, cwd, env)" {
	start_detached
	dk logs "$name"
	[ "$output" = started ]
	dk exec "$name" echo exec-hi
	[ "$status" -eq 0 ]
	[ "$output" = exec-hi ]
	dk exec "$name" sh -c 'exit 4'
	[ "$status" -eq 4 ]
	dk exec -u 1:1 -w /tmp -e X=1 "$name" sh -c 'id -u; id -g; pwd; echo "X=$X"'
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '1\n1\n/tmp\nX=1')" ]
	# exec goes through the profile too.
	dk exec "$name" sh -c 'grep CapEff /proc/self/status'
	[[ "$output" == *0000000000000000 ]]
}

@test "docker exec -t and docker run -it get a terminal (console socket)" {
	start_detached
	dk exec -t "$name" tty
	[ "$status" -eq 0 ]
	[[ "$output" == */dev/pts/* ]]
	in_tty "${DOCKER[@]}" run --rm -it --runtime=moat "$IMAGE" sh -c 'tty; exit 2'
	[ "$status" -eq 2 ]
	[[ "$output" == */dev/pts/* ]]
}

@test "docker top lists the container's processes (ps --format json)" {
	start_detached
	dk top "$name"
	[ "$status" -eq 0 ]
	# G12: container root is the host uid of its block (ps truncates it),
	# never root.
	echo "$output" | grep -E "^[0-9]+\+? +$pid .*sh -c"
	! echo "$output" | grep -E "^root "
}

@test "docker pause / unpause freezes and thaws the container" {
	start_detached
	dk pause "$name"
	[ "$status" -eq 0 ]
	[ "$(docker_cli inspect -f '{{.State.Paused}}' "$name")" = true ]
	is_frozen "$pid"
	dk unpause "$name"
	[ "$status" -eq 0 ]
	! is_frozen "$pid" || false
	dk exec "$name" echo thawed
	[ "$output" = thawed ]
}

@test "docker update: --pids-limit and --memory reach the cgroup, capped by the profile" {
	start_detached
	dk update --pids-limit 50 "$name"
	[ "$status" -eq 0 ]
	[ "$(pids_limit "$pid")" = 50 ]
	dk update --memory 64m --memory-swap 64m "$name"
	[ "$status" -eq 0 ]
	[ "$(memory_limit "$pid")" = $((64 << 20)) ]
	# The pids limit survives an update that does not name it.
	[ "$(pids_limit "$pid")" = 50 ]
	# Above the strict profile (64 pids, 512 MiB): the profile's value.
	dk update --pids-limit 1000 --memory 2g --memory-swap 2g "$name"
	[ "$status" -eq 0 ]
	[ "$(pids_limit "$pid")" = 64 ]
	[ "$(memory_limit "$pid")" = $((512 << 20)) ]
}

@test "docker kill -s HUP reaches the container's process" {
	start_detached
	dk kill -s HUP "$name"
	[ "$status" -eq 0 ]
	wait_for 10 eval 'docker_cli logs "$name" 2>&1 | grep -q got-hup'
	[ "$(docker_cli inspect -f '{{.State.Running}}' "$name")" = true ]
}

@test "docker stop: SIGTERM when it is handled, SIGKILL after the timeout" {
	start_detached
	dk stop -t 10 "$name"
	[ "$status" -eq 0 ]
	[ "$(docker_cli inspect -f '{{.State.ExitCode}}' "$name")" = 0 ]
	docker_cli logs "$name" 2>&1 | grep -q got-term

	dk run -d --name ignores-term --runtime=moat "$IMAGE" sh -c 'trap "" TERM; while :; do sleep 0.1; done'
	dk stop -t 1 ignores-term
	[ "$status" -eq 0 ]
	[ "$(docker_cli inspect -f '{{.State.ExitCode}}' ignores-term)" = 137 ]
}

@test "docker restart, then docker rm -f of a running container leaves nothing" {
	start_detached
	dk restart -t 1 "$name"
	[ "$status" -eq 0 ]
	newpid=$(docker_cli inspect -f '{{.State.Pid}}' "$name")
	[ "$newpid" != "$pid" ]
	dk rm -f "$name"
	[ "$status" -eq 0 ]
	! kill -0 "$newpid" 2>/dev/null || false
	[ ! -e "$ENG_RUN/docker/runtime-runc/moby/$id" ]
	[ -z "$(find /sys/fs/cgroup -maxdepth 3 -name "$id" 2>/dev/null)" ]
}

# G5/G13: a named volume (the engine's volume tree) is writable, and its
# files may run; a host path is read-only whatever -v asks, told on stderr.
@test "docker -v: a named volume is writable; a host path is read-only, told on stderr" {
	local dir="$BATS_TEST_TMPDIR/vol" vol="moat-vol-$$"
	mkdir -p "$dir"
	echo from-host >"$dir/in"
	dk run --rm --runtime=moat -v "$dir:/data" "$IMAGE" sh -c 'cat /data/in; echo from-container >/data/out'
	[ "$status" -ne 0 ]
	[ "$output" = from-host ]
	[[ "$stderr" == *"moat: warning: mounts["*"]: binding $dir read-only: "*"writable_bind_trees of the operator config"* ]]
	[[ "$stderr" == *"/data/out: Read-only file system"* ]]
	[ ! -e "$dir/out" ]
	dk run --rm --runtime=moat -v "$dir:/data:ro" "$IMAGE" sh -c 'echo x >/data/out'
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"Read-only file system"* ]]
	dk run --rm --runtime=moat -v "$vol:/vol" "$IMAGE" sh -c 'cp /bin/busybox /vol/busybox && /vol/busybox echo ran-from-volume'
	local rc=$status out=$output
	docker_cli volume rm -f "$vol" >/dev/null 2>&1 || true
	[ "$rc" -eq 0 ]
	[ "$out" = ran-from-volume ]
}

@test "docker named volume and exec: a user namespace of its own (G12); in Docker's volume tree, container root's files are host root's" {
	local vol="moat-g12-$$" data
	dk volume create "$vol"
	data=$(docker_cli volume inspect -f '{{.Mountpoint}}' "$vol")
	start_detached -v "$vol:/data"
	dk exec "$name" sh -c 'id -u; cat /proc/self/uid_map'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	read -r inside outside count <<<"${lines[1]}"
	[ "$inside $count" = "0 65536" ]
	[ "$outside" -ge $((0x40000000)) ]
	# A named volume is in Docker's volume tree (its data-root here is the
	# tests' own, named in engine_roots of their operator config): idmapped.
	[[ "$data" == */volumes/*/_data ]]
	dk exec "$name" sh -c 'touch /data/by-root && stat -c %u:%g /data/by-root'
	[ "$status" -eq 0 ]
	[ "$output" = 0:0 ]
	[ "$(stat -c %u:%g "$data/by-root")" = 0:0 ]
	docker_cli rm -f "$name" >/dev/null
	docker_cli volume rm "$vol" >/dev/null
}

@test "docker run --pid container:X: one pid namespace, and the user namespace of X on its block (G12); each sees the other's processes" {
	start_detached
	dk exec "$name" cat /proc/self/uid_map
	[ "$status" -eq 0 ]
	first_map=$output
	dk run --rm --runtime=moat --pid "container:$name" "$IMAGE" sh -c 'ps -o pid,args | awk "\$1 == 1"; cat /proc/self/uid_map; id -u; readlink /proc/self/ns/user'
	[ "$status" -eq 0 ]
	# pid 1 is the first container's shell.
	[[ "${lines[0]}" == *"echo started"* ]]
	[ "${lines[1]}" = "$first_map" ]
	read -r inside outside count <<<"${lines[1]}"
	[ "$inside $count" = "0 65536" ]
	[ "$outside" -ge $((0x40000000)) ]
	[ "${lines[2]}" = 0 ]
	[ "${lines[3]}" = "$(readlink "/proc/$pid/ns/user")" ]
}

@test "profile from inside: default bridge network carries nothing, no capabilities, read-only root" {
	# The control: runc on the same bridge reaches the gateway (refused =
	# answered), over TCP and UDP (a DNS query).
	dk run --rm --runtime=runc "$IMAGE" sh -c "$(connect_probe "$BRIDGE_GW" 9); $(udp_probe "$BRIDGE_GW")"
	[ "${lines[0]}" = "nc: can't connect to remote host ($BRIDGE_GW): Connection refused" ]
	[ "${lines[1]}" = "nslookup: write to '$BRIDGE_GW': Connection refused" ]
	dk run --rm --runtime=moat "$IMAGE" sh -c "$(udp_probe "$BRIDGE_GW")"
	[ "$output" = "nslookup: can't connect to remote host ($BRIDGE_GW): Operation not permitted" ]

	# No --network none: docker moves a veth in between create and start.
	dk run --rm --runtime=moat --cap-add ALL -e GITHUB_TOKEN=hunter2 -e PLAIN=kept "$IMAGE" sh -c \
		"$PROBE; $(connect_probe "$BRIDGE_GW" 9); $(connect_probe 127.0.0.1 9); env"
	[ "$status" -eq 0 ]
	assert_profile
	# Credentials in the environment do not reach the container.
	[[ "$output" == *"PLAIN=kept"* ]]
	[[ "$output" != *hunter2* ]]
	# The gateway: refused by the guard; loopback works (refused by the kernel).
	[ "$(echo "$output" | grep -c 'Operation not permitted')" -eq 1 ]
	[[ "$output" == *"(127.0.0.1): Connection refused"* ]]
}

@test "profile from inside: nothing reaches a listener in the container over the bridge" {
	dk run -d --name listener --runtime=moat "$IMAGE" nc -ll -p 8080 -e echo reached
	[ "$status" -eq 0 ]
	ip=$(docker_cli inspect -f '{{.NetworkSettings.IPAddress}}' listener)
	[ -n "$ip" ]
	# From inside, over loopback, the listener answers.
	dk exec listener sh -c 'nc -w 2 127.0.0.1 8080 </dev/null'
	[ "$output" = reached ]
	# From the host, over the bridge, nothing comes back.
	run timeout 5 busybox nc -w 2 "$ip" 8080 </dev/null
	[ "$output" != reached ]
}

@test "docker run --privileged: moat's profile still holds (runc fails here)" {
	dk run --rm --runtime=moat --privileged "$IMAGE" sh -c "$PROBE"
	[ "$status" -eq 0 ]
	assert_profile
}

@test "docker run --network host: refused, or a fresh namespace with lo only" {
	dk run --rm --runtime=moat --network host "$IMAGE" sh -c "$PROBE"
	if [ "$status" -eq 0 ]; then
		[[ "$output" == *"ifaces: lo "* ]]
	else
		[[ "$stderr" == *"network namespace"* ]]
	fi
}

@test "moat-egress on the bridge: the private gateway is refused, the nameserver of resolv.conf answers on port 53 only, metadata refused" {
	# --dns: Docker writes the gateway (a private address) into the
	# container's resolv.conf, the file moat reads at create.
	dk run --rm --runtime=moat-egress --dns "$BRIDGE_GW" "$IMAGE" sh -c "grep nameserver /etc/resolv.conf
		$(connect_probe "$BRIDGE_GW" 9); $(connect_probe "$BRIDGE_GW" 53); $(udp_probe "$BRIDGE_GW")
		$(connect_probe 169.254.169.254 80); $(connect_probe 100.100.100.200 80); $(connect_probe 168.63.129.16 80)"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "nameserver $BRIDGE_GW" ]
	[ "${lines[1]}" = "nc: can't connect to remote host ($BRIDGE_GW): Operation not permitted" ]
	# Port 53 goes through (refused by the host: nothing listens there).
	[ "${lines[2]}" = "nc: can't connect to remote host ($BRIDGE_GW): Connection refused" ]
	[ "${lines[3]}" = "nslookup: write to '$BRIDGE_GW': Connection refused" ]
	[ "${lines[4]}" = "nc: can't connect to remote host (169.254.169.254): Operation not permitted" ]
	[ "${lines[5]}" = "nc: can't connect to remote host (100.100.100.200): Operation not permitted" ]
	[ "${lines[6]}" = "nc: can't connect to remote host (168.63.129.16): Operation not permitted" ]
	# Without --dns the gateway's port 53 is refused like the rest of it.
	dk run --rm --runtime=moat-egress "$IMAGE" sh -c "$(connect_probe "$BRIDGE_GW" 53)"
	[ "$output" = "nc: can't connect to remote host ($BRIDGE_GW): Operation not permitted" ]
}

@test "moat-egress on a Docker network with a public-looking subnet: the gateway answers, the embedded DNS (127.0.0.11) resolves, the host's private address does not; strict moat reaches nothing" {
	net="moat-eg$BATS_TEST_NUMBER-$$"
	dk network create --driver bridge --subnet 198.51.100.0/24 --gateway 198.51.100.1 \
		-o "com.docker.network.bridge.name=mbr$BATS_TEST_NUMBER-$$" "$net"
	[ "$status" -eq 0 ]
	dk run -d --name moat-egpeer --network "$net" --runtime=runc "$IMAGE" sleep 100
	[ "$status" -eq 0 ]
	# The host's address on the default bridge is private: through this
	# network's gateway it answers runc, and is refused under egress.
	dk run --rm --runtime=runc --network "$net" "$IMAGE" sh -c "$(connect_probe "$BRIDGE_GW" 9)"
	[ "$output" = "nc: can't connect to remote host ($BRIDGE_GW): Connection refused" ]
	dk run --rm --runtime=moat-egress --network "$net" "$IMAGE" sh -c "grep nameserver /etc/resolv.conf
		$(connect_probe 198.51.100.1 9); nslookup moat-egpeer 2>&1 | grep -c '^Address.*198\.51\.100\.'
		$(connect_probe "$BRIDGE_GW" 9)"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "nameserver 127.0.0.11" ]
	[ "${lines[1]}" = "nc: can't connect to remote host (198.51.100.1): Connection refused" ]
	[ "${lines[2]}" -ge 1 ]
	[ "${lines[3]}" = "nc: can't connect to remote host ($BRIDGE_GW): Operation not permitted" ]
	dk run --rm --runtime=moat --network "$net" "$IMAGE" sh -c "$(connect_probe 198.51.100.1 9)"
	[ "$output" = "nc: can't connect to remote host (198.51.100.1): Operation not permitted" ]
}
