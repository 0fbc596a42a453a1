/* runtime/netguard*.c in real network namespaces (root): a veth to a test
 * namespace is moved into a guarded process's namespace after the programs
 * were attached (what Docker does between create and start); and the
 * rtnetlink fallback. Only addresses inside the namespaces made here are
 * used; teardown removes the netns (and with it the veth), the cgroup and
 * the processes. */
#include "netguard_harness.h"

#include <sys/resource.h>

static char veth_out[IFNAMSIZ], veth_in[IFNAMSIZ];

static int
setup_names (void **state)
{
  snprintf (veth_out, sizeof (veth_out), "mngA%d", (int)getpid () % 100000);
  snprintf (veth_in, sizeof (veth_in), "mngB%d", (int)getpid () % 100000);
  return setup_root (state);
}

static void
make_netns (void)
{
  snprintf (netns, sizeof (netns), "moat-ngtest-%d", (int)getpid ());
  if (sh ("ip netns add %s", netns) != 0)
    {
      netns[0] = '\0';
      fail_msg ("ip netns add failed");
    }
  /* Both ends are born inside the test namespace: the host's own
   * namespace never sees them. */
  if (sh ("ip -n %s link add %s type veth peer name %s && "
          "ip -n %s link set lo up && ip -n %s link set %s up && "
          "ip -n %s addr add 10.203.0.1/24 dev %s && "
          "ip -n %s addr add 169.254.169.254/32 dev %s && "
          "ip -n %s addr add fd00:203::1/64 dev %s nodad && "
          "ip -n %s addr add fd00:ec2::254/128 dev %s nodad",
          netns, veth_in, veth_out, netns, netns, veth_in, netns, veth_in,
          netns, veth_in, netns, veth_in, netns, veth_in)
      != 0)
    fail_msg ("setting up the test namespace failed");
}

static void
enter_test_netns (void)
{
  cleanup_free char *path = xasprintf ("/run/netns/%s", netns);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns (fd, CLONE_NEWNET) < 0)
    _exit (99);
}

static void
ctl_send (int ctl, char c)
{
  assert_int_equal (write (ctl, &c, 1), 1);
}

static bool
child_wait_for (int ctl, char want)
{
  return ctl_recv (ctl) == want;
}

/* ---- a veth moved in after the programs were attached ---- */

static bool veth_egress;

static bool
wait_running (const char *ifname)
{
  cleanup_close int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct ifreq ifr = { 0 };
  snprintf (ifr.ifr_name, sizeof (ifr.ifr_name), "%s", ifname);
  for (int i = 0; i < 1000; i++)
    {
      if (ioctl (fd, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags & IFF_RUNNING))
        return true;
      usleep (10000);
    }
  return false;
}

static uint16_t
inet_checksum (const void *data, size_t len)
{
  const uint16_t *p = data;
  uint32_t sum = 0;
  for (; len > 1; len -= 2)
    sum += *p++;
  while (sum >> 16)
    sum = (sum & 0xffff) + (sum >> 16);
  return (uint16_t)~sum;
}

/* An ICMP echo over a raw socket (no sock_addr hook: only the skb
 * programs see it). 0 once the reply is in, else -errno. */
static int
ping (const char *addr)
{
  struct sockaddr_storage ss;
  struct icmphdr req = { .type = ICMP_ECHO };
  struct timeval tv = { .tv_sec = 10 };
  cleanup_close int fd
      = socket (AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
  uint8_t buf[1500];

  sockaddr_of (addr, 0, &ss);
  req.un.echo.id = htons ((uint16_t)getpid ());
  req.un.echo.sequence = htons (1);
  req.checksum = inet_checksum (&req, sizeof (req));
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof (tv));
  if (sendto (fd, &req, sizeof (req), 0, (struct sockaddr *)&ss,
              sizeof (struct sockaddr_in))
      < 0)
    return -errno;
  for (;;)
    {
      ssize_t n = recv (fd, buf, sizeof (buf), 0);
      struct icmphdr *rep = (struct icmphdr *)(buf + (buf[0] & 0xf) * 4);
      if (n < 0)
        return -errno;
      if (n >= (buf[0] & 0xf) * 4 + 8 && rep->type == ICMP_ECHOREPLY
          && rep->un.echo.id == req.un.echo.id)
        return 0;
    }
}

