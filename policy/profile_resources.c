/* G7: the lower of config.json and the profile wins, for create and for
 * `moat update` (the bounds applied by oci/resource_bounds.c, which update
 * uses from the saved decision without the policy); and the run.moat.*
 * annotations, which may only tighten. */
#include "profile.h"
#include "profile_internal.h"
#include "../lib/util.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <string.h>

void
profile_harden_resources (struct spec_resources *r, const struct profile *p,
                          bool create, struct override_list *ov)
{
  struct resource_bounds b = profile_resource_bounds (p);
  resource_bounds_apply (r, &b, create, ov);
}

struct resource_bounds
profile_resource_bounds (const struct profile *p)
{
  return (struct resource_bounds){ .pids_limit = p->pids_limit,
                                   .memory_limit = p->memory_limit,
                                   .cpu_quota = p->cpu_quota,
                                   .cpu_period = p->cpu_period };
}

int
profile_apply_resources (struct spec_resources *r, const struct profile *p,
                         struct override_list *ov, struct moat_error **err)
{
  profile_harden_resources (r, p, false, ov);
  return 0;
}

/* "1", "0.5", "2.25": CPUs (the operator config's and the annotations')
 * in thousandths. */
int
profile_parse_millis (const char *s, uint64_t *ret)
{
  uint64_t whole = 0, frac = 0;
  const char *p = s;
  int digits = 0;

  if (s == NULL || *s < '0' || *s > '9')
    return -EINVAL;
  for (; *p >= '0' && *p <= '9'; p++)
    {
      if (whole > UINT64_MAX / 10000)
        return -ERANGE;
      whole = whole * 10 + (*p - '0');
    }
  if (*p == '.')
    for (p++; *p >= '0' && *p <= '9'; p++, digits++)
      {
        if (digits == 3)
          return -EINVAL;
        frac = frac * 10 + (*p - '0');
      }
  if (*p != '\0')
    return -EINVAL;
  for (; digits < 3; digits++)
    frac *= 10;
  *ret = whole * 1000 + frac;
  return 0;
}

/* ---- run.moat.* annotations ---- */

enum tunable
{
  T_PIDS,
  T_MEMORY,
  T_CPUS,
  T_CPU_QUOTA,
  T_TMPFS,
  T_NOFILE,
};

static const struct
{
  const char *key;
  enum tunable t;
} tunables[] = {
  { "run.moat.pids-limit", T_PIDS },  { "run.moat.memory-limit", T_MEMORY },
  { "run.moat.cpus", T_CPUS },        { "run.moat.cpu-quota", T_CPU_QUOTA },
  { "run.moat.tmpfs-size", T_TMPFS }, { "run.moat.nofile", T_NOFILE },
};

static uint64_t
tunable_get (const struct profile *e, enum tunable t)
{
  switch (t)
    {
    case T_PIDS:
      return e->pids_limit;
    case T_MEMORY:
      return e->memory_limit;
    case T_CPUS:
    case T_CPU_QUOTA:
      return e->cpu_quota;
    case T_TMPFS:
      return e->tmpfs_size;
    case T_NOFILE:
      return e->nofile;
    }
  return 0;
}

static void
tunable_set (struct profile *e, enum tunable t, uint64_t v)
{
  switch (t)
    {
    case T_PIDS:
      e->pids_limit = v;
      break;
    case T_MEMORY:
      e->memory_limit = v;
      break;
    case T_CPUS:
    case T_CPU_QUOTA:
      e->cpu_quota = v;
      break;
    case T_TMPFS:
      e->tmpfs_size = v;
      break;
    case T_NOFILE:
      e->nofile = v;
      break;
    }
}

static char *
tunable_text (const struct profile *e, enum tunable t)
{
  if (t == T_CPUS || t == T_CPU_QUOTA)
    return xasprintf ("%" PRId64 "/%" PRIu64, e->cpu_quota, e->cpu_period);
  return xasprintf ("%" PRIu64, tunable_get (e, t));
}

/* Values are in the profile's units: cpus as a CPU count ("0.5"),
 * cpu-quota in microseconds per the profile's period. */
