# shellcheck shell=bash
# Shared setup for the strict profile's tests (SPEC.md G1-G11): each
# guarantee is checked from inside a running container under three configs,
# what `moat spec` writes, one an engine wrote (tests/fixtures/), and
# tests/fixtures/permissive.config.json, which asks for everything.

# shellcheck source=../helpers.bash
load ../helpers

# helpers.bash finds the repository from tests/bats/; this file is one
# level deeper.
REPO="$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)"
[ -x "$MOAT" ] || MOAT="$REPO/build/moat"
TESTBIN="${MOAT_TESTBIN:-$REPO/build/tests/cmd}"
FIXTURES="$REPO/tests/fixtures"

# The cgroup parent the engine configs' cgroupsPath is moved under: one per
# bats run, removed in teardown if empty.
PROFILE_CGROUP_PARENT="moat-bats-$$"

# A bundle for KIND:
#   spec                 what `moat spec` writes (terminal off)
#   permissive           tests/fixtures/permissive.config.json without its
#                        docker.sock and /etc binds (those make create fail
#                        by design: g05 tests that with permissive-raw)
#   permissive-raw       the fixture as it is
#   docker.19, docker.20, ctr.17 ...  the engine-written fixture whose name
#                        starts with KIND, made to run here
prepare_bundle() {
	local kind="$1" fixture
	setup_bundle
	# Containers may not bind anything in or above the audit log's
	# directory: keep it apart from the stand-ins in $BUNDLE/host.
	AUDIT_LOG="$BUNDLE/audit/audit.jsonl"
	printf '{"audit_log": "%s"}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
	case "$kind" in
	spec)
		return 0
		;;
	permissive)
		fixture="$FIXTURES/permissive.config.json"
		cp "$fixture" "$BUNDLE/config.json"
		update_config 'del(.mounts[] | select(.source == "/var/run/docker.sock" or .source == "/etc"))'
		# linux.resources.unified needs cgroup v2 (runc refuses it too on
		# v1 and hybrid hosts); on a v2 host it stays, and the profile
		# filters its keys.
		[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] ||
			update_config 'del(.linux.resources.unified)'
		;;
	permissive-raw)
		cp "$FIXTURES/permissive.config.json" "$BUNDLE/config.json"
		return 0
		;;
	*)
		fixture=$(compgen -G "$FIXTURES/$kind.*.config.json" | head -n 1)
		[ -n "$fixture" ] || {
			echo "no fixture $kind" >&2
			return 1
		}
		cp "$fixture" "$BUNDLE/config.json"
		;;
	esac
	adapt_engine_config
}

# An engine's config.json names its own rootfs, hooks and files on its
# host: point it at the bundle's busybox rootfs, drop the hooks, and give
# every bind whose source does not exist here a stand-in in the bundle
# (a file for the files engines bind, a directory otherwise).
adapt_engine_config() {
	local i n src dst stand
	update_config --arg root "$BUNDLE/rootfs" --arg cg "/$PROFILE_CGROUP_PARENT/$(basename "$BUNDLE")" '
		.root.path = $root
		| del(.hooks)
		| .process.terminal = false
		| .process.args = ["true"]
		| if .linux.cgroupsPath then .linux.cgroupsPath = $cg else . end'
	mkdir -p "$BUNDLE/host"
	n=$(jq '.mounts | length' "$BUNDLE/config.json")
	for ((i = 0; i < n; i++)); do
		src=$(jq -r --argjson i "$i" '.mounts[$i] | select(.type == "bind" or ((.options // []) | index("bind") or index("rbind"))) | .source' "$BUNDLE/config.json")
		[ -n "$src" ] && [ ! -e "$src" ] || continue
		dst=$(jq -r --argjson i "$i" '.mounts[$i].destination' "$BUNDLE/config.json")
		stand="$BUNDLE/host/$i-$(basename "$src")"
		case "$(basename "$dst")" in
		resolv.conf | hostname | hosts | docker-init | localtime) echo "# stand-in for $src" >"$stand" ;;
		*) mkdir -p "$stand" ;;
		esac
		update_config --argjson i "$i" --arg s "$stand" '.mounts[$i].source = $s'
	done
}

