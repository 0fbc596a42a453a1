#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# Bring up Docker, Podman and containerd with moat registered, on a fresh
# Debian 12 machine (root; the Debian mirror is the only network needed):
#   - installs docker.io, containerd, podman and what the tests use, if missing
#   - builds a busybox-static image (no registry: a rootfs tarred into one
#     archive that docker load, podman load and ctr images import all take)
#   - starts a private containerd and dockerd in the background (pid files,
#     sockets and state under $ENG_RUN, data under $ENG_STATE), with moat
#     registered from the contrib/ configs
#   - loads the image into all three engines.
# Re-runnable; stop.sh undoes it. Usage: setup.sh [--no-install]
set -euo pipefail
. "$(dirname "$0")/env.sh"

install=1
for arg in "$@"; do
	case "$arg" in
	--no-install) install=0 ;;
	*) eng_die "unknown argument $arg" ;;
	esac
done

[ "$(id -u)" = 0 ] || eng_die "needs root"
[ -x "$MOAT_BUILT" ] || eng_die "no moat binary at $MOAT_BUILT (run make first)"

PACKAGES="docker.io containerd runc podman conmon containernetworking-plugins
iptables busybox-static jq bsdutils util-linux procps iproute2 curl bats
python3-grpcio python3-protobuf protobuf-compiler"

install_packages() {
	local missing="" p
	for p in $PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -n "$missing" ] || return 0
	eng_log "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	# shellcheck disable=SC2086
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >/dev/null
}

# The image: /bin/busybox plus a relative symlink per applet, a passwd and
# a group file. Each archive holds both a docker-archive (manifest.json) and
# an OCI image layout (oci-layout, index.json) over the same blobs.
build_layer() { # build_layer DIR: DIR/layer.tar
	local busybox=/bin/busybox rootfs="$1/rootfs"
	case "$("$busybox" 2>&1 || true)" in
	BusyBox*) ;;
	*) eng_die "$busybox is not busybox (install busybox-static)" ;;
	esac
	# Static: the image has no libc.
	if LC_ALL=C readelf -l "$busybox" 2>/dev/null | grep -q 'Requesting program interpreter'; then
		eng_die "$busybox is dynamically linked (install busybox-static)"
	fi
	mkdir -p "$rootfs"/{bin,dev,etc,proc,sys,tmp,root,run,var/tmp,usr/bin}
	chmod 1777 "$rootfs/tmp" "$rootfs/var/tmp"
	cp "$busybox" "$rootfs/bin/busybox"
	for applet in $("$busybox" --list); do
		[ "$applet" = busybox ] || ln -s busybox "$rootfs/bin/$applet"
	done
	ln -s ../../bin/busybox "$rootfs/usr/bin/env"
	printf 'root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1:daemon:/:/bin/false\nnobody:x:65534:65534:nobody:/:/bin/false\n' \
		>"$rootfs/etc/passwd"
	printf 'root:x:0:\ndaemon:x:1:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
	: >"$rootfs/etc/hostname"
	: >"$rootfs/etc/hosts"
	: >"$rootfs/etc/resolv.conf"
	(cd "$rootfs" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
		-cf "$1/layer.tar" -- *)
	rm -rf "$rootfs"
}

# blob DIR FILE: moves FILE into DIR/blobs/sha256, prints "sha256:HEX SIZE".
blob() {
	local hex size
	hex=$(sha256sum "$2" | cut -d' ' -f1)
	size=$(stat -c %s "$2")
	mkdir -p "$1/blobs/sha256"
	mv "$2" "$1/blobs/sha256/$hex"
	echo "sha256:$hex $size"
}

