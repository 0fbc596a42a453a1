/* OCI image layouts into the content-addressed cache (see image.h).
 * An entry is unpacked in CACHE/.tmp-XXXXXX, whose lock its
 * unpacker holds, and appears by rename(2) under the manifest's digest:
 * two sandboxes unpacking the same image at once both succeed and one copy
 * stays. Every blob's sha256 is checked against its digest, so the key
 * names the content. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../oci/json.h"
#include "image.h"
#include "../runtime/init/linux.h"
#include "../runtime/sha256.h"
#include "../lib/hostpath.h"
#include "../lib/util.h"

#define IMAGE_JSON_MAX (4u * 1024 * 1024)

static const char *const layer_types[] = {
  "application/vnd.oci.image.layer.v1.tar",
  "application/vnd.oci.image.layer.v1.tar+gzip",
  "application/vnd.oci.image.layer.v1.tar+zstd",
  "application/vnd.oci.image.layer.nondistributable.v1.tar",
  "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
  "application/vnd.docker.image.rootfs.diff.tar.gzip",
  NULL,
};

bool
image_hex_ok (const char *hex)
{
  if (strlen (hex) != 64)
    return false;
  for (const char *p = hex; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
      return false;
  return true;
}

const char *
image_digest_hex (const char *d)
{
  if (d == NULL || strncmp (d, "sha256:", 7) != 0 || !image_hex_ok (d + 7))
    return NULL;
  return d + 7;
}

/* path beneath the layout (no symlink, no "..", no magic link), a regular
 * file only, opened without blocking: a FIFO or a link to /dev/zero must
 * not hang moat, nor a link take it out of the layout. */
static int
open_beneath (int layoutfd, const char *path, int *ret, struct stat *ret_st,
              struct moat_error **err)
{
  struct open_how how
      = { .flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC,
          .resolve
          = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  cleanup_close int fd
      = (int)syscall (SYS_openat2, layoutfd, path, &how, sizeof (how));

  if (fd < 0)
    return moat_fail (err, errno == ELOOP ? ELOOP : errno, "image: %s", path);
  if (fstat (fd, ret_st) < 0)
    return moat_fail (err, errno, "image: %s", path);
  if (!S_ISREG (ret_st->st_mode))
    return moat_fail (err, 0, "image: %s: not a regular file", path);
  *ret = steal_fd (&fd);
  return 0;
}

/* The blob a descriptor names, of exactly the size it gives (the image
 * spec requires it; moat reads no further). */
static int
open_blob (int layoutfd, const json_node *desc, const char **ret_hex,
           int *ret_fd, uint64_t *ret_size, struct moat_error **err)
{
  const char *digest = json_string (json_get (desc, "digest"));
  const char *hex = image_digest_hex (digest);
  cleanup_free char *path = NULL;
  struct stat st;
  int64_t size;

  if (hex == NULL)
    return moat_fail (err, 0, "image: unsupported digest %s",
                      digest ? digest : "(none)");
  if (json_int64 (json_get (desc, "size"), &size) < 0 || size < 0)
    return moat_fail (err, 0, "image: blob %.19s: no size", digest);
  path = xasprintf ("blobs/sha256/%s", hex);
  if (open_beneath (layoutfd, path, ret_fd, &st, err) < 0)
    return -1;
  if (st.st_size != size)
    {
      close (*ret_fd);
      return moat_fail (err, 0,
                        "image: blob %.19s: %lld bytes, its descriptor says "
                        "%lld",
                        digest, (long long)st.st_size, (long long)size);
    }
  *ret_hex = hex;
  *ret_size = (uint64_t)size;
  return 0;
}

/* Read a whole regular file of known size (at most max). */
static int
read_sized (int fd, uint64_t size, size_t max, char **ret,
            struct moat_error **err)
{
  cleanup_free char *text = NULL;
  size_t got = 0;

