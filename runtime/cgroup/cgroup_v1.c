/* cgroup v1 controller files (also every limit on a hybrid host). Zero
 * means "unchanged" for every value an engine may send as zero: Docker's
 * `update` JSON carries zeros for the fields the user did not set. */
#include "cgroup_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/util.h"

static struct cgroup_hier *
need (struct cgroup *cg, unsigned ctrl, const char *name,
      struct moat_error **err)
{
  struct cgroup_hier *h = cgroup_hier_for (cg, ctrl);
  if (h == NULL)
    moat_fail (err, ENOTSUP, "the %s controller is not available", name);
  return h;
}

static bool
is_blank (const char *s)
{
  return s[strspn (s, " \n")] == '\0';
}

/* A new v1 cpuset starts with no cpus and no mems, and no task can join
 * it until they are set: inherit the parent's where empty (one just made
 * is, or holds the parent's already where clone_children is set). */
static int
inherit_cpuset_file (struct cgroup_hier *h, int parent_fd, int dir_fd,
                     const char *file, struct moat_error **err)
{
  cleanup_free char *mine = NULL, *parents = NULL;
  int r;
  if (cg_read (dir_fd, file, &mine) == 0 && !is_blank (mine))
    return 0;
  r = cg_read (parent_fd, file, &parents);
  if (r < 0)
    return moat_fail (err, -r, "reading %s", file);
  r = cg_write_fd (dir_fd, h->fs, file, parents);
  if (r < 0)
    return moat_fail (err, -r, "writing %s", file);
  return 0;
}

static int
v1_prepare_dir (struct cgroup_hier *h, int parent_fd, int dir_fd, bool is_leaf,
                bool made, struct moat_error **err)
{
  int r;
  /* A controller held by the cgroup2 mount of a hybrid host must be
   * enabled for the children of every ancestor, as on v2. */
  if ((h->ctrls & CG_UNIFIED) && (h->ctrls & CG_HUGETLB) && !is_leaf)
    cg_enable_v2_controller (dir_fd, h->fs, "hugetlb");
  if (!(h->ctrls & CG_CPUSET) || parent_fd < 0)
    return 0;
  /* A parent moat made hands its cpus and mems to each child as the
   * kernel makes it (clone_children), so that a create at 200 running
   * neither reads them nor writes them: each write of cpuset.cpus is
   * checked against every sibling. */
  if (made && !is_leaf)
    (void)cg_write_fd (dir_fd, h->fs, "cgroup.clone_children", "1");
  r = inherit_cpuset_file (h, parent_fd, dir_fd, "cpuset.cpus", err);
  if (r == 0)
    r = inherit_cpuset_file (h, parent_fd, dir_fd, "cpuset.mems", err);
  return r;
}

/* Two values the kernel checks against each other (memory and memsw,
 * period and quota); zero leaves one alone. */
static int
write_linked (struct cgroup_hier *h, const char *file1, int64_t value1,
              const char *file2, int64_t value2, struct moat_error **err)
{
  char a[32], b[32];
  snprintf (a, sizeof (a), "%" PRId64, value1);
  snprintf (b, sizeof (b), "%" PRId64, value2);
  if (value1 && value2)
    return cg_write_pair (h, file1, a, file2, b, err);
  if (value1)
    return cg_write (h, file1, a, err);
  if (value2)
    return cg_write (h, file2, b, err);
  return 0;
}

static int
apply_memory (struct cgroup *cg, const struct spec_memory *m,
              struct moat_error **err)
{
  static const char limit_file[] = "memory.limit_in_bytes";
  static const char memsw_file[] = "memory.memsw.limit_in_bytes";
  int64_t limit = m->has_limit ? m->limit : 0;
  int64_t swap = m->has_swap ? m->swap : 0;
  bool reservation = m->has_reservation && m->reservation != 0;
  bool swappiness = m->has_swappiness && m->swappiness != UINT64_MAX;
  struct cgroup_hier *h;
  bool memsw;
  int r = 0;

