/* ROOT/ID: one directory per container holding state.json, policy.json
 * (the decision, with the final spec), exec.fifo until start (not under
 * `run`, whose start goes over a socketpair), and a lock.
 * Verbs that change a container hold flock(LOCK_EX) on its directory. */
#ifndef MOAT_STATEDIR_H
#define MOAT_STATEDIR_H

#include <stdbool.h>
#include <sys/types.h>

#include "../lib/error.h"
#include "../oci/state.h"

/* Open the root directory, checked as below. A missing one is made (0700)
 * when create; otherwise it is 0 with *ret_fd -1: no container there. */
int statedir_root_open (const char *root, bool create, int *ret_fd,
                        struct moat_error **err);
/* The root must be moat's user's alone (owned by the effective user,
 * writable by no group or other): in a directory another user may write
 * to, they could plant a state dir the verbs would act on, or a link
 * where moat writes (ROOT/.cache, ROOT/ID). EPERM, saying which. */
int statedir_root_check (int rootfd, const char *root, struct moat_error **err);
/* ROOT/NAME, one of moat's housekeeping dirs (.sandbox, .session,
 * .host-usr): the root opened and checked as above, NAME made with mode
 * when mode is not 0 (else a missing one is 0 with *ret_fd -1), opened
 * beneath the root's fd without following a link, and held to the root's
 * rule (owned by moat's user, writable by no group or other). */
int statedir_subdir_open (const char *root, const char *name, mode_t mode,
                          int *ret_fd, struct moat_error **err);
/* Create ROOT/ID and lock it; EEXIST -> "container ID already exists". */
int statedir_create (int rootfd, const char *id, int *ret_dirfd,
                     struct moat_error **err);
/* Open ROOT/ID (locking it when lock); a missing one (or root, rootfd -1)
 * gives the text the engines match: container "ID" does not exist. */
int statedir_open (int rootfd, const char *id, bool lock, int *ret_dirfd,
                   struct moat_error **err);
/* Remove ROOT/ID and everything in it. */
int statedir_remove (int rootfd, const char *id, struct moat_error **err);
int statedir_write_state (int dirfd, const struct container_state *st,
                          struct moat_error **err);
int statedir_read_state (int dirfd, struct container_state **ret,
                         struct moat_error **err);

#endif
