/* The egress lists (issue 11): CIDR[:port] parsing, the IPv6 embeddings,
 * the operator's egress_allow / egress_allow_private / egress_deny, the
 * run.moat.egress-allow annotation that narrows them, the netguard rules a
 * profile makes, resolv.conf parsing, the egress skb programs on crafted
 * packets (BPF_PROG_TEST_RUN, root), and the largest lists through the
 * verifier. */
/* The harness's process helpers serve test_netguard*.c; this file runs
 * programs on packets and builds lists only. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "netguard_harness.h"
#include "netguard_skb.h"
#include <inttypes.h>

#include "../../policy/profile.h"
#include "../../runtime/netguard_dns.h"

/* ---- parsing ---- */

static void
test_cidr_port_parse (void **state)
{
  static const struct
  {
    const char *in;
    const char *out; /* NULL: refused */
  } cases[] = {
    { "10.0.0.0/8", "10.0.0.0/8" },
    { "10.0.0.0/8:443", "10.0.0.0/8:443" },
    { "1.2.3.4:53", "1.2.3.4/32:53" },
    { "[2001:db8::/32]:443", "[2001:db8::/32]:443" },
    { "[2001:db8::1]", "2001:db8::1/128" },
    { "2001:db8::/32", "2001:db8::/32" },
    { "fd00::1:53", "fd00::1:53/128" }, /* an IPv6 address, no port */
    { "10.0.0.0/8:0", NULL },
    { "10.0.0.0/8:65536", NULL },
    { "10.0.0.0/8:65535", "10.0.0.0/8:65535" },
    { "255.255.255.255:65535", "255.255.255.255/32:65535" },
    { "0.0.0.0/0", "0.0.0.0/0" },
    { "[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:65535",
      "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128]:65535" },
    { "10.0.0.0/8:000443", NULL },
    { "10.0.0.0/8:-1", NULL },
    { "10.0.0.0/8:+1", NULL },
    { "10.0.0.0/8:", NULL },
    { "10.0.0.0/8:1:2", NULL },
    { "[10.0.0.0/8]:1", NULL },
    { "[2001:db8::/32]443", NULL },
    { "[2001:db8::/32", NULL },
    { "", NULL },
  };

  for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    {
      struct cidr c;
      int r = cidr_port_parse (cases[i].in, &c);
      char *text;
      if (cases[i].out == NULL)
        {
          if (r != -EINVAL)
            fail_msg ("\"%s\" accepted", cases[i].in);
          continue;
        }
      if (r != 0)
        fail_msg ("\"%s\" refused", cases[i].in);
      text = cidr_to_string (&c);
      assert_string_equal (text, cases[i].out);
      free (text);
    }
}

static struct cidr
cp (const char *s)
{
  struct cidr c;
  assert_int_equal (cidr_port_parse (s, &c), 0);
  return c;
}

static void
test_embeddings (void **state)
{
  static const char *const want[] = {
    "::ffff:169.254.0.0/112", "::169.254.0.0/112", "64:ff9b::a9fe:0/112",
    "2002:a9fe::/32", /* bits 16..47 hold the IPv4 address */
  };
  struct cidr v4 = cp ("169.254.0.0/16"), e[CIDR_V6_EMBEDDINGS];

  cidr_v6_embeddings (&v4, e);
  for (int k = 0; k < CIDR_V6_EMBEDDINGS; k++)
    {
      char *text = cidr_to_string (&e[k]);
      assert_string_equal (text, want[k]);
      free (text);
    }
  /* 168.63.129.16 in 6to4: 2002:a83f:8110::/48 */
  v4 = cp ("168.63.129.16");
  cidr_v6_embeddings (&v4, e);
  {
    char *text = cidr_to_string (&e[3]);
    assert_string_equal (text, "2002:a83f:8110::/48");
    free (text);
  }
}

