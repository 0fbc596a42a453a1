/* One OCI layer into a directory, by libarchive. Two passes over the blob:
 * the first checks every path and the digest and collects the whiteouts,
 * which are applied (to what the lower layers left) before the second
 * writes the entries. Paths are cleaned and refused when a component is
 * ".."; libarchive's SECURE flags refuse to write through a symlink; the
 * whiteouts are resolved with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS).
 * Device nodes and sockets are skipped and setuid/setgid bits stripped: a
 * sandbox needs neither (its root is nosuid and /dev is moat's). A hard
 * link must name what an earlier entry left beneath the root, reached
 * without a symlink (libarchive checks that too, since 3.6: moat does not
 * rely on the host's version). The first pass counts the entries and file
 * sizes against the image's budget, so a layer over it writes nothing; the
 * second counts them again, as the blob could change between the two. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "image.h"
#include "../runtime/sha256.h"
#include "../lib/dynlib.h"
#include "../lib/util.h"

/* libarchive, with its compressors, XML and ICU, is loaded only here. */
static struct dynlib libarchive = { .soname = "libarchive.so.13" };
DYNLIB_DECLARE (archive_entry_filetype);
DYNLIB_DECLARE (archive_entry_hardlink);
DYNLIB_DECLARE (archive_entry_pathname);
DYNLIB_DECLARE (archive_entry_perm);
DYNLIB_DECLARE (archive_entry_set_hardlink);
DYNLIB_DECLARE (archive_entry_set_pathname);
DYNLIB_DECLARE (archive_entry_set_perm);
DYNLIB_DECLARE (archive_entry_size);
DYNLIB_DECLARE (archive_error_string);
DYNLIB_DECLARE (archive_read_data_block);
DYNLIB_DECLARE (archive_read_free);
DYNLIB_DECLARE (archive_read_new);
DYNLIB_DECLARE (archive_read_next_header);
DYNLIB_DECLARE (archive_read_open);
DYNLIB_DECLARE (archive_read_support_filter_all);
DYNLIB_DECLARE (archive_read_support_format_tar);
DYNLIB_DECLARE (archive_set_error);
DYNLIB_DECLARE (archive_write_close);
DYNLIB_DECLARE (archive_write_data_block);
DYNLIB_DECLARE (archive_write_disk_new);
DYNLIB_DECLARE (archive_write_disk_set_options);
DYNLIB_DECLARE (archive_write_finish_entry);
DYNLIB_DECLARE (archive_write_free);
DYNLIB_DECLARE (archive_write_header);
static const struct dynlib_symbol libarchive_symbols[] = {
  DYNLIB_SYMBOL (archive_entry_filetype),
  DYNLIB_SYMBOL (archive_entry_hardlink),
  DYNLIB_SYMBOL (archive_entry_pathname),
  DYNLIB_SYMBOL (archive_entry_perm),
  DYNLIB_SYMBOL (archive_entry_set_hardlink),
  DYNLIB_SYMBOL (archive_entry_set_pathname),
  DYNLIB_SYMBOL (archive_entry_set_perm),
  DYNLIB_SYMBOL (archive_entry_size),
  DYNLIB_SYMBOL (archive_error_string),
  DYNLIB_SYMBOL (archive_read_data_block),
  DYNLIB_SYMBOL (archive_read_free),
  DYNLIB_SYMBOL (archive_read_new),
  DYNLIB_SYMBOL (archive_read_next_header),
  DYNLIB_SYMBOL (archive_read_open),
  DYNLIB_SYMBOL (archive_read_support_filter_all),
  DYNLIB_SYMBOL (archive_read_support_format_tar),
  DYNLIB_SYMBOL (archive_set_error),
  DYNLIB_SYMBOL (archive_write_close),
  DYNLIB_SYMBOL (archive_write_data_block),
  DYNLIB_SYMBOL (archive_write_disk_new),
  DYNLIB_SYMBOL (archive_write_disk_set_options),
  DYNLIB_SYMBOL (archive_write_finish_entry),
  DYNLIB_SYMBOL (archive_write_free),
  DYNLIB_SYMBOL (archive_write_header),
};

