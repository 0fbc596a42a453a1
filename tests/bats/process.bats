#!/usr/bin/env bats
# process in config.json: user, groups, umask, cwd, env, args, rlimits,
# and what the profile enforces whatever it says (G3, G4, G7, G10).

load helpers

setup() {
	requires_root
	setup_bundle
	ID="t-$BATS_TEST_NUMBER-$$"
}

teardown() {
	teardown_bundle
}

# The value of a /proc/self/status field in the container's output.
status_field() {
	echo "$output" | grep "^$1:" | cut -f 2- | xargs
}

@test "signals: the payload starts with no signal ignored or blocked and umask 0022, whatever moat's caller had (run and exec)" {
	update_config '.process.args = ["cat", "/proc/self/status"]'
	moat_from_leaky_caller run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(status_field SigIgn)" = 0000000000000000 ]
	[ "$(status_field SigBlk)" = 0000000000000000 ]
	update_config '.process.args = ["sh", "-c", "umask"]'
	moat_from_leaky_caller run -b "$BUNDLE" "$ID"
	[ "$output" = 0022 ]

	update_config '.process.args = ["sleep", "30"]'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	moat_from_leaky_caller exec "$ID" cat /proc/self/status
	[ "$status" -eq 0 ]
	[ "$(status_field SigIgn)" = 0000000000000000 ]
	[ "$(status_field SigBlk)" = 0000000000000000 ]
	moat_from_leaky_caller exec "$ID" sh -c umask
	[ "$output" = 0022 ]
}

@test "signals: a shell in the container traps HUP though moat was started under nohup" {
	update_config '.process.args = ["sh", "-c", "trap \"echo trapped\" HUP; kill -HUP $$; echo after"]'
	moat_from_leaky_caller run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'trapped\nafter')" ]
	moat delete --force "$ID"
	out="$BUNDLE/nohup.out"
	nohup "$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" run -b "$BUNDLE" "$ID" >"$out" 2>&1 </dev/null
	[ "$(cat "$out")" = "$(printf 'trapped\nafter')" ]
}

@test "user: uid, gid and additionalGids are the process's ids" {
	update_config '.process.user = {"uid": 1000, "gid": 1001, "additionalGids": [10, 20]}'
	run_in_container 'cat /proc/self/status'
	[ "$status" -eq 0 ]
	[ "$(status_field Uid)" = "1000 1000 1000 1000" ]
	[ "$(status_field Gid)" = "1001 1001 1001 1001" ]
	[ "$(status_field Groups)" = "10 20" ]
}

@test "user: without additionalGids the process has no supplementary groups (not the host's)" {
	update_config '.process.user = {"uid": 0, "gid": 0}'
	run_in_container 'cat /proc/self/status'
	[ "$status" -eq 0 ]
	[ -z "$(status_field Groups)" ]
}

@test "umask: config.json's umask applies, 0022 by default" {
	update_config '.process.user.umask = 63'
	run_in_container 'umask; touch /tmp/f; mkdir /tmp/d; stat -c %a /tmp/f /tmp/d'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0077 ]
	[ "${lines[1]}" = 600 ]
	[ "${lines[2]}" = 700 ]

	update_config 'del(.process.user.umask)'
	run_in_container 'umask'
	[ "$output" = 0022 ]
}

@test "cwd: the process starts there; a missing one is created in the rootfs" {
	update_config '.process.cwd = "/work/here"'
	run_in_container 'readlink /proc/self/cwd'
	[ "$status" -eq 0 ]
	[ "$output" = /work/here ]
	[ -d "$BUNDLE/rootfs/work/here" ]
}

@test "cwd: a symlink leading out of the rootfs resolves inside it" {
	echo inside >"$BUNDLE/rootfs/etc/moat-marker"
	ln -s ../../../../../../../../etc "$BUNDLE/rootfs/escape"
	update_config '.process.cwd = "/escape"'
	run_in_container 'readlink /proc/self/cwd; cat ./moat-marker; ls'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = /etc ]
	[ "${lines[1]}" = inside ]
	# The rootfs's /etc (group, moat-marker, passwd), not the host's.
	[ "${#lines[@]}" -eq 5 ]
}

@test "cwd: a relative cwd is refused with a clear error, nothing left" {
	update_config '.process.cwd = "relative/dir"'
	moat create -b "$BUNDLE" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *cwd* ]]
	assert_nothing_left "$ID"
}