static void
test_contains (void **state)
{
  struct cidr net = cp ("10.0.0.0/8"), net443 = cp ("10.0.0.0/8:443");
  struct cidr host = cp ("10.1.2.3"), host443 = cp ("10.1.2.3:443");

  assert_true (cidr_contains (&net, &host));
  assert_true (cidr_contains (&net, &host443));
  assert_true (cidr_contains (&net443, &host443));
  assert_false (cidr_contains (&net443, &host)); /* any port > one port */
  assert_false (cidr_contains (&host, &net));
  assert_false (cidr_contains (&net, &(struct cidr){ .family = AF_INET6 }));
}

/* The audit line's digest names the whole list: order, port, prefix and
 * family all count. */
static void
test_list_digest (void **state)
{
  struct cidr a[] = { cp ("10.0.0.0/8"), cp ("10.0.0.0/8:443") };
  struct cidr b[] = { cp ("10.0.0.0/8:443"), cp ("10.0.0.0/8") };
  struct cidr c[] = { cp ("10.0.0.0/8"), cp ("10.0.0.0/8:444") };
  struct cidr d[] = { cp ("10.0.0.0/8"), cp ("10.0.0.0/9:443") };
  char da[CIDR_LIST_DIGEST_LEN], da2[CIDR_LIST_DIGEST_LEN];
  char db[CIDR_LIST_DIGEST_LEN], dc[CIDR_LIST_DIGEST_LEN];
  char dd[CIDR_LIST_DIGEST_LEN], d1[CIDR_LIST_DIGEST_LEN];

  cidr_list_digest (a, 2, da);
  cidr_list_digest (a, 2, da2);
  cidr_list_digest (b, 2, db);
  cidr_list_digest (c, 2, dc);
  cidr_list_digest (d, 2, dd);
  cidr_list_digest (a, 1, d1);
  assert_int_equal (strlen (da), CIDR_LIST_DIGEST_LEN - 1);
  assert_int_equal (strncmp (da, "words64:", 8), 0);
  assert_string_equal (da, da2);
  assert_string_not_equal (da, db);
  assert_string_not_equal (da, dc);
  assert_string_not_equal (da, dd);
  assert_string_not_equal (da, d1);
}

/* Hashed in pieces, a long list has the digest of its entries packed
 * whole (the audit lines of earlier moats stay comparable). */
static void
test_list_digest_in_pieces (void **state)
{
  enum
  {
    N = 1000
  };
  cleanup_free struct cidr *list = xcalloc (N, sizeof (*list));
  cleanup_free uint8_t *packed = xcalloc (N, 20);
  char got[CIDR_LIST_DIGEST_LEN], want[CIDR_LIST_DIGEST_LEN];

  (void)state;
  for (size_t i = 0; i < N; i++)
    {
      uint8_t *e = packed + i * 20;
      list[i] = cp (i % 3 ? "[2001:db8::/32]:443" : "203.0.113.0/24");
      list[i].addr[2] = (uint8_t)i;
      list[i].addr[3] = (uint8_t)(i >> 8);
      e[0] = list[i].family == AF_INET6 ? 6 : 4;
      e[1] = list[i].prefix;
      e[2] = (uint8_t)(list[i].port >> 8);
      e[3] = (uint8_t)list[i].port;
      memcpy (e + 4, list[i].addr, 16);
    }
  cidr_list_digest (list, N, got);
  snprintf (want, sizeof (want), "words64:%016" PRIx64,
            hash64_words (packed, N * 20));
  assert_string_equal (got, want);
}

static void
test_resolv_conf (void **state)
{
  static const char *text
      = "# generated\n"
        "search example.com\n"
        "nameserver 10.96.0.10\n"
        "  nameserver\t127.0.0.11  \n"
        "nameserver fe80::1%eth0\n"
        "nameserver not-an-address\n"
        "nameserver 10.0.0.0/8\n"
        "nameserver 192.0.2.53\n"; /* a fourth: libc reads three */
  struct cidr ns[NETGUARD_MAX_DNS];
  const char *want[] = { "10.96.0.10/32", "127.0.0.11/32", "fe80::1/128" };
  size_t n;

  netguard_parse_nameservers (text, ns, NETGUARD_MAX_DNS, &n);
  assert_int_equal (n, 3);
  for (size_t i = 0; i < n; i++)
    {
      char *t = cidr_to_string (&ns[i]);
      assert_string_equal (t, want[i]);
      free (t);
    }
  netguard_parse_nameservers ("", ns, NETGUARD_MAX_DNS, &n);
  assert_int_equal (n, 0);
}

