/* The container's filesystem, built inside its mount namespace before and
 * after pivot_root: the init executes the mount plan (mount_ops.h) op by
 * op, one function per kind, and does nothing the plan does not list.
 * Every destination is resolved inside the rootfs with
 * openat2(RESOLVE_IN_ROOT), so a symlink in the image can never make a mount
 * land on the host (CVE-2021-30465); mounts are attached by fd. */
#include "linux.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../../lib/util.h"
#include "mount_ops.h"
#include "../../policy/profile.h"

bool
mount_is_bind (const struct spec_mount *m)
{
  if (m->type && strcmp (m->type, "bind") == 0)
    return true;
  for (char **o = m->options; o && *o; o++)
    if (strcmp (*o, "bind") == 0 || strcmp (*o, "rbind") == 0)
      return true;
  return false;
}

bool
mount_below_other (const struct spec *s, size_t self)
{
  const char *path = s->mounts[self].destination;
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      const char *d = s->mounts[i].destination;
      size_t n = strlen (d);
      while (n > 1 && d[n - 1] == '/')
        n--;
      if (i != self && n > 1 && strncmp (path, d, n) == 0 && path[n] == '/')
        return true;
    }
  return false;
}

static uint64_t
attrs_from_flags (unsigned long f)
{
  uint64_t a = 0;
  if (f & MS_RDONLY)
    a |= MOUNT_ATTR_RDONLY;
  if (f & MS_NOSUID)
    a |= MOUNT_ATTR_NOSUID;
  if (f & MS_NODEV)
    a |= MOUNT_ATTR_NODEV;
  if (f & MS_NOEXEC)
    a |= MOUNT_ATTR_NOEXEC;
  if (f & MS_NOATIME)
    a |= MOUNT_ATTR_NOATIME;
  else if (f & MS_STRICTATIME)
    a |= MOUNT_ATTR_STRICTATIME;
  if (f & MS_NODIRATIME)
    a |= MOUNT_ATTR_NODIRATIME;
  return a;
}

/* Set the attributes of a detached tree, attach it on dstfd. With
 * ro_top_only, read-only is for the top mount alone, as runc's "ro" on an
 * rbind; every other attribute is for the whole tree when recursive. */
static int
attach_tree (int tree, int dstfd, bool recursive, bool ro_top_only,
             unsigned long flags, unsigned long propagation, const char *what,
             struct moat_error **err)
{
  struct mount_attr attr = { 0 };
  struct mount_attr top = { .attr_set = MOUNT_ATTR_RDONLY };

  attr.attr_set = attrs_from_flags (flags);
  if (recursive && ro_top_only)
    attr.attr_set &= ~(uint64_t)MOUNT_ATTR_RDONLY;
  if (propagation)
    attr.propagation = propagation & ~MS_REC;
  if ((attr.attr_set || attr.propagation)
      && mount_setattr (tree, "",
                        AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr,
                        sizeof (attr))
             < 0)
    return moat_fail (err, errno, "bind mount %s: setting attributes", what);
  if (recursive && ro_top_only && (flags & MS_RDONLY)
      && mount_setattr (tree, "", AT_EMPTY_PATH, &top, sizeof (top)) < 0)
    return moat_fail (err, errno, "bind mount %s: making it read-only", what);
  if (move_mount (tree, "", dstfd, "",
                  MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)
      < 0)
    return moat_fail (err, errno, "bind mount %s: attaching", what);
  return 0;
}

/* Clone the tree at srcfd (in this mount namespace), attach it on dstfd. */
static int
bind_fd (int srcfd, int dstfd, bool recursive, unsigned long flags,
         unsigned long propagation, const char *what, struct moat_error **err)
{
  cleanup_close int tree = -1;

  tree = open_tree (srcfd, "",
                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH
                        | (recursive ? AT_RECURSIVE : 0));
  if (tree < 0)
    return moat_fail (err, errno, "bind mount %s: open_tree", what);
  return attach_tree (tree, dstfd, recursive, false, flags, propagation, what,
                      err);
}

