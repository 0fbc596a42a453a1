/* The bounds of a container's resources (G7), as the policy decided them:
 * applied at create and to each `moat update`. */
#ifndef MOAT_RESOURCE_BOUNDS_H
#define MOAT_RESOURCE_BOUNDS_H

#include <stdbool.h>
#include <stdint.h>

#include "override.h"
#include "spec.h"

/* The kernel refuses a CFS quota under 1 ms. */
#define MIN_CPU_QUOTA_US 1000

struct resource_bounds
{
  int64_t pids_limit;   /* pids.max at most */
  int64_t memory_limit; /* bytes; swap = memory, huge pages at most this */
  int64_t cpu_quota;    /* us per cpu_period */
  uint64_t cpu_period;
};

/* Every limit at most its bound (create: absent limits get the bound;
 * update: absent values stay absent), unified keys that could raise one
 * dropped, device rules narrowed to the safe set; each change in ov. */
void resource_bounds_apply (struct spec_resources *r,
                            const struct resource_bounds *b, bool create,
                            struct override_list *ov);

struct safe_device
{
  const char *name;
  char type;
  int64_t major, minor; /* minor -1: any (the pts range) */
  bool node;            /* may appear in linux.devices (else a rule only) */
};
/* The only device cgroup allow rules; those with node set are the only
 * linux.devices entries kept. */
extern const struct safe_device safe_devices[];
extern const size_t n_safe_devices;

/* Keep the entries whose key is allowed; each dropped one becomes an
 * OVERRIDE_REMOVED at json_path.KEY with its value. */
void spec_filter_kv (struct spec_kv *kv, size_t *n,
                     bool (*allowed) (const char *key), const char *json_path,
                     struct override_list *ov);

#endif
