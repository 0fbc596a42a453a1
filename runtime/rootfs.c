/* The container's filesystem, built inside its mount namespace before and
 * after pivot_root. Every destination is resolved inside the rootfs with
 * openat2(RESOLVE_IN_ROOT), so a symlink in the image can never make a mount
 * land on the host (CVE-2021-30465); mounts are attached by fd. */
#include "linux.h"

#include <errno.h>
#include <fcntl.h>
#include <libmount/libmount.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../lib/util.h"
#include "../policy/profile.h"

static int
sys_openat2 (int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
  struct open_how how = { .flags = flags, .resolve = resolve };
  return (int)syscall (SYS_openat2, dirfd, path, &how, sizeof (how));
}

#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)

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

int
rootfs_open_in (int rootfd, const char *path, bool create, bool as_file,
                int *ret_fd, struct moat_error **err)
{
  cleanup_free char *copy = NULL;
  cleanup_close int cur = -1;
  char *save = NULL, *tok, *next;
  int fd;

  fd = sys_openat2 (rootfd, path, O_PATH | O_CLOEXEC, IN_ROOT);
  if (fd >= 0 || errno != ENOENT || !create)
    {
      if (fd < 0)
        return moat_fail (err, errno, "resolving %s in the rootfs", path);
      *ret_fd = fd;
      return 0;
    }

  /* Walk component by component, creating what is missing. Each step is
   * re-resolved inside the root, so a symlink swapped in meanwhile still
   * resolves inside it. */
  copy = xstrdup (path);
  cur = fcntl (rootfd, F_DUPFD_CLOEXEC, 3);
  if (cur < 0)
    return moat_fail (err, errno, "dup");
  for (tok = strtok_r (copy, "/", &save); tok; tok = next)
    {
      int nfd;
      bool last;

      next = strtok_r (NULL, "/", &save);
      last = next == NULL;
      nfd = sys_openat2 (cur, tok, O_PATH | O_CLOEXEC, IN_ROOT);
      if (nfd < 0 && errno == ENOENT)
        {
          if (last && as_file)
            {
              int f = openat (
                  cur, tok,
                  O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
              if (f < 0 && errno != EEXIST)
                return moat_fail (err, errno, "creating %s in the rootfs",
                                  path);
              if (f >= 0)
                close (f);
            }
          else if (mkdirat (cur, tok, 0755) < 0 && errno != EEXIST)
            return moat_fail (err, errno, "creating %s in the rootfs", path);
          nfd = sys_openat2 (cur, tok, O_PATH | O_CLOEXEC, IN_ROOT);
        }
      if (nfd < 0)
        return moat_fail (err, errno, "resolving %s in the rootfs", path);
      /* Resolving from an inner dir with IN_ROOT would treat that dir as
       * root; that is stricter than needed but never looser. Re-resolve the
       * full prefix from the real root instead. */
      close (nfd);
      {
        size_t len = (size_t)(tok - copy) + strlen (tok);
        cleanup_free char *prefix = xstrdup (path);
        /* path and copy share offsets (copy is a strdup of path). */
        prefix[len] = '\0';
        nfd = sys_openat2 (rootfd, prefix, O_PATH | O_CLOEXEC, IN_ROOT);
        if (nfd < 0)
          return moat_fail (err, errno, "resolving %s in the rootfs", path);
      }
      close (cur);
      cur = nfd;
    }
  *ret_fd = steal_fd (&cur);
  return 0;
}

/* context="user:role:type:s0:c1,c2" (linux.mountLabel, selinux.c): its
 * commas are inside the quotes, which libmount keeps as one value. */
static bool
is_quoted_context (const char *o)
{
  size_t n = strlen (o);
  return strncmp (o, "context=\"", 9) == 0 && n > 10 && o[n - 1] == '"'
         && strchr (o + 9, '"') == o + n - 1;
}

/* Options moat understands but the kernel does not. */
static bool
option_is_runtime_only (const char *o)
{
  static const char *const names[]
      = { "tmpcopyup",   "idmap",        "ridmap",        "copy-symlink",
          "notmpcopyup", "rro",          "rrw",           "rnosuid",
          "rsuid",       "rnodev",       "rdev",          "rnoexec",
          "rexec",       "src-nofollow", "dest-nofollow", NULL };
  for (size_t i = 0; names[i]; i++)
    if (strcmp (o, names[i]) == 0)
      return true;
  return false;
}

struct mount_flags
{
  unsigned long flags;       /* MS_* without propagation */
  unsigned long propagation; /* MS_PRIVATE|MS_REC ... or 0 */
  char *data;                /* fs-specific options */
  bool recursive_ro;
};

static int
mount_flags_parse (const struct spec_mount *m, struct mount_flags *ret,
                   struct moat_error **err)
{
  cleanup_free char *optstr = NULL;
  cleanup_free char *fs = NULL;
  unsigned long flags = 0;
  size_t len = 0;
  const unsigned long prop_mask
      = MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE;

  memset (ret, 0, sizeof (*ret));
  for (char **o = m->options; o && *o; o++)
    len += strlen (*o) + 1;
  optstr = xcalloc (len + 1, 1);
  for (char **o = m->options; o && *o; o++)
    {
      if (strcmp (*o, "rro") == 0)
        ret->recursive_ro = true;
      if (option_is_runtime_only (*o))
        continue;
      if (**o == '\0' || (strchr (*o, ',') && !is_quoted_context (*o)))
        return moat_fail (err, 0, "mount %s: bad option \"%s\"", m->destination,
                          *o);
      if (*optstr)
        strcat (optstr, ",");
      strcat (optstr, *o);
    }
  if (*optstr
      && mnt_optstr_get_flags (optstr, &flags,
                               mnt_get_builtin_optmap (MNT_LINUX_MAP))
             < 0)
    return moat_fail (err, 0, "mount %s: cannot parse options \"%s\"",
                      m->destination, optstr);
  if (*optstr && mnt_split_optstr (optstr, NULL, NULL, &fs, 0, 0) < 0)
    return moat_fail (err, 0, "mount %s: cannot parse options \"%s\"",
                      m->destination, optstr);
  if (flags & prop_mask)
    ret->propagation = flags & (prop_mask | MS_REC);
  ret->flags = flags & ~(prop_mask);
  if (!(flags & MS_BIND))
    ret->flags &= ~MS_REC;
  if (ret->recursive_ro)
    ret->flags |= MS_RDONLY;
  ret->data = steal_pointer (&fs);
  return 0;
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
check_landing (int dst, const char *type, const char *what,
               struct moat_error **err)
{
  struct statfs sfs;
  bool cgroup = type && strncmp (type, "cgroup", 6) == 0;

  if (fstatfs (dst, &sfs) < 0)
    return moat_fail (err, errno, "mount %s", what);
  if (sfs.f_type == PROC_SUPER_MAGIC || (sfs.f_type == SYSFS_MAGIC && !cgroup)
      || sfs.f_type == CGROUP_SUPER_MAGIC || sfs.f_type == CGROUP2_SUPER_MAGIC)
    return moat_fail (err, 0,
                      "mount %s: refusing a mount inside /proc or /sys "
                      "(reached through a symlink in the rootfs)",
                      what);
  return 0;
}

static int
mount_one (int rootfd, const struct spec_mount *m, int srcfd,
           enum cgroup_mode cgmode, struct moat_error **err)
{
  struct mount_flags mf;
  cleanup_free char *data = NULL;
  cleanup_close int dst = -1;
  const char *type = m->type;
  const char *source = m->source ? m->source : "none";
  bool bind = mount_is_bind (m);
  bool as_file = false;
  int r;

  r = mount_flags_parse (m, &mf, err);
  data = mf.data;
  if (r < 0)
    return r;

  if (bind)
    {
      struct stat st;
      if (srcfd < 0 || fstat (srcfd, &st) < 0)
        return moat_fail (err, EBADF, "bind mount %s: source", m->destination);
      as_file = !S_ISDIR (st.st_mode);
    }
  r = rootfs_open_in (rootfd, m->destination, true, as_file, &dst, err);
  if (r < 0)
    return moat_error_wrap (err, "mount %s", m->destination);
  r = check_landing (dst, type, m->destination, err);
  if (r < 0)
    return r;

  /* srcfd is a detached tree, cloned by the parent (container.c), or a
   * sysfs/mqueue moat made in a namespace joined for the init (G12). */
  if (bind || srcfd >= 0)
    return attach_tree (srcfd, dst, (mf.flags & MS_REC) != 0, !mf.recursive_ro,
                        mf.flags, mf.propagation, m->destination, err);

  if (type && strcmp (type, "cgroup") == 0)
    {
      /* v2: the container's own subtree through its cgroup namespace.
       * v1/hybrid: an empty read-only tmpfs; controllers are not exposed. */
      if (cgmode == CGROUP_MODE_V2)
        type = "cgroup2", source = "cgroup2", data = NULL;
      else
        {
          type = "tmpfs", source = "tmpfs";
          free (data);
          data = xstrdup ("size=0,mode=555");
        }
      mf.flags |= MS_RDONLY;
    }
  if (type == NULL)
    return moat_fail (err, 0, "mount %s: no type", m->destination);

  r = mount_on_fd (source, dst, type, mf.flags, data, m->destination, err);
  if (r < 0)
    return r;
  if (mf.propagation)
    {
      cleanup_close int top = -1;
      r = rootfs_open_in (rootfd, m->destination, false, false, &top, err);
      if (r < 0)
        return r;
      r = mount_on_fd (NULL, top, NULL, mf.propagation, NULL, m->destination,
                       err);
    }
  return r;
}

struct default_dev
{
  const char *name;
  unsigned maj, min;
};

static const struct default_dev default_devs[]
    = { { "null", 1, 3 },   { "zero", 1, 5 },    { "full", 1, 7 },
        { "random", 1, 8 }, { "urandom", 1, 9 }, { "tty", 5, 0 } };

/* Bind the host's device node after checking it is the real device: moat
 * never trusts a path on the host to be what its name says. */
static int
dev_bind_host (int devfd, const char *host_name, const char *name, unsigned maj,
               unsigned min, struct moat_error **err)
{
  cleanup_free char *host = xasprintf ("/dev/%s", host_name);
  cleanup_close int src = -1;
  cleanup_close int dst = -1;
  struct stat st;
  int f;

  src = open (host, O_PATH | O_CLOEXEC | O_NOFOLLOW);
  if (src < 0)
    return moat_fail (err, errno, "opening %s", host);
  if (fstat (src, &st) < 0)
    return moat_fail (err, errno, "stat %s", host);
  if (!S_ISCHR (st.st_mode) || major (st.st_rdev) != maj
      || minor (st.st_rdev) != min)
    return moat_fail (err, 0, "%s is not the expected device %u:%u", host, maj,
                      min);
  f = openat (devfd, name, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (f < 0)
    return moat_fail (err, errno, "creating /dev/%s", name);
  close (f);
  dst = openat (devfd, name, O_PATH | O_CLOEXEC | O_NOFOLLOW);
  if (dst < 0)
    return moat_fail (err, errno, "opening /dev/%s", name);
  return bind_fd (src, dst, false, MS_NOSUID | MS_NOEXEC, 0, host, err);
}

static int
dev_setup (int rootfd, const struct spec *s, struct moat_error **err)
{
  static const char *const links[][2] = { { "/proc/self/fd", "fd" },
                                          { "/proc/self/fd/0", "stdin" },
                                          { "/proc/self/fd/1", "stdout" },
                                          { "/proc/self/fd/2", "stderr" },
                                          { "pts/ptmx", "ptmx" } };
  cleanup_close int devfd = -1;
  int r;

  devfd = sys_openat2 (rootfd, "dev", O_DIRECTORY | O_CLOEXEC, IN_ROOT);
  if (devfd < 0)
    return moat_fail (err, errno, "opening /dev in the rootfs");
  for (size_t i = 0; i < sizeof (default_devs) / sizeof (default_devs[0]); i++)
    {
      r = dev_bind_host (devfd, default_devs[i].name, default_devs[i].name,
                         default_devs[i].maj, default_devs[i].min, err);
      if (r < 0)
        return r;
    }
  for (size_t i = 0; i < s->linux_.n_devices; i++)
    {
      const struct spec_device *d = &s->linux_.devices[i];
      const char *name = d->path;
      /* The host node is found by number: /dev/test1 c 1:3 is /dev/null. */
      const char *host_name = name + 5;
      bool dup = false;
      if (strncmp (name, "/dev/", 5) != 0 || strchr (name + 5, '/'))
        continue; /* the profile only lets plain /dev/NAME through */
      for (size_t j = 0; j < sizeof (default_devs) / sizeof (default_devs[0]);
           j++)
        dup |= strcmp (name + 5, default_devs[j].name) == 0;
      if (dup)
        continue;
      for (size_t j = 0; j < sizeof (default_devs) / sizeof (default_devs[0]);
           j++)
        if (d->type == 'c' && default_devs[j].maj == d->major
            && default_devs[j].min == d->minor)
          host_name = default_devs[j].name;
      r = dev_bind_host (devfd, host_name, name + 5, (unsigned)d->major,
                         (unsigned)d->minor, err);
      if (r < 0)
        return r;
    }
  for (size_t i = 0; i < sizeof (links) / sizeof (links[0]); i++)
    if (symlinkat (links[i][0], devfd, links[i][1]) < 0 && errno != EEXIST)
      return moat_fail (err, errno, "creating /dev/%s", links[i][1]);
  return 0;
}

static bool
spec_mounts_dev (const struct spec *s)
{
  for (size_t i = 0; i < s->n_mounts; i++)
    if (strcmp (s->mounts[i].destination, "/dev") == 0)
      return true;
  return false;
}

int
rootfs_prepare (const struct spec *s, const char *rootfs,
                const int *mount_src_fds, enum cgroup_mode cgmode,
                int rootfs_tree, struct moat_error **err)
{
  cleanup_close int rootfd = -1;
  int r;

  /* Nothing done here may propagate back to the host. */
  if (mount (NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
    return moat_fail (err, errno, "making / a slave mount");
  /* G12: a tree moat cloned (and idmapped) is attached already. */
  if (rootfs_tree < 0
      && mount (rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return moat_fail (err, errno, "bind mounting the rootfs %s", rootfs);
  rootfd = open (rootfs, O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return moat_fail (err, errno, "opening the rootfs %s", rootfs);

  for (size_t i = 0; i < s->n_mounts; i++)
    {
      r = mount_one (rootfd, &s->mounts[i], mount_src_fds[i], cgmode, err);
      if (r < 0)
        return r;
    }
  if (spec_mounts_dev (s))
    {
      r = dev_setup (rootfd, s, err);
      if (r < 0)
        return r;
    }
  /* The cwd is created if missing, as runc does, while the root is still
   * writable. */
  if (s->process && s->process->cwd)
    {
      cleanup_close int cwd = -1;
      r = rootfs_open_in (rootfd, s->process->cwd, true, false, &cwd, err);
      if (r < 0)
        return moat_error_wrap (err, "process.cwd");
    }
  return 0;
}

/* Images built FROM scratch, distroless ones, have no /tmp or /var/tmp:
 * the profile's scratch tmpfs needs its mount point all the same. The
 * rootfs is the container's, so moat makes it there (as runc makes every
 * mount point), now, as host root: an init in a user namespace may not be
 * able to write a rootfs that was not idmapped. A read-only rootfs cannot
 * take one; without the directory there is nothing to cover and nothing
 * the container could write there either (its root ends read-only, G5),
 * so the mount is left out and told. */
int
rootfs_place_profile_mounts (struct spec *s, const char *rootfs,
                             struct override_list *ov, struct moat_error **err)
{
  cleanup_close int rootfd = -1;
  cleanup_free bool *drop = xcalloc (s->n_mounts + 1, sizeof (bool));
  size_t kept = 0;

  for (size_t i = 0; i < s->n_mounts; i++)
    {
      const char *dest = s->mounts[i].destination;
      cleanup_free char *path = NULL;
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
      if (e->errnum != EROFS)
        {
          *err = e;
          return moat_error_wrap (err, "mount %s", dest);
        }
      moat_error_free (&e);
      path = xasprintf ("mounts[%s]", dest);
      override_list_add (ov, OVERRIDE_CHANGED, path, "added by the profile",
                         "not mounted: the rootfs is read-only and has no "
                         "such directory");
      fprintf (stderr,
               "moat: warning: %s: the profile's tmpfs is not mounted: the "
               "rootfs is read-only and has no %s\n",
               path, dest);
      drop[i] = true;
    }
  for (size_t i = 0; i < s->n_mounts; i++)
    if (drop[i])
      spec_mount_clear (&s->mounts[i]);
    else
      s->mounts[kept++] = s->mounts[i];
  s->n_mounts = kept;
  return 0;
}

int
rootfs_pivot (const char *rootfs, bool no_pivot, struct moat_error **err)
{
  if (chdir (rootfs) < 0)
    return moat_fail (err, errno, "chdir to the rootfs");
  if (no_pivot)
    {
      if (mount (rootfs, "/", NULL, MS_MOVE, NULL) < 0)
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
mask_path (int rootfd, const char *path, struct moat_error **err)
{
  cleanup_close int dst = -1;
  cleanup_close int fsfd = -1;
  cleanup_close int mnt = -1;
  struct stat st;

  dst = sys_openat2 (rootfd, path, O_PATH | O_CLOEXEC, IN_ROOT);
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
      cleanup_close int null = open ("/dev/null", O_PATH | O_CLOEXEC);
      struct stat ns;
      if (null < 0 || fstat (null, &ns) < 0 || !S_ISCHR (ns.st_mode)
          || major (ns.st_rdev) != 1 || minor (ns.st_rdev) != 3)
        {
          /* No trustworthy /dev/null in the container: an empty read-only
           * tmpfs cannot cover a file, so refuse rather than leave it. */
          return moat_fail (err, 0, "masking %s: no /dev/null to mask with",
                            path);
        }
      /* Not nodev: the file must read empty, as runc's masks do, not
       * fail with EACCES. */
      return bind_fd (null, dst, false, MS_RDONLY | MS_NOSUID | MS_NOEXEC, 0,
                      path, err);
    }
  fsfd = fsopen ("tmpfs", FSOPEN_CLOEXEC);
  if (fsfd < 0)
    return moat_fail (err, errno, "masking %s: fsopen", path);
  /* Mode 0555, as runc's read-only tmpfs: an empty directory a listing
   * shows as empty, not one that fails with EACCES. Nothing is written:
   * read-only, one inode, one page. */
  if (fsconfig (fsfd, FSCONFIG_SET_STRING, "size", "4k", 0) < 0
      || fsconfig (fsfd, FSCONFIG_SET_STRING, "nr_inodes", "1", 0) < 0
      || fsconfig (fsfd, FSCONFIG_SET_STRING, "mode", "0555", 0) < 0
      || fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return moat_fail (err, errno, "masking %s: tmpfs", path);
  mnt = fsmount (fsfd, FSMOUNT_CLOEXEC,
                 MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
                     | MOUNT_ATTR_NOEXEC);
  if (mnt < 0)
    return moat_fail (err, errno, "masking %s: fsmount", path);
  if (move_mount (mnt, "", dst, "",
                  MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)
      < 0)
    return moat_fail (err, errno, "masking %s: attaching", path);
  return 0;
}

static int
readonly_path (int rootfd, const char *path, struct moat_error **err)
{
  cleanup_close int dst = -1;
  dst = sys_openat2 (rootfd, path, O_PATH | O_CLOEXEC, IN_ROOT);
  if (dst < 0)
    {
      if (errno == ENOENT)
        return 0;
      return moat_fail (err, errno, "making %s read-only", path);
    }
  return bind_fd (dst, dst, true, MS_RDONLY | MS_NOSUID | MS_NODEV, 0, path,
                  err);
}

int
rootfs_finish (const struct spec *s, struct moat_error **err)
{
  cleanup_close int rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  int r;

  if (rootfd < 0)
    return moat_fail (err, errno, "opening /");
  for (char **p = s->linux_.readonly_paths; p && *p; p++)
    if ((r = readonly_path (rootfd, *p, err)) < 0)
      return r;
  for (char **p = s->linux_.masked_paths; p && *p; p++)
    if ((r = mask_path (rootfd, *p, err)) < 0)
      return r;
  if (s->linux_.rootfs_propagation && *s->linux_.rootfs_propagation)
    {
      static const struct
      {
        const char *name;
        unsigned long flags;
      } props[] = { { "private", MS_PRIVATE },
                    { "rprivate", MS_PRIVATE | MS_REC },
                    { "slave", MS_SLAVE },
                    { "rslave", MS_SLAVE | MS_REC },
                    { "shared", MS_SHARED },
                    { "rshared", MS_SHARED | MS_REC },
                    { "unbindable", MS_UNBINDABLE },
                    { "runbindable", MS_UNBINDABLE | MS_REC } };
      unsigned long f = 0;
      for (size_t i = 0; i < sizeof (props) / sizeof (props[0]); i++)
        if (strcmp (props[i].name, s->linux_.rootfs_propagation) == 0)
          f = props[i].flags;
      if (f == 0)
        return moat_fail (err, 0, "linux.rootfsPropagation: unknown value %s",
                          s->linux_.rootfs_propagation);
      if (mount (NULL, "/", NULL, f, NULL) < 0)
        return moat_fail (err, errno, "setting rootfs propagation");
    }
  /* G6/G13: /dev's nodes are in place (and the console): nothing more
   * may be written or run there. /dev/shm, /dev/pts and /dev/mqueue are
   * mounts of their own and stay as they are. */
  if (spec_mounts_dev (s))
    {
      cleanup_close int dev
          = sys_openat2 (rootfd, "dev", O_PATH | O_CLOEXEC, IN_ROOT);
      struct mount_attr dattr
          = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC };
      if (dev < 0
          || mount_setattr (dev, "", AT_EMPTY_PATH, &dattr, sizeof (dattr)) < 0)
        return moat_fail (err, errno, "making /dev read-only");
    }
  /* G5: the root is nosuid,nodev like every other mount; an image's setuid
   * files and device nodes mean nothing in the container. */
  struct mount_attr attr
      = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
                      | (s->root_readonly ? MOUNT_ATTR_RDONLY : 0) };
  if (mount_setattr (AT_FDCWD, "/", 0, &attr, sizeof (attr)) < 0)
    return moat_fail (err, errno, "making / %snosuid,nodev",
                      s->root_readonly ? "read-only, " : "");
  return 0;
}