/* ---- the operator config and the annotation ---- */

static struct profile *
load_egress (const char *text, char **ret_msg)
{
  char path[] = "/tmp/moat-test-lists-XXXXXX";
  int fd = mkstemp (path);
  struct profile *p = NULL;
  struct moat_error *err = NULL;

  assert_true (fd >= 0);
  assert_int_equal (write (fd, text, strlen (text)), (ssize_t)strlen (text));
  close (fd);
  *ret_msg = NULL;
  if (profile_load (path, "egress", &p, NULL, &err) < 0)
    {
      const char *m = strstr (err->msg, ".json: ");
      *ret_msg = xstrdup (m                         ? m + 7
                          : strstr (err->msg, path) ? err->msg
                                                    : err->msg);
      if (strncmp (err->msg, path, strlen (path)) == 0)
        {
          free (*ret_msg);
          *ret_msg = xstrdup (err->msg + strlen (path) + 2);
        }
      moat_error_free (&err);
    }
  unlink (path);
  return p;
}

static void
expect_config_error (const char *text, const char *want)
{
  char *msg;
  struct profile *p = load_egress (text, &msg);
  if (p != NULL)
    fail_msg ("accepted: %s", text);
  assert_non_null (msg);
  if (strstr (msg, want) == NULL)
    fail_msg ("%s: got \"%s\", want \"%s\"", text, msg, want);
  free (msg);
}

/* N distinct IPv4 addresses (198.x.y.z), each between BEFORE... and
 * ...AFTER, separated by SEP. */
static char *
address_list (const char *before, const char *sep, const char *after, int n)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&text, &len);

  assert_non_null (f);
  fputs (before, f);
  for (int i = 0; i < n; i++)
    fprintf (f, "%s198.%d.%d.%d", i ? sep : "", (i >> 16) & 255, (i >> 8) & 255,
             i & 255);
  fputs (after, f);
  fclose (f);
  return text;
}