static int
mount_on_fd (const char *source, int dstfd, const char *type,
             unsigned long flags, const char *data, const char *what,
             struct moat_error **err)
{
  char target[64];
  snprintf (target, sizeof (target), "/proc/self/fd/%d", dstfd);
  if (mount (source, target, type, flags, data) < 0)
    return moat_fail (err, errno, "mounting %s on %s", type, what);
  return 0;
}

/* G5, after symlinks in the image: the profile let no mount be named
 * inside /proc or /sys, and none may get there through a link either
 * (a mask would no longer hold over it). cgroup's own place is a sysfs
 * directory. */
static int
check_landing (int dst, bool sysfs_ok, const char *what,
               struct moat_error **err)
{
  struct statfs sfs;

  if (fstatfs (dst, &sfs) < 0)
    return moat_fail (err, errno, "mount %s", what);
  if (sfs.f_type == PROC_SUPER_MAGIC || (sfs.f_type == SYSFS_MAGIC && !sysfs_ok)
      || sfs.f_type == CGROUP_SUPER_MAGIC || sfs.f_type == CGROUP2_SUPER_MAGIC)
    return moat_fail (err, 0,
                      "mount %s: refusing a mount inside /proc or /sys "
                      "(reached through a symlink in the rootfs)",
                      what);
  return 0;
}

unsigned
rootfs_missing_read_only (const char *rootfs, const char *const *points)
{
  cleanup_close int rootfd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct statvfs sv;
  unsigned missing = 0;

  if (rootfd < 0 || fstatvfs (rootfd, &sv) < 0 || !(sv.f_flag & ST_RDONLY))
    return 0;
  for (unsigned k = 0; points[k] && k < 8 * sizeof (missing); k++)
    {
      cleanup_close int fd = -1;
      struct moat_error *e = NULL;

      if (rootfs_open_in (rootfd, points[k], false, false, &fd, &e) < 0
          && e->errnum == ENOENT)
        missing |= 1u << k;
      moat_error_free (&e);
    }
  return missing;
}

/* Images built FROM scratch, distroless ones, have no /tmp or /var/tmp:
 * the profile's scratch tmpfs needs its mount point all the same. The
 * rootfs is the container's, so moat makes it there (as runc makes every
 * mount point), now, as host root: an init in a user namespace may not be
 * able to write a rootfs that was not idmapped. (Those a read-only rootfs
 * lacks the policy left out when it judged.) */
int
rootfs_place_profile_mounts (const struct spec *s, const char *rootfs,
                             struct moat_error **err)
{
  cleanup_close int rootfd = -1;

  for (size_t i = 0; i < s->n_mounts; i++)
    {
      const char *dest = s->mounts[i].destination;
      cleanup_close int fd = -1;
      struct moat_error *e = NULL;

      if (!s->mounts[i].profile_added || mount_below_other (s, i))
        continue;
      if (rootfd < 0)
        rootfd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (rootfd < 0)
        return moat_fail (err, errno, "opening the rootfs %s", rootfs);
      if (rootfs_open_in (rootfd, dest, true, false, &fd, &e) == 0)
        continue;
      /* No openat2 here (valgrind, which the soak tests run moat under,
       * does not know it): the init makes the mount point, as it did
       * before, where the rootfs lets it. */
      if (e->errnum == ENOSYS)
        {
          moat_error_free (&e);
          break;
        }
      *err = e;
      return moat_error_wrap (err, "mount %s", dest);
    }
  return 0;
}

/* The container's /dev/null, opened and checked once for all the masks
 * of a step (the strict profile masks about twenty files). */
