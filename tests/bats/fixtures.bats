#!/usr/bin/env bats
# Every config.json an engine wrote (tests/fixtures/ENGINE.*.config.json)
# runs to completion under moat, with only what cannot exist on this host
# adapted: the rootfs, the dockerd hook, bind sources and namespace paths
# that are not here, the cgroup path (made unique), and the command.

load helpers
load runtime_helpers

setup() {
	requires_root
	setup_bundle
	# The mapped root of podman's user-namespace config must get through.
	chmod 755 "$BUNDLE"
	SOCK="$BUNDLE/console.sock"
	RECVTTY_PID=""
	CG_TOP="moat-fixtures-$BATS_TEST_NUMBER-$$"
	NETNS="moat-fixtures-$BATS_TEST_NUMBER-$$"
	ip netns add "$NETNS"
	cp "$BUNDLE/config.json" "$BUNDLE/spec.config.json"
}

teardown() {
	teardown_bundle
	stop_recvtty
	ip netns delete "$NETNS" 2>/dev/null || true
	local d
	for d in /sys/fs/cgroup/"$CG_TOP" /sys/fs/cgroup/*/"$CG_TOP"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}

# The engines' fixtures (not the configs made up for profile tests).
engine_configs() {
	local f
	for f in "$FIXTURES"/*.config.json; do
		case "$(basename "$f")" in
		docker.* | podman.* | ctr.* | containerd.* | crio.* | k8s.*) echo "$f" ;;
		esac
	done
}

# config.json for fixture $1, adapted to this host.
adapt_fixture() {
	local f="$1" name
	name="$(basename "$f" .config.json)"
	local missing='[]' src
	while IFS= read -r src; do
		[ -e "$src" ] || missing=$(jq -c --arg s "$src" '. + [$s]' <<<"$missing")
	done < <(jq -r '.mounts[]? | select(.type == "bind" or ((.options // []) | index("bind") or index("rbind"))) | .source' "$f")
	jq --arg root "$BUNDLE/rootfs" --argjson missing "$missing" \
		--arg cg "/$CG_TOP/$name" --arg netns "/var/run/netns/$NETNS" '
		.root.path = $root
		| .process.args = ["sh", "-c", "echo fixture-ok"]
		| .linux.cgroupsPath = $cg
		| if .hooks then .hooks |= with_entries(.value |= map(select(.path | test("^/proc/[0-9]+/exe$") | not))) else . end
		| .mounts |= map(select(.source as $s | ($missing | index($s)) | not))
		| .linux.namespaces |= map(if .path then .path = $netns else . end)' "$f" >"$BUNDLE/config.json"
}

@test "there are engine fixtures to run" {
	[ "$(engine_configs | wc -l)" -ge 10 ]
}

@test "every engine config without a terminal runs to completion, exit 0" {
	local failed=()
	while IFS= read -r f; do
		[ "$(jq -r '.process.terminal // false' "$f")" = false ] || continue
		name="$(basename "$f" .config.json)"
		adapt_fixture "$f"
		id="fx-$BATS_TEST_NUMBER-$$-${name%%.*}-$(echo "$name" | cut -d. -f2)"
		moat run -b "$BUNDLE" "$id"
		if [ "$status" -ne 0 ] || [ "${lines[-1]}" != fixture-ok ]; then
			echo "FIXTURE $name: status $status: $output" >&2
			failed+=("$name")
		fi
		assert_nothing_left "$id" || failed+=("$name (left something)")
	done < <(engine_configs)
	[ "${#failed[@]}" -eq 0 ] || { echo "failed: ${failed[*]}" >&2; false; }
}

@test "every engine config with a terminal runs to completion through a console socket" {
	local n=0 failed=()
	while IFS= read -r f; do
		[ "$(jq -r '.process.terminal // false' "$f")" = true ] || continue
		n=$((n + 1))
		name="$(basename "$f" .config.json)"
		adapt_fixture "$f"
		update_config '.process.args = ["sh", "-c", "tty; echo fixture-ok"]'
		id="fx-$BATS_TEST_NUMBER-$$-${name%%.*}-$(echo "$name" | cut -d. -f2)"
		rm -f "$BUNDLE/captured"
		start_recvtty --mode capture "$BUNDLE/captured" --no-stdin
		moat run -b "$BUNDLE" --console-socket "$SOCK" "$id"
		wait_recvtty
		got="$(tr -d '\r' <"$BUNDLE/captured" | xargs)"
		if [ "$status" -ne 0 ] || [ "$got" != "/dev/pts/0 fixture-ok" ]; then
			echo "FIXTURE $name: status $status: $output / tty: $got" >&2
			failed+=("$name")
		fi
		assert_nothing_left "$id" || failed+=("$name (left something)")
	done < <(engine_configs)
	[ "$n" -ge 1 ]
	[ "${#failed[@]}" -eq 0 ] || { echo "failed: ${failed[*]}" >&2; false; }
}

@test "engine configs keep their user, cwd and umask" {
	for f in "$FIXTURES"/docker.19.*.config.json "$FIXTURES"/podman.16.*.config.json; do
		[ -e "$f" ] || continue
		adapt_fixture "$f"
		want_uid=$(jq -r .process.user.uid "$f")
		want_cwd=$(jq -r .process.cwd "$f")
		update_config '.process.args = ["sh", "-c", "id -u; pwd; umask"]'
		moat run -b "$BUNDLE" "fx-$BATS_TEST_NUMBER-$$"
		[ "$status" -eq 0 ]
		[ "${lines[0]}" = "$want_uid" ]
		[ "${lines[1]}" = "$want_cwd" ]
		[ "${lines[2]}" = 0022 ]
	done
}

@test "a privileged engine config is confined all the same" {
	for f in "$FIXTURES"/docker.20.*.config.json "$FIXTURES"/podman.17.*.config.json "$FIXTURES"/ctr.17.*.config.json; do
		[ -e "$f" ] || continue
		adapt_fixture "$f"
		update_config '.process.args = ["sh", "-c", "grep -E \"^(CapEff|CapBnd|NoNewPrivs):\" /proc/self/status | cut -f 2; ls /sys/class/net | xargs; touch /x"]'
		moat run -b "$BUNDLE" "fx-$BATS_TEST_NUMBER-$$"
		[ "${lines[0]}" = 0000000000000000 ]
		[ "${lines[1]}" = 0000000000000000 ]
		[ "${lines[2]}" = 1 ]
		[ "${lines[3]}" = lo ]
		[[ "${lines[4]}" == *"Read-only file system" ]]
	done
}
