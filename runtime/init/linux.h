/* The container's init before exec: what runs in the child after clone.
 * Internal to runtime/ (container.c and exec.c drive it). */
#ifndef MOAT_LINUX_H
#define MOAT_LINUX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../cgroup/cgroup.h"
#include "../../lib/error.h"
#include "../seccomp/seccomp.h"
#include "../../oci/spec.h"

struct init_args
{
  const struct spec *spec; /* hardened */
  const char *rootfs;      /* absolute host path */
  int sync_fd;             /* child's end of the socketpair */
  int fifo_fd; /* exec.fifo (O_RDWR) or run's socket: init blocks reading */
  int ns_fds[NS__MAX]; /* namespaces to join (-1: none) */
  int *mount_src_fds;  /* per spec mount: O_PATH fd of bind sources */
  const struct seccomp_prog *seccomp_config;  /* may be NULL */
  const struct seccomp_prog *seccomp_builtin; /* may be NULL */
  enum cgroup_mode cgroup_mode;
  bool no_pivot;
  bool new_userns;
  /* Born in the joined user namespace ns_fds[NS_USER] (a new pid namespace
   * in it: linux_clone_in_userns), which it does not join again. */
  bool born_in_userns;
  int rootfs_tree; /* G12: the rootfs, detached (and idmapped); -1: none */
  int preserve_fds;
  int lock_fd; /* the state dir's flock fd: the init must not hold it */
  /* The container's cgroup, which the init joins itself (cgroup_add_self)
   * right after SYNC_MAPS_DONE; NULL: moat added it. */
  struct cgroup *cgroup;
  bool in_unified_cgroup; /* cloned into its v2 cgroup already */
  /* G12: cgroup_add_self's files, opened by moat as host root (NULL: the
   * init opens them). */
  const int *cgroup_self_fds;
  /* A session's init: runs nothing, reaps what the execs leave. */
  bool reaper;
  /* Where the built-in filter's listener goes (seccomp_refusals.h); -1:
   * nobody supervises. */
  int refusal_sock;
};

/* clone flags for the namespaces the spec asks to create. */
unsigned long linux_clone_flags (const struct spec *s);
/* fork-like clone with flags (| SIGCHLD); with cgroup_fd >= 0, into that
 * v2 cgroup (clone3 CLONE_INTO_CGROUP) where the kernel can, which
 * *ret_in_cgroup tells. Returns the pid, 0 in the child, -1 with errno. */
pid_t linux_clone (unsigned long flags, int cgroup_fd, bool *ret_in_cgroup);
/* The same, from user namespace userns_fd (joined by path, or adopted),
 * with cwd as the child's working directory: a short-lived intermediate
 * process changes to cwd (as host root: the way may cross root-only
 * dirs), joins the user namespace, and clones the child as moat's own
 * (CLONE_PARENT), so that the namespaces made by flags, its pid namespace
 * above all, belong to that user namespace: the child is pid 1 of a pid
 * namespace whose root may mount its /proc (Kubernetes' hostUsers: false:
 * each app container joins the pod's user namespace and makes a pid
 * namespace of its own). The kernel hands out no pid namespace before its
 * init exists, so moat cannot make one there and enter it. */
pid_t linux_clone_in_userns (int userns_fd, const char *cwd,
                             unsigned long flags, int cgroup_fd,
                             bool *ret_in_cgroup);
/* PR_SET_DUMPABLE 0: a copy of moat is not dumpable until execve, so that
 * nothing may ptrace it or read its memory (CVE-2016-9962, CVE-2019-5736).
 * Again after each change of user namespace or ids: the kernel sets it back
 * to fs.suid_dumpable, which a host may have at 1. */
int linux_undumpable (struct moat_error **err);
/* Never returns: the init's body; exits the process on failure. */
void __attribute__ ((noreturn)) linux_init_main (struct init_args *a);

/* Write sysctls (dotted names) through a private procfs instance, for the
 * calling task's namespaces. */
