/* runtime/netguard*.c: CIDR parsing, the BPF programs run on crafted
 * packets (BPF_PROG_TEST_RUN), and for real (root, cgroup2): a process in
 * a guarded cgroup with its own network namespace, and what is attached.
 * Veths and the fallback are in test_netguard_net.c. */
#include "netguard_harness.h"
#include "netguard_skb.h"

/* ---- CIDR parsing ---- */

static void
test_cidr_parse_table (void **state)
{
  static const struct
  {
    const char *in;
    int family; /* 0: refused */
    const char *net;
    int prefix;
  } cases[] = {
    { "10.0.0.0/8", AF_INET, "10.0.0.0", 8 },
    { "10.1.2.3/8", AF_INET, "10.0.0.0", 8 },
    { "169.254.169.254", AF_INET, "169.254.169.254", 32 },
    { "192.168.1.255/23", AF_INET, "192.168.0.0", 23 },
    { "0.0.0.0/0", AF_INET, "0.0.0.0", 0 },
    { "1.2.3.4/32", AF_INET, "1.2.3.4", 32 },
    { "fd00:ec2::254/128", AF_INET6, "fd00:ec2::254", 128 },
    { "fd00:ec2::254", AF_INET6, "fd00:ec2::254", 128 },
    { "2001:db8:ffff::1/36", AF_INET6, "2001:db8:f000::", 36 },
    { "::/0", AF_INET6, "::", 0 },
    { "::ffff:169.254.0.0/112", AF_INET6, "::ffff:169.254.0.0", 112 },
    { "", 0, NULL, 0 },
    { "10.0.0.0/", 0, NULL, 0 },
    { "/8", 0, NULL, 0 },
    { "10.0.0.0/33", 0, NULL, 0 },
    { "10.0.0.0/-1", 0, NULL, 0 },
    { "10.0.0.0/+8", 0, NULL, 0 },
    { "10.0.0.0/ 8", 0, NULL, 0 },
    { "10.0.0.0/8/8", 0, NULL, 0 },
    { "10.0.0.0/0008", 0, NULL, 0 },
    { "10.0.0/8", 0, NULL, 0 },
    { "256.0.0.0/8", 0, NULL, 0 },
    { "255.255.255.255/32", AF_INET, "255.255.255.255", 32 },
    { "010.0.0.0/8", 0, NULL, 0 },
    { "1.2.3.04", 0, NULL, 0 },
    { "1.2.3.4.5", 0, NULL, 0 },
    { "1..2.3", 0, NULL, 0 },
    { "1.2.3.", 0, NULL, 0 },
    { ".1.2.3", 0, NULL, 0 },
    { "1.2.3.1000", 0, NULL, 0 },
    { "1.2.3.4x", 0, NULL, 0 },
    { "::/129", 0, NULL, 0 },
    { "fd00::g/64", 0, NULL, 0 },
    { "example.com/8", 0, NULL, 0 },
    { "10.0.0.0/8 ", 0, NULL, 0 },
  };

  for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    {
      struct cidr c, want = { 0 };
      int r = cidr_parse (cases[i].in, &c);
      if (cases[i].family == 0)
        {
          if (r != -EINVAL)
            fail_msg ("\"%s\" accepted", cases[i].in);
          continue;
        }
      if (r != 0)
        fail_msg ("\"%s\" refused", cases[i].in);
      assert_int_equal (inet_pton (cases[i].family, cases[i].net, want.addr),
                        1);
      assert_int_equal (c.family, cases[i].family);
      assert_int_equal (c.prefix, cases[i].prefix);
      if (memcmp (c.addr, want.addr, 16) != 0)
        fail_msg ("\"%s\": wrong network address", cases[i].in);
    }
  assert_int_equal (cidr_parse (NULL, &(struct cidr){ 0 }), -EINVAL);
}

static struct cidr
cidr (const char *s)
{
  struct cidr c;
  assert_int_equal (cidr_parse (s, &c), 0);
  return c;
}

