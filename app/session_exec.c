/* moat session exec: one command in a live session, with the sandbox's
 * deadline, output caps and record. The command runs in a cgroup of its
 * own beneath the session's (the session's limits still hold, above it),
 * so the record counts its whole process tree, and the deadline, a signal
 * to moat, or the end of the command kills that tree and nothing else. A
 * watchdog (sandbox.c) destroys that cgroup if moat dies, even by SIGKILL;
 * the session lives on. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../runtime/cgroup/cgroup.h"
#include "../runtime/container_internal.h"
#include "session_internal.h"
#include "../lib/util.h"

static void
watchdog_destroy_cgroup (const void *arg)
{
  struct cgroup *cg = NULL;
  cleanup_error struct moat_error *e = NULL;

  if (cgroup_open (arg, &cg, &e) == 0)
    {
      cgroup_destroy (cg, &e);
      cgroup_free (cg);
    }
}

/* The session's container cgroup plus /exec-RANDOM. */
static int
exec_cgroup_path (const struct container_state *st, char **ret,
                  struct moat_error **err)
{
  unsigned char rnd[6];

  if (getrandom (rnd, sizeof (rnd), 0) != sizeof (rnd))
    return moat_fail (err, errno, "getrandom");
  *ret = xasprintf ("%s/exec-%02x%02x%02x%02x%02x%02x", st->cgroup, rnd[0],
                    rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
  return 0;
}

/* The session, shared-locked (*ret_lockfd), its record and its container,
 * each read once. One past its limits goes now, as the next moat would
 * remove it, and is no session. */
static int
session_enter (const struct moat_globals *g, const char *id, int *ret_sdfd,
               int *ret_lockfd, struct session_meta *ret_meta, int *ret_cdirfd,
               struct container_state **ret_st, struct moat_error **err)
{
  cleanup_close int sdfd = -1;
  cleanup_close int lockfd = -1;
  cleanup_close int cdirfd = -1;
  cleanup_state struct container_state *st = NULL;
  cleanup_error struct moat_error *gone = NULL;
  const char *why;

