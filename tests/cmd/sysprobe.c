/* sysprobe: try one operation from inside a container and say what the
 * kernel answered, for bats tests of the seccomp filter, the network guard
 * and the profiles. Static, libc only: it runs in a busybox rootfs.
 *
 *   sysprobe OP [ARGS]
 *
 * prints "ok" and exits 0, or "LABEL: STRERROR (errno N)" (or
 * "LABEL: timed out") and exits 1; a usage error exits 2. Operations that
 * could change the host if they ran unfiltered as root (kexec, modules)
 * pass arguments the kernel rejects only after its permission checks, so
 * reaching the kernel shows as EINVAL/ENOEXEC, a filter as EPERM/ENOSYS. */
/* unshare, the CLONE_* flags: the Makefile defines nothing for these. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define CONNECT_TIMEOUT_MS 2000

static int
usage (void)
{
  fputs ("usage: sysprobe OP [ARGS]\n"
         "  socket FAMILY [TYPE [PROTO]]   FAMILY: vsock alg packet "
         "netlink-route\n"
         "                                 netlink-audit netlink inet inet6 "
         "unix can\n"
         "  socketpair FAMILY [TYPE [PROTO]]\n"
         "  unshare NS     (user net mount pid uts ipc cgroup time)\n"
         "  clone NS | clone-newuser | fork | clone3\n"
         "  io_uring | userfaultfd | bpf | perf_event_open | keyctl | ptrace\n"
         "  mount [DIR]    (tmpfs on DIR, default /tmp/x; unmounted again)\n"
         "  kexec | init_module | personality VALUE | syscall NR\n"
         "  syscalls FIRST LAST   (syscall NR for each NR, quietly)\n"
         "  refuse N       (io_uring_setup N times; prints the last answer)\n"
         "  connect HOST PORT | connect6 HOST PORT   (tcp, 2 s timeout)\n"
         "  sendto HOST PORT | sendto6 HOST PORT     (udp)\n"
         "  sendmsg HOST PORT | sendmsg6 HOST PORT   (udp, sendmsg)\n"
         "  fastopen HOST PORT | fastopen6 HOST PORT (tcp, MSG_FASTOPEN)\n"
         "  tiocsti TTY | tiocsti-high TTY | tioclinux TTY\n"
         "                 (TTY: a path, or - for fd 0; tiocsti types\n"
         "                 \"echo MOAT-INJECTED\" and a newline into it)\n"
         "  abstract-connect NAME   (unix stream socket @NAME)\n"
         "  abstract-listen NAME    (listens on @NAME until killed; prints\n"
         "                          \"listening\" first)\n",
         stderr);
  return 2;
}

/* The one output format the tests assert on. */
static int
report (const char *label, long r)
{
  int e = errno;
  if (r >= 0)
    {
      puts ("ok");
      return 0;
    }
  printf ("%s: %s (errno %d)\n", label, strerror (e), e);
  return 1;
}

static int
parse_long (const char *s, long min, long max, long *ret)
{
  char *end;
  long v;

  errno = 0;
  v = strtol (s, &end, 0);
  if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
    return -1;
  *ret = v;
  return 0;
}

struct family
{
  const char *name;
  const char *label;
  int domain, type, protocol;
};

static const struct family families[] = {
  { "vsock", "AF_VSOCK", AF_VSOCK, SOCK_STREAM, 0 },
  { "alg", "AF_ALG", AF_ALG, SOCK_SEQPACKET, 0 },
  { "packet", "AF_PACKET", AF_PACKET, SOCK_RAW,
    0x0300 /* htons (ETH_P_ALL) */ },
  { "netlink-route", "AF_NETLINK, NETLINK_ROUTE", AF_NETLINK, SOCK_RAW,
    NETLINK_ROUTE },
  { "netlink-audit", "AF_NETLINK, NETLINK_AUDIT", AF_NETLINK, SOCK_RAW,
    NETLINK_AUDIT },
  { "netlink", "AF_NETLINK", AF_NETLINK, SOCK_RAW, NETLINK_ROUTE },
  { "inet", "AF_INET", AF_INET, SOCK_STREAM, 0 },
  { "inet6", "AF_INET6", AF_INET6, SOCK_STREAM, 0 },
  { "unix", "AF_UNIX", AF_UNIX, SOCK_STREAM, 0 },
  { "can", "AF_CAN", AF_CAN, SOCK_RAW, 1 },
};

