/* moat exec: a new process in a running container, under the same profile
 * as its init: the init's namespaces (joined through a pidfd), its cgroup,
 * the hardened process settings and both seccomp filters. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "container_internal.h"
#include "init/landlock.h"
#include "init/linux.h"
#include "init/mount_ops.h"
#include "init/selinux.h"
#include "seccomp/seccomp.h"
#include "seccomp/seccomp_refusals.h"
#include "init/sync.h"
#include "init/terminal.h"
#include "../lib/util.h"

static int
parse_user (const char *s, struct spec_user *u, struct moat_error **err)
{
  cleanup_free char *copy = xstrdup (s);
  char *colon = strchr (copy, ':');
  uint64_t v;

  if (colon)
    *colon = '\0';
  if (parse_uint64 (copy, &v) < 0 || v > UINT32_MAX)
    return moat_fail (err, 0, "--user: expected UID[:GID], got %s", s);
  u->uid = (uint32_t)v;
  if (colon)
    {
      if (parse_uint64 (colon + 1, &v) < 0 || v > UINT32_MAX)
        return moat_fail (err, 0, "--user: expected UID[:GID], got %s", s);
      u->gid = (uint32_t)v;
    }
  return 0;
}

/* The process to run: --process FILE, or the init's with args replaced. */
static int
build_process (const struct exec_opts *o, const struct spec *s,
               struct spec_process **ret, struct moat_error **err)
{
  struct spec_process *p = NULL;
  int r;

  if (o->process_file)
    {
      cleanup_free char *text = NULL;
      size_t len;
      r = read_file_at (AT_FDCWD, o->process_file, JSON_MAX_SIZE_CONFIG, &text,
                        &len);
      if (r < 0)
        return moat_fail (err, -r, "reading %s", o->process_file);
      r = spec_process_parse (text, len, &p, err);
      if (r < 0)
        return moat_error_wrap (err, "process %s", o->process_file);
    }
  else
    {
      if (o->argv == NULL || o->argv[0] == NULL)
        return moat_fail (err, 0, "no command to run (--process or args)");
      p = xcalloc (1, sizeof (*p));
      p->args = strv_dup (o->argv);
      p->env = strv_dup (s->process ? s->process->env : NULL);
      p->cwd = xstrdup (s->process && s->process->cwd ? s->process->cwd : "/");
      if (s->process)
        {
          p->user.uid = s->process->user.uid;
          p->user.gid = s->process->user.gid;
        }
    }
  /* The container's SELinux label unless the process asks for its own. */
  if (p->selinux_label == NULL && s->process && s->process->selinux_label)
    p->selinux_label = xstrdup (s->process->selinux_label);
  for (char **e = o->env; e && *e; e++)
    strv_append (&p->env, *e);
  if (o->cwd)
    {
      free (p->cwd);
      p->cwd = xstrdup (o->cwd);
    }
  if (o->user && (r = parse_user (o->user, &p->user, err)) < 0)
    {
      spec_process_free (p);
      return r;
    }
  if (o->n_additional_gids)
    {
      /* runc appends --additional-gids to the process's own. */
      struct spec_user *u = &p->user;
      u->additional_gids = xrealloc (
          u->additional_gids, (u->n_additional_gids + o->n_additional_gids)
                                  * sizeof (*u->additional_gids));
      memcpy (u->additional_gids + u->n_additional_gids, o->additional_gids,
              o->n_additional_gids * sizeof (*o->additional_gids));
      u->n_additional_gids += o->n_additional_gids;
    }
  if (o->tty)
    p->terminal = true;
  if (p->cwd == NULL || p->cwd[0] != '/')
    {
      spec_process_free (p);
      return moat_fail (err, 0, "process.cwd must be an absolute path");
    }
  *ret = p;
  return 0;
}

static void
restore_child_namespaces (int pid_ns, int time_ns)
{
  if (pid_ns >= 0)
    setns (pid_ns, CLONE_NEWPID);
  if (time_ns >= 0)
    setns (time_ns, CLONE_NEWTIME);
}