static int
tunable_parse (enum tunable t, const char *value, const struct profile *e,
               uint64_t *ret)
{
  uint64_t v;
  int r;

  switch (t)
    {
    case T_MEMORY:
    case T_TMPFS:
      r = parse_byte_size (value, &v);
      break;
    case T_CPUS:
      r = profile_parse_millis (value, &v);
      if (r == 0)
        {
          unsigned __int128 q = (unsigned __int128)v * e->cpu_period / 1000;
          if (q > INT64_MAX)
            return -ERANGE;
          v = (uint64_t)q;
        }
      break;
    default:
      r = parse_uint64 (value, &v);
      break;
    }
  if (r < 0)
    return r;
  if (v == 0 || v > INT64_MAX)
    return -ERANGE;
  if ((t == T_CPUS || t == T_CPU_QUOTA) && v < MIN_CPU_QUOTA_US)
    return -ERANGE;
  *ret = v;
  return 0;
}

static void
apply_tunable (struct profile *e, enum tunable t, const char *key,
               const char *value, struct override_list *ov)
{
  cleanup_free char *path = xasprintf ("annotations.%s", key);
  cleanup_free char *before = tunable_text (e, t);
  cleanup_free char *after = NULL;
  uint64_t v;

  if (tunable_parse (t, value, e, &v) < 0 || v > tunable_get (e, t))
    {
      override_list_add (ov, OVERRIDE_IGNORED, path, value, before);
      return;
    }
  if (v == tunable_get (e, t))
    return;
  tunable_set (e, t, v);
  after = tunable_text (e, t);
  override_list_add (ov, OVERRIDE_CHANGED, path, value, after);
}

/* Only towards strict: egress -> strict tightens, the reverse is ignored. */
static void
apply_profile_annotation (struct profile *e, const char *value,
                          struct override_list *ov)
{
  const char *path = "annotations.run.moat.profile";

  if (strcmp (value, e->name) == 0)
    return;
  if (strcmp (value, "strict") == 0 && e->egress)
    {
      override_list_add (ov, OVERRIDE_CHANGED, path, value, "strict");
      e->egress = false;
      free (e->name);
      e->name = xstrdup ("strict");
      return;
    }
  override_list_add (ov, OVERRIDE_IGNORED, path, value, e->name);
}

int
profile_effective (const struct profile *p, const struct spec_kv *annotations,
                   size_t n_annotations, struct profile **ret,
                   struct override_list *ov, struct moat_error **err)
{
  cleanup_profile struct profile *e = profile_dup_borrowing_lists (p);
  size_t n_tunables = sizeof (tunables) / sizeof (tunables[0]);

  for (size_t i = 0; i < n_annotations; i++)
    {
      const char *key = annotations[i].key, *value = annotations[i].value;
      bool known = false;

      if (strncmp (key, "run.moat.", strlen ("run.moat.")) != 0)
        continue;
      if (value == NULL)
        value = "";
      if (strcmp (key, "run.moat.profile") == 0)
        {
          apply_profile_annotation (e, value, ov);
          continue;
        }
      if (strcmp (key, "run.moat.egress-allow") == 0)
        {
          if (profile_network_annotation (e, value, ov, err) < 0)
            return -1;
          continue;
        }
      /* G8's agent level: asked for, never asked away. */
      if (strcmp (key, "run.moat.seccomp") == 0)
        {
          if (strcmp (value, "agent") == 0)
            e->seccomp_agent = true;
          else if (strcmp (value, "default") != 0 || e->seccomp_agent)
            override_list_add (ov, OVERRIDE_IGNORED,
                               "annotations.run.moat.seccomp", value,
                               e->seccomp_agent ? "agent" : "default");
          continue;
        }
      /* G14: moat's own record of create's decision, read by exec. */
      if (strcmp (key, "run.moat.landlock") == 0)
        continue;
      for (size_t j = 0; j < n_tunables && !known; j++)
        if (strcmp (key, tunables[j].key) == 0)
          {
            apply_tunable (e, tunables[j].t, key, value, ov);
            known = true;
          }
      if (!known)
        {
          cleanup_free char *path = xasprintf ("annotations.%s", key);
          override_list_add (ov, OVERRIDE_IGNORED, path, value, NULL);
        }
    }
  *ret = steal_pointer (&e);
  return 0;
}
