/* G12, the policy: container root is not host root. Every container gets a
 * user namespace unless config.json has one; moat then maps its ids 0-65535
 * onto a block of the operator's pool (runtime/userns.c allocates it). A
 * config.json mapping is kept as asked unless it reaches host id 0 or the
 * pool, where other containers' blocks live. The operator may turn it off;
 * an annotation cannot (profile_effective knows no userns key). */
#include "profile_internal.h"
#include "verdicts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"

/* Does [host, host + size) meet [lo, hi)? */
static bool
range_meets (uint64_t host, uint64_t size, uint64_t lo, uint64_t hi)
{
  return host < hi && lo < host + size;
}

static int
check_mappings (const struct spec_idmap *m, size_t n, const char *what,
                const struct profile *p, const struct operator_config *cfg,
                struct override_list *ov, struct moat_error **err)
{
  uint64_t pool_lo = cfg->userns_first;
  uint64_t pool_hi
      = pool_lo + (uint64_t)cfg->userns_blocks * PROFILE_USERNS_BLOCK;

  for (size_t i = 0; i < n; i++)
    {
      cleanup_free char *path = xasprintf ("linux.%s[%zu]", what, i);
      cleanup_free char *asked
          = xasprintf ("%" PRIu32 " %" PRIu32 " %" PRIu32, m[i].container_id,
                       m[i].host_id, m[i].size);
      const char *why = NULL;

      if (range_meets (m[i].host_id, m[i].size, 0, 1))
        why = "maps host id 0: container root would be host root";
      else if (range_meets (m[i].host_id, m[i].size, pool_lo, pool_hi))
        why = "reaches moat's id pool, where other containers' blocks are";
      if (why == NULL)
        continue;
      override_list_add (ov, OVERRIDE_REFUSED, path, asked, NULL);
      return moat_fail (err, 0, "%s: %s (profile %s)", path, why, p->name);
    }
  return 0;
}

/* Docker asks net.ipv4.ping_group_range=0 2147483647 of every container;
 * the kernel refuses gids its user namespace does not map (EINVAL). The
 * range is clamped to the ids moat maps: the same ping for every group the
 * container has. */
static void
clamp_ping_range (struct spec_linux *linux_, struct override_list *ov)
{
  for (size_t i = 0; i < linux_->n_sysctl; i++)
    {
      struct spec_kv *kv = &linux_->sysctl[i];
      unsigned long long lo, hi;
      char *clamped;

      if (strcmp (kv->key, "net.ipv4.ping_group_range") != 0
          || kv->value == NULL || sscanf (kv->value, "%llu %llu", &lo, &hi) != 2
          || (lo < PROFILE_USERNS_BLOCK && hi < PROFILE_USERNS_BLOCK))
        continue;
      /* "1 0", the kernel's default, when no mapped group is in range. */
      clamped = lo >= PROFILE_USERNS_BLOCK
                    ? xstrdup ("1 0")
                    : xasprintf ("%llu %u", lo,
                                 hi < PROFILE_USERNS_BLOCK
                                     ? (unsigned)hi
                                     : PROFILE_USERNS_BLOCK - 1);
      override_list_add (ov, OVERRIDE_CHANGED,
                         "linux.sysctl.net.ipv4.ping_group_range", kv->value,
                         clamped);
      free (kv->value);
      kv->value = clamped;
    }
}

int
profile_harden_userns (struct spec_linux *linux_, const struct profile *p,
                       const struct operator_config *cfg,
                       struct override_list *ov, struct moat_error **err)
{
  struct spec_namespace *ns = &linux_->ns[NS_USER];

  if (!p->userns)
    {
      /* Said on every audit line, as the operator's choice it is. */
      if (!ns->present)
        override_list_add (ov, OVERRIDE_IGNORED, "linux.namespaces.user",
                           "new (G12)",
                           "host: turned off in the operator config");
      return 0;
    }
  if (!ns->present)
    {
      ns->present = true;
      override_list_add (ov, OVERRIDE_ADDED, "linux.namespaces.user", "host",
                         "new, ids 0-65535 on a block of the pool");
      /* Mappings without a namespace meant nothing; moat's replace them. */
      linux_->n_uid_mappings = linux_->n_gid_mappings = 0;
      clamp_ping_range (linux_, ov);
      return 0;
    }
  /* Joined by path: the runtime checks the namespace's maps once joined
   * (profile_check_joined_idmap). */
  if (ns->path)
    return 0;
  if (linux_->n_uid_mappings == 0 && linux_->n_gid_mappings == 0)
    {
      override_list_add (ov, OVERRIDE_CHANGED, "linux.uidMappings", "none",
                         "ids 0-65535 on a block of the pool");
      clamp_ping_range (linux_, ov);
      return 0;
    }
  if (check_mappings (linux_->uid_mappings, linux_->n_uid_mappings,
                      "uidMappings", p, cfg, ov, err)
          < 0
      || check_mappings (linux_->gid_mappings, linux_->n_gid_mappings,
                         "gidMappings", p, cfg, ov, err)
             < 0)
    return -1;
  return 0;
}

int
profile_check_joined_idmap (const char *map_text, const char *what,
                            struct moat_error **err)
{
  const char *line = map_text;

  while (line && *line)
    {
      unsigned long long in, out, count;
      if (sscanf (line, " %llu %llu %llu", &in, &out, &count) == 3
          && range_meets (out, count, 0, 1))
        return moat_fail (err, 0,
                          "the user namespace joined maps host %s 0: "
                          "container root would be host root",
                          what);
      line = strchr (line, '\n');
      if (line)
        line++;
    }
  return 0;
}

bool
profile_idmap_possible (const char *dest, int probe_errno,
                        struct override_list *ov)
{
  cleanup_free char *path = NULL, *why = NULL;

  if (probe_errno == 0)
    return true;
  path = xasprintf ("idmap %s", dest);
  why = xasprintf ("not idmapped (%s): host-owned files show as nobody "
                   "(65534) inside",
                   strerror (probe_errno));
  override_list_add (ov, OVERRIDE_CHANGED, path, "idmapped", why);
  fprintf (stderr, "moat: warning: %s: %s\n", path, why);
  return false;
}

void
profile_judge_rootfs_idmap (const struct spec *spec,
                            const struct host_facts *facts, struct judgement *j)
{
  const struct spec_linux *l = &spec->linux_;

  j->rootfs_idmap = PROFILE_ROOTFS_IDMAP_DIRECT;
  /* Only the user namespace moat maps (runtime/userns: userns_moat_maps)
   * idmaps the rootfs. */
  if (!l->ns[NS_USER].present || l->ns[NS_USER].path || l->n_uid_mappings
      || l->n_gid_mappings || facts->rootfs_idmap_errno == 0)
    return;
  if (facts->rootfs_rebuild_errno == 0)
    {
      j->rootfs_idmap = PROFILE_ROOTFS_IDMAP_REBUILT;
      override_list_add (&j->overrides, OVERRIDE_CHANGED, "idmap root.path",
                         "idmapped",
                         "overlay rebuilt read-only from idmapped layers");
      return;
    }
  j->rootfs_idmap = PROFILE_ROOTFS_IDMAP_NONE;
  profile_idmap_possible ("root.path", facts->rootfs_idmap_errno,
                          &j->overrides);
}
