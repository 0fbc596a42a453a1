#!/usr/bin/env bats
# process.selinuxLabel and linux.mountLabel: applied where SELinux is on
# (the plumbing is tests/unit/test_selinux.c); where it is off, features and
# --version say so and create tells on stderr that the labels are ignored.

load helpers

setup() {
	requires_root
	setup_bundle
	ID="selinux-$BATS_TEST_NUMBER-$$"
}

teardown() {
	teardown_bundle
}

selinux_on() {
	[ -e /sys/fs/selinux/enforce ]
}

@test "features and --version tell whether SELinux is enabled on this host" {
	moat features
	[ "$status" -eq 0 ]
	if selinux_on; then
		[ "$(echo "$output" | jq .linux.selinux.enabled)" = true ]
		[ "$(echo "$output" | jq -r '.annotations["run.moat.selinux"]')" = selinux ]
	else
		[ "$(echo "$output" | jq .linux.selinux.enabled)" = false ]
		[ "$(echo "$output" | jq -r '.annotations["run.moat.selinux"]')" = "selinux: not enabled on this host" ]
	fi
	moat --version
	[ "$status" -eq 0 ]
	if selinux_on; then
		[[ "$output" == *", selinux, "* ]]
	else
		[[ "$output" == *"selinux: not enabled on this host"* ]]
	fi
}

@test "labels on a host without SELinux: ignored, and create says so on stderr" {
	selinux_on && skip "SELinux is enabled on this host"
	update_config '.process.selinuxLabel = "system_u:system_r:container_t:s0:c1,c2"
		| .linux.mountLabel = "system_u:object_r:container_file_t:s0:c1,c2"
		| .process.args = ["sh", "-c", "grep -c context= /proc/self/mountinfo; true"]'
	moat_sep run -b "$BUNDLE" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = 0 ]
	[[ "$stderr" == *"moat: warning: linux.mountLabel ignored: selinux: not enabled on this host"* ]]
	[[ "$stderr" == *"moat: warning: process.selinuxLabel ignored: selinux: not enabled on this host"* ]]
}
