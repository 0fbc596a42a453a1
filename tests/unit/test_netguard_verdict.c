/* The loaded network guard programs against a reference: for random
 * lists with an entry of every prefix length (/0 to /32, /0 to /128,
 * addresses with high bytes set), the skb programs' verdict on packets to
 * and from addresses in, at the edges of, just outside and far from every
 * entry (and the same addresses byte-reversed, and their IPv6 embeddings)
 * must be what reference_verdict, written from SPEC.md's order of
 * decisions and not from the programs, says. Runs on crafted packets
 * (BPF_PROG_TEST_RUN), so it needs root and a kernel that hands
 * cgroup_skb test runs their packet (netguard_skb.h). */
#include <arpa/inet.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_ether.h>

#include <cmocka.h>

#include "../../runtime/bpf/bpf.h"
#include "../../runtime/netguard/netguard_bpf.h"
#include "../../lib/util.h"

#include "netguard_skb.h"

/* ---- the reference ---- */

static bool
in_cidr (const struct cidr *c, int family, const uint8_t *addr)
{
  if (c->family != family)
    return false;
  for (unsigned bit = 0; bit < c->prefix; bit++)
    if ((c->addr[bit / 8] ^ addr[bit / 8]) & (0x80 >> (bit % 8)))
      return false;
  return true;
}

static bool
in_list (const struct cidr *list, size_t n, int family, const uint8_t *addr)
{
  for (size_t i = 0; i < n; i++)
    if (in_cidr (&list[i], family, addr))
      return true;
  return false;
}

/* The IPv4 address an IPv6 one carries (mapped, compatible, NAT64,
 * 6to4), if any. */
static bool
embedded_v4 (const uint8_t *a, uint8_t ret[4])
{
  static const uint8_t zero[10] = { 0 };
  static const uint8_t nat64[4] = { 0x00, 0x64, 0xff, 0x9b };

  if (a[0] == 0x20 && a[1] == 0x02)
    {
      memcpy (ret, a + 2, 4);
      return true;
    }
  if (memcmp (a + 4, zero, 6) != 0)
    return false;
  if ((memcmp (a, zero, 4) == 0 || memcmp (a, nat64, 4) == 0)
      && (memcmp (a + 10, zero, 2) == 0
          || (memcmp (a, zero, 4) == 0 && a[10] == 0xff && a[11] == 0xff)))
    {
      memcpy (ret, a + 12, 4);
      return true;
    }
  return false;
}

static bool
listed (const struct cidr *list, size_t n, int family, const uint8_t *addr,
        bool with_embedded)
{
  uint8_t v4[4];
  if (in_list (list, n, family, addr))
    return true;
  return with_embedded && family == AF_INET6 && embedded_v4 (addr, v4)
         && in_list (list, n, AF_INET, v4);
}

static bool
loopback (int family, const uint8_t *a)
{
  static const uint8_t lo6[16] = { [15] = 1 };
  return family == AF_INET ? a[0] == 127 : memcmp (a, lo6, 16) == 0;
}

/* SPEC.md, for a packet's peer PEER not on lo: refused if denied (or
 * embedding a denied IPv4 address); under strict, refused unless
 * loopback; under egress passed if allowed or a nameserver (the skb
 * programs leave ports to connect and sendmsg), refused if an allowlist
 * did not list it, refused if private (or embedding a private IPv4
 * address), else passed. */
static int
reference_verdict (const struct netguard_rules *r, int family,
                   const uint8_t *peer)
{
  if (listed (r->deny, r->n_deny, family, peer, true))
    return 0;
  if (!r->egress)
    return loopback (family, peer);
  if (listed (r->allow, r->n_allow, family, peer, false)
      || listed (r->dns, r->n_dns, family, peer, false))
    return 1;
  if (r->allowlist)
    return 0;
  return !listed (r->private_nets, r->n_private, family, peer, true);
}

/* ---- random lists and addresses ---- */

static uint64_t rng_state;

static uint32_t
rng (void)
{
  /* xorshift64*: reproducible from the seed the test prints. */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 2685821657736338717ULL) >> 32);
}

static void
random_bytes (uint8_t *b, size_t n)
{
  for (size_t i = 0; i < n; i++)
    b[i] = (uint8_t)rng ();
}

static struct cidr
random_cidr (int family, unsigned prefix)
{
  struct cidr c = { .family = family, .prefix = (uint8_t)prefix };
  unsigned max = family == AF_INET ? 32 : 128;
  random_bytes (c.addr, max / 8);
  /* High bytes set in about half of them. */
  if (rng () % 2)
    c.addr[0] |= 0x80;
  for (unsigned bit = prefix; bit < max; bit++)
    c.addr[bit / 8] &= (uint8_t) ~(0x80 >> (bit % 8));
  return c;
}

struct lists
{
  struct cidr deny[256], allow[256], dns[NETGUARD_MAX_DNS],
      priv[NETGUARD_MAX_PRIVATE];
  struct netguard_rules r;
};

