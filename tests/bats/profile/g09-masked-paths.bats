#!/usr/bin/env bats
# G9: masked paths read empty (or list nothing) and read-only paths cannot
# be written, whatever linux.maskedPaths and linux.readonlyPaths say (a
# privileged Docker config has neither).

load profile_helpers

GUARANTEE=g9

setup() {
	requires_root
}

teardown() {
	teardown_profile
}

# What helps a kernel exploit (slab and page allocator state, physical and
# I/O maps, the kernel's build notes, crash layout and BTF, debugfs,
# tracefs, module parameters): masked too.
EXPLOIT_FILES="/proc/slabinfo /proc/vmallocinfo /proc/kpageflags /proc/kpagecount"
EXPLOIT_FILES+=" /proc/kpagecgroup /proc/pagetypeinfo /proc/zoneinfo /proc/buddyinfo"
EXPLOIT_FILES+=" /proc/iomem /proc/ioports /proc/key-users /proc/config.gz"
EXPLOIT_FILES+=" /sys/kernel/vmcoreinfo /sys/kernel/notes"
EXPLOIT_DIRS="/sys/kernel/btf /sys/kernel/debug /sys/kernel/tracing /sys/kernel/slab /sys/module"

# Prints, for each masked path that exists (this kernel may lack
# /proc/kcore or /proc/sysrq-trigger), "PATH BYTES" (a file, its first 4 KiB:
# /proc/kpageflags is 8 bytes per page of RAM) or "PATH ENTRIES" (a
# directory), then for each read-only path what opening it for writing
# gets. Opening for append writes nothing, even if allowed; the hostname is
# written back unchanged.
G9_SCRIPT='
	for f in /proc/kcore /proc/keys /proc/timer_list /proc/sched_debug /proc/interrupts /proc/kallsyms '"$EXPLOIT_FILES"'; do
		[ -e $f ] || continue
		echo "$f $(head -c 4096 $f 2>/dev/null | wc -c)"
	done
	for d in /sys/firmware /proc/acpi /proc/scsi '"$EXPLOIT_DIRS"'; do
		[ -e $d ] || continue
		echo "$d $(ls -A $d 2>/dev/null | wc -l)"
	done
	for f in /proc/sysrq-trigger /proc/irq/default_smp_affinity /sys/class/net/lo/mtu; do
		[ -e $f ] || continue
		(: >>$f) 2>&1
	done
	(cat /proc/sys/kernel/hostname >/proc/sys/kernel/hostname) 2>&1
	for p in /proc/keys /proc/timer_list /sys/firmware '"$EXPLOIT_FILES $EXPLOIT_DIRS"'; do
		[ -e $p ] || continue
		awk -v p=$p "\$5 == p { o = \$6 } END { print \"mask-mount\", p, o }" /proc/self/mountinfo
	done
	awk "\$5 == \"/proc/irq\" { print \"irq-mount\", \$6 }" /proc/self/mountinfo
	awk "\$5 == \"/proc/sysrq-trigger\" { o = \$6 } END { print \"sysrq-mount\", o }" /proc/self/mountinfo
	echo done'

# Does the script's line "TAG OPTIONS" say the mount at PATH is read-only?
mounted_ro() {
	local l
	for l in "${lines[@]}"; do
		[[ "$l" == "$1 ro,"* || "$l" == "$1 ro" ]] && return 0
	done
	echo "$2 is not mounted read-only" >&2
	return 1
}

# Is PATH masked by a mount of its own that is read-only, nosuid and
# noexec? (Later masks bind the first one and take its flags along.)
mask_mounted_ro() {
	local l opts
	for l in "${lines[@]}"; do
		[[ "$l" == "mask-mount $1 "* ]] || continue
		opts=",${l#"mask-mount $1 "},"
		[[ "$opts" == *,ro,* && "$opts" == *,nosuid,* && "$opts" == *,noexec,* ]] && return 0
		echo "the mask on $1 is mounted ${opts}" >&2
		return 1
	done
	echo "$1 is not masked by a mount" >&2
	return 1
}

