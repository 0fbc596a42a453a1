/* moat sandbox (see sandbox.h). The run, in order: reap what crashed
 * sandboxes left; find the rootfs (an image is unpacked into the cache
 * once); make the bundle ROOT/.sandbox/ID, locked for the run's life; fork
 * the watchdog; create the container with pipes as its stdout/stderr;
 * start it; pump its output against the deadline; read what it used; and
 * delete it and the bundle.
 *
 * Nothing outlives the run. The watchdog is a child that does nothing but
 * read a pipe only moat writes: EOF without the "done" byte means moat died
 * (even by SIGKILL), and it deletes the container (every process, through
 * the cgroup and the pid namespace) and the bundle. If the watchdog dies
 * too, the bundle's lock is free, and the next sandbox's reap removes both. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/pidfd.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../oci/json.h"
#include "../runtime/cgroup/cgroup.h"
#include "../runtime/container_internal.h"
#include "../runtime/statedir.h"
#include "image.h"
#include "sandbox_internal.h"
#include "../lib/util.h"

/* How long processes get between SIGTERM and SIGKILL at the deadline. */
#define SANDBOX_TERM_GRACE_MS 500
/* A bundle dir with no lock file yet is stale after this long. */
#define SANDBOX_UNLOCKED_STALE_S 60

int64_t
sandbox_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
sandbox_now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int
sandbox_parse_duration (const char *s, int64_t *ret_ms)
{
  char *end;
  double v;
  double mult = 1000;

  if (s == NULL || *s == '\0')
    return -EINVAL;
  errno = 0;
  v = strtod (s, &end);
  if (errno || end == s || v < 0)
    return -EINVAL;
  if (strcmp (end, "ms") == 0)
    mult = 1;
  else if (strcmp (end, "s") == 0 || *end == '\0')
    mult = 1000;
  else if (strcmp (end, "m") == 0)
    mult = 60000;
  else if (strcmp (end, "h") == 0)
    mult = 3600000;
  else
    return -EINVAL;
  if (v * mult > 1e12 || v * mult < 1)
    return -ERANGE;
  *ret_ms = (int64_t)(v * mult);
  return 0;
}

static struct moat_globals
quiet_globals (const struct moat_globals *g)
{
  struct moat_globals q = *g;
  q.audit = NULL;
  return q;
}

int
sandbox_dir_open (const struct moat_globals *g, const char *name, int *ret,
                  struct moat_error **err)
{
  return statedir_subdir_open (g->root, name, 0700, ret, err);
}

/* Delete the container and the bundle of sandbox id. */
void
sandbox_remove (const struct moat_globals *g, int sbfd, const char *id)
{
  struct moat_globals q = quiet_globals (g);
  cleanup_error struct moat_error *e = NULL;

  container_delete (&q, id, true, &e);
  remove_tree_at (sbfd, id);
}

