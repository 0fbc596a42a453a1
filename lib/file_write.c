/* write_file_atomic: a file replaced whole, each writer with a temporary
 * file of its own (lib/util.h says what it promises). */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* tmp (a name of this writer's own) takes the place of path, which
 * exists. Not by a rename over it: ext4 (this machine's /run) then writes
 * the new file's blocks out at once, so that a crash cannot leave it empty
 * (auto_da_alloc), and frees the old one's: about 4 % of a `moat run`'s
 * CPU for state.json's two rewrites. Files under the state root need not
 * outlive a reboot, so the two names are swapped and the old file
 * unlinked; a reader opens either whole file. On failure tmp is left for
 * the caller to unlink, holding the new content. */
static int
swap_into_place (int dirfd, const char *tmp, const char *path)
{
  int r;

  if (renameat2 (dirfd, tmp, dirfd, path, RENAME_EXCHANGE) < 0)
    {
      /* A filesystem without renameat2's flags. */
      if ((errno == EINVAL || errno == ENOSYS)
          && renameat (dirfd, tmp, dirfd, path) == 0)
        return 0;
      return -errno;
    }
  if (unlinkat (dirfd, tmp, 0) == 0)
    return 0;
  /* What was at path is not a file (a directory): put it back. */
  r = -errno;
  renameat2 (dirfd, tmp, dirfd, path, RENAME_EXCHANGE);
  return r;
}

static int
rename_into_place (int dirfd, const char *tmp, const char *path)
{
  if (renameat2 (dirfd, tmp, dirfd, path, RENAME_NOREPLACE) == 0)
    return 0;
  if (errno == EEXIST || errno == EINVAL || errno == ENOSYS)
    return swap_into_place (dirfd, tmp, path);
  return -errno;
}

/* A name beside path that no other writer uses: ".BASE.HEX". Writers of
 * one file at once (in different pid namespaces even) each get their own;
 * a clash, or a name someone planted, is EEXIST at creation and the next
 * attempt draws another. */
static char *
temp_name_beside (const char *path, unsigned attempt)
{
  static uint64_t drawn;
  const char *slash = strrchr (path, '/');
  const char *base = slash ? slash + 1 : path;
  uint64_t seed[3]
      = { monotonic_usec (), (uint64_t)getpid (), ++drawn + attempt };
  uint64_t h = fnv1a64 (seed, sizeof (seed), FNV1A64_INIT);

  return xasprintf ("%.*s.%.200s.%016" PRIx64, slash ? (int)(base - path) : 0,
                    path, base, h);
}

enum
{
  TEMP_NAME_ATTEMPTS = 16
};

/* Where the filesystem has no O_TMPFILE: a temporary file created under a
 * name of its own (O_EXCL: never an existing file, never through a
 * symlink), then renamed. Unlinked on every failure. */
static int
write_via_named_temp (int dirfd, const char *path, const char *data, size_t len,
                      mode_t mode)
{
  cleanup_free char *tmp = NULL;
  int fd = -1, r;

  for (unsigned i = 0; fd < 0 && i < TEMP_NAME_ATTEMPTS; i++)
    {
      free (tmp);
      tmp = temp_name_beside (path, i);
      fd = openat (dirfd, tmp,
                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
      if (fd < 0 && errno != EEXIST)
        return -errno;
    }
  if (fd < 0)
    return -EEXIST;
  r = write_all (fd, data, len);
  if (close (fd) < 0 && r == 0)
    r = -errno;
  if (r == 0)
    r = rename_into_place (dirfd, tmp, path);
  if (r < 0)
    unlinkat (dirfd, tmp, 0);
  return r;
}

/* Give the unnamed file fd the name path. linkat never follows a symlink
 * at path, and fails with EEXIST where anything is there. AT_EMPTY_PATH
 * wants CAP_DAC_READ_SEARCH; without it, the link through /proc. */
static int
link_tmpfile (int fd, int dirfd, const char *path)
{
  char self[64];

  if (linkat (fd, "", dirfd, path, AT_EMPTY_PATH) == 0)
    return 0;
  if (errno != ENOENT && errno != EPERM)
    return -errno;
  snprintf (self, sizeof (self), "/proc/self/fd/%d", fd);
  if (linkat (AT_FDCWD, self, dirfd, path, AT_SYMLINK_FOLLOW) == 0)
    return 0;
  return -errno;
}

/* The file is written unnamed (O_TMPFILE) and linked whole: no writer
 * ever opens another's temporary file, and one that dies leaves nothing.
 * A new path is the link itself; an existing one is replaced by a link
 * under a name of this writer's own, swapped in. No fsync: see util.h. */
int
write_file_atomic (int dirfd, const char *path, const char *data, size_t len,
                   mode_t mode)
{
  const char *slash = strrchr (path, '/');
  cleanup_free char *dir
      = slash ? xasprintf ("%.*s", (int)(slash - path) + (slash == path), path)
              : xstrdup (".");
  cleanup_free char *tmp = NULL;
  cleanup_close int fd = -1;
  int r = -EEXIST;

  fd = openat (dirfd, dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
  if (fd < 0)
    {
      /* No O_TMPFILE in this filesystem (or this kernel: EISDIR). */
      if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)
        return write_via_named_temp (dirfd, path, data, len, mode);
      return -errno;
    }
  r = write_all (fd, data, len);
  if (r == 0)
    r = link_tmpfile (fd, dirfd, path);
  /* Neither link allowed (no CAP_DAC_READ_SEARCH, no /proc: moat in a
   * user namespace of its own): the file is written again, named. */
  if (r == -ENOENT || r == -EPERM)
    return write_via_named_temp (dirfd, path, data, len, mode);
  for (unsigned i = 0; r == -EEXIST && i < TEMP_NAME_ATTEMPTS; i++)
    {
      free (tmp);
      tmp = temp_name_beside (path, i);
      r = link_tmpfile (fd, dirfd, tmp);
      if (r == 0)
        {
          r = swap_into_place (dirfd, tmp, path);
          if (r < 0)
            unlinkat (dirfd, tmp, 0);
          break;
        }
    }
  return r;
}