/* The socket's drop counter (last column of /proc/net/udp): a datagram
 * refused by an ingress program counts there. */
static long
udp_drops (int port)
{
  cleanup_free char *text = NULL;
  if (read_file_at (AT_FDCWD, "/proc/self/net/udp", 1 << 20, &text, NULL) < 0)
    return -1;
  for (char *line = strchr (text, '\n'); line; line = strchr (line + 1, '\n'))
    {
      unsigned lport;
      char *end = strchr (line + 1, '\n'), *last = NULL, *save = NULL;
      if (sscanf (line + 1, "%*d: %*x:%x", &lport) != 1 || (int)lport != port)
        continue;
      if (end)
        *end = '\0';
      for (char *t = strtok_r (line + 1, " ", &save); t;
           t = strtok_r (NULL, " ", &save))
        last = t;
      return last ? strtol (last, NULL, 10) : -1;
    }
  return -1;
}

static char *
expect_udp (int fd, bool want_good, long want_drops)
{
  char buf[16] = { 0 };
  long drops = 0;
  if (want_good
      && (recv (fd, buf, sizeof (buf) - 1, 0) < 0 || strcmp (buf, "good") != 0))
    return xasprintf ("no datagram from 10.203.0.1 (%m), got \"%s\"", buf);
  for (int i = 0; i < 1000 && (drops = udp_drops (9999)) < want_drops; i++)
    usleep (10000);
  if (drops != want_drops)
    return xasprintf ("%ld datagrams dropped, want %ld", drops, want_drops);
  if (recv (fd, buf, sizeof (buf), MSG_DONTWAIT) >= 0 || errno != EAGAIN)
    return xasprintf ("a refused datagram came through: \"%s\"", buf);
  return NULL;
}

/* In a child with its own netns: say so, get the veth, configure it. */
static char *
take_veth (int ctl)
{
  ctl_send (ctl, 'R');
  if (!child_wait_for (ctl, 'G'))
    return xasprintf ("no veth");
  if (sh ("ip addr add 10.203.0.2/24 dev %s && ip link set %s up && "
          "ip route add default via 10.203.0.1 && "
          "ip -6 addr add fd00:203::2/64 dev %s nodad && "
          "ip -6 route add default via fd00:203::1",
          veth_out, veth_out, veth_out)
          != 0
      || !wait_running (veth_out))
    return xasprintf ("configuring %s failed", veth_out);
  return NULL;
}

/* The parent's side: the veth goes in once the child has its netns. */
static pid_t
start_with_veth (child_fn fn, int *ret_ctl)
{
  pid_t pid = start_child (fn, ret_ctl);
  ctl_expect (*ret_ctl, 'R');
  assert_int_equal (
      sh ("ip -n %s link set %s netns %d", netns, veth_out, (int)pid), 0);
  ctl_send (*ret_ctl, 'G');
  return pid;
}

static char *
veth_child (int ctl)
{
  char *fail = become_guarded ();
  struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons (9999) };
  struct timeval tv = { .tv_sec = 10 };
  cleanup_close int udp = -1;

  if (fail || (fail = take_veth (ctl)))
    return fail;

  if (veth_egress)
    {
      CHECK_ERR (TCP ("10.203.0.1", 8080), 0);
      CHECK_ERR (TCP ("fd00:203::1", 8080), 0);
      CHECK_ERR (ping ("10.203.0.1"), 0);
      CHECK_ERR (TCP ("169.254.169.254", 8080), -EPERM);
      CHECK_ERR (TCP ("fd00:ec2::254", 8080), -EPERM);
      CHECK_ERR (TCP ("::ffff:169.254.169.254", 8080), -EPERM);
      CHECK_ERR (UDP_SEND ("169.254.169.254", 53), -EPERM);
      CHECK_ERR (ping ("169.254.169.254"), -EPERM);
    }
  else
    {
      CHECK_ERR (TCP ("10.203.0.1", 8080), -EPERM);
      CHECK_ERR (TCP ("fd00:203::1", 8080), -EPERM);
      CHECK_ERR (UDP_SEND ("10.203.0.1", 53), -EPERM);
      CHECK_ERR (ping ("10.203.0.1"), -EPERM);
    }

  udp = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (bind (udp, (struct sockaddr *)&any, sizeof (any)) < 0)
    return xasprintf ("bind :9999: %m");
  setsockopt (udp, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof (tv));
  ctl_send (ctl, 'U');
  if (!child_wait_for (ctl, 'S'))
    return xasprintf ("nothing sent");
  /* From 169.254.169.254 (denied in both modes), then 10.203.0.1. */
  return expect_udp (udp, veth_egress, veth_egress ? 1 : 2);
}

