/* Terminals: fd passing, the pty set up in a (forked) container init, the
 * console socket as containerd reads it, and the `run -t` relay. Needs
 * root for the mount namespace cases; every mount lives in a child's own
 * mount namespace and goes away with it. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../runtime/init/terminal.h"
#include "../../lib/util.h"

static char tmpdir[PATH_MAX];

static int
rm_entry (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  return remove (path);
}

static int
setup_tmpdir (void **state)
{
  snprintf (tmpdir, sizeof (tmpdir), "/tmp/moat-test-terminal-XXXXXX");
  return mkdtemp (tmpdir) ? 0 : -1;
}

static int
teardown_tmpdir (void **state)
{
  return nftw (tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void
assert_child_exit_ok (pid_t pid)
{
  int status;

  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
}

static void
assert_cloexec (int fd)
{
  int flags = fcntl (fd, F_GETFD);
  assert_true (flags >= 0);
  assert_true (flags & FD_CLOEXEC);
}

/* Read from fd until `marker` has been seen; returns what was read. */
static char *
read_until (int fd, const char *marker)
{
  size_t cap = 4096, len = 0;
  char *buf = xmalloc (cap);

  buf[0] = '\0';
  while (strstr (buf, marker) == NULL)
    {
      ssize_t n;
      if (len + 1 >= cap)
        buf = xrealloc (buf, cap *= 2);
      n = read (fd, buf + len, cap - len - 1);
      if (n < 0 && errno == EINTR)
        continue;
      assert_true (n > 0);
      len += (size_t)n;
      buf[len] = '\0';
    }
  return buf;
}

static int
pty_open_pair (int *ret_master, int *ret_slave)
{
  int master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  int slave;

  if (master < 0 || unlockpt (master) < 0)
    return -1;
  slave = ioctl (master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0)
    return -1;
  *ret_master = master;
  *ret_slave = slave;
  return 0;
}

static void
pty_make_raw (int fd)
{
  struct termios t;
  assert_int_equal (tcgetattr (fd, &t), 0);
  cfmakeraw (&t);
  assert_int_equal (tcsetattr (fd, TCSANOW, &t), 0);
}

/* ---- fd passing ---- */

static void
check_fd_pass (int type)
{
  int sv[2], pipefd[2], got = -1;
  char buf[8] = "";
  cleanup_error struct moat_error *err = NULL;

  assert_int_equal (socketpair (AF_UNIX, type | SOCK_CLOEXEC, 0, sv), 0);
  assert_int_equal (pipe2 (pipefd, O_CLOEXEC), 0);

  assert_int_equal (fd_send (sv[0], pipefd[1], &err), 0);
  assert_int_equal (fd_recv (sv[1], &got, &err), 0);
  assert_null (err);
  assert_true (got >= 0 && got != pipefd[1]);
  assert_cloexec (got);

  close (pipefd[1]);
  assert_int_equal (write (got, "hi", 2), 2);
  close (got);
  assert_int_equal (read (pipefd[0], buf, sizeof (buf)), 2);
  assert_memory_equal (buf, "hi", 2);

  close (pipefd[0]);
  close (sv[0]);
  close (sv[1]);
}

static void
test_fd_pass_seqpacket (void **state)
{
  check_fd_pass (SOCK_SEQPACKET);
}

static void
test_fd_pass_stream (void **state)
{
  check_fd_pass (SOCK_STREAM);
}

static void
test_fd_recv_errors (void **state)
{
  int sv[2], fd = -1;
  cleanup_error struct moat_error *err = NULL;

  assert_int_equal (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
                    0);
  assert_int_equal (write (sv[0], "x", 1), 1);
  assert_true (fd_recv (sv[1], &fd, &err) < 0);
  assert_string_equal (err->msg, "receiving fd: no single fd in the message");
  assert_int_equal (fd, -1);
  moat_error_free (&err);

  close (sv[0]);
  assert_true (fd_recv (sv[1], &fd, &err) < 0);
  assert_string_equal (err->msg, "receiving fd: connection closed");
  close (sv[1]);
}

