/* The bounds of every process of a container (G3, G4, G7, G10), as the
 * policy decided them at create; applied to the init and to each process
 * `moat exec` starts. */
#ifndef MOAT_PROCESS_BOUNDS_H
#define MOAT_PROCESS_BOUNDS_H

#include <stdint.h>

#include "override.h"
#include "spec.h"

struct process_bounds
{
  uint64_t nofile;       /* RLIMIT_NOFILE cap (RLIMIT_CORE is always 0) */
  char **credential_env; /* env names removed (fnmatch, case-insensitive) */
};

/* No capabilities, no_new_privs, RLIMIT_CORE 0 and RLIMIT_NOFILE at most
 * b->nofile, credential-looking env removed, no negative oomScoreAdj;
 * each change recorded in ov (may be NULL). */
void process_bounds_apply (struct spec_process *proc,
                           const struct process_bounds *b,
                           struct override_list *ov);

#endif
