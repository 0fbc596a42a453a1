# shellcheck shell=bash
# A bundle whose rootfs is the host's /usr, bound read-only, under a few
# symlinks and a minimal /etc (moat refuses to bind /etc), with the agent
# workloads at /workloads: what tests/agent/trace.sh traces and
# tests/bats/profile/g08-agent.bats runs. Usage: agent_bundle DIR MOAT
# [LEVEL]; DIR/config.json is left for the caller's process.args.
agent_bundle() {
	local b="$1" moat="$2" level="${3:-}" rootfs="$1/rootfs"
	local workloads
	workloads="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/workloads"
	mkdir -p "$rootfs"/{proc,dev,sys,tmp,var/tmp,etc,root,usr,workloads}
	for l in bin lib lib64 sbin; do ln -s "usr/$l" "$rootfs/$l"; done
	cp /etc/passwd /etc/group /etc/ld.so.cache "$rootfs/etc/"
	cp -a /etc/alternatives "$rootfs/etc/"
	[ ! -d /etc/python3.11 ] || cp -a /etc/python3.11 "$rootfs/etc/"
	(cd "$b" && "$moat" spec)
	jq --arg w "$workloads" --arg l "$level" '
		.process.terminal = false
		| .process.env = ["PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8"]
		| .mounts += [{"destination": "/usr", "type": "bind", "source": "/usr", "options": ["rbind", "ro"]},
			{"destination": "/workloads", "type": "bind", "source": $w, "options": ["rbind", "ro"]}]
		| if $l != "" then .annotations["run.moat.seccomp"] = $l else . end' \
		"$b/config.json" >"$b/config.json.new"
	mv "$b/config.json.new" "$b/config.json"
}

# The command that runs workload file NAME inside.
agent_command() {
	case "$1" in
	*.py) echo "python3 /workloads/$1" ;;
	*.js) echo "node /workloads/$1" ;;
	*.sh) echo "sh /workloads/$1" ;;
	esac
}