static void
test_config_lists (void **state)
{
  char *msg;
  struct profile *p;
  struct netguard_rules r;
  struct cidr dns = cp ("10.96.0.10");

  p = load_egress ("{}", &msg);
  assert_non_null (p);
  profile_netguard_rules (p, &dns, 1, &r);
  assert_true (r.egress);
  assert_false (r.allowlist);
  assert_int_equal (r.n_deny, 4);
  assert_int_equal (r.n_allow, 0);
  assert_int_equal (r.n_dns, 1);
  assert_true (r.n_private >= 10);
  profile_free (p);

  p = load_egress ("{\"egress_allow\":[\"198.51.100.0/24:443\"],"
                   "\"egress_deny\":[\"203.0.113.0/24\"]}",
                   &msg);
  assert_non_null (p);
  profile_netguard_rules (p, NULL, 0, &r);
  assert_true (r.allowlist);
  assert_int_equal (r.n_allow, 1);
  assert_int_equal (r.allow[0].port, 443);
  assert_int_equal (r.n_deny, 5);
  assert_int_equal (r.n_private, 0); /* an allowlist needs none */
  profile_free (p);

  /* profiles.egress replaces the top-level list. */
  p = load_egress ("{\"egress_allow\":[\"198.51.100.0/24\"],"
                   "\"profiles\":{\"egress\":{\"egress_allow_private\":"
                   "[\"10.1.0.0/16\"]}}}",
                   &msg);
  assert_non_null (p);
  profile_netguard_rules (p, NULL, 0, &r);
  assert_false (r.allowlist);
  assert_int_equal (r.n_allow, 1);
  assert_true (r.n_private >= 10);
  profile_free (p);

  /* strict: no list reaches the programs. */
  {
    struct moat_error *err = NULL;
    char path[] = "/tmp/moat-test-lists-XXXXXX";
    int fd = mkstemp (path);
    const char *t = "{\"egress_allow\":[\"198.51.100.0/24\"]}";
    assert_int_equal (write (fd, t, strlen (t)), (ssize_t)strlen (t));
    close (fd);
    assert_int_equal (profile_load (path, "strict", &p, NULL, &err), 0);
    profile_netguard_rules (p, &dns, 1, &r);
    assert_false (r.egress);
    assert_int_equal (r.n_allow + r.n_dns + r.n_private, 0);
    profile_free (p);
    unlink (path);
  }

  expect_config_error ("{\"egress_allow\":[\"1.2.3.4\"],"
                       "\"egress_allow_private\":[\"10.0.0.0/8\"]}",
                       "give one");
  expect_config_error ("{\"egress_allow\":[\"169.254.169.254:80\"]}",
                       "egress_allow[0]: 169.254.169.254:80 is a cloud "
                       "metadata address");
  expect_config_error ("{\"egress_allow_private\":[\"[::ffff:a9fe:a9fe]\"]}",
                       "is a cloud metadata address");
  expect_config_error ("{\"egress_allow\":[\"10.0.0.0/8:http\"]}",
                       "egress_allow[0]: expected \"CIDR\" or \"CIDR:port\"");
  expect_config_error ("{\"egress_allow\":\"10.0.0.0/8\"}",
                       "egress_allow: expected an array");

  /* Bounds: one past each is an error naming it, never a shorter list. */
  {
    char *full = address_list ("{\"egress_allow\":[\"", "\",\"", "\"]}",
                               NETGUARD_MAX_ALLOW + 1);
    char *want = xasprintf ("egress_allow: %d entries, at most %d",
                            NETGUARD_MAX_ALLOW + 1, NETGUARD_MAX_ALLOW);
    expect_config_error (full, want);
    free (full);
    free (want);
  }
  {
    /* With the four built-in ones, one too many. */
    char *full = address_list ("{\"egress_deny\":[\"", "\",\"", "\"]}",
                               NETGUARD_MAX_DENY - 3);
    char *want = xasprintf ("too many denied CIDRs (%d with the built-in "
                            "ones, at most %d)",
                            NETGUARD_MAX_DENY + 1, NETGUARD_MAX_DENY);
    expect_config_error (full, want);
    free (full);
    free (want);
  }
}

static const struct override *
find_ignored (const struct override_list *ov, const char *asked)
{
  for (size_t i = 0; i < ov->n; i++)
    if (ov->v[i].kind == OVERRIDE_IGNORED && ov->v[i].asked
        && strcmp (ov->v[i].asked, asked) == 0)
      return &ov->v[i];
  return NULL;
}

static void
narrow (const char *config, const char *annotation, const char *want_allow,
        const char *const *ignored)
{
  char *msg;
  struct profile *p = load_egress (config, &msg), *e = NULL;
  struct spec_kv kv = { "run.moat.egress-allow", (char *)annotation };
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  struct netguard_rules r;
  char *text = NULL;

  assert_non_null (p);
  assert_int_equal (profile_effective (p, &kv, 1, &e, &ov, &err), 0);
  profile_netguard_rules (e, NULL, 0, &r);
  assert_true (r.allowlist);
  text = xstrdup ("");
  for (size_t i = 0; i < r.n_allow; i++)
    {
      char *c = cidr_to_string (&r.allow[i]);
      char *next = xasprintf ("%s%s%s", text, i ? "," : "", c);
      free (text);
      free (c);
      text = next;
    }
  if (strcmp (text, want_allow) != 0)
    fail_msg ("%s with %s: allow \"%s\", want \"%s\"", config, annotation, text,
              want_allow);
  for (size_t i = 0; ignored && ignored[i]; i++)
    if (find_ignored (&ov, ignored[i]) == NULL)
      fail_msg ("%s with %s: %s not ignored", config, annotation, ignored[i]);
  free (text);
  override_list_clear (&ov);
  profile_free (e);
  profile_free (p);
}

