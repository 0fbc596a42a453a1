#!/usr/bin/env bats
# G8: moat's built-in seccomp filter applies whatever config.json says, and
# stacks on the engine's own filter. What it denies on purpose returns EPERM;
# clone3 and syscalls it does not know return ENOSYS.

load profile_helpers

GUARANTEE=g8

setup() {
	requires_root
}

teardown() {
	teardown_profile
}

# sysprobe OP, and the exact line it must print. Each of these works for an
# unfiltered root without capabilities (unshare -U, io_uring, keyctl, AF_ALG,
# a syscall newer than the filter ...), so each line shows the filter.
PROBES=(
	"unshare user|unshare(CLONE_NEWUSER): Operation not permitted (errno 1)"
	"unshare net|unshare(CLONE_NEWNET): Operation not permitted (errno 1)"
	"clone user|clone(CLONE_NEWUSER): Operation not permitted (errno 1)"
	"clone3|clone3: Function not implemented (errno 38)"
	"io_uring|io_uring_setup: Operation not permitted (errno 1)"
	"userfaultfd|userfaultfd: Operation not permitted (errno 1)"
	"bpf|bpf: Operation not permitted (errno 1)"
	"perf_event_open|perf_event_open: Operation not permitted (errno 1)"
	"keyctl|keyctl: Operation not permitted (errno 1)"
	"ptrace|ptrace(PTRACE_TRACEME): Operation not permitted (errno 1)"
	"mount|mount: Operation not permitted (errno 1)"
	"kexec|kexec_load: Operation not permitted (errno 1)"
	"init_module|init_module: Operation not permitted (errno 1)"
	"socket vsock|socket(AF_VSOCK): Operation not permitted (errno 1)"
	"socket alg|socket(AF_ALG): Operation not permitted (errno 1)"
	"socket packet|socket(AF_PACKET): Operation not permitted (errno 1)"
	"socket netlink-audit|socket(AF_NETLINK, NETLINK_AUDIT): Operation not permitted (errno 1)"
	"socket netlink-route|ok"
	"socket unix|ok"
	"fork|ok"
	"syscall 1000|syscall(1000): Function not implemented (errno 38)"
	# file_setattr (Linux 6.17): the kernel answers EINVAL, the filter,
	# which does not know it, ENOSYS.
	"syscall 469|syscall(469): Function not implemented (errno 38)"
)

