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

/* The entry of LIST that holds the nameserver NS on port 53: NS itself or,
 * for an IPv6 address carrying an IPv4 one (::ffff:a.b.c.d, 64:ff9b::/96
 * ...), that IPv4 address, which is what the guard's programs look up.
 * NULL: none. */
static const struct cidr *
entry_holding_nameserver (const struct cidr *list, size_t n,
                          const struct cidr *ns)
{
  struct cidr as_is = *ns, v4;
  bool embeds = cidr_v6_embedded_v4 (ns, &v4);

  as_is.port = v4.port = 53;
  for (size_t i = 0; i < n; i++)
    if (cidr_contains (&list[i], &as_is)
        || (embeds && cidr_contains (&list[i], &v4)))
      return &list[i];
  return NULL;
}

/* What egress would do with the nameserver NS were it not one: the range
 * that refuses it (a private one, or anything outside an allowlist, then
 * *ret_range NULL). False: it is reachable on 53 anyway. */
static bool
refused_but_for_dns (const struct profile *p, const struct cidr *ns,
                     const struct cidr **ret_range)
{
  *ret_range = NULL;
  if (entry_holding_nameserver (p->allow, p->n_allow, ns))
    return false;
  if (p->allowlist)
    return true;
  *ret_range = entry_holding_nameserver (p->private_nets, p->n_private, ns);
  return *ret_range != NULL;
}

static void
tell_nameserver (struct judgement *j, const struct cidr *ns,
                 enum override_kind kind, const char *asked,
                 const char *enforced, const char *warning)
{
  cleanup_free char *text = cidr_to_string (ns);
  cleanup_free char *path = xasprintf ("resolv.conf nameserver %s", text);

  override_list_add (&j->overrides, kind, path, asked, enforced);
  fprintf (stderr, "moat: warning: nameserver %s of resolv.conf %s\n", text,
           warning);
}

/* egress lets DNS through to the container's nameservers (a cluster's DNS
 * is often private): one the profile would refuse otherwise (private, or
 * outside the allowlist) gets port 53, and that is said; one in a denied
 * range (G2's metadata, the operator's egress_deny), in whatever family it
 * is written, stays refused, and that is said. */
static void
profile_judge_nameservers (const struct host_facts *facts, struct judgement *j)
{
  const struct profile *p = j->values;

  j->n_dns = 0;
  if (!p->egress)
    return;
  for (size_t i = 0; i < facts->n_dns && i < NETGUARD_MAX_DNS; i++)
    {
      const struct cidr *ns = &facts->dns[i], *range;
      const struct cidr *denied
          = entry_holding_nameserver (p->deny, p->n_deny, ns);

      j->dns[j->n_dns++] = *ns;
      if (denied)
        {
          cleanup_free char *d = cidr_to_string (denied);
          cleanup_free char *why
              = xasprintf ("DNS through it refused: in the denied range %s", d);
          cleanup_free char *warning = xasprintf (
              "is in the denied range %s: DNS through it is refused", d);
          tell_nameserver (j, ns, OVERRIDE_CHANGED, "reachable on port 53", why,
                           warning);
        }
      else if (refused_but_for_dns (p, ns, &range))
        {
          cleanup_free char *r
              = range ? cidr_to_string (range) : xstrdup ("the allowlist");
          cleanup_free char *enforced = xasprintf (
              "reachable on port 53 only, for DNS (refused otherwise: %s %s)",
              range ? "in the private range" : "outside", r);
          cleanup_free char *warning
              = xasprintf ("is %s %s: reachable on port 53 only, for DNS",
                           range ? "in the private range" : "outside", r);
          tell_nameserver (j, ns, OVERRIDE_ADDED, NULL, enforced, warning);
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