/* G13: vm.memfd_noexec = 2 in the pid namespace of pid (moat's side);
 * own_pid_ns: an fd of moat's own pid namespace, or -1 to open one. */
int linux_refuse_exec_memfd (pid_t pid, int own_pid_ns,
                             struct moat_error **err);
int linux_write_sysctls (const struct spec_kv *sysctl, size_t n,
                         struct moat_error **err);

/* Rootfs (rootfs.c): the init executes the mount plan (mount_ops.h) op
 * by op, in three steps with the hooks and the terminal between them. */
struct mount_plan;
struct rootfs_run
{
  const struct mount_plan *plan;
  size_t next;              /* the first op not executed yet (0 at first) */
  const int *mount_src_fds; /* by mount_index: sources opened on the host */
  int rootfs_tree;          /* G12: >= 0: the rootfs is attached already */
  int rootfd, devfd;        /* within a step; -1 at first and after */
  int null_fd;              /* /dev/null, checked, for the masks; likewise */
  /* The first masked file and directory, once masked: later masks bind
   * these (their mount flags come along), no new tmpfs or attributes. */
  int masked_file_fd, masked_dir_fd;
};
/* Every op before the pivot: the rootfs, mounts[], /dev, the cwd. */
int rootfs_prepare (struct rootfs_run *x, struct moat_error **err);
/* The pivot op: pivot_root, or chroot. */
int rootfs_pivot (struct rootfs_run *x, struct moat_error **err);
/* The rest: read-only and masked paths, propagation, /dev's and the
 * root's attributes. */
int rootfs_finish (struct rootfs_run *x, struct moat_error **err);
/* openat2 of path with rootfd as its root (RESOLVE_IN_ROOT, no magic
 * links): an fd, or -1 with errno. */
int rootfs_openat2_in (int rootfd, const char *path, uint64_t flags);
/* Open PATH inside ROOTFD (never leaving it), O_PATH; create missing
 * directories (and the last component as a file if as_file) when create. */
int rootfs_open_in (int rootfd, const char *path, bool create, bool as_file,
                    int *ret_fd, struct moat_error **err);
/* Does this mount bind (type "bind", or a bind/rbind option)? */
bool mount_is_bind (const struct spec_mount *m);
/* Is mounts[self] below the destination of another mount of the list (made
 * on that mount's filesystem, not on the rootfs)? */
bool mount_below_other (const struct spec *s, size_t self);
/* Before judging, a fact for the policy: bit k set where points[k] is
 * missing from rootfs and rootfs is read-only (cannot take it). */
unsigned rootfs_missing_read_only (const char *rootfs,
                                   const char *const *points);
/* After judging, before clone: the mount points of the profile's own
 * mounts (profile_added) are made in the rootfs, as host root, resolved
 * inside it. */
int rootfs_place_profile_mounts (const struct spec *s, const char *rootfs,
                                 struct moat_error **err);

/* Process (process.c). */
int process_resolve_exec (const struct spec_process *p, char **ret_path,
                          struct moat_error **err);
/* Apply rlimits, user, caps, no_new_privs, Landlock (the ruleset
 * landlock_fd, or -1), seccomp, fds, cwd; then execve. Returns only on
 * failure; with exec_path NULL (a session's reaping init) returns 0 with
 * everything applied but the execve. refusal_sock >= 0: the built-in
 * filter's listener goes there (seccomp_refusals.h). */
int process_exec (const struct spec_process *p, const char *exec_path,
                  int cwd_fd, int preserve_fds, int landlock_fd,
                  const struct seccomp_prog *seccomp_config,
                  const struct seccomp_prog *seccomp_builtin, int refusal_sock,
                  struct moat_error **err);
int process_set_rlimits (const struct spec_process *p, struct moat_error **err);
/* Hard limits above the caller's (pid 0: the caller itself), before the
 * process leaves the host's user namespace. */
int process_raise_rlimits (pid_t pid, const struct spec_process *p,
                           struct moat_error **err);

#endif
