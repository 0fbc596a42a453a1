/* moat profile explain: what create would do to a bundle, without doing
 * it. The same steps as create up to the first thing that would leave a
 * trace (the state dir): the profile on config.json, the host checks of
 * bind sources and namespaces (opened to be judged, then closed), and the
 * mount operations in order. Nothing is created: no state dir, cgroup,
 * process or mount. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "container_internal.h"
#include "init/mount_ops.h"
#include "../policy/profile.h"
#include "../policy/verdicts.h"
#include "init/selinux.h"
#include "userns/idmap.h"
#include "userns/userns.h"
#include "../lib/util.h"

static void
print_overrides (FILE *out, const struct override_list *ov)
{
  fprintf (out, "overrides and refusals (%zu):\n", ov->n);
  for (size_t i = 0; i < ov->n; i++)
    {
      const struct override *o = &ov->v[i];
      fprintf (out, "  %-8s %s: %s -> %s\n", override_kind_name (o->kind),
               o->path, o->asked ? o->asked : "(unset)",
               o->enforced ? o->enforced : "(unset)");
    }
}

/* Open and judge every namespace to join and bind source, then let go. */
static int
host_checks (struct spec *s, const char *bundle, const char *rootfs,
             const struct profile *eff, const struct operator_config *cfg,
             struct idmap_probe *probe, struct override_list *ov,
             struct moat_error **err)
{
  int ns_fds[NS__MAX];
  int r;

  for (int t = 0; t < NS__MAX; t++)
    ns_fds[t] = -1;
  r = container_open_namespaces (s, eff, ov, ns_fds, err);
  for (int t = 0; t < NS__MAX; t++)
    if (ns_fds[t] >= 0)
      close (ns_fds[t]);
  if (r < 0)
    return r;
  return container_open_bind_sources (s, bundle, rootfs, eff, cfg, ov, NULL,
                                      NULL, probe, err);
}

int
container_explain (const struct moat_globals *g, const char *bundle_arg,
                   FILE *out, struct moat_error **err)
{
  cleanup_spec struct spec *s = NULL;
  struct judgement j = { 0 };
  struct idmap_probe probe = { .userns_fd = -1 };
  struct host_facts facts;
  cleanup_free char *text = NULL;
  cleanup_free char *rootfs = NULL;
  struct mount_plan plan = { 0 };
  enum cgroup_mode cgmode;
  char bundle[PATH_MAX];
  size_t len;
  int r;

  if (realpath (bundle_arg, bundle) == NULL)
    return moat_fail (err, errno, "bundle %s", bundle_arg);
  r = read_config (bundle, &s, &text, &len, err);
  if (r < 0)
    return r;
  fprintf (out, "bundle %s, profile %s\n", bundle, g->profile->name);
  /* Judged as create judges: on the same facts. */
  r = resolve_rootfs (s, bundle, &rootfs, err);
  if (r == 0)
    r = container_gather_facts (s, g->profile, bundle, rootfs, NULL, &facts,
                                &probe, err);
  if (r == 0)
    r = profile_judge (s, g->profile, g->operator_config, &facts, &j, err);
  if (r == 0 && s->process == NULL)
    r = moat_fail (err, 0, "config.json: process: missing");
  if (r == 0)
    r = selinux_apply_mount_label (s, stderr, err);
  if (r == 0)
    r = host_checks (s, bundle, rootfs, j.values, g->operator_config,
                     userns_moat_maps (s) ? &probe : NULL, &j.overrides, err);
  print_overrides (out, &j.overrides);
  judgement_clear (&j);
  idmap_probe_close (&probe);
  if (r < 0)
    return moat_error_wrap (err, "create would fail");
  r = cgroup_mode (&cgmode, err);
  if (r < 0)
    return r;
  mount_plan_build (s, rootfs, cgmode, false, &plan);
  fprintf (out, "mount operations, in order (%zu):\n", plan.n);
  for (size_t i = 0; i < plan.n; i++)
    {
      cleanup_free char *line = mount_op_text (&plan.v[i]);
      fprintf (out, "  %2zu. %s\n", i + 1, line);
    }
  mount_plan_clear (&plan);
  return 0;
}