int
remove_tree_at (int dirfd, const char *name)
{
  int fd;
  DIR *d;
  struct dirent *de;

  if (unlinkat (dirfd, name, 0) == 0 || errno == ENOENT)
    return 0;
  if (errno != EISDIR && errno != EPERM)
    return -errno;
  fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? 0 : -errno;
  d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return -errno;
    }
  while ((de = readdir (d)))
    if (strcmp (de->d_name, ".") && strcmp (de->d_name, ".."))
      remove_tree_at (fd, de->d_name);
  closedir (d);
  if (unlinkat (dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return -errno;
  return 0;
}

/* "./a//b/" -> "a/b"; "" for the root itself; NULL when a component is
 * "..". */
static char *
clean_path (const char *in)
{
  char *out = xmalloc (strlen (in) + 1);
  size_t n = 0;

  while (*in)
    {
      size_t len = strcspn (in, "/");
      if (len == 2 && in[0] == '.' && in[1] == '.')
        {
          free (out);
          return NULL;
        }
      if (len > 0 && !(len == 1 && in[0] == '.'))
        {
          if (n)
            out[n++] = '/';
          memcpy (out + n, in, len);
          n += len;
        }
      in += len;
      if (*in == '/')
        in++;
    }
  out[n] = '\0';
  return out;
}

struct blob_reader
{
  int fd;
  struct sha256 sha;
  char buf[128 * 1024];
};

static la_ssize_t
blob_read (struct archive *a, void *p, const void **ret)
{
  struct blob_reader *r = p;
  ssize_t n = TEMP_FAILURE_RETRY (read (r->fd, r->buf, sizeof (r->buf)));

  if (n < 0)
    {
      sym_archive_set_error (a, errno, "reading the layer");
      return -1;
    }
  sha256_feed (&r->sha, r->buf, (size_t)n);
  *ret = r->buf;
  return n;
}

static struct archive *
layer_open (struct blob_reader *r)
{
  struct archive *a = sym_archive_read_new ();

  /* Loaded by image_unpack_layer already: cannot fail here. */
  sha256_start (&r->sha, NULL);
  if (lseek (r->fd, 0, SEEK_SET) < 0)
    {
      sym_archive_read_free (a);
      return NULL;
    }
  sym_archive_read_support_filter_all (a);
  sym_archive_read_support_format_tar (a);
  if (sym_archive_read_open (a, r, NULL, blob_read, NULL) != ARCHIVE_OK)
    {
      sym_archive_read_free (a);
      return NULL;
    }
  return a;
}

/* Hash what libarchive did not read (the tar's end padding) and compare. */
static int
layer_check_digest (struct blob_reader *r, const char *hex,
                    struct moat_error **err)
{
  char got[65];
  ssize_t n;

  while ((n = TEMP_FAILURE_RETRY (read (r->fd, r->buf, sizeof (r->buf)))) > 0)
    sha256_feed (&r->sha, r->buf, (size_t)n);
  if (n < 0)
    return moat_fail (err, errno, "reading layer %.12s", hex);
  sha256_finish_hex (&r->sha, got);
  if (strcmp (got, hex) != 0)
    return moat_fail (err, 0, "layer sha256:%.12s: digest mismatch (%.12s)",
                      hex, got);
  return 0;
}

static int
open_beneath (int rootfd, const char *path)
{
  struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                          .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
                                     | RESOLVE_NO_MAGICLINKS };
  int fd;

  if (*path == '\0')
    path = ".";
  fd = (int)syscall (SYS_openat2, rootfd, path, &how, sizeof (how));
  return fd < 0 ? -errno : fd;
}

/* A whiteout removes what the layers below put there; through a symlink
 * (which would lead anywhere) or where nothing is, it removes nothing. */
static void
apply_whiteout (int rootfd, const char *path)
{
  const char *slash = strrchr (path, '/');
  cleanup_free char *dir
      = slash ? strndup (path, (size_t)(slash - path)) : xstrdup ("");
  const char *base = slash ? slash + 1 : path;
  cleanup_close int dfd = -1;

  if (dir == NULL)
    return;
  dfd = open_beneath (rootfd, dir);
  if (dfd < 0)
    return;
  if (strcmp (base, ".wh..wh..opq") == 0)
    {
      int fd = dup (dfd);
      DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
      struct dirent *de;
      if (d == NULL)
        {
          if (fd >= 0)
            close (fd);
          return;
        }
      while ((de = readdir (d)))
        if (strcmp (de->d_name, ".") && strcmp (de->d_name, ".."))
          remove_tree_at (dfd, de->d_name);
      closedir (d);
      return;
    }
  /* ".wh.." and ".wh..." would name the directory or its parent. */
  if (base[4] == '\0' || strcmp (base + 4, ".") == 0
      || strcmp (base + 4, "..") == 0)
    return;
  remove_tree_at (dfd, base + 4);
}

