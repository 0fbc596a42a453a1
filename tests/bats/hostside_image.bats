#!/usr/bin/env bats
# The host side of --image (issue 36, attack 5): moat unpacks an image as
# host root, and the image is the payload's to write (a layout or a `docker
# save` archive left in a workdir, then run by the operator). Nothing it
# holds may make moat create, write or link anything outside the cache; its
# setuid bits and capabilities do not survive; its unpacked size and
# entries, and the cache, are bounded (the operator config's
# image_max_bytes, image_max_entries, image_cache_max_bytes).

load helpers

setup() {
	setup_bundle
	HOST="$BUNDLE/host"
	mkdir -p "$HOST"
	echo original >"$HOST/victim"
}

teardown() {
	local s
	for s in $(ls "$ROOT/.session" 2>/dev/null); do
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session rm "$s" || true
	done
	teardown_bundle
}

# moat sandbox ARGS: stdout in $output and $lines, stderr in $stderr.
sb() {
	moat_sep sandbox "$@"
	mapfile -t lines <"$BUNDLE/.moat-out"
}

# The operator config with more keys ($1: a jq object).
config_with() {
	jq -c ". + $1" "$MOAT_CONFIG" >"$MOAT_CONFIG.new"
	mv "$MOAT_CONFIG.new" "$MOAT_CONFIG"
}

# Nothing of an unpack left in the cache: no .tmp-/.trash- directory.
no_partial() {
	[ -z "$(ls -A "$IMAGE_CACHE" 2>/dev/null | grep '^\.' || true)" ]
}

# mkimg OUT LAYERS [docker]: an OCI layout (or, with "docker", a docker save
# archive) whose layers are LAYERS, a JSON list of lists of entries:
# {"n": name, "t": file|dir|sym|hard|fifo|chr, "m": mode, "d": data,
# "z": that many zero bytes, "l": link target, "x": {xattr: value}}, or the
# string "base" (busybox, sh, cat, ls, stat, test, etc/passwd). A layer is
# gzipped when its first entry is {"gzip": true}.
mkimg() {
	python3 - "$BUSYBOX" "$@" <<'PY'
import gzip, hashlib, io, json, os, sys, tarfile
busybox, out, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
docker = len(sys.argv) > 4 and sys.argv[4] == "docker"
types = {"file": tarfile.REGTYPE, "dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE,
         "hard": tarfile.LNKTYPE, "fifo": tarfile.FIFOTYPE, "chr": tarfile.CHRTYPE}
def base():
    e = [{"n": "bin", "t": "dir", "m": 0o755},
         {"n": "bin/busybox", "m": 0o755, "d": open(busybox, "rb").read()},
         {"n": "etc", "t": "dir", "m": 0o755},
         {"n": "etc/passwd", "d": b"root:x:0:0:root:/root:/bin/sh\n"}]
    return e + [{"n": "bin/" + a, "t": "sym", "l": "busybox"}
                for a in ("sh", "cat", "ls", "stat", "test", "echo", "true")]
def tar(entries):
    gz = entries and entries[0] == {"gzip": True}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for e in entries[1:] if gz else entries:
            ti = tarfile.TarInfo(e["n"]); ti.type = types[e.get("t", "file")]
            ti.mode = e.get("m", 0o644); ti.linkname = e.get("l", "")
            data = e.get("d", b"\0" * e.get("z", 0))
            data = data.encode() if isinstance(data, str) else data
            ti.size = len(data) if ti.type == tarfile.REGTYPE else 0
            if ti.type == tarfile.CHRTYPE: ti.devmajor, ti.devminor = 1, 3
            ti.pax_headers = {"SCHILY.xattr." + k: v for k, v in e.get("x", {}).items()}
            t.addfile(ti, io.BytesIO(data) if ti.size else None)
    raw = buf.getvalue()
    return (gzip.compress(raw, mtime=0) if gz else raw), gz
layers = [tar(base() if l == "base" else l) for l in spec]
if docker:
    # docker save's layers are plain tars: the whole archive is gzipped
    # instead.
    gzipped = any(gz for _, gz in layers)
    layers = [(gzip.decompress(b) if gz else b, False) for b, gz in layers]
cfg = json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                  "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(b).hexdigest() for b, _ in layers]}}).encode()
if docker:
    # docker save: manifest.json, the config, layer tars; the whole tar
    # gzipped when the first layer is.
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        def add(name, data):
            ti = tarfile.TarInfo(name); ti.size = len(data); t.addfile(ti, io.BytesIO(data))
        add("cfg.json", cfg)
        for i, (b, _) in enumerate(layers):
            add(f"l{i}.tar", b)
        add("manifest.json", json.dumps([{"Config": "cfg.json", "Layers": [f"l{i}.tar" for i in range(len(layers))]}]).encode())
    raw = buf.getvalue()
    open(out, "wb").write(gzip.compress(raw, mtime=0) if gzipped else raw)
    sys.exit(0)
def blob(b):
    d = hashlib.sha256(b).hexdigest()
    os.makedirs(f"{out}/blobs/sha256", exist_ok=True)
    open(f"{out}/blobs/sha256/{d}", "wb").write(b)
    return {"digest": "sha256:" + d, "size": len(b)}
mt = "application/vnd.oci.image.layer.v1.tar"
m = json.dumps({"schemaVersion": 2, "config": dict(mediaType="application/vnd.oci.image.config.v1+json", **blob(cfg)),
                "layers": [dict(mediaType=mt + ("+gzip" if gz else ""), **blob(b)) for b, gz in layers]}).encode()
json.dump({"schemaVersion": 2, "manifests": [dict(mediaType="application/vnd.oci.image.manifest.v1+json", **blob(m))]},
          open(f"{out}/index.json", "w"))
open(f"{out}/oci-layout", "w").write('{"imageLayoutVersion":"1.0.0"}')
PY
}

