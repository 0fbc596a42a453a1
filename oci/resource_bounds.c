/* G7 on linux.resources, from bounds the policy set: the lower of the
 * spec's value and the bound wins. The policy applies them at create
 * (profile_harden_resources); `moat update` applies the bounds its
 * decision saved, without the policy. */
#include "resource_bounds.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"

/* The devices a container may use: the cgroup allow rules, and (node set)
 * the only linux.devices entries kept. */
const struct safe_device safe_devices[] = {
  { "/dev/null", 'c', 1, 3, true },      { "/dev/zero", 'c', 1, 5, true },
  { "/dev/full", 'c', 1, 7, true },      { "/dev/random", 'c', 1, 8, true },
  { "/dev/urandom", 'c', 1, 9, true },   { "/dev/tty", 'c', 5, 0, true },
  { "/dev/console", 'c', 5, 1, false },  { "/dev/ptmx", 'c', 5, 2, true },
  { "/dev/pts/*", 'c', 136, -1, false },
};
const size_t n_safe_devices = sizeof (safe_devices) / sizeof (safe_devices[0]);

void
spec_filter_kv (struct spec_kv *kv, size_t *n,
                bool (*allowed) (const char *key), const char *json_path,
                struct override_list *ov)
{
  size_t kept = 0;

  for (size_t i = 0; i < *n; i++)
    {
      if (allowed (kv[i].key))
        {
          kv[kept++] = kv[i];
          continue;
        }
      cleanup_free char *path = xasprintf ("%s.%s", json_path, kv[i].key);
      override_list_add (ov, OVERRIDE_REMOVED, path, kv[i].value, NULL);
      free (kv[i].key);
      free (kv[i].value);
    }
  *n = kept;
}

/* cgroup v2 files a config may still set through linux.resources.unified:
 * those that cannot raise a limit the profile sets (pids.max, memory.max,
 * memory.swap.max and cpu.max would bypass G7; cgroup.* are not limits). */
static const char *const allowed_unified[] = {
  "memory.high",
  "memory.low",
  "memory.min",
  "memory.oom.group",
  "memory.swap.high",
  "cpu.weight",
  "cpu.weight.nice",
  "cpu.idle",
  "cpu.uclamp.min",
  "cpu.uclamp.max",
  "io.weight",
  "io.bfq.weight",
  "io.max",
  "io.latency",
  "hugetlb.*.max",
  "hugetlb.*.rsvd.max",
  "cpuset.cpus",
  "cpuset.mems",
  "rdma.max",
  "misc.max",
  NULL,
};

static char *
limit_text (bool has, int64_t v)
{
  return has && v > 0 ? xasprintf ("%" PRId64, v) : xstrdup ("unlimited");
}

/* <= 0 means unlimited for pids and memory alike. */
static void
cap_limit (bool *has, int64_t *v, int64_t cap, bool create, const char *path,
           struct override_list *ov)
{
  cleanup_free char *asked = NULL, *enforced = NULL;

  if (!create && !*has)
    return;
  if (*has && *v > 0 && *v <= cap)
    return;
  asked = limit_text (*has, *v);
  enforced = xasprintf ("%" PRId64, cap);
  *has = true;
  *v = cap;
  override_list_add (ov, OVERRIDE_CHANGED, path, asked, enforced);
}

/* OCI's memory.swap is memory plus swap: equal to the limit = no swap. */
static void
harden_memory (struct spec_memory *m, const struct resource_bounds *p,
               bool create, struct override_list *ov)
{
  cap_limit (&m->has_limit, &m->limit, p->memory_limit, create,
             "linux.resources.memory.limit", ov);
  if (m->has_limit && !(m->has_swap && m->swap == m->limit))
    {
      cleanup_free char *asked
          = m->has_swap ? limit_text (true, m->swap) : xstrdup ("unset");
      cleanup_free char *enforced = xasprintf ("%" PRId64, m->limit);
      override_list_add (ov, OVERRIDE_CHANGED, "linux.resources.memory.swap",
                         asked, enforced);
      m->has_swap = true;
      m->swap = m->limit;
    }
  else if (!m->has_limit && m->has_swap)
    {
      /* update without a new limit: swap stays equal to the current one */
      cleanup_free char *asked = limit_text (true, m->swap);
      override_list_add (ov, OVERRIDE_REMOVED, "linux.resources.memory.swap",
                         asked, NULL);
      m->has_swap = false;
    }
  if (m->has_limit && m->has_reservation && m->reservation > m->limit)
    {
      cleanup_free char *asked = xasprintf ("%" PRId64, m->reservation);
      cleanup_free char *enforced = xasprintf ("%" PRId64, m->limit);
      override_list_add (ov, OVERRIDE_CHANGED,
                         "linux.resources.memory.reservation", asked, enforced);
      m->reservation = m->limit;
    }
}