static bool
is_whiteout (const char *path)
{
  const char *slash = strrchr (path, '/');
  return strncmp (slash ? slash + 1 : path, ".wh.", 4) == 0;
}

/* One more entry, of the size its header gives (what libarchive writes of
 * it at most; a sparse file's whole size), taken from the budget. */
static int
budget_take (struct image_budget *b, struct archive_entry *e,
             struct moat_error **err)
{
  la_int64_t size = sym_archive_entry_size (e);

  if (++b->entries > b->max_entries)
    return moat_error_setx (err, EFBIG,
                            "more entries than image_max_entries (%llu)",
                            (unsigned long long)b->max_entries);
  if (size > 0)
    b->bytes += (uint64_t)size; /* both under 2^63: no overflow */
  if (b->bytes > b->max_bytes)
    return moat_error_setx (err, EFBIG,
                            "unpacked size over image_max_bytes (%llu)",
                            (unsigned long long)b->max_bytes);
  return 0;
}

/* Pass 1: every path checked, the sizes counted, the digest verified, the
 * whiteouts applied. */
static int
layer_whiteouts (int rootfd, struct blob_reader *r, const char *hex,
                 const struct image_budget *budget, struct moat_error **err)
{
  struct image_budget trial = *budget;
  struct archive *a = layer_open (r);
  struct archive_entry *e;
  cleanup_strv char **wh = NULL;
  int rc;

  if (a == NULL)
    return moat_fail (err, 0, "layer sha256:%.12s: not an archive", hex);
  while ((rc = sym_archive_read_next_header (a, &e)) == ARCHIVE_OK)
    {
      const char *link = sym_archive_entry_hardlink (e);
      cleanup_free char *p = clean_path (sym_archive_entry_pathname (e));
      cleanup_free char *lp = link ? clean_path (link) : NULL;
      if (p == NULL || (link && (lp == NULL || *lp == '\0')))
        {
          moat_fail (err, 0, "layer sha256:%.12s: path %s leaves the root", hex,
                     p ? link : sym_archive_entry_pathname (e));
          sym_archive_read_free (a);
          return -1;
        }
      if (budget_take (&trial, e, err) < 0)
        {
          sym_archive_read_free (a);
          return -1;
        }
      if (is_whiteout (p))
        strv_append (&wh, p);
    }
  if (rc != ARCHIVE_EOF)
    {
      moat_fail (err, 0, "layer sha256:%.12s: %s", hex,
                 sym_archive_error_string (a));
      sym_archive_read_free (a);
      return -1;
    }
  sym_archive_read_free (a);
  if (layer_check_digest (r, hex, err) < 0)
    return -1;
  for (size_t i = 0; wh && wh[i]; i++)
    apply_whiteout (rootfd, wh[i]);
  return 0;
}

static int
copy_data (struct archive *in, struct archive *out)
{
  const void *buf;
  size_t len;
  la_int64_t off;
  int rc;

  while ((rc = sym_archive_read_data_block (in, &buf, &len, &off))
         == ARCHIVE_OK)
    if (sym_archive_write_data_block (out, buf, len, off) < ARCHIVE_OK)
      return -1;
  return rc == ARCHIVE_EOF ? 0 : -1;
}

/* A hard link's target (cleaned): an entry beneath the root, reached
 * without a symlink, not a directory. A link to a symlink is that link. */
static int
check_hardlink (int rootfd, const char *hex, const char *path,
                const char *target, struct moat_error **err)
{
  struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                          .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
                                     | RESOLVE_NO_MAGICLINKS };
  cleanup_close int fd
      = (int)syscall (SYS_openat2, rootfd, target, &how, sizeof (how));
  struct stat st;

  if (fd < 0 || fstat (fd, &st) < 0 || S_ISDIR (st.st_mode))
    return moat_fail (err, fd < 0 ? errno : EISDIR,
                      "layer sha256:%.12s: %s: hard link to %s", hex, path,
                      target);
  return 0;
}

