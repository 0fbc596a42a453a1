/* cgroup v2 controller files, on a host where cgroup2 is the only
 * hierarchy. Values convert from the OCI (v1-shaped) fields as runc
 * converts them, so the same config.json gives the same limits. */
#include "cgroup_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/util.h"

/* What a container's cgroup needs from its ancestors' subtree_control. */
static const char *const wanted_controllers[]
    = { "memory", "pids", "cpu", "cpuset", "io", "hugetlb" };

static bool
has_all_words (const char *list, const char *const *words, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (!cg_has_word (list, words[i]))
      return false;
  return true;
}

static void
enable_controllers (int dir_fd, const struct cgroup_fs *fs)
{
  cleanup_free char *available = NULL, *enabled = NULL;
  char request[128] = "";
  size_t n = sizeof (wanted_controllers) / sizeof (wanted_controllers[0]);

  if (cg_read (dir_fd, "cgroup.subtree_control", &enabled) < 0)
    enabled = xstrdup ("");
  /* Enabled already (every create after the first): the list of those
   * available is not read. */
  if (has_all_words (enabled, wanted_controllers, n))
    return;
  if (cg_read (dir_fd, "cgroup.controllers", &available) < 0)
    return;
  for (size_t i = 0; i < n; i++)
    if (cg_has_word (available, wanted_controllers[i])
        && !cg_has_word (enabled, wanted_controllers[i]))
      {
        size_t len = strlen (request);
        snprintf (request + len, sizeof (request) - len, "%s+%s",
                  len ? " " : "", wanted_controllers[i]);
      }
  if (request[0] == '\0')
    return;
  if (cg_write_fd (dir_fd, fs, "cgroup.subtree_control", request) == 0)
    return;
  /* One refused controller (an ancestor with processes, a threaded
   * subtree) must not cost the others; a limit that then has no file fails
   * with the file's name. */
  for (size_t i = 0; i < n; i++)
    if (cg_has_word (available, wanted_controllers[i]))
      {
        char one[32];
        snprintf (one, sizeof (one), "+%s", wanted_controllers[i]);
        cg_write_fd (dir_fd, fs, "cgroup.subtree_control", one);
      }
}

void
cg_enable_v2_controller (int dir_fd, const struct cgroup_fs *fs,
                         const char *name)
{
  cleanup_free char *available = NULL, *enabled = NULL;
  char request[32];

  /* subtree_control first: once enabled (every create after the first),
   * cgroup.controllers is not read. */
  if (cg_read (dir_fd, "cgroup.subtree_control", &enabled) == 0
      && cg_has_word (enabled, name))
    return;
  if (cg_read (dir_fd, "cgroup.controllers", &available) < 0
      || !cg_has_word (available, name))
    return;
  snprintf (request, sizeof (request), "+%s", name);
  cg_write_fd (dir_fd, fs, "cgroup.subtree_control", request);
}

/* Every ancestor, not the leaf: a cgroup with controllers enabled for
 * its children may hold no processes itself. */
static int
v2_prepare_dir (struct cgroup_hier *h, int parent_fd, int dir_fd, bool is_leaf,
                bool made, struct moat_error **err)
{
  (void)made;
  if (!is_leaf)
    enable_controllers (dir_fd, h->fs);
  return 0;
}

static void
format_limit (char *buf, size_t len, int64_t v)
{
  if (v < 0)
    snprintf (buf, len, "max");
  else
    snprintf (buf, len, "%" PRId64, v);
}

/* v1's memsw is memory+swap; v2's swap.max is swap alone. */
static int
swap_max_value (struct cgroup_hier *h, int64_t limit, int64_t swap, char *buf,
                size_t len, struct moat_error **err)
{
  uint64_t current;
  if (swap == -1 || (limit == -1 && swap == 0))
    {
      snprintf (buf, len, "max");
      return 0;
    }
  if (limit == 0 && cg_read_u64 (h->fd, "memory.max", &current) == 0
      && current < INT64_MAX)
    limit = (int64_t)current;
  if (limit <= 0)
    return moat_fail (err, EINVAL,
                      "memory.swap: cannot set a swap limit without a memory "
                      "limit");
  if (swap < limit)
    return moat_fail (err, EINVAL,
                      "memory.swap (%" PRId64 ") must be at least "
                      "memory.limit (%" PRId64 ")",
                      swap, limit);
  snprintf (buf, len, "%" PRId64, swap - limit);
  return 0;
}

static int
apply_memory (struct cgroup_hier *h, const struct spec_memory *m,
              struct moat_error **err)
{
  int64_t limit = m->has_limit ? m->limit : 0;
  int64_t swap = m->has_swap ? m->swap : 0;
  char buf[32];
  int r = 0;

