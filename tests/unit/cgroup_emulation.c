/* See cgroup_emulation.h. */
#include "cgroup_emulation.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../runtime/cgroup/cgroup_internal.h"
#include "../../lib/util.h"

static bool
is_regular_file (const char *dir, const char *name)
{
  cleanup_free char *p = xasprintf ("%s/%s", dir, name);
  struct stat st;
  return stat (p, &st) == 0 && S_ISREG (st.st_mode);
}

/* A directory with a cgroup.controllers file is a cgroup2 mount, any other
 * directory a v1 hierarchy. */
static long
emulated_magic (const char *dir)
{
  struct stat st;
  if (stat (dir, &st) < 0 || !S_ISDIR (st.st_mode))
    return 0;
  return is_regular_file (dir, "cgroup.controllers") ? CGROUP2_SUPER_MAGIC
                                                     : CGROUP_SUPER_MAGIC;
}

/* The kernel ignores O_TRUNC on cgroupfs; a plain file needs it so that a
 * shorter value does not leave the tail of the old one. */
static int
emulated_write (int dirfd, const char *file, const char *value)
{
  return cg_write_file (dirfd, file, value, O_TRUNC);
}

/* The interface files the kernel creates in a new cgroup: a copy (empty)
 * of every regular file at the top of the hierarchy, and the controllers
 * its parent enabled. */
static void
emulated_populate (int mount_fd, int parent_fd, int dir_fd)
{
  cleanup_free char *enabled = NULL;
  cleanup_dir DIR *d = cg_opendir (mount_fd);
  struct dirent *de;

  while (d && (de = readdir (d)))
    {
      int fd;
      if (de->d_type != DT_REG)
        continue;
      fd = openat (dir_fd, de->d_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                   0644);
      if (fd >= 0)
        close (fd);
    }
  if (cg_read (parent_fd, "cgroup.subtree_control", &enabled) == 0)
    {
      char *w = enabled;
      for (const char *r = enabled; *r; r++)
        if (*r != '+')
          *w++ = *r;
      *w = '\0';
      emulated_write (dir_fd, "cgroup.controllers", enabled);
    }
}

/* First the files the kernel would drop with the directory. */
static int
emulated_rmdir (int parent_fd, const char *name)
{
  cleanup_close int fd
      = cg_open_beneath (parent_fd, name, O_RDONLY | O_DIRECTORY);
  cleanup_dir DIR *d = NULL;
  struct dirent *de;
  if (fd < 0)
    return -errno;
  if (cg_has_child_dirs (fd))
    return -EBUSY;
  d = cg_opendir (fd);
  while (d && (de = readdir (d)))
    if (de->d_type == DT_REG)
      unlinkat (fd, de->d_name, 0);
  return unlinkat (parent_fd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/* A plain directory cannot carry a BPF program. */
static int
emulated_attach_devices (int cgroup_fd, const struct spec_device_rule *rules,
                         size_t n_rules, struct moat_error **err)
{
  return 0;
}

static bool
emulated_systemd_booted (void)
{
  return false;
}

static const struct cgroup_fs cgroup_fs_emulated = {
  .magic = emulated_magic,
  .write = emulated_write,
  .populate = emulated_populate,
  .rmdir = emulated_rmdir,
  .attach_devices = emulated_attach_devices,
  .systemd_booted = emulated_systemd_booted,
};

void
cgroup_emulate (const char *root)
{
  if (root)
    cgroup_set_fs (root, &cgroup_fs_emulated);
  else
    cgroup_set_fs (NULL, NULL);
}