static void
test_annotation_narrows (void **state)
{
  static const char *const plain_ignored[]
      = { "10.0.0.0/8",       "0.0.0.0/0", "169.254.169.254",
          "[64:ff9b::a00:1]", "nonsense",  NULL };
  static const char *const list_ignored[]
      = { "198.51.100.0/24", "198.51.100.7:80", "203.0.113.1", NULL };
  static const char *const private_ignored[] = { "10.2.0.0/16", NULL };

  /* Plain egress: public entries are taken, private or metadata ones not. */
  narrow ("{}",
          "198.51.100.7:443, 10.0.0.0/8,0.0.0.0/0 169.254.169.254,"
          "[64:ff9b::a00:1],nonsense,[2001:db8::/32]:443",
          "198.51.100.7/32:443,[2001:db8::/32]:443", plain_ignored);
  /* An allowlist: only what lies inside it (and its port). */
  narrow ("{\"egress_allow\":[\"198.51.100.0/25:443\",\"10.1.0.0/16\"]}",
          "198.51.100.0/24,198.51.100.7:443,198.51.100.7:80,10.1.2.3:5432,"
          "203.0.113.1",
          "198.51.100.7/32:443,10.1.2.3/32:5432", list_ignored);
  /* egress_allow_private: its private entries can be named. */
  narrow ("{\"egress_allow_private\":[\"10.1.0.0/16\"]}",
          "10.1.2.3:5432,10.2.0.0/16", "10.1.2.3/32:5432", private_ignored);
  /* Nothing valid: an empty allowlist (DNS and loopback only). */
  narrow ("{}", "10.0.0.0/8", "", NULL);
}

static void
test_annotation_bound (void **state)
{
  char *msg, *value = address_list ("", ",", "", NETGUARD_MAX_ALLOW + 1);
  struct profile *p = load_egress ("{}", &msg), *e = NULL;
  struct moat_error *err = NULL;
  struct spec_kv kv = { "run.moat.egress-allow", NULL };
  char *want = xasprintf ("more than %d entries", NETGUARD_MAX_ALLOW);

  kv.value = value;
  assert_int_equal (profile_effective (p, &kv, 1, &e, NULL, &err), -1);
  assert_non_null (strstr (err->msg, want));
  free (want);
  moat_error_free (&err);
  free (value);
  profile_free (p);
}

/* ---- the programs ---- */

