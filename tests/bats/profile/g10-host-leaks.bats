#!/usr/bin/env bats
# G10: nothing of the host leaks in. No file descriptors beyond 0, 1, 2 and
# those passed with --preserve-fds; no environment variable that looks like
# a credential; no way from the container to a moat process's exe, fds or
# environment (the runc CVE-2019-5736 and CVE-2024-21626 class).

load profile_helpers

GUARANTEE=g10

setup() {
	requires_root
}

teardown() {
	teardown_profile
}

SECRETS='"AWS_SECRET_ACCESS_KEY=x-aws-secret-value", "GITHUB_TOKEN=y-github-token-value",
	"DB_PASSWORD=z-db-password-value", "MY_API_KEY=k-api-key-value", "FOO=bar"'

# The container's pid 1 (a sleep: a shell would hold fds of its own for
# redirections and command substitutions): its fds, then its environment,
# sorted. Read through /proc from the host: a process moat exec starts has
# a Landlock domain of its own (G14), which may not read another domain's
# /proc/PID/environ.
pid1_fds_and_env() {
	local pid
	pid=$("$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" state "$1" | jq -r .pid)
	output="fds: $(cd "/proc/$pid/fd" && echo *)
$(tr '\0' '\n' <"/proc/$pid/environ" | sort)"
	mapfile -t lines <<<"$output"
}

# moat is called with extra fds of the caller open (5 and 7, and bats' own):
# none may reach the container.
check_fds_and_env() {
	update_config ".process.env += [$SECRETS] | .process.args = [\"sleep\", \"1000\"]"
	next_id
	moat run -d -b "$BUNDLE" "$CID" 5<"$BUNDLE/config.json" 7>>"$BUNDLE/extra-fd"
	[ "$status" -eq 0 ]
	pid1_fds_and_env "$CID"
	[ "${lines[0]}" = "fds: 0 1 2" ]
	has_line FOO=bar
	[[ "$output" == *$'\nPATH=/'* ]]
	assert_no_secrets
}

assert_no_secrets() {
	local s
	for s in secret-value token-value password-value api-key-value \
		AWS_SECRET_ACCESS_KEY GITHUB_TOKEN DB_PASSWORD MY_API_KEY; do
		[[ "$output" != *"$s"* ]] || {
			echo "leaked: $s" >&2
			return 1
		}
	done
}

@test "G10 spec: only fds 0 1 2, credential env removed, PATH and FOO kept" {
	prepare_bundle spec
	check_fds_and_env
}

@test "G10 docker.19 (uid 1): only fds 0 1 2, credential env removed" {
	prepare_bundle docker.19
	check_fds_and_env
}

@test "G10 permissive (its own secrets in env): only fds 0 1 2, credential env removed" {
	prepare_bundle permissive
	update_config '.process.env |= map(select(test("^(AWS_SECRET|GITHUB_TOKEN|DB_PASSWORD|FOO)=") | not))'
	check_fds_and_env
}

@test "G10 --preserve-fds 1: fd 3 is passed on, nothing else" {
	prepare_bundle spec
	echo passed-on >"$BUNDLE/passed"
	next_id
	update_config '.process.args = ["sleep", "1000"]'
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" create --preserve-fds 1 -b "$BUNDLE" "$CID" \
		3<"$BUNDLE/passed" 5<"$BUNDLE/config.json" >/dev/null 2>&1 </dev/null
	moat start "$CID"
	[ "$status" -eq 0 ]
	pid1_fds_and_env "$CID"
	[ "${lines[0]}" = "fds: 0 1 2 3" ]
	pid=$("$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" state "$CID" | jq -r .pid)
	[ "$(cat "/proc/$pid/fd/3")" = passed-on ]
}

@test "G10 exec: only fds 0 1 2 and no credentials from --env or process.json" {
	prepare_bundle permissive
	start_sleeper
	moat exec --detach "$CID" sleep 999 5<"$BUNDLE/config.json"
	[ "$status" -eq 0 ]
	moat exec "$CID" sh -c 'for p in /proc/[0-9]*; do
			[ "$(cat $p/cmdline | tr "\0" " ")" = "sleep 999 " ] && cd $p/fd && echo "fds:" *
		done'
	[ "$output" = "fds: 0 1 2" ]
	moat exec --env GH_TOKEN=exec-token-value --env BAR=baz "$CID" env
	[ "$status" -eq 0 ]
	has_line BAR=baz
	[[ "$output" != *GH_TOKEN* ]]
	[[ "$output" != *exec-token-value* ]]
	assert_no_secrets
	jq -n '{args: ["env"], cwd: "/", user: {uid: 0, gid: 0},
		env: ["PATH=/bin", "NPM_TOKEN=npm-token-value", "SERVICE_PASSWORD=pw-value", "OK=1"]}' >"$BUNDLE/process.json"
	moat exec --process "$BUNDLE/process.json" "$CID"
	[ "$status" -eq 0 ]
	has_line OK=1
	[[ "$output" != *NPM_TOKEN* ]]
	[[ "$output" != *pw-value* ]]
}

