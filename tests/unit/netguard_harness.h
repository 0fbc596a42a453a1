/* Shared by test_netguard.c and test_netguard_net.c: what a test creates
 * (for teardown, whichever way the test ends) and forked children that
 * report back over a socket: a child's checks return NULL or a message. */
#ifndef MOAT_TEST_NETGUARD_HARNESS_H
#define MOAT_TEST_NETGUARD_HARNESS_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/magic.h>

#include <cmocka.h>

#include "../../runtime/bpf/bpf.h"
#include "../../runtime/netguard/netguard.h"
#include "../../runtime/netguard/netguard_bpf.h"
#include "../../lib/util.h"

/* For assembling a program without loading it: map fds are only
 * immediates then. */
static const struct netguard_maps no_maps = { -1, -1, -1, -1, -1, -1 };

/* Load a program of KIND with maps of R's lists of its own (the program
 * keeps them); fails the test on an error. */
static int __attribute__ ((unused))
load_rules (enum netguard_prog kind, const struct netguard_rules *r)
{
  struct netguard_maps m;
  struct moat_error *err = NULL;
  int fd = -1;
  if (netguard_maps_create (r, &m, &err) < 0)
    fail_msg ("maps: %s", err->msg);
  if (netguard_bpf_load (kind, r, &m, &fd, &err) < 0)
    fail_msg ("load: %s", err->msg);
  netguard_maps_close (&m);
  return fd;
}

/* Everything a test creates, for teardown. */
static char cg_root[64];
static char cg_dir[PATH_MAX];
static char netns[64];
static pid_t kids[8];
static size_t n_kids;