/* Pass 2, in rootfd as the cwd (libarchive writes relative paths). */
static int
layer_extract (int rootfd, struct blob_reader *r, const char *hex,
               struct image_budget *budget, struct image_unpack_notes *notes,
               struct moat_error **err)
{
  struct archive *a = layer_open (r);
  struct archive *w;
  struct archive_entry *e;
  int rc = ARCHIVE_OK;
  int ret = 0;

  if (a == NULL)
    return moat_fail (err, 0, "layer sha256:%.12s: not an archive", hex);
  w = sym_archive_write_disk_new ();
  sym_archive_write_disk_set_options (
      w, ARCHIVE_EXTRACT_OWNER | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME
             | ARCHIVE_EXTRACT_UNLINK | ARCHIVE_EXTRACT_SECURE_SYMLINKS
             | ARCHIVE_EXTRACT_SECURE_NODOTDOT
             | ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS);
  while (ret == 0 && (rc = sym_archive_read_next_header (a, &e)) == ARCHIVE_OK)
    {
      cleanup_free char *p = clean_path (sym_archive_entry_pathname (e));
      const char *link = sym_archive_entry_hardlink (e);
      cleanup_free char *lp = link ? clean_path (link) : NULL;
      mode_t type = sym_archive_entry_filetype (e);
      mode_t mode = sym_archive_entry_perm (e);

      if (p == NULL || (link && lp == NULL))
        ret = moat_fail (err, 0, "layer sha256:%.12s changed while read", hex);
      if (ret == 0)
        ret = budget_take (budget, e, err);
      if (ret < 0 || *p == '\0' || is_whiteout (p))
        continue;
      if (lp && (ret = check_hardlink (rootfd, hex, p, lp, err)) < 0)
        continue;
      if (type == AE_IFCHR || type == AE_IFBLK || type == AE_IFSOCK)
        {
          notes->devices_skipped++;
          continue;
        }
      if (type != AE_IFDIR && (mode & (S_ISUID | S_ISGID)))
        {
          notes->setid_stripped++;
          sym_archive_entry_set_perm (e, mode & ~(mode_t)(S_ISUID | S_ISGID));
        }
      sym_archive_entry_set_pathname (e, p);
      if (lp)
        sym_archive_entry_set_hardlink (e, lp);
      if (sym_archive_write_header (w, e) < ARCHIVE_WARN
          || (sym_archive_entry_size (e) > 0 && copy_data (a, w) < 0)
          || sym_archive_write_finish_entry (w) < ARCHIVE_WARN)
        ret = moat_fail (err, 0, "layer sha256:%.12s: %s: %s", hex, p,
                         sym_archive_error_string (w)
                             ? sym_archive_error_string (w)
                             : sym_archive_error_string (a));
    }
  if (ret == 0 && rc != ARCHIVE_EOF)
    ret = moat_fail (err, 0, "layer sha256:%.12s: %s", hex,
                     sym_archive_error_string (a));
  if (sym_archive_write_close (w) < ARCHIVE_WARN && ret == 0)
    ret = moat_fail (err, 0, "layer sha256:%.12s: %s", hex,
                     sym_archive_error_string (w));
  sym_archive_write_free (w);
  sym_archive_read_free (a);
  if (ret == 0)
    ret = layer_check_digest (r, hex, err);
  return ret;
}

int
image_unpack_layer (int rootfd, int blobfd, const char *hex,
                    struct image_budget *budget,
                    struct image_unpack_notes *notes, struct moat_error **err)
{
  cleanup_free struct blob_reader *r = xmalloc (sizeof (*r));
  cleanup_close int cwd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  int ret;

  if (dynlib_load (&libarchive, libarchive_symbols,
                   sizeof (libarchive_symbols) / sizeof (*libarchive_symbols),
                   err)
      < 0)
    return moat_error_wrap (err, "unpacking layer sha256:%.12s", hex);
  if (sha256_start (&r->sha, err) < 0)
    return moat_error_wrap (err, "unpacking layer sha256:%.12s", hex);
  r->fd = blobfd;
  if (layer_whiteouts (rootfd, r, hex, budget, err) < 0)
    return -1;
  if (cwd < 0 || fchdir (rootfd) < 0)
    return moat_fail (err, errno, "entering the image directory");
  ret = layer_extract (rootfd, r, hex, budget, notes, err);
  if (fchdir (cwd) < 0 && ret == 0)
    ret = moat_fail (err, errno, "leaving the image directory");
  return ret;
}