@test "env: exactly config.json's variables, minus the credential-looking ones" {
	update_config '.process.env = ["PATH=/bin", "FOO=bar", "WITH_EQUALS=a=b", "GITHUB_TOKEN=ghp_x", "DB_PASSWORD=hunter2", "AWS_SECRET_ACCESS_KEY=k"]
		| .process.args = ["env"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | sort | xargs)" = "FOO=bar PATH=/bin WITH_EQUALS=a=b" ]
}

@test "args: the payload gets exactly its argv; PATH from env finds it" {
	mkdir -p "$BUNDLE/rootfs/opt/bin"
	cat >"$BUNDLE/rootfs/opt/bin/showargs" <<-'EOF'
		#!/bin/sh
		for a in "$@"; do echo "[$a]"; done
	EOF
	chmod 755 "$BUNDLE/rootfs/opt/bin/showargs"
	update_config '.process.env = ["PATH=/opt/bin:/bin"] | .process.args = ["showargs", "a b", "", "*"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "[a b]" ]
	[ "${lines[1]}" = "[]" ]
	[ "${lines[2]}" = "[*]" ]
}

@test "args: a relative command with a slash is resolved against process.cwd, as runc does" {
	update_config '.process.cwd = "/bin" | .process.args = ["./echo", "from-cwd"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = from-cwd ]
	update_config '.process.cwd = "/" | .process.args = ["bin/echo", "below-root"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = below-root ]
	update_config '.process.cwd = "/tmp" | .process.args = ["./echo"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == *'exec: "./echo": stat ./echo: no such file or directory'* ]]
}

@test "args: a missing executable exits 127 with the message engines match" {
	update_config '.process.args = ["no-such-program"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == *'exec: "no-such-program": executable file not found in $PATH'* ]]
	assert_nothing_left "$ID"

	update_config '.process.args = ["/no/such/program"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"no such file or directory"* ]]
	assert_nothing_left "$ID"
}

@test "args: a directory or a non-executable file: permission denied" {
	touch "$BUNDLE/rootfs/bin/not-exec"
	update_config '.process.args = ["/bin/not-exec"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == *'exec: "/bin/not-exec": permission denied'* ]]
	update_config '.process.args = ["/etc"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == *'exec: "/etc": permission denied'* ]]
}

@test "rlimits: config.json's values apply where they are below the profile's" {
	update_config '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 100, "hard": 200},
		{"type": "RLIMIT_NPROC", "soft": 50, "hard": 60},
		{"type": "RLIMIT_STACK", "soft": 1048576, "hard": 2097152}]'
	run_in_container 'ulimit -Sn; ulimit -Hn; ulimit -Su; ulimit -Hu; ulimit -Ss; ulimit -Hs'
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | xargs)" = "100 200 50 60 1024 2048" ]
}

# In the user namespace (G12) the payload cannot raise a hard limit itself:
# under a systemd service moat's hard RLIMIT_NPROC is often below what
# Podman asks (32768). moat raises it from outside, as runc does (which
# takes CAP_SYS_RESOURCE: a root without it cannot raise one at all).
@test "rlimits: a hard limit above moat's own holds in the user namespace, for run and exec" {
	(($(printf '%d' "0x$(awk '/^CapEff/ {print $2}' /proc/self/status)") >> 24 & 1)) ||
		skip "root here lacks CAP_SYS_RESOURCE"
	# moat itself under a hard RLIMIT_NPROC of 500.
	local real=$MOAT
	MOAT="$BUNDLE/moat-nproc-500"
	printf '#!/bin/sh\nexec prlimit --nproc=500:500 %s "$@"\n' "$real" >"$MOAT"
	chmod 755 "$MOAT"
	update_config '.process.rlimits = [{"type": "RLIMIT_NPROC", "soft": 900, "hard": 1000}]
		| .process.args = ["sleep", "100"]'
	moat run -d -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	wait_status "$ID" running
	moat exec "$ID" sh -c 'cat /proc/1/uid_map; grep "^Max processes" /proc/1/limits'
	[ "$status" -eq 0 ]
	# Really in a user namespace: one block of the pool.
	[ "$(echo "${lines[0]}" | awk '{print $1, $3}')" = "0 65536" ]
	[ "$(echo "${lines[1]}" | awk '{print $3, $4}')" = "900 1000" ]
	jq '.process | .rlimits = [{"type": "RLIMIT_NPROC", "soft": 700, "hard": 800}] | .args = ["sh", "-c", "ulimit -Su; ulimit -Hu"]' \
		"$BUNDLE/config.json" >"$BUNDLE/process.json"
	moat exec -p "$BUNDLE/process.json" "$ID"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | xargs)" = "700 800" ]
	MOAT=$real
}

