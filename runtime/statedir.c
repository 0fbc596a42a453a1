#include "statedir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/util.h"

int
statedir_root_open (const char *root, bool create, int *ret_fd,
                    struct moat_error **err)
{
  int fd = open (root, O_DIRECTORY | O_CLOEXEC);
  *ret_fd = -1;
  if (fd < 0 && errno == ENOENT && !create)
    return 0;
  if (fd < 0 && errno == ENOENT)
    {
      int r = mkdir_p (root, 0700);
      if (r < 0)
        return moat_fail (err, -r, "creating state root %s", root);
      fd = open (root, O_DIRECTORY | O_CLOEXEC);
    }
  if (fd < 0)
    return moat_fail (err, errno, "opening state root %s", root);
  int r = statedir_root_check (fd, root, err);
  if (r < 0)
    {
      close (fd);
      return r;
    }
  *ret_fd = fd;
  return 0;
}

int
statedir_root_check (int rootfd, const char *root, struct moat_error **err)
{
  struct stat st;

  if (fstat (rootfd, &st) < 0)
    return moat_fail (err, errno, "state root %s", root);
  if (st.st_uid != geteuid ())
    return moat_error_setx (err, EPERM,
                            "state root %s: owned by uid %u, not by moat's "
                            "(%u): another user could plant state or links "
                            "in it",
                            root, (unsigned)st.st_uid, (unsigned)geteuid ());
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return moat_error_setx (err, EPERM,
                            "state root %s: writable by group or others "
                            "(mode %04o): another user could plant state or "
                            "links in it",
                            root, (unsigned)(st.st_mode & 07777));
  return 0;
}

int
statedir_subdir_open (const char *root, const char *name, mode_t mode,
                      int *ret_fd, struct moat_error **err)
{
  cleanup_close int rootfd = -1;
  cleanup_close int fd = -1;
  cleanup_free char *path = xasprintf ("%s/%s", root, name);
  bool create = mode != 0;
  int r = statedir_root_open (root, create, &rootfd, err);

  *ret_fd = -1;
  if (r < 0 || rootfd < 0)
    return r;
  if (create && mkdirat (rootfd, name, mode) < 0 && errno != EEXIST)
    return moat_fail (err, errno, "creating %s", path);
  fd = openat (rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && !create)
    return 0;
  if (fd < 0)
    return moat_fail (err, errno == ELOOP || errno == ENOTDIR ? ENOTDIR : errno,
                      "opening %s (a directory, not a link)", path);
  r = statedir_root_check (fd, path, err);
  if (r < 0)
    return r;
  *ret_fd = steal_fd (&fd);
  return 0;
}

/* The text the engines match; errnum ENOENT without strerror appended. */
static int
not_exist (struct moat_error **err, const char *id)
{
  return moat_error_setx (err, ENOENT, "container \"%s\" does not exist", id);
}

static int
lock_dir (int dirfd, const char *id, struct moat_error **err)
{
  if (TEMP_FAILURE_RETRY (flock (dirfd, LOCK_EX)) < 0)
    return moat_fail (err, errno, "locking the state of %s", id);
  return 0;
}

int
statedir_create (int rootfd, const char *id, int *ret_dirfd,
                 struct moat_error **err)
{
  cleanup_close int fd = -1;
  int r;

  if (mkdirat (rootfd, id, 0700) < 0)
    {
      if (errno == EEXIST)
        return moat_fail (err, 0, "container with id %s already exists", id);
      return moat_fail (err, errno, "creating the state directory");
    }
  fd = openat (rootfd, id, O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return moat_fail (err, errno, "opening the state directory");
  r = lock_dir (fd, id, err);
  if (r < 0)
    return r;
  *ret_dirfd = steal_fd (&fd);
  return 0;
}

int
statedir_open (int rootfd, const char *id, bool lock, int *ret_dirfd,
               struct moat_error **err)
{
  cleanup_close int fd = -1;
  int r;

