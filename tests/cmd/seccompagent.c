/* seccompagent: a seccomp agent for tests (linux.seccomp.listenerPath).
 *   seccompagent SOCKET OUT ERRNO
 * Listens on SOCKET (made under a temporary name, renamed into place once
 * it accepts, so a test can wait for it), takes one connection: the
 * container process state as JSON with the listener fd (SCM_RIGHTS). It
 * writes the JSON to OUT, then answers every notification with -ERRNO and
 * appends "NR" (the syscall number) to OUT.log, until the container is
 * gone (the listener hangs up). Prints nothing but errors. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void
die (const char *what)
{
  fprintf (stderr, "seccompagent: %s: %s\n", what, strerror (errno));
  exit (1);
}

static int
receive (int conn, char *buf, size_t len, int *ret_fd)
{
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  struct iovec iov = { .iov_base = buf, .iov_len = len - 1 };
  struct msghdr msg = { .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof (control.buf) };
  struct cmsghdr *c;
  ssize_t n = recvmsg (conn, &msg, MSG_CMSG_CLOEXEC);

  if (n <= 0)
    return -1;
  buf[n] = '\0';
  c = CMSG_FIRSTHDR (&msg);
  if (c == NULL || c->cmsg_type != SCM_RIGHTS)
    return -1;
  memcpy (ret_fd, CMSG_DATA (c), sizeof (int));
  return 0;
}

int
main (int argc, char **argv)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  char tmp[sizeof (addr.sun_path)], log[4096];
  static char state[65536];
  int sock, conn, listener = -1, err;
  FILE *out, *lf;

  if (argc != 4)
    {
      fprintf (stderr, "usage: seccompagent SOCKET OUT ERRNO\n");
      return 2;
    }
  err = atoi (argv[3]);
  snprintf (tmp, sizeof (tmp), "%s.tmp", argv[1]);
  snprintf (addr.sun_path, sizeof (addr.sun_path), "%s", tmp);
  sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0 || bind (sock, (struct sockaddr *)&addr, sizeof (addr)) < 0
      || listen (sock, 1) < 0 || rename (tmp, argv[1]) < 0)
    die ("listening");
  conn = accept4 (sock, NULL, NULL, SOCK_CLOEXEC);
  if (conn < 0)
    die ("accept");
  if (receive (conn, state, sizeof (state), &listener) < 0)
    die ("receiving the state and the listener");
  close (conn);
  out = fopen (argv[2], "w");
  if (out == NULL || fputs (state, out) < 0 || fclose (out) != 0)
    die ("writing the state");
  snprintf (log, sizeof (log), "%s.log", argv[2]);
  for (;;)
    {
      struct seccomp_notif req;
      struct seccomp_notif_resp resp;
      struct pollfd p = { .fd = listener, .events = POLLIN };

      if (poll (&p, 1, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          die ("poll");
        }
      if (p.revents & POLLHUP)
        return 0;
      memset (&req, 0, sizeof (req));
      if (ioctl (listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
        {
          if (errno == EINTR || errno == ENOENT)
            continue;
          die ("SECCOMP_IOCTL_NOTIF_RECV");
        }
      lf = fopen (log, "a");
      if (lf)
        {
          fprintf (lf, "%d\n", req.data.nr);
          fclose (lf);
        }
      memset (&resp, 0, sizeof (resp));
      resp.id = req.id;
      resp.error = -err;
      /* ENOENT: the task is gone (killed while waiting). */
      if (ioctl (listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0
          && errno != ENOENT)
        die ("SECCOMP_IOCTL_NOTIF_SEND");
    }
}