static void
test_rules_checked (void **state)
{
  static struct cidr many[NETGUARD_MAX_DENY + 1];
  struct cidr bad = { .family = AF_UNIX, .prefix = 8 };
  struct netguard_rules r
      = { .egress = true, .deny = many, .n_deny = NETGUARD_MAX_DENY + 1 };
  struct bpf_insn *insns = NULL;
  struct moat_error *err = NULL;
  size_t n;

  for (size_t i = 0; i <= NETGUARD_MAX_DENY; i++)
    many[i] = cidr ("10.0.0.0/8");
  assert_int_equal (netguard_bpf_build (NETGUARD_PROG_SKB_EGRESS, &r, &no_maps,
                                        &insns, &n, &err),
                    -E2BIG);
  moat_error_free (&err);

  r.deny = &bad;
  r.n_deny = 1;
  assert_int_equal (netguard_bpf_build (NETGUARD_PROG_CONNECT4, &r, &no_maps,
                                        &insns, &n, &err),
                    -EINVAL);
  moat_error_free (&err);

  /* The fallback's own bound: one policy rule per entry. */
  r.deny = many;
  r.n_deny = NETGUARD_FALLBACK_MAX_ENTRIES + 1;
  assert_int_equal (netguard_fallback_check (&r, &err), -E2BIG);
  assert_non_null (strstr (err->msg, "fallback without cgroup BPF"));
  moat_error_free (&err);
  r.n_deny = NETGUARD_FALLBACK_MAX_ENTRIES;
  assert_int_equal (netguard_fallback_check (&r, &err), 0);

  r.n_deny = NETGUARD_MAX_DENY;
  assert_int_equal (netguard_bpf_build (NETGUARD_PROG_CONNECT6, &r, &no_maps,
                                        &insns, &n, &err),
                    0);
  free (insns);
}

/* ---- the skb programs on crafted packets (BPF_PROG_TEST_RUN) ---- */

static int
load (enum netguard_prog kind, bool egress, const struct cidr *deny,
      size_t n_deny)
{
  struct netguard_rules r
      = { .egress = egress, .deny = deny, .n_deny = n_deny };
  return load_rules (kind, &r);
}

static void
test_skb_loopback_program (void **state)
{
  static const struct packet_case cases[] = {
    { "127.0.0.1", "127.0.0.1", 1, 1 },
    { "127.0.0.1", "127.255.0.9", 1, 1 },
    { "127.0.0.1", "10.0.0.1", 1, 0 },
    { "10.0.0.1", "127.0.0.1", 1, 0 },
    { "8.8.8.8", "8.8.4.4", 1, 0 },
    { "128.0.0.1", "127.0.0.1", 1, 0 },
    { "::1", "::1", 1, 1 },
    /* No IPv6 packet carries a mapped address: not loopback here. */
    { "::ffff:127.0.0.1", "::1", 1, 0 },
    { "::1", "::2", 1, 0 },
    { "::1", "fd00:ec2::254", 1, 0 },
    { "2001:db8::1", "::1", 1, 0 },
    { "::ffff:10.0.0.1", "::1", 1, 0 },
    /* Loopback addresses arriving on another device: spoofed. */
    { "127.0.0.1", "127.0.0.1", ON_OTHER, 0 },
    { "::1", "::1", ON_OTHER, 0 },
  };
  if (geteuid () != 0 || !skb_test_run_usable ())
    skip ();
  CHECK_PACKETS (load (NETGUARD_PROG_SKB_LOOPBACK, false, deny_list, 3), cases);
}

/* In strict mode a deny entry only costs instructions where it overlaps
 * loopback; where it does, it still wins. */
static void
test_strict_deny_overlap (void **state)
{
  static const struct packet_case cases[] = {
    { "127.0.0.1", "127.0.0.1", 1, 1 },
    { "127.0.0.1", "127.0.0.2", 1, 0 },
    { "127.0.0.2", "127.0.0.1", 1, 0 },
    { "::1", "::1", 1, 0 },
  };
  struct cidr lo2[] = { cidr ("127.0.0.2/32"), cidr ("::1/128") };
  struct netguard_rules none = { 0 };
  struct netguard_rules far = { .deny = deny_list, .n_deny = 3 };
  struct moat_error *err = NULL;
  struct bpf_insn *insns = NULL;
  size_t n_none, n_far;

  for (int kind = NETGUARD_PROG_SKB_LOOPBACK; kind <= NETGUARD_PROG_SENDMSG6;
       kind++)
    {
      if (kind == NETGUARD_PROG_SKB_EGRESS || kind == NETGUARD_PROG_SKB_INGRESS)
        continue;
      assert_int_equal (
          netguard_bpf_build (kind, &none, &no_maps, &insns, &n_none, &err), 0);
      free (insns);
      assert_int_equal (
          netguard_bpf_build (kind, &far, &no_maps, &insns, &n_far, &err), 0);
      free (insns);
      assert_int_equal (n_none, n_far);
    }

  if (geteuid () != 0 || !skb_test_run_usable ())
    skip ();
  CHECK_PACKETS (load (NETGUARD_PROG_SKB_LOOPBACK, false, lo2, 2), cases);
}