  if (session_open (g, id, &sdfd, err) < 0)
    return -1;
  /* Shared with other execs; the reap and a create hold it alone. */
  lockfd = openat (sdfd, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (lockfd < 0 || flock (lockfd, LOCK_SH) < 0)
    return moat_fail (err, errno, "locking the session");
  if (session_meta_load (sdfd, ret_meta, err) < 0)
    return -1;
  if (container_load (g, id, false, NULL, &cdirfd, &st, &gone) < 0)
    st = NULL;
  why = session_expiry (ret_meta, st, session_now_unix_ms ());
  if (why)
    {
      session_meta_clear (ret_meta);
      close (steal_fd (&lockfd));
      session_reap_one (g, id);
      return moat_fail (err, ENOENT, "no such session (%s)", why);
    }
  *ret_sdfd = steal_fd (&sdfd);
  *ret_lockfd = steal_fd (&lockfd);
  *ret_cdirfd = steal_fd (&cdirfd);
  *ret_st = steal_pointer (&st);
  return 0;
}

/* Each exec holds ROOT/.session/ID/exec-RANDOM.lock (its watchdog shares
 * the lock) for as long as its processes may live. A lock that is free
 * belongs to an exec whose moat and watchdog were both killed: its cgroup,
 * and whatever still runs in it, goes now. */
static void
reap_dead_execs (int sdfd, const char *base)
{
  DIR *d;
  struct dirent *de;
  int fd = dup (sdfd);

  d = fd >= 0 ? fdopendir (fd) : NULL;
  while (d && (de = readdir (d)))
    {
      size_t len = strlen (de->d_name);
      cleanup_close int lockfd = -1;
      cleanup_free char *path = NULL;
      struct cgroup *cg = NULL;
      if (strncmp (de->d_name, "exec-", 5) != 0 || len < 10
          || strcmp (de->d_name + len - 5, ".lock") != 0)
        continue;
      lockfd = openat (sdfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (lockfd < 0 || flock (lockfd, LOCK_EX | LOCK_NB) < 0)
        continue;
      path = xasprintf ("%s/%.*s", base, (int)(len - 5), de->d_name);
      if (cgroup_open (path, &cg, NULL) == 0)
        {
          cgroup_destroy (cg, NULL);
          cgroup_free (cg);
        }
      unlinkat (sdfd, de->d_name, 0);
    }
  if (d)
    closedir (d);
}

struct watchdog_fork
{
  const char *cgpath;
  const struct sandbox_pipes *pipes;
  int *ret_wd;
};

/* exec_opts' before_execve: the watchdog is forked while the command's
 * process sets itself up, and the command execs only once it runs. It
 * drops what would keep the command's output open, or moat's end of the
 * child's socket. */
static int
watchdog_fork_before_execve (void *arg, int moat_sync_fd,
                             struct moat_error **err)
{
  const struct watchdog_fork *w = arg;
  const int drop[] = { moat_sync_fd, w->pipes->out[1], w->pipes->err[1] };
  int wd = watchdog_start (watchdog_destroy_cgroup, w->cgpath, drop,
                           sizeof (drop) / sizeof (drop[0]), err);
  if (wd < 0)
    return -1;
  *w->ret_wd = wd;
  return 0;
}

/* Start the command with the pipes as its stdio, its process tree in the
 * tracking cgroup cgpath (made here, removed at the end), the watchdog's
 * pipe in *ret_wd; run it to the end. */
static int
exec_and_wait (const struct moat_globals *g, const struct session_exec_opts *o,
               const char *cgpath, int cdirfd, struct container_state *st,
               int infd, const struct sandbox_opts *so,
               struct sandbox_run_state *rs, int *ret_wd,
               struct moat_error **err)
{
  struct sandbox_pipes pipes;
  struct watchdog_fork wf = { cgpath, &pipes, ret_wd };
  cleanup_free char *controllers = NULL;
  cleanup_free char *sub = NULL;
  char *subs[2] = { NULL, NULL };
  struct exec_opts eo = { .id = o->id,
                          .argv = o->argv,
                          .env = o->env,
                          .cwd = o->cwd,
                          .user = o->user,
                          .detach = true,
                          .cgroup_subs = subs,
                          .ret_pid = &rs->pid,
                          .refusals = &rs->refusals,
                          .state = st,
                          .state_dirfd = cdirfd,
                          .before_execve = watchdog_fork_before_execve,
                          .before_execve_arg = &wf };
  cleanup_close int devnull = open ("/dev/null", O_WRONLY | O_CLOEXEC);
  struct cgroup *cg = NULL;
  int status, r;

  signal (SIGPIPE, SIG_IGN);
  rs->started_ms = sandbox_now_ms ();
  rs->started_ns = sandbox_now_ns ();
  if (cgroup_create_tracking (cgpath, &cg, &controllers, err) < 0)
    return -1;
  /* cgroup_add_pid_sub's form: the tracking hierarchies' sub-cgroup, the
   * container's own elsewhere. */
  sub = controllers
            ? xasprintf ("%s:%s", controllers, strrchr (cgpath, '/') + 1)
            : xstrdup (strrchr (cgpath, '/') + 1);
  subs[0] = sub;
  if (seccomp_refusals_open (&rs->refusals, err) < 0
      || sandbox_pipes_in (&pipes, infd, err) < 0)
    {
      seccomp_refusals_clear (&rs->refusals);
      cgroup_destroy (cg, NULL);
      cgroup_free (cg);
      return -1;
    }
  r = container_exec (g, &eo, &status, err);
  seccomp_refusals_started (&rs->refusals);
  sandbox_pipes_out (&pipes, rs, devnull, so->output_limit, so->stderr_fd);
  if (r == 0)
    {
      sandbox_run_loop (rs, cg, so->timeout_ms);
      cgroup_usage (cg, &rs->use);
    }
  else if (rs->pid > 0)
    {
      kill (rs->pid, SIGKILL);
      waitpid (rs->pid, NULL, 0);
    }
  cgroup_destroy (cg, NULL);
  cgroup_free (cg);
  sandbox_streams_close (rs);
  seccomp_refusals_clear (&rs->refusals);
  return r;
}

int
session_exec (const struct moat_globals *g, const struct session_exec_opts *o,
              int *ret_status, struct moat_error **err)
{
  cleanup_close int sdfd = -1;
  cleanup_close int lockfd = -1;
  cleanup_close int infd = -1;
  cleanup_close int wd = -1;
  cleanup_close int cdirfd = -1;
  cleanup_state struct container_state *st = NULL;
  cleanup_free char *cgpath = NULL;
  cleanup_free char *lockname = NULL;
  cleanup_close int execlock = -1;
  cleanup_free char *record = NULL;
  struct override_list local_ov = { 0 };
  struct override_list *ov = g->audit ? g->audit->overrides : &local_ov;
  struct session_meta m = { 0 };
  struct sandbox_run_state rs;
  struct sandbox_opts so = { .timeout_ms = o->timeout_ms,
                             .output_limit = o->output_limit,
                             .result_file = o->result_file,
                             .stderr_fd = o->stderr_fd,
                             .json = o->json,
                             .all_overrides = o->all_overrides };
  int r;

  memset (&rs, 0, sizeof (rs));
  if (so.timeout_ms < 0)
    so.timeout_ms = SANDBOX_DEFAULT_TIMEOUT_MS;
  if (so.output_limit < 0)
    so.output_limit = SANDBOX_DEFAULT_OUTPUT_LIMIT;
  if (o->argv == NULL || o->argv[0] == NULL)
    return moat_fail (err, 0,
                      "missing command (moat session exec [OPTIONS] ID -- "
                      "CMD [ARG...])");
  r = session_enter (g, o->id, &sdfd, &lockfd, &m, &cdirfd, &st, err);
  if (r < 0)
    return r;
  r = sandbox_stdin_open (o->stdin_file, &infd, err);
  if (r == 0)
    r = exec_cgroup_path (st, &cgpath, err);
  if (r == 0)
    {
      reap_dead_execs (sdfd, st->cgroup);
      lockname = xasprintf ("%s.lock", strrchr (cgpath, '/') + 1);
      r = lock_file_make (sdfd, lockname, &execlock, err);
    }
  session_touch_used (sdfd);
  if (r >= 0)
    r = exec_and_wait (g, o, cgpath, cdirfd, st, infd, &so, &rs, &wd, err);
  if (wd >= 0 && write (wd, "d", 1) != 1 && r >= 0)
    r = moat_fail (err, errno, "stopping the watchdog");
  if (execlock >= 0)
    unlinkat (sdfd, lockname, 0);
  session_touch_used (sdfd);
  if (r >= 0)
    {
      record = sandbox_record_json (g, o->id, &so, &rs, &m.lim, m.image, ov);
      sandbox_audit_outcome (g, o->argv[0], &rs, sandbox_exit_status (&rs));
      cleanup_free char *what = xasprintf ("session exec %s", o->id);
      r = sandbox_write_record (&so, &rs, what, record, err);
    }
  session_meta_clear (&m);
  override_list_clear (&local_ov);
  if (r < 0)
    return r;
  *ret_status = sandbox_exit_status (&rs);
  return 0;
}