teardown_profile() {
	teardown_bundle
	local d i
	# moat delete removes a container's cgroups; if a failing test left
	# one, remove what is ours and empty: the engine configs' parent and
	# the default /moat/ID of this test's ids.
	for d in /sys/fs/cgroup/*/"$PROFILE_CGROUP_PARENT" /sys/fs/cgroup/"$PROFILE_CGROUP_PARENT"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	for ((i = 1; i <= ${CTR_SEQ:-0}; i++)); do
		for d in /sys/fs/cgroup/*/moat/"$GUARANTEE-$BATS_TEST_NUMBER-$$-$i" /sys/fs/cgroup/moat/"$GUARANTEE-$BATS_TEST_NUMBER-$$-$i"; do
			[ -d "$d" ] && rmdir "$d" 2>/dev/null || true
		done
	done
}

# A fresh container id for this test in $CID: "g3-12-4567-1", ...
next_id() {
	CTR_SEQ=$((${CTR_SEQ:-0} + 1))
	CID="$GUARANTEE-$BATS_TEST_NUMBER-$$-$CTR_SEQ"
}

# Run a shell script in a fresh container of the bundle (moat run), with
# extra global flags before the verb: in_container [--profile egress] SCRIPT.
in_container() {
	local script="${*: -1}"
	local flags=("${@:1:$#-1}")
	next_id
	update_config --arg c "$script" '.process.args = ["sh", "-c", $c]'
	moat "${flags[@]}" run -b "$BUNDLE" "$CID"
}

# Start a long-lived container (sleep) for `moat exec`; its id in $CID.
start_sleeper() {
	next_id
	update_config '.process.args = ["sleep", "1000"]'
	moat "$@" run -d -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	wait_status "$CID" running
}

# Create a container whose output goes to $BUNDLE/$CID.out (not through
# the moat wrapper's file: later verbs would truncate it under the running
# container); flags before the verb, as in_container.
create_with_output() {
	local script="${*: -1}"
	local flags=("${@:1:$#-1}")
	next_id
	update_config --arg c "$script" '.process.args = ["sh", "-c", $c]'
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" "${flags[@]}" create -b "$BUNDLE" \
		--pid-file "$BUNDLE/$CID.pid" "$CID" >"$BUNDLE/$CID.out" 2>&1 </dev/null
}

# Start the container create_with_output made, wait for it to stop, and
# read what it printed into $output and $lines.
start_until_stopped() {
	moat start "$CID"
	[ "$status" -eq 0 ] || return 1
	wait_status "$CID" stopped || return 1
	# create's clamp warnings (helpers.bash MOAT_WARNING_RE) apart.
	warnings="$(grep -E "$MOAT_WARNING_RE" "$BUNDLE/$CID.out" || true)"
	output="$(grep -vE "$MOAT_WARNING_RE" "$BUNDLE/$CID.out" || true)"
	mapfile -t lines < <(grep -vE "$MOAT_WARNING_RE" "$BUNDLE/$CID.out" || true)
	echo "$CID printed:" >&2
	echo "$output" >&2
}

# The host-side cgroup directory of controller CTRL for host pid PID:
# cgroup_dir CTRL PID (on a cgroup v2 host, the one unified directory).
cgroup_dir() {
	local ctrl="$1" pid="$2" rel
	if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
		rel=$(awk -F: '$1 == "0" { print $3 }' "/proc/$pid/cgroup")
		echo "/sys/fs/cgroup$rel"
		return 0
	fi
	rel=$(awk -F: -v c="$ctrl" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' "/proc/$pid/cgroup")
	[ -n "$rel" ] || return 1
	echo "/sys/fs/cgroup/$ctrl$rel"
}

# The audit lines for a container id, one compact JSON object per line.
audit_lines() {
	jq -c --arg id "$1" 'select(.id == $id)' "$AUDIT_LOG"
}

# Does FILTER yield something for one of the audit lines of container ID?
# audit_has ID 'select(.verb == "run") | .overrides[] | select(...)'
audit_has() {
	jq -s -e --arg id "$1" "[.[] | select(.id == \$id) | $2] | length > 0" "$AUDIT_LOG" >/dev/null || {
		echo "no audit line of $1 has: $2" >&2
		audit_lines "$1" >&2
		return 1
	}
}

# Is LINE, exactly, one of $lines (the output of the last moat call)? For
# sysprobe's answers: has_line "connect(10.250.1.1:8080): Operation not
# permitted (errno 1)".
has_line() {
	local want="$1" l
	for l in "${lines[@]}"; do
		[ "$l" = "$want" ] && return 0
	done
	echo "missing line: $want" >&2
	return 1
}
