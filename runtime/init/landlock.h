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
#include "../../policy/verdicts.h"

/* The kernel's Landlock ABI version; 0 where it has none (not built, or not
 * in the lsm= list). */
int landlock_abi (void);
/* The decision among annotations (the hardened spec's, or the state's
 * for `moat exec`); NULL where create made none. */
const char *landlock_decision (const struct spec_kv *annotations, size_t n);
/* In the container, after its mounts are final: the ruleset decision asks
 * for, built from plan, the mount plan the init ran (for_init: with the
 * signal scope, see landlock.c). Execute is granted from exec_list where
 * it is not NULL or empty (the init's, for `moat exec`: no directory is
 * read), else from the directories on the way to the noexec mounts, and
 * the paths granted go to *ret_exec_list (may be NULL; NULL where no
 * directory was read). *ret_fd is -1 when there is none. */
struct mount_plan;
int landlock_prepare (const struct mount_plan *plan, const char *decision,
                      bool for_init, const char *exec_list,
                      char **ret_exec_list, int *ret_fd,
                      struct moat_error **err);
/* Where a moat before the exec list went into state.json kept it. */
#define LANDLOCK_EXEC_LIST_FILE "landlock-exec"
/* Just before execve, after no_new_privs; closes fd. fd -1: nothing. */
int landlock_enforce (int fd, struct moat_error **err);

#endif