# write_archive DIR NAME CMD_JSON OUT: an image NAME of DIR/layer.tar.
write_archive() {
	local dir="$1" name="$2" cmd="$3" out="$4" work layer layer_size config config_size manifest manifest_size
	work="$dir/${name//[^a-z]/_}"
	mkdir -p "$work"
	cp "$dir/layer.tar" "$work/layer.tar"
	read -r layer layer_size < <(blob "$work" "$work/layer.tar")
	jq -cn --arg layer "$layer" --argjson cmd "$cmd" '{architecture: "amd64", os: "linux",
		created: "1970-01-01T00:00:00Z",
		config: {Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
		         Cmd: $cmd, WorkingDir: "/"},
		rootfs: {type: "layers", diff_ids: [$layer]}}' >"$work/config.json"
	read -r config config_size < <(blob "$work" "$work/config.json")
	jq -cn --arg c "$config" --argjson cs "$config_size" --arg l "$layer" --argjson ls "$layer_size" \
		'{schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
		  config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
		  layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l, size: $ls}]}' \
		>"$work/manifest"
	read -r manifest manifest_size < <(blob "$work" "$work/manifest")
	jq -cn --arg m "$manifest" --argjson ms "$manifest_size" --arg name "$name" \
		'{schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
		  manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $m,
		               size: $ms, annotations: {"io.containerd.image.name": $name,
		               "org.opencontainers.image.ref.name": ($name | sub(".*:"; ""))}}]}' \
		>"$work/index.json"
	echo '{"imageLayoutVersion":"1.0.0"}' >"$work/oci-layout"
	jq -cn --arg c "$config" --arg l "$layer" --arg name "$name" \
		'[{Config: ("blobs/sha256/" + ($c | ltrimstr("sha256:"))), RepoTags: [$name],
		   Layers: [("blobs/sha256/" + ($l | ltrimstr("sha256:")))]}]' >"$work/manifest.json"
	tar -C "$work" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
		-cf "$out.new" oci-layout index.json manifest.json blobs
	mv "$out.new" "$out"
	eng_log "image $name: $out (layer $layer)"
}

# The test image (sh by default), and the CRI sandbox ("pause") image: the
# same layer, sleeping.
build_images() {
	local dir
	dir="$(mktemp -d "$ENG_STATE/image.XXXXXX")"
	build_layer "$dir"
	write_archive "$dir" "$IMAGE" '["sh"]' "$IMAGE_TAR"
	write_archive "$dir" "$PAUSE_IMAGE" '["sleep", "2147483647"]' "$PAUSE_TAR"
	rm -rf "$dir"
}

# The networks are ours: Docker's default bridge and the CRI pod network
# are bridges created here (and removed by stop.sh); no iptables rules, no
# ip_forward change on the host.
make_bridge() { # make_bridge NAME CIDR
	ip link show "$1" >/dev/null 2>&1 && return 0
	ip link add "$1" type bridge
	ip addr add "$2" dev "$1"
	ip link set "$1" up
	echo "$1" >>"$ENG_RUN/created-bridges"
}

# The CRI plugin's pod network: CNI's bridge plugin on our bridge, not as
# the gateway (which would turn on ip_forward), addresses from host-local
# kept in our run dir.
write_cni_config() {
	mkdir -p "$ENG_RUN/cni" "$ENG_RUN/cni-ipam"
	jq -n --arg br "$POD_BRIDGE" --arg subnet "$POD_SUBNET" --arg gw "$POD_GW" \
		--arg data "$ENG_RUN/cni-ipam" '{cniVersion: "0.4.0", name: "moat-pods",
		plugins: [{type: "bridge", bridge: $br, isGateway: false, ipMasq: false,
		           ipam: {type: "host-local", dataDir: $data,
		                  ranges: [[{subnet: $subnet, rangeStart: ($subnet | sub("0/24$"; "10")),
		                             gateway: $gw}]]}}]}' >"$ENG_RUN/cni/10-moat-pods.conflist"
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
docker_has_runtime() { docker_cli info --format '{{json .Runtimes}}' | jq -e --arg r "$1" 'has($r)'; }

# The argv logger, named moat, for tests that check how an engine calls moat.
install_logger() {
	mkdir -p "$ENG_RUN/logger"
	sed -e "s|@LOG@|$ARGV_LOG|" -e "s|@MOAT@|$MOAT|" "$ENGINES_DIR/argv-logger.sh" \
		>"$ENG_RUN/logger/moat"
	chmod 755 "$ENG_RUN/logger/moat"
}