void
sandbox_reap_stale (const struct moat_globals *g)
{
  cleanup_close int sbfd = -1;
  DIR *d;
  struct dirent *de;
  int fd;

  if (statedir_subdir_open (g->root, ".sandbox", 0, &sbfd, NULL) < 0
      || sbfd < 0)
    return;
  fd = dup (sbfd);
  d = fd >= 0 ? fdopendir (fd) : NULL;
  if (d == NULL)
    return;
  while ((de = readdir (d)))
    {
      cleanup_close int bfd = -1;
      cleanup_close int lockfd = -1;
      struct stat stb;
      if (de->d_name[0] == '.' || container_id_check (de->d_name, NULL) < 0)
        continue;
      bfd = openat (sbfd, de->d_name,
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (bfd < 0)
        continue;
      lockfd = openat (bfd, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (lockfd < 0)
        {
          /* Made but never locked: a crash between mkdir and the lock. */
          if (fstat (bfd, &stb) == 0
              && time (NULL) - stb.st_mtime > SANDBOX_UNLOCKED_STALE_S)
            sandbox_remove (g, sbfd, de->d_name);
          continue;
        }
      if (flock (lockfd, LOCK_EX | LOCK_NB) < 0)
        continue; /* its moat (or watchdog) is alive */
      sandbox_remove (g, sbfd, de->d_name);
    }
  closedir (d);
}

int
lock_file_make (int dirfd, const char *name, int *ret, struct moat_error **err)
{
  cleanup_close int fd
      = openat (dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  char proc[64];

  if (fd < 0 || flock (fd, LOCK_EX) < 0)
    return moat_fail (err, errno, "%s", name);
  snprintf (proc, sizeof (proc), "/proc/self/fd/%d", fd);
  if (linkat (AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) < 0)
    return moat_fail (err, errno, "%s", name);
  *ret = steal_fd (&fd);
  return 0;
}

/* ROOT/.sandbox/ID with its lock held: the lock file is made unnamed,
 * locked, then linked in, so a reap never sees it unlocked. */
int
sandbox_bundle_make (int sbfd, const char *prefix, char *ret_id,
                     int *ret_lockfd, int *ret_bfd, struct moat_error **err)
{
  unsigned char rnd[8];
  cleanup_close int bfd = -1;
  cleanup_close int lockfd = -1;

  if (getrandom (rnd, sizeof (rnd), 0) != sizeof (rnd))
    return moat_fail (err, errno, "getrandom");
  snprintf (ret_id, 32, "%s-%02x%02x%02x%02x%02x%02x%02x%02x", prefix, rnd[0],
            rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
  if (mkdirat (sbfd, ret_id, 0700) < 0)
    return moat_fail (err, errno, "making the bundle %s", ret_id);
  bfd = openat (sbfd, ret_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (bfd < 0)
    return moat_fail (err, errno, "opening the bundle");
  if (lock_file_make (bfd, "lock", &lockfd, err) < 0)
    return moat_error_wrap (err, "locking the bundle");
  *ret_lockfd = steal_fd (&lockfd);
  *ret_bfd = steal_fd (&bfd);
  return 0;
}

struct sandbox_remove_args
{
  const struct moat_globals *g;
  int sbfd;
  const char *id;
};

static void
watchdog_remove_sandbox (const void *arg)
{
  const struct sandbox_remove_args *a = arg;
  sandbox_remove (a->g, a->sbfd, a->id);
}

int
sandbox_watchdog_start (const struct moat_globals *g, int sbfd, const char *id,
                        struct moat_error **err)
{
  const struct sandbox_remove_args a = { g, sbfd, id };
  return watchdog_start (watchdog_remove_sandbox, &a, NULL, 0, err);
}

/* The watchdog: see the top of the file. Returns the write end moat keeps
 * (a byte on it means "done, exit"). */
int
watchdog_start (void (*on_moat_death) (const void *arg), const void *arg,
                const int *drop, size_t n_drop, struct moat_error **err)
{
  int p[2];
  pid_t pid;

  if (pipe2 (p, O_CLOEXEC) < 0)
    return moat_fail (err, errno, "watchdog pipe");
  pid = fork ();
  if (pid < 0)
    {
      close (p[0]);
      close (p[1]);
      return moat_fail (err, errno, "forking the watchdog");
    }
  if (pid == 0)
    {
      int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
      char c;
      close (p[1]);
      for (size_t i = 0; i < n_drop; i++)
        close (drop[i]);
      /* Out of moat's session and process group: a ^C or a kill of the
       * group that takes moat down must leave the watchdog to clean up. */
      setsid ();
      signal (SIGINT, SIG_IGN);
      signal (SIGTERM, SIG_IGN);
      signal (SIGHUP, SIG_IGN);
      signal (SIGQUIT, SIG_IGN);
      signal (SIGPIPE, SIG_IGN);
      for (int fd = 0; null >= 0 && fd < 3; fd++)
        dup2 (null, fd);
      if (TEMP_FAILURE_RETRY (read (p[0], &c, 1)) == 1)
        _exit (0);
      on_moat_death (arg);
      _exit (0);
    }
  close (p[0]);
  return p[1];
}

/* Swap the container's stdio in for create (the init inherits fds 0-2) and
 * back. saved[] holds moat's own. */
int
sandbox_stdio_swap_in (int in, int out, int errw, int saved[3],
                       struct moat_error **err)
{
  const int mine[3] = { in, out, errw };

  for (int fd = 0; fd < 3; fd++)
    {
      saved[fd] = fcntl (fd, F_DUPFD_CLOEXEC, 3);
      if (saved[fd] < 0)
        {
          /* A closed stdio fd: give it /dev/null to restore later. */
          saved[fd] = open ("/dev/null", O_RDWR | O_CLOEXEC);
          if (saved[fd] < 0)
            return moat_fail (err, errno, "saving stdio");
        }
    }
  for (int fd = 0; fd < 3; fd++)
    if (dup2 (mine[fd], fd) < 0)
      return moat_fail (err, errno, "stdio for the container");
  return 0;
}

void
sandbox_stdio_swap_out (int saved[3])
{
  for (int fd = 0; fd < 3; fd++)
    if (saved[fd] >= 0)
      {
        dup2 (saved[fd], fd);
        close (saved[fd]);
        saved[fd] = -1;
      }
}

int
sandbox_pipes_in (struct sandbox_pipes *p, int infd, struct moat_error **err)
{
  p->saved[0] = p->saved[1] = p->saved[2] = -1;
  if (pipe2 (p->out, O_CLOEXEC) < 0)
    return moat_fail (err, errno, "pipe");
  if (pipe2 (p->err, O_CLOEXEC) < 0)
    {
      close (p->out[0]);
      close (p->out[1]);
      return moat_fail (err, errno, "pipe");
    }
  if (sandbox_stdio_swap_in (infd, p->out[1], p->err[1], p->saved, err) < 0)
    {
      sandbox_stdio_swap_out (p->saved);
      for (int i = 0; i < 2; i++)
        {
          close (p->out[i]);
          close (p->err[i]);
        }
      return -1;
    }
  return 0;
}

void
sandbox_pipes_out (struct sandbox_pipes *p, struct sandbox_run_state *rs,
                   int devnull, int64_t limit, int stderr_fd)
{
  sandbox_stdio_swap_out (p->saved);
  close (p->out[1]);
  close (p->err[1]);
  sandbox_stream_init (&rs->out, p->out[0], STDOUT_FILENO, devnull, limit);
  sandbox_stream_init (&rs->err, p->err[0],
                       stderr_fd > 0 ? stderr_fd : STDERR_FILENO, devnull,
                       limit);
}

void
sandbox_streams_close (struct sandbox_run_state *rs)
{
  if (rs->out.fd >= 0)
    close (rs->out.fd);
  if (rs->err.fd >= 0)
    close (rs->err.fd);
  rs->out.fd = rs->err.fd = -1;
}

/* Every process of the container. */
static void
kill_all (struct cgroup *cg, int pidfd, int sig)
{
  if (pidfd >= 0)
    pidfd_send_signal (pidfd, sig, NULL, 0);
  if (cg)
    cgroup_kill_all (cg, sig, NULL);
}

/* Wait for the init, pump output, enforce the deadline. */
void
sandbox_run_loop (struct sandbox_run_state *rs, struct cgroup *cg,
                  int64_t timeout_ms)
{
  cleanup_close int pidfd = pidfd_open (rs->pid, 0);
  cleanup_close int sfd = -1;
  sigset_t set;
  int64_t deadline = timeout_ms > 0 ? rs->started_ms + timeout_ms : -1;
  int64_t kill_at = -1, drain_until = -1;

  sigemptyset (&set);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGHUP);
  sigprocmask (SIG_BLOCK, &set, NULL);
  sfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  sandbox_alarm_at (timeout_ms);
  for (;;)
    {
      struct pollfd p[5]
          = { { .fd = rs->exited ? -1 : pidfd, .events = POLLIN },
              { .fd = sfd, .events = POLLIN },
              { .fd = rs->out.fd, .events = POLLIN },
              { .fd = rs->err.fd, .events = POLLIN },
              { .fd = seccomp_refusals_fd (&rs->refusals), .events = POLLIN } };
      int64_t now = sandbox_now_ms (), wake = -1;
      int wait;

      if (rs->exited && rs->out.fd < 0 && rs->err.fd < 0)
        break;
      if (deadline >= 0 && now >= deadline && kill_at < 0 && !rs->exited)
        {
          rs->timed_out = true;
          kill_all (cg, -1, SIGTERM);
          kill_at = now + SANDBOX_TERM_GRACE_MS;
        }
      if (kill_at >= 0 && now >= kill_at && !rs->exited)
        {
          kill_all (cg, pidfd, SIGKILL);
          kill_at = INT64_MAX;
        }
      if (drain_until >= 0 && now >= drain_until)
        break; /* a writer outside the container (cannot happen) */
      if (deadline >= 0 && kill_at < 0)
        wake = deadline;
      if (kill_at >= 0 && kill_at != INT64_MAX)
        wake = kill_at;
      if (drain_until >= 0)
        wake = wake < 0 || drain_until < wake ? drain_until : wake;
      wait = wake < 0 ? -1 : (int)(wake > now ? wake - now : 0);
      if (poll (p, 5, wait) < 0 && errno != EINTR)
        break;
      if (p[4].revents)
        seccomp_refusals_handle (&rs->refusals, p[4].revents);
      if (p[2].revents)
        sandbox_stream_pump (&rs->out);
      if (p[3].revents)
        sandbox_stream_pump (&rs->err);
      if (p[1].revents & POLLIN)
        {
          struct signalfd_siginfo si;
          if (read (sfd, &si, sizeof (si)) == sizeof (si) && !rs->exited
              && kill_at < 0)
            {
              rs->interrupted = (int)si.ssi_signo;
              kill_all (cg, -1, SIGTERM);
              kill_at = sandbox_now_ms () + SANDBOX_TERM_GRACE_MS;
            }
        }
      if (!rs->exited && (p[0].revents & POLLIN)
          && waitpid (rs->pid, &rs->status, WNOHANG) == rs->pid)
        {
          rs->exited = true;
          rs->ended_ms = sandbox_now_ms ();
          rs->ended_ns = sandbox_now_ns ();
          /* The pid namespace dies with its init; the cgroup kill is for
           * anything that got out of it (it cannot, but cheap to be sure). */
          if (cg)
            cgroup_kill_all (cg, SIGKILL, NULL);
          drain_until = rs->ended_ms + 5000;
        }
    }
  if (!rs->exited)
    {
      kill_all (cg, pidfd, SIGKILL);
      TEMP_FAILURE_RETRY (waitpid (rs->pid, &rs->status, 0));
      rs->exited = true;
      rs->ended_ms = sandbox_now_ms ();
      rs->ended_ns = sandbox_now_ns ();
    }
  sandbox_alarm_at (0);
  /* Left blocked: a late ^C must not cut the cleanup short. */
}