static void
test_skb_egress_programs (void **state)
{
  /* Going out, the destination counts; our own 10.x source does not. */
  static const struct packet_case out[] = {
    { "10.203.0.2", "93.184.216.34", 1, 1 },
    { "10.203.0.2", "169.254.169.254", 1, 0 },
    { "192.0.2.1", "10.1.2.3", 1, 0 },
    { "192.0.2.1", "169.253.255.255", 1, 1 },
    { "192.0.2.1", "169.255.0.0", 1, 1 },
    { "2001:db8::1", "fd00:ec2::254", 1, 0 },
    { "2001:db8::1", "fd00:ec2::255", 1, 1 },
    { "2001:db8::1", "::ffff:169.254.169.254", 1, 0 },
    { "2001:db8::1", "::ffff:10.9.9.9", 1, 0 },
    { "2001:db8::1", "2001:db8::2", 1, 1 },
    { "10.203.0.2", "93.184.216.34", ON_OTHER, 1 },
  };
  /* Coming in, the source counts. */
  static const struct packet_case in[] = {
    { "169.254.169.254", "192.0.2.1", 1, 0 },
    { "93.184.216.34", "10.203.0.2", 1, 1 },
    { "fd00:ec2::254", "2001:db8::1", 1, 0 },
    { "2001:db8::2", "fd00:ec2::254", 1, 1 },
  };
  /* A deny entry covering everything leaves code after it unreachable:
   * the assembler must leave it out for the verifier to accept. */
  static const struct packet_case all_v4_denied[] = {
    { "192.0.2.1", "192.0.2.2", 1, 0 },
    { "2001:db8::1", "2001:db8::2", 1, 1 },
    { "2001:db8::1", "::ffff:192.0.2.2", 1, 0 },
  };
  /* Prefixes that end inside a byte. */
  static const struct packet_case odd_prefixes[] = {
    { "192.0.2.1", "100.64.0.1", 1, 0 },
    { "192.0.2.1", "100.127.255.255", 1, 0 },
    { "192.0.2.1", "100.128.0.0", 1, 1 },
    { "192.0.2.1", "100.63.255.255", 1, 1 },
    { "2001:db8::1", "2001:db8:f000::1", 1, 0 },
    { "2001:db8::1", "2001:db8:ffff:ffff::", 1, 0 },
    { "2001:db8::1", "2001:db8:e000::1", 1, 1 },
    { "2001:db8::1", "2001:db9:f000::1", 1, 1 },
  };
  struct cidr odd[] = { cidr ("100.64.0.0/10"), cidr ("2001:db8:f000::/36") };
  struct cidr all_v4 = cidr ("0.0.0.0/0");

  if (geteuid () != 0)
    skip ();
  if (!skb_test_run_usable ())
    {
      /* The programs still load (the verifier accepts them). */
      close (load (NETGUARD_PROG_SKB_EGRESS, true, deny_list, 3));
      close (load (NETGUARD_PROG_SKB_EGRESS, true, &all_v4, 1));
      skip ();
    }
  CHECK_PACKETS (load (NETGUARD_PROG_SKB_EGRESS, true, deny_list, 3), out);
  CHECK_PACKETS (load (NETGUARD_PROG_SKB_INGRESS, true, deny_list, 3), in);
  CHECK_PACKETS (load (NETGUARD_PROG_SKB_EGRESS, true, odd, 2), odd_prefixes);
  CHECK_PACKETS (load (NETGUARD_PROG_SKB_EGRESS, true, &all_v4, 1),
                 all_v4_denied);
  close (load (NETGUARD_PROG_CONNECT4, true, &all_v4, 1));
}