@test "G10 the payload cannot open its own exe, or its init's, for writing" {
	prepare_bundle permissive
	in_container '(: >>/proc/self/exe) 2>&1; (: >>/proc/1/exe) 2>&1; echo done'
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ /proc/self/exe:\ (Read-only\ file\ system|Text\ file\ busy|Permission\ denied)$ ]]
	[[ "${lines[1]}" =~ /proc/1/exe:\ (Read-only\ file\ system|Text\ file\ busy|Permission\ denied)$ ]]
	[ "${lines[2]}" = done ]
}

@test "G10 a created container's init (moat itself) is out of reach from the container" {
	prepare_bundle permissive
	next_id
	update_config '.process.args = ["sleep", "1000"]'
	# The environment moat runs with must not be readable either.
	MOAT_G10_HOST_ONLY=host-env-value moat create -b "$BUNDLE" --pid-file "$BUNDLE/$CID.pid" "$CID"
	[ "$status" -eq 0 ]
	[ "$(readlink "/proc/$(cat "$BUNDLE/$CID.pid")/exe")" != /bin/busybox ]
	# Until start, pid 1 of the container is moat, holding host fds (the
	# state dir, cgroup dirs, the audit log): exec a prober next to it.
	moat exec "$CID" sh -c '
		echo "pid 1 is $(cat /proc/1/comm)"
		readlink /proc/1/exe 2>&1 || true
		(: >>/proc/1/exe) 2>&1
		cat /proc/1/environ 2>&1
		ls /proc/1/cwd/ 2>&1; ls /proc/1/root/ 2>&1
		for fd in /proc/1/fd/*; do
			readlink $fd 2>&1; (: <$fd) 2>&1; (: >>$fd) 2>&1
		done
		echo done'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "pid 1 is moat" ]
	[ "${lines[-1]}" = done ]
	# Every other line is a refusal.
	for l in "${lines[@]:1:${#lines[@]}-2}"; do
		[[ "$l" == *"Permission denied"* ]] || {
			echo "reached: $l" >&2
			return 1
		}
	done
	[[ "$output" != *host-env-value* ]]
	[[ "$output" != */sys/fs/cgroup* ]]
}

@test "G10 from the container, /proc shows no host process" {
	prepare_bundle permissive
	in_container 'for p in /proc/[0-9]*; do echo "${p#/proc/} $(cat $p/comm)"; done'
	[ "$status" -eq 0 ]
	for l in "${lines[@]}"; do
		read -r pid comm <<<"$l"
		# The script's shell (pid 1), the subshells and cat it forks.
		[[ "$comm" =~ ^(sh|cat)$ ]] || {
			echo "host process visible: $l" >&2
			return 1
		}
	done
}

@test "G10: a host sysctl config.json asks for is not set, and run says so on stderr" {
	prepare_bundle spec
	update_config '.linux.sysctl = {"kernel.core_pattern": "|/bin/evil", "kernel.msgmax": "8192"}
		| .process.args = ["sh", "-c", "cat /proc/sys/kernel/core_pattern /proc/sys/kernel/msgmax"]'
	next_id
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" run -b "$BUNDLE" "$CID" >"$BUNDLE/out" 2>"$BUNDLE/err"
	cat "$BUNDLE/out" "$BUNDLE/err" >&2
	[ "$(sed -n 1p "$BUNDLE/out")" != "|/bin/evil" ]
	[ "$(sed -n 2p "$BUNDLE/out")" = 8192 ]
	grep -qxF "moat: run $CID: warning: linux.sysctl.kernel.core_pattern: asked |/bin/evil, ignored (not among the sysctls the profile allows: moat profile show lists them)" "$BUNDLE/err"
	# The allowed one is not told.
	! grep -q msgmax "$BUNDLE/err"
}
