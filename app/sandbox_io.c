/* The sandbox's output pumps. Each of the container's stdout and stderr is
 * a pipe moat reads without blocking: the first `limit` bytes go on to
 * moat's own stream, the rest is drained with splice(2) into /dev/null
 * (no copy through user space, so a flood costs little) and counted. The
 * container never waits on a full pipe for long, whatever it writes.
 * Also the host files the run reads or writes for its caller (--stdin,
 * --result), opened following no link. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/time.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox_internal.h"
#include "../lib/hostpath.h"
#include "../lib/util.h"

void
sandbox_stream_init (struct sandbox_stream *s, int fd, int out, int devnull,
                     int64_t limit)
{
  memset (s, 0, sizeof (*s));
  s->fd = fd;
  s->out = out;
  s->devnull = devnull;
  s->limit = limit;
  /* A bigger pipe means fewer wake-ups for a chatty payload; the kernel
   * may refuse (pipe-max-size, the user's pipe quota), which is fine. */
  fcntl (fd, F_SETPIPE_SZ, 1 << 20);
  fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK);
}

static bool
under_limit (const struct sandbox_stream *s)
{
  return s->limit < 0 || s->bytes < (uint64_t)s->limit;
}

/* The deadline's SIGALRM (sandbox.c) interrupts a write that a reader
 * who stopped reading blocks: from then on moat stops passing output on,
 * and the run loop gets to kill the container on time. */
static volatile sig_atomic_t deadline_passed;

static void
on_alarm (int sig)
{
  (void)sig;
  deadline_passed = 1;
}

void
sandbox_alarm_at (int64_t ms)
{
  struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
  struct itimerval it
      = { .it_value = { .tv_sec = ms / 1000, .tv_usec = ms % 1000 * 1000 } };
  deadline_passed = 0;
  if (ms > 0)
    sigaction (SIGALRM, &sa, NULL);
  setitimer (ITIMER_REAL, &it, NULL); /* 0: disarmed */
}

static int
pass_on (int fd, const char *buf, size_t len)
{
  while (len > 0)
    {
      struct pollfd p = { .fd = fd, .events = POLLOUT };
      ssize_t n;

      if (deadline_passed)
        return -1;
      /* Never block in write(): a reader that stopped reading would hold
       * moat past the deadline, and the alarm may fire just before the
       * write starts. Wait for room in bounded steps, then write no more
       * than a pipe takes at once. */
      n = poll (&p, 1, 100);
      if (n < 0 && errno != EINTR)
        return -1;
      if (n <= 0)
        continue;
      if (p.revents & (POLLERR | POLLNVAL))
        return -1;
      n = write (fd, buf, len < PIPE_BUF ? len : PIPE_BUF);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return -1;
      buf += n;
      len -= (size_t)n;
    }
  return 0;
}

/* Drop what is in the pipe. Returns bytes, 0 at EOF, -EAGAIN when empty. */
static ssize_t
drain (struct sandbox_stream *s, char *buf, size_t len)
{
  ssize_t n;

  if (s->devnull >= 0 && !s->no_splice)
    {
      n = splice (s->fd, NULL, s->devnull, NULL, 1 << 20, SPLICE_F_NONBLOCK);
      if (n >= 0)
        return n;
      if (errno == EAGAIN || errno == EINTR)
        return -EAGAIN;
      s->no_splice = true;
    }
  n = read (s->fd, buf, len);
  if (n < 0)
    return errno == EINTR ? -EAGAIN : -errno;
  return n;
}

/* Move what is ready, up to a bounded amount so that the other stream and
 * the deadline get their turn. Returns true once the stream is at EOF. */
bool
sandbox_stream_pump (struct sandbox_stream *s)
{
  char buf[64 * 1024];

  if (s->fd < 0)
    return true;
  for (int round = 0; round < 64; round++)
    {
      ssize_t n;
      if (under_limit (s))
        {
          size_t want = sizeof (buf);
          if (s->limit >= 0 && (uint64_t)s->limit - s->bytes < want)
            want = (size_t)((uint64_t)s->limit - s->bytes);
          n = read (s->fd, buf, want);
          if (n < 0)
            n = errno == EAGAIN || errno == EINTR ? -EAGAIN : -errno;
          if (n > 0)
            {
              s->bytes += (uint64_t)n;
              s->last_byte = buf[n - 1];
              /* A caller that closed its end loses the output, not the
               * run: the bytes still count as passed. */
              if (s->out >= 0 && pass_on (s->out, buf, (size_t)n) < 0)
                s->out = -1;
            }
        }
      else
        {
          n = drain (s, buf, sizeof (buf));
          if (n > 0)
            s->dropped += (uint64_t)n;
        }
      if (n == -EAGAIN)
        return false;
      if (n <= 0)
        {
          close (s->fd);
          s->fd = -1;
          return true;
        }
    }
  return false;
}

/* Why "-" passes moat's stdin on rather than a pipe moat would feed: the
 * Python package keeps one exec reading requests for a whole session, at
 * the pace its caller writes them, which a pump in moat's run loop would
 * only slow; and a pipe, or a file the caller redirected in, is no handle
 * on anything else of the host's. */
int
sandbox_stdin_open (const char *file, int *ret_fd, struct moat_error **err)
{
  struct stat st;
  int fd;

  if (file == NULL)
    {
      fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        return moat_fail (err, errno, "/dev/null");
    }
  else if (strcmp (file, "-") == 0)
    {
      if (fstat (STDIN_FILENO, &st) < 0)
        return moat_fail (err, errno, "--stdin -: moat's stdin");
      if (!S_ISFIFO (st.st_mode) && !S_ISREG (st.st_mode))
        return moat_fail (err, 0,
                          "--stdin -: moat's stdin is %s; a pipe or a "
                          "regular file only",
                          hostpath_type_text (st.st_mode));
      fd = fcntl (STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
      if (fd < 0)
        return moat_fail (err, errno, "--stdin -");
    }
  else
    {
      cleanup_free char *what = xasprintf ("--stdin %s", file);
      if (hostpath_open_typed (file, O_RDONLY, 0, HOSTPATH_REG | HOSTPATH_FIFO,
                               what, &fd, err)
          < 0)
        return -1;
    }
  *ret_fd = fd;
  return 0;
}

/* --result FILE: made or replaced following no link; what is there
 * already must be a regular file of one name (a FIFO would hang moat, a
 * hard link the payload made would carry the record elsewhere). */
int
sandbox_result_write (const char *file, const char *line,
                      struct moat_error **err)
{
  cleanup_free char *what = xasprintf ("--result %s", file);
  cleanup_close int fd = -1;
  struct stat st;

  if (hostpath_open_typed (file, O_WRONLY | O_CREAT, 0644, HOSTPATH_REG, what,
                           &fd, err)
      < 0)
    return -1;
  if (fstat (fd, &st) < 0)
    return moat_fail (err, errno, "%s", what);
  if (st.st_nlink > 1)
    return moat_fail (err, 0, "%s: a file with another name (a hard link)",
                      what);
  if (ftruncate (fd, 0) < 0 || write_all (fd, line, strlen (line)) < 0)
    return moat_fail (err, errno, "%s", what);
  return 0;
}
