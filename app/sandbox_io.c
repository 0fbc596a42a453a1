/* The sandbox's output pumps. Each of the container's stdout and stderr is
 * a pipe moat reads without blocking: the first `limit` bytes go on to
 * moat's own stream, the rest is drained with splice(2) into /dev/null
 * (no copy through user space, so a flood costs little) and counted. The
 * container never waits on a full pipe for long, whatever it writes. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/time.h>
#include <string.h>
#include <unistd.h>

#include "sandbox_internal.h"
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
