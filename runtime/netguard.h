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
};

/* Parse "10.0.0.0/8", "fd00:ec2::254/128", "169.254.169.254" (host). */
int cidr_parse (const char *s, struct cidr *ret);

struct netguard_rules
{
  bool egress; /* false: loopback only (strict) */
  /* denied in every mode, checked also as IPv4-mapped IPv6 */
  const struct cidr *deny;
  size_t n_deny;
};

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
