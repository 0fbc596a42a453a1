/* The host's facts the policy needs, gathered by create (and by `profile
 * explain`, which shows what create would do) before judging: kernel
 * probes, the scratch mount points a read-only rootfs lacks, what the
 * kernel can idmap (G12), egress' nameservers. The policy judges them
 * (verdicts.h); nothing here decides. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container_internal.h"
#include "../policy/verdicts.h"
#include "init/landlock.h"
#include "init/linux.h"
#include "netguard_dns.h"
#include "statedir.h"
#include "userns/idmap.h"
#include "userns/userns.h"
#include "../lib/util.h"

/* ROOT/.cache, where create keeps what it may reuse: opened only under a
 * state root that passes create's own check (moat's, writable by nobody
 * else), made there if missing, never through a link, and only if it is
 * moat's and writable by nobody else; -1 where not (no root yet: the
 * first create makes it later). */
static int
open_cache_dir (const char *state_root)
{
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  cleanup_close int rootfd = -1;
  int fd;

  if (state_root == NULL
      || statedir_root_open (state_root, false, &rootfd, NULL) < 0
      || rootfd < 0)
    return -1;
  fd = openat (rootfd, ".cache", flags);
  if (fd < 0 && errno == ENOENT && mkdirat (rootfd, ".cache", 0700) == 0)
    fd = openat (rootfd, ".cache", flags);
  if (fd >= 0 && statedir_root_check (fd, ".cache", NULL) < 0)
    {
      close (fd);
      fd = -1;
    }
  return fd;
}

int
container_gather_facts (const struct spec *s, const struct profile *base,
                        const char *bundle, const char *rootfs,
                        const char *state_root, struct host_facts *ret,
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
      cleanup_close int cache_fd = open_cache_dir (state_root);
      idmap_probe_rootfs_cached (probe, rootfs, cache_fd,
                                 &ret->rootfs_idmap_errno,
                                 &ret->rootfs_rebuild_errno);
    }
  /* egress: the nameservers port 53 is let through to (annotations cannot
   * turn egress on). */
  if (base->egress)
    return netguard_nameservers (s, bundle, rootfs, ret->dns, &ret->n_dns, err);
  return 0;
}