@test "hostside image: a layout whose var is a link to a host directory: moat makes nothing there (var/tmp is made inside the root)" {
	local target
	# Absolute and relative: both resolve inside the image's root, where
	# the image has no such directory: no /var/tmp to mount on, refused.
	for target in "$HOST" "../../../../../../../..$HOST"; do
		rm -rf "$BUNDLE/img" "$IMAGE_CACHE"
		mkimg "$BUNDLE/img" '["base", [{"n": "var", "t": "sym", "l": "'"$target"'"}]]'
		sb --image "$BUNDLE/img" -- true
		[ "$(ls -A "$HOST")" = victim ]
		[ "$(cat "$HOST/victim")" = original ]
		[ "$status" -eq 1 ]
		[ "$(echo "$stderr" | wc -l)" -eq 1 ]
		[[ "$stderr" == "moat: sandbox sandbox-"*": mount /var/tmp: resolving /var/tmp in the rootfs: No such file or directory" ]]
	done
	# A var -> /etc of the image's own: its /tmp mount point is /etc/tmp of
	# the image, where the container's init resolves /var/tmp too.
	rm -rf "$BUNDLE/img" "$IMAGE_CACHE"
	mkimg "$BUNDLE/img" '["base", [{"n": "var", "t": "sym", "l": "/etc"}]]'
	sb --image "$BUNDLE/img" -- sh -c 'echo x >/var/tmp/f && cat /var/tmp/f'
	[ "$status" -eq 0 ]
	[ "$output" = x ]
	[ -d "$IMAGE_CACHE"/*/rootfs/etc/tmp ]
	[ ! -e /etc/tmp ]
}

@test "hostside image: a docker-archive whose blobs is a link to a host directory is refused; nothing made there" {
	mkimg "$BUNDLE/img.tar" '["base"]' docker
	ln -s "$HOST" "$BUNDLE/blobs"
	tar -C "$BUNDLE" -rf "$BUNDLE/img.tar" blobs
	sb --image "$BUNDLE/img.tar" -- true
	ls -lR "$HOST" >&2
	[ "$(ls -A "$HOST")" = victim ]
	[ "$status" -eq 1 ]
	[ "$(echo "$stderr" | wc -l)" -eq 1 ]
	[[ "$stderr" == "moat: sandbox: image $BUNDLE/img.tar: image archive: blobs: "* ]]
	no_partial
}

@test "hostside image: a layer cannot write, link or remove through an earlier layer's link" {
	# A file and a directory through the link: libarchive replaces the link
	# by a directory of the root; the whiteouts through it remove nothing.
	mkimg "$BUNDLE/img" '["base", [{"n": "lnk", "t": "sym", "l": "'"$HOST"'"}],
		[{"n": "lnk/pwned", "d": "x"}, {"n": "lnk/sub", "t": "dir"}],
		[{"n": "lnk2", "t": "sym", "l": "'"$HOST"'"}], [{"n": "lnk2/.wh.victim"}, {"n": "lnk2/.wh..wh..opq"}]]'
	sb --image "$BUNDLE/img" -- sh -c 'cat /lnk/pwned; echo; ls /lnk'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = x ]
	[ "$(ls -A "$HOST")" = victim ]
	# A hard link through a link: refused, the host file neither linked
	# into the cache nor written.
	local via
	for via in lnk/victim lnk/../lnk/victim; do
		rm -rf "$BUNDLE/img"
		mkimg "$BUNDLE/img" '["base", [{"n": "lnk", "t": "sym", "l": "'"$HOST"'"}],
			[{"n": "h", "t": "hard", "l": "'"$via"'"}]]'
		sb --image "$BUNDLE/img" -- cat /h
		[ "$status" -eq 1 ]
		[ "$(echo "$stderr" | wc -l)" -eq 1 ]
		[[ "$stderr" == "moat: sandbox: image: layer 2: "* ]]
		[ "$(stat -c %h "$HOST/victim")" = 1 ]
		[ "$(cat "$HOST/victim")" = original ]
		no_partial
	done
	# A directory's mode is set when the layer is done (libarchive's
	# fixups): the directory replaced by a link meanwhile, the host
	# directory it points to keeps its mode.
	chmod 755 "$HOST"
	rm -rf "$BUNDLE/img"
	mkimg "$BUNDLE/img" '["base", [{"n": "d", "t": "dir", "m": 511}, {"n": "d", "t": "sym", "l": "'"$HOST"'"}]]'
	sb --image "$BUNDLE/img" -- true
	[ "$(stat -c %a "$HOST")" = 755 ]
	# A hard link to a link the image made is that link (never its target).
	rm -rf "$BUNDLE/img"
	mkimg "$BUNDLE/img" '["base", [{"n": "lnk", "t": "sym", "l": "'"$HOST/victim"'"}],
		[{"n": "h", "t": "hard", "l": "lnk"}]]'
	sb --image "$BUNDLE/img" -- sh -c 'test -L /h && echo link'
	[ "$(stat -c %h "$HOST/victim")" = 1 ]
	[ "$(cat "$HOST/victim")" = original ]
}

@test "hostside image: setuid and setgid bits, file capabilities and device nodes do not survive the unpack" {
	mkimg "$BUNDLE/img" '["base", [{"n": "suid", "m": 2541, "d": "#!/bin/sh\n"}, {"n": "sgid", "m": 1517, "d": "#!/bin/sh\n"},
		{"n": "cap", "m": 493, "d": "x", "x": {"security.capability": "\u0001\u0000\u0000\u0002\u0000\u0020\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000"}},
		{"n": "mem", "t": "chr", "m": 438}], [{"n": "suid2", "t": "hard", "l": "cap", "m": 3565}]]'
	sb --image "$BUNDLE/img" -- stat -c '%n %a' /suid /sgid /cap /suid2
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "/suid 755" ]
	[ "${lines[1]}" = "/sgid 755" ]
	[ "${lines[2]}" = "/cap 755" ]
	[ "${lines[3]}" = "/suid2 755" ]
	[[ "$stderr" == *"left out 1 device nodes and sockets, stripped setuid/setgid from 3 files"* ]]
	local root
	root="$(echo "$IMAGE_CACHE"/*/rootfs)"
	[ ! -e "$root/mem" ]
	[ -z "$(find "$root" -perm /6000)" ]
	python3 -c 'import os, sys; sys.exit("security.capability" in os.listxattr(sys.argv[1]))' "$root/cap"
}