static void
start_server (void)
{
  int pipefd[2];
  char c;
  pid_t pid;

  assert_int_equal (pipe2 (pipefd, O_CLOEXEC), 0);
  pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      struct sockaddr_in6 any
          = { .sin6_family = AF_INET6, .sin6_port = htons (8080) };
      int off = 0, fd;
      enter_test_netns ();
      fd = socket (AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
      setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof (off));
      if (bind (fd, (struct sockaddr *)&any, sizeof (any)) < 0
          || listen (fd, 16) < 0)
        _exit (1);
      if (write (pipefd[1], "L", 1) != 1)
        _exit (1);
      for (;;)
        {
          int conn = accept4 (fd, NULL, NULL, SOCK_CLOEXEC);
          if (conn >= 0)
            close (conn);
        }
    }
  kids[n_kids++] = pid;
  close (pipefd[1]);
  assert_int_equal (read (pipefd[0], &c, 1), 1);
  close (pipefd[0]);
}

static void
send_datagrams (void)
{
  static const char *const from[] = { "169.254.169.254", "10.203.0.1" };
  static const char *const text[] = { "bad", "good" };
  int status;
  pid_t pid = fork ();

  assert_true (pid >= 0);
  if (pid == 0)
    {
      struct sockaddr_storage src, dst;
      enter_test_netns ();
      if (!wait_running (veth_in))
        _exit (2);
      sockaddr_of ("10.203.0.2", 9999, &dst);
      for (int i = 0; i < 2; i++)
        {
          int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
          sockaddr_of (from[i], 0, &src);
          if (bind (fd, (struct sockaddr *)&src, sizeof (struct sockaddr_in))
                  < 0
              || sendto (fd, text[i], strlen (text[i]) + 1, 0,
                         (struct sockaddr *)&dst, sizeof (struct sockaddr_in))
                     < 0)
            _exit (3);
          close (fd);
        }
      _exit (0);
    }
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_int_equal (status, 0);
}

static void
run_veth_test (bool egress)
{
  int ctl;
  pid_t pid;

  need_root_and_cgroup2 ();
  make_cgroup ();
  attach (egress);
  make_netns ();
  start_server ();
  veth_egress = egress;
  pid = start_with_veth (veth_child, &ctl);
  ctl_expect (ctl, 'U');
  send_datagrams ();
  ctl_send (ctl, 'S');
  child_finish (pid, ctl);
}

static void
test_veth_strict (void **state)
{
  run_veth_test (false);
}

static void
test_veth_egress (void **state)
{
  run_veth_test (true);
}

/* ---- the fallback, no BPF ---- */

/* netguard_fallback_ns in the network namespace of pid, as start opens
 * the init's. */
static int
netguard_fallback (pid_t pid, const struct netguard_rules *r,
                   struct moat_error **err)
{
  char path[64];
  cleanup_close int nsfd = -1;

  snprintf (path, sizeof (path), "/proc/%d/ns/net", (int)pid);
  nsfd = open (path, O_RDONLY | O_CLOEXEC);
  if (nsfd < 0)
    return moat_fail (err, errno, "opening %s", path);
  return netguard_fallback_ns (nsfd, pid, r, err);
}

