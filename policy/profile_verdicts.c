/* G14's and G8's verdicts from the host's facts, and create's judging
 * (verdicts.h). */
#include "verdicts.h"

#include <stdio.h>

#include "profile_internal.h"
#include "../lib/util.h"

char *
profile_landlock_verdict (enum profile_landlock mode, int abi)
{
  if (mode == PROFILE_LANDLOCK_OFF)
    return xstrdup ("off (operator config)");
  if (abi == 0)
    return xstrdup ("unavailable (kernel)");
  if (abi < LANDLOCK_MIN_ABI)
    return xasprintf ("unused: abi %d refuses renames across directories", abi);
  return xasprintf (
      "abi %d: writes beneath the writable mounts, exec outside the noexec "
      "ones%s",
      abi,
      abi >= 6   ? "; abstract unix sockets and signals scoped"
      : abi >= 3 ? ""
                 : "; truncate not covered");
}

int
profile_decide_landlock (struct spec *s, const struct operator_config *cfg,
                         const struct host_facts *facts, char **ret_text,
                         struct moat_error **err)
{
  enum profile_landlock mode = operator_config_or_builtin (cfg)->landlock;
  cleanup_free char *text
      = profile_landlock_verdict (mode, facts->landlock_abi);

  if (mode == PROFILE_LANDLOCK_REQUIRE
      && facts->landlock_abi < LANDLOCK_MIN_ABI)
    return moat_fail (err, 0,
                      "landlock: required by the operator config: %s "
                      "(needs ABI %d)",
                      text, LANDLOCK_MIN_ABI);
  spec_set_annotation (s, LANDLOCK_ANNOTATION, text);
  if (ret_text)
    *ret_text = steal_pointer (&text);
  return 0;
}

void
profile_decide_seccomp_level (struct spec *s, const struct profile *eff)
{
  spec_set_annotation (s, SECCOMP_LEVEL_ANNOTATION,
                       eff->seccomp_agent ? "agent" : "default");
}

/* egress lets DNS through to the container's nameservers (a cluster's DNS
 * is often private); one in a denied range (G2's metadata, the operator's
 * egress_deny) stays refused, and that is said. */
static void
profile_judge_nameservers (const struct host_facts *facts, struct judgement *j)
{
  const struct profile *p = j->values;

  j->n_dns = 0;
  if (!p->egress)
    return;
  for (size_t i = 0; i < facts->n_dns && i < NETGUARD_MAX_DNS; i++)
    {
      j->dns[j->n_dns++] = facts->dns[i];
      for (size_t k = 0; k < p->n_deny; k++)
        if (cidr_contains (&p->deny[k], &facts->dns[i]))
          {
            cleanup_free char *ns = cidr_to_string (&facts->dns[i]);
            cleanup_free char *d = cidr_to_string (&p->deny[k]);
            cleanup_free char *path
                = xasprintf ("resolv.conf nameserver %s", ns);
            cleanup_free char *why = xasprintf (
                "DNS through it refused: in the denied range %s", d);
            override_list_add (&j->overrides, OVERRIDE_CHANGED, path,
                               "reachable on port 53", why);
            fprintf (stderr,
                     "moat: warning: nameserver %s of resolv.conf is in the "
                     "denied range %s: DNS through it is refused\n",
                     ns, d);
            break;
          }
    }
}

int
profile_judge (struct spec *spec, const struct profile *base,
               const struct operator_config *cfg,
               const struct host_facts *facts, struct judgement *ret,
               struct moat_error **err)
{
  int r = profile_apply_effective (spec, base, cfg, &ret->values,
                                   &ret->overrides, err);
  if (r < 0)
    return r;
  profile_decide_seccomp_level (spec, ret->values);
  profile_drop_unplaceable_scratch (spec, facts->scratch_unplaceable,
                                    &ret->overrides);
  profile_judge_rootfs_idmap (spec, facts, ret);
  profile_judge_nameservers (facts, ret);
  if (!facts->memfd_noexec)
    override_list_add (&ret->overrides, OVERRIDE_IGNORED,
                       "sysctl.vm.memfd_noexec", "2",
                       "not in this kernel: executable memfds not refused");
  return 0;
}