/* Compares CPU counts (quota/period), keeping the config's period where the
 * profile's share can be expressed in it. The period is always made explicit
 * so the quota is read against the period it was checked with. */
static void
harden_cpu (struct spec_cpu *c, const struct resource_bounds *p, bool create,
            struct override_list *ov)
{
  uint64_t period;
  unsigned __int128 allowed;
  cleanup_free char *asked = NULL, *enforced = NULL;

  if (!create && !c->has_quota && !c->has_period)
    return;
  period = c->has_period && c->period > 0 ? c->period : p->cpu_period;
  allowed = (unsigned __int128)p->cpu_quota * period / p->cpu_period;
  if (c->has_quota && c->quota >= MIN_CPU_QUOTA_US
      && (unsigned __int128)c->quota <= allowed)
    {
      c->has_period = true;
      c->period = period;
      return;
    }
  if (c->has_quota && c->quota > 0)
    asked = xasprintf ("%" PRId64 "/%" PRIu64, c->quota, period);
  else
    asked = xstrdup ("unlimited");
  if (allowed < MIN_CPU_QUOTA_US || allowed > INT64_MAX)
    {
      period = p->cpu_period;
      allowed = p->cpu_quota;
    }
  c->has_quota = c->has_period = true;
  c->quota = (int64_t)allowed;
  c->period = period;
  enforced = xasprintf ("%" PRId64 "/%" PRIu64, c->quota, c->period);
  override_list_add (ov, OVERRIDE_CHANGED, "linux.resources.cpu.quota", asked,
                     enforced);
}

static bool
unified_key_allowed (const char *key)
{
  if (strchr (key, '/') != NULL)
    return false;
  for (size_t i = 0; allowed_unified[i]; i++)
    if (fnmatch (allowed_unified[i], key, FNM_PATHNAME) == 0)
      return true;
  return false;
}

static bool
rule_within_safe (const struct spec_device_rule *r)
{
  if (!r->allow)
    return true;
  if (r->type != 'c' || r->major < 0)
    return false;
  for (size_t i = 0; i < n_safe_devices; i++)
    {
      const struct safe_device *d = &safe_devices[i];
      if (d->type == 'c' && d->major == r->major
          && (d->minor == -1 || (r->minor >= 0 && d->minor == r->minor)))
        return true;
    }
  return false;
}

static char *
rule_text (const struct spec_device_rule *r)
{
  cleanup_free char *major
      = r->major < 0 ? xstrdup ("*") : xasprintf ("%" PRId64, r->major);
  cleanup_free char *minor
      = r->minor < 0 ? xstrdup ("*") : xasprintf ("%" PRId64, r->minor);
  return xasprintf ("%c %s:%s %s", r->type ? r->type : 'a', major, minor,
                    r->access[0] ? r->access : "rwm");
}

/* The rules start as deny-all plus the safe devices (which is what
 * runtimes add to every container anyway). The config's own rules follow,
 * in their order, where they cannot widen that: its denials (a config may
 * deny a safe device, or Docker's c 10:229) and its allowances within the
 * safe set. Later rules win, so the result is the profile's set narrowed
 * by the config's. An override is recorded when the config allowed more. */
static void
harden_device_rules (struct spec_resources *r, bool create,
                     struct override_list *ov)
{
  cleanup_strv char **loosened = NULL;
  cleanup_free struct spec_device_rule *config = r->devices;
  size_t n_config = r->n_devices, n_base = n_safe_devices + 1;

