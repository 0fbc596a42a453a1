/* G12: the idmapped mounts of a container whose user namespace moat maps.
 * The rootfs the engine prepared, and the engines' per-container files and
 * volumes, are owned by host root; idmapped with the container's user
 * namespace they show as owned by container root, and what it writes there
 * lands on disk as host root's, as Docker users expect. The caller's
 * workdir (moat sandbox and session) is not host root's: its owner on disk
 * is the container's process user there, and nobody else. The trees were
 * cloned detached before clone (OPEN_TREE_CLONE); the kernel only idmaps a
 * mount not yet attached, and only for a caller with CAP_SYS_ADMIN over the
 * filesystem, so moat does it here, between writing the maps and letting
 * the init attach them. Which trees can be idmapped is a fact create
 * probes before judging (idmap_probe_*, with a user namespace of its own),
 * so the policy records every fallback and this only applies its verdict. */
#include "idmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../init/linux.h"
#include "userns.h"
#include "../../lib/util.h"

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

static int
exit_at_once (void *unused)
{
  (void)unused;
  return 0;
}

/* A user namespace of moat's with these maps ("INSIDE OUTSIDE COUNT"
 * lines), held by *ret_fd: nothing ever runs in it, it only idmaps. */
static int
make_userns (const char *uid_map, const char *gid_map, int *ret_fd)
{
  /* The child only returns, on this stack, while moat waits for it
   * (CLONE_VFORK); the namespace outlives it through the fd. */
  static char stack[4096] __attribute__ ((aligned (16)));
  const char *const files[] = { "uid_map", "gid_map" };
  const char *const maps[] = { uid_map, gid_map };
  cleanup_close int fd = -1;
  char path[64];
  pid_t pid;
  int r = 0;

  pid = clone (exit_at_once, stack + sizeof (stack),
               CLONE_VM | CLONE_VFORK | CLONE_NEWUSER | SIGCHLD, NULL);
  if (pid < 0)
    return -errno;
  snprintf (path, sizeof (path), "/proc/%d/ns/user", pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    r = -errno;
  for (size_t i = 0; i < 2 && r == 0; i++)
    {
      snprintf (path, sizeof (path), "/proc/%d/%s", pid, files[i]);
      r = write_file_at (AT_FDCWD, path, maps[i]);
    }
  waitpid (pid, NULL, 0);
  if (r == 0)
    *ret_fd = steal_fd (&fd);
  return r;
}

/* G12 for the caller's workdir: the tree's owner and group on disk are
 * the container's process user and group (host ids first + uid, first +
 * gid of its block), and no other id is mapped. What that user writes
 * there is the owner's; any other container id cannot create there
 * (EOVERFLOW) and sees every other owner's file as nobody's. */
static int
idmap_owner_tree (int tree, bool recursive, uint32_t first,
                  const struct spec *s, struct moat_error **err)
{
  cleanup_close int userns = -1;
  cleanup_free char *uid_map = NULL, *gid_map = NULL;
  uint32_t uid = s->process ? s->process->user.uid : 0;
  uint32_t gid = s->process ? s->process->user.gid : 0;
  struct stat st;
  int r;

  if (uid >= PROFILE_USERNS_BLOCK || gid >= PROFILE_USERNS_BLOCK)
    return moat_fail (err, 0,
                      "process.user %" PRIu32 ":%" PRIu32
                      " is outside the container's %u ids",
                      uid, gid, PROFILE_USERNS_BLOCK);
  if (fstat (tree, &st) < 0)
    return moat_fail (err, errno, "fstat");
  uid_map = xasprintf ("%ju %" PRIu32 " 1", (uintmax_t)st.st_uid, first + uid);
  gid_map = xasprintf ("%ju %" PRIu32 " 1", (uintmax_t)st.st_gid, first + gid);
  r = make_userns (uid_map, gid_map, &userns);
  if (r == 0)
    r = userns_idmap_tree (tree, userns, recursive);
  if (r < 0)
    return moat_fail (err, -r,
                      "mapping its owner %ju:%ju to the container's "
                      "%" PRIu32 ":%" PRIu32,
                      (uintmax_t)st.st_uid, (uintmax_t)st.st_gid, uid, gid);
  return 0;
}

int
idmap_container_mounts (int userns_fd, pid_t pid, uint32_t first,
                        const struct spec *s, const char *rootfs,
                        enum profile_rootfs_idmap rootfs_idmap,
                        int *rootfs_tree, const int *src_fds,
                        const enum profile_bind_idmap *idmap,
                        struct moat_error **err)
{
  cleanup_close int own = -1;
  int userns = userns_fd;
  char path[64];
  int r = 0;

  if (userns < 0)
    {
      snprintf (path, sizeof (path), "/proc/%d/ns/user", pid);
      userns = own = open (path, O_RDONLY | O_CLOEXEC);
    }
  if (userns < 0)
    return moat_fail (err, errno, "opening the container's user namespace");
  if (*rootfs_tree >= 0 && rootfs_idmap == PROFILE_ROOTFS_IDMAP_DIRECT)
    r = userns_idmap_tree (*rootfs_tree, userns, true);
  else if (*rootfs_tree >= 0)
    {
      int rebuilt = -1;
      /* Made in the engine's writable tree first: moat's rebuilt
       * overlay is read-only. */
      r = make_mountpoints (s, *rootfs_tree, src_fds, err);
      if (r < 0 || rootfs_idmap != PROFILE_ROOTFS_IDMAP_REBUILT)
        return r;
      r = idmap_overlay_rebuild (rootfs, userns, &rebuilt);
      if (r == 0)
        {
          close (*rootfs_tree);
          *rootfs_tree = rebuilt;
        }
    }
  /* The policy judged on a probe that said it can be done. */
  if (r < 0)
    return moat_fail (err, -r, "root.path %s: idmapping it (G12)", rootfs);
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      const struct spec_mount *m = &s->mounts[i];
      bool recursive = false;

      if (!idmap || !idmap[i] || src_fds[i] < 0)
        continue;
      for (char **o = m->options; o && *o; o++)
        recursive |= strcmp (*o, "rbind") == 0;
      if (idmap[i] == PROFILE_BIND_IDMAP_OWNER)
        {
          if (idmap_owner_tree (src_fds[i], recursive, first, s, err) < 0)
            return moat_error_wrap (err, "mount %s: idmapping its source (G12)",
                                    m->destination);
          continue;
        }
      r = userns_idmap_tree (src_fds[i], userns, recursive);
      if (r < 0)
        return moat_fail (err, -r, "mount %s: idmapping its source (G12)",
                          m->destination);
    }
  return 0;
}

