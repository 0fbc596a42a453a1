#!/usr/bin/env bats
# What a new user and an operator read and install (issue 15): the README's
# quick start run as written, make install/uninstall, the man page's paths,
# the contrib/ engine snippets loaded by the engines installed here.

load helpers

REPO="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"

setup() {
	requires_root
	WORK="$(mktemp -d "${BATS_TMPDIR:-/tmp}/moat-op.XXXXXX")"
}

teardown() {
	if [ -n "${WORK:-}" ]; then
		[ -d "$WORK/state" ] && for d in "$WORK"/state/*/; do
			[ -d "$d" ] && "$MOAT" --root "$WORK/state" delete --force "$(basename "$d")" >/dev/null 2>&1
		done
		rm -rf "$WORK"
	fi
	return 0
}

# The shell block between <!-- quickstart --> and <!-- /quickstart -->.
quickstart() {
	sed -n '/^<!-- quickstart -->$/,/^<!-- \/quickstart -->$/p' "$REPO/README.md" |
		sed -e '1,/^```sh$/d' -e '/^```$/,$d'
}

@test "the README's quick start runs as written and prints what it says" {
	quickstart >"$WORK/quickstart.sh"
	[ -s "$WORK/quickstart.sh" ]
	grep -q '^moat run demo' "$WORK/quickstart.sh"
	# `moat` on PATH is the build under test, with a private state dir and
	# audit log; everything else is the README's text.
	mkdir -p "$WORK/bin"
	printf '{"audit_log": "%s/audit.jsonl"}\n' "$WORK" >"$WORK/config.json"
	cat >"$WORK/bin/moat" <<-WRAP
		#!/bin/sh
		exec "$MOAT" --root "$WORK/state" --config "$WORK/config.json" "\$@"
	WRAP
	chmod +x "$WORK/bin/moat"
	run env -C "$WORK" PATH="$WORK/bin:$PATH" sh -e "$WORK/quickstart.sh" </dev/null
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "hello from moat" ]
	[ "${lines[1]}" = 0 ]
	# run deleted its container.
	[ -z "$(ls "$WORK/state" 2>/dev/null)" ]
}

@test "make install puts the binary, example config, logrotate and man page; uninstall removes them" {
	command -v make >/dev/null || skip "no make"
	# The build under test must be the tree's release build.
	[ "$MOAT" -ef "$REPO/build/moat" ] || skip "MOAT is not $REPO/build/moat"
	d="$WORK/dest"
	run make -s -C "$REPO" install DESTDIR="$d"
	[ "$status" -eq 0 ]
	[ -x "$d/usr/local/bin/moat" ]
	cmp "$d/etc/moat/config.example.json" "$REPO/contrib/moat-config.example.json"
	cmp "$d/etc/logrotate.d/moat" "$REPO/contrib/logrotate.moat"
	if command -v scdoc >/dev/null; then [ -f "$d/usr/local/share/man/man1/moat.1" ]; fi
	# The man page names the path make install used.
	grep -q '_/etc/moat/config.example.json_' "$REPO/docs/moat.1.scd"
	grep -q 'logrotate.d/moat' "$REPO/docs/moat.1.scd"
	if command -v logrotate >/dev/null; then logrotate -d "$d/etc/logrotate.d/moat" 2>&1 | grep -q 'audit.jsonl'; fi
	# The operator's own config stays; what install put goes.
	echo '{}' >"$d/etc/moat/config.json"
	run make -s -C "$REPO" uninstall DESTDIR="$d"
	[ "$status" -eq 0 ]
	[ ! -e "$d/usr/local/bin/moat" ]
	[ ! -e "$d/etc/moat/config.example.json" ]
	[ ! -e "$d/etc/logrotate.d/moat" ]
	[ ! -e "$d/usr/local/share/man/man1/moat.1" ]
	[ -f "$d/etc/moat/config.json" ]
}

@test "containerd 1.6/1.7 loads contrib/containerd-config.toml; the 2.x file is valid TOML with v3's tables" {
	command -v containerd >/dev/null || skip "no containerd"
	{ echo 'version = 2'; cat "$REPO/contrib/containerd-config.toml"; } >"$WORK/ctd2.toml"
	run timeout 30 containerd --config "$WORK/ctd2.toml" config dump
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '^ *\[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.moat.options\]'
	echo "$output" | grep -q 'BinaryName = "/usr/local/bin/moat"'
	# containerd 1.6 cannot load a version 3 config (it ignores it): check
	# the TOML and the tables containerd 2.x reads.
	python3 - "$REPO/contrib/containerd2-config.toml" <<-'PY'
		import sys, tomllib
		c = tomllib.load(open(sys.argv[1], "rb"))
		assert c["version"] == 3, c
		r = c["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]["runtimes"]["moat"]
		assert r["runtime_type"] == "io.containerd.runc.v2", r
		assert r["options"]["BinaryName"] == "/usr/local/bin/moat", r
	PY
}

@test "podman: containers.conf makes moat the default, containers-moat-json.conf only registers it" {
	command -v podman >/dev/null || skip "no podman"
	pinfo() {
		sed "s|/usr/local/bin/moat|$MOAT|" "$1" >"$WORK/c.conf"
		shift
		CONTAINERS_CONF="$WORK/c.conf" timeout 60 podman --root "$WORK/pr" --runroot "$WORK/prr" "$@" \
			info --format '{{.Host.OCIRuntime.Name}}'
	}
	[ "$(pinfo "$REPO/contrib/containers.conf")" = moat ]
	[ "$(pinfo "$REPO/contrib/containers-moat-json.conf")" != moat ]
	[ "$(pinfo "$REPO/contrib/containers-moat-json.conf" --runtime moat)" = moat ]
	grep -q '"moat"\]' "$REPO/contrib/containers-moat-json.conf"
	! grep -q '^runtime *=' "$REPO/contrib/containers-moat-json.conf"
}