struct exec_child
{
  int pidfd;
  int ns_flags;
  int sync_fd;
  const struct spec_process *proc;
  const struct spec *spec;   /* G14: the mount plan's rules */
  const char *landlock;      /* G14: create's decision, from the state */
  const char *landlock_exec; /* G14: the init's exec list; NULL: none */
  const struct seccomp_prog *sc_config, *sc_builtin;
  int refusal_sock; /* -1: nobody counts the refusals */
  int preserve_fds;
  /* It joins its cgroups itself, as the init: cgroup_open_join_files. */
  struct cgroup *cg;
  const int *cgroup_fds;
  bool in_unified; /* cloned into the v2 one already */
  bool wait_go;    /* execve only after moat's SYNC_EXEC_GO */
};

static void __attribute__ ((noreturn)) exec_child_main (struct exec_child *c)
{
  struct moat_error *err = NULL;
  cleanup_free char *exec_path = NULL;
  int cwd_fd = -1, landlock_fd = -1;

  /* Until execve this process is a copy of moat inside the container: no
   * container process may read its memory or open its exe. */
  (void)linux_undumpable (NULL);
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  /* A socket hung up already has lost moat before the line above could
   * take effect (a session's SYNC_EXEC_GO may be waiting in it: not a
   * hang-up). */
  struct pollfd hup = { .fd = c->sync_fd, .events = POLLRDHUP };
  if (poll (&hup, 1, 0) < 0 || (hup.revents & (POLLHUP | POLLRDHUP | POLLERR)))
    _exit (1);
  /* G10: out of the caller's session and process group, as the init. */
  if (setsid () < 0)
    _exit (1);
  /* Before anything else, and before its rlimits are raised: in the
   * container's cgroups. It raises them itself, still host root: no round
   * trip to moat. */
  if (cgroup_add_self (c->cg, c->in_unified, c->cgroup_fds, &err) == 0)
    process_raise_rlimits (0, c->proc, &err);
  /* G12: a network, ipc or uts namespace the container joined by path
   * belongs to another user namespace; moat (host root) may join it before
   * it becomes a stranger in the container's own, and only then. The user
   * namespace comes with the mount namespace, in one call: the kernel
   * refuses it to a process in a chroot (--no-pivot) otherwise. */
  if (err == NULL && (c->ns_flags & CLONE_NEWUSER)
      && (c->ns_flags & (CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS))
      && setns (c->pidfd,
                c->ns_flags & (CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS))
             < 0)
    moat_fail (&err, errno, "joining the container's namespaces");
  if (err == NULL && setns (c->pidfd, c->ns_flags) < 0)
    moat_fail (&err, errno, "joining the container's namespaces");
  /* As the init does: the namespace's root from here, so that what it
   * makes (the pty below) belongs to an id the namespace maps. */
  if (err == NULL && (c->ns_flags & CLONE_NEWUSER)
      && ((setresgid (0, 0, 0) < 0 && errno != EINVAL)
          || (setresuid (0, 0, 0) < 0 && errno != EINVAL)))
    moat_fail (&err, errno, "becoming root in the user namespace");
  if (err == NULL)
    linux_undumpable (&err);
  if (err == NULL && c->proc->terminal)
    {
      int master = -1;
      if (terminal_setup_child (c->proc->has_console_size,
                                c->proc->console_height, c->proc->console_width,
                                &master, &err)
              == 0
          && sync_send (c->sync_fd, SYNC_PTY, &err) == 0)
        fd_send (c->sync_fd, master, &err);
      if (master >= 0)
        close (master);
    }
  if (err == NULL)
    process_resolve_exec (c->proc, &exec_path, &err);
  if (err == NULL)
    {
      int root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (root < 0
          || rootfs_open_in (root, c->proc->cwd, false, false, &cwd_fd, &err)
                 < 0)
        moat_fail (&err, errno, "process.cwd %s", c->proc->cwd);
      if (root >= 0)
        close (root);
    }
  if (err == NULL)
    {
      /* The init's plan but for its rootfs path and cgroup mode: on a v1
       * host its read-only cgroup mounts, beneath /sys, which is noexec
       * and read-only itself: the same rules. */
      cleanup_mount_plan struct mount_plan plan = { 0 };
      mount_plan_build (c->spec, "/", CGROUP_MODE_V2, false, &plan);
      landlock_prepare (&plan, c->landlock, false, c->landlock_exec, NULL,
                        &landlock_fd, &err);
    }
  /* EOF instead: moat is gone, and its watchdog may never have been.
   * Awaited on the error path too: a go left unread would make moat read
   * a reset connection, not this process's error. */
  if (c->wait_go && sync_recv (c->sync_fd, SYNC_EXEC_GO, NULL) < 0)
    _exit (1);
  if (err == NULL)
    {
      prctl (PR_SET_PDEATHSIG, 0, 0, 0, 0);
      /* On success execve closes sync_fd (CLOEXEC): moat sees EOF. */
      process_exec (c->proc, exec_path, cwd_fd, c->preserve_fds, landlock_fd,
                    c->sc_config, c->sc_builtin, c->refusal_sock, &err);
    }
  sync_send_error (c->sync_fd, err);
  _exit (err && err->errnum == ENOENT ? 127 : 126);
}

