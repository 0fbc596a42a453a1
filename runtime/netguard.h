/* G1/G2: the network guard. cgroup BPF programs (hand-assembled, no libbpf)
 * on the container's cgroup in the v2 hierarchy: cgroup_skb ingress/egress
 * pass only loopback (strict) or all but the denied CIDRs (egress);
 * connect4/6 and sendmsg4/6 return EPERM at once for refused addresses. */
#ifndef MOAT_NETGUARD_H
#define MOAT_NETGUARD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct cidr
{
  int family;       /* AF_INET or AF_INET6 */
  uint8_t addr[16]; /* network byte order; v4 in the first 4 bytes */
  uint8_t prefix;
  uint16_t port; /* allow entries: 0 any port, else only this one */
};

/* Parse "10.0.0.0/8", "fd00:ec2::254/128", "169.254.169.254" (host). */
int cidr_parse (const char *s, struct cidr *ret);
/* The same with an optional port: "10.0.0.0/8:443", "1.2.3.4:53",
 * "[2001:db8::/32]:443" (brackets for IPv6 with a port). */
int cidr_port_parse (const char *s, struct cidr *ret);
/* "10.0.0.0/8", "[2001:db8::/32]:443"; malloc'ed. */
char *cidr_to_string (const struct cidr *c);
/* Every address of inner (and its port, if outer names one) is in outer. */
bool cidr_contains (const struct cidr *outer, const struct cidr *inner);
bool cidr_overlaps (const struct cidr *x, const struct cidr *y);

/* The IPv6 forms that carry the IPv4 network v4: IPv4-mapped
 * (::ffff:0:0/96), IPv4-compatible (::/96), NAT64 (64:ff9b::/96) and 6to4
 * (2002::/16, the address at bits 16-47). Fills out[NETGUARD_EMBEDDINGS]. */
#define NETGUARD_EMBEDDINGS 4
void cidr_v6_embeddings (const struct cidr *v4,
                         struct cidr out[NETGUARD_EMBEDDINGS]);

/* Bounds of the lists, checked when the operator config is read and again
 * when the programs are built (E2BIG, never a shorter list). Every IPv4
 * entry costs its four IPv6 forms too; at these bounds the longest program
 * (connect6/sendmsg6, every entry a /32) is about 4300 instructions, which
 * the verifier takes (test_netguard_lists.c loads it), far from its 1M
 * limit for the privileged loads moat makes and from the 16-bit jump
 * offsets. Attaching costs verification time in proportion. */
#define NETGUARD_MAX_DENY 64    /* built-in metadata + operator's */
#define NETGUARD_MAX_PRIVATE 32 /* egress: the built-in private ranges */
#define NETGUARD_MAX_ALLOW 64   /* egress_allow / egress_allow_private */
#define NETGUARD_MAX_DNS 3      /* nameservers, as libc reads (MAXNS) */

struct netguard_rules
{
  bool egress; /* false: loopback only (strict) */
  /* Refused in every mode, and in each IPv6 form that embeds an IPv4
   * entry (cidr_v6_embeddings): G2 and the operator's egress_deny. */
  const struct cidr *deny;
  size_t n_deny;
  /* Egress: passed (with their port, if any) before anything but deny;
   * the IPv4 ones also as IPv4-mapped IPv6 (dual-stack sockets). */
  const struct cidr *allow;
  size_t n_allow;
  /* Egress: the nameservers, passed on port 53 only (UDP and TCP). */
  const struct cidr *dns;
  size_t n_dns;
  /* Egress: true: nothing else passes (an allowlist); false: all but
   * the private ranges (and their IPv6 embeddings) passes. */
  bool allowlist;
  const struct cidr *private_nets;
  size_t n_private;
};

struct spec;
/* The nameservers of the container's resolv.conf (at most
 * NETGUARD_MAX_DNS, the first ones, as libc reads them): the engine's
 * bind of /etc/resolv.conf if config.json has one, else the rootfs's
 * /etc/resolv.conf resolved inside the rootfs. None: *ret_n = 0. */
int netguard_nameservers (const struct spec *s, const char *bundle,
                          const char *rootfs, struct cidr ret[NETGUARD_MAX_DNS],
                          size_t *ret_n, struct moat_error **err);
/* The "nameserver" lines of a resolv.conf text, at most max. */
int netguard_parse_nameservers (const char *text, struct cidr *ret, size_t max,
                                size_t *ret_n);

/* Attach all programs to the cgroup (an fd from cgroup_unified_fd). The
 * programs go away with the cgroup. */
int netguard_attach (int cgroup_fd, const struct netguard_rules *r,
                     struct moat_error **err);
/* Bring "lo" up in the current network namespace (container init). */
int netguard_loopback_up (struct moat_error **err);
/* Fallback where no cgroup v2 hierarchy exists: in PID's network namespace,
 * delete every link but lo, and add prohibit routes for the denied CIDRs. */
int netguard_fallback (pid_t pid, const struct netguard_rules *r,
                       struct moat_error **err);

#endif