static int
masking_null (struct rootfs_run *x, const char *path, struct moat_error **err)
{
  struct stat ns;
  if (x->null_fd >= 0)
    return x->null_fd;
  x->null_fd = open ("/dev/null", O_PATH | O_CLOEXEC);
  if (x->null_fd < 0 || fstat (x->null_fd, &ns) < 0 || !S_ISCHR (ns.st_mode)
      || major (ns.st_rdev) != 1 || minor (ns.st_rdev) != 3)
    {
      /* No trustworthy /dev/null in the container: an empty read-only
       * tmpfs cannot cover a file, so refuse rather than leave it. */
      cleanup_closep (&x->null_fd);
      x->null_fd = -1;
      return moat_fail (err, 0, "masking %s: no /dev/null to mask with", path);
    }
  return x->null_fd;
}

/* Later masks bind the first one of their kind: a bind takes its
 * source's mount flags (read-only, nosuid, noexec), so no attributes are
 * set again, and every masked directory shows the same empty read-only
 * tmpfs rather than a superblock of its own (about 7 per container). One
 * mount(2) on the fds' paths, as the tmpfs's. */
static int
mask_again (int masked, int dst, const char *path, struct moat_error **err)
{
  char source[64], target[64];
  snprintf (source, sizeof (source), "/proc/self/fd/%d", masked);
  snprintf (target, sizeof (target), "/proc/self/fd/%d", dst);
  if (mount (source, target, NULL, MS_BIND, NULL) < 0)
    return moat_fail (err, errno, "masking %s", path);
  return 0;
}

/* The mask just made at PATH, kept as the source of the next ones. */
static int
keep_mask (struct rootfs_run *x, const char *path, int *ret_fd,
           struct moat_error **err)
{
  *ret_fd = rootfs_openat2_in (x->rootfd, path, O_PATH | O_CLOEXEC);
  if (*ret_fd < 0)
    return moat_fail (err, errno, "masking %s", path);
  return 0;
}

static int
mask_path (struct rootfs_run *x, const char *path, struct moat_error **err)
{
  int rootfd = x->rootfd;
  cleanup_close int dst = -1;
  struct stat st;
  int r;

  dst = rootfs_openat2_in (rootfd, path, O_PATH | O_CLOEXEC);
  if (dst < 0)
    {
      if (errno == ENOENT)
        return 0;
      return moat_fail (err, errno, "masking %s", path);
    }
  if (fstat (dst, &st) < 0)
    return moat_fail (err, errno, "masking %s", path);
  if (!S_ISDIR (st.st_mode))
    {
      int null;
      if (x->masked_file_fd >= 0)
        return mask_again (x->masked_file_fd, dst, path, err);
      null = masking_null (x, path, err);
      if (null < 0)
        return null;
      /* Not nodev: the file must read empty, as runc's masks do, not
       * fail with EACCES. */
      r = bind_fd (null, dst, false, MS_RDONLY | MS_NOSUID | MS_NOEXEC, 0, path,
                   err);
      return r < 0 ? r : keep_mask (x, path, &x->masked_file_fd, err);
    }
  if (x->masked_dir_fd >= 0)
    return mask_again (x->masked_dir_fd, dst, path, err);
  /* Mode 0555, as runc's read-only tmpfs: an empty directory a listing
   * shows as empty, not one that fails with EACCES. Nothing is written:
   * read-only, one inode, one page. One mount(2) on the fd's path. */
  r = mount_on_fd ("tmpfs", dst, "tmpfs",
                   MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                   "size=4k,nr_inodes=1,mode=0555", path, err);
  return r < 0 ? r : keep_mask (x, path, &x->masked_dir_fd, err);
}

static int
exec_mask (struct rootfs_run *x, const struct mount_op *op,
           struct moat_error **err)
{
  return mask_path (x, op->dest, err);
}

