/* G1/G2: the network guard. cgroup BPF programs (hand-assembled, no libbpf)
 * on the container's cgroup in the v2 hierarchy: cgroup_skb ingress/egress
 * pass only loopback (strict) or all but the denied CIDRs (egress);
 * connect4/6 and sendmsg4/6 return EPERM at once for refused addresses. */
#ifndef MOAT_NETGUARD_H
#define MOAT_NETGUARD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../lib/cidr.h"
#include "../../lib/error.h"
#include "../../policy/netguard_rules.h"

/* Where create pins the programs it shares between containers with the
 * same rules (a BPF filesystem is mounted at /sys/fs/bpf where none is,
 * as systemd does). */
#define NETGUARD_PIN_DIR "/sys/fs/bpf/moat"

/* Attach all programs to the cgroup (an fd from cgroup_unified_fd): those
 * pinned under PIN_DIR for the same rules by an earlier create, else
 * built now (and pinned there for the next; PIN_DIR NULL: never shared).
 * The attachments go away with the cgroup. */
int netguard_attach (int cgroup_fd, const struct netguard_rules *r,
                     const char *pin_dir, struct moat_error **err);
/* Bring "lo" up in the current network namespace (container init). */
int netguard_loopback_up (struct moat_error **err);
/* Fallback where no cgroup v2 hierarchy exists: in the network namespace
 * nsfd (PID's, for the messages), delete every link but lo, and add
 * prohibit routes for the denied CIDRs. */
int netguard_fallback_ns (int nsfd, pid_t pid, const struct netguard_rules *r,
                          struct moat_error **err);

/* What the container of this cgroup (an fd from cgroup_unified_fd) tried
 * and was refused at connect()/sendmsg(), as JSON: {"refused": [{"addr",
 * "port", "proto", "count", "first", "last"} ...] (most often refused
 * first), "overflow": refusals of destinations past the first
 * NETGUARD_REFUSALS_KEPT, "dropped_packets": packets the guard dropped
 * on their way in or out}. -ENOENT where no guard of moat's counts
 * (the fallback). */
int netguard_refusals_json (int cgroup_fd, char **ret);
/* The same for delete (RET NULL: not wanted), and the container's entries
 * removed from the refused map that containers with the same rules share.
 * -ENOENT where no guard of moat's counts. */
int netguard_refusals_take (int cgroup_fd, char **ret);

/* The lists fit the fallback (NETGUARD_FALLBACK_MAX_ENTRIES): create
 * checks before it chooses the fallback, so that start cannot fail. */
int netguard_fallback_check (const struct netguard_rules *r,
                             struct moat_error **err);

#endif
