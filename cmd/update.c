#include <string.h>

#include "../policy/profile.h"
#include "../lib/util.h"
#include "cmd.h"

enum
{
  U_RESOURCES = 1,
  U_MEMORY,
  U_MEMORY_SWAP,
  U_PIDS,
  U_CPU_QUOTA,
  U_CPU_PERIOD,
  U_CPU_SHARES,
  U_CPUSET_CPUS,
  U_CPUSET_MEMS
};

static int
num (const char *flag, const char *val, int64_t *ret, struct moat_error **err)
{
  if (parse_int64 (val, ret) < 0)
    return moat_fail (err, 0, "%s: expected a number, got %s", flag, val);
  return 0;
}

/* runc's units.RAMInBytes: "1g", "512m", "64k", "1GiB", "2147483648"; -1
 * is unlimited, as runc's. Binary units (k = 1024). */
static int
bytes (const char *flag, const char *val, int64_t *ret, struct moat_error **err)
{
  uint64_t v;

  if (strcmp (val, "-1") == 0)
    {
      *ret = -1;
      return 0;
    }
  if (parse_byte_size (val, &v) < 0 || v > INT64_MAX)
    return moat_fail (err, 0,
                      "%s: expected bytes (a number, or with k, m, g: 1g, "
                      "512m), got %s",
                      flag, val);
  *ret = (int64_t)v;
  return 0;
}

static int
update_cb (void *p, int id, const char *val, struct moat_error **err)
{
  struct update_opts *o = p;
  struct spec_resources *r = &o->res;
  int64_t v = 0;
  int ret = 0;

  switch (id)
    {
    case U_RESOURCES:
      o->resources_file = val;
      break;
    case U_MEMORY:
      ret = bytes ("--memory", val, &v, err);
      r->memory.has_limit = true;
      r->memory.limit = v;
      break;
    case U_MEMORY_SWAP:
      ret = bytes ("--memory-swap", val, &v, err);
      r->memory.has_swap = true;
      r->memory.swap = v;
      break;
    case U_PIDS:
      ret = num ("--pids-limit", val, &v, err);
      r->has_pids_limit = true;
      r->pids_limit = v;
      break;
    case U_CPU_QUOTA:
      ret = num ("--cpu-quota", val, &v, err);
      r->cpu.has_quota = true;
      r->cpu.quota = v;
      break;
    case U_CPU_PERIOD:
      ret = num ("--cpu-period", val, &v, err);
      r->cpu.has_period = true;
      r->cpu.period = (uint64_t)v;
      break;
    case U_CPU_SHARES:
      ret = num ("--cpu-share", val, &v, err);
      r->cpu.has_shares = true;
      r->cpu.shares = (uint64_t)v;
      break;
    case U_CPUSET_CPUS:
      r->cpu.cpus = (char *)val;
      break;
    case U_CPUSET_MEMS:
      r->cpu.mems = (char *)val;
      break;
    }
  if (ret == 0 && v < 0 && id != U_MEMORY && id != U_MEMORY_SWAP
      && id != U_CPU_QUOTA && id != U_PIDS)
    return moat_fail (err, 0, "negative value %s", val);
  return ret;
}

VERB (update)
{
  static const struct cmd_opt opts[]
      = { { "resources", 'r', true, U_RESOURCES },
          { "memory", 'm', true, U_MEMORY },
          { "memory-swap", 0, true, U_MEMORY_SWAP },
          { "pids-limit", 0, true, U_PIDS },
          { "cpu-quota", 0, true, U_CPU_QUOTA },
          { "cpu-period", 0, true, U_CPU_PERIOD },
          { "cpu-share", 0, true, U_CPU_SHARES },
          { "cpu-shares", 0, true, U_CPU_SHARES },
          { "cpuset-cpus", 0, true, U_CPUSET_CPUS },
          { "cpuset-mems", 0, true, U_CPUSET_MEMS },
          { NULL, 0, false, 0 } };
  struct update_opts o = { 0 };
  int idx, r;

  r = cmd_parse (argv[0], argc, argv, 1, opts, update_cb, &o, &idx, err);
  if (r < 0)
    return r;
  r = cmd_take_id (ctx, argc, argv, idx, err);
  if (r < 0)
    return r;
  o.id = ctx->id;
  return container_update (&ctx->g, &o, err);
}
