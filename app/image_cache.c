/* The image cache's bookkeeping (see image.h): which entries are in use (a
 * sandbox's shared lock on the entry's lock file, a session's record in
 * its holders/), listing and pruning, and the bound on the cache's size,
 * the operator's image_cache_max_bytes. An entry records its size in
 * CACHE/<hex>/size (the bytes of its files); its lock file's mtime is its
 * last use. Before a new entry appears, the least recently used entries
 * that nothing holds are removed until it fits; what is in use is never
 * removed, so a cache whose images in use fill it takes no new one. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "../lib/util.h"

#define ENTRY_SIZE_FILE "size"

int
image_hold (const char *cache_dir, const char *digest, const char *name,
            const char *holder_dir, struct moat_error **err)
{
  const char *hex = image_digest_hex (digest);
  cleanup_free char *dir = NULL;
  cleanup_free char *text = NULL;
  cleanup_close int dirfd = -1;
  int r;

  if (hex == NULL)
    return moat_fail (err, EINVAL, "image cache: digest %s", digest);
  dir = xasprintf ("%s/%s/holders", cache_dir, hex);
  r = mkdir_p (dir, 0700);
  if (r < 0)
    return moat_fail (err, -r, "image cache: %s", dir);
  dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd < 0)
    return moat_fail (err, errno, "image cache: %s", dir);
  text = xasprintf ("%s\n", holder_dir);
  r = write_file_atomic (dirfd, name, text, strlen (text), 0600);
  if (r < 0)
    return moat_fail (err, -r, "image cache: %s/%s", dir, name);
  return 0;
}

void
image_entry_touch (int lockfd)
{
  futimens (lockfd, NULL);
}

/* Whether a holder of the entry (image_hold) is still there; the records of
 * those gone are removed on the way. */