/* ---- terminal_setup_child ---- */

/* In the child: set the terminal up, send the master, describe what the
 * child sees on its (new) stdout, wait for the parent, exit. */
static void __attribute__ ((noreturn)) setup_child_report (int sock)
{
  struct moat_error *err = NULL;
  struct winsize ws = { 0 };
  struct stat st0, st1, st2;
  int master = -1, tty_fd;
  char byte, *name;

  if (terminal_setup_child (true, 24, 80, &master, &err) < 0)
    {
      if (write (sock, err->msg, strlen (err->msg)) < 0)
        _exit (3);
      _exit (2);
    }
  if (fd_send (sock, master, &err) < 0)
    _exit (4);
  close (master);

  ioctl (0, TIOCGWINSZ, &ws);
  name = ttyname (1);
  tty_fd = open ("/dev/tty", O_RDWR | O_CLOEXEC);
  fstat (0, &st0);
  fstat (1, &st1);
  fstat (2, &st2);
  printf ("tty=%s rows=%d cols=%d leader=%d ctty=%d same=%d cloexec=%d\n",
          name ? name : "?", ws.ws_row, ws.ws_col, getsid (0) == getpid (),
          tty_fd >= 0, st0.st_rdev == st1.st_rdev && st1.st_rdev == st2.st_rdev,
          (fcntl (0, F_GETFD) | fcntl (1, F_GETFD) | fcntl (2, F_GETFD))
              & FD_CLOEXEC);
  printf ("END\n");
  fflush (stdout);
  if (read (sock, &byte, 1) < 0)
    _exit (5);
  _exit (0);
}

struct child_report
{
  char tty[64];
  int rows, cols, leader, ctty, same, cloexec;
  unsigned int master_ptn;
};

/* Fork a child that runs `prepare` (mount namespace work), then
 * setup_child_report; collect what it saw through the master it sent. */
static void
run_setup_child (int (*prepare) (void), struct child_report *rep)
{
  int sv[2], master = -1;
  cleanup_error struct moat_error *err = NULL;
  cleanup_free char *out = NULL;
  pid_t pid;

  assert_int_equal (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
                    0);
  pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      close (sv[0]);
      if (prepare && prepare () < 0)
        _exit (6);
      setup_child_report (sv[1]);
    }
  close (sv[1]);

  assert_int_equal (fd_recv (sv[0], &master, &err), 0);
  assert_cloexec (master);
  assert_int_equal (ioctl (master, TIOCGPTN, &rep->master_ptn), 0);
  out = read_until (master, "END");
  assert_int_equal (sscanf (out,
                            "tty=%63s rows=%d cols=%d leader=%d ctty=%d "
                            "same=%d cloexec=%d",
                            rep->tty, &rep->rows, &rep->cols, &rep->leader,
                            &rep->ctty, &rep->same, &rep->cloexec),
                    7);
  assert_int_equal (write (sv[0], "x", 1), 1);
  /* Closing the master first would hang up the child's terminal and
   * SIGHUP it. */
  assert_child_exit_ok (pid);
  close (master);
  close (sv[0]);
}

static void
assert_report_is_tty (const struct child_report *rep)
{
  char expect_tty[64];

  snprintf (expect_tty, sizeof (expect_tty), "/dev/pts/%u", rep->master_ptn);
  assert_string_equal (rep->tty, expect_tty);
  assert_int_equal (rep->rows, 24);
  assert_int_equal (rep->cols, 80);
  assert_int_equal (rep->leader, 1);
  assert_int_equal (rep->ctty, 1);
  assert_int_equal (rep->same, 1);
  assert_int_equal (rep->cloexec, 0);
}

static void
test_setup_child_host_ptmx (void **state)
{
  struct child_report rep = { 0 };

  run_setup_child (NULL, &rep);
  assert_report_is_tty (&rep);
}

static int
private_mount_ns (void)
{
  if (unshare (CLONE_NEWNS) < 0)
    return -1;
  return mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
}

