/* The container's init, from clone to execve. It talks to moat over the
 * sync socket at three points (namespaces joined, mounts done, ready) and
 * then blocks reading exec.fifo until `moat start`. */
#include "linux.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../hooks/hooks.h"
#include "../log/debug.h"
#include "landlock.h"
#include "../netguard/netguard.h"
#include "sync.h"
#include "terminal.h"
#include "mount_ops.h"
#include "selinux.h"
#include "../../lib/dynlib.h"
#include "../../lib/procargs.h"
#include "../../lib/util.h"

/* A user namespace joined by path: the namespaces made for the init must
 * be that one's, so the init makes them once it has joined it (a clone
 * flag would make them the host's, where the container's root can do
 * nothing: bring lo up, mount). */
static bool
userns_joined (const struct spec *s)
{
  return s->linux_.ns[NS_USER].present && s->linux_.ns[NS_USER].path;
}

static bool
made_after_userns (const struct spec *s, int t)
{
  return userns_joined (s)
         && (t == NS_MOUNT || t == NS_NET || t == NS_IPC || t == NS_UTS);
}

unsigned long
linux_clone_flags (const struct spec *s)
{
  unsigned long flags = 0;
  for (int t = 0; t < NS__MAX; t++)
    {
      /* cgroup: unshared by the init once it is in its cgroup, so that the
       * namespace is rooted there. time: not a clone() flag (moat unshares
       * it in the parent). */
      if (t == NS_CGROUP || t == NS_TIME || made_after_userns (s, t))
        continue;
      if (s->linux_.ns[t].present && s->linux_.ns[t].path == NULL)
        flags |= ns_table[t].clone_flag;
    }
  return flags;
}

/* What the init loads, loaded before anything enters the container's
 * namespaces: inside, nothing is loaded (dynlib_seal in linux_undumpable).
 * A failure shows where the init uses it. */
static void
load_init_libraries (void)
{
  (void)selinux_enabled ();
}

