/* The host's facts the policy needs, gathered by create (and by `profile
 * explain`, which shows what create would do) before judging: kernel
 * probes, the scratch mount points a read-only rootfs lacks, what the
 * kernel can idmap (G12), egress' nameservers. The policy judges them
 * (verdicts.h); nothing here decides. */
#include <unistd.h>

#include "container_internal.h"
#include "../policy/verdicts.h"
#include "init/landlock.h"
#include "init/linux.h"
#include "netguard_dns.h"
#include "userns/idmap.h"
#include "userns/userns.h"

int
container_gather_facts (const struct spec *s, const struct profile *base,
                        const char *bundle, const char *rootfs,
                        const char *cache_dir, struct host_facts *ret,
                        struct idmap_probe *probe, struct moat_error **err)
{
  *ret = (struct host_facts){
    .landlock_abi = landlock_abi (),
    .memfd_noexec = access ("/proc/sys/vm/memfd_noexec", F_OK) == 0,
    .scratch_unplaceable
    = rootfs_missing_read_only (rootfs, profile_scratch_points),
  };
  /* G12: what the kernel can idmap, where a user namespace may be mapped
   * by moat (config.json's own, or the profile's). */
  if (userns_moat_maps (s) || base->userns)
    {
      *probe = (struct idmap_probe){ .userns_fd = -1 };
      idmap_probe_rootfs_cached (probe, rootfs, cache_dir,
                                 &ret->rootfs_idmap_errno,
                                 &ret->rootfs_rebuild_errno);
    }
  /* egress: the nameservers port 53 is let through to (annotations cannot
   * turn egress on). */
  if (base->egress)
    return netguard_nameservers (s, bundle, rootfs, ret->dns, &ret->n_dns, err);
  return 0;
}