static int sh (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
static int
sh (const char *fmt, ...)
{
  cleanup_free char *cmd = NULL;
  va_list ap;
  int st;
  va_start (ap, fmt);
  if (vasprintf (&cmd, fmt, ap) < 0)
    abort ();
  va_end (ap);
  st = system (cmd);
  return WIFEXITED (st) ? WEXITSTATUS (st) : -1;
}

static bool
is_cgroup2 (const char *path)
{
  struct statfs s;
  return statfs (path, &s) == 0 && s.f_type == CGROUP2_SUPER_MAGIC;
}

static int
setup_root (void **state)
{
  if (geteuid () != 0)
    return 0;
  if (is_cgroup2 ("/sys/fs/cgroup/unified"))
    strcpy (cg_root, "/sys/fs/cgroup/unified");
  else if (is_cgroup2 ("/sys/fs/cgroup"))
    strcpy (cg_root, "/sys/fs/cgroup");
  return 0;
}

static int
teardown (void **state)
{
  for (size_t i = 0; i < n_kids; i++)
    {
      kill (kids[i], SIGKILL);
      waitpid (kids[i], NULL, 0);
    }
  n_kids = 0;
  if (netns[0])
    sh ("ip netns del %s 2>/dev/null", netns);
  netns[0] = '\0';
  if (cg_dir[0] && rmdir (cg_dir) < 0 && errno != ENOENT)
    fprintf (stderr, "could not remove %s: %m\n", cg_dir);
  cg_dir[0] = '\0';
  return 0;
}

static void
need_root_and_cgroup2 (void)
{
  if (geteuid () != 0 || cg_root[0] == '\0')
    skip ();
}

/* What the tests deny: 169.254.0.0/16, fd00:ec2::254, 10.0.0.0/8. */
static const struct cidr deny_list[] = {
  { AF_INET, { 169, 254 }, 16, 0 },
  { AF_INET6, { 0xfd, 0x00, 0x0e, 0xc2, [15] = 0x54, [14] = 0x02 }, 128, 0 },
  { AF_INET, { 10 }, 8, 0 },
};

/* ---- helpers for processes in guarded cgroups and namespaces ---- */

static void
make_cgroup (void)
{
  snprintf (cg_dir, sizeof (cg_dir), "%s/moat-ngtest-%d", cg_root,
            (int)getpid ());
  if (mkdir (cg_dir, 0755) < 0)
    fail_msg ("mkdir %s: %m", cg_dir);
}

static void
attach (bool egress)
{
  struct netguard_rules r
      = { .egress = egress, .deny = deny_list, .n_deny = 2 };
  struct moat_error *err = NULL;
  cleanup_close int fd = open (cg_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  assert_true (fd >= 0);
  if (netguard_attach (fd, &r, NULL, &err) < 0)
    fail_msg ("netguard_attach: %s", err->msg);
}

typedef char *(*child_fn) (int ctl);

/* Fork a process that runs fn with a control socket; what fn returns
 * (NULL or a failure message) comes back through that socket. */
static pid_t
start_child (child_fn fn, int *ret_ctl)
{
  int sv[2];
  pid_t pid;
  assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      char *fail;
      close (sv[0]);
      fail = fn (sv[1]);
      (void)write_all (sv[1], "X", 1);
      if (fail)
        (void)write_all (sv[1], fail, strlen (fail));
      _exit (fail ? 1 : 0);
    }
  close (sv[1]);
  kids[n_kids++] = pid;
  *ret_ctl = sv[0];
  return pid;
}

static void
forget_kid (pid_t pid)
{
  for (size_t i = 0; i < n_kids; i++)
    if (kids[i] == pid)
      kids[i] = kids[--n_kids];
}

static char
ctl_recv (int ctl)
{
  char c = 0;
  return read (ctl, &c, 1) == 1 ? c : 0;
}

static void
ctl_expect (int ctl, char want)
{
  char buf[512] = { 0 };
  char c = ctl_recv (ctl);
  if (c == want)
    return;
  if (c == 'X' && read (ctl, buf, sizeof (buf) - 1) < 0)
    buf[0] = '\0';
  fail_msg ("child sent '%c' instead of '%c': %s", c ? c : '0', want, buf);
}

/* The child's verdict: its failure message, or pass. */
static void
child_finish (pid_t pid, int ctl)
{
  char buf[1024] = { 0 };
  size_t len = 0;
  ssize_t n;
  int status;

  ctl_expect (ctl, 'X');
  while ((n = read (ctl, buf + len, sizeof (buf) - 1 - len)) > 0)
    len += (size_t)n;
  close (ctl);
  assert_int_equal (waitpid (pid, &status, 0), pid);
  forget_kid (pid);
  if (len > 0 || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
    fail_msg ("child: %s (status %d)", buf, status);
}

/* In the child: join the guarded cgroup, take a fresh netns with lo up. */
static char *
become_guarded (void)
{
  cleanup_free char *procs = xasprintf ("%s/cgroup.procs", cg_dir);
  cleanup_free char *pid = xasprintf ("%d", (int)getpid ());
  struct moat_error *err = NULL;

  if (write_file_at (AT_FDCWD, procs, pid) < 0)
    return xasprintf ("joining %s: %m", procs);
  if (unshare (CLONE_NEWNET) < 0)
    return xasprintf ("unshare: %m");
  if (netguard_loopback_up (&err) < 0)
    return xasprintf ("%s", err->msg);
  return NULL;
}

static int
sockaddr_of (const char *addr, int port, struct sockaddr_storage *ss)
{
  memset (ss, 0, sizeof (*ss));
  if (strchr (addr, ':'))
    {
      struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
      s6->sin6_family = AF_INET6;
      s6->sin6_port = htons ((uint16_t)port);
      inet_pton (AF_INET6, addr, &s6->sin6_addr);
      return AF_INET6;
    }
  struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
  s4->sin_family = AF_INET;
  s4->sin_port = htons ((uint16_t)port);
  inet_pton (AF_INET, addr, &s4->sin_addr);
  return AF_INET;
}

enum net_try
{
  NET_CONNECT,
  NET_SENDTO,
  NET_FASTOPEN, /* sendto() with MSG_FASTOPEN: a connect in disguise */
};

/* Reach ADDR:PORT over a socket of TYPE: 0 or -errno. */
static int
try_net (int type, enum net_try how, const char *addr, int port)
{
  struct sockaddr_storage ss;
  int family = sockaddr_of (addr, port, &ss);
  cleanup_close int fd = socket (family, type | SOCK_CLOEXEC, 0);
  struct timeval tv = { .tv_sec = 10 };
  int r;

  if (fd < 0)
    return -errno;
  setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof (tv));
  if (how == NET_CONNECT)
    r = connect (fd, (struct sockaddr *)&ss, sizeof (ss));
  else
    r = (int)sendto (fd, "x", 1, how == NET_FASTOPEN ? MSG_FASTOPEN : 0,
                     (struct sockaddr *)&ss, sizeof (ss));
  return r < 0 ? -errno : 0;
}

#define TCP(a, p) try_net (SOCK_STREAM, NET_CONNECT, a, p)
#define TCP_FASTOPEN(a, p) try_net (SOCK_STREAM, NET_FASTOPEN, a, p)
#define UDP_SEND(a, p) try_net (SOCK_DGRAM, NET_SENDTO, a, p)
#define UDP_CONNECT(a, p) try_net (SOCK_DGRAM, NET_CONNECT, a, p)

#define CHECK_ERR(expr, want)                                                  \
  do                                                                           \
    {                                                                          \
      int got_ = (expr);                                                       \
      if (got_ != (want))                                                      \
        return xasprintf ("%s: got %s, want %s", #expr, strerror (-got_),      \
                          strerror (-(want)));                                 \
    }                                                                          \
  while (0)

#endif