static void
add (struct cidr *list, size_t *n, size_t max, struct cidr c)
{
  if (*n < max)
    list[(*n)++] = c;
}

/* An entry of every prefix length of both families, each in a list
 * picked at random; short prefixes never in deny (a /0 denied would
 * leave nothing to tell apart), and the built-in G2 and private ranges
 * as the profile has them. */
static void
make_lists (struct lists *l, bool egress, bool allowlist)
{
  static const char *const g2[] = { "169.254.0.0/16", "100.100.100.200/32",
                                    "168.63.129.16/32", "fd00:ec2::254/128" };
  static const char *const priv[]
      = { "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "192.168.0.0/16",
          "fc00::/7",   "fe80::/10",     "::/96" };
  struct netguard_rules *r = &l->r;

  memset (l, 0, sizeof (*l));
  *r = (struct netguard_rules){ .egress = egress,
                                .allowlist = allowlist,
                                .deny = l->deny,
                                .allow = l->allow,
                                .dns = l->dns,
                                .private_nets = l->priv };
  for (size_t i = 0; i < sizeof (g2) / sizeof (g2[0]); i++)
    {
      assert_int_equal (cidr_parse (g2[i], &l->deny[r->n_deny]), 0);
      r->n_deny++;
    }
  if (egress && !allowlist)
    for (size_t i = 0; i < sizeof (priv) / sizeof (priv[0]); i++)
      {
        assert_int_equal (cidr_parse (priv[i], &l->priv[r->n_private]), 0);
        r->n_private++;
      }
  for (int family = AF_INET; family != 0;
       family = family == AF_INET ? AF_INET6 : 0)
    {
      unsigned max = family == AF_INET ? 32 : 128;
      for (unsigned prefix = 0; prefix <= max; prefix++)
        {
          struct cidr c = random_cidr (family, prefix);
          unsigned pick = egress ? rng () % 4 : 0;
          if (pick == 0 && prefix < 8)
            pick = 1;
          if (!egress && prefix < 8)
            continue;
          switch (pick)
            {
            case 0:
              add (l->deny, &r->n_deny, 256, c);
              break;
            case 1:
              /* Half of them with a port: the skb programs pass either. */
              c.port = rng () % 2 ? 443 : 0;
              add (l->allow, &r->n_allow, 256, c);
              break;
            case 2:
              if (r->n_dns < NETGUARD_MAX_DNS && prefix == max)
                {
                  add (l->dns, &r->n_dns, NETGUARD_MAX_DNS, c);
                  break;
                }
              /* fall through */
            default:
              if (!allowlist)
                add (l->priv, &r->n_private, NETGUARD_MAX_PRIVATE, c);
              else
                add (l->allow, &r->n_allow, 256, c);
              break;
            }
        }
    }
}

/* Addresses around C: its first and last, one before and after each,
 * and random ones inside. */
static size_t
addresses_around (const struct cidr *c, uint8_t out[][16])
{
  unsigned max = c->family == AF_INET ? 32 : 128, bytes = max / 8;
  size_t n = 0;

  memcpy (out[n++], c->addr, bytes); /* first */
  memcpy (out[n], c->addr, bytes);   /* last */
  for (unsigned bit = c->prefix; bit < max; bit++)
    out[n][bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
  n++;
  /* One before the first, one past the last (with wrap-around). */
  memcpy (out[n], out[0], bytes);
  for (int i = (int)bytes - 1; i >= 0 && out[n][i]-- == 0; i--)
    ;
  n++;
  memcpy (out[n], out[1], bytes);
  for (int i = (int)bytes - 1; i >= 0 && ++out[n][i] == 0; i--)
    ;
  n++;
  for (int k = 0; k < 3; k++)
    {
      uint8_t r[16];
      random_bytes (r, bytes);
      memcpy (out[n], c->addr, bytes);
      for (unsigned bit = c->prefix; bit < max; bit++)
        if (r[bit / 8] & (0x80 >> (bit % 8)))
          out[n][bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
      n++;
    }
  return n;
}

/* The IPv6 forms of an IPv4 address: mapped, compatible, NAT64, 6to4. */
static void
v6_forms (const uint8_t *v4, uint8_t out[4][16])
{
  memset (out, 0, 4 * 16);
  out[0][10] = out[0][11] = 0xff;
  memcpy (out[0] + 12, v4, 4);
  memcpy (out[1] + 12, v4, 4);
  out[2][1] = 0x64;
  out[2][2] = 0xff;
  out[2][3] = 0x9b;
  memcpy (out[2] + 12, v4, 4);
  out[3][0] = 0x20;
  out[3][1] = 0x02;
  memcpy (out[3] + 2, v4, 4);
  random_bytes (out[3] + 6, 10);
}

struct programs
{
  int out, in, strict;
  int other_ifindex;
  size_t runs;
};

/* One address through the programs that judge it, each against the
 * reference: egress (as destination) and ingress (as source) off lo, or
 * strict's loopback program on lo (as both). */
static void
check_address (const struct lists *l, struct programs *p, int family,
               const uint8_t *addr)
{
  static const uint8_t peer4[4] = { 203, 0, 113, 9 };
  static const uint8_t peer6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 9 };
  const uint8_t *peer = family == AF_INET ? peer4 : peer6;
  int want = reference_verdict (&l->r, family, addr);
  char text[INET6_ADDRSTRLEN];

  inet_ntop (family, addr, text, sizeof (text));
  if (l->r.egress)
    {
      if (run_skb_bytes (p->out, family, peer, addr, p->other_ifindex) != want)
        fail_msg ("egress program, to %s: not %s", text,
                  want ? "passed" : "dropped");
      if (run_skb_bytes (p->in, family, addr, peer, p->other_ifindex) != want)
        fail_msg ("ingress program, from %s: not %s", text,
                  want ? "passed" : "dropped");
      p->runs += 2;
      return;
    }
  if (run_skb_bytes (p->strict, family, addr, addr, 1 /* lo */) != want)
    fail_msg ("strict program, %s on lo: not %s", text,
              want ? "passed" : "dropped");
  p->runs++;
}

static void
check_around_entries (const struct lists *l, struct programs *p,
                      const struct cidr *list, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      uint8_t addrs[8][16];
      size_t k = addresses_around (&list[i], addrs);
      unsigned bytes = list[i].family == AF_INET ? 4 : 16;

      for (size_t j = 0; j < k; j++)
        {
          uint8_t reversed[16], forms[4][16];
          for (unsigned b = 0; b < bytes; b++)
            reversed[b] = addrs[j][bytes - 1 - b];
          check_address (l, p, list[i].family, addrs[j]);
          check_address (l, p, list[i].family, reversed);
          if (list[i].family != AF_INET)
            continue;
          v6_forms (addrs[j], forms);
          for (int f = 0; f < 4; f++)
            check_address (l, p, AF_INET6, forms[f]);
        }
    }
}

