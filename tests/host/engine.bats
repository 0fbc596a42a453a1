#!/usr/bin/env bats
# One engine on the standard host: containerd (Debian 12's 1.6) running
# moat through its runc v2 shim with the systemd cgroup driver, the
# `SystemdCgroup = true` of containerd's config, here set per container by
# `ctr run --runc-systemd-cgroup` (the same shim option). Runs in the
# check-host guest (tests/host/guest.sh).

IMAGE=docker.io/library/moatbox:latest

setup_file() {
	[ "$(cat /proc/1/comm)" = systemd ] || skip "systemd is not PID 1 here"
	systemctl start containerd
	local dir
	dir=$(mktemp -d /tmp/moatbox.XXXXXX)
	# The image: busybox-static and one symlink per applet, as an OCI layout.
	# (--install: one process for all links, where a loop of ln costs
	# minutes under TCG; its links name the binary's real path.)
	mkdir -p "$dir/root/bin" "$dir/root/usr/bin" "$dir/root/etc" "$dir/root/tmp" \
		"$dir/root/proc" "$dir/root/sys" "$dir/root/dev" "$dir/blobs/sha256"
	cp /bin/busybox "$dir/root$(readlink -f /bin/busybox)"
	ln -sf "$(readlink -f /bin/busybox)" "$dir/root/bin/busybox"
	/bin/busybox --install -s "$dir/root/bin"
	echo "root:x:0:0:root:/root:/bin/sh" >"$dir/root/etc/passwd"
	echo "root:x:0:" >"$dir/root/etc/group"
	tar -C "$dir/root" --sort=name --mtime=@0 --owner=0 --group=0 -cf "$dir/layer.tar" .
	local l ls c cs m ms
	l=$(sha256sum "$dir/layer.tar" | cut -d' ' -f1)
	ls=$(stat -c %s "$dir/layer.tar")
	mv "$dir/layer.tar" "$dir/blobs/sha256/$l"
	jq -cn --arg l "sha256:$l" '{architecture: "amd64", os: "linux",
		config: {Env: ["PATH=/bin"], Cmd: ["sh"]},
		rootfs: {type: "layers", diff_ids: [$l]}}' >"$dir/config"
	c=$(sha256sum "$dir/config" | cut -d' ' -f1)
	cs=$(stat -c %s "$dir/config")
	mv "$dir/config" "$dir/blobs/sha256/$c"
	jq -cn --arg c "sha256:$c" --argjson cs "$cs" --arg l "sha256:$l" --argjson ls "$ls" \
		'{schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
		  config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
		  layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l, size: $ls}]}' \
		>"$dir/manifest"
	m=$(sha256sum "$dir/manifest" | cut -d' ' -f1)
	ms=$(stat -c %s "$dir/manifest")
	mv "$dir/manifest" "$dir/blobs/sha256/$m"
	jq -cn --arg m "sha256:$m" --argjson ms "$ms" --arg n "$IMAGE" \
		'{schemaVersion: 2, manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json",
		  digest: $m, size: $ms, annotations: {"io.containerd.image.name": $n}}]}' >"$dir/index.json"
	echo '{"imageLayoutVersion":"1.0.0"}' >"$dir/oci-layout"
	tar -C "$dir" -cf "$dir/image.tar" oci-layout index.json blobs
	ctr images import "$dir/image.tar" >&2
	rm -rf "$dir"
}

teardown() {
	ctr task kill -s KILL "$ID" 2>/dev/null || true
	ctr task delete "$ID" 2>/dev/null || true
	ctr container delete "$ID" 2>/dev/null || true
}

setup() {
	ID="ctr-$BATS_TEST_NUMBER-$$"
	UNIT="moat-ctr-$ID.scope"
}

ctr_run() {
	ctr run --runc-binary "$MOAT" --runc-systemd-cgroup \
		--cgroup "system.slice:moat-ctr:$ID" "$@"
}

@test "containerd (systemd cgroup driver) runs moat: the profile holds, systemd knows the scope" {
	run ctr_run --rm "$IMAGE" "$ID" sh -c \
		'cat /proc/self/cgroup; grep CapEff /proc/self/status; touch /x 2>&1; nc -w 2 10.1.2.3 80 2>&1; true'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"0::/"* ]]
	[[ "$output" == *"CapEff:	0000000000000000"* ]]
	[[ "$output" == *"Read-only file system"* ]]
	[[ "$output" == *"not permitted"* ]]
	# --rm: the scope went with the container.
	[ "$(systemctl show -P ActiveState "$UNIT")" != active ]
	[ ! -d "/sys/fs/cgroup/system.slice/$UNIT" ]
}

@test "containerd: a detached task is in its transient scope with moat's limits; kill and delete leave nothing" {
	run ctr_run -d "$IMAGE" "$ID" sleep 300
	[ "$status" -eq 0 ]
	[ "$(systemctl show -P ControlGroup "$UNIT")" = "/system.slice/$UNIT" ]
	[ "$(systemctl show -P Delegate "$UNIT")" = yes ]
	[ "$(cat "/sys/fs/cgroup/system.slice/$UNIT/pids.max")" = 64 ]
	systemctl daemon-reload
	[ "$(cat "/sys/fs/cgroup/system.slice/$UNIT/pids.max")" = 64 ]
	[ "$(cat "/sys/fs/cgroup/system.slice/$UNIT/memory.max")" = $((512 * 1024 * 1024)) ]
	run ctr task exec --exec-id e1 "$ID" cat /proc/self/cgroup
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"0::/"* ]]
	run ctr task kill -s KILL "$ID"
	[ "$status" -eq 0 ]
	sleep 2
	run ctr task delete "$ID"
	[ "$status" -eq 0 ]
	run ctr container delete "$ID"
	[ "$status" -eq 0 ]
	[ ! -d "/sys/fs/cgroup/system.slice/$UNIT" ]
	[ "$(systemctl show -P ActiveState "$UNIT")" != active ]
}