/* ---- facts gathered before judging ---- */

void
idmap_probe_close (struct idmap_probe *p)
{
  if (p->userns_fd >= 0)
    close (p->userns_fd);
  p->userns_fd = -1;
}

void
idmap_probe_open (struct idmap_probe *p)
{
  int r;

  *p = (struct idmap_probe){ .userns_fd = -1, .opened = true };
  /* The kernel idmaps only with a namespace that maps ids: one id, the
   * overflow one. */
  r = make_userns ("0 65534 1", "0 65534 1", &p->userns_fd);
  if (r < 0)
    p->errnum = -r;
}

int
idmap_probe_tree (struct idmap_probe *p, int dirfd, const char *path,
                  bool recursive)
{
  cleanup_close int tree = -1;
  unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC;

  if (!p->opened)
    idmap_probe_open (p);
  if (p->userns_fd < 0)
    return p->errnum;
  if (path[0] == '\0')
    flags |= AT_EMPTY_PATH;
  if (recursive)
    flags |= AT_RECURSIVE;
  tree = open_tree (dirfd, path, flags);
  if (tree < 0)
    return errno;
  return -userns_idmap_tree (tree, p->userns_fd, recursive);
}

void
idmap_probe_rootfs (struct idmap_probe *p, const char *rootfs, int *ret_direct,
                    int *ret_rebuild)
{
  *ret_direct = *ret_rebuild = idmap_probe_tree (p, AT_FDCWD, rootfs, true);
  /* overlayfs cannot be idmapped as a whole (EINVAL); its layers can. */
  if (*ret_direct == EINVAL)
    *ret_rebuild = -idmap_overlay_probe (rootfs, p->userns_fd);
}