@test "hostside image: a layer over image_max_bytes or image_max_entries fails with one line naming the bound, nothing left in the cache" {
	config_with '{"image_max_bytes": "4M", "image_max_entries": 100}'
	# 64 MiB of zeros, 64 KiB gzipped.
	mkimg "$BUNDLE/bomb" '["base", [{"gzip": true}, {"n": "zeros", "z": 67108864}]]'
	[ "$(du -sk "$BUNDLE/bomb" | cut -f1)" -lt 3072 ]
	sb --image "$BUNDLE/bomb" -- true
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: sandbox: image $BUNDLE/bomb: unpacked size over image_max_bytes (4194304)" ]
	no_partial
	[ -z "$(ls -A "$IMAGE_CACHE")" ]
	# The same as a docker save archive (the archive itself is gzipped).
	mkimg "$BUNDLE/bomb.tar" '["base", [{"gzip": true}, {"n": "zeros", "z": 67108864}]]' docker
	sb --image "$BUNDLE/bomb.tar" -- true
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: sandbox: image $BUNDLE/bomb.tar: unpacked size over image_max_bytes (4194304)" ]
	[ -z "$(ls -A "$IMAGE_CACHE")" ]
	# Entries: 150 empty files.
	local many='[' i
	for i in $(seq 150); do many+="{\"n\": \"f$i\"},"; done
	mkimg "$BUNDLE/many" '["base", '"${many%,}"']]'
	sb --image "$BUNDLE/many" -- true
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: sandbox: image $BUNDLE/many: more entries than image_max_entries (100)" ]
	[ -z "$(ls -A "$IMAGE_CACHE")" ]
	# Within the bounds: unpacked.
	mkimg "$BUNDLE/ok" '["base", [{"n": "small", "z": 1024}]]'
	sb --image "$BUNDLE/ok" -- stat -c %s /small
	[ "$status" -eq 0 ]
	[ "$output" = 1024 ]
}