static bool fallback_egress;
static const struct cidr bad_cidr = { .family = AF_UNIX, .prefix = 8 };
static pid_t fallback_target;

static char *
fallback_target_child (int ctl)
{
  struct moat_error *err = NULL;
  char *fail;
  if (unshare (CLONE_NEWNET) < 0 || netguard_loopback_up (&err) < 0)
    return xasprintf ("fresh netns: %m");
  if ((fail = take_veth (ctl)))
    return fail;
  ctl_send (ctl, 'C');
  child_wait_for (ctl, 'Q');
  return NULL;
}

/* Runs in the target's namespace after netguard_fallback. */
static char *
fallback_checker (int ctl)
{
  cleanup_free char *path = xasprintf ("/proc/%d/ns/net", fallback_target);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  struct if_nameindex *ifs;

  if (fd < 0 || setns (fd, CLONE_NEWNET) < 0)
    return xasprintf ("entering %s: %m", path);
  CHECK_ERR (UDP_CONNECT ("127.0.0.1", 53), 0);
  CHECK_ERR (UDP_CONNECT ("169.254.169.254", 80), -EACCES);
  CHECK_ERR (UDP_CONNECT ("fd00:ec2::254", 80), -EACCES);
  CHECK_ERR (UDP_CONNECT ("::ffff:169.254.169.254", 80), -EACCES);
  if (fallback_egress)
    {
      if (!wait_running (veth_out))
        return xasprintf ("%s is gone or down", veth_out);
      CHECK_ERR (UDP_CONNECT ("10.1.2.3", 53), 0);
      CHECK_ERR (UDP_CONNECT ("2001:db8::1", 53), 0);
      /* A more specific route, as a CNI plugin might add: still refused. */
      if (sh ("ip route add 169.254.169.254/32 via 10.203.0.1") != 0)
        return xasprintf ("ip route add failed");
      CHECK_ERR (UDP_CONNECT ("169.254.169.254", 80), -EACCES);
      return NULL;
    }
  CHECK_ERR (UDP_CONNECT ("10.1.2.3", 53), -EACCES);
  CHECK_ERR (UDP_CONNECT ("2001:db8::1", 53), -EACCES);
  ifs = if_nameindex ();
  for (size_t i = 0; ifs && ifs[i].if_index; i++)
    {
      struct ifreq ifr = { 0 };
      cleanup_close int s = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      snprintf (ifr.ifr_name, sizeof (ifr.ifr_name), "%s", ifs[i].if_name);
      if (ioctl (s, SIOCGIFFLAGS, &ifr) < 0 || strcmp (ifr.ifr_name, "lo") == 0)
        continue;
      if (strcmp (ifr.ifr_name, veth_out) == 0 || (ifr.ifr_flags & IFF_UP))
        return xasprintf ("link %s is left", ifr.ifr_name);
    }
  if_freenameindex (ifs);
  return NULL;
}

static void
run_fallback_test (bool egress)
{
  struct netguard_rules r
      = { .egress = egress, .deny = deny_list, .n_deny = 2 };
  struct moat_error *err = NULL;
  int ctl, check_ctl;
  pid_t pid, checker;

  if (geteuid () != 0)
    skip ();
  /* The caller's own namespace is refused outright. */
  assert_int_equal (netguard_fallback (getpid (), &r, &err), -EINVAL);
  moat_error_free (&err);

  make_netns ();
  fallback_egress = egress;
  pid = start_with_veth (fallback_target_child, &ctl);
  ctl_expect (ctl, 'C');

  /* A bad entry is refused before anything changes. */
  r.deny = &bad_cidr;
  r.n_deny = 1;
  assert_int_equal (netguard_fallback (pid, &r, &err), -EINVAL);
  moat_error_free (&err);
  assert_int_equal (
      sh ("nsenter -t %d -n ip link show %s >/dev/null", (int)pid, veth_out),
      0);
  r.deny = deny_list;
  r.n_deny = 2;

  if (netguard_fallback (pid, &r, &err) < 0)
    fail_msg ("netguard_fallback: %s", err->msg);
  /* Twice is harmless (a later start, a retry). */
  if (netguard_fallback (pid, &r, &err) < 0)
    fail_msg ("netguard_fallback again: %s", err->msg);

  fallback_target = pid;
  checker = start_child (fallback_checker, &check_ctl);
  child_finish (checker, check_ctl);
  /* Deleting our end took the peer in the test namespace with it. */
  assert_int_equal (sh ("ip -n %s link show %s >/dev/null 2>&1", netns, veth_in)
                        == 0,
                    egress);
  ctl_send (ctl, 'Q');
  child_finish (pid, ctl);
}

