#include <string.h>

#include "../runtime/util.h"
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
  U_CPUSET_MEMS,
  U_IGNORED
};

static int
num (const char *flag, const char *val, int64_t *ret, struct moat_error **err)
{
  if (parse_int64 (val, ret) < 0)
    return moat_fail (err, 0, "%s: expected a number, got %s", flag, val);
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
      ret = num ("--memory", val, &v, err);
      r->memory.has_limit = true;
      r->memory.limit = v;
      break;
    case U_MEMORY_SWAP:
      ret = num ("--memory-swap", val, &v, err);
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
      r->cpu.period = (uint64_t) v;
      break;
    case U_CPU_SHARES:
      ret = num ("--cpu-share", val, &v, err);
      r->cpu.has_shares = true;
      r->cpu.shares = (uint64_t) v;
      break;
    case U_CPUSET_CPUS:
      r->cpu.cpus = (char *) val;
      break;
    case U_CPUSET_MEMS:
      r->cpu.mems = (char *) val;
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
          { "blkio-weight", 0, true, U_IGNORED },
          { "kernel-memory", 0, true, U_IGNORED },
          { "memory-reservation", 0, true, U_IGNORED },
          { NULL, 0, false, 0 } };
  struct update_opts o = { 0 };
  int idx, r;

  r = cmd_parse (argc, argv, 1, opts, update_cb, &o, &idx, err);
  if (r < 0)
    return r;
  r = cmd_take_id (ctx, argc, argv, idx, err);
  if (r < 0)
    return r;
  o.id = ctx->id;
  return container_update (&ctx->g, &o, err);
}
