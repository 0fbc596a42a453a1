/* Shared by the lifecycle files of runtime/ (not by cmd/). */
#ifndef MOAT_CONTAINER_INTERNAL_H
#define MOAT_CONTAINER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "container.h"
#include "profile.h"
#include "../oci/json.h"
#include "../oci/state.h"

#define JSON_MAX_SIZE_CONFIG (4u * 1024 * 1024)

static inline void
cleanup_specp (struct spec **s)
{
  spec_free (*s);
}
#define cleanup_spec __attribute__ ((cleanup (cleanup_specp)))
static inline void
cleanup_statep (struct container_state **s)
{
  if (*s)
    state_free (*s);
}
#define cleanup_state __attribute__ ((cleanup (cleanup_statep)))

static inline void
cleanup_profilep (struct profile **p)
{
  if (*p)
    profile_free (*p);
}
#define cleanup_profile __attribute__ ((cleanup (cleanup_profilep)))

/* The operator's profile tightened by the container's run.moat.*
 * annotations: what its network guard and every exec get. */
int container_effective_profile (const struct moat_globals *g,
                                 const struct spec *s, struct profile **ret,
                                 struct moat_error **err);

/* Record the bundle for the audit line (G11). */
void container_audit_bundle (const struct moat_globals *g, const char *bundle);

/* /proc/PID/stat: state letter and start time (field 22). */
int proc_stat_read (pid_t pid, char *ret_state, uint64_t *ret_starttime);
/* Is the init of st alive (same start time, not a zombie)? */
bool container_init_alive (const struct container_state *st);
/* creating | created | running | paused | stopped */
const char *container_status (int dirfd, const struct container_state *st);
/* Open ROOT/ID (locked if lock) and read its state. */
int container_load (const struct moat_globals *g, const char *id, bool lock,
                    int *ret_rootfd, int *ret_dirfd,
                    struct container_state **ret_st, struct moat_error **err);
/* The hardened spec from the config.json saved at create. */
int container_load_spec (const struct moat_globals *g, int dirfd,
                         struct spec **ret, struct moat_error **err);
/* linux.namespaces[].path, opened into ns_fds[NS__MAX] (-1: none) and
 * checked against the host's own (namespaces.c). */
int container_open_namespaces (const struct spec *s, const struct profile *p,
                               int *ns_fds, struct moat_error **err);
/* Enter (or make) the pid and time namespaces the init must be born in. */
int container_enter_parent_namespaces (const struct spec *s, int *ns_fds,
                                       struct moat_error **err);
int container_create_internal (const struct moat_globals *g,
                               const struct create_opts *o, bool for_run,
                               pid_t *ret_pid, int *ret_master,
                               struct moat_error **err);

#endif
