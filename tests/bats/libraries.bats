#!/usr/bin/env bats
# moat maps only the libraries a verb uses: the image unpacker's libarchive
# (with libxml2, ICU, nettle, lz4, zstd ...) and the systemd driver's sd-bus
# (with gcrypt) are loaded with dlopen where they are needed, not by every
# verb an engine calls. A statically linked moat (make's default, STATIC=1)
# maps no shared object at all: moat-dl, the same program linked
# dynamically, does what needs one (lib/dynlib.h).

load helpers

# Loaded on first use only, never at start: by image work and the systemd
# driver ...
ON_DEMAND_RE='lib(archive|systemd|xml2|icu[a-z]*|gcrypt|lz4|zstd|bz2|acl)\.so'
# ... and by the verbs that digest config.json (create, run, delete):
# nettle. libmount (with libblkid, libselinux, pcre2) is never loaded: moat
# parses mount options with a table of its own.
CREATE_RE='lib(mount|blkid|selinux|pcre2-8|nettle)\.so'

setup() {
	requires_root
	setup_bundle
	c1="lib$BATS_TEST_NUMBER-$$"
}

teardown() {
	teardown_bundle
}

# Is $MOAT statically linked (no program interpreter)?
moat_static() {
	! readelf -lW "$MOAT" | grep -q INTERP
}

@test "the binary links none of the on-demand libraries" {
	local bin=$MOAT
	# A static moat links nothing; its moat-dl is what links libc.
	! moat_static || bin=$(dirname "$MOAT")/moat-dl
	run ldd "$bin"
	[ "$status" -eq 0 ]
	echo "$output" >&2
	echo "$output" | grep -q 'libc\.so'
	! echo "$output" | grep -E "$ON_DEMAND_RE|$CREATE_RE"
}

@test "a running moat run maps none of them, nor libmount; state not even nettle" {
	update_config '.process.args = ["sleep", "100"]'
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" run -b "$BUNDLE" "$c1" \
		</dev/null >"$BUNDLE/run.out" 2>&1 &
	runner=$!
	wait_status "$c1" running
	maps=$(cat "/proc/$runner/maps")
	moat kill "$c1" KILL
	wait "$runner" || true
	# Not `! grep`: bats' errexit does not see a negated command fail.
	[ -z "$(echo "$maps" | grep -E "$ON_DEMAND_RE")" ]
	[ -z "$(echo "$maps" | grep -E 'lib(mount|blkid|pcre2-8)\.so')" ]
	if moat_static; then
		# Not even libc: no shared object, no dynamic loader.
		[ -z "$(echo "$maps" | grep -E '\.so(\.[0-9]+)*$')" ]
		return
	fi
	# The dynamic loader's own list, for the verb engines call most.
	LD_DEBUG=files "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" state "$c1" \
		>/dev/null 2>"$BUNDLE/ld.log" || true
	grep -q 'file=libc.so' "$BUNDLE/ld.log"
	! grep -E "file=($ON_DEMAND_RE|$CREATE_RE)" "$BUNDLE/ld.log"
}

@test "moat-dl is the same moat, linked dynamically" {
	moat_static || skip "moat is linked dynamically (STATIC=0): no moat-dl"
	local dl
	dl=$(dirname "$MOAT")/moat-dl
	readelf -lW "$dl" | grep -q INTERP
	[ "$("$dl" --version)" = "$("$MOAT" --version)" ]
	# Its systemd calls, as a static moat makes them: nothing to do for a
	# cgroup no systemd unit has; a bad call refused in one line.
	run "$dl" _systemd stop /moat/no-such-$$.scope
	[ "$status" -eq 3 ]
	run "$dl" _systemd register /moat/x.scope
	[ "$status" -eq 1 ]
	[[ "$output" == "usage: moat-dl _systemd register CGROUP"* ]]
}

@test "a static moat without moat-dl: --image is refused in one line, --rootfs runs" {
	moat_static || skip "moat is linked dynamically (STATIC=0): no moat-dl"
	[ ! -e /usr/local/libexec/moat/moat-dl ] ||
		skip "an installed moat-dl (/usr/local/libexec/moat) would be found"
	local alone="$BATS_TEST_TMPDIR/alone"
	mkdir -p "$alone"
	cp "$MOAT" "$alone/moat"
	run "$alone/moat" --root "$ROOT" --config "$MOAT_CONFIG" sandbox \
		--image "$BUNDLE/no-image" -- true
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "moat: sandbox: --image needs moat-dl: moat-dl: not found (looked for $alone/moat-dl, "* ]]
	run "$alone/moat" --root "$ROOT" --config "$MOAT_CONFIG" sandbox \
		--rootfs "$BUNDLE/rootfs" -- true
	[ "$status" -eq 0 ]
	[ -z "$(ls "$ROOT")" ]
}
