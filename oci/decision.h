/* What create decided for one container, saved whole in ROOT/ID/policy.json
 * once every fact is in and every verdict given: the effective profile and
 * every override (policy/ writes and reads those), the bounds of every
 * process, the nameservers the network guard lets through, and the final
 * spec as applied (every mount, bind flag, namespace, label). Later verbs
 * load it and obey it as it is, as runc obeys its saved config; this part
 * reads it back without the policy. */
#ifndef MOAT_DECISION_H
#define MOAT_DECISION_H

#include "../lib/cidr.h"
#include "../lib/error.h"
#include "process_bounds.h"
#include "resource_bounds.h"
#include "spec.h"

/* policy.json's format. A state dir written in another one (an older
 * moat's) is refused: moat is 0.x, delete the container and create it. */
#define DECISION_VERSION 5

/* The network guard's lists as create judged them (the policy's
 * profile_netguard_rules, without the nameservers): what start's fallback
 * guard installs on a host with no cgroup v2 hierarchy, so that start never
 * judges again. */
struct decision_guard
{
  bool egress;    /* false: loopback only */
  bool allowlist; /* egress: nothing but allow (and dns) passes */
  struct cidr *deny;
  size_t n_deny;
  struct cidr *allow;
  size_t n_allow;
  struct cidr *private_nets; /* egress without an allowlist */
  size_t n_private;
  /* The lists are held by the guard's cgroup-bpf programs, attached at
   * create: policy.json gives each one's count rather than keeping
   * 10,000 entries that no later verb reads; decision_guard_lists then
   * fails. Only the fallback guard, installed at start, needs them. */
  bool held;
};

/* G2: cloud metadata, refused in every profile (NULL-terminated CIDR text;
 * the guard adds every IPv6 form embedding the IPv4 ones). The policy puts
 * them in every deny list; decision_parse adds them to the saved guard's
 * whatever policy.json says, so no later verb opens what G2 closes. */
#define DECISION_N_METADATA_RANGES 4
extern const char
    *const decision_metadata_ranges[DECISION_N_METADATA_RANGES + 1];

struct decision
{
  char *profile_name; /* the effective profile's name */
  struct spec *spec;  /* the final spec, as applied */
  struct process_bounds process;
  struct resource_bounds resources; /* what update may set at most */
  char **nameservers;               /* CIDR text; empty unless egress */
  char *userns_pool_dir;            /* G12: the pool its block came from */
  /* Read back: egress and allowlist only; the lists stay text (deny, allow,
   * private) until decision_guard_lists, which only start's fallback guard
   * needs: the other verbs do not pay for 10,000 entries. */
  struct decision_guard guard;
#define DECISION_GUARD_LISTS 3
  char *guard_text[DECISION_GUARD_LISTS];
};

/* Parse policy.json text. Refuses any other version with an error that says
 * what to do. */
int decision_parse (const char *text, size_t len, struct decision **ret,
                    struct moat_error **err);
void decision_free (struct decision *d);
/* The saved guard lists, parsed: a bad entry is an error, never a shorter
 * list; lists held by the programs (guard.held) are not there to parse, an
 * error too. Free with decision_guard_free. */
int decision_guard_lists (const struct decision *d, struct decision_guard *ret,
                          struct moat_error **err);
void decision_guard_free (struct decision_guard *g);

/* The parts of policy.json this file owns, into an open object (the policy
 * writes the profile and the overrides around them). */
struct json_writer;
void decision_write_parts (struct json_writer *w, const struct spec *final,
                           const struct process_bounds *process,
                           const struct resource_bounds *resources,
                           const struct decision_guard *guard,
                           char *const *nameservers,
                           const char *userns_pool_dir);
/* JSON as the audit line, policy.json and the sandbox record write them:
 * KEY: [CIDR, ...] (PORT, when not 0, replaces each entry's port). */
void jw_cidrs (struct json_writer *w, const char *key, const struct cidr *list,
               size_t n, uint16_t port);
/* KEY: the list as one string (cidr_list_join): policy.json's form. */
void jw_cidrs_joined (struct json_writer *w, const char *key,
                      const struct cidr *list, size_t n);

#endif