/* EOF on the sync socket means execve succeeded. */
static int
wait_exec (int sync, int *ret_master, const struct exec_opts *o,
           struct moat_error **err)
{
  for (;;)
    {
      struct sync_msg m;
      ssize_t n = TEMP_FAILURE_RETRY (recv (sync, &m, sizeof (m) - 1, 0));
      if (n < 0)
        return moat_fail (err, errno, "exec: sync");
      if (n == 0)
        return 0;
      if (m.type == SYNC_PTY)
        {
          int master = -1;
          int r = fd_recv (sync, &master, err);
          if (r < 0)
            return r;
          if (o->console_socket)
            {
              r = terminal_send_to_console_socket (o->console_socket, master,
                                                   err);
              close (master);
              if (r < 0)
                return r;
            }
          else
            *ret_master = master;
          continue;
        }
      if (m.type == SYNC_ERROR)
        {
          ((char *)&m)[n] = '\0';
          moat_fail (err, 0, "%s", m.msg);
          (*err)->errnum = m.errnum;
          return -1;
        }
      return moat_fail (err, 0, "exec: sync: unexpected %s",
                        sync_type_name (m.type));
    }
}

/* Everything exec sets up on the host, and what one phase hands the
 * next; one undo path (exec_ctx_undo) on failure. */
struct exec_ctx
{
  const struct moat_globals *g;
  const struct exec_opts *o;
  int dirfd, pidfd, master;
  struct container_state *st;
  struct decision *d;   /* what create decided, as saved */
  const struct spec *s; /* its final spec */
  struct spec_process *proc;
  struct seccomp_prog sc_config, sc_builtin;
  char *landlock_exec; /* the init's exec list (G14); NULL: none */
  struct cgroup *cg;
  struct cgroup *opened_cg; /* the container's, opened by the status check */
  int *cgroup_fds; /* the child's, to join it (cgroup_open_join_files) */
  int unified_dir; /* CLONE_INTO_CGROUP's, -1 if none */
  int sync_fd, child_sync_fd; /* moat's end, the child's end */
  /* While moat's children are born in the container's pid and time
   * namespaces: its own, to go back to. */
  bool in_container_ns;
  int own_pid_ns, own_time_ns;
  pid_t pid;
  struct exec_child child;
};

static void
exec_ctx_init (struct exec_ctx *c, const struct moat_globals *g,
               const struct exec_opts *o)
{
  *c = (struct exec_ctx){ .g = g,
                          .o = o,
                          .dirfd = -1,
                          .pidfd = -1,
                          .master = -1,
                          .sync_fd = -1,
                          .child_sync_fd = -1,
                          .unified_dir = -1,
                          .own_pid_ns = -1,
                          .own_time_ns = -1,
                          .pid = -1 };
}

static void
exec_ctx_leave_namespaces (struct exec_ctx *c)
{
  if (!c->in_container_ns)
    return;
  c->in_container_ns = false;
  restore_child_namespaces (c->own_pid_ns, c->own_time_ns);
}

static void
exec_ctx_undo (struct exec_ctx *c)
{
  exec_ctx_leave_namespaces (c);
  if (c->pid > 0)
    {
      kill (c->pid, SIGKILL);
      waitpid (c->pid, NULL, 0);
    }
}

static void
exec_ctx_release (struct exec_ctx *c)
{
  int *fds[]
      = { &c->dirfd,         &c->pidfd,      &c->master,      &c->sync_fd,
          &c->child_sync_fd, &c->own_pid_ns, &c->own_time_ns, &c->unified_dir };
  /* Lent by the caller: its own to release. */
  if (c->o->state)
    {
      c->st = NULL;
      c->dirfd = -1;
    }
  for (size_t i = 0; i < sizeof (fds) / sizeof (fds[0]); i++)
    if (*fds[i] >= 0)
      close (*fds[i]);
  if (c->cgroup_fds)
    cgroup_close_self_files (c->cgroup_fds, cgroup_n_hiers (c->cg));
  cgroup_free (c->cg);
  cgroup_free (c->opened_cg);
  seccomp_prog_clear (&c->sc_config);
  seccomp_prog_clear (&c->sc_builtin);
  free (c->landlock_exec);
  spec_process_free (c->proc);
  decision_free (c->d);
  if (c->st)
    state_free (c->st);
}