static void
test_skb_egress_lists (void **state)
{
  char *msg;
  struct profile *p
      = load_egress ("{\"egress_allow_private\":[\"10.1.0.0/16\"]}", &msg);
  struct cidr dns = cp ("10.96.0.10");
  struct netguard_rules r;
  static const struct packet_case out[] = {
    { "10.203.0.2", "93.184.216.34", ON_OTHER, 1 },
    { "10.203.0.2", "10.96.0.10", ON_OTHER, 1 },  /* the nameserver */
    { "10.203.0.2", "10.1.2.3", ON_OTHER, 1 },    /* allowed private */
    { "10.203.0.2", "10.2.0.1", ON_OTHER, 0 },    /* private */
    { "10.203.0.2", "192.168.1.1", ON_OTHER, 0 }, /* private */
    { "10.203.0.2", "100.100.100.200", ON_OTHER, 0 },
    { "10.203.0.2", "168.63.129.16", ON_OTHER, 0 },
    { "10.203.0.2", "224.0.0.251", ON_OTHER, 0 },
    { "10.203.0.2", "255.255.255.255", ON_OTHER, 0 },
    { "10.203.0.2", "10.2.0.1", 1, 1 },        /* over lo: in the namespace */
    { "10.203.0.2", "169.254.169.254", 1, 0 }, /* G2 even over lo */
    { "2001:db8::1", "2001:db8::2", ON_OTHER, 1 },
    { "2001:db8::1", "64:ff9b::a9fe:a9fe", ON_OTHER, 0 },
    { "2001:db8::1", "2002:a9fe:a9fe::1", ON_OTHER, 0 },
    { "2001:db8::1", "::a9fe:a9fe", ON_OTHER, 0 },
    { "2001:db8::1", "64:ff9b::a02:1", ON_OTHER, 0 },     /* NAT64 10.2.0.1 */
    { "2001:db8::1", "64:ff9b::5db8:d822", ON_OTHER, 1 }, /* public */
    { "2001:db8::1", "2002:a02:1::1", ON_OTHER, 0 },
    { "2001:db8::1", "fd12::1", ON_OTHER, 0 },
    { "2001:db8::1", "fe80::1", ON_OTHER, 0 },
    { "2001:db8::1", "ff02::1", ON_OTHER, 0 },
  };
  /* An allowlist: only its entries (ports are the sock_addr programs'). */
  static const struct packet_case listed[] = {
    { "10.203.0.2", "198.51.100.7", ON_OTHER, 1 },
    { "10.203.0.2", "198.51.100.8", ON_OTHER, 0 },
    { "10.203.0.2", "10.96.0.10", ON_OTHER, 1 },
    { "10.203.0.2", "93.184.216.34", ON_OTHER, 0 },
    { "2001:db8::1", "2001:db8::2", ON_OTHER, 0 },
  };
  static const struct packet_case in[] = {
    { "93.184.216.34", "10.203.0.2", ON_OTHER, 1 },
    { "10.96.0.10", "10.203.0.2", ON_OTHER, 1 },
    { "10.2.0.1", "10.203.0.2", ON_OTHER, 0 },
    { "168.63.129.16", "10.203.0.2", ON_OTHER, 0 },
  };
  static const struct packet_case routed[] = {
    { "2001:db8::1", "2001:db8::2", ON_OTHER, 0 },
  };
  struct cidr allow = cp ("198.51.100.7:443");

  if (geteuid () != 0)
    skip ();
  assert_non_null (p);
  profile_netguard_rules (p, &dns, 1, &r);
  CHECK_PACKETS (load_rules (NETGUARD_PROG_SKB_EGRESS, &r), out);
  CHECK_PACKETS (load_rules (NETGUARD_PROG_SKB_INGRESS, &r), in);
  /* A segment routing header would take the packet on to addresses no
   * check sees: dropped whatever its destination. */
  skb_ip6_next = IPPROTO_ROUTING;
  CHECK_PACKETS (load_rules (NETGUARD_PROG_SKB_EGRESS, &r), routed);
  skb_ip6_next = IPPROTO_UDP;
  r.allowlist = true;
  r.allow = &allow;
  r.n_allow = 1;
  r.private_nets = NULL;
  r.n_private = 0;
  CHECK_PACKETS (load_rules (NETGUARD_PROG_SKB_EGRESS, &r), listed);
  profile_free (p);
}

/* Lists of 10,000 entries each (an operator's allowlist of a CDN's
 * ranges, a denylist of a cloud's internal ranges) fill the maps and
 * every program loads with them; the programs are as long as with no
 * list at all; one entry past a bound is E2BIG. */