@test "rlimits: RLIMIT_NOFILE above the profile's cap gets the cap, RLIMIT_CORE is 0" {
	update_config '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 65536, "hard": 1048576},
		{"type": "RLIMIT_CORE", "soft": 1000000, "hard": 1000000}]'
	cap=$("$MOAT" --config "$MOAT_CONFIG" profile show | jq -r .limits.nofile)
	run_in_container 'ulimit -Sn; ulimit -Hn; ulimit -Sc; ulimit -Hc'
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | xargs)" = "$cap $cap 0 0" ]
}

@test "rlimits: with none in config.json the profile's RLIMIT_NOFILE and RLIMIT_CORE 0 still hold" {
	update_config 'del(.process.rlimits)'
	cap=$("$MOAT" --config "$MOAT_CONFIG" profile show | jq -r .limits.nofile)
	run_in_container 'ulimit -Hn; ulimit -Hc'
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | xargs)" = "$cap 0" ]
}

@test "capabilities: every set is empty whatever config.json asks" {
	all='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FOWNER","CAP_KILL","CAP_SETUID","CAP_SETGID","CAP_NET_ADMIN","CAP_NET_RAW","CAP_SYS_ADMIN","CAP_SYS_PTRACE","CAP_SYS_CHROOT","CAP_MKNOD"]'
	update_config --argjson c "$all" \
		'.process.capabilities = {"bounding": $c, "effective": $c, "permitted": $c, "inheritable": $c, "ambient": $c}'
	run_in_container 'cat /proc/self/status; hostname other 2>&1; chown 1:1 /tmp 2>&1; echo end'
	[ "$status" -eq 0 ]
	for set in CapInh CapPrm CapEff CapBnd CapAmb; do
		[ "$(status_field "$set")" = 0000000000000000 ]
	done
	echo "$output" | grep -q "hostname: sethostname: Operation not permitted"
	echo "$output" | grep -q "chown: /tmp: Operation not permitted"
}

@test "no_new_privs is set even when config.json says noNewPrivileges false" {
	update_config '.process.noNewPrivileges = false'
	run_in_container 'cat /proc/self/status'
	[ "$status" -eq 0 ]
	[ "$(status_field NoNewPrivs)" = 1 ]
}

@test "oomScoreAdj: a positive value applies, a negative one becomes 0" {
	update_config '.process.oomScoreAdj = 500'
	run_in_container 'cat /proc/self/oom_score_adj'
	[ "$status" -eq 0 ]
	[ "$output" = 500 ]

	update_config '.process.oomScoreAdj = -900'
	run_in_container 'cat /proc/self/oom_score_adj'
	[ "$status" -eq 0 ]
	[ "$output" = 0 ]
}

@test "no file descriptor of the host leaks into the payload" {
	# ls's own directory fd is 3: anything leaked would show as 4 and up.
	update_config '.process.args = ["ls", "/proc/self/fd"]'
	moat run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | xargs)" = "0 1 2 3" ]
}

@test "--preserve-fds passes exactly the fds asked for" {
	update_config '.process.args = ["sh", "-c", "cat <&3; ls /proc/self/fd | xargs"]'
	echo "from fd 3" >"$BUNDLE/fd3"
	status=0
	"$MOAT" --root "$ROOT" --config "$MOAT_CONFIG" run --preserve-fds 1 -b "$BUNDLE" "$ID" \
		3<"$BUNDLE/fd3" 4<"$BUNDLE/fd3" >"$BUNDLE/out" 2>&1 </dev/null || status=$?
	cat "$BUNDLE/out"
	[ "$status" -eq 0 ]
	[ "$(sed -n 1p "$BUNDLE/out")" = "from fd 3" ]
	# sh's 0-3 and ls's directory fd: no 4 from the caller.
	[ "$(sed -n 2p "$BUNDLE/out")" = "0 1 2 3 4" ]
}