/* A failure inside the namespace comes back with its errno: here the
 * child cannot open its rtnetlink socket because the parent used up
 * RLIMIT_NOFILE with the namespace fd and the report pipe. */
static char *
fallback_emfile_child (int ctl)
{
  struct netguard_rules r = { .deny = deny_list, .n_deny = 2 };
  struct moat_error *err = NULL;
  struct rlimit lim;
  int fds[4], rc;

  /* The namespace fd and the pipe take the three lowest free numbers;
   * the fourth is where the child's socket would go. */
  for (int i = 0; i < 4; i++)
    fds[i] = dup (0);
  for (int i = 0; i < 4; i++)
    close (fds[i]);
  getrlimit (RLIMIT_NOFILE, &lim);
  lim.rlim_cur = (rlim_t)fds[3];
  if (setrlimit (RLIMIT_NOFILE, &lim) < 0)
    return xasprintf ("setrlimit: %m");
  rc = netguard_fallback (fallback_target, &r, &err);
  if (rc != -EMFILE || err == NULL || err->errnum != EMFILE
      || strstr (err->msg, "rtnetlink socket") == NULL)
    return xasprintf ("got %d: %s", rc, err ? err->msg : "no error");
  return NULL;
}

static char *
idle_netns_child (int ctl)
{
  if (unshare (CLONE_NEWNET) < 0)
    return xasprintf ("unshare: %m");
  ctl_send (ctl, 'R');
  child_wait_for (ctl, 'Q');
  return NULL;
}

static void
test_fallback_reports_errors (void **state)
{
  int ctl, tester_ctl;
  pid_t tester;

  if (geteuid () != 0)
    skip ();
  fallback_target = start_child (idle_netns_child, &ctl);
  ctl_expect (ctl, 'R');
  tester = start_child (fallback_emfile_child, &tester_ctl);
  child_finish (tester, tester_ctl);
  ctl_send (ctl, 'Q');
  child_finish (fallback_target, ctl);
}

/* egress in the fallback: prohibit rules for G2 and the private ranges
 * (and their IPv6 forms), "lookup main" rules before them for the
 * allowed entries and the nameservers' port 53. Asked with real sockets
 * from inside a namespace with a default route (over a veth): a connect
 * (UDP, or TCP without waiting) looks the route up with its protocol and
 * port, and a prohibit rule makes it fail with EACCES at once. (Not with
 * `ip route get ... ipproto tcp`: Debian 12's iproute2 6.1 cannot parse a
 * protocol name there, and the test passed or failed on that.) */
static const struct
{
  int type;
  const char *addr;
  int port;
  bool prohibited;
} egress_cases[] = {
  { SOCK_DGRAM, "169.254.169.254", 80, true },
  { SOCK_DGRAM, "10.2.0.1", 80, true },
  { SOCK_DGRAM, "10.96.0.10", 53, false },
  { SOCK_STREAM, "10.96.0.10", 53, false },
  { SOCK_STREAM, "10.96.0.10", 80, true },
  { SOCK_DGRAM, "10.96.0.10", 80, true },
  { SOCK_STREAM, "10.1.2.3", 443, false },
  { SOCK_DGRAM, "10.1.2.3", 443, false },
  { SOCK_STREAM, "10.1.2.3", 22, true },
  { SOCK_DGRAM, "10.1.2.3", 444, true },
  { SOCK_STREAM, "198.51.100.7", 80, false },
  { SOCK_DGRAM, "64:ff9b::a9fe:a9fe", 80, true },
  { SOCK_DGRAM, "2002:a9fe:a9fe::1", 80, true },
  { SOCK_STREAM, "64:ff9b::a02:1", 80, true },
  { SOCK_STREAM, "2001:db8::1", 80, false },
};

