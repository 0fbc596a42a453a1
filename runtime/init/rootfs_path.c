/* Paths inside the container's rootfs, resolved in it with
 * openat2(RESOLVE_IN_ROOT) (a symlink in the image cannot lead out), and
 * made where missing, each new step resolved from the root again. */
#include "linux.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../lib/util.h"

int
rootfs_openat2_in (int rootfd, const char *path, uint64_t flags)
{
  struct open_how how
      = { .flags = flags, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
  return (int)syscall (SYS_openat2, rootfd, path, &how, sizeof (how));
}

/* name below dir_fd, a directory or an empty file; never through a
 * symlink. There already: fine. -1 with errno otherwise. */
static int
make_entry (int dir_fd, const char *name, bool as_file)
{
  if (as_file)
    {
      int f
          = openat (dir_fd, name,
                    O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
      if (f < 0)
        return errno == EEXIST ? 0 : -1;
      close (f);
      return 0;
    }
  return mkdirat (dir_fd, name, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/* The usual miss: only the last component is missing (/dev/pts on the
 * fresh /dev tmpfs). Its parent resolved in the root, the entry made
 * there, the whole path resolved in the root again: four calls, where
 * the walk below takes two per component. Anything else (a parent
 * missing too, an error): -1, and the walk does it and tells why. */
static int
make_last_in (int rootfd, const char *path, bool as_file, int *ret_fd)
{
  const char *slash = strrchr (path, '/');
  cleanup_free char *parent = NULL;
  cleanup_close int parent_fd = -1;
  int fd;

  if (slash == NULL || slash[1] == '\0')
    return -1;
  parent = xstrdup (path);
  parent[slash == path ? 1 : (size_t)(slash - path)] = '\0';
  parent_fd = rootfs_openat2_in (rootfd, parent, O_PATH | O_CLOEXEC);
  if (parent_fd < 0 || make_entry (parent_fd, slash + 1, as_file) < 0)
    return -1;
  fd = rootfs_openat2_in (rootfd, path, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return -1;
  *ret_fd = fd;
  return 0;
}

int
rootfs_open_in (int rootfd, const char *path, bool create, bool as_file,
                int *ret_fd, struct moat_error **err)
{
  cleanup_free char *copy = NULL;
  cleanup_close int cur = -1;
  char *save = NULL, *tok, *next;
  int fd;

  fd = rootfs_openat2_in (rootfd, path, O_PATH | O_CLOEXEC);
  if (fd >= 0 || errno != ENOENT || !create)
    {
      if (fd < 0)
        return moat_fail (err, errno, "resolving %s in the rootfs", path);
      *ret_fd = fd;
      return 0;
    }
  if (make_last_in (rootfd, path, as_file, ret_fd) == 0)
    return 0;

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
      nfd = rootfs_openat2_in (cur, tok, O_PATH | O_CLOEXEC);
      if (nfd < 0 && errno == ENOENT)
        {
          if (make_entry (cur, tok, last && as_file) < 0)
            return moat_fail (err, errno, "creating %s in the rootfs", path);
          nfd = rootfs_openat2_in (cur, tok, O_PATH | O_CLOEXEC);
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
        nfd = rootfs_openat2_in (rootfd, prefix, O_PATH | O_CLOEXEC);
        if (nfd < 0)
          return moat_fail (err, errno, "resolving %s in the rootfs", path);
      }
      close (cur);
      cur = nfd;
    }
  *ret_fd = steal_fd (&cur);
  return 0;
}