static void
check_mode (bool egress, bool allowlist, uint64_t seed)
{
  struct lists *l = xcalloc (1, sizeof (*l));
  struct netguard_maps m;
  struct moat_error *err = NULL;
  struct programs p = { -1, -1, -1, 0, 0 };

  rng_state = seed ^ 0x9e3779b97f4a7c15ULL; /* never 0 */
  make_lists (l, egress, allowlist);
  if (netguard_maps_create (&l->r, &m, &err) < 0)
    fail_msg ("maps: %s", err->msg);
  if (egress)
    {
      if (netguard_bpf_load (NETGUARD_PROG_SKB_EGRESS, &l->r, &m, &p.out, &err)
              < 0
          || netguard_bpf_load (NETGUARD_PROG_SKB_INGRESS, &l->r, &m, &p.in,
                                &err)
                 < 0)
        fail_msg ("load: %s", err->msg);
    }
  else if (netguard_bpf_load (NETGUARD_PROG_SKB_LOOPBACK, &l->r, &m, &p.strict,
                              &err)
           < 0)
    fail_msg ("load: %s", err->msg);
  netguard_maps_close (&m);
  p.other_ifindex = other_ifindex ();
  if (p.other_ifindex <= 0)
    fail_msg ("no device but lo here to run packets on");

  check_around_entries (l, &p, l->r.deny, l->r.n_deny);
  check_around_entries (l, &p, l->r.allow, l->r.n_allow);
  check_around_entries (l, &p, l->r.dns, l->r.n_dns);
  check_around_entries (l, &p, l->r.private_nets, l->r.n_private);
  for (int i = 0; i < 2000; i++)
    {
      uint8_t a[16];
      random_bytes (a, 16);
      check_address (l, &p, i % 2 ? AF_INET6 : AF_INET, a);
    }
  print_message ("%s%s, seed %llu: %zu deny, %zu allow, %zu private, %zu dns "
                 "entries; %zu verdicts agree\n",
                 egress ? "egress" : "strict", allowlist ? " allowlist" : "",
                 (unsigned long long)seed, l->r.n_deny, l->r.n_allow,
                 l->r.n_private, l->r.n_dns, p.runs);
  if (p.out >= 0)
    close (p.out);
  if (p.in >= 0)
    close (p.in);
  if (p.strict >= 0)
    close (p.strict);
  free (l);
}

static uint64_t
test_seed (void)
{
  /* MOAT_TEST_SEED replays a failure; otherwise a new seed each run. */
  const char *s = getenv ("MOAT_TEST_SEED");
  if (s && *s)
    return strtoull (s, NULL, 10);
  return (uint64_t)time (NULL) * 2654435761u + (uint64_t)getpid ();
}

static void
test_verdicts_match_reference (void **state)
{
  uint64_t seed = test_seed ();
  (void)state;
  if (geteuid () != 0 || !skb_test_run_usable ())
    skip ();
  for (int round = 0; round < 3; round++)
    {
      check_mode (true, false, seed + (uint64_t)round * 3);
      check_mode (true, true, seed + (uint64_t)round * 3 + 1);
      check_mode (false, false, seed + (uint64_t)round * 3 + 2);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_verdicts_match_reference),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
