/* Passing a file descriptor over a unix socket (SCM_RIGHTS), and connecting
 * to a socket path of any length: used between moat and its init, its exec
 * children, the seccomp supervisor and the engine's console socket. */
#include "fdpass.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util.h"

int
fd_send_payload (int sock, int fd, const void *data, size_t len,
                 struct moat_error **err)
{
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
  struct msghdr msg = { .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof (control.buf) };
  struct cmsghdr *cmsg;
  ssize_t n;

  memset (control.buf, 0, sizeof (control.buf));
  cmsg = CMSG_FIRSTHDR (&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (cmsg), &fd, sizeof (int));

  do
    n = sendmsg (sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return moat_fail (err, errno, "sending fd");
  if ((size_t)n != len)
    return moat_fail (err, 0, "sending fd: short write (%zd of %zu bytes)", n,
                      len);
  return 0;
}

int
fd_send (int sock, int fd, struct moat_error **err)
{
  return fd_send_payload (sock, fd, "", 1, err);
}

/* Close every fd a message carried, when we do not take it. */
static void
cmsg_close_fds (struct msghdr *msg)
{
  for (struct cmsghdr *c = CMSG_FIRSTHDR (msg); c; c = CMSG_NXTHDR (msg, c))
    {
      size_t n;
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
        continue;
      n = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
      for (size_t i = 0; i < n; i++)
        {
          int fd;
          memcpy (&fd, CMSG_DATA (c) + i * sizeof (int), sizeof (int));
          close (fd);
        }
    }
}

int
fd_recv (int sock, int *ret_fd, struct moat_error **err)
{
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  char byte;
  struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
  struct msghdr msg = { .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof (control.buf) };
  struct cmsghdr *cmsg;
  ssize_t n;
  int fd;

  do
    n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return moat_fail (err, errno, "receiving fd");
  if (n == 0)
    return moat_fail (err, 0, "receiving fd: connection closed");

  cmsg = CMSG_FIRSTHDR (&msg);
  if ((msg.msg_flags & MSG_CTRUNC) || cmsg == NULL
      || cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS
      || cmsg->cmsg_len != CMSG_LEN (sizeof (int))
      || CMSG_NXTHDR (&msg, cmsg) != NULL)
    {
      cmsg_close_fds (&msg);
      return moat_fail (err, 0, "receiving fd: no single fd in the message");
    }
  memcpy (&fd, CMSG_DATA (cmsg), sizeof (int));
  *ret_fd = fd;
  return 0;
}

/* connect() to a unix socket path of any length: one longer than sun_path
 * is reached through /proc/self/fd/N of an O_PATH fd to it. */
int
unix_connect_path (int sock, const char *path)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  cleanup_close int path_fd = -1;
  int r;

  if (strlen (path) >= sizeof (addr.sun_path))
    {
      path_fd = open (path, O_PATH | O_CLOEXEC);
      if (path_fd < 0)
        return -errno;
      snprintf (addr.sun_path, sizeof (addr.sun_path), "/proc/self/fd/%d",
                path_fd);
    }
  else
    memcpy (addr.sun_path, path, strlen (path) + 1);

  do
    r = connect (sock, (struct sockaddr *)&addr, sizeof (addr));
  while (r < 0 && errno == EINTR);
  return r < 0 ? -errno : 0;
}
