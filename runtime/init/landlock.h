/* G14: Landlock behind the mounts. The container's processes (the init's
 * payload and every `moat exec` process) may write, create, remove and
 * truncate only beneath the container's writable mounts, and execute only
 * outside its noexec ones: the mount plan's rules, enforced a second time
 * by an independent layer in case a mount is ever wrong. With ABI 6,
 * abstract unix sockets (and, for the init's tree, signals) are scoped to
 * the process's own Landlock domain. Best effort by ABI unless the
 * operator requires it. */
#ifndef MOAT_LANDLOCK_H
#define MOAT_LANDLOCK_H

#include <stdbool.h>

#include "../../lib/error.h"
#include "../../oci/spec.h"
#include "../../policy/profile.h"

/* The hardened spec's annotation: what create decided, which the init and
 * `moat exec` apply and `moat state` shows ("abi 7: ..." or why none). */
#define LANDLOCK_ANNOTATION "run.moat.landlock"

/* The kernel's Landlock ABI version; 0 where it has none (not built, or not
 * in the lsm= list). */
int landlock_abi (void);
/* What a container gets on this kernel under mode: one line, for
 * `moat features`, the audit line and the annotation (malloc'ed). */
char *landlock_describe (enum profile_landlock mode, int abi);
/* create: record the decision for a kernel of Landlock ABI abi
 * (landlock_abi ()) on the hardened spec s, replacing whatever config.json
 * put there (it cannot choose), and in audit (may be NULL); a kernel
 * without Landlock (ABI 2) is an error only when the operator requires
 * it. */
struct verb_audit;
int landlock_decide (struct spec *s, enum profile_landlock mode, int abi,
                     struct verb_audit *audit, struct moat_error **err);
/* The decision among annotations (the hardened spec's, or the state's
 * for `moat exec`); NULL where create made none. */
const char *landlock_decision (const struct spec_kv *annotations, size_t n);
/* In the container, after its mounts are final: the ruleset decision asks
 * for, built from the mount plan of hardened spec s (for_init: with the
 * signal scope, see landlock.c). *ret_fd is -1 when there is none. */
int landlock_prepare (const struct spec *s, const char *decision, bool for_init,
                      int *ret_fd, struct moat_error **err);
/* Just before execve, after no_new_privs; closes fd. fd -1: nothing. */
int landlock_enforce (int fd, struct moat_error **err);

#endif