static bool
entry_has_live_holders (int entryfd)
{
  cleanup_close int fd = openat (
      entryfd, "holders", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct dirent *de;
  bool live = false;
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;

  if (d == NULL)
    return false;
  fd = -1; /* closedir closes it */
  while ((de = readdir (d)))
    {
      cleanup_free char *path = NULL;
      size_t len;
      struct stat st;

      if (de->d_name[0] == '.')
        continue;
      if (read_file_at (dirfd (d), de->d_name, 4096, &path, &len) < 0
          || len == 0)
        continue;
      path[len - 1] = '\0';
      if (path[0] == '/' && stat (path, &st) == 0 && S_ISDIR (st.st_mode))
        live = true;
      else
        unlinkat (dirfd (d), de->d_name, 0);
    }
  closedir (d);
  return live;
}

/* The entry name, open: is a sandbox (its shared lock) or a live session
 * using it? Free: *ret_lockfd holds it exclusively, until closed. */
static bool
entry_busy (int entryfd, bool leftover, int *ret_lockfd)
{
  int lockfd = openat (entryfd, "lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  bool busy = (lockfd >= 0 && flock (lockfd, LOCK_EX | LOCK_NB) < 0)
              || (!leftover && entry_has_live_holders (entryfd));

  *ret_lockfd = lockfd;
  return busy;
}

/* An entry removed under its exclusive lock: out of sight first (a
 * sandbox that opened it before checks that its entry is still in place
 * once it has its lock). */
static int
entry_remove (int imagesfd, const char *name)
{
  cleanup_free char *trash = xasprintf (".trash-%s", name);

  if (renameat (imagesfd, name, imagesfd, trash) < 0)
    return -errno;
  remove_tree_at (imagesfd, trash);
  return 0;
}

/* Prune: the archives whose entry is gone are forgotten. */
static void
forget_archives_of_gone_entries (int imagesfd)
{
  cleanup_close int fd
      = openat (imagesfd, IMAGE_BY_ARCHIVE,
                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *de;

  if (d == NULL)
    return;
  fd = -1; /* closedir closes it */
  while ((de = readdir (d)))
    {
      cleanup_free char *digest = NULL;
      const char *hex;
      if (de->d_name[0] == '.')
        continue;
      digest = image_archive_recall (imagesfd, de->d_name);
      hex = image_digest_hex (digest);
      if (hex == NULL
          || faccessat (imagesfd, hex, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
        unlinkat (dirfd (d), de->d_name, 0);
    }
  closedir (d);
}

/* Each cache entry with whether a sandbox or a session holds it. */
static int
cache_walk (const char *cache_dir, FILE *out, bool prune,
            struct moat_error **err)
{
  cleanup_close int imagesfd = -1;
  DIR *d;
  struct dirent *de;
  int fd;

  if (image_cache_open (cache_dir, &imagesfd, err) < 0)
    return -1;
  fd = dup (imagesfd);
  d = fd >= 0 ? fdopendir (fd) : NULL;
  if (d == NULL)
    return moat_fail (err, errno, "image cache");
  while ((de = readdir (d)))
    {
      cleanup_close int entryfd = -1;
      cleanup_close int lockfd = -1;
      cleanup_free char *src = NULL;
      size_t len;
      bool busy, leftover = strncmp (de->d_name, ".tmp-", 5) == 0
                            || strncmp (de->d_name, ".trash-", 7) == 0;
      if ((de->d_name[0] == '.' && !leftover)
          || strcmp (de->d_name, IMAGE_BY_ARCHIVE) == 0)
        continue;
      entryfd = openat (imagesfd, de->d_name,
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (entryfd < 0)
        continue;
      busy = entry_busy (entryfd, leftover, &lockfd);
      if (!leftover && !prune)
        {
          if (read_file_at (entryfd, "source", 4096, &src, &len) == 0 && len)
            src[len - 1] = '\0';
          fprintf (out, "sha256:%s\t%s\t%s\n", de->d_name,
                   busy ? "in-use" : "unused", src ? src : "");
          continue;
        }
      if (!prune || busy)
        continue;
      if (!leftover)
        {
          if (entry_remove (imagesfd, de->d_name) < 0)
            continue;
          fprintf (out, "removed sha256:%s\n", de->d_name);
        }
      else
        remove_tree_at (imagesfd, de->d_name);
    }
  closedir (d);
  if (prune)
    forget_archives_of_gone_entries (imagesfd);
  return 0;
}

int
image_cache_list (const char *cache_dir, FILE *out, struct moat_error **err)
{
  return cache_walk (cache_dir, out, false, err);
}

int
image_cache_prune (const char *cache_dir, FILE *out, struct moat_error **err)
{
  return cache_walk (cache_dir, out, true, err);
}

/* The bytes of the files beneath dir, without following a link; a file
 * of n links counts 1/n each time. */
static int
tree_size (int dir, uint64_t *acc)
{
  int fd = fcntl (dir, F_DUPFD_CLOEXEC, 3);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *de;
  int r = 0;

  if (d == NULL)
    {
      r = -errno;
      if (fd >= 0)
        close (fd);
      return r;
    }
  while (r == 0 && (de = readdir (d)))
    {
      struct stat st;
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        r = -errno;
      else if (S_ISREG (st.st_mode))
        *acc += (uint64_t)st.st_size / (st.st_nlink ? st.st_nlink : 1);
      else if (S_ISDIR (st.st_mode))
        {
          cleanup_close int sub
              = openat (dirfd (d), de->d_name,
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          r = sub < 0 ? -errno : tree_size (sub, acc);
        }
    }
  closedir (d);
  return r;
}

int
image_entry_record_size (int entryfd, uint64_t *ret)
{
  cleanup_close int rootfd = openat (
      entryfd, "rootfs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_free char *text = NULL;
  uint64_t size = 0;
  int r;

  if (rootfd < 0)
    return -errno;
  r = tree_size (rootfd, &size);
  if (r < 0)
    return r;
  text = xasprintf ("%" PRIu64 "\n", size);
  r = write_file_atomic (entryfd, ENTRY_SIZE_FILE, text, strlen (text), 0600);
  if (r < 0)
    return r;
  *ret = size;
  return 0;
}

/* The size an entry recorded; measured (and recorded) when it has none,
 * as those made before the cache was bounded. */
static int
entry_size (int entryfd, uint64_t *ret)
{
  cleanup_free char *text = NULL;
  char *end;
  size_t len;

  if (read_file_at (entryfd, ENTRY_SIZE_FILE, 32, &text, &len) == 0 && len > 1
      && text[len - 1] == '\n')
    {
      errno = 0;
      *ret = strtoull (text, &end, 10);
      if (errno == 0 && end == text + len - 1 && text[0] != '-')
        return 0;
    }
  return image_entry_record_size (entryfd, ret);
}

struct lru_entry
{
  char name[65];
  struct timespec used;
  uint64_t size;
};

static int
by_last_use (const void *a, const void *b)
{
  return timespec_cmp (&((const struct lru_entry *)a)->used,
                       &((const struct lru_entry *)b)->used);
}

/* The entries (not the leftovers of unpacks): *ret_held the bytes of
 * those in use, *ret_free the others with their last use. */
static int
cache_entries (int imagesfd, uint64_t *ret_held, struct lru_entry **ret_free,
               size_t *ret_n, struct moat_error **err)
{
  int fd = dup (imagesfd);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *de;
  cleanup_free struct lru_entry *v = NULL;
  size_t n = 0, cap = 0;
  uint64_t held = 0;

  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return moat_fail (err, errno, "image cache");
    }
  while ((de = readdir (d)))
    {
      cleanup_close int entryfd = -1;
      cleanup_close int lockfd = -1;
      struct stat st;
      uint64_t size;
      if (!image_hex_ok (de->d_name))
        continue;
      entryfd = openat (imagesfd, de->d_name,
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (entryfd < 0 || entry_size (entryfd, &size) < 0)
        continue;
      if (entry_busy (entryfd, false, &lockfd) || fstat (lockfd, &st) < 0)
        {
          held += size;
          continue;
        }
      if (n == cap)
        v = xrealloc (v, (cap = cap ? 2 * cap : 16) * sizeof (*v));
      memcpy (v[n].name, de->d_name, 65);
      v[n].used = st.st_mtim;
      v[n].size = size;
      n++;
    }
  closedir (d);
  if (n > 0) /* v is NULL when nothing is free (UBSan: qsort's nonnull) */
    qsort (v, n, sizeof (*v), by_last_use);
  *ret_held = held;
  *ret_free = steal_pointer (&v);
  *ret_n = n;
  return 0;
}

/* What is in use leaves no room: nothing is removed for a new entry that
 * would not fit anyway. */
static int
cache_full (uint64_t max, uint64_t held, struct moat_error **err)
{
  return moat_error_setx (err, EFBIG,
                          "image cache over image_cache_max_bytes (%llu): "
                          "images in use hold %llu bytes",
                          (unsigned long long)max, (unsigned long long)held);
}

int
image_cache_make_room (int imagesfd, uint64_t max, uint64_t need,
                       struct image_unpack_notes *notes,
                       struct moat_error **err)
{
  cleanup_free struct lru_entry *v = NULL;
  uint64_t held = 0, total;
  size_t n = 0;

  if (need > max)
    return moat_error_setx (err, EFBIG,
                            "unpacked size over image_cache_max_bytes (%llu)",
                            (unsigned long long)max);
  if (cache_entries (imagesfd, &held, &v, &n, err) < 0)
    return -1;
  if (held + need > max)
    return cache_full (max, held, err);
  total = held;
  for (size_t i = 0; i < n; i++)
    total += v[i].size;
  for (size_t i = 0; i < n && total + need > max; i++)
    {
      cleanup_close int entryfd = openat (
          imagesfd, v[i].name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      cleanup_close int lockfd = -1;
      /* Taken meanwhile: it stays, and counts as held. */
      if (entryfd < 0 || entry_busy (entryfd, false, &lockfd)
          || entry_remove (imagesfd, v[i].name) < 0)
        {
          held += v[i].size;
          continue;
        }
      total -= v[i].size;
      notes->evicted++;
      notes->evicted_bytes += v[i].size;
    }
  return total + need > max ? cache_full (max, held, err) : 0;
}
