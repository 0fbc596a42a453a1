/* The nameservers the network guard lets through (egress, port 53), read
 * on the host at create from the container's resolv.conf: a fact create
 * gathers before the policy judges (netguard_dns.c), not a part of the
 * guard, which gets them as rules. */
#ifndef MOAT_NETGUARD_DNS_H
#define MOAT_NETGUARD_DNS_H

#include <stddef.h>

#include "../lib/cidr.h"
#include "../lib/error.h"
#include "../policy/netguard_rules.h"

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

#endif