/* What a container's /dev looks like: its own devpts instance, with
 * /dev/ptmx bound to that instance's ptmx. */
static int
prepare_devpts_newinstance (void)
{
  if (private_mount_ns () < 0)
    return -1;
  if (mount ("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
             "newinstance,ptmxmode=0666,mode=0620")
      < 0)
    return -1;
  return mount ("/dev/pts/ptmx", "/dev/ptmx", NULL, MS_BIND, NULL);
}

static void
test_setup_child_devpts_newinstance (void **state)
{
  struct child_report rep = { 0 };

  run_setup_child (prepare_devpts_newinstance, &rep);
  assert_report_is_tty (&rep);
  /* The first pty of a fresh instance, whatever the host has open. */
  assert_string_equal (rep.tty, "/dev/pts/0");
}

static int
prepare_fake_ptmx (void)
{
  if (private_mount_ns () < 0)
    return -1;
  return mount ("/dev/null", "/dev/ptmx", NULL, MS_BIND, NULL);
}

static void
test_setup_child_refuses_fake_ptmx (void **state)
{
  int sv[2], status;
  char msg[512] = "";
  ssize_t n;
  pid_t pid;

  assert_int_equal (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
                    0);
  pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      close (sv[0]);
      if (prepare_fake_ptmx () < 0)
        _exit (6);
      setup_child_report (sv[1]);
    }
  close (sv[1]);
  n = read (sv[0], msg, sizeof (msg) - 1);
  close (sv[0]);
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 2);
  assert_true (n > 0);
  msg[n] = '\0';
  assert_string_equal (msg, "/dev/ptmx is not the pty multiplexer (char 5:2)");
}

/* ---- console socket ---- */

/* Listen on a unix socket at any path length: the directory is reached
 * through /proc/self/fd when the path does not fit in sun_path. */
static int
listen_unix_any (const char *path)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  cleanup_free char *dir = xstrdup (path);
  char *slash = strrchr (dir, '/');
  int sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int dir_fd;

  assert_true (sock >= 0 && slash != NULL);
  *slash = '\0';
  dir_fd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  assert_true (dir_fd >= 0);
  snprintf (addr.sun_path, sizeof (addr.sun_path), "/proc/self/fd/%d/%s",
            dir_fd, slash + 1);
  assert_int_equal (bind (sock, (struct sockaddr *)&addr, sizeof (addr)), 0);
  assert_int_equal (listen (sock, 1), 0);
  close (dir_fd);
  return sock;
}

/* Receive as containerd's go-runc console.go does: one read with a 4096
 * byte name buffer and room for exactly one fd, which must be filled. */
static int
recv_like_containerd (int conn, char *name, size_t name_size)
{
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  struct iovec iov = { .iov_base = name, .iov_len = name_size };
  struct msghdr msg = { .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof (control.buf) };
  struct cmsghdr *cmsg;
  ssize_t n = recvmsg (conn, &msg, MSG_CMSG_CLOEXEC);
  int fd;

  assert_true (n > 0 && (size_t)n < name_size);
  name[n] = '\0';
  assert_int_equal (msg.msg_controllen, CMSG_SPACE (sizeof (int)));
  cmsg = CMSG_FIRSTHDR (&msg);
  assert_non_null (cmsg);
  assert_int_equal (cmsg->cmsg_type, SCM_RIGHTS);
  assert_int_equal (cmsg->cmsg_len, CMSG_LEN (sizeof (int)));
  memcpy (&fd, CMSG_DATA (cmsg), sizeof (int));
  return fd;
}