/* connect() without waiting for an answer: 0 when the packet may leave
 * (EINPROGRESS for TCP), else -errno. */
static int
connect_now (int type, const char *addr, int port)
{
  struct sockaddr_storage ss;
  int family = sockaddr_of (addr, port, &ss);
  cleanup_close int fd
      = socket (family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

  if (fd < 0)
    return -errno;
  if (connect (fd, (struct sockaddr *)&ss, sizeof (ss)) < 0
      && errno != EINPROGRESS)
    return -errno;
  return 0;
}

static char *
egress_lists_checker (int ctl)
{
  cleanup_free char *path = xasprintf ("/proc/%d/ns/net", fallback_target);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);

  if (fd < 0 || setns (fd, CLONE_NEWNET) < 0)
    return xasprintf ("entering %s: %m", path);
  for (size_t i = 0; i < sizeof (egress_cases) / sizeof (egress_cases[0]); i++)
    {
      int r = connect_now (egress_cases[i].type, egress_cases[i].addr,
                           egress_cases[i].port);
      if (r != (egress_cases[i].prohibited ? -EACCES : 0))
        return xasprintf ("%s %s port %d: %s, want %s",
                          egress_cases[i].type == SOCK_STREAM ? "tcp" : "udp",
                          egress_cases[i].addr, egress_cases[i].port,
                          r ? strerror (-r) : "passed",
                          egress_cases[i].prohibited ? "EACCES" : "passed");
    }
  return NULL;
}

static void
test_fallback_egress_lists (void **state)
{
  struct cidr deny = { AF_INET, { 169, 254 }, 16, 0 };
  struct cidr priv = { AF_INET, { 10 }, 8, 0 };
  struct cidr dns = { AF_INET, { 10, 96, 0, 10 }, 32, 0 };
  struct cidr allow = { AF_INET, { 10, 1 }, 16, 443 };
  struct netguard_rules r = { .egress = true,
                              .deny = &deny,
                              .n_deny = 1,
                              .allow = &allow,
                              .n_allow = 1,
                              .dns = &dns,
                              .n_dns = 1,
                              .private_nets = &priv,
                              .n_private = 1 };
  struct moat_error *err = NULL;
  int ctl, check_ctl;
  pid_t pid, checker;

  if (geteuid () != 0)
    skip ();
  pid = start_child (idle_netns_child, &ctl);
  ctl_expect (ctl, 'R');
  assert_int_equal (
      sh ("nsenter -t %d -n sh -c 'ip link add d0 type veth peer name d1 && ip "
          "link set d1 up && "
          "ip addr add 192.0.2.2/24 dev d0 && "
          "ip addr add 2001:db8:1::2/64 dev d0 nodad && ip link set d0 up && "
          "ip route add default via 192.0.2.1 && "
          "ip -6 route add default via 2001:db8:1::1'",
          (int)pid),
      0);
  if (netguard_fallback (pid, &r, &err) < 0)
    fail_msg ("netguard_fallback: %s", err->msg);
  fallback_target = pid;
  checker = start_child (egress_lists_checker, &check_ctl);
  child_finish (checker, check_ctl);
  ctl_send (ctl, 'Q');
  child_finish (pid, ctl);
}

static void
test_fallback_strict (void **state)
{
  run_fallback_test (false);
}

static void
test_fallback_egress (void **state)
{
  run_fallback_test (true);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown (test_veth_strict, teardown),
    cmocka_unit_test_teardown (test_veth_egress, teardown),
    cmocka_unit_test_teardown (test_fallback_strict, teardown),
    cmocka_unit_test_teardown (test_fallback_egress, teardown),
    cmocka_unit_test_teardown (test_fallback_reports_errors, teardown),
    cmocka_unit_test_teardown (test_fallback_egress_lists, teardown),
  };
  return cmocka_run_group_tests (tests, setup_names, NULL);
}
