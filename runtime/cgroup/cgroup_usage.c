/* What a finished container used, for the sandbox's record: CPU time, peak
 * memory, forks refused at the pids limit, and whether the kernel's OOM
 * killer struck in it (v2:
 * memory.events oom_kill; v1: memory.oom_control oom_kill, with a failcnt
 * at the limit as the sign on kernels older than 4.13 that lack it).
 * Only the files that hold those figures, each read once: a record comes
 * at the end of every sandbox and session exec, and the full statistics
 * (memory.stat above all, which makes the kernel flush its counters) are
 * for `events --stats`. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_internal.h"
#include "../../lib/util.h"

/* "key value" lines: each of keys[] found sets vals[] (left as they are
 * otherwise). */
static void
read_keys (int dirfd, const char *file, const char *const *keys, uint64_t *vals,
           size_t n)
{
  cleanup_free char *text = NULL;

  if (cg_read (dirfd, file, &text) < 0)
    return;
  for (char *line = text, *end; line && *line; line = end)
    {
      char *sp = strchr (line, ' ');
      end = strchr (line, '\n');
      if (end)
        *end++ = '\0';
      if (sp == NULL)
        continue;
      *sp = '\0';
      for (size_t i = 0; i < n; i++)
        if (strcmp (line, keys[i]) == 0)
          parse_uint64 (sp + 1, &vals[i]);
    }
}

static void
usage_v2 (struct cgroup *cg, struct cgroup_usage *ret)
{
  static const char *const cpu_keys[]
      = { "usage_usec", "user_usec", "system_usec" };
  static const char *const oom_key[] = { "oom_kill" };
  struct cgroup_hier *h = cgroup_hier_for (cg, CG_UNIFIED);
  uint64_t cpu[3] = { 0, 0, 0 };

  if (h == NULL || h->fd < 0)
    return;
  read_keys (h->fd, "cpu.stat", cpu_keys, cpu, 3);
  ret->cpu_ns = cpu[0] * 1000;
  ret->cpu_user_ns = cpu[1] * 1000;
  ret->cpu_system_ns = cpu[2] * 1000;
  cg_read_u64 (h->fd, "memory.peak", &ret->peak_memory);
  read_keys (h->fd, "memory.events", oom_key, &ret->oom_kills, 1);
}

static void
usage_v1 (struct cgroup *cg, struct cgroup_usage *ret)
{
  static const char *const cpu_keys[] = { "user", "system" };
  static const char *const oom_key[] = { "oom_kill" };
  struct cgroup_hier *acct = cgroup_hier_for (cg, CG_CPUACCT);
  struct cgroup_hier *mem = cgroup_hier_for (cg, CG_MEMORY);
  long ticks = sysconf (_SC_CLK_TCK);

  if (acct && acct->fd >= 0)
    {
      uint64_t t[2] = { 0, 0 };
      cg_read_u64 (acct->fd, "cpuacct.usage", &ret->cpu_ns);
      read_keys (acct->fd, "cpuacct.stat", cpu_keys, t, 2);
      if (ticks > 0)
        {
          ret->cpu_user_ns = t[0] * (1000000000ull / (uint64_t)ticks);
          ret->cpu_system_ns = t[1] * (1000000000ull / (uint64_t)ticks);
        }
    }
  /* A hybrid host may hold memory on its cgroup2 mount. */
  if (mem && mem->fd >= 0 && (mem->ctrls & CG_UNIFIED))
    {
      cg_read_u64 (mem->fd, "memory.peak", &ret->peak_memory);
      read_keys (mem->fd, "memory.events", oom_key, &ret->oom_kills, 1);
    }
  else if (mem && mem->fd >= 0)
    {
      uint64_t oom = UINT64_MAX, failcnt = 0, limit = 0;
      cg_read_u64 (mem->fd, "memory.max_usage_in_bytes", &ret->peak_memory);
      read_keys (mem->fd, "memory.oom_control", oom_key, &oom, 1);
      if (oom != UINT64_MAX)
        ret->oom_kills = oom;
      else if (cg_read_u64 (mem->fd, "memory.failcnt", &failcnt) == 0
               && cg_read_u64 (mem->fd, "memory.limit_in_bytes", &limit) == 0)
        ret->oom_kills
            = failcnt > 0 && limit > 0 && ret->peak_memory >= limit ? 1 : 0;
    }
}

int
cgroup_usage (struct cgroup *cg, struct cgroup_usage *ret)
{
  static const char *const max_key[] = { "max" };
  struct cgroup_hier *pids = cgroup_hier_for (cg, CG_PIDS);

  memset (ret, 0, sizeof (*ret));
  if (cg->backend == &cgroup_backend_v2)
    usage_v2 (cg, ret);
  else
    usage_v1 (cg, ret);
  if (pids && pids->fd >= 0)
    read_keys (pids->fd, "pids.events", max_key, &ret->pids_limit_hits, 1);
  return 0;
}