  if (!create && r->n_devices == 0)
    return;
  for (size_t i = 0; i < n_config; i++)
    if (!rule_within_safe (&config[i]))
      {
        cleanup_free char *text = rule_text (&config[i]);
        strv_append (&loosened, text);
      }
  r->devices = xcalloc (n_base + n_config, sizeof (*r->devices));
  r->n_devices = n_base;
  r->devices[0] = (struct spec_device_rule){
    .allow = false, .type = 'a', .major = -1, .minor = -1, .access = "rwm"
  };
  for (size_t i = 0; i < n_safe_devices; i++)
    r->devices[i + 1] = (struct spec_device_rule){
      .allow = true,
      .type = safe_devices[i].type,
      .major = safe_devices[i].major,
      .minor = safe_devices[i].minor,
      .access = "rwm",
    };
  for (size_t i = 0; i < n_config; i++)
    if (rule_within_safe (&config[i])
        && !(i == 0 && !config[i].allow && config[i].type == 'a'))
      r->devices[r->n_devices++] = config[i];
  if (loosened)
    {
      cleanup_free char *asked = strv_join (loosened, ", ");
      override_list_add (ov, OVERRIDE_CHANGED, "linux.resources.devices", asked,
                         "default devices only");
    }
}

static bool
is_hugetlb_key (const char *key)
{
  return fnmatch ("hugetlb.*.max", key, FNM_PATHNAME) == 0
         || fnmatch ("hugetlb.*.rsvd.max", key, FNM_PATHNAME) == 0;
}

/* G7: huge pages are memory that memory.limit does not count (v1, and v2
 * without memory_hugetlb_accounting), taken from the host's reserved
 * pool: no page size may have more than the memory limit, whether asked
 * in hugepageLimits or through unified. The cgroup layer gives the sizes
 * config.json leaves out the same cap (cg_apply_hugetlb). */
static void
harden_hugepages (struct spec_resources *r, const struct resource_bounds *p,
                  struct override_list *ov)
{
  uint64_t cap = r->memory.has_limit && r->memory.limit > 0
                     ? (uint64_t)r->memory.limit
                     : (uint64_t)p->memory_limit;

  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    {
      struct spec_hugepage_limit *l = &r->hugepage_limits[i];
      cleanup_free char *path = NULL, *asked = NULL, *enforced = NULL;
      if (l->limit <= cap)
        continue;
      path = xasprintf ("linux.resources.hugepageLimits[%s]", l->page_size);
      asked = xasprintf ("%" PRIu64, l->limit);
      enforced = xasprintf ("%" PRIu64, cap);
      override_list_add (ov, OVERRIDE_CHANGED, path, asked, enforced);
      l->limit = cap;
    }
  for (size_t i = 0; i < r->n_unified; i++)
    {
      struct spec_kv *kv = &r->unified[i];
      cleanup_free char *path = NULL, *asked = NULL;
      uint64_t v;
      if (!is_hugetlb_key (kv->key)
          || (kv->value && parse_uint64 (kv->value, &v) == 0 && v <= cap))
        continue;
      path = xasprintf ("linux.resources.unified.%s", kv->key);
      asked = kv->value;
      kv->value = xasprintf ("%" PRIu64, cap);
      override_list_add (ov, OVERRIDE_CHANGED, path, asked ? asked : "",
                         kv->value);
    }
}

void
resource_bounds_apply (struct spec_resources *r,
                       const struct resource_bounds *p, bool create,
                       struct override_list *ov)
{
  cap_limit (&r->has_pids_limit, &r->pids_limit, p->pids_limit, create,
             "linux.resources.pids.limit", ov);
  harden_memory (&r->memory, p, create, ov);
  harden_cpu (&r->cpu, p, create, ov);
  spec_filter_kv (r->unified, &r->n_unified, unified_key_allowed,
                  "linux.resources.unified", ov);
  harden_hugepages (r, p, ov);
  harden_device_rules (r, create, ov);
}