check_masked() {
	local l path count
	for l in "${lines[@]}"; do
		case "$l" in
		/proc/* | /sys/*)
			read -r path count <<<"$l"
			[ "$count" = 0 ] || {
				echo "$path is not masked: $count" >&2
				return 1
			}
			;;
		esac
	done
	has_line "/proc/keys 0"
	has_line "/proc/timer_list 0"
	has_line "/sys/firmware 0"
	[ ! -e /proc/kcore ] || has_line "/proc/kcore 0"
	# Each one this kernel has (the container sees the host's kernel).
	for f in $EXPLOIT_FILES $EXPLOIT_DIRS; do
		[ ! -e "$f" ] || has_line "$f 0"
	done
	for f in /proc/keys /proc/timer_list /sys/firmware $EXPLOIT_FILES $EXPLOIT_DIRS; do
		[ ! -e "$f" ] || mask_mounted_ro "$f"
	done
	# G12: a host-root-owned proc file that only its owner may write
	# (/proc/sysrq-trigger is 0200 where the kernel has it, as Debian's
	# does) refuses container root (EACCES) before the read-only mount can
	# (EROFS); the mount is read-only all the same.
	if [ -e /proc/sysrq-trigger ]; then
		has_line "sh: can't create /proc/sysrq-trigger: Read-only file system" 2>/dev/null ||
			has_line "sh: can't create /proc/sysrq-trigger: Permission denied"
		mounted_ro sysrq-mount /proc/sysrq-trigger
	fi
	has_line "sh: can't create /proc/irq/default_smp_affinity: Read-only file system" 2>/dev/null ||
		has_line "sh: can't create /proc/irq/default_smp_affinity: Permission denied"
	mounted_ro irq-mount /proc/irq
	has_line "sh: can't create /sys/class/net/lo/mtu: Read-only file system"
	has_line "sh: can't create /proc/sys/kernel/hostname: Read-only file system"
	has_line done
}

@test "G9 spec: masked paths empty, /proc/sys, /proc/sysrq-trigger, /proc/irq, /sys read-only" {
	prepare_bundle spec
	in_container "$G9_SCRIPT"
	[ "$status" -eq 0 ]
	check_masked
}

@test "G9 docker.20 (privileged: no masked or read-only paths): masked and read-only all the same" {
	prepare_bundle docker.20
	[ "$(jq '.linux.maskedPaths' "$BUNDLE/config.json")" = null ]
	[ "$(jq '.linux.readonlyPaths' "$BUNDLE/config.json")" = null ]
	in_container "$G9_SCRIPT"
	[ "$status" -eq 0 ]
	check_masked
}

@test "G9 permissive (sysfs rw, no masked paths): masked and read-only all the same" {
	prepare_bundle permissive
	in_container "$G9_SCRIPT"
	[ "$status" -eq 0 ]
	check_masked
}

@test "G9 exec: the same for a process moat exec starts" {
	prepare_bundle permissive
	start_sleeper
	moat exec "$CID" sh -c "$G9_SCRIPT"
	[ "$status" -eq 0 ]
	check_masked
}

# What ps, top, free, Python's os.cpu_count() (sysconf, which reads
# /sys/devices/system/cpu/online) and a JVM (meminfo, cpuinfo, its cgroup's
# limits, /proc/self) read must still work. (/sys/fs/cgroup need not list
# anything: on a hybrid host moat mounts an empty tmpfs there.)
TOOLS_SCRIPT='
	ps -o pid,comm | grep -q "^ *1 " && echo ps-ok
	top -b -n1 | grep -q "^Mem:" && echo top-ok
	free | grep -q "^Mem:" && echo free-ok
	grep -q "^MemTotal:" /proc/meminfo && echo meminfo-ok
	grep -q "^processor" /proc/cpuinfo && echo cpuinfo-ok
	grep -q "^cpu " /proc/stat && echo stat-ok
	grep -Eq "^[0-9]" /sys/devices/system/cpu/online && echo cpu-online-ok
	[ "$(ls /sys/devices/system/cpu | grep -c "^cpu[0-9]")" -ge 1 ] && echo cpu-dirs-ok
	ls /sys/fs/cgroup >/dev/null && echo cgroupfs-ok
	grep -q " / " /proc/self/mountinfo && echo self-ok
	[ "$(nproc)" -ge 1 ] && echo nproc-ok'

check_tools() {
	local w
	[ "$status" -eq 0 ]
	for w in ps top free meminfo cpuinfo stat cpu-online cpu-dirs cgroupfs self nproc; do
		has_line "$w-ok"
	done
}

@test "G9 spec: ps, top, free, nproc and what a JVM or os.cpu_count() reads still work" {
	prepare_bundle spec
	in_container "$TOOLS_SCRIPT"
	check_tools
}

@test "G9 docker.20 (privileged): ps, top, free and the cpu and memory files still work" {
	prepare_bundle docker.20
	in_container "$TOOLS_SCRIPT"
	check_tools
}

@test "G9 permissive: ps, top, free and the cpu and memory files still work, in run and exec" {
	prepare_bundle permissive
	in_container "$TOOLS_SCRIPT"
	check_tools
	start_sleeper
	moat exec "$CID" sh -c "$TOOLS_SCRIPT"
	check_tools
}

# G9: a cgroup namespace always, rooted at the container's cgroup: every
# line of /proc/self/cgroup (the v2 "0::" one, and on a v1 or hybrid host
# each v1 hierarchy's) shows "/", for the init (seen as /proc/1/cgroup)
# and for a moat exec process.
check_cgroupns() {
	local l
	[ "$status" -eq 0 ]
	has_line "0::/"
	has_line init
	has_line exec
	for l in "${lines[@]}"; do
		case "$l" in
		init | exec) ;;
		*) [[ "$l" =~ ^[0-9]+:[^:]*:/$ ]] || {
			echo "not the namespace's root: $l" >&2
			return 1
		} ;;
		esac
	done
}

CGROUP_SCRIPT='echo init; cat /proc/1/cgroup; echo exec; cat /proc/self/cgroup'

@test "G9 spec: the container has its own cgroup namespace (run and exec see /)" {
	prepare_bundle spec
	start_sleeper
	moat exec "$CID" sh -c "$CGROUP_SCRIPT"
	check_cgroupns
}

@test "G9 docker.19: its own cgroup namespace (run and exec see /)" {
	prepare_bundle docker.19
	start_sleeper
	moat exec "$CID" sh -c "$CGROUP_SCRIPT"
	check_cgroupns
}

@test "G9 permissive (host cgroup namespace asked): its own cgroup namespace all the same" {
	prepare_bundle permissive
	update_config '.linux.namespaces = [.linux.namespaces[] | select(.type != "cgroup")] + [{"type": "cgroup", "path": "/proc/1/ns/cgroup"}]'
	start_sleeper
	moat exec "$CID" sh -c "$CGROUP_SCRIPT"
	check_cgroupns
}