static void
check_console_socket (const char *sock_path)
{
  int lsock = listen_unix_any (sock_path);
  int master = -1, slave = -1, conn, got;
  unsigned int ptn, got_ptn;
  char name[4096], expect[64], buf[8];
  cleanup_error struct moat_error *err = NULL;

  assert_int_equal (pty_open_pair (&master, &slave), 0);
  assert_int_equal (ioctl (master, TIOCGPTN, &ptn), 0);

  /* connect() completes into the backlog: no accept needed yet. */
  assert_int_equal (terminal_send_to_console_socket (sock_path, master, &err),
                    0);
  assert_null (err);
  conn = accept4 (lsock, NULL, NULL, SOCK_CLOEXEC);
  assert_true (conn >= 0);
  got = recv_like_containerd (conn, name, sizeof (name));

  snprintf (expect, sizeof (expect), "/dev/pts/%u", ptn);
  assert_string_equal (name, expect);
  assert_int_equal (ioctl (got, TIOCGPTN, &got_ptn), 0);
  assert_int_equal (got_ptn, ptn);

  /* It is the same pty: what goes in the received master comes out of
   * the slave. */
  pty_make_raw (slave);
  assert_int_equal (write (got, "ok", 2), 2);
  assert_int_equal (read (slave, buf, sizeof (buf)), 2);
  assert_memory_equal (buf, "ok", 2);

  close (got);
  close (conn);
  close (lsock);
  close (master);
  close (slave);
}

static void
test_console_socket (void **state)
{
  cleanup_free char *path = xasprintf ("%s/console.sock", tmpdir);
  check_console_socket (path);
}

static void
test_console_socket_long_path (void **state)
{
  cleanup_free char *dir = xasprintf ("%s/%0120d", tmpdir, 0);
  cleanup_free char *path = xasprintf ("%s/console.sock", dir);

  assert_int_equal (mkdir (dir, 0700), 0);
  assert_true (strlen (path) >= sizeof (((struct sockaddr_un *)0)->sun_path));
  check_console_socket (path);
}

static void
test_console_socket_errors (void **state)
{
  cleanup_free char *missing = xasprintf ("%s/none.sock", tmpdir);
  cleanup_free char *expect_missing = xasprintf (
      "connecting to console socket %s: No such file or directory", missing);
  cleanup_free char *expect_not_pty = xasprintf (
      "console socket %s: not a pty master: Inappropriate ioctl for device",
      missing);
  cleanup_error struct moat_error *err = NULL;
  int master = -1, slave = -1, pipefd[2];

  assert_int_equal (pty_open_pair (&master, &slave), 0);
  assert_true (terminal_send_to_console_socket (missing, master, &err) < 0);
  assert_string_equal (err->msg, expect_missing);
  moat_error_free (&err);

  assert_int_equal (pipe2 (pipefd, O_CLOEXEC), 0);
  assert_true (terminal_send_to_console_socket (missing, pipefd[0], &err) < 0);
  assert_string_equal (err->msg, expect_not_pty);
  close (pipefd[0]);
  close (pipefd[1]);
  close (master);
  close (slave);
}

static void assert_read_exact (int fd, const char *expect);

/* tests/cmd/recvtty, built next to this test (build/tests/cmd), takes what
 * terminal_send_to_console_socket sends. Skipped when not built. */
static char *
recvtty_path (void)
{
  char self[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof (self) - 1);
  char *slash, *path;

  assert_true (n > 0);
  self[n] = '\0';
  slash = strrchr (self, '/');
  assert_non_null (slash);
  *slash = '\0';
  path = xasprintf ("%s/../cmd/recvtty", self);
  if (access (path, X_OK) == 0)
    return path;
  free (path);
  return NULL;
}

