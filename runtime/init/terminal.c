/* The container's console: a pty made inside the container's own devpts
 * instance, its master passed to the engine over --console-socket (or
 * relayed to moat's stdio by `moat run -t`). */
#include "terminal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <termios.h>
#include <unistd.h>

#include "../../lib/util.h"

/* /dev/ptmx, and pts/ptmx of a devpts instance, are char 5:2. */
#define PTMX_MAJOR 5
#define PTMX_MINOR 2

#define RELAY_BUF_SIZE 16384

/* A new fd can take 0-2 when moat's stdio is closed; keep the master and
 * slave above them so that the dup2 onto 0-2 cannot clobber them. */
static int
fd_above_stdio (int *fd)
{
  int moved;

  if (*fd > 2)
    return 0;
  moved = fcntl (*fd, F_DUPFD_CLOEXEC, 3);
  if (moved < 0)
    return -errno;
  close (*fd);
  *fd = moved;
  return 0;
}

static int
ptmx_open_checked (int *ret_master, struct moat_error **err)
{
  cleanup_close int master = -1;
  struct stat st;
  int r;

  master = open ("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0)
    return moat_fail (err, errno, "opening /dev/ptmx");
  if (fstat (master, &st) < 0)
    return moat_fail (err, errno, "fstat /dev/ptmx");
  /* A container image can put anything at /dev/ptmx; only the real pty
   * multiplexer gives a master we may hand to the engine. */
  if (!S_ISCHR (st.st_mode) || major (st.st_rdev) != PTMX_MAJOR
      || minor (st.st_rdev) != PTMX_MINOR)
    return moat_fail (err, 0,
                      "/dev/ptmx is not the pty multiplexer (char %d:%d)",
                      PTMX_MAJOR, PTMX_MINOR);
  if ((r = fd_above_stdio (&master)) < 0)
    return moat_fail (err, -r, "moving the pty master");
  *ret_master = steal_fd (&master);
  return 0;
}

static int
pty_open_peer (int master, int *ret_slave, struct moat_error **err)
{
  cleanup_close int slave = -1;
  struct statfs sfs;
  int r;

  if (unlockpt (master) < 0)
    return moat_fail (err, errno, "unlockpt");
  /* TIOCGPTPEER (Linux 4.13) opens the peer through the master, never by
   * a path the container could have replaced. */
  slave = ioctl (master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0)
    return moat_fail (err, errno, "opening the pty peer (TIOCGPTPEER)");
  if (fstatfs (slave, &sfs) < 0)
    return moat_fail (err, errno, "fstatfs on the pty peer");
  if (sfs.f_type != DEVPTS_SUPER_MAGIC)
    return moat_fail (err, 0, "the pty peer is not on a devpts filesystem");
  if ((r = fd_above_stdio (&slave)) < 0)
    return moat_fail (err, -r, "moving the pty peer");
  *ret_slave = steal_fd (&slave);
  return 0;
}

static int
pty_become_controlling (int slave, struct moat_error **err)
{
  /* The init and exec's child lead a session of their own already
   * (linux.c, exec.c: G10); setsid is only for a caller that does not. */
  if (setsid () < 0 && !(errno == EPERM && getsid (0) == getpid ()))
    return moat_fail (err, errno, "setsid");
  if (ioctl (slave, TIOCSCTTY, 0) < 0)
    return moat_fail (err, errno, "making the pty the controlling terminal");
  for (int fd = 0; fd <= 2; fd++)
    if (dup2 (slave, fd) < 0)
      return moat_fail (err, errno, "dup2 pty onto fd %d", fd);
  return 0;
}

int
terminal_setup_child (bool has_size, uint32_t height, uint32_t width,
                      int *ret_master, struct moat_error **err)
{
  cleanup_close int master = -1;
  cleanup_close int slave = -1;
  int r;

  if ((r = ptmx_open_checked (&master, err)) < 0)
    return r;
  if ((r = pty_open_peer (master, &slave, err)) < 0)
    return r;
  if (has_size)
    {
      struct winsize ws = { .ws_row = (unsigned short)height,
                            .ws_col = (unsigned short)width };
      if (height > USHRT_MAX || width > USHRT_MAX)
        return moat_fail (err, 0, "console size %ux%u out of range", height,
                          width);
      if (ioctl (master, TIOCSWINSZ, &ws) < 0)
        return moat_fail (err, errno, "setting the console size");
    }
  if ((r = pty_become_controlling (slave, err)) < 0)
    return r;
  *ret_master = steal_fd (&master);
  return 0;
}

int
terminal_send_to_console_socket (const char *path, int master,
                                 struct moat_error **err)
{
  cleanup_close int sock = -1;
  unsigned int pty_number;
  char name[64];
  int r;

  if (path == NULL || path[0] == '\0')
    return moat_fail (err, 0, "console socket: empty path");
  /* The payload is the pty's name inside the container, as runc sends
   * it: containerd's receiver names the file after it, and takes any
   * length under 4096. */
  if (ioctl (master, TIOCGPTN, &pty_number) < 0)
    return moat_fail (err, errno, "console socket %s: not a pty master", path);
  snprintf (name, sizeof (name), "/dev/pts/%u", pty_number);

  sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return moat_fail (err, errno, "console socket %s: socket", path);
  if ((r = unix_connect_path (sock, path)) < 0)
    return moat_fail (err, -r, "connecting to console socket %s", path);
  if ((r = fd_send_payload (sock, master, name, strlen (name), err)) < 0)
    return moat_error_wrap (err, "console socket %s", path);
  return 0;
}

/* ---- `moat run -t`: relay between our stdio and the master ---- */

struct relay
{
  int master;
  int in_fd;   /* -1 once stdin is at EOF */
  int out_fd;  /* -1 once stdout is gone: output is drained, dropped */
  int size_fd; /* the tty our window size comes from, or -1 */
  char in_buf[RELAY_BUF_SIZE];
  size_t in_len, in_off; /* stdin bytes not yet taken by the master */
};

static void
relay_copy_size (struct relay *rl)
{
  struct winsize ws;

  /* 0x0 is a terminal that does not know its size (a pty nobody sized):
   * keep what the container has, such as process.consoleSize. */
  if (rl->size_fd >= 0 && ioctl (rl->size_fd, TIOCGWINSZ, &ws) == 0
      && (ws.ws_row != 0 || ws.ws_col != 0))
    ioctl (rl->master, TIOCSWINSZ, &ws);
}

/* Returns 1 while the master is open, 0 when the container side hung up
 * (EIO or EOF), or -errno. */
static int
relay_master_out (struct relay *rl)
{
  char buf[RELAY_BUF_SIZE];
  ssize_t n = read (rl->master, buf, sizeof (buf));

  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return 1;
  if (n == 0 || (n < 0 && errno == EIO))
    return 0;
  if (n < 0)
    return -errno;
  if (rl->out_fd >= 0 && write_all (rl->out_fd, buf, (size_t)n) < 0)
    /* Keep reading the master so the container never blocks on a full
     * pty; what it writes goes nowhere. */
    rl->out_fd = -1;
  return 1;
}

static void
relay_stdin_in (struct relay *rl)
{
  ssize_t n = read (rl->in_fd, rl->in_buf, sizeof (rl->in_buf));

  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (n <= 0)
    {
      /* Stdin is done; the container keeps its terminal until it exits. */
      rl->in_fd = -1;
      return;
    }
  rl->in_len = (size_t)n;
  rl->in_off = 0;
}

/* The master is non-blocking here: a container that does not read its
 * terminal must not stop us from draining its output. */
static int
relay_master_in (struct relay *rl)
{
  ssize_t n
      = write (rl->master, rl->in_buf + rl->in_off, rl->in_len - rl->in_off);

  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return 0;
  if (n < 0)
    return -errno;
  rl->in_off += (size_t)n;
  if (rl->in_off == rl->in_len)
    rl->in_off = rl->in_len = 0;
  return 0;
}

static int
relay_loop (struct relay *rl, int winch_fd)
{
  for (;;)
    {
      struct pollfd pfds[3] = {
        { .fd = winch_fd, .events = POLLIN },
        { .fd = rl->master, .events = POLLIN },
        { .fd = -1 },
      };
      bool pending_in = rl->in_len > 0;
      int r;

      if (pending_in)
        pfds[1].events |= POLLOUT;
      else if (rl->in_fd >= 0)
        pfds[2] = (struct pollfd){ .fd = rl->in_fd, .events = POLLIN };

      r = poll (pfds, 3, -1);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return -errno;

      /* Resizes first: a size change is applied before any input that
       * followed it. */
      if (pfds[0].revents & POLLIN)
        {
          struct signalfd_siginfo si;
          while (read (winch_fd, &si, sizeof (si)) == sizeof (si))
            ;
          relay_copy_size (rl);
        }
      if (pfds[2].revents)
        relay_stdin_in (rl);
      if ((pfds[1].revents & POLLOUT) && pending_in
          && (r = relay_master_in (rl)) < 0)
        return r;
      if (pfds[1].revents & (POLLIN | POLLHUP | POLLERR))
        {
          r = relay_master_out (rl);
          if (r <= 0)
            return r;
        }
    }
}

int
terminal_relay (int master, struct moat_error **err)
{
  struct relay relay
      = { .master = master, .in_fd = 0, .out_fd = 1, .size_fd = -1 };
  struct relay *rl = &relay;
  cleanup_close int winch_fd = -1;
  struct termios saved_tty;
  bool restore_tty = false;
  sigset_t winch, old_mask;
  int master_flags, r;

  if (isatty (0))
    rl->size_fd = 0;
  else if (isatty (1))
    rl->size_fd = 1;

  master_flags = fcntl (master, F_GETFL);
  if (master_flags < 0)
    return moat_fail (err, errno, "terminal relay: fcntl");

  sigemptyset (&winch);
  sigaddset (&winch, SIGWINCH);
  sigprocmask (SIG_BLOCK, &winch, &old_mask);
  winch_fd = signalfd (-1, &winch, SFD_CLOEXEC | SFD_NONBLOCK);
  if (winch_fd < 0)
    {
      r = moat_fail (err, errno, "terminal relay: signalfd");
      sigprocmask (SIG_SETMASK, &old_mask, NULL);
      return r;
    }

  /* Raw mode: keys such as ^C reach the container as bytes, and its
   * terminal does the echo and line editing. */
  if (isatty (0) && tcgetattr (0, &saved_tty) == 0)
    {
      struct termios raw = saved_tty;
      cfmakeraw (&raw);
      restore_tty = tcsetattr (0, TCSANOW, &raw) == 0;
    }
  fcntl (master, F_SETFL, master_flags | O_NONBLOCK);
  relay_copy_size (rl);

  r = relay_loop (rl, winch_fd);

  fcntl (master, F_SETFL, master_flags);
  if (restore_tty)
    tcsetattr (0, TCSANOW, &saved_tty);
  sigprocmask (SIG_SETMASK, &old_mask, NULL);
  if (r < 0)
    return moat_fail (err, -r, "terminal relay");
  return 0;
}
