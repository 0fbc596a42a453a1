/* The verdicts that depend on what the kernel offers (G14's Landlock, G8's
 * level): create gathers the facts first (struct host_facts: kernel
 * probes, by the runtime), the policy judges here, and the verdict is
 * recorded as an annotation on the hardened spec, which the init and
 * `moat exec` apply and `moat state` shows. The runtime never judges. */
#ifndef MOAT_VERDICTS_H
#define MOAT_VERDICTS_H

#include "../lib/error.h"
#include "../oci/spec.h"
#include "profile.h"

/* The hardened spec's annotations: the verdicts create recorded. In
 * config.json they only ask (Landlock: never; seccomp: a tighter level). */
#define LANDLOCK_ANNOTATION "run.moat.landlock"
#define SECCOMP_LEVEL_ANNOTATION "run.moat.seccomp"

/* ABI 1 refuses every rename and link across directories once any
 * filesystem right is handled (it breaks `mv` and package managers): the
 * oldest ABI moat uses. */
#define LANDLOCK_MIN_ABI 2

/* The mount points of the tmpfs the profile may add (G6's scratch: /tmp,
 * /var/tmp, /dev/shm), NULL-terminated: create looks for them in the
 * rootfs before judging. */
extern const char *const profile_scratch_points[];

/* What the runtime found out about the host before the policy judges. */
struct host_facts
{
  int landlock_abi;  /* the kernel's Landlock ABI; 0: none */
  bool memfd_noexec; /* G13: the kernel has vm.memfd_noexec (6.3) */
  /* Bit k: profile_scratch_points[k] is missing from a read-only rootfs,
   * which cannot take it. */
  unsigned scratch_unplaceable;
  /* G12, probed before judging by idmapping a clone of the rootfs with a
   * user namespace of moat's (as the container's own would be): 0 where
   * it can be idmapped as it is, else the kernel's errno; and where it
   * cannot, 0 if it is an overlay moat can rebuild from idmapped layers
   * (Linux 6.8), else why not. */
  int rootfs_idmap_errno;
  int rootfs_rebuild_errno;
  /* egress: the nameservers of the container's resolv.conf (port 53 is
   * let through to them), read before judging (runtime/netguard_dns.c). */
  struct cidr dns[NETGUARD_MAX_DNS];
  size_t n_dns;
};

/* create's judging: spec hardened in place under base (tightened by the
 * container's annotations) and cfg on a host with these facts, the seccomp
 * level recorded on it, and the judgement in *ret, also on a refusal (the
 * audit line shows it; the caller clears it either way). */
int profile_judge (struct spec *spec, const struct profile *base,
                   const struct operator_config *cfg,
                   const struct host_facts *facts, struct judgement *ret,
                   struct moat_error **err);

/* What a container gets under mode on a kernel of Landlock ABI abi: one
 * line, the verdict and its reason ("abi 7: ...", "off (operator config)",
 * "unavailable (kernel)"), for `moat features`, the audit line and the
 * annotation (malloc'ed). */
char *profile_landlock_verdict (enum profile_landlock mode, int abi);
/* create: judge Landlock under the operator configuration cfg on this host and
 * record the verdict on hardened spec s, replacing whatever config.json put
 * there (it cannot choose); its text also in *ret_text (may be NULL; the
 * caller frees). A kernel without Landlock (ABI 2) is an error only when
 * the operator requires it. */
int profile_decide_landlock (struct spec *s, const struct operator_config *cfg,
                             const struct host_facts *facts, char **ret_text,
                             struct moat_error **err);
/* create: record the seccomp level eff chose (the operator config, or
 * config.json's annotation asking for agent) on hardened spec s. */
void profile_decide_seccomp_level (struct spec *s, const struct profile *eff);

#endif