# containerd: a private root, state dir and socket, a node-like CRI setup
# (runc the default handler) and, appended, contrib/containerd-config.toml
# with the binary's path made ours: the moat handler a RuntimeClass selects.
start_containerd() {
	cat >"$CONTAINERD_CONFIG" <<-EOF
		version = 2
		root = "$ENG_STATE/containerd"
		state = "$ENG_RUN/containerd"
		disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
		  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
		[grpc]
		  address = "$CONTAINERD_SOCK"
		[ttrpc]
		  address = "$CONTAINERD_SOCK.ttrpc"
		[metrics]
		  address = ""
		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "$PAUSE_IMAGE"
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    default_runtime_name = "runc"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "/usr/lib/cni"
		    conf_dir = "$ENG_RUN/cni"
		[plugins."io.containerd.internal.v1.opt"]
		  path = "$ENG_STATE/containerd-opt"

	EOF
	sed "s|/usr/local/bin/moat|$MOAT|" "$REPO_DIR/contrib/containerd-config.toml" >>"$CONTAINERD_CONFIG"
	# The egress handler the contrib file shows in comments, with its wrapper.
	printf '#!/bin/sh\nexec %s --profile egress "$@"\n' "$MOAT" >"$ENG_RUN/moat-egress"
	chmod 755 "$ENG_RUN/moat-egress"
	sed -n '/^# \[plugins.*runtimes\.moat-egress\]/,$p' "$REPO_DIR/contrib/containerd-config.toml" |
		sed -e 's/^# \{0,1\}//' -e "s|/usr/local/libexec/moat/moat-egress|$ENG_RUN/moat-egress|" \
			>>"$CONTAINERD_CONFIG"
	if alive "$ENG_RUN/containerd.pid"; then
		eng_log "containerd already running (pid $(cat "$ENG_RUN/containerd.pid"))"
		return 0
	fi
	# The shims put their sockets under /run/containerd/s whatever the
	# config says: note whether that directory was ours, for stop.sh.
	[ -e /run/containerd ] || touch "$ENG_RUN/created-run-containerd"
	mkdir -p "$ENG_RUN/containerd" "$ENG_RUN/cni"
	setsid containerd --config "$CONTAINERD_CONFIG" >>"$ENG_LOG/containerd.log" 2>&1 </dev/null &
	echo $! >"$ENG_RUN/containerd.pid"
	wait_until 60 ctr --address "$CONTAINERD_SOCK" version ||
		eng_die "containerd did not come up; see $ENG_LOG/containerd.log"
	eng_log "containerd up (pid $(cat "$ENG_RUN/containerd.pid"), $CONTAINERD_SOCK)"
}

# dockerd: daemon.json is contrib/docker-daemon.json with the binary's path
# made ours, plus this instance's private paths and bridge.
start_dockerd() {
	jq --arg moat "$MOAT" --arg data "$ENG_STATE/docker" --arg exec "$ENG_RUN/docker" \
		--arg pid "$ENG_RUN/dockerd.own.pid" --arg sock "unix://$DOCKER_SOCK" \
		--arg containerd "$CONTAINERD_SOCK" --arg bridge "$BRIDGE" --arg logger "$ENG_RUN/logger/moat" \
		--arg cgroup "$CGROUP_DOCKER" '
		.runtimes |= map_values(.path = $moat)
		| .runtimes["moat-logged"] = {path: $logger}
		| . + {"data-root": $data, "exec-root": $exec, "pidfile": $pid, "hosts": [$sock],
		       "containerd": $containerd, "bridge": $bridge, "iptables": false,
		       "ip-forward": false, "ip-masq": false, "userland-proxy": false,
		       "storage-driver": "overlay2", "default-runtime": "runc",
		       "deprecated-key-path": ($data + "-key.json"), "cgroup-parent": $cgroup}' \
		"$REPO_DIR/contrib/docker-daemon.json" >"$DOCKER_CONFIG"
	if alive "$ENG_RUN/dockerd.pid"; then
		# SIGHUP reloads the runtimes of daemon.json.
		kill -HUP "$(cat "$ENG_RUN/dockerd.pid")"
		wait_until 30 docker_has_runtime moat-logged || eng_die "dockerd did not reload $DOCKER_CONFIG"
		eng_log "dockerd already running (pid $(cat "$ENG_RUN/dockerd.pid")): reloaded"
		return 0
	fi
	setsid dockerd --config-file "$DOCKER_CONFIG" >>"$ENG_LOG/dockerd.log" 2>&1 </dev/null &
	echo $! >"$ENG_RUN/dockerd.pid"
	wait_until 90 docker_cli version || eng_die "dockerd did not come up; see $ENG_LOG/dockerd.log"
	eng_log "dockerd up (pid $(cat "$ENG_RUN/dockerd.pid"), $DOCKER_SOCK)"
}