static pid_t
clone_into (unsigned long flags, int cgroup_fd, bool *ret_in_cgroup)
{
  *ret_in_cgroup = false;
  if (cgroup_fd >= 0)
    {
      struct clone_args ca = { .flags = flags | CLONE_INTO_CGROUP,
                               .exit_signal = SIGCHLD,
                               .cgroup = (uint64_t)cgroup_fd };
      pid_t pid = (pid_t)syscall (SYS_clone3, &ca, sizeof (ca));
      if (pid >= 0)
        {
          *ret_in_cgroup = true;
          return pid;
        }
      /* Kernels before 5.7, or a seccomp filter of an engine that hides
       * clone3: joined the old way. */
      if (errno != ENOSYS && errno != E2BIG && errno != EINVAL
          && errno != EPERM)
        return -1;
    }
  return (pid_t)syscall (SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
}

pid_t
linux_clone (unsigned long flags, int cgroup_fd, bool *ret_in_cgroup)
{
  pid_t pid;
  int saved;

  load_init_libraries ();
  /* G15: the child, in the container's pid namespace from birth, never
   * shows moat's argv and environment there (the --env values the profile
   * stripped, host paths): born with them hidden, for good. */
  procargs_hide ();
  pid = clone_into (flags, cgroup_fd, ret_in_cgroup);
  if (pid != 0)
    {
      saved = errno;
      procargs_show ();
      errno = saved;
    }
  return pid;
}

int
linux_undumpable (struct moat_error **err)
{
  /* Every entry into the container's namespaces passes here first. */
  dynlib_seal ();
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    return moat_fail (err, errno, "PR_SET_DUMPABLE");
  return 0;
}

pid_t
linux_clone_in_userns (int userns_fd, const char *cwd, unsigned long flags,
                       int cgroup_fd, bool *ret_in_cgroup)
{
  struct
  {
    pid_t pid;
    int err;
    bool in_cgroup;
  } m = { -1, 0, false };
  int p[2];
  ssize_t n;
  pid_t mid;

  /* The intermediate process below is sealed once in the user namespace,
   * before it clones the init. */
  load_init_libraries ();
  if (pipe2 (p, O_CLOEXEC) < 0)
    return -1;
  mid = fork ();
  if (mid == 0)
    {
      close (p[0]);
      /* In that user namespace its owner holds CAP_SYS_PTRACE over this
       * copy of moat, still host uid 0 to the host's files: not dumpable
       * once in it (the init, born of it, inherits that). */
      int r;
      if ((cwd && chdir (cwd) < 0) || setns (userns_fd, CLONE_NEWUSER) < 0)
        m.err = errno;
      else if ((r = linux_undumpable (NULL)) < 0)
        m.err = -r;
      else
        {
          debug_pause ("in-joined-userns");
          m.pid = linux_clone (flags | CLONE_PARENT, cgroup_fd, &m.in_cgroup);
          if (m.pid == 0)
            {
              close (p[1]);
              *ret_in_cgroup = m.in_cgroup;
              return 0;
            }
          m.err = errno;
        }
      n = write (p[1], &m, sizeof (m));
      _exit (n == (ssize_t)sizeof (m) ? 0 : 1);
    }
  close (p[1]);
  if (mid > 0)
    {
      do
        n = read (p[0], &m, sizeof (m));
      while (n < 0 && errno == EINTR);
      if (n != (ssize_t)sizeof (m))
        m = (typeof (m)){ -1, n < 0 ? errno : EPIPE, false };
      while (waitpid (mid, NULL, 0) < 0 && errno == EINTR)
        ;
    }
  else
    m.err = errno;
  close (p[0]);
  if (m.pid < 0)
    {
      errno = m.err;
      return -1;
    }
  *ret_in_cgroup = m.in_cgroup;
  return m.pid;
}

static int
become_userns_root (struct moat_error **err)
{
  /* Become the namespace's root where 0 is mapped; otherwise stay as we
   * are (the caps in the namespace are full either way). */
  if (setresgid (0, 0, 0) < 0 && errno != EINVAL)
    return moat_fail (err, errno, "setresgid 0 in the user namespace");
  if (setresuid (0, 0, 0) < 0 && errno != EINVAL)
    return moat_fail (err, errno, "setresuid 0 in the user namespace");
  /* A change of ids cleared it: until READY the init must not outlive
   * moat. And made it dumpable again where fs.suid_dumpable is 1. */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    return moat_fail (err, errno, "PR_SET_PDEATHSIG");
  return linux_undumpable (err);
}

/* The user namespace joined by path, then the namespaces made in it. */
static int
enter_joined_userns (struct init_args *a, struct moat_error **err)
{
  const struct spec *s = a->spec;
  int flags = 0, r;

  if (!a->born_in_userns && setns (a->ns_fds[NS_USER], CLONE_NEWUSER) < 0)
    return moat_fail (err, errno, "joining user namespace %s",
                      s->linux_.ns[NS_USER].path);
  close (a->ns_fds[NS_USER]);
  a->ns_fds[NS_USER] = -1;
  /* Its maps were judged on the host before the decision was saved
   * (container_open_namespaces). */
  r = linux_undumpable (err);
  if (r == 0)
    r = become_userns_root (err);
  if (r < 0)
    return r;
  for (int t = 0; t < NS__MAX; t++)
    if (made_after_userns (s, t) && s->linux_.ns[t].present
        && s->linux_.ns[t].path == NULL)
      flags |= ns_table[t].clone_flag;
  if (flags && unshare (flags) < 0)
    return moat_fail (err, errno, "creating namespaces in user namespace %s",
                      s->linux_.ns[NS_USER].path);
  return 0;
}

static int
join_namespaces (struct init_args *a, struct moat_error **err)
{
  /* A user namespace joined by path was entered before
   * (enter_joined_userns): it decides what the others allow. */
  static const int order[] = { NS_MOUNT, NS_NET, NS_IPC, NS_UTS, NS_CGROUP };
  for (size_t i = 0; i < sizeof (order) / sizeof (order[0]); i++)
    {
      int t = order[i];
      if (a->ns_fds[t] < 0)
        continue;
      if (setns (a->ns_fds[t], ns_table[t].clone_flag) < 0)
        return moat_fail (err, errno, "joining %s namespace %s",
                          ns_type_name (t), a->spec->linux_.ns[t].path);
      close (a->ns_fds[t]);
      a->ns_fds[t] = -1;
    }
  return 0;
}

static int
write_sysctl (int procfd, const char *name, const char *value,
              struct moat_error **err)
{
  cleanup_free char *path = xasprintf ("sys/%s", name);
  struct open_how how
      = { .flags = O_WRONLY | O_CLOEXEC,
          .resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS
                     | RESOLVE_NO_MAGICLINKS };
  cleanup_close int fd = -1;
  int r;

  for (char *c = path + 4; *c; c++)
    if (*c == '.')
      *c = '/';
  fd = (int)syscall (SYS_openat2, procfd, path, &how, sizeof (how));
  if (fd < 0)
    return moat_fail (err, errno, "sysctl %s", name);
  r = write_all (fd, value, strlen (value));
  if (r < 0)
    return moat_fail (err, -r, "sysctl %s=%s", name, value);
  return 0;
}

/* sysctl writes go through a procfs instance of our own that is never
 * attached anywhere: nothing the image or a mount put on /proc/sys can
 * redirect them (CVE-2025-52881). */
static int
apply_sysctl (const struct spec *s, struct moat_error **err)
{
  return linux_write_sysctls (s->linux_.sysctl, s->linux_.n_sysctl, err);
}

int
linux_write_sysctls (const struct spec_kv *sysctl, size_t n,
                     struct moat_error **err)
{
  cleanup_close int fsfd = -1;
  cleanup_close int mnt = -1;

  if (n == 0)
    return 0;
  fsfd = fsopen ("proc", FSOPEN_CLOEXEC);
  if (fsfd < 0 || fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return moat_fail (err, errno, "sysctl: opening a private procfs");
  mnt = fsmount (fsfd, FSMOUNT_CLOEXEC,
                 MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (mnt < 0)
    return moat_fail (err, errno, "sysctl: fsmount");
  for (size_t i = 0; i < n; i++)
    {
      int r = write_sysctl (mnt, sysctl[i].key, sysctl[i].value, err);
      if (r < 0)
        return r;
    }
  return 0;
}

/* G13: vm.memfd_noexec = 2 in the pid namespace of PID (the init's), so
 * that no memfd can be executed there (MFD_EXEC refused, MFD_NOEXEC_SEAL
 * forced), by the payload or by anything `moat exec` starts; the value
 * only ever gets stricter (the kernel refuses lowering it). The sysctl
 * applies to the writer's own pid namespace and its file is writable by
 * host root only, which the init is not in a user namespace of its own
 * (G12): moat writes it from a child it makes inside that pid namespace.
 * Since Linux 6.3; where it is missing, create's audit line and `moat
 * features` say so. */

/* The writer: a vfork child (no copy of moat's memory, and no copy-on-write
 * faults in moat afterwards, as a fork would cost) that only opens, writes
 * and exits. Its own function, so that nothing of the caller's frame lives
 * across the vfork. */
static __attribute__ ((noinline)) pid_t
spawn_memfd_noexec_writer (void)
{
  pid_t w = vfork ();
  if (w == 0)
    {
      int fd = open ("/proc/sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC);
      if (fd < 0)
        _exit (errno > 0 && errno < 256 ? errno : EIO);
      _exit (write (fd, "2", 1) == 1 ? 0 : EIO);
    }
  return w;
}

int
linux_refuse_exec_memfd (pid_t pid, int own_pid_ns, struct moat_error **err)
{
  cleanup_close int target = -1;
  cleanup_close int own_opened = -1;
  int own = own_pid_ns;
  char path[64];
  int status = 0, saved;
  pid_t w;

  if (access ("/proc/sys/vm/memfd_noexec", F_OK) < 0)
    return 0;
  snprintf (path, sizeof (path), "/proc/%d/ns/pid", pid);
  target = open (path, O_RDONLY | O_CLOEXEC);
  if (own < 0)
    own = own_opened = open ("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
  if (target < 0 || own < 0)
    return moat_fail (err, errno, "vm.memfd_noexec: opening %s", path);
  if (setns (target, CLONE_NEWPID) < 0)
    return moat_fail (err, errno, "vm.memfd_noexec: entering %s", path);
  w = spawn_memfd_noexec_writer ();
  saved = errno;
  /* Back to moat's own: its later children are not the container's. */
  if (setns (own, CLONE_NEWPID) < 0)
    return moat_fail (err, errno, "vm.memfd_noexec: leaving %s", path);
  if (w < 0)
    return moat_fail (err, saved, "vm.memfd_noexec: fork");
  while (waitpid (w, &status, 0) < 0)
    if (errno != EINTR)
      return moat_fail (err, errno, "vm.memfd_noexec: waitpid");
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return moat_fail (err, WIFEXITED (status) ? WEXITSTATUS (status) : EIO,
                      "vm.memfd_noexec: writing 2");
  return 0;
}

static int
open_cwd (const char *cwd, int *ret, struct moat_error **err)
{
  int root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  int r;
  if (root < 0)
    return moat_fail (err, errno, "opening /");
  r = rootfs_open_in (root, cwd, false, false, ret, err);
  close (root);
  if (r < 0)
    return moat_error_wrap (err, "process.cwd");
  /* Refused here, at create, and not by the fchdir after start. */
  if (fstat (*ret, &st) == 0 && !S_ISDIR (st.st_mode))
    {
      close (*ret);
      *ret = -1;
      return moat_fail (err, ENOTDIR, "process.cwd %s", cwd);
    }
  return 0;
}

/* A config filter with a seccomp agent (listenerPath) is loaded here, at
 * the end of create, with a new listener that moat sends the agent before
 * the container can run; what is left of the init runs under it, as
 * runc's does. Without no_new_privs yet: the init holds CAP_SYS_ADMIN in
 * its user namespace. */
static int
load_agent_filter (struct init_args *a, struct moat_error **err)
{
  int listener = -1, r;

  if (a->seccomp_config == NULL
      || !(a->seccomp_config->flags & SECCOMP_FILTER_FLAG_NEW_LISTENER))
    return 0;
  r = seccomp_prog_load_listener (a->seccomp_config, &listener, err);
  if (r < 0)
    return r;
  a->seccomp_config = NULL; /* loaded: process_exec must not load it again */
  r = sync_send (a->sync_fd, SYNC_SECCOMP, err);
  if (r == 0)
    r = fd_send (a->sync_fd, listener, err);
  close (listener);
  if (r == 0)
    r = sync_recv (a->sync_fd, SYNC_SECCOMP_SENT, err);
  return r;
}

static int
set_uts_names (const struct spec *s, struct moat_error **err)
{
  if (!s->linux_.ns[NS_UTS].present)
    return 0;
  if (s->hostname && sethostname (s->hostname, strlen (s->hostname)) < 0)
    return moat_fail (err, errno, "sethostname");
  if (s->domainname
      && setdomainname (s->domainname, strlen (s->domainname)) < 0)
    return moat_fail (err, errno, "setdomainname");
  return 0;
}

/* The console: a pty made in the container, its master handed to moat. */
static int
send_console (int sync_fd, const struct spec_process *p,
              struct moat_error **err)
{
  cleanup_close int master = -1;
  int r = terminal_setup_child (p->has_console_size, p->console_height,
                                p->console_width, &master, err);
  if (r == 0)
    r = sync_send (sync_fd, SYNC_PTY, err);
  if (r == 0)
    r = fd_send (sync_fd, master, err);
  return r;
}

static int
init_setup (struct init_args *a, char **ret_exec, int *ret_cwd,
            int *ret_landlock, char **ret_state, struct moat_error **err)
{
  const struct spec *s = a->spec;
  const struct spec_process *p = s->process;
  cleanup_free char *creating_state = NULL;
  cleanup_free char *exec_list = NULL;
  cleanup_mount_plan struct mount_plan plan = { 0 };
  struct rootfs_run run = { .plan = &plan,
                            .mount_src_fds = a->mount_src_fds,
                            .rootfs_tree = a->rootfs_tree,
                            .rootfd = -1,
                            .devfd = -1,
                            .null_fd = -1,
                            .masked_file_fd = -1,
                            .masked_dir_fd = -1 };
  const char *rootfs = a->rootfs;
  char rootfs_fd_path[64];
  int r;

  r = sync_recv (a->sync_fd, SYNC_MAPS_DONE, err);
  if (r < 0)
    return r;
  /* Before anything else, as if moat had added us: the cgroup namespace
   * below is rooted where we are. */
  if (a->cgroup)
    {
      r = cgroup_add_self (a->cgroup, a->in_unified_cgroup, a->cgroup_self_fds,
                           err);
      if (r < 0)
        return r;
    }
  if (a->rootfs_tree >= 0)
    {
      int tree = -1;
      /* moat sends the tree to attach: the one cloned before clone, or an
       * overlay it rebuilt from idmapped layers since. */
      r = fd_recv (a->sync_fd, &tree, err);
      if (r < 0)
        return r;
      close (a->rootfs_tree);
      a->rootfs_tree = tree;
    }
  /* G12: the rootfs is attached while the init is still host uid 0 to
   * the host's files: the path to it may cross root-only dirs (a 0700
   * bundle, /var/lib/docker) that the container's root cannot. With a
   * user namespace joined by path, the init reaches it now (its cwd moves
   * with it into the mount namespace made in that user namespace). */
  if (userns_joined (s) && a->ns_fds[NS_USER] >= 0)
    {
      if (a->rootfs_tree >= 0 && !a->born_in_userns && chdir (a->rootfs) < 0)
        return moat_fail (err, errno, "root.path %s", a->rootfs);
      r = enter_joined_userns (a, err);
      if (r < 0)
        return r;
    }
  if (a->rootfs_tree >= 0)
    {
      /* From here on the rootfs is reached through the tree's fd. */
      if (move_mount (a->rootfs_tree, "", AT_FDCWD,
                      userns_joined (s) ? "." : a->rootfs,
                      MOVE_MOUNT_F_EMPTY_PATH)
          < 0)
        return moat_fail (err, errno, "attaching the rootfs %s", a->rootfs);
      snprintf (rootfs_fd_path, sizeof (rootfs_fd_path), "/proc/self/fd/%d",
                a->rootfs_tree);
      rootfs = rootfs_fd_path;
    }
  if (a->new_userns)
    {
      r = become_userns_root (err);
      if (r < 0)
        return r;
    }
  r = join_namespaces (a, err);
  if (r < 0)
    return r;
  if (s->linux_.ns[NS_CGROUP].present && s->linux_.ns[NS_CGROUP].path == NULL
      && unshare (CLONE_NEWCGROUP) < 0)
    return moat_fail (err, errno, "creating the cgroup namespace");
  if (s->linux_.ns[NS_NET].present && s->linux_.ns[NS_NET].path == NULL)
    {
      r = netguard_loopback_up (err);
      if (r < 0)
        return r;
    }
  r = set_uts_names (s, err);
  if (r < 0)
    return r;

  mount_plan_build (s, rootfs, a->cgroup_mode, a->no_pivot, &plan);
  r = rootfs_prepare (&run, err);
  if (r < 0)
    return r;
  r = sync_send (a->sync_fd, SYNC_MOUNTS_DONE, err);
  if (r < 0)
    return r;
  /* moat runs prestart and createRuntime hooks here; then come the states
   * for createContainer and for startContainer. */
  r = sync_recv_data (a->sync_fd, SYNC_CREATE_STATE, &creating_state, err);
  if (r == 0)
    r = sync_recv_data (a->sync_fd, SYNC_START_STATE, ret_state, err);
  if (r < 0)
    return r;
  r = rootfs_pivot (&run, err);
  if (r < 0)
    return r;
  r = apply_sysctl (s, err);
  if (r < 0)
    return r;
  r = p->terminal ? send_console (a->sync_fd, p, err) : 0;
  if (r < 0)
    return r;
  r = hooks_run (&s->hooks[HOOK_CREATE_CONTAINER], HOOK_CREATE_CONTAINER,
                 creating_state, err);
  if (r < 0)
    return r;
  r = a->reaper ? 0 : process_resolve_exec (p, ret_exec, err);
  if (r < 0)
    return r;
  r = open_cwd (p->cwd, ret_cwd, err);
  if (r < 0)
    return r;
  r = rootfs_finish (&run, err);
  if (r == 0)
    r = landlock_prepare (&plan,
                          landlock_decision (s->annotations, s->n_annotations),
                          true, NULL, &exec_list, ret_landlock, err);
  /* For `moat exec`, which adds the same rules without a directory scan. */
  if (r == 0)
    r = sync_send_data (a->sync_fd, SYNC_LANDLOCK_EXEC, exec_list,
                        exec_list ? strlen (exec_list) : 0, err);
  if (r < 0)
    return r;
  return load_agent_filter (a, err);
}

static void
reaper_wake (int sig)
{
  (void)sig;
}

/* A session's init, with the process's user, caps, no_new_privs and both
 * seccomp filters on: it holds nothing open (moat start sees the fifo's
 * last reader go) and reaps the orphans of ended execs until the container
 * is deleted. SIGCHLD stays blocked but for sigsuspend, so a child dying
 * between the reap and the wait still wakes it. */
static void __attribute__ ((noreturn)) init_reap_forever (void)
{
  sigset_t chld, none;

  (void)linux_undumpable (NULL);
  close_range (3, ~0U, 0);
  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  sigemptyset (&none);
  signal (SIGCHLD, reaper_wake);
  sigprocmask (SIG_BLOCK, &chld, NULL);
  for (;;)
    {
      while (waitpid (-1, NULL, WNOHANG) > 0)
        ;
      sigsuspend (&none);
    }
}

void
linux_init_main (struct init_args *a)
{
  struct moat_error *err = NULL;
  cleanup_free char *exec_path = NULL;
  cleanup_free char *state = NULL;
  int cwd_fd = -1, landlock_fd = -1;
  char c;
  ssize_t n;

  /* flock belongs to the open file: a copy here would keep the state dir
   * locked for as long as the container lives. */
  if (a->lock_fd >= 0)
    close (a->lock_fd);
  /* Until execve the init is a copy of moat: nothing in a shared pid
   * namespace may read its memory or open its /proc/PID/exe for writing
   * (CVE-2019-5736); execve resets this for the payload. */
  if (linux_undumpable (NULL) < 0)
    _exit (1);
  /* G10: a session and process group of its own, so that nothing in the
   * container shares the caller's: no kill (0, ...) reaches the caller's
   * group, no /dev/tty opens the caller's terminal (whose TIOCSTI would
   * type into the host shell). With process.terminal the container's pty
   * becomes the controlling terminal of this session. */
  if (setsid () < 0)
    _exit (1);
  /* Until moat has seen READY, the init must not outlive it. */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    _exit (1);
  if (init_setup (a, &exec_path, &cwd_fd, &landlock_fd, &state, &err) < 0)
    {
      sync_send_error (a->sync_fd, err);
      _exit (1);
    }
  prctl (PR_SET_PDEATHSIG, 0, 0, 0, 0);
  if (sync_send (a->sync_fd, SYNC_READY, &err) < 0)
    _exit (1);
  close (a->sync_fd);

  /* `moat start` writes one byte. */
  do
    n = read (a->fifo_fd, &c, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1)
    _exit (1);
  /* fifo_fd stays open (O_CLOEXEC) until execve: `moat start` waits for
   * its last reader to go before it runs poststart hooks. */

  if (hooks_run (&a->spec->hooks[HOOK_START_CONTAINER], HOOK_START_CONTAINER,
                 state, &err)
          == 0
      && process_exec (a->spec->process, exec_path, cwd_fd, a->preserve_fds,
                       landlock_fd, a->seccomp_config, a->seccomp_builtin,
                       a->refusal_sock, &err)
             == 0)
    init_reap_forever ();
  {
    char buf[1200];
    int len = snprintf (buf, sizeof (buf), "moat: %s\n",
                        err && err->msg ? err->msg : "exec failed");
    if (write (2, buf, len) < 0)
      (void)0;
  }
  _exit (err && (err->errnum == ENOENT) ? 127
         : err && err->errnum == EACCES ? 126
                                        : 1);
}
