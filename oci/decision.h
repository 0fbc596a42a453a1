/* What create decided for one container, saved whole in ROOT/ID/policy.json
 * once every fact is in and every verdict given: the effective profile and
 * every override (policy/ writes and reads those), the bounds of every
 * process, the nameservers the network guard lets through, and the final
 * spec as applied (every mount, bind flag, namespace, label). Later verbs
 * load it and obey it as it is, as runc obeys its saved config; this part
 * reads it back without the policy. */
#ifndef MOAT_DECISION_H
#define MOAT_DECISION_H

#include "../lib/error.h"
#include "process_bounds.h"
#include "resource_bounds.h"
#include "spec.h"

/* policy.json's format. A state dir written in another one (an older
 * moat's) is refused: moat is 0.x, delete the container and create it. */
#define DECISION_VERSION 2

struct decision
{
  char *profile_name; /* the effective profile's name */
  struct spec *spec;  /* the final spec, as applied */
  struct process_bounds process;
  struct resource_bounds resources; /* what update may set at most */
  char **nameservers;               /* CIDR text; empty unless egress */
  char *userns_pool_dir;            /* G12: the pool its block came from */
};

/* Parse policy.json text. Refuses any other version with an error that says
 * what to do. */
int decision_parse (const char *text, size_t len, struct decision **ret,
                    struct moat_error **err);
void decision_free (struct decision *d);

/* The parts of policy.json this file owns, into an open object (the policy
 * writes the profile and the overrides around them). */
struct json_writer;
void decision_write_parts (struct json_writer *w, const struct spec *final,
                           const struct process_bounds *process,
                           const struct resource_bounds *resources,
                           char *const *nameservers,
                           const char *userns_pool_dir);

#endif
