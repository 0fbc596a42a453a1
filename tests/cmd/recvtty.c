/* recvtty: the receiving end of --console-socket, for tests (as runc's
 * contrib/cmd/recvtty). Listens on a unix socket, takes one pty master,
 * then:
 *   single        master -> stdout, stdin -> master
 *   null          master -> nowhere
 *   capture FILE  master -> FILE, stdin -> master
 * until the container side hangs up (EOF or EIO), then exits 0. The socket
 * path appears only once it accepts connections, so a test can wait for
 * it. Prints nothing but errors. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define NAME_MAX_LEN 4096

enum mode
{
  MODE_SINGLE,
  MODE_NULL,
  MODE_CAPTURE,
};

struct options
{
  enum mode mode;
  const char *capture_path;
  const char *pid_file;
  const char *socket_path;
  bool no_stdin;
};

static const char usage[]
    = "usage: recvtty [--mode single|null|capture FILE] [--no-stdin] "
      "[--pid-file FILE] SOCKET_PATH";

static void __attribute__ ((noreturn, format (printf, 1, 2)))
die (const char *fmt, ...)
{
  va_list ap;

  fputs ("recvtty: ", stderr);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (1);
}

static int
write_all (int fd, const char *buf, size_t len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, buf, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      buf += n;
      len -= (size_t)n;
    }
  return 0;
}

static void
parse_options (int argc, char **argv, struct options *opt)
{
  *opt = (struct options){ .mode = MODE_SINGLE };

  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];

      if (strcmp (a, "--mode") == 0 || strcmp (a, "-m") == 0)
        {
          if (++i >= argc)
            die ("--mode needs a value\n%s", usage);
          if (strcmp (argv[i], "single") == 0)
            opt->mode = MODE_SINGLE;
          else if (strcmp (argv[i], "null") == 0)
            opt->mode = MODE_NULL;
          else if (strcmp (argv[i], "capture") == 0)
            {
              if (++i >= argc)
                die ("--mode capture needs a FILE\n%s", usage);
              opt->mode = MODE_CAPTURE;
              opt->capture_path = argv[i];
            }
          else
            die ("unknown mode %s\n%s", argv[i], usage);
        }
      else if (strcmp (a, "--pid-file") == 0)
        {
          if (++i >= argc)
            die ("--pid-file needs a value\n%s", usage);
          opt->pid_file = argv[i];
        }
      else if (strcmp (a, "--no-stdin") == 0)
        opt->no_stdin = true;
      else if (strcmp (a, "--help") == 0 || strcmp (a, "-h") == 0)
        {
          puts (usage);
          exit (0);
        }
      else if (a[0] == '-' && a[1] != '\0')
        die ("unknown option %s\n%s", a, usage);
      else if (opt->socket_path == NULL)
        opt->socket_path = a;
      else
        die ("one socket path only\n%s", usage);
    }
  if (opt->socket_path == NULL)
    die ("need a socket path\n%s", usage);
}

static void
sockaddr_for (struct sockaddr_un *addr, const char *path)
{
  *addr = (struct sockaddr_un){ .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof (addr->sun_path))
    die ("socket path too long (%zu bytes, at most %zu): %s", strlen (path),
         sizeof (addr->sun_path) - 1, path);
  strcpy (addr->sun_path, path);
}

/* Bind under a temporary name and rename once listening: whoever sees
 * the path can connect at once. */
static int
listen_at (const char *path)
{
  struct sockaddr_un addr, tmp_addr;
  char tmp[sizeof (addr.sun_path) + 32];
  int sock;

  sockaddr_for (&addr, path);
  snprintf (tmp, sizeof (tmp), "%s.%d", path, (int)getpid ());
  sockaddr_for (&tmp_addr, tmp);

  sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    die ("socket: %m");
  unlink (tmp);
  if (bind (sock, (struct sockaddr *)&tmp_addr, sizeof (tmp_addr)) < 0)
    die ("bind %s: %m", tmp);
  if (listen (sock, 1) < 0 || rename (tmp, path) < 0)
    {
      int saved = errno;
      unlink (tmp);
      errno = saved;
      die ("listening on %s: %m", path);
    }
  return sock;
}

/* One message: the pty's name as data (as runc and moat send it, or a
 * single byte), and exactly one fd. */
static int
receive_master (int conn)
{
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  static char name[NAME_MAX_LEN];
  struct iovec iov = { .iov_base = name, .iov_len = sizeof (name) };
  struct msghdr msg = { .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof (control.buf) };
  struct cmsghdr *cmsg;
  ssize_t n;
  int fd;

  do
    n = recvmsg (conn, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    die ("recvmsg: %m");
  if (n == 0)
    die ("connection closed before a pty master was sent");
  cmsg = CMSG_FIRSTHDR (&msg);
  if ((msg.msg_flags & MSG_CTRUNC) || cmsg == NULL
      || cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS
      || cmsg->cmsg_len != CMSG_LEN (sizeof (int)))
    die ("the message did not carry exactly one fd");
  memcpy (&fd, CMSG_DATA (cmsg), sizeof (int));
  return fd;
}

static void
write_pid_file (const char *path)
{
  char buf[32];
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int len = snprintf (buf, sizeof (buf), "%d\n", (int)getpid ());

  if (fd < 0 || write_all (fd, buf, (size_t)len) < 0 || close (fd) < 0)
    die ("writing pid file %s: %m", path);
}

/* Copy until the container side of the pty hangs up. */
static void
relay (int master, int out_fd, int in_fd)
{
  char buf[16384];

  for (;;)
    {
      struct pollfd pfds[2] = {
        { .fd = master, .events = POLLIN },
        { .fd = in_fd, .events = POLLIN },
      };
      ssize_t n;

      if (poll (pfds, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          die ("poll: %m");
        }
      if (pfds[1].revents)
        {
          n = read (in_fd, buf, sizeof (buf));
          if (n <= 0)
            in_fd = -1; /* stdin done; the container keeps running */
          else if (write_all (master, buf, (size_t)n) < 0 && errno != EIO)
            die ("writing to the pty: %m");
        }
      if (pfds[0].revents)
        {
          n = read (master, buf, sizeof (buf));
          if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
          if (n == 0 || (n < 0 && errno == EIO))
            return;
          if (n < 0)
            die ("reading the pty: %m");
          if (out_fd >= 0 && write_all (out_fd, buf, (size_t)n) < 0)
            die ("writing output: %m");
        }
    }
}

int
main (int argc, char **argv)
{
  struct options opt;
  int sock, conn, master, out_fd = -1, in_fd = -1;

  parse_options (argc, argv, &opt);
  signal (SIGPIPE, SIG_IGN);

  if (opt.mode == MODE_CAPTURE)
    {
      out_fd = open (opt.capture_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                     0644);
      if (out_fd < 0)
        die ("opening %s: %m", opt.capture_path);
    }
  else if (opt.mode == MODE_SINGLE)
    out_fd = 1;
  if (opt.mode != MODE_NULL && !opt.no_stdin)
    in_fd = 0;

  sock = listen_at (opt.socket_path);
  if (opt.pid_file)
    write_pid_file (opt.pid_file);

  do
    conn = accept4 (sock, NULL, NULL, SOCK_CLOEXEC);
  while (conn < 0 && errno == EINTR);
  if (conn < 0)
    die ("accept: %m");
  close (sock);
  unlink (opt.socket_path);

  master = receive_master (conn);
  close (conn);
  relay (master, out_fd, in_fd);

  if (out_fd > 2 && close (out_fd) < 0)
    die ("closing %s: %m", opt.capture_path);
  return 0;
}
