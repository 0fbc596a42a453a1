/* The container's directories in each hierarchy: made with mkdir -p below
 * the mount (never through a symlink), and removed again leaf first; only
 * what cgroup_create made, or the leaf on destroy. moat's own parent
 * (/moat) stays, as crun's and runc's parents do: making and removing it
 * in every hierarchy cost each lone container ~60 syscalls. */
#include "cgroup_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/util.h"

/* Containers may nest cgroups of their own below the leaf; this bounds the
 * walks over them. */
#define MAX_NESTING 32

size_t
cg_count_components (const char *rel)
{
  size_t n = 0;
  for (const char *p = rel; *p; p++)
    if (*p == '/')
      n++;
  return n;
}

/* The first n components of rel, without the leading "/" ("" for n=0). */
char *
cg_rel_prefix (const char *rel, size_t n)
{
  const char *p = rel;
  if (n == 0)
    return xstrdup ("");
  for (size_t i = 0; i < n && *p; i++)
    p = strchrnul (p + 1, '/');
  return cg_strndup (rel + 1, (size_t)(p - rel - 1));
}

DIR *
cg_opendir (int dir_fd)
{
  int fd = openat (dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  if (d == NULL && fd >= 0)
    close (fd);
  return d;
}

void
cg_closedirp (DIR **d)
{
  if (*d)
    closedir (*d);
}

bool
cg_is_child_dir (const struct dirent *de)
{
  return de->d_type == DT_DIR && strcmp (de->d_name, ".") != 0
         && strcmp (de->d_name, "..") != 0;
}

bool
cg_has_child_dirs (int dir_fd)
{
  cleanup_dir DIR *d = cg_opendir (dir_fd);
  struct dirent *de;
  while (d && (de = readdir (d)))
    if (cg_is_child_dir (de))
      return true;
  return false;
}

/* rmdir, through the filesystem: the kernel drops the files with it. */
static int
remove_cgroup_dir (struct cgroup_hier *h, int parent_fd, const char *name)
{
  return h->fs->rmdir (parent_fd, name);
}

static int
remove_children (struct cgroup_hier *h, int dir_fd, int depth)
{
  cleanup_dir DIR *d = cg_opendir (dir_fd);
  struct dirent *de;
  int ret = 0;

  if (d == NULL)
    return -errno;
  while ((de = readdir (d)))
    {
      int r;
      if (!cg_is_child_dir (de))
        continue;
      r = cg_remove_tree (h, dir_fd, de->d_name, depth + 1);
      if (r < 0 && r != -ENOENT && ret == 0)
        ret = r;
    }
  return ret;
}

int
cg_remove_tree (struct cgroup_hier *h, int parent_fd, const char *name,
                int depth)
{
  cleanup_close int fd = -1;
  int r;
  if (depth > MAX_NESTING)
    return -ELOOP;
  /* Most leaves hold no cgroup of their own: one rmdir, no listing. The
   * kernel refuses (EBUSY) one with children or processes. */
  r = remove_cgroup_dir (h, parent_fd, name);
  if (r != -EBUSY)
    return r;
  fd = cg_open_beneath (parent_fd, name, O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return -errno;
  r = remove_children (h, fd, depth);
  if (r < 0)
    return r;
  return remove_cgroup_dir (h, parent_fd, name);
}

/* Open rel's parent in h; a top-level cgroup's is the mount, lent. */
int
cg_open_parent (struct cgroup_hier *h, const char *rel, const char **ret_name,
                int *ret_owned)
{
  const char *slash = strrchr (rel, '/');
  cleanup_free char *parent = NULL;
  *ret_name = slash + 1;
  *ret_owned = -1;
  if (slash == rel)
    return h->mount_fd;
  parent = cg_strndup (rel + 1, (size_t)(slash - rel - 1));
  *ret_owned = cg_open_beneath (h->mount_fd, parent, O_RDONLY | O_DIRECTORY);
  return *ret_owned;
}

/* Undo what cgroup_create made in h: the leaf upwards, n_made levels. */
void
cg_remove_made (struct cgroup_hier *h, const char *rel)
{
  size_t n = cg_count_components (rel);
  for (size_t k = 0; k < h->n_made; k++)
    {
      cleanup_free char *path = cg_rel_prefix (rel, n - k);
      cleanup_free char *abs = xasprintf ("/%s", path);
      cleanup_close int owned = -1;
      const char *name;
      int parent = cg_open_parent (h, abs, &name, &owned);
      if (parent >= 0)
        remove_cgroup_dir (h, parent, name);
    }
  h->n_made = 0;
}

/* One step of the walk, as an fd. A parent (/moat) is there but for the
 * first container: opened first. A leaf is new but where an engine made
 * it: made first. *ret_made says whether it was made. -errno on failure. */
static int
open_or_make (int dir_fd, const char *name, bool likely_new, bool *ret_made)
{
  int fd;
  *ret_made = false;
  if (!likely_new)
    {
      fd = cg_open_beneath (dir_fd, name, O_RDONLY | O_DIRECTORY);
      if (fd >= 0 || errno != ENOENT)
        return fd >= 0 ? fd : -errno;
    }
  if (mkdirat (dir_fd, name, 0755) == 0)
    *ret_made = true;
  else if (errno != EEXIST)
    return -errno;
  fd = cg_open_beneath (dir_fd, name, O_RDONLY | O_DIRECTORY);
  return fd >= 0 ? fd : -errno;
}

static int
make_dirs_once (struct cgroup *cg, struct cgroup_hier *h,
                struct moat_error **err)
{
  cleanup_free char *copy = xstrdup (cg->rel + 1);
  /* The walk's current directory: the mount (not ours to close) first. */
  cleanup_close int owned = -1;
  int cur = h->mount_fd;
  size_t n = cg_count_components (cg->rel), i = 0;
  bool making = false;
  char *save = NULL;
  int r;

  h->n_made = 0;
  r = cg->backend->prepare_dir (h, -1, cur, false, false, err);
  if (r < 0)
    return r;
  for (char *c = strtok_r (copy, "/", &save); c;
       c = strtok_r (NULL, "/", &save), i++)
    {
      bool made = false;
      int next = open_or_make (cur, c, making || i + 1 == n, &made);
      if (next >= 0 && making && !made) /* below one we made: a race */
        {
          close (next);
          next = -EEXIST;
        }
      if (next < 0)
        return moat_fail (err, -next, "creating %s in the %s hierarchy", c,
                          h->name);
      if (made && !making)
        h->n_made = n - i;
      making = making || made;
      if (making && h->fs->populate)
        h->fs->populate (h->mount_fd, cur, next);
      r = cg->backend->prepare_dir (h, cur, next, i + 1 == n, making, err);
      cleanup_closep (&owned);
      cur = owned = next;
      if (r < 0)
        return r;
    }
  if (owned < 0) /* the hierarchy's root itself */
    owned = fcntl (h->mount_fd, F_DUPFD_CLOEXEC, 3);
  if (owned < 0)
    return moat_fail (err, errno, "opening the %s hierarchy", h->name);
  h->fd = steal_fd (&owned);
  return 0;
}

/* mkdir -p below the mount, never following a symlink. */
int
cg_make_dirs (struct cgroup *cg, struct cgroup_hier *h, struct moat_error **err)
{
  int r = 0;
  /* ENOENT: a concurrent destroy removed a shared parent (/moat) between
   * our mkdir and the next; start again from the mount. */
  for (int attempt = 0; attempt < 3; attempt++)
    {
      moat_error_free (err);
      r = make_dirs_once (cg, h, err);
      if (r == 0)
        return 0;
      cg_remove_made (h, cg->rel);
      if (r != -ENOENT)
        break;
    }
  return r;
}

/* The leaf in every hierarchy; true when none is left. */
int
cg_remove_leaves (struct cgroup *cg, bool *ret_gone)
{
  int ret = 0;
  *ret_gone = true;
  for (size_t i = 0; i < cg->n_hiers; i++)
    {
      struct cgroup_hier *h = &cg->hiers[i];
      cleanup_close int owned = -1;
      const char *name;
      int parent, r;
      if (h->fd < 0)
        continue;
      /* The usual leaf holds nothing: one rmdir by its path from the
       * mount (cgroupfs has no symlinks to follow), the walk only when
       * the kernel refuses. */
      r = remove_cgroup_dir (h, h->mount_fd, cg->rel + 1);
      if (r == -EBUSY)
        {
          parent = cg_open_parent (h, cg->rel, &name, &owned);
          r = parent < 0 ? -errno : cg_remove_tree (h, parent, name, 0);
        }
      if (r == 0 || r == -ENOENT)
        {
          close (h->fd);
          h->fd = -1;
          continue;
        }
      *ret_gone = false;
      ret = r;
    }
  return ret;
}

/* The levels moat named between /moat and a deeper leaf ("/moat/a/ID")
 * go when empty; /moat itself stays, and nothing above a cgroup that moat
 * did not name is ever removed. */
void
cg_remove_levels_below_moat (struct cgroup *cg)
{
  size_t n = cg_count_components (cg->rel);
  if (strncmp (cg->rel, "/moat/", strlen ("/moat/")) != 0)
    return;
  for (size_t i = 0; i < cg->n_hiers; i++)
    for (size_t k = n - 1; k >= 2; k--)
      {
        cleanup_free char *path = cg_rel_prefix (cg->rel, k);
        if (remove_cgroup_dir (&cg->hiers[i], cg->hiers[i].mount_fd, path) < 0)
          break;
      }
}
