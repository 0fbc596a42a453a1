/* cgroups behind one small interface. The layout (v1, v2, or hybrid: v1
 * controllers plus a cgroup2 mount at <root>/unified) is probed once.
 * A container's cgroup is named by a path relative to every hierarchy's
 * mount ("/moat/ID", "/docker/abc"): the state file stores that string and
 * later verbs reopen it with cgroup_open(). */
#ifndef MOAT_CGROUP_H
#define MOAT_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../lib/error.h"
#include "../../oci/override.h"
#include "../../oci/spec.h"

enum cgroup_mode
{
  CGROUP_MODE_V1,     /* no cgroup2 mount at all */
  CGROUP_MODE_HYBRID, /* v1 controllers + cgroup2 at ROOT/unified */
  CGROUP_MODE_V2,     /* cgroup2 at ROOT */
};

struct cgroup; /* opaque */

/* The layout of /sys/fs/cgroup, probed once:
 *  - the root is a cgroup2 mount -> v2;
 *  - otherwise every v1 hierarchy is ROOT/<name> (cpu, cpuacct, cpuset,
 *    memory, pids, devices, freezer, blkio; "systemd" for name=systemd),
 *    co-mounted ones (same directory through symlinks) counted once, and
 *    ROOT/unified being a cgroup2 mount makes it hybrid.
 * Only real cgroup filesystems count (the unit tests put plain
 * directories in their place: cgroup_set_fs in cgroup_internal.h). */
int cgroup_mode (enum cgroup_mode *ret, struct moat_error **err);

/* Map config.json's cgroupsPath (may be NULL) to the relative path:
 * NULL or "" -> "/moat/ID"; "/a/b" -> "/a/b"; "a/b" -> "/a/b" (relative
 * paths are taken under "/", as runc does); "slice:prefix:name" ->
 * "/<slice path>/<prefix>-<name>.scope" (systemd form mapped to cgroupfs,
 * e.g. "kubepods-pod1.slice:cri-containerd:ID" ->
 * "/kubepods.slice/kubepods-pod1.slice/cri-containerd-ID.scope"; an empty
 * slice is "system.slice", "-" or "-.slice" the root, a name ending in
 * ".slice" is used as is). The systemd form is read when `systemd` is set
 * and the path is not absolute, or when the path has no "/" and exactly
 * two ":" (engines send it so where no systemd runs).
 * Refuses any path with a "." or ".." component or a control character;
 * empty components are folded.
 * The result always starts with "/" and is never "/" itself. */
int cgroup_resolve_path (const char *cgroups_path, const char *id, bool systemd,
                         char **ret_rel, struct moat_error **err);

/* --systemd-cgroup: where systemd is PID 1 and cgroupsPath is in the
 * systemd form, make the cgroup (created by cgroup_create, holding pid) the
 * transient unit it names, through systemd's D-Bus API: a scope with
 * PIDs=[pid], Delegate=yes, in the slice, with the cgroup's limits as its
 * properties (or a slice, when the name is one). Fails if systemd puts the
 * unit anywhere else. Returns 1 when registered, 0 when there is nothing
 * to do (no systemd: the cgroupfs mapping is all there is). cgroup_update
 * passes new limits on; cgroup_destroy stops the unit. */
int cgroup_systemd_register (struct cgroup *cg, const char *cgroups_path,
                             pid_t pid, const struct spec_resources *res,
                             struct moat_error **err);

/* A statically linked moat loads no sd-bus (lib/dynlib.h): it runs each of
 * the driver's calls as `moat-dl _systemd OP CGROUP [CGROUPS_PATH PID]`,
 * OP being register (cgroup_systemd_register without res), sync (the unit's
 * limits follow the cgroup's files) or stop. This is that command, in
 * moat-dl: it returns its exit status, 0 when done, 3 when there was
 * nothing to do (no systemd, no unit); its error goes to stderr. */
#define CGROUP_SYSTEMD_HELPER_VERB "_systemd"
#define CGROUP_SYSTEMD_HELPER_NOTHING 3
int cgroup_systemd_helper (int argc, char **argv, struct moat_error **err);

/* Keep the kernel's cgroup-BPF hooks switched on between containers: one
 * allow-all program on each hook moat uses, on the empty cgroup
 * /moat/.bpf-keys of the unified hierarchy (cgroup_keys.c). Best effort:
 * where it cannot, each create switches them on as before. */
void cgroup_hold_bpf_keys (struct cgroup *cg);

/* Create the cgroup in every hierarchy and apply res (may be NULL).
 * Fails if it already holds processes. */
int cgroup_create (const char *rel, const struct spec_resources *res,
                   struct cgroup **ret, struct moat_error **err);
/* A cgroup beneath a container's to count and kill one process tree in
 * (a session exec's): on cgroup v1 and hybrid hosts made only in the
 * hierarchies that count (cpuacct, memory, pids) or hold a tree still
 * (freezer), *ret_controllers their names ("cpuacct,memory,pids,freezer")
 * for cgroup_add_pid_sub; in the other hierarchies the tree stays in the
 * container's cgroup, whose limits and filters hold either way. On cgroup
 * v2, the one hierarchy, *ret_controllers NULL. */
int cgroup_create_tracking (const char *rel, struct cgroup **ret,
                            char **ret_controllers, struct moat_error **err);