@test "hostside image: the cache is bounded by image_cache_max_bytes: least recently used images go first, never one in use" {
	# busybox is about 2 MB: three images fit in 7 MiB, not four.
	config_with '{"image_cache_max_bytes": "7M"}'
	local n
	for n in a b c d; do
		mkimg "$BUNDLE/$n" '["base", [{"n": "name", "d": "'$n'"}]]'
	done
	sb --image "$BUNDLE/a" -- cat /name
	[ "$output" = a ]
	sb --image "$BUNDLE/b" -- cat /name
	sb --image "$BUNDLE/c" -- cat /name
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# a used again: b is now the least recently used.
	sb --image "$BUNDLE/a" -- cat /name
	[ "$output" = a ]
	sb --image "$BUNDLE/d" -- cat /name
	[ "$status" -eq 0 ]
	[ "$output" = d ]
	[[ "$stderr" == "moat: sandbox: image cache: removed 1 least recently used images ("*" bytes) to stay within image_cache_max_bytes" ]]
	sb --list-cache
	[ "${#lines[@]}" -eq 3 ]
	[[ "$output" != *"	$BUNDLE/b"* ]]
	[[ "$output" == *"	$BUNDLE/a"* && "$output" == *"	$BUNDLE/c"* && "$output" == *"	$BUNDLE/d"* ]]
	# An image alone over the bound: refused, nothing evicted for it.
	config_with '{"image_cache_max_bytes": "1M"}'
	sb --image "$BUNDLE/b" -- true
	[ "$status" -eq 1 ]
	[ "$stderr" = "moat: sandbox: image $BUNDLE/b: unpacked size over image_cache_max_bytes (1048576)" ]
	sb --list-cache
	[ "${#lines[@]}" -eq 3 ]
	no_partial
	# Room for one: a session holds a; b cannot evict it.
	config_with '{"image_cache_max_bytes": "3M"}'
	local id
	id="$("$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session create --image "$BUNDLE/a" </dev/null)"
	[ -n "$id" ]
	sb --image "$BUNDLE/b" -- true
	[ "$status" -eq 1 ]
	[[ "$stderr" == "moat: sandbox: image $BUNDLE/b: image cache over image_cache_max_bytes (3145728): images in use hold "*" bytes" ]]
	[ "$(echo "$stderr" | wc -l)" -eq 1 ]
	# Nothing was removed for it.
	sb --list-cache
	[ "${#lines[@]}" -eq 3 ]
	[[ "$output" == *"in-use	$BUNDLE/a"* ]]
	no_partial
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" session rm "$id"
	# Once the session is gone, a is evicted for b.
	sb --image "$BUNDLE/b" -- cat /name
	[ "$output" = b ]
	sb --list-cache
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"unused	$BUNDLE/b" ]]
}

@test "hostside image: the bounds are operator settings with documented defaults" {
	echo '{}' >"$BUNDLE/empty.json"
	run "$MOAT" --config "$BUNDLE/empty.json" profile show
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r .image_max_bytes)" = $((16 << 30)) ]
	[ "$(echo "$output" | jq -r .image_max_entries)" = 1000000 ]
	[ "$(echo "$output" | jq -r .image_cache_max_bytes)" = $((64 << 30)) ]
	echo '{"image_max_bytes": "2G", "image_max_entries": 5000, "image_cache_max_bytes": 123456789}' >"$BUNDLE/set.json"
	run "$MOAT" --config "$BUNDLE/set.json" profile show
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r .image_max_bytes)" = $((2 << 30)) ]
	[ "$(echo "$output" | jq -r .image_max_entries)" = 5000 ]
	[ "$(echo "$output" | jq -r .image_cache_max_bytes)" = 123456789 ]
	echo '{"image_max_entries": 0}' >"$BUNDLE/bad.json"
	run "$MOAT" --config "$BUNDLE/bad.json" profile show
	[ "$status" -eq 1 ]
	[[ "$output" == *"image_max_entries: expected an integer from 1 to "* ]]
	# The example config documents them and loads.
	run "$MOAT" --config "$BATS_TEST_DIRNAME/../../contrib/moat-config.example.json" profile show
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r .image_max_entries)" = 1000000 ]
}

@test "hostside image: --image that is neither a directory nor a file (a FIFO) is refused at once" {
	mkfifo "$BUNDLE/fifo"
	status=0
	timeout 20 "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" sandbox --image "$BUNDLE/fifo" -- true \
		>/dev/null 2>"$BUNDLE/err" </dev/null || status=$?
	cat "$BUNDLE/err" >&2
	[ "$status" -eq 1 ]
	[ "$(cat "$BUNDLE/err")" = "moat: sandbox: image $BUNDLE/fifo: neither a directory nor a file" ]
}