/* The container, running or created, and the decision its create saved:
 * exec obeys it as it is and never calls the policy. */
static int
exec_phase_load (struct exec_ctx *c, struct moat_error **err)
{
  const char *status;
  int r;

  if (c->o->state)
    {
      c->st = c->o->state;
      c->dirfd = c->o->state_dirfd;
    }
  else
    {
      r = container_load (c->g, c->o->id, false, NULL, &c->dirfd, &c->st, err);
      if (r < 0)
        return r;
    }
  status = container_status_cgroup (c->dirfd, c->st, &c->opened_cg);
  if (strcmp (status, "running") != 0 && strcmp (status, "created") != 0)
    return moat_fail (err, 0, "cannot exec in a %s container", status);
  /* Bounded by the profile create saved, whatever this command line says. */
  r = container_load_decision (c->g, c->dirfd, c->st, &c->d, err);
  if (r == 0)
    c->s = c->d->spec;
  if (r == 0 && c->g->audit)
    {
      const char *ll
          = landlock_decision (c->st->annotations, c->st->n_annotations);
      c->g->audit->landlock = ll ? xstrdup (ll) : NULL;
    }
  return r;
}

/* A session exec's cgroup: beneath the container's, without limits of its
 * own (the container's hold it, above). */
static int
exec_sub_cgroup (struct exec_ctx *c, struct moat_error **err)
{
  size_t n = strlen (c->st->cgroup);

  if (strncmp (c->o->sub_cgroup, c->st->cgroup, n) != 0
      || c->o->sub_cgroup[n] != '/')
    return moat_fail (err, EINVAL, "cgroup %s is not beneath %s",
                      c->o->sub_cgroup, c->st->cgroup);
  return cgroup_create (c->o->sub_cgroup, NULL, &c->cg, err);
}

/* The process to run, hardened as the init's; its seccomp filters and the
 * container's cgroup. */
static int
exec_phase_process (struct exec_ctx *c, struct moat_error **err)
{
  const struct exec_opts *o = c->o;
  cleanup_free char *cache = NULL;
  int r;

  r = build_process (o, c->s, &c->proc, err);
  if (r < 0)
    return r;
  if (c->proc->terminal && o->console_socket == NULL && o->detach)
    return moat_fail (err, 0, "--tty with --detach needs --console-socket");
  process_bounds_apply (c->proc, &c->d->process,
                        c->g->audit ? c->g->audit->overrides : NULL);
  if (c->s->linux_.seccomp.present)
    r = seccomp_compile_config (&c->s->linux_.seccomp, &c->sc_config, err);
  cache = container_cache_dir (c->g);
  if (r == 0)
    r = seccomp_builtin_level (
        seccomp_level_of (c->st->annotations, c->st->n_annotations), cache,
        &c->sc_builtin, err);
  if (r == 0 && o->sub_cgroup)
    r = exec_sub_cgroup (c, err);
  else if (r == 0 && c->opened_cg)
    c->cg = steal_pointer (&c->opened_cg);
  else if (r == 0)
    r = cgroup_open (c->st->cgroup, &c->cg, err);
  return r;
}

/* The child, cloned in the init's pid and time namespaces (it joins the
 * others itself, through the pidfd); moat goes back to its own. */
