/* What the policy hands the network guard (profile_netguard_rules): the
 * lists and their bounds. Pure data; the guard itself is netguard.h. */
#ifndef MOAT_NETGUARD_RULES_H
#define MOAT_NETGUARD_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "../lib/cidr.h"

/* Bounds of the lists, checked when the operator config is read and again
 * when the maps are filled (E2BIG, never a shorter list). The lists live
 * in LPM tries (netguard_maps.c), so an entry costs map memory (about 100
 * bytes) and a little time at create, not program length: the programs
 * are the same for one entry or the bound. The bound keeps both lists,
 * written out, inside the operator config's 1 MiB cap. The fallback
 * without cgroup BPF installs one policy rule per entry and form, and has
 * its own, smaller bound (NETGUARD_FALLBACK_MAX_ENTRIES). */
#define NETGUARD_MAX_DENY 16384  /* built-in metadata + operator's */
#define NETGUARD_MAX_PRIVATE 32  /* egress: the built-in private ranges */
#define NETGUARD_MAX_ALLOW 16384 /* egress_allow / egress_allow_private */
#define NETGUARD_MAX_DNS 3       /* nameservers, as libc reads (MAXNS) */
#define NETGUARD_FALLBACK_MAX_ENTRIES 256 /* deny + allow, fallback only */

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
  /* cidr_list_digest of deny and allow where the policy took them (NULL
   * or "": not taken): the guard's pinned programs are found by them, the
   * lists then compared whole. */
  const char *deny_digest;
  const char *allow_digest;
};

#endif