  if (!limit && !swap && !reservation && !swappiness && !m->disable_oom_killer)
    return 0;
  h = need (cg, CG_MEMORY, "memory", err);
  if (h == NULL)
    return -ENOTSUP;
  memsw = cg_has_file (h, memsw_file);
  /* Unlimited memory with swap left alone: memsw may not stay below it. */
  if (limit == -1 && swap == 0 && memsw)
    swap = -1;
  /* Without swap accounting (no memsw file) there is nothing to cap. */
  r = write_linked (h, limit_file, limit, memsw_file, memsw ? swap : 0, err);
  if (r == 0 && reservation)
    r = cg_writef (h, "memory.soft_limit_in_bytes", err, "%" PRId64,
                   m->reservation);
  if (r == 0 && swappiness)
    {
      if (m->swappiness > 100)
        return moat_fail (err, EINVAL,
                          "memory.swappiness: %" PRIu64 " is not in 0-100",
                          m->swappiness);
      r = cg_writef (h, "memory.swappiness", err, "%" PRIu64, m->swappiness);
    }
  if (r == 0 && m->disable_oom_killer)
    r = cg_write (h, "memory.oom_control", "1", err);
  return r;
}

static int
apply_cpu (struct cgroup *cg, const struct spec_cpu *c, struct moat_error **err)
{
  uint64_t shares = c->has_shares ? c->shares : 0;
  uint64_t period = c->has_period ? c->period : 0;
  int64_t quota = c->has_quota ? c->quota : 0;
  uint64_t rt_period = c->has_realtime_period ? c->realtime_period : 0;
  int64_t rt_runtime = c->has_realtime_runtime ? c->realtime_runtime : 0;
  struct cgroup_hier *h;
  int r = 0;

  if (!shares && !period && !quota && !rt_period && !rt_runtime && !c->has_burst
      && !c->has_idle)
    return 0;
  h = need (cg, CG_CPU, "cpu", err);
  if (h == NULL)
    return -ENOTSUP;
  if (shares)
    r = cg_writef (h, "cpu.shares", err, "%" PRIu64, shares);
  if (r == 0)
    r = write_linked (h, "cpu.cfs_period_us", (int64_t)period,
                      "cpu.cfs_quota_us", quota, err);
  if (r == 0 && c->has_burst)
    r = cg_writef (h, "cpu.cfs_burst_us", err, "%" PRIu64, c->burst);
  if (r == 0 && c->has_idle)
    r = cg_writef (h, "cpu.idle", err, "%" PRId64, c->idle);
  if (r == 0)
    r = write_linked (h, "cpu.rt_period_us", (int64_t)rt_period,
                      "cpu.rt_runtime_us", rt_runtime, err);
  return r;
}

static int
apply_cpuset (struct cgroup *cg, const struct spec_cpu *c,
              struct moat_error **err)
{
  bool cpus = c->cpus && *c->cpus, mems = c->mems && *c->mems;
  struct cgroup_hier *h;
  int r = 0;

  if (!cpus && !mems)
    return 0;
  h = need (cg, CG_CPUSET, "cpuset", err);
  if (h == NULL)
    return -ENOTSUP;
  if (cpus)
    r = cg_check_cpuset ("cpu.cpus", c->cpus, err);
  if (r == 0 && cpus)
    r = cg_write (h, "cpuset.cpus", c->cpus, err);
  if (r == 0 && mems)
    r = cg_check_cpuset ("cpu.mems", c->mems, err);
  if (r == 0 && mems)
    r = cg_write (h, "cpuset.mems", c->mems, err);
  return r;
}

#define DEVICE_RULE_MAX 80

static int
format_device_rule (const struct spec_device_rule *d, char *buf, size_t len,
                    struct moat_error **err)
{
  char major[24] = "*", minor[24] = "*";
  const char *access = d->access[0] ? d->access : "rwm";

  if (!strchr ("acb", d->type) || access[strspn (access, "rwm")] != '\0')
    return moat_fail (err, EINVAL, "devices: invalid rule (type `%c`)",
                      d->type);
  if (d->major >= 0)
    snprintf (major, sizeof (major), "%" PRId64, d->major);
  if (d->minor >= 0)
    snprintf (minor, sizeof (minor), "%" PRId64, d->minor);
  snprintf (buf, len, "%c %s:%s %s", d->type, major, minor, access);
  return 0;
}