  if (rootfd < 0) /* no root: statedir_root_open without create */
    return not_exist (err, id);
  fd = openat (rootfd, id, O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    {
      if (errno == ENOENT)
        return not_exist (err, id);
      return moat_fail (err, errno, "opening the state of %s", id);
    }
  if (lock)
    {
      r = lock_dir (fd, id, err);
      if (r < 0)
        return r;
      /* A delete may have removed it while we waited for the lock. */
      struct stat st;
      if (fstat (fd, &st) < 0 || st.st_nlink == 0)
        return not_exist (err, id);
    }
  *ret_dirfd = steal_fd (&fd);
  return 0;
}

int
statedir_remove (int rootfd, const char *id, struct moat_error **err)
{
  cleanup_close int fd
      = openat (rootfd, id, O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  DIR *d;
  struct dirent *de;

  if (fd < 0)
    return errno == ENOENT ? 0 : moat_fail (err, errno, "removing state");
  d = fdopendir (fd);
  if (d == NULL)
    return moat_fail (err, errno, "removing state");
  fd = -1;
  while ((de = readdir (d)))
    if (strcmp (de->d_name, ".") && strcmp (de->d_name, "..")
        && unlinkat (dirfd (d), de->d_name, 0) < 0 && errno == EISDIR)
      /* Nothing of moat's is a directory: damage, removed if empty. */
      unlinkat (dirfd (d), de->d_name, AT_REMOVEDIR);
  closedir (d);
  if (unlinkat (rootfd, id, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return moat_fail (err, errno, "removing the state directory of %s", id);
  return 0;
}

/* A page: one write of it lands whole, even when the writer is killed. */
#define STATE_REWRITE_MAX 4096

/* state.json rewritten in place, not replaced by a new file: on a
 * filesystem without a journal (this VM's /run) ext4 allocates a new
 * inode by skipping every inode freed in the last minutes, a buffer
 * lookup each, and create rewrites the state twice per container (a
 * quarter of a `run`'s CPU went to that search here). The writer holds
 * the state dir's lock; it takes state.json's own flock for the moment
 * of the write and readers take it shared (statedir_read_state), so no
 * reader sees half of one. The text is padded with blanks to the old
 * size rather than truncated: a writer killed midway leaves the old
 * text or the new, never an empty file. 1: the file is not there, the
 * text too long or a reader holds it (the caller replaces the file
 * whole). */
static int
rewrite_in_place (int dirfd, const char *json, size_t len)
{
  cleanup_close int fd = -1;
  cleanup_free char *padded = NULL;
  struct stat sb;
  ssize_t n;

  if (len > STATE_REWRITE_MAX)
    return 1;
  fd = openat (dirfd, "state.json",
               O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return errno == ENOENT ? 1 : -errno;
  /* A reader in the middle of it (or one stopped there): the file is
   * replaced whole instead, never waited for. */
  if (flock (fd, LOCK_EX | LOCK_NB) < 0)
    return errno == EWOULDBLOCK || errno == EINTR ? 1 : -errno;
  if (fstat (fd, &sb) < 0)
    return -errno;
  if (!S_ISREG (sb.st_mode))
    return -EINVAL;
  if ((size_t)sb.st_size > STATE_REWRITE_MAX)
    return 1;
  if ((size_t)sb.st_size > len)
    {
      padded = xmalloc (sb.st_size);
      memcpy (padded, json, len);
      memset (padded + len, ' ', sb.st_size - len);
      json = padded;
      len = sb.st_size;
    }
  n = pwrite (fd, json, len, 0);
  if (n < 0)
    return -errno;
  return (size_t)n == len ? 0 : -EIO;
}

int
statedir_write_state (int dirfd, const struct container_state *st,
                      struct moat_error **err)
{
  cleanup_free char *json = NULL;
  int r = state_to_json (st, &json, err);
  if (r < 0)
    return r;
  r = rewrite_in_place (dirfd, json, strlen (json));
  if (r == 1)
    r = write_file_atomic (dirfd, "state.json", json, strlen (json), 0600);
  if (r < 0)
    return moat_fail (err, -r, "writing state.json");
  return 0;
}

int
statedir_read_state (int dirfd, struct container_state **ret,
                     struct moat_error **err)
{
  cleanup_free char *text = NULL;
  cleanup_close int fd = openat (dirfd, "state.json",
                                 O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  size_t len;
  int r = fd < 0 ? -errno : 0;

  /* Shared: a rewrite in place (above) is never seen half done. */
  if (r == 0 && TEMP_FAILURE_RETRY (flock (fd, LOCK_SH)) < 0)
    r = -errno;
  if (r == 0)
    r = read_fd_all (fd, 1 << 22, &text, &len);
  if (r < 0)
    return moat_fail (err, -r, "reading state.json");
  return state_from_json (text, len, ret, err);
}
