/* G12: overlayfs cannot be idmapped as a whole (it does not allow it), but
 * its layers can. For an overlay rootfs (Docker's, Podman's), moat makes a
 * second overlay, read-only like every moat rootfs (G5), from the same
 * layers each idmapped with the container's user namespace: the engine's
 * upper layer on top, then its lower layers. The engine's own mount stays
 * as it is (docker diff, docker cp); moat's only reads the same dirs. */
#include "idmap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "userns.h"
#include "../../lib/util.h"

/* The super options of the topmost overlay mounted at path. */
static char *
overlay_options (const char *path)
{
  cleanup_free char *text = NULL;
  char *found = NULL, *line, *save = NULL;

  if (read_file_at (AT_FDCWD, "/proc/self/mountinfo", 16 << 20, &text, NULL)
      < 0)
    return NULL;
  for (line = strtok_r (text, "\n", &save); line;
       line = strtok_r (NULL, "\n", &save))
    {
      char *f[5], *sep, *type, *opts;
      char *p = line;
      for (int i = 0; i < 5; i++)
        {
          f[i] = p;
          p = strchr (p, ' ');
          if (p == NULL)
            break;
          *p++ = '\0';
        }
      sep = p ? strstr (p, " - ") : NULL;
      if (sep == NULL)
        continue;
      mountinfo_unescape (f[4]);
      type = sep + 3;
      opts = strchr (type, ' ');
      opts = opts ? strchr (opts + 1, ' ') : NULL;
      if (opts == NULL || strncmp (type, "overlay ", 8) != 0
          || strcmp (f[4], path) != 0)
        continue;
      free (found);
      found = xstrdup (opts + 1);
    }
  return found;
}

/* The layer's fd must stay open until the overlay is made: closing a
 * detached tree dissolves it, and overlayfs clones it only then. */
static int
add_layer (int fsfd, const char *path, int userns_fd, int *ret_tree)
{
  int tree, r;

  tree = open_tree (AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0)
    return -errno;
  *ret_tree = tree;
  r = userns_idmap_tree (tree, userns_fd, false);
  if (r < 0)
    return r;
  if (fsconfig (fsfd, FSCONFIG_SET_FD, "lowerdir+", NULL, tree) < 0)
    return -errno;
  return 0;
}

static void
close_layers (int *fds, size_t n)
{
  for (size_t i = 0; i < n; i++)
    close (fds[i]);
  free (fds);
}

/* The overlay of rootfs' layers, each idmapped with userns_fd, made as a
 * detached mount in *ret_tree; or with ret_tree NULL, only as far as the
 * kernel takes every layer (no superblock made). */
static int
rebuild (const char *rootfs, int userns_fd, int *ret_tree)
{
  cleanup_free char *opts = NULL;
  cleanup_free char *upper = NULL, *lower = NULL;
  cleanup_close int fsfd = -1;
  char *o, *save = NULL;
  struct statfs sfs;
  int *layers = NULL;
  size_t n = 0;
  int r = 0, mnt;

  if (statfs (rootfs, &sfs) < 0 || sfs.f_type != OVERLAYFS_SUPER_MAGIC)
    return -EINVAL;
  opts = overlay_options (rootfs);
  if (opts == NULL)
    return -ENOENT;
  for (o = strtok_r (opts, ",", &save); o; o = strtok_r (NULL, ",", &save))
    {
      mountinfo_unescape (o);
      if (strncmp (o, "lowerdir=", 9) == 0)
        lower = xstrdup (o + 9);
      else if (strncmp (o, "upperdir=", 9) == 0)
        upper = xstrdup (o + 9);
      /* Layers this simple rebuild would read wrongly: leave them be. */
      else if (strcmp (o, "metacopy=on") == 0 || strcmp (o, "userxattr") == 0
               || strncmp (o, "datadir", 7) == 0)
        return -EOPNOTSUPP;
    }
  /* Escaped colons, data-only layers ("::"): not handled. */
  if (lower == NULL || strchr (lower, '\\') || strstr (lower, "::"))
    return -EOPNOTSUPP;
  fsfd = fsopen ("overlay", FSOPEN_CLOEXEC);
  if (fsfd < 0)
    return -errno;
  layers = xcalloc (strlen (lower) + 2, sizeof (int));
  if (upper)
    r = add_layer (fsfd, upper, userns_fd, &layers[n++]);
  save = NULL;
  for (o = strtok_r (lower, ":", &save); o && r == 0;
       o = strtok_r (NULL, ":", &save))
    r = add_layer (fsfd, o, userns_fd, &layers[n++]);
  if (r == 0 && ret_tree == NULL)
    {
      close_layers (layers, n);
      return 0;
    }
  if (r == 0 && fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    r = -errno;
  mnt = r < 0 ? -1
              : fsmount (fsfd, FSMOUNT_CLOEXEC,
                         MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID
                             | MOUNT_ATTR_NODEV);
  if (r == 0 && mnt < 0)
    r = -errno;
  close_layers (layers, n);
  if (r < 0)
    return r;
  *ret_tree = mnt;
  return 0;
}

int
idmap_overlay_rebuild (const char *rootfs, int userns_fd, int *ret_tree)
{
  return rebuild (rootfs, userns_fd, ret_tree);
}

int
idmap_overlay_probe (const char *rootfs, int userns_fd)
{
  return rebuild (rootfs, userns_fd, NULL);
}

bool
idmap_overlay_supported (void)
{
  cleanup_close int fsfd = fsopen ("overlay", FSOPEN_CLOEXEC);
  cleanup_close int dir = -1;

  if (fsfd < 0)
    return false;
  dir = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  /* Nothing is mounted: the context is dropped without FSCONFIG_CMD_CREATE. */
  return dir >= 0
         && fsconfig (fsfd, FSCONFIG_SET_FD, "lowerdir+", NULL, dir) == 0;
}