static int
parse_type (const char *s, int *ret)
{
  static const struct
  {
    const char *name;
    int type;
  } types[] = { { "stream", SOCK_STREAM },
                { "dgram", SOCK_DGRAM },
                { "raw", SOCK_RAW },
                { "seqpacket", SOCK_SEQPACKET } };
  long v;

  for (size_t i = 0; i < sizeof (types) / sizeof (types[0]); i++)
    if (strcmp (s, types[i].name) == 0)
      {
        *ret = types[i].type;
        return 0;
      }
  if (parse_long (s, 0, INT_MAX, &v) < 0)
    return -1;
  *ret = (int)v;
  return 0;
}

static int
probe_socket (int argc, char **argv, int pair)
{
  const struct family *f = NULL;
  int type, protocol, sv[2];
  char label[96];
  long v;

  if (argc < 1 || argc > 3)
    return usage ();
  for (size_t i = 0; i < sizeof (families) / sizeof (families[0]); i++)
    if (strcmp (argv[0], families[i].name) == 0)
      f = &families[i];
  if (f == NULL)
    return usage ();
  type = f->type;
  protocol = f->protocol;
  if (argc >= 2 && parse_type (argv[1], &type) < 0)
    return usage ();
  if (argc == 3)
    {
      if (parse_long (argv[2], 0, INT_MAX, &v) < 0)
        return usage ();
      protocol = (int)v;
    }
  snprintf (label, sizeof (label), "%s(%s)", pair ? "socketpair" : "socket",
            f->label);
  if (pair)
    return report (label,
                   socketpair (f->domain, type | SOCK_CLOEXEC, protocol, sv));
  return report (label, socket (f->domain, type | SOCK_CLOEXEC, protocol));
}

struct ns_flag
{
  const char *name;
  const char *label;
  unsigned long flag;
};

static const struct ns_flag ns_flags[] = {
  { "user", "CLONE_NEWUSER", CLONE_NEWUSER },
  { "net", "CLONE_NEWNET", CLONE_NEWNET },
  { "mount", "CLONE_NEWNS", CLONE_NEWNS },
  { "pid", "CLONE_NEWPID", CLONE_NEWPID },
  { "uts", "CLONE_NEWUTS", CLONE_NEWUTS },
  { "ipc", "CLONE_NEWIPC", CLONE_NEWIPC },
  { "cgroup", "CLONE_NEWCGROUP", CLONE_NEWCGROUP },
  { "time", "CLONE_NEWTIME", 0x80 /* CLONE_NEWTIME */ },
};

static const struct ns_flag *
find_ns (const char *name)
{
  for (size_t i = 0; i < sizeof (ns_flags) / sizeof (ns_flags[0]); i++)
    if (strcmp (name, ns_flags[i].name) == 0)
      return &ns_flags[i];
  return NULL;
}

/* The child of a successful clone leaves at once; the parent reaps it. */
static int
reap (const char *label, long pid)
{
  if (pid == 0)
    _exit (0);
  if (pid > 0)
    waitpid ((pid_t)pid, NULL, 0);
  return report (label, pid);
}