static int
exec_phase_clone (struct exec_ctx *c, struct moat_error **err)
{
  const struct spec *s = c->s;
  struct exec_child *ch = &c->child;
  int sv[2];

  c->pidfd = container_init_pidfd (c->st);
  if (c->pidfd < 0)
    return moat_fail (err, 0, "container not running");
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return moat_fail (err, errno, "socketpair");
  c->sync_fd = sv[0];
  c->child_sync_fd = sv[1];
  ch->pidfd = c->pidfd;
  ch->sync_fd = c->child_sync_fd;
  ch->proc = c->proc;
  ch->spec = s;
  ch->landlock = landlock_decision (c->st->annotations, c->st->n_annotations);
  /* In the state; a container of an older moat kept it in a file of its
   * own. Neither: the child reads the directories itself. */
  if (c->st->landlock_exec == NULL
      && read_file_at (c->dirfd, LANDLOCK_EXEC_LIST_FILE, 1 << 20,
                       &c->landlock_exec, NULL)
             < 0)
    c->landlock_exec = NULL;
  ch->landlock_exec
      = c->st->landlock_exec ? c->st->landlock_exec : c->landlock_exec;
  ch->sc_config = c->sc_config.n_insns ? &c->sc_config : NULL;
  ch->sc_builtin = seccomp_supervised (c->o->refusals, &c->sc_config,
                                       &c->sc_builtin, &ch->refusal_sock);
  ch->preserve_fds = c->o->preserve_fds;
  ch->wait_go = c->o->before_execve != NULL;
  for (int t = 0; t < NS__MAX; t++)
    if (s->linux_.ns[t].present && t != NS_PID && t != NS_TIME)
      ch->ns_flags |= ns_table[t].clone_flag;
  /* pid (and time) namespaces apply to children: moat enters them for
   * its child only, through pid_for_children, and goes back after. */
  c->own_pid_ns = open ("/proc/self/ns/pid_for_children", O_RDONLY | O_CLOEXEC);
  c->own_time_ns
      = open ("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
  c->in_container_ns = true;
  if (s->linux_.ns[NS_PID].present && setns (c->pidfd, CLONE_NEWPID) < 0)
    return moat_fail (err, errno, "joining the pid namespace");
  if (s->linux_.ns[NS_TIME].present && setns (c->pidfd, CLONE_NEWTIME) < 0)
    return moat_fail (err, errno, "joining the time namespace");
  if (cgroup_open_join_files (c->cg, c->o->cgroup_subs, &c->cgroup_fds,
                              &c->unified_dir, err)
      < 0)
    return -1;
  ch->cg = c->cg;
  ch->cgroup_fds = c->cgroup_fds;
  /* Loaded there too, in moat's own namespaces: the child loads nothing. */
  c->pid = linux_clone (0, c->unified_dir, &ch->in_unified);
  if (c->pid == 0)
    {
      close (c->sync_fd);
      exec_child_main (ch);
    }
  /* Only that child belongs in the container's pid namespace: moat's
   * own later children (a sanitizer's threads) must not. */
  exec_ctx_leave_namespaces (c);
  if (c->pid < 0)
    return moat_fail (err, errno, "clone");
  close (c->child_sync_fd);
  c->child_sync_fd = -1;
  cgroup_close_self_files (c->cgroup_fds, cgroup_n_hiers (c->cg));
  c->cgroup_fds = NULL;
  return 0;
}

int
container_exec (const struct moat_globals *g, const struct exec_opts *o,
                int *ret_status, struct moat_error **err)
{
  struct exec_ctx c;
  int r;

  *ret_status = 255;
  exec_ctx_init (&c, g, o);
  r = exec_phase_load (&c, err);
  if (r == 0)
    r = exec_phase_process (&c, err);
  if (r == 0)
    r = exec_phase_clone (&c, err);
  if (r == 0 && o->before_execve)
    {
      r = o->before_execve (o->before_execve_arg, c.sync_fd, err);
      if (r == 0)
        r = sync_send (c.sync_fd, SYNC_EXEC_GO, err);
    }
  /* EOF on the sync socket says it has executed. */
  if (r == 0)
    r = wait_exec (c.sync_fd, &c.master, o, err);
  if (r < 0)
    exec_ctx_undo (&c);
  if (r < 0 && o->sub_cgroup && c.cg)
    cgroup_destroy (c.cg, NULL);
  if (r == 0 && o->ret_pid)
    *o->ret_pid = c.pid;
  /* The process runs from here: a failure no longer stops it. */
  if (r == 0 && o->pid_file)
    r = write_pid_file (o->pid_file, c.pid, err);
  if (r == 0 && o->detach)
    *ret_status = 0;
  else if (r == 0)
    r = container_wait_forwarding (c.pid, c.master, ret_status, err);
  if (g->audit && c.proc && c.proc->args && c.proc->args[0])
    g->audit->command = xstrdup (c.proc->args[0]);
  if (r == 0 && g->audit && !o->detach)
    g->audit->exit_status = *ret_status;
  exec_ctx_release (&c);
  return r;
}
