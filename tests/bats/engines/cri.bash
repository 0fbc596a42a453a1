# shellcheck shell=bash
# shellcheck disable=SC2034  # results for the tests that load this file
# A minimal CRI client (what the kubelet sends containerd), in shell: the
# protobuf messages are written by hand as hex and sent as gRPC over HTTP/2
# with curl. crictl is not packaged in Debian 12; this is enough to run a
# pod with a RuntimeClass handler, as the kubelet does, and look inside.
# Field numbers: k8s.io/cri-api runtime/v1 api.proto.

# --- protobuf, as lowercase hex strings ---
pb_varint() {
	local n=$1 out=""
	while [ "$n" -ge 128 ]; do
		out+=$(printf '%02x' $(((n & 127) | 128)))
		n=$((n >> 7))
	done
	printf '%s%02x' "$out" "$n"
}
# pb_uint FIELD N; pb_bytes FIELD HEX (a nested message); pb_str FIELD STRING
pb_uint() { pb_varint $(($1 << 3)); pb_varint "$2"; }
pb_bytes() { pb_varint $((($1 << 3) | 2)); pb_varint $((${#2} / 2)); printf '%s' "$2"; }
pb_str() { pb_bytes "$1" "$(printf '%s' "$2" | od -An -v -tx1 | tr -d ' \n')"; }
hex_to_bin() { printf '%b' "$(sed 's/../\\x&/g')"; }

# pb_varint_at HEX: decode the varint at offset $pb_i into $pb_val, advance.
pb_varint_at() {
	local b shift=0
	pb_val=0
	while :; do
		b=$((16#${1:pb_i:2}))
		pb_i=$((pb_i + 2))
		pb_val=$((pb_val | ((b & 127) << shift)))
		shift=$((shift + 7))
		[ $b -lt 128 ] && return 0
	done
}

# pb_get HEX FIELD: the first value of FIELD at the top level of a message
# (a number for varints, hex for length-delimited fields); status 1 if none.
pb_get() {
	local hex=$1 want=$2 key pb_i=0 pb_val
	while [ $pb_i -lt ${#hex} ]; do
		pb_varint_at "$hex"
		key=$pb_val
		case $((key & 7)) in
		0)
			pb_varint_at "$hex"
			[ $((key >> 3)) = "$want" ] && { echo "$pb_val"; return 0; }
			;;
		2)
			pb_varint_at "$hex"
			[ $((key >> 3)) = "$want" ] && { echo "${hex:pb_i:pb_val*2}"; return 0; }
			pb_i=$((pb_i + pb_val * 2))
			;;
		1) pb_i=$((pb_i + 16)) ;;
		5) pb_i=$((pb_i + 8)) ;;
		*) return 2 ;;
		esac
	done
	return 1
}
pb_get_str() { pb_get "$1" "$2" | hex_to_bin; }

# cri_call METHOD HEX: RuntimeService/METHOD; the reply's message (hex) in
# $cri_reply, the gRPC error in $cri_error. Status 1 on a gRPC error.
cri_call() {
	local tmp="$BATS_TEST_TMPDIR/cri" status
	printf '00%08x%s' $((${#2} / 2)) "$2" | hex_to_bin >"$tmp.req"
	curl -s --max-time 60 --http2-prior-knowledge --unix-socket "$CONTAINERD_SOCK" \
		-H 'content-type: application/grpc' -H 'te: trailers' \
		--data-binary "@$tmp.req" -D "$tmp.hdr" -o "$tmp.resp" \
		"http://localhost/runtime.v1.RuntimeService/$1" || {
		cri_error="curl failed: $?"
		return 1
	}
	status=$(tr -d '\r' <"$tmp.hdr" | awk -F': ' 'tolower($1) == "grpc-status" { print $2 }' | tail -1)
	cri_error=$(tr -d '\r' <"$tmp.hdr" | awk -F': ' 'tolower($1) == "grpc-message" { print $2 }' | tail -1)
	cri_reply=$(od -An -v -tx1 "$tmp.resp" | tr -d ' \n')
	cri_reply=${cri_reply:10}
	echo "# cri $1 -> grpc-status ${status:-none} ${cri_error}" >&2
	[ "$status" = 0 ]
}

# --- the messages the tests send ---
# NamespaceOption.pid of the pod and its containers: $CRI_PID_MODE, 1
# (CONTAINER) unless set; 0 (POD) is shareProcessNamespace.
# pod_config NAME LOGDIR NETWORK(0 pod, 2 node) PRIVILEGED(0/1) [NAMESERVER]
#   [ANNOTATION_KEY ANNOTATION_VALUE]
pod_config() {
	local meta nsopt sec
	meta=$(pb_str 1 "$1"; pb_str 2 "uid-$1"; pb_str 3 default)
	nsopt=$(pb_uint 1 "$3"; pb_uint 2 "${CRI_PID_MODE:-1}")
	sec=$(pb_bytes 1 "$nsopt"; [ "$4" = 1 ] && pb_uint 6 1)
	pb_bytes 1 "$meta"
	[ "$3" = 2 ] || pb_str 2 "$1"
	pb_str 3 "$2"
	# $5: a nameserver for the pod's resolv.conf (DNSConfig.servers).
	[ -z "${5:-}" ] || pb_bytes 4 "$(pb_str 1 "$5")"
	# $6=$7: a pod annotation (map entry of PodSandboxConfig.annotations).
	[ -z "${6:-}" ] || pb_bytes 7 "$(pb_str 1 "$6"; pb_str 2 "$7")"
	pb_bytes 8 "$(pb_str 1 "/$CGROUP_PODS"; pb_bytes 2 "$sec")"
}

# container_config NAME IMAGE PRIVILEGED(0/1) ARGV...
container_config() {
	local name=$1 image=$2 priv=$3 sec
	shift 3
	pb_bytes 1 "$(pb_str 1 "$name")"
	pb_bytes 2 "$(pb_str 1 "$image")"
	for a in "$@"; do pb_str 3 "$a"; done
	pb_str 11 "$name.log"
	sec=$(pb_bytes 3 "$(pb_uint 2 "${CRI_PID_MODE:-1}")"; [ "$priv" = 1 ] && pb_uint 2 1)
	pb_bytes 15 "$(pb_bytes 2 "$sec")"
}

# cri_run_pod HANDLER POD_CONFIG_HEX: the sandbox id in $pod_id.
cri_run_pod() {
	cri_call RunPodSandbox "$(pb_bytes 1 "$2"; pb_str 2 "$1")" || return 1
	pod_id=$(pb_get_str "$cri_reply" 1)
}

# cri_start_container POD_CONFIG_HEX CONTAINER_CONFIG_HEX: id in $ctr_id.
cri_start_container() {
	cri_call CreateContainer "$(pb_str 1 "$pod_id"; pb_bytes 2 "$2"; pb_bytes 3 "$1")" || return 1
	ctr_id=$(pb_get_str "$cri_reply" 1)
	cri_call StartContainer "$(pb_str 1 "$ctr_id")"
}

# cri_exec_sync ID ARGV...: $exec_stdout, $exec_exit.
cri_exec_sync() {
	local id=$1 req a
	shift
	req=$(pb_str 1 "$id"; for a in "$@"; do pb_str 2 "$a"; done; pb_uint 3 20)
	cri_call ExecSync "$req" || return 1
	exec_stdout=$(pb_get_str "$cri_reply" 1)
	exec_exit=$(pb_get "$cri_reply" 3) || exec_exit=0
}

# cri_container_state ID: "STATE EXIT" (0 created, 1 running, 2 exited).
cri_container_state() {
	local st
	cri_call ContainerStatus "$(pb_str 1 "$1")" || return 1
	st=$(pb_get "$cri_reply" 1)
	echo "$(pb_get "$st" 3 || echo 0) $(pb_get "$st" 7 || echo 0)"
}

cri_remove_pod() {
	cri_call StopPodSandbox "$(pb_str 1 "$1")" && cri_call RemovePodSandbox "$(pb_str 1 "$1")"
}