static int
listen_on (const char *addr, int *ret_port)
{
  struct sockaddr_storage ss;
  socklen_t len = sizeof (ss);
  int fd = socket (sockaddr_of (addr, 0, &ss), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || bind (fd, (struct sockaddr *)&ss, sizeof (ss)) < 0
      || listen (fd, 16) < 0
      || getsockname (fd, (struct sockaddr *)&ss, &len) < 0)
    return -1;
  *ret_port = ntohs (((struct sockaddr_in *)&ss)->sin_port);
  return fd;
}

/* ---- strict mode, only lo ---- */

static char *
strict_loopback_child (int ctl)
{
  char *fail = become_guarded ();
  cleanup_close int l4 = -1, l6 = -1;
  int port4, port6;

  if (fail)
    return fail;
  l4 = listen_on ("127.0.0.1", &port4);
  if (l4 < 0)
    return xasprintf ("listen on 127.0.0.1: %m");
  CHECK_ERR (TCP ("127.0.0.1", port4), 0);
  CHECK_ERR (TCP ("0.0.0.0", port4), 0);
  CHECK_ERR (UDP_SEND ("127.0.0.1", port4), 0);
  /* Without the guard these would be ENETUNREACH (only lo here). */
  CHECK_ERR (TCP ("169.254.169.254", 80), -EPERM);
  CHECK_ERR (UDP_SEND ("10.1.2.3", 53), -EPERM);
  CHECK_ERR (UDP_CONNECT ("10.1.2.3", 53), -EPERM);
  CHECK_ERR (TCP_FASTOPEN ("169.254.169.254", 80), -EPERM);

  l6 = listen_on ("::1", &port6);
  if (l6 < 0)
    return errno == EAFNOSUPPORT ? NULL : xasprintf ("listen on ::1: %m");
  CHECK_ERR (TCP ("::1", port6), 0);
  CHECK_ERR (TCP ("::ffff:127.0.0.1", port4), 0);
  CHECK_ERR (TCP ("fd00:ec2::254", 80), -EPERM);
  CHECK_ERR (TCP ("::ffff:169.254.169.254", 80), -EPERM);
  CHECK_ERR (UDP_SEND ("2001:db8::1", 53), -EPERM);
  CHECK_ERR (UDP_SEND ("::ffff:10.1.2.3", 53), -EPERM);
  return NULL;
}

static void
test_strict_loopback_only (void **state)
{
  int ctl;
  pid_t pid;

  need_root_and_cgroup2 ();
  make_cgroup ();
  attach (false);
  pid = start_child (strict_loopback_child, &ctl);
  child_finish (pid, ctl);
}

static bool
lo_is_up (void)
{
  cleanup_close int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct ifreq ifr = { .ifr_name = "lo" };
  return ioctl (fd, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags & IFF_UP);
}

static char *
loopback_up_child (int ctl)
{
  struct moat_error *err = NULL;
  if (unshare (CLONE_NEWNET) < 0)
    return xasprintf ("unshare: %m");
  if (lo_is_up ())
    return xasprintf ("lo is up in a fresh namespace");
  for (int i = 0; i < 2; i++)
    if (netguard_loopback_up (&err) < 0 || !lo_is_up ())
      return xasprintf ("round %d: %s", i, err ? err->msg : "lo still down");
  return NULL;
}

static void
test_loopback_up (void **state)
{
  int ctl;
  pid_t pid;

  if (geteuid () != 0)
    skip ();
  pid = start_child (loopback_up_child, &ctl);
  child_finish (pid, ctl);
}

/* ---- what is attached, and rollback ---- */

static uint32_t
query (int cg, enum bpf_attach_type hook, uint32_t *ret_first_id)
{
  uint32_t ids[64] = { 0 };
  union bpf_attr attr;
  memset (&attr, 0, sizeof (attr));
  attr.query.target_fd = (uint32_t)cg;
  attr.query.attach_type = hook;
  attr.query.prog_ids = (uint64_t)(uintptr_t)ids;
  attr.query.prog_cnt = 64;
  if (bpf_sys (BPF_PROG_QUERY, &attr) < 0)
    fail_msg ("BPF_PROG_QUERY: %m");
  if (ret_first_id)
    *ret_first_id = ids[0];
  return attr.query.prog_cnt;
}

static const enum bpf_attach_type hooks[]
    = { BPF_CGROUP_INET_INGRESS,  BPF_CGROUP_INET_EGRESS,
        BPF_CGROUP_INET4_CONNECT, BPF_CGROUP_INET6_CONNECT,
        BPF_CGROUP_UDP4_SENDMSG,  BPF_CGROUP_UDP6_SENDMSG };