  if (limit)
    {
      format_limit (buf, sizeof (buf), limit);
      r = cg_write (h, "memory.max", buf, err);
    }
  /* No swap.max file: the kernel accounts no swap, nothing to cap. */
  if (r == 0 && (swap || limit == -1) && cg_has_file (h, "memory.swap.max"))
    {
      r = swap_max_value (h, limit, swap, buf, sizeof (buf), err);
      if (r == 0)
        r = cg_write (h, "memory.swap.max", buf, err);
    }
  if (r == 0 && m->has_reservation && m->reservation != 0)
    {
      format_limit (buf, sizeof (buf), m->reservation);
      r = cg_write (h, "memory.low", buf, err);
    }
  /* swappiness and disableOOMKiller have no v2 file; runc ignores them
   * there too. */
  return r;
}

/* runc's mapping of cpu.shares [2, 262144] onto cpu.weight [1, 10000]. */
static uint64_t
shares_to_weight (uint64_t shares)
{
  if (shares < 2)
    shares = 2;
  if (shares > 262144)
    shares = 262144;
  return 1 + ((shares - 2) * 9999) / 262142;
}

static int
apply_cpu_max (struct cgroup_hier *h, const struct spec_cpu *c,
               struct moat_error **err)
{
  int64_t quota = c->has_quota ? c->quota : 0;
  uint64_t period = c->has_period ? c->period : 0;
  cleanup_free char *current = NULL;
  char quota_s[32] = "max", period_s[32] = "";
  char *save = NULL, *w;

  if (!quota && !period)
    return 0;
  /* cpu.max holds both: keep the half this request leaves alone. */
  if (cg_read (h->fd, "cpu.max", &current) == 0)
    {
      w = strtok_r (current, " \n", &save);
      if (w)
        snprintf (quota_s, sizeof (quota_s), "%s", w);
      w = strtok_r (NULL, " \n", &save);
      if (w)
        snprintf (period_s, sizeof (period_s), "%s", w);
    }
  if (quota)
    format_limit (quota_s, sizeof (quota_s), quota);
  if (period)
    snprintf (period_s, sizeof (period_s), "%" PRIu64, period);
  if (period_s[0])
    return cg_writef (h, "cpu.max", err, "%s %s", quota_s, period_s);
  return cg_write (h, "cpu.max", quota_s, err);
}

static int
apply_cpu (struct cgroup_hier *h, const struct spec_cpu *c,
           struct moat_error **err)
{
  int r = 0;
  if ((c->has_realtime_period && c->realtime_period)
      || (c->has_realtime_runtime && c->realtime_runtime))
    return moat_fail (err, EINVAL,
                      "cpu.realtimePeriod/realtimeRuntime require cgroup v1");
  if (c->has_shares && c->shares)
    r = cg_writef (h, "cpu.weight", err, "%" PRIu64,
                   shares_to_weight (c->shares));
  if (r == 0)
    r = apply_cpu_max (h, c, err);
  if (r == 0 && c->has_burst)
    r = cg_writef (h, "cpu.max.burst", err, "%" PRIu64, c->burst);
  if (r == 0 && c->has_idle)
    r = cg_writef (h, "cpu.idle", err, "%" PRId64, c->idle);
  if (r == 0 && c->cpus && *c->cpus)
    {
      r = cg_check_cpuset ("cpu.cpus", c->cpus, err);
      if (r == 0)
        r = cg_write (h, "cpuset.cpus", c->cpus, err);
    }
  if (r == 0 && c->mems && *c->mems)
    {
      r = cg_check_cpuset ("cpu.mems", c->mems, err);
      if (r == 0)
        r = cg_write (h, "cpuset.mems", c->mems, err);
    }
  return r;
}

/* linux.resources.unified names files in the container's cgroup: a plain
 * "controller.knob" name, never a path, and never the files that decide
 * membership or structure (those are moat's). */
static int
check_unified_key (const char *key, struct moat_error **err)
{
  static const char allowed_chars[] = "abcdefghijklmnopqrstuvwxyz"
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789._-";
  const char *dot = strchr (key, '.');
  if (key[0] == '\0' || key[strspn (key, allowed_chars)] != '\0' || !dot
      || dot == key || key[0] == '.')
    return moat_fail (err, EINVAL,
                      "linux.resources.unified: invalid file name `%s`", key);
  if (strncmp (key, "cgroup.", strlen ("cgroup.")) == 0
      && strcmp (key, "cgroup.max.depth") != 0
      && strcmp (key, "cgroup.max.descendants") != 0)
    return moat_fail (err, EPERM,
                      "linux.resources.unified: `%s` may not be set", key);
  return 0;
}

static int
v2_apply (struct cgroup *cg, const struct spec_resources *res,
          struct moat_error **err)
{
  struct cgroup_hier *h = cgroup_hier_for (cg, CG_UNIFIED);
  int r;

