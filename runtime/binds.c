/* Bind sources, opened on the host side before the clone: each is judged
 * by the profile (G5, G13) on what it really is, after every symlink (the
 * realpath of the open fd), what it lies on, and whether it is a socket;
 * then cloned as a detached tree the init attaches in its own mount
 * namespace. */
#include "container_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "init/linux.h"
#include "userns/idmap.h"
#include "../lib/util.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC 0x19800202
#endif
#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

/* Kernel filesystems whose files are the kernel's knobs, not data. */
static bool
is_pseudo_magic (long type)
{
  static const long magics[]
      = { PROC_SUPER_MAGIC,    SYSFS_MAGIC,    CGROUP_SUPER_MAGIC,
          CGROUP2_SUPER_MAGIC, DEBUGFS_MAGIC,  TRACEFS_MAGIC,
          SECURITYFS_MAGIC,    BPF_FS_MAGIC,   DEVPTS_SUPER_MAGIC,
          MQUEUE_MAGIC,        PSTOREFS_MAGIC, EFIVARFS_MAGIC,
          BINFMTFS_MAGIC,      NSFS_MAGIC };
  for (size_t i = 0; i < sizeof (magics) / sizeof (magics[0]); i++)
    if (type == magics[i])
      return true;
  return false;
}

static bool
is_pseudo_type (const char *fstype)
{
  static const char *const types[]
      = { "proc",        "sysfs", "cgroup",   "cgroup2", "debugfs", "tracefs",
          "securityfs",  "bpf",   "devpts",   "mqueue",  "pstore",  "efivarfs",
          "binfmt_misc", "nsfs",  "configfs", "fusectl", NULL };
  for (size_t i = 0; types[i]; i++)
    if (strcmp (types[i], fstype) == 0)
      return true;
  return false;
}

/* An rbind brings every mount below its source along: a procfs or sysfs
 * mounted somewhere under it on the host would be one no mask covers. */
static int
tree_holds_pseudo_fs (const char *dir, bool *ret)
{
  cleanup_free char *line = NULL;
  size_t cap = 0;
  FILE *f = fopen ("/proc/self/mountinfo", "re");

  *ret = false;
  if (f == NULL)
    return -errno;
  while (getline (&line, &cap, f) > 0 && !*ret)
    {
      struct mountinfo_entry e;

      if (mountinfo_split (line, &e) == 0
          && path_at_or_below (e.mount_point, dir))
        *ret = is_pseudo_type (e.fstype);
    }
  fclose (f);
  return 0;
}

/* The child attaches bind sources in its own mount namespace, and the
 * kernel clones a tree only from the caller's namespace: clone it here, as
 * a detached tree the child can move_mount. */
static int
detach_bind_source (const struct spec_mount *m, bool recursive, int *fd,
                    struct moat_error **err)
{
  unsigned int flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH;
  int tree;

  if (recursive)
    flags |= AT_RECURSIVE;
  tree = open_tree (*fd, "", flags);
  if (tree < 0)
    return moat_fail (err, errno, "bind mount %s: open_tree", m->destination);
  close (*fd);
  *fd = tree;
  return 0;
}

static bool
is_rbind (const struct spec_mount *m)
{
  for (char **o = m->options; o && *o; o++)
    if (strcmp (*o, "rbind") == 0)
      return true;
  return false;
}

static int
open_one (struct spec_mount *m, size_t i, const char *bundle,
          const char *rootfs, const struct profile *p,
          const struct operator_config *cfg, struct override_list *ov,
          bool keep, enum profile_bind_idmap *idmap, struct idmap_probe *probe,
          int *fd, struct moat_error **err)
{
  cleanup_free char *src = NULL, *warning = NULL;
  char real[PATH_MAX], link[64];
  struct stat st;
  struct statfs sfs;
  struct bind_facts facts;
  bool pseudo, rbind = is_rbind (m);
  ssize_t n;
  int r;

  if (m->source == NULL)
    return moat_fail (err, 0, "mounts[%zu]: bind mount without source", i);
  src = m->source[0] == '/' ? xstrdup (m->source)
                            : xasprintf ("%s/%s", bundle, m->source);
  *fd = open (src, O_PATH | O_CLOEXEC);
  if (*fd < 0)
    return moat_fail (err, errno, "mounts[%zu]: bind source %s", i, src);
  /* What the fd really is, after every symlink: that is what the profile
   * judges (a link to /etc is /etc). */
  snprintf (link, sizeof (link), "/proc/self/fd/%d", *fd);
  n = readlink (link, real, sizeof (real) - 1);
  if (n < 0 || fstat (*fd, &st) < 0 || fstatfs (*fd, &sfs) < 0)
    return moat_fail (err, errno, "mounts[%zu]: resolving %s", i, src);
  real[n] = '\0';
  pseudo = is_pseudo_magic ((long)sfs.f_type);
  if (!pseudo && rbind && S_ISDIR (st.st_mode) && real[0] == '/')
    {
      r = tree_holds_pseudo_fs (real, &pseudo);
      if (r < 0)
        return moat_fail (err, -r, "mounts[%zu]: reading the mount table", i);
    }
  facts = (struct bind_facts){ .path = real,
                               .bundle = bundle,
                               .rootfs = rootfs,
                               .pseudo_fs = pseudo,
                               .is_socket = S_ISSOCK (st.st_mode) };
  r = profile_harden_bind (m, i, &facts, p, cfg, ov, &warning, err);
  if (r < 0)
    return moat_error_wrap (err, "mounts[%zu]", i);
  if (warning)
    fprintf (stderr, "moat: warning: %s\n", warning);
  if (!keep)
    return 0;
  /* G12: judged on the same resolved path as the checks above, and on
   * what the kernel does with that tree, probed first. */
  if (idmap)
    *idmap = profile_bind_idmapped (real, cfg);
  if (idmap && *idmap && probe
      && !profile_idmap_possible (m->destination,
                                  idmap_probe_tree (probe, *fd, "", rbind), ov))
    *idmap = PROFILE_BIND_IDMAP_NONE;
  return detach_bind_source (m, rbind, fd, err);
}

int
container_open_bind_sources (struct spec *s, const char *bundle,
                             const char *rootfs, const struct profile *p,
                             const struct operator_config *cfg,
                             struct override_list *ov, int **ret_fds,
                             enum profile_bind_idmap *idmap,
                             struct idmap_probe *probe, struct moat_error **err)
{
  int *fds = xcalloc (s->n_mounts + 1, sizeof (int));
  int r = 0;

  for (size_t i = 0; i < s->n_mounts; i++)
    fds[i] = -1;
  for (size_t i = 0; i < s->n_mounts && r == 0; i++)
    if (mount_is_bind (&s->mounts[i]))
      r = open_one (&s->mounts[i], i, bundle, rootfs, p, cfg, ov,
                    ret_fds != NULL, idmap ? &idmap[i] : NULL, probe, &fds[i],
                    err);
  if (r < 0 || ret_fds == NULL)
    {
      for (size_t i = 0; i < s->n_mounts; i++)
        if (fds[i] >= 0)
          close (fds[i]);
      free (fds);
      return r;
    }
  *ret_fds = fds;
  return 0;
}