static void
test_attach_table (void **state)
{
  cleanup_close int cg = -1;
  uint32_t id[6];

  need_root_and_cgroup2 ();
  make_cgroup ();
  attach (false);
  cg = open (cg_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (int i = 0; i < 6; i++)
    assert_int_equal (query (cg, hooks[i], &id[i]), 1);
  /* One skb program serves both directions in strict mode. */
  assert_int_equal (id[0], id[1]);
  assert_int_not_equal (id[2], id[4]);

  attach (true);
  for (int i = 0; i < 6; i++)
    assert_int_equal (query (cg, hooks[i], NULL), 2);
}

static void
test_attach_rolls_back (void **state)
{
  struct netguard_rules strict = { 0 };
  struct moat_error *err = NULL;
  cleanup_close int cg = -1, root = -1;
  int prog;
  union bpf_attr attr;

  need_root_and_cgroup2 ();
  assert_int_equal (netguard_attach (-1, &strict, NULL, &err), -EINVAL);
  moat_error_free (&err);
  root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  assert_true (netguard_attach (root, &strict, NULL, &err) < 0);
  moat_error_free (&err);

  /* An exclusive program on the last hook makes our attach fail there. */
  make_cgroup ();
  cg = open (cg_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  prog = load (NETGUARD_PROG_SENDMSG6, true, NULL, 0);
  memset (&attr, 0, sizeof (attr));
  attr.target_fd = (uint32_t)cg;
  attr.attach_bpf_fd = (uint32_t)prog;
  attr.attach_type = BPF_CGROUP_UDP6_SENDMSG;
  assert_int_equal (bpf_sys (BPF_PROG_ATTACH, &attr), 0);
  close (prog);

  assert_true (netguard_attach (cg, &strict, NULL, &err) < 0);
  assert_non_null (strstr (err->msg, "network guard: attaching the sendmsg6"));
  moat_error_free (&err);
  for (int i = 0; i < 5; i++)
    assert_int_equal (query (cg, hooks[i], NULL), 0);
  assert_int_equal (query (cg, BPF_CGROUP_UDP6_SENDMSG, NULL), 1);
}

/* Not a test of speed (no thresholds): prints what attaching costs. */
static void
test_attach_cost (void **state)
{
  enum
  {
    RUNS = 21
  };
  double us[2][RUNS];

  need_root_and_cgroup2 ();
  for (int mode = 0; mode < 2; mode++)
    {
      for (int i = 0; i < RUNS; i++)
        {
          struct timespec a, b;
          make_cgroup ();
          clock_gettime (CLOCK_MONOTONIC, &a);
          attach (mode == 1);
          clock_gettime (CLOCK_MONOTONIC, &b);
          us[mode][i] = (double)(b.tv_sec - a.tv_sec) * 1e6
                        + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
          assert_int_equal (rmdir (cg_dir), 0);
          cg_dir[0] = '\0';
        }
      for (int i = 1; i < RUNS; i++)
        for (int j = i; j > 0 && us[mode][j] < us[mode][j - 1]; j--)
          {
            double t = us[mode][j];
            us[mode][j] = us[mode][j - 1];
            us[mode][j - 1] = t;
          }
      print_message ("netguard_attach (%s, 2 deny CIDRs): median %.0f us, "
                     "min %.0f us, max %.0f us over %d runs\n",
                     mode ? "egress" : "strict", us[mode][RUNS / 2],
                     us[mode][0], us[mode][RUNS - 1], RUNS);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_cidr_parse_table),
    cmocka_unit_test (test_rules_checked),
    cmocka_unit_test (test_skb_loopback_program),
    cmocka_unit_test (test_strict_deny_overlap),
    cmocka_unit_test (test_skb_egress_programs),
    cmocka_unit_test_teardown (test_loopback_up, teardown),
    cmocka_unit_test_teardown (test_strict_loopback_only, teardown),
    cmocka_unit_test_teardown (test_attach_table, teardown),
    cmocka_unit_test_teardown (test_attach_rolls_back, teardown),
    cmocka_unit_test_teardown (test_attach_cost, teardown),
  };
  return cmocka_run_group_tests (tests, setup_root, NULL);
}
