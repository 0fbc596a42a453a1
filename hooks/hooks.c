/* OCI lifecycle hooks (runtime-spec config.md "POSIX-platform Hooks"): each
 * hook is a program run with the container's state JSON on its stdin, its
 * own args and env, and an optional timeout in seconds. */
#include "hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/util.h"
#include "../oci/json.h"

/* Without pidfds (Linux < 5.3) the wait polls waitpid at this interval.
 * The fallback can go when the baseline kernel has pidfd_open. */
#define HOOK_WAIT_TICK_MS 10

/* What moat knows about one running hook. */
struct hook_run
{
  pid_t pid;
  int pidfd;         /* -1 without pidfd support */
  int stdin_fd;      /* our end of the hook's stdin, -1 once closed */
  int exec_errno_fd; /* read end: the child's execve errno, EOF on success */
  const char *state; /* bytes still to write */
  size_t state_left;
};

static int
fd_move_above_stdio (int fd)
{
  int moved;

  if (fd > 2)
    return fd;
  moved = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  close (fd);
  return moved;
}

/* Our pipe ends must not sit on 0-2 (possible when moat's own stdio is
 * closed), or the child's dup2 calls would clobber them. */
static int
pipe_above_stdio (int fds[2])
{
  if (pipe2 (fds, O_CLOEXEC) < 0)
    return -errno;
  fds[0] = fd_move_above_stdio (fds[0]);
  fds[1] = fd_move_above_stdio (fds[1]);
  if (fds[0] < 0 || fds[1] < 0)
    {
      int saved = errno;
      if (fds[0] >= 0)
        close (fds[0]);
      if (fds[1] >= 0)
        close (fds[1]);
      return -saved;
    }
  return 0;
}

static void
close_fds_except (int keep)
{
  /* Every moat fd is O_CLOEXEC; this is the belt to those braces. On
   * kernels without close_range (< 5.9) O_CLOEXEC alone holds. */
  if (keep > 3)
    syscall (SYS_close_range, 3U, (unsigned)keep - 1, 0U);
  syscall (SYS_close_range, (unsigned)keep + 1, ~0U, 0U);
}

/* In the child: stdin from the state pipe, stdout and stderr to moat's
 * stderr (or /dev/null when moat has none). */
static int
hook_child_stdio (int stdin_fd)
{
  if (dup2 (stdin_fd, 0) < 0)
    return -1;
  if (fcntl (2, F_GETFD) < 0)
    {
      int null_fd = open ("/dev/null", O_WRONLY);
      if (null_fd < 0)
        return -1;
      if (null_fd != 2 && (dup2 (null_fd, 2) < 0 || close (null_fd) < 0))
        return -1;
    }
  /* The hook's stdout goes to moat's stderr, and so into the logs. */
  return dup2 (2, 1) < 0 ? -1 : 0;
}

static void __attribute__ ((noreturn))
hook_child (const struct spec_hook *hook, const char *cwd, int stdin_fd,
            int exec_errno_fd)
{
  static char *const empty_env[] = { NULL };
  char *default_argv[] = { hook->path, NULL };
  char *const *argv = strv_len (hook->args) > 0 ? hook->args : default_argv;
  char *const *envp = hook->env ? hook->env : empty_env;
  int child_errno;

  /* A clean signal state: moat may block or ignore signals, and both
   * survive execve. */
  reset_signal_state ();

  /* Its own process group, so that a timeout kills what the hook started
   * too (a shell script's `sleep`). */
  setpgid (0, 0);
  /* Best effort, as the cwd runc's hooks inherit from runc. */
  if (cwd && chdir (cwd) < 0)
    (void)0;

  if (hook_child_stdio (stdin_fd) == 0)
    {
      close_fds_except (exec_errno_fd);
      execve (hook->path, argv, envp);
    }

  child_errno = errno;
  if (write (exec_errno_fd, &child_errno, sizeof (child_errno)) < 0)
    _exit (127);
  _exit (127);
}

static int
monotonic_ms (int64_t *ret)
{
  struct timespec ts;
  if (clock_gettime (CLOCK_MONOTONIC, &ts) < 0)
    return -errno;
  *ret = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  return 0;
}

static void
hook_close_stdin (struct hook_run *run)
{
  if (run->stdin_fd >= 0)
    close (run->stdin_fd);
  run->stdin_fd = -1;
}

/* Write what the pipe takes now. A hook that exits without reading gives
 * EPIPE, which only means it did not want the state. */