# Podman has no daemon: containers.conf is contrib/containers.conf with the
# binary's path made ours (podman_cli in env.sh points CONTAINERS_CONF at it).
write_podman_conf() {
	sed "s|/usr/local/bin/moat|$MOAT|" "$REPO_DIR/contrib/containers.conf" >"$PODMAN_CONF"
	cat >>"$PODMAN_CONF" <<-EOF

		[network]
		network_config_dir = "$ENG_RUN/podman-networks"
	EOF
	mkdir -p "$ENG_RUN/podman-networks"
	grep -v '^runtime_supports_json' "$PODMAN_CONF" >"$ENG_RUN/containers-nojson.conf"
}

[ $install = 1 ] && install_packages
mkdir -p "$ENG_RUN/bin" "$ENG_STATE" "$ENG_LOG"
MOAT="$ENG_RUN/bin/moat"
cp "$MOAT_BUILT" "$MOAT_BIN.new"
mv "$MOAT_BIN.new" "$MOAT_BIN"
# moat-dl, when moat is linked statically: it is looked for beside moat.
if [ -e "$(dirname "$MOAT_BUILT")/moat-dl" ]; then
	cp "$(dirname "$MOAT_BUILT")/moat-dl" "$ENG_RUN/bin/moat-dl.new"
	mv "$ENG_RUN/bin/moat-dl.new" "$ENG_RUN/bin/moat-dl"
fi
# The engines here keep their state in private roots, not where moat looks
# by default (/var/lib/docker ...): an operator says so with engine_roots
# (G5: binds are writable only in the engines' per-container and volume
# trees). The engines call $MOAT, which passes this config unless the
# caller gives one (contract.bats does).
jq -n --arg docker "$ENG_STATE/docker" --arg pg "$ENG_STATE/podman" --arg pr "$ENG_RUN/podman" \
	--arg cg "$ENG_STATE/containerd" --arg cr "$ENG_RUN/containerd" '
	{"// written by": "tests/bats/engines/setup.sh",
	 "engine_roots": {"docker": [$docker], "podman": [$pg, $pr], "containerd": [$cg, $cr]}}' >"$MOAT_ENGINE_CONFIG"
cat >"$MOAT.new" <<WRAPPER
#!/bin/sh
for a in "\$@"; do
	case "\$a" in --config | --config=*) exec "$MOAT_BIN" "\$@" ;; esac
done
exec "$MOAT_BIN" --config "$MOAT_ENGINE_CONFIG" "\$@"
WRAPPER
chmod 755 "$MOAT.new"
mv "$MOAT.new" "$MOAT"
build_images
make_bridge "$BRIDGE" "$BRIDGE_CIDR"
make_bridge "$POD_BRIDGE" "$POD_GW/24"
write_cni_config
install_logger
start_containerd
start_dockerd
write_podman_conf

eng_log "loading $IMAGE into docker, podman and containerd ($CTR_NS)"
docker_cli load -q -i "$IMAGE_TAR" >&2
podman_cli load -q -i "$IMAGE_TAR" >&2
ctr_cli images import "$IMAGE_TAR" >&2
ctr --address "$CONTAINERD_SOCK" -n k8s.io images import "$PAUSE_TAR" >&2
ctr --address "$CONTAINERD_SOCK" -n k8s.io images import "$IMAGE_TAR" >&2
