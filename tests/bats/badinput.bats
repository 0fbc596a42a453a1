#!/usr/bin/env bats
# Hostile input (SPEC.md "What bad input gets"): every case exits 1 with one
# line on stderr, `moat: VERB ID: why`, never dies of a signal, leaves no
# core, and leaves nothing behind: no state dir, cgroup, mount or process.

load helpers

setup() {
	requires_root
	setup_bundle
	cp "$BUNDLE/config.json" "$BUNDLE/base.json"
	# Container ids are unique to this bundle: cgroups are host-wide.
	U="${BUNDLE##*.}"
}

teardown() {
	[ -z "${FLIPPER:-}" ] || { kill "$FLIPPER"; wait "$FLIPPER"; } || true
	# A moat that took a state root not its own made a container there.
	if [ -n "${SHARED_ROOT:-}" ] && [ -d "$SHARED_ROOT" ]; then
		chown 0:0 "$SHARED_ROOT" && chmod 0700 "$SHARED_ROOT"
		"$MOAT" --root "$SHARED_ROOT" delete --force "c1-$U" >/dev/null 2>&1 || true
	fi
	teardown_bundle
	[ -z "${HOST_TARGET:-}" ] || rm -rf "$HOST_TARGET"
}

# The config of setup_bundle again, then the jq filter $1 on it.
reset_config() {
	cp "$BUNDLE/base.json" "$BUNDLE/config.json"
	[ $# -eq 0 ] || update_config "$@"
}

# refuse VERB ID [ARGS...]: runs `moat VERB ARGS... ID` from the bundle
# (where a crash would drop its core) and checks the refusal. SHOWN_ID is
# how the error line prints the id (default: the id itself); WANT_STATUS
# the exit status (default 1); ID_IN_ARGS=1: ARGS hold the id already.
refuse() {
	local verb="$1" id="$2"
	rc=0
	shift 2
	(
		cd "$BUNDLE" || exit 99
		ulimit -c unlimited 2>/dev/null || true
		[ -n "${ID_IN_ARGS:-}" ] || set -- "$@" "$id"
		exec "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" "$verb" "$@"
	) >"$BUNDLE/.out" 2>"$BUNDLE/.err" </dev/null || rc=$?
	stderr="$(cat "$BUNDLE/.err")"
	echo "moat $verb $* <$id>: status $rc: $stderr" >&2
	if [ "$rc" -ge 128 ] && [ "$rc" -ne "${WANT_STATUS:-1}" ]; then
		echo "moat died of signal $((rc - 128))" >&2
		return 1
	fi
	[ "$rc" -eq "${WANT_STATUS:-1}" ] || return 1
	[ "$(wc -l <"$BUNDLE/.err")" -eq 1 ] || { echo "not one line on stderr" >&2; return 1; }
	[[ "$stderr" == "moat: $verb ${SHOWN_ID-$id}: "?* ]] || { echo "bad prefix" >&2; return 1; }
	if compgen -G "$BUNDLE/core*" >/dev/null; then
		echo "core file left" >&2
		return 1
	fi
}

# No process of the host runs from the bundle or has it on its command line
# (a container init that outlived a failed create would).
assert_no_process() {
	local p pid link bad=0
	for p in /proc/[0-9]*; do
		pid="${p#/proc/}"
		[ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ] && continue
		if grep -qsF "$BUNDLE" "$p/cmdline"; then
			echo "process $pid: $(tr '\0' ' ' <"$p/cmdline")" >&2
			bad=1
		fi
		for link in cwd root; do
			case "$(readlink "$p/$link" 2>/dev/null)" in
			"$BUNDLE" | "$BUNDLE"/*)
				echo "process $pid: $link in the bundle" >&2
				bad=1
				;;
			esac
		done
	done
	return "$bad"
}

assert_clean() {
	assert_nothing_left "$1"
	assert_no_process
}

# The state root holds nothing but the seccomp cache.
assert_root_empty() {
	[ -z "$(ls -A "$ROOT" 2>/dev/null | grep -v '^\.cache$')" ] || {
		ls -la "$ROOT" >&2
		return 1
	}
}

@test "config.json that is not a config: empty, null, array, number, truncated, not UTF-8" {
	: >"$BUNDLE/config.json"
	refuse create c1-$U -b "$BUNDLE"
	assert_clean c1-$U
	for doc in 'null' '[]' '[{"ociVersion": "1.2.0"}]' '42' '"a string"' 'true' '{}' '{"process": null}'; do
		echo "$doc" >"$BUNDLE/config.json"
		refuse create c1-$U -b "$BUNDLE"
		assert_clean c1-$U
	done
	head -c 700 "$BUNDLE/base.json" >"$BUNDLE/config.json"
	refuse create c1-$U -b "$BUNDLE"
	[[ "$stderr" == *config.json* ]]
	assert_clean c1-$U
	reset_config
	sed -i 's/"hostname": "moat"/"hostname": "mo\xff\xfeat"/' "$BUNDLE/config.json"
	grep -q $'\xff' "$BUNDLE/config.json"
	refuse create c1-$U -b "$BUNDLE"
	[[ "$stderr" == *UTF-8* ]]
	assert_clean c1-$U
	printf '{"ociVersion": "1.2.0"\0}' >"$BUNDLE/config.json"
	refuse create c1-$U -b "$BUNDLE"
	assert_clean c1-$U
	rm "$BUNDLE/config.json"
	refuse create c1-$U -b "$BUNDLE"
	assert_clean c1-$U
}

@test "config.json of 100 MiB is refused before it is read" {
	truncate -s 100M "$BUNDLE/config.json"
	refuse create c1-$U -b "$BUNDLE"
	[[ "$stderr" == *"larger than"* ]]
	assert_clean c1-$U
	# Valid JSON, just huge: a 100 MiB string in the env.
	{
		printf '{"ociVersion": "1.2.0", "process": {"args": ["true"], "cwd": "/", "env": ["A='
		head -c $((100 * 1024 * 1024)) /dev/zero | tr '\0' a
		printf '"]}, "root": {"path": "rootfs"}}'
	} >"$BUNDLE/config.json"
	refuse create c1-$U -b "$BUNDLE"
	assert_clean c1-$U
}

@test "config.json nested 1,000,000 levels deep" {
	{
		head -c 1000000 /dev/zero | tr '\0' '['
		head -c 1000000 /dev/zero | tr '\0' ']'
	} >"$BUNDLE/config.json"
	refuse create c1-$U -b "$BUNDLE"
	[[ "$stderr" == *nesting* ]]
	assert_clean c1-$U
	# Deep objects inside an otherwise valid config.
	local json
	json="$(jq -c '.annotations = "@DEEP@"' "$BUNDLE/base.json")"
	{
		printf '%s' "${json%%\"@DEEP@\"*}"
		printf '{"a":%.0s' $(seq 100000)
		printf 1
		printf '}%.0s' $(seq 100000)
		printf '%s' "${json#*\"@DEEP@\"}"
	} >"$BUNDLE/config.json"
	refuse create c1-$U -b "$BUNDLE"
	assert_clean c1-$U
}

@test "every field of the wrong type is refused" {
	# A config that uses most fields, and that moat accepts as it is.
	reset_config '.process.user.additionalGids = [1, 2]
		| .process.user.umask = 18
		| .process.env += ["A=1"]
		| .process.rlimits += [{"type": "RLIMIT_NPROC", "hard": 100, "soft": 100}]
		| .process.oomScoreAdj = 10
		| .process.consoleSize = {"height": 24, "width": 80}
		| .process.capabilities.bounding = ["CAP_CHOWN"]
		| .annotations = {"org.example": "x"}
		| .mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]
		| .linux.resources.memory = {"limit": 67108864, "swap": 67108864}
		| .linux.resources.pids = {"limit": 32}
		| .linux.resources.cpu = {"shares": 512, "quota": 50000, "period": 100000}
		| .linux.resources.blockIO = {"weight": 100}
		| .linux.sysctl = {"kernel.msgmax": "8192"}
		| .hooks = {"createRuntime": [{"path": "/bin/true", "args": ["true"], "env": ["A=1"], "timeout": 5}]}
		| .domainname = "example"
		| .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"],
			"syscalls": [{"names": ["getcwd"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
	cp "$BUNDLE/config.json" "$BUNDLE/rich.json"
	moat create -b "$BUNDLE" rich-$U
	[ "$status" -eq 0 ]
	moat delete --force rich-$U
	assert_clean rich-$U

	local n=0 p
	jq -c 'paths' "$BUNDLE/rich.json" >"$BUNDLE/paths"
	while read -r p; do
		jq --argjson p "$p" 'getpath($p) as $v | setpath($p;
			if ($v | type) == "string" then 42
			elif ($v | type) == "number" then "7"
			elif ($v | type) == "boolean" then "true"
			elif ($v | type) == "array" then {}
			else [] end)' "$BUNDLE/rich.json" >"$BUNDLE/config.json"
		refuse create wt-$U -b "$BUNDLE"
		assert_nothing_left wt-$U
		n=$((n + 1))
	done <"$BUNDLE/paths"
	[ "$n" -gt 100 ]
	assert_no_process
}

@test "null in every field: a clean refusal or a container, never a crash" {
	local p rc
	jq -c 'paths' "$BUNDLE/base.json" >"$BUNDLE/paths"
	while read -r p; do
		jq --argjson p "$p" 'setpath($p; null)' "$BUNDLE/base.json" >"$BUNDLE/config.json"
		rc=0
		"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" create -b "$BUNDLE" "nl-$U" >"$BUNDLE/.out" 2>&1 </dev/null || rc=$?
		echo "$p: $rc $(cat "$BUNDLE/.out")" >&2
		[ "$rc" -le 1 ]
		if [ "$rc" -eq 1 ]; then
			[ "$(wc -l <"$BUNDLE/.out")" -eq 1 ]
		else
			moat delete --force nl-$U
			[ "$status" -eq 0 ]
		fi
		assert_nothing_left nl-$U
	done <"$BUNDLE/paths"
	assert_no_process
}

# num_config PATH LITERAL: base config with the number at PATH written as
# LITERAL, byte for byte (jq would round it through a double).
num_config() {
	jq --argjson p "$1" 'setpath($p; "@NUM@")' "$BUNDLE/base.json" |
		sed "s/\"@NUM@\"/$2/" >"$BUNDLE/config.json"
}

@test "negative and huge numbers where sizes are expected" {
	reset_config '.process.consoleSize = {"height": 24, "width": 80}
		| .hooks = {"createRuntime": [{"path": "/bin/true", "timeout": 5}]}
		| .linux.resources.memory = {"limit": 67108864}
		| .linux.resources.pids = {"limit": 32}
		| .linux.resources.cpu = {"shares": 512, "period": 100000}
		| .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 1}]'
	cp "$BUNDLE/config.json" "$BUNDLE/base.json"
	local p v
	local paths=('["linux","resources","memory","limit"]' '["linux","resources","pids","limit"]'
		'["linux","resources","cpu","shares"]' '["linux","resources","cpu","period"]'
		'["process","rlimits",0,"hard"]' '["process","rlimits",0,"soft"]'
		'["process","consoleSize","height"]' '["process","user","uid"]'
		'["process","oomScoreAdj"]' '["hooks","createRuntime",0,"timeout"]'
		'["linux","uidMappings",0,"size"]')
	for p in "${paths[@]}"; do
		# Out of every field's range, or not integers.
		for v in -9223372036854775809 18446744073709551616 99999999999999999999999999999 \
			1e400 -1e400 1.5 1e3; do
			num_config "$p" "$v"
			refuse create "num-$U" -b "$BUNDLE"
			assert_nothing_left "num-$U"
		done
		# In range for some fields (a negative pids limit is "no limit of
		# its own", as in runc, and the profile's applies): a refusal or
		# a container, never a crash, nothing left.
		for v in -9223372036854775808 9223372036854775807 18446744073709551615 -0 0; do
			num_config "$p" "$v"
			refuse create "num-$U" -b "$BUNDLE" || {
				[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]
				moat delete --force "num-$U"
				[ "$status" -eq 0 ]
			}
			assert_nothing_left "num-$U"
		done
	done
	for v in -2 -1000; do
		for p in '["linux","resources","memory","limit"]' '["process","rlimits",0,"hard"]' \
			'["process","consoleSize","width"]' '["process","user","gid"]'; do
			num_config "$p" "$v"
			refuse create "num-$U" -b "$BUNDLE"
			assert_nothing_left "num-$U"
		done
	done
	# Sizes inside strings: a tmpfs size the profile cannot read is
	# replaced by its cap (64 MiB; size=0 would be unlimited).
	mkdir "$BUNDLE/rootfs/scratch"
	for v in size=-1 size=99999999999999999999999k size=1x size=0 size=; do
		reset_config --arg o "$v" '.mounts += [{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": [$o]}]
			| .process.args = ["sh", "-c", "grep \" /scratch \" /proc/self/mountinfo"]'
		moat run -b "$BUNDLE" "num-$U"
		[ "$status" -eq 0 ]
		[[ "$output" == *size=65536k* ]]
		assert_nothing_left "num-$U"
	done
	for v in mode=99999 nr_inodes=-5 uid=-1; do
		reset_config --arg o "$v" '.mounts += [{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": [$o]}]'
		refuse run "num-$U" -b "$BUNDLE"
		assert_nothing_left "num-$U"
	done
	assert_no_process
}

@test "a pids limit of INT64_MIN gets the profile's limit" {
	reset_config '.process.args = ["sleep", "100"]'
	cp "$BUNDLE/config.json" "$BUNDLE/base.json"
	num_config '["linux","resources","pids","limit"]' -9223372036854775808
	moat create -b "$BUNDLE" "pl-$U"
	[ "$status" -eq 0 ]
	max="$(cat /sys/fs/cgroup/pids/moat/"pl-$U"/pids.max 2>/dev/null || cat /sys/fs/cgroup/moat/"pl-$U"/pids.max)"
	echo "pids.max: $max" >&2
	[ "$max" != max ] && [ "$max" -le 64 ] && [ "$max" -gt 0 ]
	moat delete --force "pl-$U"
	assert_clean "pl-$U"
}

@test "bad ids: empty, 2,000 characters, with /, .., a newline" {
	SHOWN_ID="" refuse create "" -b "$BUNDLE"
	local long
	long="$(head -c 2000 /dev/zero | tr '\0' a)"
	SHOWN_ID="$(head -c 64 /dev/zero | tr '\0' a)..." refuse create "$long" -b "$BUNDLE"
	[[ "$stderr" == *"longer than"* ]]
	[ "${#stderr}" -lt 200 ]
	for id in a/b ../x .. . /abs x/../y .hidden _under 'a b' a:b; do
		refuse create "$id" -b "$BUNDLE"
		[[ "$stderr" == *"invalid container id"* ]]
	done
	SHOWN_ID='a\x0ab' refuse create $'a\nb' -b "$BUNDLE"
	SHOWN_ID='a\x09b' refuse create $'a\tb' -b "$BUNDLE"
	for verb in state start kill delete pause resume ps; do
		refuse "$verb" ../x
		[[ "$stderr" == *"invalid container id"* ]]
	done
	assert_root_empty
	[ ! -e "$BUNDLE/x" ] && [ ! -e "$BUNDLE/a" ]
	assert_no_process
}

@test "what config.json says is shown with its control characters escaped: no forged line, no escape sequence to the caller's terminal" {
	# OSC 52 would write the caller's clipboard; the newline would forge a
	# second error line.
	local evil=$'/nonexist\e]52;c;aGk=\a\nmoat: forged'
	reset_config --arg s "$evil" '.mounts += [{"destination": "/mnt", "type": "bind", "source": $s, "options": ["rbind"]}]'
	refuse create "x$U" -b "$BUNDLE"
	[[ "$stderr" == *'/nonexist\x1b]52;c;aGk=\x07\x0amoat: forged'* ]]
	! grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$BUNDLE/.err"
	assert_clean "x$U"
	# A warning too: an annotation moat does not know.
	reset_config --arg k "run.moat.$evil" '.annotations[$k] = "v" | .process.args = ["true"]'
	moat run -b "$BUNDLE" "y$U"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(echo "$warnings" | wc -l)" -eq 1 ]
	[[ "$warnings" == *'\x1b]52;c;aGk=\x07\x0amoat: forged: asked v, ignored'* ]]
	! grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$BUNDLE/.moat-out"
}

@test "rootfs: missing, a file, a symlink to the host's /; a symlink to a dir is followed" {
	reset_config '.root.path = "missing"'
	refuse create c1-$U -b "$BUNDLE"
	[[ "$stderr" == *"No such file"* ]]
	assert_clean c1-$U
	touch "$BUNDLE/rootfile"
	reset_config '.root.path = "rootfile"'
	refuse create c1-$U -b "$BUNDLE"
	[[ "$stderr" == *"Not a directory"* ]]
	assert_clean c1-$U
	ln -s / "$BUNDLE/hostroot"
	reset_config '.root.path = "hostroot"'
	refuse create c1-$U -b "$BUNDLE"
	assert_clean c1-$U
	ln -s rootfs-missing "$BUNDLE/dangling"
	reset_config '.root.path = "dangling"'
	refuse create c1-$U -b "$BUNDLE"
	assert_clean c1-$U

	# Decision: as runc, a rootfs that is a symlink to a directory is
	# followed (the engine owns the bundle; only / is refused).
	ln -s rootfs "$BUNDLE/rootlink"
	reset_config '.root.path = "rootlink" | .process.args = ["sh", "-c", "echo inside"]'
	moat run -b "$BUNDLE" c2-$U
	[ "$status" -eq 0 ]
	[ "$output" = inside ]
	assert_clean c2-$U
}

# A host directory with a marker, and the same path inside the rootfs (so
# that a symlink resolved in the rootfs finds it there).
# Not under the bundle: the profile's tmpfs on the container's /tmp would
# hide the copy in the rootfs. teardown removes it.
make_host_target() {
	HOST_TARGET="/run/moat-badinput-$U"
	mkdir -p "$HOST_TARGET" "$BUNDLE/rootfs$HOST_TARGET"
	echo host >"$HOST_TARGET/host-marker"
}

host_target_untouched() {
	[ "$(ls -A "$HOST_TARGET")" = host-marker ] || { ls -la "$HOST_TARGET" >&2; return 1; }
	! grep -qF " $HOST_TARGET " /proc/self/mountinfo
}

@test "mount destinations that are symlinks out of the rootfs land inside it" {
	make_host_target
	local dest
	ln -s "$HOST_TARGET" "$BUNDLE/rootfs/abs-link"
	ln -s "../../../../../../../../../..$HOST_TARGET" "$BUNDLE/rootfs/rel-link"
	mkdir -p "$BUNDLE/rootfs/sub"
	ln -s "../../..$HOST_TARGET" "$BUNDLE/rootfs/sub/rel-link2"
	for dest in /abs-link /rel-link /sub/rel-link2; do
		# The tmpfs shows at $HOST_TARGET in the container's own mount
		# table (so it is under its root) and takes a write there.
		reset_config --arg d "$dest" --arg t "$HOST_TARGET" \
			'.mounts += [{"destination": $d, "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]
			| .process.args = ["sh", "-c", "grep -c \" \($t) \" /proc/self/mountinfo && touch \($t)/written && ls \($t)"]'
		moat run -b "$BUNDLE" "m1-$U"
		[ "$status" -eq 0 ]
		[ "${lines[0]}" = 1 ]
		[ "${lines[1]}" = written ]
		assert_clean "m1-$U"
		host_target_untouched
	done
	# A link to a path that exists only on the host: refused or made
	# inside, never mounted on the host's directory.
	mkdir "$BUNDLE/host-only"
	ln -s "$BUNDLE/host-only" "$BUNDLE/rootfs/host-only-link"
	reset_config '.mounts += [{"destination": "/host-only-link/sub", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]'
	moat create -b "$BUNDLE" "m2-$U"
	[ "$status" -le 1 ]
	[ -z "$(ls -A "$BUNDLE/host-only")" ]
	moat delete --force "m2-$U"
	assert_clean "m2-$U"
	host_target_untouched
}

@test "a symlink swapped in while create runs never mounts on the host target" {
	make_host_target
	mkdir -p "$BUNDLE/rootfs/flip"
	reset_config '.mounts += [{"destination": "/flip/sub", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]
		| .process.args = ["sleep", "100"]'
	local i ok=0 pid
	(
		# /flip is a directory, then a symlink to the host target, and
		# back, as fast as renames go.
		set +e
		cd "$BUNDLE/rootfs" || exit 1
		mkdir -p flip/sub
		while :; do
			mv -T flip flip.away
			ln -s "$HOST_TARGET" flip
			rm -f flip
			mv -T flip.away flip
		done 2>/dev/null
	) &
	FLIPPER=$!
	for i in $(seq 1 50); do
		moat create -b "$BUNDLE" "flip$i-$U"
		[ "$status" -le 1 ]
		if [ "$status" -eq 0 ]; then
			ok=$((ok + 1))
			pid="$("$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" state "flip$i-$U" | jq -r .pid)"
			# Wherever it went (/flip/sub, or /flip.away/sub after a
			# rename), the tmpfs is under the container's root: a mount
			# outside it would not be in its table.
			grep -E " - tmpfs tmpfs rw,size=1024k" "/proc/$pid/mountinfo" || {
				cat "/proc/$pid/mountinfo" >&2
				false
			}
		fi
		moat delete --force "flip$i-$U"
		assert_nothing_left "flip$i-$U"
		host_target_untouched
	done
	kill "$FLIPPER"
	wait "$FLIPPER" || true
	FLIPPER=
	echo "$ok of 50 creates succeeded" >&2
	host_target_untouched
	assert_no_process
}

@test "process.cwd outside the rootfs stays inside or is refused" {
	make_host_target
	reset_config '.process.cwd = "/../../../../../tmp" | .process.args = ["pwd"]'
	moat run -b "$BUNDLE" w1-$U
	[ "$status" -eq 0 ]
	[ "$output" = /tmp ]
	assert_clean w1-$U
	# A symlink out: resolved in the rootfs, where the path exists too.
	ln -s "$HOST_TARGET" "$BUNDLE/rootfs/cwd-link"
	reset_config '.process.cwd = "/cwd-link" | .process.args = ["sh", "-c", "ls; touch x"]'
	moat run -b "$BUNDLE" w2-$U
	[[ "$output" != *host-marker* ]]
	assert_clean w2-$U
	host_target_untouched
	# A symlink to a path that exists only on the host.
	ln -s /etc "$BUNDLE/rootfs/cwd-etc"
	rm -rf "$BUNDLE/rootfs/etc"
	# Then /proc links, a relative path, a file.
	local cwd
	for cwd in /cwd-etc /proc/self/fd/3 /proc/self/cwd relative/dir /bin/busybox; do
		reset_config --arg c "$cwd" '.process.cwd = $c'
		refuse run "w3-$U" -b "$BUNDLE"
		assert_clean "w3-$U"
	done
}

@test "linux.cgroupsPath with .. is refused and writes nothing outside" {
	local before_root before_cg p
	before_root="$(ls -A /)"
	before_cg="$(find /sys/fs/cgroup -maxdepth 2 -not -type d | sort)"
	for p in '..' '../../..' '/../../..' 'a/../../b' '/moat/../..' '../../../tmp/evil' 'x/./y'; do
		reset_config --arg p "$p" '.linux.cgroupsPath = $p'
		refuse create cg1-$U -b "$BUNDLE"
		assert_clean cg1-$U
	done
	[ "$(ls -A /)" = "$before_root" ]
	[ "$(find /sys/fs/cgroup -maxdepth 2 -not -type d | sort)" = "$before_cg" ]
	[ ! -e /tmp/evil ]
	! ls /sys/fs/cgroup/*/tmp/evil 2>/dev/null
}

@test "empty process.args, unknown rlimits, missing or relative hooks" {
	reset_config '.process.args = []'
	refuse create h1-$U -b "$BUNDLE"
	assert_clean h1-$U
	reset_config 'del(.process.args)'
	refuse create h1-$U -b "$BUNDLE"
	assert_clean h1-$U
	reset_config '.process.args = [""]'
	refuse run h1-$U -b "$BUNDLE"
	assert_clean h1-$U
	for t in RLIMIT_BOGUS rlimit_nofile "" NOFILE; do
		reset_config --arg t "$t" '.process.rlimits = [{"type": $t, "hard": 1, "soft": 1}]'
		refuse create h1-$U -b "$BUNDLE"
		assert_clean h1-$U
	done
	for kind in prestart createRuntime createContainer; do
		reset_config --arg k "$kind" '.hooks = {($k): [{"path": "/nonexistent/hook"}]}'
		refuse create h2-$U -b "$BUNDLE"
		[[ "$stderr" == *"No such file"* ]]
		assert_clean h2-$U
		reset_config --arg k "$kind" '.hooks = {($k): [{"path": "bin/true"}]}'
		refuse create h2-$U -b "$BUNDLE"
		[[ "$stderr" == *absolute* ]]
		assert_clean h2-$U
		reset_config --arg k "$kind" '.hooks = {($k): [{"path": "/bin/false"}]}'
		refuse create h2-$U -b "$BUNDLE"
		assert_clean h2-$U
	done
}

@test "a console socket that does not exist, a pid file in a missing directory" {
	reset_config '.process.terminal = true'
	refuse create t1-$U -b "$BUNDLE" --console-socket "$BUNDLE/no-such.sock"
	[[ "$stderr" == *"console socket"* ]]
	assert_clean t1-$U
	reset_config '.process.terminal = true'
	refuse create t1-$U -b "$BUNDLE" --console-socket "$BUNDLE/no-dir/x.sock"
	assert_clean t1-$U
	touch "$BUNDLE/not-a-socket"
	refuse create t1-$U -b "$BUNDLE" --console-socket "$BUNDLE/not-a-socket"
	assert_clean t1-$U
	reset_config
	refuse create t2-$U -b "$BUNDLE" --pid-file "$BUNDLE/no-dir/pid"
	[[ "$stderr" == *"pid file"* ]]
	assert_clean t2-$U
	refuse create t2-$U -b "$BUNDLE" --pid-file /proc/no-such-dir/pid
	assert_clean t2-$U
}

@test "duplicate create of a live id keeps the first" {
	update_config '.process.args = ["sleep", "100"]'
	moat create -b "$BUNDLE" live-$U
	[ "$status" -eq 0 ]
	moat state live-$U
	pid="$(echo "$output" | jq -r .pid)"
	refuse create live-$U -b "$BUNDLE"
	[[ "$stderr" == *"already exists"* ]]
	moat state live-$U
	[ "$(echo "$output" | jq -r .status)" = created ]
	[ "$(echo "$output" | jq -r .pid)" = "$pid" ]
	[ -d "/proc/$pid" ]
	moat delete live-$U
	[ "$status" -eq 0 ]
	assert_clean live-$U
}

@test "every verb on an unknown id: container does not exist" {
	local verb
	for verb in start state kill delete pause resume ps events; do
		refuse "$verb" ghost
		[ "$stderr" = "moat: $verb ghost: container \"ghost\" does not exist" ]
	done
	# Issue 15: delete --force of an unknown id succeeds, as runc's and
	# crun's (an engine's cleanup may run twice); cli.bats tests it.
	run "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" delete --force ghost
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	refuse kill ghost --all
	refuse update ghost --pids-limit 10
	[[ "$stderr" == *'container "ghost" does not exist'* ]]
	# exec keeps runc's 255 for its own failures: without --detach its exit
	# status is the process's, so 1 would be ambiguous.
	WANT_STATUS=255 ID_IN_ARGS=1 refuse exec ghost --detach ghost true
	[[ "$stderr" == *'container "ghost" does not exist'* ]]
	# The same with a state root that does not exist at all.
	rm -rf "$ROOT"
	refuse state ghost
	[[ "$stderr" == *'container "ghost" does not exist'* ]]
	assert_root_empty
}

@test "a corrupt state dir: state says why, delete --force removes it all" {
	update_config '.process.args = ["sleep", "100"]'
	moat create -b "$BUNDLE" bad-$U
	[ "$status" -eq 0 ]
	pid="$(jq -r .pid "$ROOT/bad-$U/state.json")"
	head -c 30 "$ROOT/bad-$U/state.json" >"$BUNDLE/trunc"
	cp "$BUNDLE/trunc" "$ROOT/bad-$U/state.json"
	refuse state bad-$U
	[[ "$stderr" == *state.json* ]]
	refuse start bad-$U
	refuse delete bad-$U
	moat delete --force bad-$U
	[ "$status" -eq 0 ]
	assert_clean bad-$U
	# Its init is gone (a zombie at most, until its new parent reaps it).
	state="$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || echo gone)"
	[ "$state" = Z ] || [ "$state" = gone ]

	# Other kinds of damage.
	for damage in empty garbage dir missing; do
		moat create -b "$BUNDLE" bad2-$U
		[ "$status" -eq 0 ]
		case "$damage" in
		empty) : >"$ROOT/bad2-$U/state.json" ;;
		garbage) head -c 4096 /dev/urandom >"$ROOT/bad2-$U/state.json" ;;
		dir) rm "$ROOT/bad2-$U/state.json" && mkdir "$ROOT/bad2-$U/state.json" ;;
		missing) rm "$ROOT/bad2-$U/state.json" "$ROOT/bad2-$U/policy.json" ;;
		esac
		refuse state bad2-$U
		moat delete --force bad2-$U
		[ "$status" -eq 0 ]
		assert_clean bad2-$U
	done

	# A cgroup of config.json's own naming is found from the final spec
	# saved in policy.json.
	update_config --arg p "/moat-bad3-$U" '.linux.cgroupsPath = $p'
	moat create -b "$BUNDLE" bad3-$U
	[ "$status" -eq 0 ]
	[ -n "$(find /sys/fs/cgroup -maxdepth 3 -type d -name "moat-bad3-$U")" ]
	head -c 4096 /dev/urandom >"$ROOT/bad3-$U/state.json"
	moat delete --force bad3-$U
	[ "$status" -eq 0 ]
	assert_clean bad3-$U
	[ -z "$(find /sys/fs/cgroup -maxdepth 3 -type d -name "moat-bad3-$U")" ]
}