/* Open an existing one (later verbs). -ENOENT if gone. */
int cgroup_open (const char *rel, struct cgroup **ret, struct moat_error **err);
void cgroup_free (struct cgroup *cg);

int cgroup_add_pid (struct cgroup *cg, pid_t pid, struct moat_error **err);
/* runc's exec --cgroup: subs (NULL-terminated, may be NULL) are
 * "[CONTROLLER[,CONTROLLER...]:]SUB", SUB an existing cgroup below cg
 * ("a/b"); one without controllers is for every hierarchy (the only form
 * the cgroup2 one takes), one with them for the v1 hierarchies carrying
 * them. pid joins SUB where one is named, cg elsewhere. */
int cgroup_add_pid_sub (struct cgroup *cg, pid_t pid, char *const *subs,
                        struct moat_error **err);
/* For a process that joins by itself (cgroup_add_self with these fds, and
 * the v2 directory, *ret_unified_dir, as clone3's CLONE_INTO_CGROUP; -1
 * when there is none): where cgroup_add_pid_sub would put it, the files
 * opened by moat beforehand. So an exec'd process joins as the init does,
 * without the kernel's global lock and its RCU grace period (1-9 ms an
 * exec on this hybrid host). */
int cgroup_open_join_files (struct cgroup *cg, char *const *subs, int **ret_fds,
                            int *ret_unified_dir, struct moat_error **err);
/* Move the calling process into the cgroup, from the inside: for the
 * container's init before exec, which must have a single thread. On v1 it
 * writes "0" to each hierarchy's `tasks`, which skips the kernel's global
 * threadgroup lock that cgroup_add_pid's cgroup.procs write takes, and the
 * RCU grace period it waits for (4-13 ms a container on a v1 or hybrid host).
 * skip_unified: the v2 hierarchy is already joined (CLONE_INTO_CGROUP). */
int cgroup_add_self (struct cgroup *cg, bool skip_unified, const int *fds,
                     struct moat_error **err);
/* For an init that is no longer host root when it joins (G12: its
 * effective uid is its user namespace's owner): the files cgroup_add_self
 * writes, opened beforehand by moat (fds, one per hierarchy, for
 * cgroup_add_self), since the kernel judges such a write by the
 * credentials it was opened with. */
int cgroup_open_self_files (struct cgroup *cg, int **ret_fds,
                            struct moat_error **err);
void cgroup_close_self_files (int *fds, size_t n);
size_t cgroup_n_hiers (const struct cgroup *cg);
/* O_RDONLY|O_DIRECTORY fd of the cgroup in the v2 hierarchy (for BPF and
 * CLONE_INTO_CGROUP; not O_PATH, which older kernels refuse for
 * BPF_PROG_ATTACH); -1 if there is no v2 hierarchy. Owned by cg. */
int cgroup_unified_fd (struct cgroup *cg);

int cgroup_update (struct cgroup *cg, const struct spec_resources *res,
                   struct moat_error **err);
/* What cgroup_create or cgroup_update left alone because this host has no
 * file for it: a blkio weight where the block scheduler is not BFQ (v1
 * blkio.weight and blkio.bfq.weight, v2 io.bfq.weight and io.weight all
 * missing) or no blkio hierarchy at all: a share, not a limit. Moved to
 * `to` as OVERRIDE_IGNORED entries (path, asked, and the reason in
 * enforced), for the verb's audit line and its warning on stderr. A limit
 * the host cannot hold (memory, pids, cpu, cpuset, devices, hugepageLimits)
 * still fails the verb; swap where the kernel accounts none stays uncapped
 * without a word, as before (the profile asks for it on every create). */
void cgroup_take_ignored (struct cgroup *cg, struct override_list *to);
int cgroup_freeze (struct cgroup *cg, bool frozen, struct moat_error **err);
/* Is it frozen right now? */
int cgroup_is_frozen (struct cgroup *cg, bool *ret, struct moat_error **err);
/* The pids in the cgroup (and its children), from cgroup.procs. */
int cgroup_pids (struct cgroup *cg, pid_t **ret, size_t *ret_n,
                 struct moat_error **err);
/* Signal every process in it. */
int cgroup_kill_all (struct cgroup *cg, int sig, struct moat_error **err);
/* Kill what is left (SIGKILL, thawing first), wait until empty (bounded),
 * and rmdir it in every hierarchy. Missing dirs are not an error. */
int cgroup_destroy (struct cgroup *cg, struct moat_error **err);
/* What a container used (moat sandbox's record); see cgroup_usage.c. */
struct cgroup_usage
{
  uint64_t cpu_ns, cpu_user_ns, cpu_system_ns;
  uint64_t peak_memory;
  uint64_t oom_kills;
  uint64_t pids_limit_hits; /* forks refused at the pids limit (pids.events
                               max), in this cgroup */
};
int cgroup_usage (struct cgroup *cg, struct cgroup_usage *ret);
/* How many processes the kernel's OOM killer killed in the cgroup so far
 * (v2 memory.events, v1 memory.oom_control "oom_kill"); 0 if unknown. */
uint64_t cgroup_oom_kills (struct cgroup *cg);
/* runc events --stats "data" object as JSON text (cpu, memory, pids). */
int cgroup_stats_json (struct cgroup *cg, char **ret, struct moat_error **err);

#endif
