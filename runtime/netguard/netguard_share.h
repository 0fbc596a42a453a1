/* Internal to the network guard: its programs for a set of rules, shared
 * between containers through pins in a BPF filesystem (netguard_share.c)
 * or, where nothing can be pinned, loaded for one container. */
#ifndef MOAT_NETGUARD_SHARE_H
#define MOAT_NETGUARD_SHARE_H

#include <stdbool.h>

#include "netguard_bpf.h"

#define NETGUARD_N_PROGS (NETGUARD_PROG_SENDMSG6 + 1)
/* Sets of rules kept pinned at once; the oldest goes first. */
#define NETGUARD_SHARE_MAX 64

/* A program fd per kind, -1 for the kinds the mode does not use; and the
 * counters' map, where each container's cgroup id is written. */
struct netguard_progs
{
  int fd[NETGUARD_N_PROGS];
  int counts;
};
void netguard_progs_close (struct netguard_progs *p);

/* The id of the cgroup (an fd of its cgroup2 directory), as
 * bpf_get_current_cgroup_id tells it. 0 or -errno. */
int netguard_cgroup_id (int cgroup_fd, uint64_t *ret);

/* The mode of R uses this kind of program. */
bool netguard_prog_used (const struct netguard_rules *r,
                         enum netguard_prog kind);

/* The programs for R: the pinned ones under PIN_DIR where an earlier
 * create built them (*ret_shared true), else built now, and pinned for
 * later creates where PIN_DIR allows. PIN_DIR NULL: built for this
 * container alone. */
int netguard_progs_get (const struct netguard_rules *r, const char *pin_dir,
                        struct netguard_progs *ret, bool *ret_shared,
                        struct moat_error **err);

#endif