static void
test_recvtty_capture (void **state)
{
  cleanup_free char *recvtty = recvtty_path ();
  cleanup_free char *sock = NULL, *capture = NULL, *got = NULL;
  cleanup_error struct moat_error *err = NULL;
  int master = -1, slave = -1, in[2];
  pid_t pid;

  /* skip() jumps out: nothing allocated may be pending here. */
  if (recvtty == NULL)
    skip ();
  sock = xasprintf ("%s/tty.sock", tmpdir);
  capture = xasprintf ("%s/capture", tmpdir);
  assert_int_equal (pipe2 (in, O_CLOEXEC), 0);
  pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      dup2 (in[0], 0);
      execl (recvtty, "recvtty", "--mode", "capture", capture, sock,
             (char *)NULL);
      _exit (127);
    }
  close (in[0]);

  /* recvtty's socket path appears once it is listening. */
  while (access (sock, F_OK) != 0)
    {
      int status;
      assert_int_equal (waitpid (pid, &status, WNOHANG), 0);
      usleep (1000);
    }
  assert_int_equal (pty_open_pair (&master, &slave), 0);
  pty_make_raw (slave);
  assert_int_equal (terminal_send_to_console_socket (sock, master, &err), 0);
  close (master);

  /* Its stdin reaches the container's side of the pty... */
  assert_int_equal (write (in[1], "typed\n", 6), 6);
  close (in[1]);
  assert_read_exact (slave, "typed\n");
  /* ...and what the container writes ends in the file once it hangs up. */
  assert_int_equal (write (slave, "from the container\n", 19), 19);
  close (slave);
  assert_child_exit_ok (pid);
  assert_int_equal (read_file_at (AT_FDCWD, capture, 4096, &got, NULL), 0);
  assert_string_equal (got, "from the container\n");
  assert_int_equal (access (sock, F_OK), -1);
}

/* ---- terminal_relay ---- */

struct relay_fixture
{
  int master, slave; /* the container's pty */
  int in_w;          /* what the child's stdin reads, when it is a pipe */
  int ctl_master;    /* the user's terminal, when stdin is a tty */
  int out_r;         /* the child's stdout */
  pid_t pid;
};

/* Start terminal_relay in a child with stdin = in_fd, stdout = a pipe. */
static void
relay_start (struct relay_fixture *fx, int in_fd)
{
  int out[2];

  assert_int_equal (pipe2 (out, O_CLOEXEC), 0);
  fx->out_r = out[0];
  fx->pid = fork ();
  assert_true (fx->pid >= 0);
  if (fx->pid == 0)
    {
      struct moat_error *err = NULL;
      if (dup2 (in_fd, 0) < 0 || dup2 (out[1], 1) < 0)
        _exit (7);
      /* Only the parent holds the slave: its close ends the relay. */
      close (fx->slave);
      _exit (terminal_relay (fx->master, &err) == 0 ? 0 : 8);
    }
  close (out[1]);
  close (in_fd);
  close (fx->master);
  pty_make_raw (fx->slave);
}

static void
assert_read_exact (int fd, const char *expect)
{
  size_t len = strlen (expect), got = 0;
  char buf[256];

  while (got < len)
    {
      ssize_t n = read (fd, buf + got, len - got);
      assert_true (n > 0);
      got += (size_t)n;
    }
  assert_memory_equal (buf, expect, len);
}

static void
assert_winsize (int fd, int rows, int cols)
{
  struct winsize ws;
  assert_int_equal (ioctl (fd, TIOCGWINSZ, &ws), 0);
  assert_int_equal (ws.ws_row, rows);
  assert_int_equal (ws.ws_col, cols);
}

static void
set_winsize (int fd, int rows, int cols)
{
  struct winsize ws = { .ws_row = rows, .ws_col = cols };
  assert_int_equal (ioctl (fd, TIOCSWINSZ, &ws), 0);
}

static bool
is_canonical (int fd)
{
  struct termios t;
  assert_int_equal (tcgetattr (fd, &t), 0);
  return (t.c_lflag & ICANON) != 0;
}

/* Output after the container side hangs up comes through, and the relay
 * then ends cleanly. */
static void
relay_finish (struct relay_fixture *fx)
{
  cleanup_free char *out = NULL;

  assert_int_equal (write (fx->slave, "bye\n", 4), 4);
  close (fx->slave);
  out = read_until (fx->out_r, "bye\n");
  assert_string_equal (out, "bye\n");
  assert_child_exit_ok (fx->pid);
  close (fx->out_r);
}