@test "a state root another user owns or may write to is refused by every verb, nothing written through it" {
	local root="$BUNDLE/shared-root" target="$BUNDLE/target"
	SHARED_ROOT=$root
	mkdir "$root" "$target"
	# What that user could plant: the cache moat writes to, as a link.
	ln -s "$target" "$root/.cache"
	chown -h 65534:65534 "$root" "$root/.cache"
	ROOT="$root" refuse create c1-$U -b "$BUNDLE"
	[[ "$stderr" == "moat: create c1-$U: state root $root: owned by uid 65534, not by moat's (0): another user could plant state or links in it" ]]
	[ -z "$(ls -A "$target")" ]
	[ ! -e "$root/c1-$U" ]
	# A state dir planted there is not acted on either.
	mkdir "$root/c2-$U"
	echo '{"ociVersion": "1.2.0", "id": "c2", "pid": 1, "bundle": "/"}' >"$root/c2-$U/state.json"
	ROOT="$root" refuse state c2-$U
	[[ "$stderr" == *"state root $root: owned by uid 65534"* ]]
	ROOT="$root" refuse delete c2-$U --force
	[ -e "$root/c2-$U/state.json" ]
	run "$MOAT" --root "$root" list
	[ "$status" -eq 1 ]
	[[ "$output" == "moat: list: state root $root: owned by uid 65534"* ]]
	chown 0:0 "$root"
	chmod 0777 "$root"
	ROOT="$root" refuse create c1-$U -b "$BUNDLE"
	[[ "$stderr" == "moat: create c1-$U: state root $root: writable by group or others (mode 0777): another user could plant state or links in it" ]]
	[ -z "$(ls -A "$target")" ]
	chmod 0755 "$root"
	rm -rf "$root" "$target"
}