# One container runs every probe; $1: the Seccomp_filters count expected.
check_filter() {
	local filters="$1" script="" p op i
	add_testbin sysprobe
	for p in "${PROBES[@]}"; do
		script="$script sysprobe ${p%%|*};"
	done
	in_container "$script grep -E '^Seccomp(_filters)?:' /proc/self/status"
	[ "${#lines[@]}" -eq $((${#PROBES[@]} + 2)) ]
	for i in "${!PROBES[@]}"; do
		op="${PROBES[$i]}"
		[ "${lines[$i]}" = "${op#*|}" ] || {
			echo "sysprobe ${op%%|*}: got '${lines[$i]}', want '${op#*|}'" >&2
			return 1
		}
	done
	[[ "${lines[$i + 1]}" =~ ^Seccomp:[[:space:]]+2$ ]]
	[[ "${lines[$i + 2]}" =~ ^Seccomp_filters:[[:space:]]+$filters$ ]]
}

@test "G8 spec (no seccomp in config.json): the built-in filter alone" {
	prepare_bundle spec
	[ "$(jq '.linux.seccomp' "$BUNDLE/config.json")" = null ]
	check_filter 1
}

@test "G8 docker.19 (Docker's own filter): both filters stacked" {
	prepare_bundle docker.19
	# Root, so that what fails fails because of the filters.
	update_config '.process.user = {"uid": 0, "gid": 0}'
	[ "$(jq -r '.linux.seccomp.defaultAction' "$BUNDLE/config.json")" = SCMP_ACT_ERRNO ]
	check_filter 2
}

@test "G8 permissive (no seccomp, all caps): the built-in filter alone" {
	prepare_bundle permissive
	check_filter 1
}

@test "G8 a config filter that allows everything does not weaken it" {
	prepare_bundle spec
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "flags": ["SECCOMP_FILTER_FLAG_SPEC_ALLOW"], "syscalls": [{"names": ["unshare", "mount", "keyctl", "bpf", "io_uring_setup", "clone3"], "action": "SCMP_ACT_ALLOW"}]}'
	check_filter 2
}

@test "G8 exec: a process moat exec starts has both filters and the same answers" {
	prepare_bundle docker.19
	update_config '.process.user = {"uid": 0, "gid": 0}'
	add_testbin sysprobe
	start_sleeper
	moat exec "$CID" grep -E '^Seccomp(_filters)?:' /proc/self/status
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^Seccomp:[[:space:]]+2$ ]]
	[[ "${lines[1]}" =~ ^Seccomp_filters:[[:space:]]+2$ ]]
	for p in "${PROBES[@]}"; do
		# shellcheck disable=SC2086
		moat exec "$CID" sysprobe ${p%%|*}
		[ "$output" = "${p#*|}" ] || {
			echo "exec sysprobe ${p%%|*}: got '$output', want '${p#*|}'" >&2
			return 1
		}
	done
}

@test "G8 exec --process (noNewPrivileges false) is filtered too" {
	prepare_bundle spec
	add_testbin sysprobe
	start_sleeper
	jq -n '{args: ["sysprobe", "unshare", "user"], cwd: "/", user: {uid: 0, gid: 0},
		env: ["PATH=/bin"], noNewPrivileges: false}' >"$BUNDLE/process.json"
	moat exec --process "$BUNDLE/process.json" "$CID"
	[ "$output" = "unshare(CLONE_NEWUSER): Operation not permitted (errno 1)" ]
}

# Another build of this moat: the same code, another GNU build-id (a
# patched tree, a build from a tarball: the same version and commit).
other_build() {
	python3 - "$MOAT" "$1" <<'PY'
import os, struct, sys
src, dst = sys.argv[1:3]
data = open(src, "rb").read()
note = struct.pack("<III", 4, 20, 3) + b"GNU\0"
at = data.find(note)
assert at >= 0 and data.find(note, at + 1) < 0, "one build-id note"
at += len(note)
flipped = bytes(b ^ 0xFF for b in data[at:at + 20])
open(dst, "wb").write(data[:at] + flipped + data[at + 20:])
os.chmod(dst, 0o755)
PY
}

# Every built-in filter cached under $1 made to allow everything, its
# checksum made right: what a build that compiled it otherwise would leave.
allow_all_in_cache() {
	python3 - "$1" <<'PY'
import glob, struct, sys
def fnv1a64(data, h=0xCBF29CE484222325):
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h
ret_allow = struct.pack("<HBBI", 0x06, 0, 0, 0x7FFF0000)
n = 0
for path in glob.glob(sys.argv[1] + "/seccomp-*.bpf"):
    data = open(path, "rb").read()
    if data[:8] == b"MOATBPF1":
        open(path, "wb").write(data[:16] + struct.pack("<QQ", fnv1a64(ret_allow), 1) + ret_allow)
        n += 1
print(n)
PY
}

@test "G8 a built-in filter another moat build cached is not taken for this build's" {
	prepare_bundle spec
	add_testbin sysprobe
	other_build "$BUNDLE/moat-other"
	MOAT="$BUNDLE/moat-other" in_container 'true'
	[ "$status" -eq 0 ]
	[ "$(allow_all_in_cache "$ROOT/.cache")" -ge 1 ]
	in_container 'sysprobe unshare user; sysprobe keyctl; sysprobe bpf'
	[ "${lines[0]}" = "unshare(CLONE_NEWUSER): Operation not permitted (errno 1)" ]
	[ "${lines[1]}" = "keyctl: Operation not permitted (errno 1)" ]
	[ "${lines[2]}" = "bpf: Operation not permitted (errno 1)" ]
}
