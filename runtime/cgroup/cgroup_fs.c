/* File access inside cgroup directories, shared by cgroup.c and the v1/v2
 * back-ends, and the kernel's cgroupfs behind struct cgroup_fs. Every open
 * goes through cg_open_beneath(), so a symlink planted in a hierarchy (or a
 * cgroupsPath that slipped through) cannot lead out of the cgroup mount.
 * The bottom of the cgroup files: it calls none of the others. */
#include "cgroup_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/util.h"

/* Kernels before 5.6 have no openat2: walk the components with O_NOFOLLOW
 * instead (paths were checked for ".." already). This fallback can go when
 * the baseline kernel is 5.6. */
static int
open_beneath_by_walking (int dirfd, const char *path, int flags)
{
  cleanup_free char *copy = xstrdup (path);
  cleanup_close int cur = -1;
  char *save = NULL, *comp, *next;

  comp = strtok_r (copy, "/", &save);
  if (comp == NULL)
    return openat (dirfd, ".", flags | O_CLOEXEC);
  for (;;)
    {
      int at = cur >= 0 ? cur : dirfd, fd;
      if (strcmp (comp, "..") == 0)
        {
          errno = EXDEV;
          return -1;
        }
      next = strtok_r (NULL, "/", &save);
      if (next == NULL)
        return openat (at, comp, flags | O_NOFOLLOW | O_CLOEXEC);
      fd = openat (at, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return -1;
      if (cur >= 0)
        close (cur);
      cur = fd;
      comp = next;
    }
}

int
cg_open_beneath (int dirfd, const char *path, int flags)
{
  static bool no_openat2;
  struct open_how how = {
    .flags = (uint64_t)(flags | O_CLOEXEC),
    .mode = 0,
    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };
  int fd;

  if (*path == '\0')
    path = ".";
  if (!no_openat2)
    {
      fd = (int)syscall (SYS_openat2, dirfd, path, &how, sizeof (how));
      if (fd >= 0 || errno != ENOSYS)
        return fd;
      no_openat2 = true;
    }
  return open_beneath_by_walking (dirfd, path, flags);
}

char *
cg_strndup (const char *s, size_t n)
{
  char *p = xmalloc (n + 1);
  memcpy (p, s, n);
  p[n] = '\0';
  return p;
}

/* cgroupfs takes one value per write(2): never split it. */
static int
write_value (int fd, const char *value)
{
  ssize_t n = write (fd, value, strlen (value));
  if (n < 0)
    return -errno;
  if ((size_t)n != strlen (value))
    return -EIO;
  return 0;
}

int
cg_write_file (int dirfd, const char *file, const char *value, int extra_flags)
{
  cleanup_close int fd
      = cg_open_beneath (dirfd, file, O_WRONLY | O_NOCTTY | extra_flags);
  if (fd < 0)
    return -errno;
  return write_value (fd, value);
}

int
cg_write_each (struct cgroup_hier *h, const char *file,
               const char *const *values, size_t n, struct moat_error **err)
{
  int r = 0;
  if (h->fd < 0)
    return moat_fail (err, ENOENT, "writing %s", file);
  if (h->fs->write_each)
    r = h->fs->write_each (h->fd, file, values, n);
  else
    for (size_t i = 0; r == 0 && i < n; i++)
      r = h->fs->write (h->fd, file, values[i]);
  if (r < 0)
    return moat_fail (err, -r, "writing %s", file);
  return 0;
}

int
cg_write_fd (int dirfd, const struct cgroup_fs *fs, const char *file,
             const char *value)
{
  return fs->write (dirfd, file, value);
}

int
cg_write (struct cgroup_hier *h, const char *file, const char *value,
          struct moat_error **err)
{
  int r;
  if (h->fd < 0)
    return moat_fail (err, ENOENT, "writing %s", file);
  r = cg_write_fd (h->fd, h->fs, file, value);
  if (r < 0)
    return moat_fail (err, -r, "writing %s", file);
  return 0;
}

int
cg_writef (struct cgroup_hier *h, const char *file, struct moat_error **err,
           const char *fmt, ...)
{
  va_list ap;
  char buf[256];
  int n;

  va_start (ap, fmt);
  n = vsnprintf (buf, sizeof (buf), fmt, ap);
  va_end (ap);
  if (n < 0 || (size_t)n >= sizeof (buf))
    return moat_fail (err, EINVAL, "writing %s: value too long", file);
  return cg_write (h, file, buf, err);
}

int
cg_read (int dirfd, const char *file, char **ret)
{
  cleanup_close int fd = -1;

  if (dirfd < 0)
    return -ENOENT;
  fd = cg_open_beneath (dirfd, file, O_RDONLY | O_NOCTTY);
  if (fd < 0)
    return -errno;
  /* Interface files are small; cgroup.procs of a big cgroup is the
   * largest read here. */
  return read_fd_all (fd, 16u * 1024 * 1024, ret, NULL);
}

static void
trim_newline (char *s)
{
  size_t n = strlen (s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
    s[--n] = '\0';
}

int
cg_read_u64 (int dirfd, const char *file, uint64_t *ret)
{
  cleanup_free char *text = NULL;
  int r = cg_read (dirfd, file, &text);
  if (r < 0)
    return r;
  trim_newline (text);
  if (strcmp (text, "max") == 0)
    {
      *ret = UINT64_MAX;
      return 0;
    }
  return parse_uint64 (text, ret);
}

int
cg_read_keyed (int dirfd, const char *file, const char *key, uint64_t *ret)
{
  cleanup_free char *text = NULL;
  size_t klen = strlen (key);
  int r = cg_read (dirfd, file, &text);
  if (r < 0)
    return r;
  for (char *line = text, *end; line && *line; line = end)
    {
      end = strchr (line, '\n');
      if (end)
        *end++ = '\0';
      if (strncmp (line, key, klen) == 0 && line[klen] == ' ')
        return parse_uint64 (line + klen + 1, ret);
    }
  return -ENOENT;
}

bool
cg_has_file (struct cgroup_hier *h, const char *file)
{
  struct stat st;
  if (h == NULL || h->fd < 0)
    return false;
  return fstatat (h->fd, file, &st, AT_SYMLINK_NOFOLLOW) == 0
         && S_ISREG (st.st_mode);
}

int
cg_write_pair (struct cgroup_hier *h, const char *file1, const char *value1,
               const char *file2, const char *value2, struct moat_error **err)
{
  const char *failed = file1;
  int r = cg_write_fd (h->fd, h->fs, file1, value1);
  if (r == 0)
    {
      failed = file2;
      r = cg_write_fd (h->fd, h->fs, file2, value2);
    }
  if (r == 0)
    return 0;
  if (r != -EINVAL)
    return moat_fail (err, -r, "writing %s", failed);
  r = cg_write (h, file2, value2, err);
  if (r < 0)
    return r;
  return cg_write (h, file1, value1, err);
}

bool
cg_backoff (unsigned *tries)
{
  /* 1, 2, 4, 8, 16 ms, then 20 ms steps: about 5 s in all. */
  enum
  {
    RAMP = 5,
    STEPS = 250
  };
  long ms;
  struct timespec ts;

  if (*tries >= RAMP + STEPS)
    return false;
  ms = *tries < RAMP ? 1L << *tries : 20;
  (*tries)++;
  ts.tv_sec = 0;
  ts.tv_nsec = ms * 1000000L;
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
  return true;
}

bool
cg_has_word (const char *list, const char *word)
{
  size_t n = strlen (word);
  for (const char *p = list; p && *p;)
    {
      p += strspn (p, " \t\n");
      if (strncmp (p, word, n) == 0 && (p[n] == '\0' || strchr (" \t\n", p[n])))
        return true;
      p += strcspn (p, " \t\n");
    }
  return false;
}

/* memory.stat as the "raw" map: keys the kernel writes are [a-z0-9_]; a
 * line that is not is skipped so the JSON stays valid whatever the file
 * holds. */
void
cg_stats_raw (int dirfd, const char *file, struct cgroup_stats *st)
{
  cleanup_free char *text = NULL;
  if (cg_read (dirfd, file, &text) < 0)
    return;
  for (char *line = text, *end; line && *line; line = end)
    {
      char *sp;
      uint64_t v;
      end = strchr (line, '\n');
      if (end)
        *end++ = '\0';
      sp = strchr (line, ' ');
      if (sp == NULL || (size_t)(sp - line) >= sizeof (st->raw[0].key)
          || strspn (line, "abcdefghijklmnopqrstuvwxyz0123456789_")
                 != (size_t)(sp - line)
          || parse_uint64 (sp + 1, &v) < 0)
        continue;
      st->raw = xrealloc (st->raw, (st->n_raw + 1) * sizeof (*st->raw));
      memcpy (st->raw[st->n_raw].key, line, (size_t)(sp - line));
      st->raw[st->n_raw].key[sp - line] = '\0';
      st->raw[st->n_raw++].value = v;
    }
}

uint64_t
cg_stats_raw_get (const struct cgroup_stats *st, const char *key)
{
  for (size_t i = 0; i < st->n_raw; i++)
    if (strcmp (st->raw[i].key, key) == 0)
      return st->raw[i].value;
  return 0;
}

void
cg_stats_pids (struct cgroup *cg, struct cgroup_stats *st)
{
  struct cgroup_hier *h = cgroup_hier_for (cg, CG_PIDS);
  if (h == NULL)
    return;
  cg_read_u64 (h->fd, "pids.current", &st->pids_current);
  /* runc reports an unlimited pids.max as 0 (omitted). */
  if (cg_read_u64 (h->fd, "pids.max", &st->pids_limit) == 0
      && st->pids_limit == UINT64_MAX)
    st->pids_limit = 0;
}

int
cg_check_cpuset (const char *what, const char *value, struct moat_error **err)
{
  if (value[strspn (value, "0123456789,-")] != '\0')
    return moat_fail (err, EINVAL, "%s: invalid cpuset `%s`", what, value);
  return 0;
}

struct cgroup_hier *
cgroup_hier_for (struct cgroup *cg, unsigned ctrls)
{
  for (size_t i = 0; i < cg->n_hiers; i++)
    if ((cg->hiers[i].ctrls & ctrls) && cg->hiers[i].fd >= 0)
      return &cg->hiers[i];
  return NULL;
}

/* ---- the kernel's cgroupfs ---- */

static long
kernel_magic (const char *dir)
{
  struct statfs sfs;
  return statfs (dir, &sfs) == 0 ? (long)sfs.f_type : 0;
}

static int
kernel_write (int dirfd, const char *file, const char *value)
{
  return cg_write_file (dirfd, file, value, 0);
}

static int
kernel_write_each (int dirfd, const char *file, const char *const *values,
                   size_t n)
{
  cleanup_close int fd = cg_open_beneath (dirfd, file, O_WRONLY | O_NOCTTY);
  int r = fd < 0 ? -errno : 0;
  for (size_t i = 0; r == 0 && i < n; i++)
    r = write_value (fd, values[i]);
  return r;
}

/* The kernel drops a cgroup's interface files with it. */
static int
kernel_rmdir (int parent_fd, const char *name)
{
  return unlinkat (parent_fd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

static bool
kernel_systemd_booted (void)
{
  /* sd_booted()'s test, without loading libsystemd for it. */
  struct stat st;
  return lstat ("/run/systemd/system/", &st) == 0;
}

const struct cgroup_fs cgroup_fs_kernel = {
  .magic = kernel_magic,
  .write = kernel_write,
  .write_each = kernel_write_each,
  .populate = NULL, /* the kernel makes the interface files itself */
  .rmdir = kernel_rmdir,
  .attach_devices = cg_devices_attach,
  .systemd_booted = kernel_systemd_booted,
};

static bool
hugepage_size_listed (const struct spec_resources *res, const char *size)
{
  for (size_t i = 0; i < res->n_hugepage_limits; i++)
    if (strcmp (res->hugepage_limits[i].page_size, size) == 0)
      return true;
  return false;
}

int
cg_apply_blkio_weight (struct cgroup *cg, struct cgroup_hier *h,
                       const char *bfq_file, const char *file, uint16_t weight,
                       unsigned converted, struct moat_error **err)
{
  cleanup_free char *why = NULL;
  char asked[8];

  if (cg_has_file (h, bfq_file))
    return cg_writef (h, bfq_file, err, "%u", (unsigned)weight);
  if (cg_has_file (h, file))
    return cg_writef (h, file, err, "%u", converted);
  snprintf (asked, sizeof (asked), "%u", (unsigned)weight);
  why = h ? xasprintf ("this host has neither %s nor %s: no weight-based "
                       "block scheduler (BFQ) runs its disks",
                       bfq_file, file)
          : xstrdup ("this host mounts no blkio hierarchy");
  cg_ignore (cg, "linux.resources.blockIO.weight", asked, why);
  return 0;
}

int
cg_apply_hugetlb (struct cgroup_hier *h, const struct spec_resources *res,
                  const char *suffix, struct moat_error **err)
{
  int64_t cap
      = res->memory.has_limit && res->memory.limit > 0 ? res->memory.limit : 0;
  struct dirent *e;
  DIR *d;
  int fd, r = 0;

  for (size_t i = 0; i < res->n_hugepage_limits; i++)
    {
      const struct spec_hugepage_limit *l = &res->hugepage_limits[i];
      cleanup_free char *file
          = xasprintf ("hugetlb.%s.%s", l->page_size, suffix);
      if (!cg_has_file (h, file))
        return moat_fail (err, 0,
                          "linux.resources.hugepageLimits: this host has no "
                          "%s huge pages (no %s in the container's cgroup)",
                          l->page_size, file);
      r = cg_writef (h, file, err, "%" PRIu64, l->limit);
      if (r < 0)
        return r;
    }
  if (cap == 0)
    return 0;
  fd = openat (h->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  d = fd >= 0 ? fdopendir (fd) : NULL;
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return moat_fail (err, errno, "listing the hugetlb cgroup");
    }
  while (r == 0 && (e = readdir (d)) != NULL)
    {
      const char *size = e->d_name + strlen ("hugetlb.");
      const char *dot = strchr (size, '.');
      cleanup_free char *name = NULL;

      if (strncmp (e->d_name, "hugetlb.", 8) != 0 || dot == NULL
          || strcmp (dot + 1, suffix) != 0)
        continue;
      name = xasprintf ("%.*s", (int)(dot - size), size);
      if (!hugepage_size_listed (res, name))
        r = cg_writef (h, e->d_name, err, "%" PRId64, cap);
    }
  closedir (d);
  return r;
}
