/* The policy. profile_apply() is a pure function (no I/O) from a parsed spec
 * and a profile to the hardened spec, plus the list of what it changed or
 * refused. Mechanisms in runtime/ apply the hardened spec and nothing else. */
#ifndef MOAT_PROFILE_H
#define MOAT_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "netguard.h"
#include "../oci/spec.h"

struct profile
{
  char *name;             /* "strict" or "egress" */
  bool egress;            /* G1: false = loopback only */
  int64_t pids_limit;     /* G7, default 64 */
  int64_t memory_limit;   /* bytes, default 512 MiB; swap = memory */
  int64_t cpu_quota;      /* us per period, default 100000 (1 CPU) */
  uint64_t cpu_period;    /* us, default 100000 */
  uint64_t tmpfs_size;    /* G6, bytes, default 64 MiB */
  uint64_t nofile;        /* RLIMIT_NOFILE cap, default 1024 */
  char **credential_env;  /* G10 glob patterns ("*_TOKEN", "AWS_*" ...) */
  struct cidr *deny;      /* G2 metadata ranges + operator's egress CIDRs */
  size_t n_deny;
  char *audit_log;        /* G11, default /var/log/moat/audit.jsonl */
};

enum override_kind
{
  OVERRIDE_CHANGED, /* the profile replaced a value */
  OVERRIDE_REMOVED, /* the profile dropped something (an env var, a cap set) */
  OVERRIDE_ADDED,   /* the profile added something (a mount, a masked path) */
  OVERRIDE_IGNORED, /* a loosening annotation, ignored */
  OVERRIDE_REFUSED, /* create refused (a dangerous bind) */
};

struct override
{
  enum override_kind kind;
  char *path;     /* JSON path: "process.capabilities.bounding" */
  char *asked;    /* what config.json asked (text), may be NULL */
  char *enforced; /* what holds now, may be NULL */
};

struct override_list
{
  struct override *v;
  size_t n;
};

/* Load the operator config (path NULL: /etc/moat/config.json if it exists,
 * else built-in defaults) and pick the profile by name (NULL: the config's
 * "profile", else "strict"). Unknown keys or bad values are errors. */
int profile_load (const char *config_path, const char *name,
                  struct profile **ret, struct moat_error **err);
void profile_free (struct profile *p);

/* Harden spec in place. Refusals (G5 dangerous binds) return an error and
 * are also in *ret_overrides (OVERRIDE_REFUSED). */
int profile_apply (struct spec *spec, const struct profile *p,
                   struct override_list *ret_overrides,
                   struct moat_error **err);
/* The same for a process `moat exec` starts (caps, nnp, rlimits, env). */
int profile_apply_process (struct spec_process *proc, const struct profile *p,
                           struct override_list *ret_overrides,
                           struct moat_error **err);
/* The effective profile as pretty JSON (moat profile show). */
int profile_to_json (const struct profile *p, char **ret,
                     struct moat_error **err);
/* Netguard rules for this profile (pointers into p). */
void profile_netguard_rules (const struct profile *p,
                             struct netguard_rules *ret);

void override_list_clear (struct override_list *l);
void override_list_add (struct override_list *l, enum override_kind kind,
                        const char *path, const char *asked,
                        const char *enforced);
const char *override_kind_name (enum override_kind k);

#endif