static void
test_relay_pipes (void **state)
{
  struct relay_fixture fx = { 0 };
  int in[2];

  assert_int_equal (pty_open_pair (&fx.master, &fx.slave), 0);
  assert_int_equal (pipe2 (in, O_CLOEXEC), 0);
  fx.in_w = in[1];
  relay_start (&fx, in[0]);

  assert_int_equal (write (fx.in_w, "typed", 5), 5);
  /* Stdin at EOF does not end the relay: the container still runs. */
  close (fx.in_w);
  assert_read_exact (fx.slave, "typed");
  assert_int_equal (write (fx.slave, "printed", 7), 7);
  assert_read_exact (fx.out_r, "printed");
  relay_finish (&fx);
}

/* The relay with a tty as stdin sized ctl_rows x ctl_cols, and the
 * container's pty sized 33x99 (process.consoleSize) beforehand. */
static void
check_relay_tty (int ctl_rows, int ctl_cols, int expect_rows, int expect_cols)
{
  struct relay_fixture fx = { 0 };
  int ctl_slave = -1;

  assert_int_equal (pty_open_pair (&fx.master, &fx.slave), 0);
  assert_int_equal (pty_open_pair (&fx.ctl_master, &ctl_slave), 0);
  set_winsize (fx.slave, 33, 99);
  set_winsize (fx.ctl_master, ctl_rows, ctl_cols);
  assert_true (is_canonical (fx.ctl_master));
  relay_start (&fx, ctl_slave);

  /* Once input flows, the size has been copied and stdin is raw (a
   * newline, so that a canonical stdin would fail the check, not hang). */
  assert_int_equal (write (fx.ctl_master, "a\n", 2), 2);
  assert_read_exact (fx.slave, "a\n");
  assert_winsize (fx.slave, expect_rows, expect_cols);
  assert_false (is_canonical (fx.ctl_master));

  /* A resize reaches the container before the input that follows it. */
  set_winsize (fx.ctl_master, 40, 120);
  assert_int_equal (kill (fx.pid, SIGWINCH), 0);
  assert_int_equal (write (fx.ctl_master, "b\n", 2), 2);
  assert_read_exact (fx.slave, "b\n");
  assert_winsize (fx.slave, 40, 120);

  relay_finish (&fx);
  /* The user's terminal is back as it was. */
  assert_true (is_canonical (fx.ctl_master));
  close (fx.ctl_master);
}

static void
test_relay_tty_raw_mode_and_resize (void **state)
{
  check_relay_tty (30, 100, 30, 100);
}

/* A 0x0 terminal (a pty nobody sized) does not know its size: the
 * container keeps the one it was given. */
static void
test_relay_tty_unsized_keeps_console_size (void **state)
{
  check_relay_tty (0, 0, 33, 99);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_fd_pass_seqpacket),
    cmocka_unit_test (test_fd_pass_stream),
    cmocka_unit_test (test_fd_recv_errors),
    cmocka_unit_test (test_setup_child_host_ptmx),
    cmocka_unit_test (test_setup_child_devpts_newinstance),
    cmocka_unit_test (test_setup_child_refuses_fake_ptmx),
    cmocka_unit_test_setup_teardown (test_console_socket, setup_tmpdir,
                                     teardown_tmpdir),
    cmocka_unit_test_setup_teardown (test_console_socket_long_path,
                                     setup_tmpdir, teardown_tmpdir),
    cmocka_unit_test_setup_teardown (test_console_socket_errors, setup_tmpdir,
                                     teardown_tmpdir),
    cmocka_unit_test_setup_teardown (test_recvtty_capture, setup_tmpdir,
                                     teardown_tmpdir),
    cmocka_unit_test (test_relay_pipes),
    cmocka_unit_test (test_relay_tty_raw_mode_and_resize),
    cmocka_unit_test (test_relay_tty_unsized_keeps_console_size),
  };

  /* A write to a pty whose reader is gone must fail, not kill the test. */
  signal (SIGPIPE, SIG_IGN);
  return cmocka_run_group_tests (tests, NULL, NULL);
}