static int
exec_readonly (struct rootfs_run *x, const struct mount_op *op,
               struct moat_error **err)
{
  const char *path = op->dest;
  cleanup_close int dst = -1;
  dst = rootfs_openat2_in (x->rootfd, path, O_PATH | O_CLOEXEC);
  if (dst < 0)
    {
      if (errno == ENOENT)
        return 0;
      return moat_fail (err, errno, "making %s read-only", path);
    }
  return bind_fd (dst, dst, (op->flags & MS_REC) != 0, op->flags, 0, path, err);
}

/* proc and sysfs go on an ordinary directory of the image (or one moat
 * makes), never through a symlink or onto a file, as runc requires:
 * checked for all of them before anything is mounted in the rootfs. */
static int
check_pseudo_fs_places (struct rootfs_run *x, struct moat_error **err)
{
  for (size_t i = 0; i < x->plan->n; i++)
    {
      const struct mount_op *op = &x->plan->v[i];
      cleanup_close int fd = -1;
      struct stat st;
      if (op->kind != MOUNT_OP_MOUNT || op->type == NULL
          || (strcmp (op->type, "proc") != 0
              && strcmp (op->type, "sysfs") != 0))
        continue;
      fd = rootfs_openat2_in (x->rootfd, op->dest,
                              O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT)
        continue;
      if (fd < 0 || fstat (fd, &st) < 0)
        return moat_fail (err, errno, "mount %s at %s", op->type, op->dest);
      if (!S_ISDIR (st.st_mode))
        return moat_fail (err, 0,
                          "mount %s at %s: %s must be mounted on an ordinary "
                          "directory, and %s in the rootfs is %s",
                          op->type, op->dest, op->type, op->dest,
                          S_ISLNK (st.st_mode) ? "a symlink"
                                               : "not a directory");
    }
  return 0;
}

/* The rootfs bound on itself (G12: a tree moat cloned, and idmapped, is
 * attached already), opened for the ops that follow. */
static int
exec_rootfs (struct rootfs_run *x, const struct mount_op *op,
             struct moat_error **err)
{
  const char *rootfs = op->source;

  if (mount (NULL, "/", NULL, op->propagation, NULL) < 0)
    return moat_fail (err, errno, "making / a slave mount");
  if (x->rootfs_tree < 0 && mount (rootfs, rootfs, NULL, op->flags, NULL) < 0)
    return moat_fail (err, errno, "bind mounting the rootfs %s", rootfs);
  x->rootfd = open (rootfs, O_DIRECTORY | O_CLOEXEC);
  if (x->rootfd < 0)
    return moat_fail (err, errno, "opening the rootfs %s", rootfs);
  return check_pseudo_fs_places (x, err);
}

/* A spec mount's destination, made if missing (a file for a file), and
 * where it landed checked. */
static int
open_dest (struct rootfs_run *x, const struct mount_op *op, bool as_file,
           int *ret_fd, struct moat_error **err)
{
  cleanup_close int dst = -1;
  int r;

  r = rootfs_open_in (x->rootfd, op->dest, true, as_file, &dst, err);
  if (r < 0)
    return moat_error_wrap (err, "mount %s", op->dest);
  r = check_landing (dst, op->sysfs_ok, op->dest, err);
  if (r < 0)
    return r;
  *ret_fd = steal_fd (&dst);
  return 0;
}

/* The source is a detached tree, cloned by moat on the host (container.c)
 * and passed by fd. */
static int
exec_bind (struct rootfs_run *x, const struct mount_op *op,
           struct moat_error **err)
{
  int srcfd = x->mount_src_fds[op->mount_index];
  cleanup_close int dst = -1;
  struct stat st;
  int r;

  if (srcfd < 0 || fstat (srcfd, &st) < 0)
    return moat_fail (err, EBADF, "bind mount %s: source", op->dest);
  r = open_dest (x, op, !S_ISDIR (st.st_mode), &dst, err);
  if (r < 0)
    return r;
  return attach_tree (srcfd, dst, (op->flags & MS_REC) != 0, !op->recursive_ro,
                      op->flags, op->propagation, op->dest, err);
}

