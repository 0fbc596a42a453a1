# shellcheck shell=bash
# shellcheck disable=SC2034  # results for the tests that load this file
# The kubelet's side of the CRI, enough to run a pod with a RuntimeClass
# handler and look inside: requests built as JSON here, sent by
# cri/cri_client.py through grpcio with the CRI's messages (cri/cri.proto),
# as the kubelet sends them to containerd. crictl is not packaged in
# Debian 12.

CRI_CLIENT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/cri/cri_client.py"
# cri_pb2.py, made by protoc once per run.
export CRI_PB_DIR="${BATS_RUN_TMPDIR:-${TMPDIR:-/tmp}}/cri-pb"

# cri_call METHOD JSON: RuntimeService/METHOD; the reply (JSON) in
# $cri_reply, the gRPC error in $cri_error. Status 1 on a gRPC error.
cri_call() {
	local errf="$BATS_TEST_TMPDIR/cri.err"
	cri_error=""
	if ! cri_reply=$(printf '%s' "$2" | "$CRI_CLIENT" "$CONTAINERD_SOCK" "$1" 2>"$errf"); then
		cri_error=$(cat "$errf")
		echo "# cri $1 -> $cri_error" >&2
		return 1
	fi
	echo "# cri $1 -> ok" >&2
}

# --- the messages the tests send ---
# NamespaceOption.pid of the pod and its containers: $CRI_PID_MODE, 1
# (CONTAINER) unless set; 0 (POD) is shareProcessNamespace.
# pod_config NAME LOGDIR NETWORK(0 pod, 2 node) PRIVILEGED(0/1) [NAMESERVER]
#   [ANNOTATION_KEY ANNOTATION_VALUE]
pod_config() {
	jq -cn --arg name "$1" --arg logdir "$2" --argjson net "$3" --argjson priv "$4" \
		--arg ns "${5:-}" --arg key "${6:-}" --arg value "${7:-}" \
		--arg parent "/$CGROUP_PODS" --argjson pid "${CRI_PID_MODE:-1}" '
		{metadata: {name: $name, uid: "uid-\($name)", namespace: "default"},
		 log_directory: $logdir,
		 linux: {cgroup_parent: $parent,
			security_context: {namespace_options: {network: $net, pid: $pid},
				privileged: ($priv == 1)}}}
		| if $net == 2 then . else .hostname = $name end
		| if $ns == "" then . else .dns_config = {servers: [$ns]} end
		| if $key == "" then . else .annotations = {($key): $value} end'
}

# json_argv ARGV...: the words as a JSON array (after --, jq takes a word
# like -c for an argument, not for its own option).
json_argv() {
	jq -cn '$ARGS.positional' --args -- "$@"
}

# container_config NAME IMAGE PRIVILEGED(0/1) ARGV...
container_config() {
	local name=$1 image=$2 priv=$3
	shift 3
	jq -cn --arg name "$name" --arg image "$image" --argjson priv "$priv" \
		--argjson pid "${CRI_PID_MODE:-1}" --argjson argv "$(json_argv "$@")" '
		{metadata: {name: $name}, image: {image: $image}, command: $argv,
		 log_path: "\($name).log",
		 linux: {security_context: {namespace_options: {pid: $pid},
			privileged: ($priv == 1)}}}'
}

# cri_run_pod HANDLER POD_CONFIG: the sandbox id in $pod_id.
cri_run_pod() {
	cri_call RunPodSandbox "$(jq -cn --argjson c "$2" --arg h "$1" '{config: $c, runtime_handler: $h}')" ||
		return 1
	pod_id=$(jq -r .pod_sandbox_id <<<"$cri_reply")
}

# cri_start_container POD_CONFIG CONTAINER_CONFIG: id in $ctr_id.
cri_start_container() {
	cri_call CreateContainer "$(jq -cn --arg p "$pod_id" --argjson c "$2" --argjson s "$1" \
		'{pod_sandbox_id: $p, config: $c, sandbox_config: $s}')" || return 1
	ctr_id=$(jq -r .container_id <<<"$cri_reply")
	cri_call StartContainer "$(jq -cn --arg c "$ctr_id" '{container_id: $c}')"
}

# cri_exec_sync ID ARGV...: $exec_stdout, $exec_exit.
cri_exec_sync() {
	local id=$1
	shift
	cri_call ExecSync "$(jq -cn --arg c "$id" --argjson argv "$(json_argv "$@")" \
		'{container_id: $c, cmd: $argv, timeout: 20}')" ||
		return 1
	exec_stdout=$(jq -j .stdout <<<"$cri_reply")
	exec_exit=$(jq -r .exit_code <<<"$cri_reply")
}

# cri_container_state ID: "STATE EXIT" (0 created, 1 running, 2 exited).
cri_container_state() {
	cri_call ContainerStatus "$(jq -cn --arg c "$1" '{container_id: $c}')" || return 1
	jq -r '"\(.status.state) \(.status.exit_code)"' <<<"$cri_reply"
}

cri_remove_pod() {
	local req
	req=$(jq -cn --arg p "$1" '{pod_sandbox_id: $p}')
	cri_call StopPodSandbox "$req" && cri_call RemovePodSandbox "$req"
}