  if (size > max)
    return moat_fail (err, EFBIG, "image: a JSON blob of %llu bytes",
                      (unsigned long long)size);
  text = xmalloc (size + 1);
  while (got < size)
    {
      ssize_t n = TEMP_FAILURE_RETRY (read (fd, text + got, size - got));
      if (n <= 0)
        return moat_fail (err, n < 0 ? errno : EIO, "image: reading a blob");
      got += (size_t)n;
    }
  text[size] = '\0';
  *ret = steal_pointer (&text);
  return 0;
}

/* A JSON blob of the layout, its size and digest checked. */
static int
read_blob_json (int layoutfd, const json_node *desc, json_node **ret,
                char **ret_text, struct moat_error **err)
{
  const char *digest = json_string (json_get (desc, "digest"));
  const char *hex = NULL;
  cleanup_free char *text = NULL;
  cleanup_close int fd = -1;
  uint64_t size = 0;
  char got[65];
  size_t len;

  if (open_blob (layoutfd, desc, &hex, &fd, &size, err) < 0
      || read_sized (fd, size, IMAGE_JSON_MAX, &text, err) < 0)
    return -1;
  len = (size_t)size;
  if (sha256_hex_of (text, len, got, err) < 0)
    return moat_error_wrap (err, "image: blob %.19s", digest);
  if (strcmp (got, hex) != 0)
    return moat_fail (err, 0, "image: blob %.19s: digest mismatch", digest);
  if (json_parse (text, len, IMAGE_JSON_MAX, ret, err) < 0)
    return -1;
  if (ret_text)
    *ret_text = steal_pointer (&text);
  return 0;
}

/* index.json -> the manifest's digest (the first image manifest; a
 * nested index is followed once). */
static int
find_manifest (int layoutfd, char **ret_digest, json_node **ret_manifest,
               struct moat_error **err)
{
  cleanup_free char *text = NULL;
  cleanup_close int fd = -1;
  json_node *idx = NULL;
  struct stat st;
  int r;

  if (open_beneath (layoutfd, "index.json", &fd, &st, err) < 0
      || read_sized (fd, (uint64_t)st.st_size, IMAGE_JSON_MAX, &text, err) < 0)
    return -1;
  if (json_parse (text, (size_t)st.st_size, IMAGE_JSON_MAX, &idx, err) < 0)
    return moat_error_wrap (err, "image: index.json");
  for (int depth = 0; depth < 2; depth++)
    {
      json_node *m = json_get (idx, "manifests");
      json_node *pick = NULL;
      const char *mt;
      for (size_t i = 0; m && i < json_array_len (m) && !pick; i++)
        {
          json_node *one = json_array_get (m, i);
          mt = json_string (json_get (one, "mediaType"));
          if (mt == NULL || strstr (mt, "manifest"))
            pick = one;
          else if (strstr (mt, "index") && depth == 0)
            pick = one;
        }
      if (pick == NULL)
        {
          json_free (idx);
          return moat_fail (err, 0, "image: index.json lists no manifest");
        }
      mt = json_string (json_get (pick, "mediaType"));
      bool nested = mt && strstr (mt, "index");
      cleanup_free char *digest
          = xstrdup (json_string (json_get (pick, "digest"))
                         ? json_string (json_get (pick, "digest"))
                         : "");
      json_node *next = NULL;
      r = read_blob_json (layoutfd, pick, &next, NULL, err);
      json_free (idx);
      idx = NULL;
      if (r < 0)
        return -1;
      if (nested)
        {
          idx = next;
          continue;
        }
      *ret_digest = steal_pointer (&digest);
      *ret_manifest = next;
      return 0;
    }
  json_free (idx);
  return moat_fail (err, 0, "image: index.json nests indexes too deeply");
}

void
image_config_clear (struct image_config *c)
{
  strv_free (c->env);
  free (c->workdir);
  free (c->user);
  memset (c, 0, sizeof (*c));
}

static char *
nonempty_member (const json_node *obj, const char *key)
{
  const char *v = json_string (json_get (obj, key));
  return v && *v ? xstrdup (v) : NULL;
}

/* An image config's config.Env, WorkingDir and User. */
static int
image_config_from (const json_node *blob, struct image_config *ret,
                   struct moat_error **err)
{
  const json_node *c = json_get (blob, "config"), *env;

  if (c && json_is_object (c))
    {
      env = json_get (c, "Env");
      for (size_t i = 0; env && i < json_array_len (env); i++)
        {
          const char *e = json_string (json_array_get (env, i));
          if (e && strchr (e, '=') && e[0] != '=')
            strv_append (&ret->env, e);
        }
      ret->workdir = nonempty_member (c, "WorkingDir");
      ret->user = nonempty_member (c, "User");
    }
  if (ret->workdir && ret->workdir[0] != '/')
    {
      int r = moat_fail (err, 0, "image: config: WorkingDir %s is not absolute",
                         ret->workdir);
      image_config_clear (ret);
      return r;
    }
  return 0;
}

/* The manifest's config blob (size and digest checked), parsed, and its
 * text (*ret_text), which the cache entry keeps as config.json. */
static int
read_image_config (int layoutfd, const json_node *manifest,
                   struct image_config *ret, char **ret_text,
                   struct moat_error **err)
{
  const json_node *desc = json_get (manifest, "config");
  json_node *blob = NULL;
  int r;