/* Deny everything, then the rules in their order: the list is the whole
 * truth about device access, whatever the parent allowed. */
static int
apply_devices (struct cgroup *cg, const struct spec_resources *res,
               struct moat_error **err)
{
  size_t n = res->n_devices + 1, start = 0;
  cleanup_free char (*text)[DEVICE_RULE_MAX] = NULL;
  cleanup_free const char **rules = NULL;
  cleanup_free bool *allow = NULL;
  struct cgroup_hier *h;
  int r = 0;

  if (res->n_devices == 0)
    return 0;
  h = need (cg, CG_DEVICES, "devices", err);
  if (h == NULL)
    return -ENOTSUP;
  text = xcalloc (n, sizeof (*text));
  rules = xcalloc (n, sizeof (*rules));
  allow = xcalloc (n, sizeof (*allow));
  rules[0] = "a";
  for (size_t i = 1; r == 0 && i < n; i++)
    {
      const struct spec_device_rule *d = &res->devices[i - 1];
      r = format_device_rule (d, text[i], sizeof (text[i]), err);
      rules[i] = text[i];
      allow[i] = d->allow;
    }
  /* A run of rules for the same file goes through one open of it. */
  for (size_t i = 1; r == 0 && i <= n; i++)
    if (i == n || allow[i] != allow[start])
      {
        r = cg_write_each (h, allow[start] ? "devices.allow" : "devices.deny",
                           rules + start, i - start, err);
        start = i;
      }
  return r;
}

static int
v1_apply (struct cgroup *cg, const struct spec_resources *res,
          struct moat_error **err)
{
  struct cgroup_hier *h;
  int r;

  if (res->n_unified > 0)
    return moat_fail (err, EINVAL,
                      "linux.resources.unified requires cgroup v2");
  r = apply_memory (cg, &res->memory, err);
  if (r == 0)
    r = apply_cpu (cg, &res->cpu, err);
  if (r == 0)
    r = apply_cpuset (cg, &res->cpu, err);
  if (r == 0 && res->has_pids_limit && res->pids_limit != 0)
    {
      h = need (cg, CG_PIDS, "pids", err);
      if (h == NULL)
        return -ENOTSUP;
      if (res->pids_limit < 0)
        r = cg_write (h, "pids.max", "max", err);
      else
        r = cg_writef (h, "pids.max", err, "%" PRId64, res->pids_limit);
    }
  if (r == 0 && res->has_blkio_weight && res->blkio_weight != 0)
    r = cg_apply_blkio_weight (cg, cgroup_hier_for (cg, CG_BLKIO),
                               "blkio.bfq.weight", "blkio.weight",
                               res->blkio_weight, res->blkio_weight, err);
  if (r == 0)
    r = apply_devices (cg, res, err);
  if (r == 0 && (res->n_hugepage_limits || res->memory.has_limit))
    {
      h = cgroup_hier_for (cg, CG_HUGETLB);
      if (h == NULL && res->n_hugepage_limits)
        return moat_fail (err, ENOTSUP,
                          "linux.resources.hugepageLimits: the hugetlb "
                          "controller is not available");
      if (h)
        r = cg_apply_hugetlb (
            h, res, (h->ctrls & CG_UNIFIED) ? "max" : "limit_in_bytes", err);
    }
  return r;
}

static int
v1_freeze (struct cgroup *cg, bool frozen, struct moat_error **err)
{
  struct cgroup_hier *h = need (cg, CG_FREEZER, "freezer", err);
  unsigned tries = 0;

  if (h == NULL)
    return -ENOTSUP;
  if (!frozen)
    return cg_write (h, "freezer.state", "THAWED", err);
  /* FREEZING can stall while tasks fork; asking again moves it on. */
  for (;;)
    {
      cleanup_free char *state = NULL;
      int r = cg_write (h, "freezer.state", "FROZEN", err);
      if (r < 0)
        return r;
      r = cg_read (h->fd, "freezer.state", &state);
      if (r < 0)
        return moat_fail (err, -r, "reading freezer.state");
      if (strncmp (state, "FROZEN", strlen ("FROZEN")) == 0)
        return 0;
      if (!cg_backoff (&tries))
        {
          cg_write_fd (h->fd, h->fs, "freezer.state", "THAWED");
          state[strcspn (state, "\n")] = '\0';
          return moat_fail (err, EBUSY, "freezer.state: still %s", state);
        }
    }
}