static void
hook_feed_stdin (struct hook_run *run)
{
  while (run->state_left > 0)
    {
      ssize_t n = write (run->stdin_fd, run->state, run->state_left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return;
      if (n <= 0)
        break;
      run->state += n;
      run->state_left -= (size_t)n;
    }
  hook_close_stdin (run);
}

static int
hook_reap (struct hook_run *run, bool block, int *ret_status)
{
  pid_t r;
  do
    r = waitpid (run->pid, ret_status, block ? 0 : WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return -errno;
  return r == run->pid;
}

static void
hook_kill (struct hook_run *run)
{
  /* The group first (it contains the hook); the hook alone if it left
   * its group. */
  kill (-run->pid, SIGKILL);
  kill (run->pid, SIGKILL);
}

/* Feed stdin and wait for the hook to exit, or kill it at the deadline.
 * Returns 1 when it exited (status in *ret_status), 0 when it timed out
 * (and has been killed and reaped), or -errno. */
static int
hook_wait (struct hook_run *run, int timeout_s, int *ret_status)
{
  int64_t now = 0, deadline = 0;
  int r;

  if (timeout_s > 0)
    {
      if ((r = monotonic_ms (&now)) < 0)
        return r;
      deadline = now + (int64_t)timeout_s * 1000;
    }

  for (;;)
    {
      struct pollfd pfds[2];
      nfds_t n = 0;
      int wait_ms = -1;

      if (run->pidfd >= 0)
        pfds[n++] = (struct pollfd){ .fd = run->pidfd, .events = POLLIN };
      else
        {
          r = hook_reap (run, false, ret_status);
          if (r != 0)
            return r;
          wait_ms = HOOK_WAIT_TICK_MS;
        }
      if (run->stdin_fd >= 0)
        pfds[n++] = (struct pollfd){ .fd = run->stdin_fd, .events = POLLOUT };

      if (timeout_s > 0)
        {
          if ((r = monotonic_ms (&now)) < 0)
            return r;
          if (now >= deadline)
            {
              hook_kill (run);
              r = hook_reap (run, true, ret_status);
              return r < 0 ? r : 0;
            }
          if (wait_ms < 0 || deadline - now < wait_ms)
            wait_ms = (int)(deadline - now);
        }

      r = poll (pfds, n, wait_ms);
      if (r < 0 && errno != EINTR)
        return -errno;
      if (r <= 0)
        continue;

      for (nfds_t i = 0; i < n; i++)
        {
          if (pfds[i].revents == 0)
            continue;
          if (pfds[i].fd == run->stdin_fd)
            hook_feed_stdin (run);
          else if (pfds[i].fd == run->pidfd)
            return hook_reap (run, true, ret_status);
        }
    }
}

/* The execve errno the child reported, 0 when the exec succeeded. */
static int
hook_exec_errno (struct hook_run *run)
{
  int child_errno = 0;
  ssize_t n;

  do
    n = read (run->exec_errno_fd, &child_errno, sizeof (child_errno));
  while (n < 0 && errno == EINTR);
  return n == (ssize_t)sizeof (child_errno) ? child_errno : 0;
}

static int
hook_check_path (const struct spec_hook *hook, const char *what,
                 struct moat_error **err)
{
  struct stat st;

  if (hook->path == NULL || hook->path[0] != '/')
    return moat_fail (err, 0, "%s %s: path must be absolute", what,
                      hook->path ? hook->path : "(null)");
  if (stat (hook->path, &st) < 0)
    return moat_fail (err, errno, "%s %s", what, hook->path);
  return 0;
}

/* SIGPIPE stays blocked while we write a hook's stdin, so a hook that
 * exits without reading gives EPIPE rather than killing moat. */
static void
sigpipe_block (sigset_t *ret_old, bool *ret_was_pending)
{
  sigset_t pipe_set, pending;

  sigemptyset (&pipe_set);
  sigaddset (&pipe_set, SIGPIPE);
  sigprocmask (SIG_BLOCK, &pipe_set, ret_old);
  sigpending (&pending);
  *ret_was_pending = sigismember (&pending, SIGPIPE) == 1;
}

static void
sigpipe_restore (const sigset_t *old, bool was_pending)
{
  sigset_t pipe_set, pending;
  const struct timespec zero = { 0, 0 };

  sigemptyset (&pipe_set);
  sigaddset (&pipe_set, SIGPIPE);
  sigpending (&pending);
  /* Drop only the SIGPIPE our writes raised, never one sent to moat. */
  if (!was_pending && sigismember (&pending, SIGPIPE) == 1)
    sigtimedwait (&pipe_set, NULL, &zero);
  sigprocmask (SIG_SETMASK, old, NULL);
}

static int
hook_run_one (const struct spec_hook *hook, const char *what,
              const char *state_json, const char *cwd, struct moat_error **err)
{
  cleanup_close int pidfd = -1;
  cleanup_close int exec_errno_r = -1;
  int stdin_pipe[2], errno_pipe[2];
  struct hook_run run;
  sigset_t old_mask;
  bool sigpipe_was_pending;
  int r, status = 0, child_errno;
  pid_t pid;

  if ((r = hook_check_path (hook, what, err)) < 0)
    return r;

  if ((r = pipe_above_stdio (stdin_pipe)) < 0)
    return moat_fail (err, -r, "%s %s: creating stdin pipe", what, hook->path);
  if ((r = pipe_above_stdio (errno_pipe)) < 0)
    {
      close (stdin_pipe[0]);
      close (stdin_pipe[1]);
      return moat_fail (err, -r, "%s %s: creating pipe", what, hook->path);
    }

  pid = fork ();
  if (pid < 0)
    {
      int saved = errno;
      close (stdin_pipe[0]);
      close (stdin_pipe[1]);
      close (errno_pipe[0]);
      close (errno_pipe[1]);
      return moat_fail (err, saved, "%s %s: fork", what, hook->path);
    }
  if (pid == 0)
    {
      close (stdin_pipe[1]);
      close (errno_pipe[0]);
      hook_child (hook, cwd, stdin_pipe[0], errno_pipe[1]);
    }

  close (stdin_pipe[0]);
  close (errno_pipe[1]);
  exec_errno_r = errno_pipe[0];

  pidfd = (int)syscall (SYS_pidfd_open, pid, 0);
  /* Only our end is non-blocking: the hook reads a normal pipe. */
  fcntl (stdin_pipe[1], F_SETFL, O_NONBLOCK);

  run = (struct hook_run){
    .pid = pid,
    .pidfd = pidfd,
    .stdin_fd = stdin_pipe[1],
    .exec_errno_fd = exec_errno_r,
    .state = state_json ? state_json : "",
    .state_left = state_json ? strlen (state_json) : 0,
  };

  sigpipe_block (&old_mask, &sigpipe_was_pending);
  hook_feed_stdin (&run);
  r = hook_wait (&run, hook->timeout, &status);
  hook_close_stdin (&run);
  sigpipe_restore (&old_mask, sigpipe_was_pending);

  if (r < 0)
    {
      /* Never leave the hook running behind a wait that failed. */
      hook_kill (&run);
      hook_reap (&run, true, &status);
      return moat_fail (err, -r, "%s %s: waiting", what, hook->path);
    }
  if (r == 0)
    return moat_fail (err, 0, "%s %s: timed out after %ds", what, hook->path,
                      hook->timeout);

  child_errno = hook_exec_errno (&run);
  if (child_errno != 0)
    return moat_fail (err, child_errno, "%s %s", what, hook->path);
  if (WIFEXITED (status) && WEXITSTATUS (status) != 0)
    return moat_fail (err, 0, "%s %s: exited with status %d", what, hook->path,
                      WEXITSTATUS (status));
  if (WIFSIGNALED (status))
    return moat_fail (err, 0, "%s %s: killed by signal %d", what, hook->path,
                      WTERMSIG (status));
  return 0;
}

/* The hooks that run on the host start in the bundle, as runc's do (runc
 * works from there); createContainer and startContainer run in the
 * container, where moat chose their directory. NULL: moat's own. */
static char *
host_hook_cwd (enum hook_kind kind, const char *state_json)
{
  json_node *root = NULL;
  const char *bundle;
  char *cwd = NULL;

  if (kind == HOOK_CREATE_CONTAINER || kind == HOOK_START_CONTAINER
      || state_json == NULL
      || json_parse (state_json, strlen (state_json), JSON_MAX_SIZE, &root,
                     NULL)
             < 0)
    return NULL;
  bundle = json_string (json_get (root, "bundle"));
  if (bundle && bundle[0] == '/')
    cwd = xstrdup (bundle);
  json_free (root);
  return cwd;
}

/* runtime-spec: a failing poststart or poststop hook is a warning, and
 * the remaining hooks still run. */
static bool
hook_kind_continues_after_failure (enum hook_kind kind)
{
  return kind == HOOK_POSTSTART || kind == HOOK_POSTSTOP;
}

/* Add a later failure's text to the first one's. */
static void
hook_error_append (struct moat_error **first, struct moat_error **later)
{
  char *joined = xasprintf ("%s; %s", (*first)->msg, (*later)->msg);

  free ((*first)->msg);
  (*first)->msg = joined;
  moat_error_free (later);
}

int
hooks_run (const struct spec_hook_list *hooks, enum hook_kind kind,
           const char *state_json, struct moat_error **err)
{
  cleanup_free char *what = NULL;
  cleanup_free char *cwd = NULL;
  struct moat_error *first = NULL;
  int first_r = 0;

  if (hooks == NULL || hooks->n == 0)
    return 0;

  what = xasprintf ("%s hook", hook_kind_name (kind));
  cwd = host_hook_cwd (kind, state_json);
  for (size_t i = 0; i < hooks->n; i++)
    {
      struct moat_error *hook_err = NULL;
      int r = hook_run_one (&hooks->v[i], what, state_json, cwd, &hook_err);

      if (r >= 0)
        continue;
      if (first == NULL)
        {
          first = hook_err;
          first_r = r;
        }
      else
        hook_error_append (&first, &hook_err);
      if (!hook_kind_continues_after_failure (kind))
        break;
    }
  if (first == NULL)
    return 0;
  if (err != NULL && *err == NULL)
    *err = first;
  else
    moat_error_free (&first);
  return first_r;
}