static int
probe_clone (unsigned long flags, const char *label)
{
  /* Raw clone without CLONE_VM: fork semantics, the child on a copy of
   * this stack. On x86_64 the flags are the first argument. */
  long pid = syscall (SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  return reap (label, pid);
}

static int
probe_clone3 (void)
{
  struct clone_args args;

  memset (&args, 0, sizeof (args));
  args.exit_signal = SIGCHLD;
  return reap ("clone3", syscall (SYS_clone3, &args, sizeof (args)));
}

static int
probe_mount (const char *dir)
{
  long r;

  mkdir (dir, 0755);
  r = mount ("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m");
  if (r == 0)
    umount2 (dir, MNT_DETACH);
  return report ("mount", r);
}

static int
probe_bpf (void)
{
  union bpf_attr attr;

  memset (&attr, 0, sizeof (attr));
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  return report ("bpf",
                 syscall (SYS_bpf, BPF_MAP_CREATE, &attr, sizeof (attr)));
}

static int
probe_perf (void)
{
  struct perf_event_attr attr;

  memset (&attr, 0, sizeof (attr));
  attr.size = sizeof (attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  return report ("perf_event_open",
                 syscall (SYS_perf_event_open, &attr, 0, -1, -1, 0));
}

static int
probe_io_uring (void)
{
  struct io_uring_params params;

  memset (&params, 0, sizeof (params));
  return report ("io_uring_setup", syscall (SYS_io_uring_setup, 1, &params));
}

static int
parse_address (const char *host, const char *port, int family,
               struct sockaddr_storage *ss, socklen_t *len)
{
  long p;

  if (parse_long (port, 0, 65535, &p) < 0)
    return -1;
  if (strcmp (host, "localhost") == 0)
    host = family == AF_INET6 ? "::1" : "127.0.0.1";
  memset (ss, 0, sizeof (*ss));
  if (family != AF_INET6)
    {
      struct sockaddr_in *in = (struct sockaddr_in *)ss;
      if (inet_pton (AF_INET, host, &in->sin_addr) == 1)
        {
          in->sin_family = AF_INET;
          in->sin_port = htons ((uint16_t)p);
          *len = sizeof (*in);
          return 0;
        }
    }
  struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
  if (inet_pton (AF_INET6, host, &in6->sin6_addr) != 1)
    return -1;
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons ((uint16_t)p);
  *len = sizeof (*in6);
  return 0;
}

/* How a probe reaches its address: TCP connect(), UDP sendto() or
 * sendmsg() with the address in the message, TCP Fast Open (sendto with
 * MSG_FASTOPEN: the connect happens inside the send). */
enum probe_kind
{
  PROBE_CONNECT,
  PROBE_SENDTO,
  PROBE_SENDMSG,
  PROBE_FASTOPEN,
};

static const char *const probe_names[]
    = { "connect", "sendto", "sendmsg", "fastopen" };

static int
probe_connect (const char *host, const char *port, int family,
               enum probe_kind kind)
{
  bool udp = kind == PROBE_SENDTO || kind == PROBE_SENDMSG;
  struct sockaddr_storage ss;
  struct pollfd pfd;
  socklen_t len, elen;
  char label[160];
  int fd, e;

  if (parse_address (host, port, family, &ss, &len) < 0)
    return usage ();
  snprintf (label, sizeof (label), "%s(%s%s%s:%s)", probe_names[kind],
            ss.ss_family == AF_INET6 ? "[" : "", host,
            ss.ss_family == AF_INET6 ? "]" : "", port);
  fd = socket (ss.ss_family,
               (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC | SOCK_NONBLOCK,
               0);
  if (fd < 0)
    return report (label, -1);
  if (kind == PROBE_SENDTO)
    return report (label, sendto (fd, "x", 1, 0, (struct sockaddr *)&ss, len));
  if (kind == PROBE_SENDMSG)
    {
      struct iovec iov = { .iov_base = (void *)"x", .iov_len = 1 };
      struct msghdr msg = {
        .msg_name = &ss, .msg_namelen = len, .msg_iov = &iov, .msg_iovlen = 1
      };
      return report (label, sendmsg (fd, &msg, 0));
    }
  if ((kind == PROBE_FASTOPEN
           ? sendto (fd, "x", 1, MSG_FASTOPEN, (struct sockaddr *)&ss, len)
           : connect (fd, (struct sockaddr *)&ss, len))
      >= 0)
    return report (label, 0);
  if (errno != EINPROGRESS)
    return report (label, -1);
  pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
  e = poll (&pfd, 1, CONNECT_TIMEOUT_MS);
  if (e < 0)
    return report (label, -1);
  if (e == 0)
    {
      printf ("%s: timed out\n", label);
      return 1;
    }
  elen = sizeof (e);
  if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &e, &elen) < 0)
    return report (label, -1);
  errno = e;
  return report (label, e == 0 ? 0 : -1);
}

/* "syscall NR" runs syscall NR without arguments; "personality VALUE"
 * runs personality(VALUE). */
static int
probe_number (const char *op, const char *arg)
{
  bool is_personality = strcmp (op, "personality") == 0;
  char label[48];
  long v;

  if (parse_long (arg, 0, is_personality ? UINT32_MAX : INT_MAX, &v) < 0)
    return usage ();
  if (is_personality)
    {
      snprintf (label, sizeof (label), "personality(%#lx)", v);
      return report (label, syscall (SYS_personality, (unsigned long)v));
    }
  snprintf (label, sizeof (label), "syscall(%ld)", v);
  return report (label, syscall (v, 0, 0, 0, 0, 0, 0));
}

/* "syscalls FIRST LAST": each of those numbers once, reporting only how
 * many failed; "refuse N": a refused syscall N times (the cost of a
 * refusal, bench/). */
static int
probe_repeat (const char *op, char **argv)
{
  bool range = strcmp (op, "syscalls") == 0;
  long first, last, failed = 0, r = 0;

  if (parse_long (argv[0], 0, INT_MAX, &first) < 0
      || (range && parse_long (argv[1], first, INT_MAX, &last) < 0))
    return usage ();
  if (!range)
    last = first - 1, first = 0;
  for (long i = first; i <= last; i++)
    {
      r = range ? syscall (i, 0, 0, 0, 0, 0, 0)
                : syscall (SYS_io_uring_setup, 1, NULL);
      failed += r < 0;
    }
  if (range)
    {
      printf ("%ld of %ld failed\n", failed, last - first + 1);
      return 0;
    }
  return report ("io_uring_setup", r);
}

/* TIOCSTI pushes bytes into a terminal's input queue as if typed; the
 * -high variant sets bit 32 of the request, which the kernel drops (ioctl
 * takes an unsigned int) and a filter comparing 64 bits would not. */
static int
probe_tty_ioctl (const char *op, const char *tty)
{
  static const char text[] = "echo MOAT-INJECTED\n";
  bool high = strcmp (op, "tiocsti-high") == 0;
  unsigned long req = strcmp (op, "tioclinux") == 0 ? TIOCLINUX : TIOCSTI;
  char label[64];
  int fd = 0;

  if (high)
    req |= 1UL << 32;
  if (strcmp (tty, "-") != 0)
    {
      snprintf (label, sizeof (label), "open(%s)", tty);
      fd = open (tty, O_RDWR | O_NOCTTY | O_CLOEXEC);
      if (fd < 0)
        return report (label, -1);
    }
  snprintf (label, sizeof (label), "ioctl(%s)",
            high           ? "TIOCSTI|1<<32"
            : op[4] == 'l' ? "TIOCLINUX"
                           : "TIOCSTI");
  if (req == TIOCLINUX)
    {
      char subcode = 7; /* TIOCL_GETMOUSEREPORTING: reads, changes nothing */
      return report (label, syscall (SYS_ioctl, fd, req, &subcode));
    }
  for (size_t i = 0; i < sizeof (text) - 1; i++)
    if (syscall (SYS_ioctl, fd, req, &text[i]) < 0)
      return report (label, -1);
  return report (label, 0);
}

/* A unix stream socket at the abstract address @name: connect to it, or
 * listen there until killed (a peer in a network namespace the test made). */
static int
probe_abstract (const char *name, bool listen_there)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  size_t n = strlen (name);
  socklen_t len = (socklen_t)(offsetof (struct sockaddr_un, sun_path) + 1 + n);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd < 0)
    return report ("socket(AF_UNIX)", -1);
  if (n + 1 > sizeof (sun.sun_path))
    return usage ();
  memcpy (sun.sun_path + 1, name, n);
  if (!listen_there)
    return report ("connect(@abstract)",
                   connect (fd, (struct sockaddr *)&sun, len));
  if (bind (fd, (struct sockaddr *)&sun, len) < 0 || listen (fd, 16) < 0)
    return report ("listen(@abstract)", -1);
  puts ("listening");
  for (;;)
    pause ();
}

