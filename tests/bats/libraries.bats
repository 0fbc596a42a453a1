#!/usr/bin/env bats
# moat maps only the libraries a verb uses: the image unpacker's libarchive
# (with libxml2, ICU, nettle, lz4, zstd ...) and the systemd driver's sd-bus
# (with gcrypt) are loaded with dlopen where they are needed, not by every
# verb an engine calls.

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

@test "the binary links none of the on-demand libraries" {
	run ldd "$MOAT"
	[ "$status" -eq 0 ]
	echo "$output" >&2
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
	# The dynamic loader's own list, for the verb engines call most.
	LD_DEBUG=files "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" state "$c1" \
		>/dev/null 2>"$BUNDLE/ld.log" || true
	grep -q 'file=libc.so' "$BUNDLE/ld.log"
	! grep -E "file=($ON_DEMAND_RE|$CREATE_RE)" "$BUNDLE/ld.log"
}
