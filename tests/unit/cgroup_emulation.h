/* The cgroup unit tests' stand-in for the kernel's cgroupfs: trees of
 * plain directories behind struct cgroup_fs (runtime/cgroup_internal.h),
 * linked into the unit tests only.
 *
 * Such a tree declares its layout by what exists: ROOT/cgroup.controllers
 * (a file) -> v2; else the v1 directories ROOT/<name> (cpu, cpuacct,
 * cpuset, memory, pids, devices, freezer, blkio, systemd), plus
 * ROOT/unified/cgroup.controllers -> hybrid. The regular files at the top
 * of each hierarchy are the interface files every new cgroup gets (empty,
 * as the kernel would create them), a new cgroup's cgroup.controllers
 * lists what its parent's cgroup.subtree_control enabled, removing a
 * cgroup removes its files (and is refused while it has children), a
 * write replaces the file's text, no BPF program can be attached (device
 * rules are accepted and not enforced) and systemd never runs. */
#ifndef MOAT_TEST_CGROUP_EMULATION_H
#define MOAT_TEST_CGROUP_EMULATION_H

/* The cgroup code works on the tree at root from now on (probed again on
 * next use); NULL goes back to the host's /sys/fs/cgroup. */
void cgroup_emulate (const char *root);

#endif