int
main (int argc, char **argv)
{
  const struct ns_flag *ns;
  const char *op;
  char label[48];

  setvbuf (stdout, NULL, _IOLBF, 0);
  if (argc < 2)
    return usage ();
  op = argv[1];
  argc -= 2;
  argv += 2;

  if (strcmp (op, "socket") == 0)
    return probe_socket (argc, argv, 0);
  if (strcmp (op, "socketpair") == 0)
    return probe_socket (argc, argv, 1);
  if (strcmp (op, "unshare") == 0 || strcmp (op, "clone") == 0)
    {
      if (argc != 1 || (ns = find_ns (argv[0])) == NULL)
        return usage ();
      /* clone(2) reads that bit as part of the exit signal. */
      if (op[0] == 'c' && ns->flag == 0x80)
        return usage ();
      snprintf (label, sizeof (label), "%s(%s)", op, ns->label);
      if (op[0] == 'u')
        return report (label, unshare ((int)ns->flag));
      return probe_clone (ns->flag, label);
    }
  if (strcmp (op, "clone-newuser") == 0)
    return probe_clone (CLONE_NEWUSER, "clone(CLONE_NEWUSER)");
  if (strcmp (op, "fork") == 0)
    return probe_clone (0, "clone");
  if (strcmp (op, "clone3") == 0)
    return probe_clone3 ();
  if (strcmp (op, "io_uring") == 0)
    return probe_io_uring ();
  if (strcmp (op, "userfaultfd") == 0)
    return report ("userfaultfd", syscall (SYS_userfaultfd, O_CLOEXEC));
  if (strcmp (op, "bpf") == 0)
    return probe_bpf ();
  if (strcmp (op, "perf_event_open") == 0)
    return probe_perf ();
  if (strcmp (op, "keyctl") == 0)
    return report ("keyctl", syscall (SYS_keyctl, KEYCTL_GET_KEYRING_ID,
                                      KEY_SPEC_SESSION_KEYRING, 0));
  if (strcmp (op, "ptrace") == 0)
    return report ("ptrace(PTRACE_TRACEME)",
                   ptrace (PTRACE_TRACEME, 0, NULL, NULL));
  if (strcmp (op, "mount") == 0)
    return argc <= 1 ? probe_mount (argc ? argv[0] : "/tmp/x") : usage ();
  if (strcmp (op, "kexec") == 0)
    /* Flags no kernel accepts: EINVAL once past the CAP_SYS_BOOT check. */
    return report ("kexec_load",
                   syscall (SYS_kexec_load, 0, 0, NULL, 0xdead0000UL));
  if (strcmp (op, "init_module") == 0)
    /* An empty image: ENOEXEC or EFAULT once past CAP_SYS_MODULE. */
    return report ("init_module", syscall (SYS_init_module, NULL, 0, ""));
  if ((strcmp (op, "personality") == 0 || strcmp (op, "syscall") == 0)
      && argc == 1)
    return probe_number (op, argv[0]);
  if ((strcmp (op, "syscalls") == 0 && argc == 2)
      || (strcmp (op, "refuse") == 0 && argc == 1))
    return probe_repeat (op, argv);
  for (int k = PROBE_CONNECT; k <= PROBE_FASTOPEN && argc == 2; k++)
    {
      size_t n = strlen (probe_names[k]);
      if (strncmp (op, probe_names[k], n) == 0
          && (op[n] == '\0' || strcmp (op + n, "6") == 0))
        return probe_connect (argv[0], argv[1],
                              op[n] == '6' ? AF_INET6 : AF_UNSPEC,
                              (enum probe_kind)k);
    }
  if ((strcmp (op, "tiocsti") == 0 || strcmp (op, "tiocsti-high") == 0
       || strcmp (op, "tioclinux") == 0)
      && argc == 1)
    return probe_tty_ioctl (op, argv[0]);
  if ((strcmp (op, "abstract-connect") == 0
       || strcmp (op, "abstract-listen") == 0)
      && argc == 1)
    return probe_abstract (argv[0], op[9] == 'l');
  return usage ();
}
