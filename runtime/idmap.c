/* G12: the idmapped mounts of a container whose user namespace moat maps.
 * The rootfs the engine prepared, and the engines' per-container files and
 * volumes, are owned by host root; idmapped with the container's user
 * namespace they show as owned by container root, and what it writes there
 * lands on disk as host root's, as Docker users expect. The trees were
 * cloned detached before clone (OPEN_TREE_CLONE); the kernel only idmaps a
 * mount not yet attached, and only for a caller with CAP_SYS_ADMIN over the
 * filesystem, so moat does it here, between writing the maps and letting
 * the init attach them. */
#include "idmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "linux.h"
#include "userns.h"
#include "util.h"

static void
not_idmapped (const char *what, int errnum, struct override_list *ov)
{
  cleanup_free char *path = xasprintf ("idmap %s", what);
  cleanup_free char *why
      = xasprintf ("not idmapped (%s): host-owned files show as nobody "
                   "(65534) inside",
                   strerror (errnum));
  override_list_add (ov, OVERRIDE_CHANGED, path, "idmapped", why);
  fprintf (stderr, "moat: warning: %s: %s\n", path, why);
}

int
idmap_container_mounts (pid_t pid, const struct spec *s, int rootfs_tree,
                        const int *src_fds, const bool *idmap,
                        struct override_list *ov, struct moat_error **err)
{
  cleanup_close int userns = -1;
  char path[64];
  int r;

  snprintf (path, sizeof (path), "/proc/%d/ns/user", pid);
  userns = open (path, O_RDONLY | O_CLOEXEC);
  if (userns < 0)
    return moat_fail (err, errno, "opening the container's user namespace");
  if (rootfs_tree >= 0)
    {
      r = userns_idmap_tree (rootfs_tree, userns, true);
      if (r < 0)
        not_idmapped ("root.path", -r, ov);
    }
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      const struct spec_mount *m = &s->mounts[i];
      bool recursive = false;

      if (!idmap || !idmap[i] || src_fds[i] < 0)
        continue;
      for (char **o = m->options; o && *o; o++)
        recursive |= strcmp (*o, "rbind") == 0;
      r = userns_idmap_tree (src_fds[i], userns, recursive);
      if (r < 0)
        not_idmapped (m->destination, -r, ov);
    }
  return 0;
}