static int
exec_mount (struct rootfs_run *x, const struct mount_op *op,
            struct moat_error **err)
{
  int srcfd = x->mount_src_fds[op->mount_index];
  cleanup_close int dst = -1;
  cleanup_close int top = -1;
  int r;

  r = open_dest (x, op, false, &dst, err);
  if (r < 0)
    return r;
  /* G12: a sysfs or mqueue moat made in a namespace joined for the init,
   * detached. */
  if (srcfd >= 0)
    return attach_tree (srcfd, dst, (op->flags & MS_REC) != 0,
                        !op->recursive_ro, op->flags, op->propagation, op->dest,
                        err);
  if (op->type == NULL)
    return moat_fail (err, 0, "mount %s: no type", op->dest);
  r = mount_on_fd (op->source, dst, op->type, op->flags, op->data, op->dest,
                   err);
  if (r < 0 || op->propagation == 0)
    return r;
  r = rootfs_open_in (x->rootfd, op->dest, false, false, &top, err);
  if (r < 0)
    return r;
  return mount_on_fd (NULL, top, NULL, op->propagation, NULL, op->dest, err);
}

/* The container's /dev, opened once for its nodes and links. */
static int
dev_dir (struct rootfs_run *x, struct moat_error **err)
{
  if (x->devfd < 0)
    x->devfd = rootfs_openat2_in (x->rootfd, "dev", O_DIRECTORY | O_CLOEXEC);
  if (x->devfd < 0)
    return moat_fail (err, errno, "opening /dev in the rootfs");
  return 0;
}

/* The name of /dev/NAME in /dev (the plan has no other). */
static const char *
dev_name (const struct mount_op *op)
{
  return op->dest + strlen ("/dev/");
}

/* Bind the host's device node after checking it is the real device: moat
 * never trusts a path on the host to be what its name says. */
static int
exec_dev_node (struct rootfs_run *x, const struct mount_op *op,
               struct moat_error **err)
{
  const char *host = op->source, *name = dev_name (op);
  cleanup_close int src = -1;
  cleanup_close int dst = -1;
  struct stat st;
  int r;

  r = dev_dir (x, err);
  if (r < 0)
    return r;
  src = open (host, O_PATH | O_CLOEXEC | O_NOFOLLOW);
  if (src < 0)
    return moat_fail (err, errno, "opening %s", host);
  if (fstat (src, &st) < 0)
    return moat_fail (err, errno, "stat %s", host);
  if (!S_ISCHR (st.st_mode) || major (st.st_rdev) != op->major
      || minor (st.st_rdev) != op->minor)
    return moat_fail (err, 0, "%s is not the expected device %u:%u", host,
                      op->major, op->minor);
  /* The file the node is bound over, and the fd that names it to
   * move_mount: an fd of any mode will do. */
  dst = openat (x->devfd, name, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW,
                0666);
  if (dst < 0)
    return moat_fail (err, errno, "creating /dev/%s", name);
  return bind_fd (src, dst, false, op->flags, 0, host, err);
}

static int
exec_dev_link (struct rootfs_run *x, const struct mount_op *op,
               struct moat_error **err)
{
  int r = dev_dir (x, err);
  if (r < 0)
    return r;
  if (symlinkat (op->source, x->devfd, dev_name (op)) < 0 && errno != EEXIST)
    return moat_fail (err, errno, "creating %s", op->dest);
  return 0;
}

static int
exec_mkdir (struct rootfs_run *x, const struct mount_op *op,
            struct moat_error **err)
{
  cleanup_close int fd = -1;
  int r = rootfs_open_in (x->rootfd, op->dest, true, false, &fd, err);
  if (r < 0)
    return moat_error_wrap (err, "process.cwd");
  return 0;
}

