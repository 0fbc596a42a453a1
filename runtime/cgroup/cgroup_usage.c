/* What a finished container used, for the sandbox's record: CPU time, peak
 * memory, forks refused at the pids limit, and whether the kernel's OOM
 * killer struck in it (v2:
 * memory.events oom_kill; v1: memory.oom_control oom_kill, with a failcnt
 * at the limit as the sign on kernels older than 4.13 that lack it). */
#include <stdlib.h>
#include <string.h>

#include "cgroup_internal.h"

int
cgroup_usage (struct cgroup *cg, struct cgroup_usage *ret)
{
  struct cgroup_stats st;
  struct cgroup_hier *mem = cgroup_hier_for (cg, CG_MEMORY);
  struct cgroup_hier *pids = cgroup_hier_for (cg, CG_PIDS);
  uint64_t v = 0;

  memset (&st, 0, sizeof (st));
  memset (ret, 0, sizeof (*ret));
  cg->backend->stats (cg, &st);
  ret->cpu_ns = st.cpu_total_ns;
  ret->cpu_user_ns = st.cpu_user_ns;
  ret->cpu_system_ns = st.cpu_kernel_ns;
  ret->peak_memory = st.mem_max_usage;
  if (mem && mem->fd >= 0)
    {
      if (mem->ctrls & CG_UNIFIED)
        ret->oom_kills
            = cg_read_keyed (mem->fd, "memory.events", "oom_kill", &v) == 0 ? v
                                                                            : 0;
      else if (cg_read_keyed (mem->fd, "memory.oom_control", "oom_kill", &v)
               == 0)
        ret->oom_kills = v;
      else
        ret->oom_kills = st.mem_failcnt > 0 && st.mem_limit > 0
                                 && st.mem_max_usage >= st.mem_limit
                             ? 1
                             : 0;
    }
  if (pids && pids->fd >= 0
      && cg_read_keyed (pids->fd, "pids.events", "max", &v) == 0)
    ret->pids_limit_hits = v;
  free (st.percpu_ns);
  free (st.raw);
  return 0;
}
