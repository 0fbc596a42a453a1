/* --debug: after create, what the container got, read back from the
 * kernel and the state dir rather than from what moat meant to do. Costs
 * nothing without --debug. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "bpf/bpf.h"
#include "cgroup/cgroup.h"
#include "container_internal.h"
#include "log/log.h"
#include "../lib/util.h"

/* The programs attached to a cgroup for one attach type (BPF_PROG_QUERY). */
static void
debug_bpf (int cgfd, enum bpf_attach_type type, const char *name)
{
  uint32_t ids[8] = { 0 };
  uint32_t n = 8;
  int r = bpf_cgroup_query (cgfd, type, ids, &n);

  if (r < 0)
    {
      log_debug ("bpf %s: query failed: %s", name, strerror (-r));
      return;
    }
  log_debug ("bpf %s: %u program(s)%s%u", name, n, n ? ", first id " : "",
             ids[0]);
}

void
container_debug_report (const struct moat_globals *g, const char *id)
{
  cleanup_close int dirfd = -1;
  cleanup_state struct container_state *st = NULL;
  cleanup_decision struct decision *d = NULL;
  struct cgroup *cg = NULL;

  if (!log_debug_enabled ()
      || container_load (g, id, false, NULL, &dirfd, &st, NULL) < 0)
    return;
  log_debug ("%s: init pid %d, cgroup %s, network guard %s", id, st->pid,
             st->cgroup ? st->cgroup : "-", st->netguard ? st->netguard : "-");
  if (container_load_decision (g, dirfd, st, &d, NULL) == 0)
    for (int t = 0; t < NS__MAX; t++)
      if (d->spec->linux_.ns[t].present)
        log_debug ("%s: namespace %s: %s", id, ns_type_name (t),
                   d->spec->linux_.ns[t].path ? d->spec->linux_.ns[t].path
                                              : "new");
  if (st->cgroup && cgroup_open (st->cgroup, &cg, NULL) == 0)
    {
      int fd = cgroup_unified_fd (cg);
      if (fd >= 0)
        {
          debug_bpf (fd, BPF_CGROUP_INET_INGRESS, "cgroup_skb/ingress");
          debug_bpf (fd, BPF_CGROUP_INET_EGRESS, "cgroup_skb/egress");
          debug_bpf (fd, BPF_CGROUP_INET4_CONNECT, "cgroup/connect4");
          debug_bpf (fd, BPF_CGROUP_INET6_CONNECT, "cgroup/connect6");
          debug_bpf (fd, BPF_CGROUP_UDP4_SENDMSG, "cgroup/sendmsg4");
          debug_bpf (fd, BPF_CGROUP_UDP6_SENDMSG, "cgroup/sendmsg6");
        }
      else
        log_debug ("%s: no cgroup v2 hierarchy: no BPF programs", id);
      cgroup_free (cg);
    }
}