/* Without pivot_root the host's mounts stay in the container's mount
 * namespace, hidden below the rootfs moved onto /. A host procfs or sysfs
 * among them counts as fully visible to the kernel, which then lets a
 * nested user namespace mount a fresh, unmasked one (runc hides them
 * too). Each is detached, or covered where the kernel keeps it (a mount
 * locked to its namespace). */
static int
hide_host_pseudo_fs (const char *rootfs, struct moat_error **err)
{
  cleanup_free char *info = NULL;
  char *line, *save = NULL;

  if (read_file_at (AT_FDCWD, "/proc/self/mountinfo", 16u << 20, &info, NULL)
      < 0)
    return moat_fail (err, errno, "reading /proc/self/mountinfo");
  for (line = strtok_r (info, "\n", &save); line;
       line = strtok_r (NULL, "\n", &save))
    {
      char target[4096], fstype[64];
      const char *sep = strstr (line, " - ");
      if (sep == NULL || sscanf (line, "%*s %*s %*s %*s %4095s", target) != 1
          || sscanf (sep + 3, "%63s", fstype) != 1
          || (strcmp (fstype, "proc") != 0 && strcmp (fstype, "sysfs") != 0))
        continue;
      mountinfo_unescape (target);
      if (path_at_or_below (target, rootfs))
        continue;
      if (umount2 (target, MNT_DETACH) == 0 || errno == ENOENT)
        continue;
      if ((errno == EINVAL || errno == EPERM)
          && (mount ("tmpfs", target, "tmpfs",
                     MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0")
                  == 0
              || errno == ENOENT))
        continue;
      return moat_fail (err, errno, "--no-pivot: hiding the host's %s at %s",
                        fstype, target);
    }
  return 0;
}

static int
exec_pivot (struct rootfs_run *x, const struct mount_op *op,
            struct moat_error **err)
{
  const char *rootfs = op->source;

  if (chdir (rootfs) < 0)
    return moat_fail (err, errno, "chdir to the rootfs");
  if (op->chroot)
    {
      /* rootfs may be a /proc/self/fd link, which goes with the host's
       * procfs: from here on it is ".", and its real path is the cwd. */
      char cwd[4096];
      int r;
      if (getcwd (cwd, sizeof (cwd)) == NULL)
        return moat_fail (err, errno, "getcwd in the rootfs");
      r = hide_host_pseudo_fs (cwd, err);
      if (r < 0)
        return r;
      if (mount (".", "/", NULL, MS_MOVE, NULL) < 0)
        return moat_fail (err, errno, "moving the rootfs to /");
      if (chroot (".") < 0)
        return moat_fail (err, errno, "chroot");
    }
  else
    {
      cleanup_close int oldroot = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

      if (oldroot < 0)
        return moat_fail (err, errno, "opening the old root");
      /* pivot_root(".", ".") stacks the old root on top of the new one;
       * detaching it leaves only the container's tree. mount(2), unlike
       * umount2, does not climb from "." to the old root stacked there:
       * without the fchdir the slave flag would land on the container's
       * own tree and undo its "shared" mounts. */
      if (syscall (SYS_pivot_root, ".", ".") < 0)
        return moat_fail (err, errno, "pivot_root");
      if (fchdir (oldroot) < 0)
        return moat_fail (err, errno, "chdir to the old root");
      if (mount (NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
        return moat_fail (err, errno, "making the old root a slave");
      if (umount2 (".", MNT_DETACH) < 0)
        return moat_fail (err, errno, "detaching the old root");
    }
  if (chdir ("/") < 0)
    return moat_fail (err, errno, "chdir /");
  return 0;
}

static int
exec_propagation (struct rootfs_run *x, const struct mount_op *op,
                  struct moat_error **err)
{
  if (mount (NULL, op->dest, NULL, op->propagation, NULL) < 0)
    return moat_fail (err, errno, "setting rootfs propagation");
  return 0;
}

static int
exec_attrs (struct rootfs_run *x, const struct mount_op *op,
            struct moat_error **err)
{
  cleanup_close int fd
      = rootfs_openat2_in (x->rootfd, op->dest, O_PATH | O_CLOEXEC);
  struct mount_attr attr = { .attr_set = op->attrs };

  if (fd < 0 || mount_setattr (fd, "", AT_EMPTY_PATH, &attr, sizeof (attr)) < 0)
    return moat_fail (err, errno, "making %s read-only", op->dest);
  return 0;
}

static int
exec_root_attrs (struct rootfs_run *x, const struct mount_op *op,
                 struct moat_error **err)
{
  struct mount_attr attr = { .attr_set = op->attrs };

  if (mount_setattr (AT_FDCWD, op->dest, 0, &attr, sizeof (attr)) < 0)
    return moat_fail (err, errno, "making %s %snosuid,nodev", op->dest,
                      op->attrs & MOUNT_ATTR_RDONLY ? "read-only, " : "");
  return 0;
}

static int
exec_op (struct rootfs_run *x, const struct mount_op *op,
         struct moat_error **err)
{
  if (op->error)
    return moat_fail (err, 0, "%s", op->error);
  switch (op->kind)
    {
    case MOUNT_OP_ROOTFS:
      return exec_rootfs (x, op, err);
    case MOUNT_OP_BIND:
      return exec_bind (x, op, err);
    case MOUNT_OP_MOUNT:
      return exec_mount (x, op, err);
    case MOUNT_OP_DEV_NODE:
      return exec_dev_node (x, op, err);
    case MOUNT_OP_DEV_LINK:
      return exec_dev_link (x, op, err);
    case MOUNT_OP_MKDIR:
      return exec_mkdir (x, op, err);
    case MOUNT_OP_PIVOT:
      return exec_pivot (x, op, err);
    case MOUNT_OP_READONLY:
      return exec_readonly (x, op, err);
    case MOUNT_OP_MASK:
      return exec_mask (x, op, err);
    case MOUNT_OP_PROPAGATION:
      return exec_propagation (x, op, err);
    case MOUNT_OP_ATTRS:
      return exec_attrs (x, op, err);
    case MOUNT_OP_ROOT_ATTRS:
      return exec_root_attrs (x, op, err);
    }
  return moat_fail (err, 0, "mount operation %d unknown", (int)op->kind);
}

/* Execute the plan's ops from x->next up to (not including) end. The fds
 * of the step go with it: none is held across the hooks between steps. */
static int
run_ops (struct rootfs_run *x, size_t end, struct moat_error **err)
{
  int r = 0;

  while (r == 0 && x->next < end)
    r = exec_op (x, &x->plan->v[x->next++], err);
  cleanup_closep (&x->devfd);
  cleanup_closep (&x->rootfd);
  cleanup_closep (&x->null_fd);
  cleanup_closep (&x->masked_file_fd);
  cleanup_closep (&x->masked_dir_fd);
  x->devfd = x->rootfd = x->null_fd = -1;
  x->masked_file_fd = x->masked_dir_fd = -1;
  return r;
}

int
rootfs_prepare (struct rootfs_run *x, struct moat_error **err)
{
  size_t end = x->next;

  while (end < x->plan->n && x->plan->v[end].kind != MOUNT_OP_PIVOT)
    end++;
  return run_ops (x, end, err);
}

int
rootfs_pivot (struct rootfs_run *x, struct moat_error **err)
{
  if (x->next >= x->plan->n || x->plan->v[x->next].kind != MOUNT_OP_PIVOT)
    return moat_fail (err, 0, "the mount plan has no pivot here");
  return run_ops (x, x->next + 1, err);
}

int
rootfs_finish (struct rootfs_run *x, struct moat_error **err)
{
  x->rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (x->rootfd < 0)
    return moat_fail (err, errno, "opening /");
  return run_ops (x, x->plan->n, err);
}