static int
v1_is_frozen (struct cgroup *cg, bool *ret, struct moat_error **err)
{
  struct cgroup_hier *h = cgroup_hier_for (cg, CG_FREEZER);
  cleanup_free char *state = NULL;
  int r;

  *ret = false;
  if (h == NULL)
    return 0;
  r = cg_read (h->fd, "freezer.state", &state);
  if (r < 0)
    return moat_fail (err, -r, "reading freezer.state");
  *ret = strncmp (state, "FROZEN", strlen ("FROZEN")) == 0;
  return 0;
}

static void
stats_cpu (struct cgroup *cg, struct cgroup_stats *st)
{
  struct cgroup_hier *acct = cgroup_hier_for (cg, CG_CPUACCT);
  struct cgroup_hier *cpu = cgroup_hier_for (cg, CG_CPU);
  cleanup_free char *percpu = NULL;
  long ticks = sysconf (_SC_CLK_TCK);
  uint64_t v;

  if (acct)
    {
      cg_read_u64 (acct->fd, "cpuacct.usage", &st->cpu_total_ns);
      if (ticks > 0
          && cg_read_keyed (acct->fd, "cpuacct.stat", "user", &v) == 0)
        st->cpu_user_ns = v * (1000000000ull / (uint64_t)ticks);
      if (ticks > 0
          && cg_read_keyed (acct->fd, "cpuacct.stat", "system", &v) == 0)
        st->cpu_kernel_ns = v * (1000000000ull / (uint64_t)ticks);
      if (cg_read (acct->fd, "cpuacct.usage_percpu", &percpu) == 0)
        for (char *save = NULL, *w = strtok_r (percpu, " \n", &save); w;
             w = strtok_r (NULL, " \n", &save))
          if (parse_uint64 (w, &v) == 0)
            {
              st->percpu_ns
                  = xrealloc (st->percpu_ns, (st->n_percpu + 1) * sizeof (v));
              st->percpu_ns[st->n_percpu++] = v;
            }
    }
  if (cpu)
    {
      cg_read_keyed (cpu->fd, "cpu.stat", "nr_periods", &st->periods);
      cg_read_keyed (cpu->fd, "cpu.stat", "nr_throttled",
                     &st->throttled_periods);
      cg_read_keyed (cpu->fd, "cpu.stat", "throttled_time", &st->throttled_ns);
    }
}

static void
v1_stats (struct cgroup *cg, struct cgroup_stats *st)
{
  struct cgroup_hier *mem = cgroup_hier_for (cg, CG_MEMORY);

  stats_cpu (cg, st);
  if (mem)
    {
      cg_read_u64 (mem->fd, "memory.usage_in_bytes", &st->mem_usage);
      cg_read_u64 (mem->fd, "memory.limit_in_bytes", &st->mem_limit);
      cg_read_u64 (mem->fd, "memory.max_usage_in_bytes", &st->mem_max_usage);
      cg_read_u64 (mem->fd, "memory.failcnt", &st->mem_failcnt);
      cg_read_u64 (mem->fd, "memory.memsw.usage_in_bytes", &st->swap_usage);
      cg_read_u64 (mem->fd, "memory.memsw.limit_in_bytes", &st->swap_limit);
      cg_read_u64 (mem->fd, "memory.memsw.max_usage_in_bytes",
                   &st->swap_max_usage);
      cg_read_u64 (mem->fd, "memory.memsw.failcnt", &st->swap_failcnt);
      cg_stats_raw (mem->fd, "memory.stat", st);
      st->mem_cache = cg_stats_raw_get (st, "total_cache");
      if (st->mem_cache == 0)
        st->mem_cache = cg_stats_raw_get (st, "cache");
    }
  cg_stats_pids (cg, st);
}

const struct cgroup_backend cgroup_backend_v1 = {
  .prepare_dir = v1_prepare_dir,
  .apply = v1_apply,
  .freeze = v1_freeze,
  .is_frozen = v1_is_frozen,
  .stats = v1_stats,
};