  if (desc == NULL)
    return moat_fail (err, 0, "image: the manifest has no config");
  if (read_blob_json (layoutfd, desc, &blob, ret_text, err) < 0)
    return moat_error_wrap (err, "image: config");
  r = image_config_from (blob, ret, err);
  json_free (blob);
  return r;
}

static bool
layer_type_ok (const char *mt)
{
  for (size_t i = 0; layer_types[i]; i++)
    if (mt && strcmp (mt, layer_types[i]) == 0)
      return true;
  return false;
}

/* Mount points moat needs in a read-only root, made once at unpack, where
 * the container's init will look for them: the parent resolved inside the
 * root (RESOLVE_IN_ROOT: the image's "var -> /somewhere" leads to
 * rootfs/somewhere, never out of it), the last component made there, not
 * through a link. A parent the image lacks or made a file: none (the
 * runtime leaves out the scratch mounts an image has no place for). */
static void
make_mountpoints (int rootfd)
{
  static const struct
  {
    const char *parent, *name;
    mode_t mode;
  } dirs[] = {
    { ".", "proc", 0755 }, { ".", "dev", 0755 },    { ".", "sys", 0755 },
    { ".", "tmp", 01777 }, { ".", "work", 0755 },   { ".", "etc", 0755 },
    { ".", "var", 0755 },  { "var", "tmp", 01777 }, { ".", "root", 0755 },
  };
  for (size_t i = 0; i < sizeof (dirs) / sizeof (dirs[0]); i++)
    {
      cleanup_close int parent = rootfs_openat2_in (
          rootfd, dirs[i].parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (parent >= 0)
        mkdirat (parent, dirs[i].name, dirs[i].mode);
    }
}

/* Did a bound of image_limits stop the unpack (EFBIG, its message naming
 * the bound)? */
static bool
over_bound (struct moat_error **err)
{
  return err && *err && (*err)->errnum == EFBIG;
}

static int
unpack_into (int layoutfd, int tmpfd, json_node *manifest,
             const struct image_limits *limits,
             struct image_unpack_notes *notes, struct moat_error **err)
{
  json_node *layers = json_get (manifest, "layers");
  cleanup_close int rootfd = -1;
  struct image_budget budget
      = { .max_bytes = limits->max_bytes, .max_entries = limits->max_entries };

  if (layers == NULL || !json_is_array (layers))
    return moat_fail (err, 0, "image: manifest has no layers");
  if (mkdirat (tmpfd, "rootfs", 0755) < 0
      || (rootfd = openat (tmpfd, "rootfs", O_DIRECTORY | O_CLOEXEC)) < 0)
    return moat_fail (err, errno, "image: making the rootfs");
  for (size_t i = 0; i < json_array_len (layers); i++)
    {
      json_node *l = json_array_get (layers, i);
      const char *mt = json_string (json_get (l, "mediaType"));
      const char *hex = NULL;
      cleanup_close int blobfd = -1;
      uint64_t size;
      if (!layer_type_ok (mt))
        return moat_fail (err, 0, "image: layer %zu: unsupported type %s", i,
                          mt ? mt : "(none)");
      if (open_blob (layoutfd, l, &hex, &blobfd, &size, err) < 0)
        return moat_error_wrap (err, "image: layer %zu", i);
      if (image_unpack_layer (rootfd, blobfd, hex, &budget, notes, err) < 0)
        return over_bound (err) ? -1 /* the image's, not this layer's */
                                : moat_error_wrap (err, "image: layer %zu", i);
    }
  make_mountpoints (rootfd);
  return 0;
}

int
image_cache_open (const char *dir, int *ret, struct moat_error **err)
{
  int r = mkdir_p (dir, 0700);
  int fd;

  if (r < 0)
    return moat_fail (err, -r, "image cache %s", dir);
  fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return moat_fail (err, errno, "image cache %s", dir);
  *ret = fd;
  return 0;
}

/* The entry, share-locked and checked to be still in place (prune renames
 * an entry away under its exclusive lock before removing it). */
static int
entry_lock_shared (int imagesfd, const char *hex)
{
  cleanup_close int entryfd
      = openat (imagesfd, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int lockfd = -1;
  struct stat a, b;

  if (entryfd < 0)
    return -errno;
  lockfd = openat (entryfd, "lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (lockfd < 0 || TEMP_FAILURE_RETRY (flock (lockfd, LOCK_SH)) < 0)
    return -ENOENT;
  if (fstat (entryfd, &a) < 0
      || fstatat (imagesfd, hex, &b, AT_SYMLINK_NOFOLLOW) < 0
      || a.st_ino != b.st_ino || a.st_dev != b.st_dev)
    return -ENOENT;
  return steal_fd (&lockfd);
}

/* An entry made before entries kept their image's config gets it now. */
static void
entry_keep_config (int imagesfd, const char *hex, const char *config_text)
{
  cleanup_close int entryfd
      = openat (imagesfd, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (entryfd >= 0
      && faccessat (entryfd, "config.json", F_OK, AT_SYMLINK_NOFOLLOW) < 0)
    write_file_atomic (entryfd, "config.json", config_text,
                       strlen (config_text), 0600);
}

/* An archive seen before (image_archive_recall): its entry, share-locked,
 * and the image config the entry kept. -1 (nothing set) when the entry or
 * its config is gone: the archive is then unpacked again. */
static int
entry_of_archive (const char *cache_dir, int imagesfd, const char *digest,
                  char **ret_rootfs, int *ret_lockfd,
                  struct image_config *ret_config)
{
  const char *hex = image_digest_hex (digest);
  cleanup_close int lockfd = hex ? entry_lock_shared (imagesfd, hex) : -1;
  cleanup_free char *path = NULL;
  cleanup_free char *text = NULL;
  json_node *blob = NULL;
  size_t len;
  int r;

  if (lockfd < 0)
    return -1;
  path = xasprintf ("%s/config.json", hex);
  if (read_file_at (imagesfd, path, IMAGE_JSON_MAX, &text, &len) < 0
      || json_parse (text, len, IMAGE_JSON_MAX, &blob, NULL) < 0)
    return -1;
  r = image_config_from (blob, ret_config, NULL);
  json_free (blob);
  if (r < 0)
    return -1;
  image_entry_touch (lockfd);
  *ret_rootfs = xasprintf ("%s/%s/rootfs", cache_dir, hex);
  *ret_lockfd = steal_fd (&lockfd);
  return 0;
}

/* The unpacked entry in tmpfd, its size recorded, and room made for it in
 * the cache. */
static int
entry_fit (int imagesfd, int tmpfd, uint64_t cache_max,
           struct image_unpack_notes *notes, struct moat_error **err)
{
  uint64_t size;
  int r = image_entry_record_size (tmpfd, &size);

  if (r < 0)
    return moat_fail (err, -r, "image cache: measuring the unpacked image");
  return image_cache_make_room (imagesfd, cache_max, size, notes, err);
}

static int
prepare_from_layout (const char *cache_dir, int imagesfd, int layoutfd,
                     const char *layout, const struct image_limits *limits,
                     char **ret_rootfs, char **ret_digest, int *ret_lockfd,
                     struct image_config *ret_config,
                     struct image_unpack_notes *notes, struct moat_error **err)
{
  cleanup_free char *digest = NULL;
  cleanup_free char *config_text = NULL;
  json_node *manifest = NULL;
  const char *hex;
  int r = 0;

  if (find_manifest (layoutfd, &digest, &manifest, err) < 0)
    return -1;
  if (read_image_config (layoutfd, manifest, ret_config, &config_text, err) < 0)
    {
      json_free (manifest);
      return -1;
    }
  hex = digest + 7;
  for (int tries = 0; r == 0 && tries < 5; tries++)
    {
      char tmpname[] = ".tmp-XXXXXX";
      cleanup_free char *tmppath = NULL;
      cleanup_close int tmpfd = -1;
      cleanup_close int tmplock = -1;
      int lockfd = entry_lock_shared (imagesfd, hex);

      if (lockfd >= 0)
        {
          image_entry_touch (lockfd);
          entry_keep_config (imagesfd, hex, config_text);
          json_free (manifest);
          *ret_rootfs = xasprintf ("%s/%s/rootfs", cache_dir, hex);
          *ret_digest = steal_pointer (&digest);
          *ret_lockfd = lockfd;
          return 0;
        }
      tmppath = xasprintf ("%s/%s", cache_dir, tmpname);
      if (mkdtemp (tmppath) == NULL)
        {
          r = moat_fail (err, errno, "image cache: mkdtemp");
          break;
        }
      memcpy (tmpname, strrchr (tmppath, '/') + 1, sizeof (tmpname));
      tmpfd = open (tmppath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      tmplock = tmpfd < 0
                    ? -1
                    : openat (tmpfd, "lock",
                              O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (tmplock < 0 || flock (tmplock, LOCK_EX) < 0)
        r = moat_fail (err, errno, "image cache: %s", tmppath);
      else
        {
          cleanup_free char *src = xasprintf ("%s\n", layout);
          write_file_atomic (tmpfd, "source", src, strlen (src), 0600);
          write_file_atomic (tmpfd, "config.json", config_text,
                             strlen (config_text), 0600);
          r = unpack_into (layoutfd, tmpfd, manifest, limits, notes, err);
          if (r == 0)
            r = entry_fit (imagesfd, tmpfd, limits->cache_max_bytes, notes,
                           err);
          if (r < 0 && over_bound (err))
            moat_error_wrap (err, "image %s", layout);
        }
      if (r == 0 && renameat (imagesfd, tmpname, imagesfd, hex) == 0)
        continue;
      /* Lost a race with another unpacker (EEXIST, ENOTEMPTY), or failed. */
      remove_tree_at (imagesfd, tmpname);
    }
  json_free (manifest);
  image_config_clear (ret_config);
  if (r == 0)
    r = moat_fail (err, 0, "image cache: entry %.12s keeps vanishing", hex);
  return r;
}

/* A file, open as fd: a docker save / podman save archive, known by its
 * sha256. */
static int
prepare_from_archive (const char *cache_dir, int imagesfd, int fd,
                      const char *archive, const struct image_limits *limits,
                      char **ret_rootfs, char **ret_digest, int *ret_lockfd,
                      struct image_config *ret_config,
                      struct image_unpack_notes *notes, struct moat_error **err)
{
  cleanup_close int layoutfd = -1;
  cleanup_close int tmplock = -1;
  cleanup_free char *known = NULL;
  char tmpname[32] = "", hex[65];
  uint64_t size;
  int r;

  if (image_hash_fd (fd, hex, &size, err) < 0)
    return moat_error_wrap (err, "image %s", archive);
  known = image_archive_recall (imagesfd, hex);
  if (known
      && entry_of_archive (cache_dir, imagesfd, known, ret_rootfs, ret_lockfd,
                           ret_config)
             == 0)
    {
      *ret_digest = steal_pointer (&known);
      return 0;
    }
  if (image_archive_layout (imagesfd, fd, hex, limits, tmpname, &tmplock,
                            &layoutfd, err)
      < 0)
    return moat_error_wrap (err, "image %s", archive);
  r = prepare_from_layout (cache_dir, imagesfd, layoutfd, archive, limits,
                           ret_rootfs, ret_digest, ret_lockfd, ret_config,
                           notes, err);
  remove_tree_at (imagesfd, tmpname);
  if (r == 0)
    image_archive_remember (imagesfd, hex, *ret_digest);
  return r;
}

int
image_prepare (const char *cache_dir, const char *layout,
               const struct image_limits *limits, char **ret_rootfs,
               char **ret_digest, int *ret_lockfd,
               struct image_config *ret_config,
               struct image_unpack_notes *notes, struct moat_error **err)
{
  cleanup_close int imagesfd = -1;
  /* Opened once, then told apart: what was a file when looked at is what
   * is read (a FIFO or a device swapped in would hang the hashing). */
  cleanup_close int layoutfd
      = hostpath_open (layout, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
  struct stat st;

  /* Named by the caller, maybe in a tree a payload wrote: no link
   * followed on the host side (G15). */
  if (layoutfd == -ELOOP)
    return moat_fail (err, 0, "image %s: %s", layout, HOSTPATH_LINK_TEXT);
  if (layoutfd < 0)
    return moat_fail (err, -layoutfd, "image %s", layout);
  if (fstat (layoutfd, &st) < 0)
    return moat_fail (err, errno, "image %s", layout);
  if (!S_ISREG (st.st_mode) && !S_ISDIR (st.st_mode))
    return moat_fail (err, 0, "image %s: neither a directory nor a file",
                      layout);
  if (image_cache_open (cache_dir, &imagesfd, err) < 0)
    return -1;
  if (S_ISREG (st.st_mode))
    return prepare_from_archive (cache_dir, imagesfd, layoutfd, layout, limits,
                                 ret_rootfs, ret_digest, ret_lockfd, ret_config,
                                 notes, err);
  return prepare_from_layout (cache_dir, imagesfd, layoutfd, layout, limits,
                              ret_rootfs, ret_digest, ret_lockfd, ret_config,
                              notes, err);
}
