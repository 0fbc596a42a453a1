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
#include <sys/stat.h>
#include <unistd.h>

#include "../init/linux.h"
#include "userns.h"
#include "../../lib/util.h"

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

/* A rootfs that could not be idmapped belongs to nobody inside: the init,
 * root of its namespace only, could not make a missing mount point there
 * (Podman's /run/.containerenv). moat makes them now, as the host root
 * that the rootfs belongs to, resolved inside the rootfs as the init
 * would. */
static int
make_mountpoints (const struct spec *s, int rootfs_tree, const int *src_fds,
                  struct moat_error **err)
{
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      struct stat st;
      bool as_file = src_fds[i] >= 0 && fstat (src_fds[i], &st) == 0
                     && !S_ISDIR (st.st_mode);
      int fd = -1;

      if (mount_below_other (s, i))
        continue;
      if (rootfs_open_in (rootfs_tree, s->mounts[i].destination, true, as_file,
                          &fd, err)
          < 0)
        return moat_error_wrap (err, "mount %s", s->mounts[i].destination);
      close (fd);
    }
  if (s->process && s->process->cwd)
    {
      int fd = -1;
      if (rootfs_open_in (rootfs_tree, s->process->cwd, true, false, &fd, err)
          < 0)
        return moat_error_wrap (err, "process.cwd");
      close (fd);
    }
  return 0;
}

int
idmap_container_mounts (int userns_fd, pid_t pid, const struct spec *s,
                        const char *rootfs, int *rootfs_tree,
                        const int *src_fds, const bool *idmap,
                        struct override_list *ov, struct moat_error **err)
{
  cleanup_close int own = -1;
  int userns = userns_fd;
  char path[64];
  int r;

  if (userns < 0)
    {
      snprintf (path, sizeof (path), "/proc/%d/ns/user", pid);
      userns = own = open (path, O_RDONLY | O_CLOEXEC);
    }
  if (userns < 0)
    return moat_fail (err, errno, "opening the container's user namespace");
  if (*rootfs_tree >= 0)
    {
      int rebuilt = -1;
      r = userns_idmap_tree (*rootfs_tree, userns, true);
      if (r < 0)
        {
          /* Made in the engine's writable tree first: moat's rebuilt
           * overlay is read-only. */
          int r2 = make_mountpoints (s, *rootfs_tree, src_fds, err);
          if (r2 < 0)
            return r2;
          if (r == -EINVAL
              && idmap_overlay_rebuild (rootfs, userns, &rebuilt) == 0)
            {
              close (*rootfs_tree);
              *rootfs_tree = rebuilt;
              override_list_add (ov, OVERRIDE_CHANGED, "idmap root.path",
                                 "idmapped",
                                 "overlay rebuilt read-only from idmapped "
                                 "layers");
            }
          else
            not_idmapped ("root.path", -r, ov);
        }
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