  if (h == NULL)
    return moat_fail (err, ENOENT, "the cgroup2 directory is missing");
  r = apply_memory (h, &res->memory, err);
  if (r == 0)
    r = apply_cpu (h, &res->cpu, err);
  if (r == 0 && res->has_pids_limit && res->pids_limit != 0)
    {
      char buf[32];
      format_limit (buf, sizeof (buf), res->pids_limit);
      r = cg_write (h, "pids.max", buf, err);
    }
  if (r == 0 && res->has_blkio_weight && res->blkio_weight != 0)
    {
      /* bfq takes the v1 range as is; io.weight is [1, 10000]. */
      unsigned w = res->blkio_weight < 10 ? 10 : res->blkio_weight;
      r = cg_apply_blkio_weight (cg, h, "io.bfq.weight", "io.weight",
                                 res->blkio_weight, 1 + (w - 10) * 9999 / 990,
                                 err);
    }
  if (r == 0 && res->n_devices > 0)
    r = h->fs->attach_devices (h->fd, res->devices, res->n_devices, err);
  if (r == 0)
    r = cg_apply_hugetlb (h, res, "max", err);
  for (size_t i = 0; r == 0 && i < res->n_unified; i++)
    {
      r = check_unified_key (res->unified[i].key, err);
      if (r == 0)
        r = cg_write (h, res->unified[i].key, res->unified[i].value, err);
    }
  return r;
}

static int
v2_freeze (struct cgroup *cg, bool frozen, struct moat_error **err)
{
  struct cgroup_hier *h = cgroup_hier_for (cg, CG_UNIFIED);
  unsigned tries = 0;
  int r;

  if (h == NULL)
    return moat_fail (err, ENOENT, "the cgroup2 directory is missing");
  r = cg_write (h, "cgroup.freeze", frozen ? "1" : "0", err);
  if (r < 0 || !frozen)
    return r;
  /* Freezing completes asynchronously: cgroup.events says when. */
  for (;;)
    {
      uint64_t state = 0;
      if (cg_read_keyed (h->fd, "cgroup.events", "frozen", &state) == 0
          && state == 1)
        return 0;
      if (!cg_backoff (&tries))
        {
          cg_write_fd (h->fd, h->fs, "cgroup.freeze", "0");
          return moat_fail (err, EBUSY, "cgroup.events: not frozen in time");
        }
    }
}

static int
v2_is_frozen (struct cgroup *cg, bool *ret, struct moat_error **err)
{
  struct cgroup_hier *h = cgroup_hier_for (cg, CG_UNIFIED);
  uint64_t state = 0;
  *ret = h && cg_read_keyed (h->fd, "cgroup.events", "frozen", &state) == 0
         && state == 1;
  return 0;
}

static void
v2_stats (struct cgroup *cg, struct cgroup_stats *st)
{
  struct cgroup_hier *h = cgroup_hier_for (cg, CG_UNIFIED);
  uint64_t v = 0, swap = 0;

  if (h == NULL)
    return;
  if (cg_read_keyed (h->fd, "cpu.stat", "usage_usec", &v) == 0)
    st->cpu_total_ns = v * 1000;
  if (cg_read_keyed (h->fd, "cpu.stat", "user_usec", &v) == 0)
    st->cpu_user_ns = v * 1000;
  if (cg_read_keyed (h->fd, "cpu.stat", "system_usec", &v) == 0)
    st->cpu_kernel_ns = v * 1000;
  cg_read_keyed (h->fd, "cpu.stat", "nr_periods", &st->periods);
  cg_read_keyed (h->fd, "cpu.stat", "nr_throttled", &st->throttled_periods);
  if (cg_read_keyed (h->fd, "cpu.stat", "throttled_usec", &v) == 0)
    st->throttled_ns = v * 1000;

  cg_read_u64 (h->fd, "memory.current", &st->mem_usage);
  cg_read_u64 (h->fd, "memory.max", &st->mem_limit);
  cg_read_u64 (h->fd, "memory.peak", &st->mem_max_usage);
  cg_read_keyed (h->fd, "memory.events", "max", &st->mem_failcnt);
  /* runc reports v2 swap as memory+swap, the v1 memsw meaning. */
  if (cg_read_u64 (h->fd, "memory.swap.current", &swap) == 0)
    st->swap_usage = st->mem_usage + swap;
  if (cg_read_u64 (h->fd, "memory.swap.max", &swap) == 0)
    st->swap_limit = (swap == UINT64_MAX || st->mem_limit == UINT64_MAX)
                         ? UINT64_MAX
                         : st->mem_limit + swap;
  cg_stats_raw (h->fd, "memory.stat", st);
  st->mem_cache = cg_stats_raw_get (st, "file");
  cg_stats_pids (cg, st);
}

const struct cgroup_backend cgroup_backend_v2 = {
  .prepare_dir = v2_prepare_dir,
  .apply = v2_apply,
  .freeze = v2_freeze,
  .is_frozen = v2_is_frozen,
  .stats = v2_stats,
};
