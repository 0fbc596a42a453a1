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

# Prints, for each masked path that exists (this kernel may lack
# /proc/kcore or /proc/sysrq-trigger), "PATH BYTES" (a file) or
# "PATH ENTRIES" (a directory), then for each read-only path what opening
# it for writing gets. Opening for append writes nothing, even if allowed;
# the hostname is written back unchanged.
G9_SCRIPT='
	for f in /proc/kcore /proc/keys /proc/timer_list /proc/sched_debug /proc/interrupts /proc/kallsyms; do
		[ -e $f ] || continue
		echo "$f $(cat $f 2>/dev/null | wc -c)"
	done
	for d in /sys/firmware /proc/acpi /proc/scsi; do
		[ -e $d ] || continue
		echo "$d $(ls -A $d 2>/dev/null | wc -l)"
	done
	for f in /proc/sysrq-trigger /proc/irq/default_smp_affinity /sys/class/net/lo/mtu; do
		[ -e $f ] || continue
		(: >>$f) 2>&1
	done
	(cat /proc/sys/kernel/hostname >/proc/sys/kernel/hostname) 2>&1
	awk "\$5 == \"/proc/irq\" { print \"irq-mount\", \$6 }" /proc/self/mountinfo
	echo done'

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
	[ ! -e /proc/sysrq-trigger ] || has_line "sh: can't create /proc/sysrq-trigger: Read-only file system"
	# G12: a host-root-owned proc file refuses container root (EACCES)
	# before the read-only mount can (EROFS); the mount is read-only all
	# the same.
	has_line "sh: can't create /proc/irq/default_smp_affinity: Read-only file system" 2>/dev/null ||
		has_line "sh: can't create /proc/irq/default_smp_affinity: Permission denied"
	local ro=0
	for l in "${lines[@]}"; do
		[[ "$l" == "irq-mount ro,"* || "$l" == "irq-mount ro" ]] && ro=1
	done
	[ "$ro" = 1 ] || { echo "/proc/irq is not mounted read-only" >&2; return 1; }
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
