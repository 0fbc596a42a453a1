/* G14's and G8's verdicts from the host's facts, and create's judging
 * (verdicts.h). */
#include "verdicts.h"

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
  if (!facts->memfd_noexec)
    override_list_add (&ret->overrides, OVERRIDE_IGNORED,
                       "sysctl.vm.memfd_noexec", "2",
                       "not in this kernel: executable memfds not refused");
  return 0;
}
