/* G1/G2: the network guard. cgroup BPF programs (hand-assembled, no libbpf)
 * on the container's cgroup in the v2 hierarchy: cgroup_skb ingress/egress
 * pass only loopback (strict) or all but the denied CIDRs (egress);
 * connect4/6 and sendmsg4/6 return EPERM at once for refused addresses. */
#ifndef MOAT_NETGUARD_H
#define MOAT_NETGUARD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../policy/cidr.h"
#include "../../lib/error.h"
#include "../../policy/netguard_rules.h"

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

/* What the container of this cgroup (an fd from cgroup_unified_fd) tried
 * and was refused at connect()/sendmsg(), as JSON: {"refused": [{"addr",
 * "port", "proto", "count", "first", "last"} ...] (most often refused
 * first), "overflow": refusals of destinations past the first
 * NETGUARD_REFUSALS_KEPT}. -ENOENT where no guard of moat's counts
 * (the fallback). */
int netguard_refusals_json (int cgroup_fd, char **ret);

/* The lists fit the fallback (NETGUARD_FALLBACK_MAX_ENTRIES): create
 * checks before it chooses the fallback, so that start cannot fail. */
int netguard_fallback_check (const struct netguard_rules *r,
                             struct moat_error **err);

#endif