#define LONG_LIST 10000
static void
test_long_lists_load (void **state)
{
  static struct cidr deny[NETGUARD_MAX_DENY + 1];
  static struct cidr allow[NETGUARD_MAX_ALLOW + 1];
  static struct cidr dns[NETGUARD_MAX_DNS];
  struct netguard_rules r = { .egress = true,
                              .deny = deny,
                              .n_deny = LONG_LIST,
                              .allow = allow,
                              .n_allow = LONG_LIST,
                              .dns = dns,
                              .n_dns = NETGUARD_MAX_DNS,
                              .allowlist = true };
  struct netguard_rules none = { .egress = true, .allowlist = true };
  struct moat_error *err = NULL;
  struct bpf_insn *insns = NULL;
  size_t n, n_none;

  for (int i = 0; i <= NETGUARD_MAX_DENY; i++)
    deny[i] = (struct cidr){ .family = i % 4 ? AF_INET : AF_INET6,
                             .addr = { 203, (uint8_t)(i >> 16),
                                       (uint8_t)(i >> 8), (uint8_t)i },
                             .prefix = (uint8_t)(i % 4 ? 32 - i % 3 : 64) };
  for (int i = 0; i <= NETGUARD_MAX_ALLOW; i++)
    allow[i] = (struct cidr){ .family = AF_INET,
                              .addr = { 198, (uint8_t)(i >> 16),
                                        (uint8_t)(i >> 8), (uint8_t)i },
                              .prefix = (uint8_t)(24 + i % 9),
                              .port = (uint16_t)(i % 2 ? 443 + i % 7 : 0) };
  for (int i = 0; i < NETGUARD_MAX_DNS; i++)
    dns[i] = (struct cidr){ .family = AF_INET,
                            .addr = { 10, 96, 0, (uint8_t)(10 + i) },
                            .prefix = 32 };

  for (int kind = NETGUARD_PROG_SKB_EGRESS; kind <= NETGUARD_PROG_SENDMSG6;
       kind++)
    {
      assert_int_equal (netguard_bpf_build ((enum netguard_prog)kind, &r,
                                            &no_maps, &insns, &n, &err),
                        0);
      free (insns);
      assert_int_equal (netguard_bpf_build ((enum netguard_prog)kind, &none,
                                            &no_maps, &insns, &n_none, &err),
                        0);
      free (insns);
      print_message ("program %d: %zu instructions\n", kind, n);
      assert_int_equal (n, n_none);
    }
  if (geteuid () == 0)
    {
      struct netguard_maps m;
      struct timespec t0, t1;

      clock_gettime (CLOCK_MONOTONIC, &t0);
      assert_int_equal (netguard_maps_create (&r, &m, &err), 0);
      clock_gettime (CLOCK_MONOTONIC, &t1);
      print_message ("maps of %d + %d entries filled in %.1f ms\n", LONG_LIST,
                     LONG_LIST,
                     (double)(t1.tv_sec - t0.tv_sec) * 1e3
                         + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
      for (int kind = NETGUARD_PROG_SKB_EGRESS; kind <= NETGUARD_PROG_SENDMSG6;
           kind++)
        {
          int fd = -1;
          if (netguard_bpf_load ((enum netguard_prog)kind, &r, &m, &fd, &err)
              < 0)
            fail_msg ("load: %s", err->msg);
          close (fd);
        }
      netguard_maps_close (&m);
    }

  r.n_allow = NETGUARD_MAX_ALLOW + 1;
  assert_int_equal (netguard_bpf_build (NETGUARD_PROG_CONNECT6, &r, &no_maps,
                                        &insns, &n, &err),
                    -E2BIG);
  assert_non_null (strstr (err->msg, "too many allowed CIDRs"));
  moat_error_free (&err);
  r.n_allow = LONG_LIST;
  r.n_deny = NETGUARD_MAX_DENY + 1;
  assert_int_equal (netguard_bpf_build (NETGUARD_PROG_SKB_EGRESS, &r, &no_maps,
                                        &insns, &n, &err),
                    -E2BIG);
  moat_error_free (&err);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_cidr_port_parse),
    cmocka_unit_test (test_embeddings),
    cmocka_unit_test (test_contains),
    cmocka_unit_test (test_list_digest),
    cmocka_unit_test (test_list_digest_in_pieces),
    cmocka_unit_test (test_resolv_conf),
    cmocka_unit_test (test_config_lists),
    cmocka_unit_test (test_annotation_narrows),
    cmocka_unit_test (test_annotation_bound),
    cmocka_unit_test (test_skb_egress_lists),
    cmocka_unit_test (test_long_lists_load),
  };
  return cmocka_run_group_tests (tests, setup_root, NULL);
}
