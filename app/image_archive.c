/* `docker save` and `podman save` archives (docker-archive: a tar holding
 * manifest.json, the config and the layer tars; Docker 25 and later put an
 * OCI layout in the same tar) made into an OCI image layout in a directory
 * of the cache, which image_prepare then reads as any layout: the archive
 * is unpacked as a layer is (no path out, no device, no setuid), and every
 * file manifest.json names is opened inside it, hashed and linked in as a
 * blob under its digest. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../oci/json.h"
#include "image.h"
#include "../runtime/sha256.h"
#include "../lib/util.h"

#define ARCHIVE_MANIFEST_MAX (1u << 20)

int
image_hash_fd (int fd, char hex[65], uint64_t *ret_size,
               struct moat_error **err)
{
  struct sha256 c;
  char buf[65536];
  uint64_t size = 0;
  ssize_t n;

  if (sha256_start (&c, err) < 0)
    return -1;
  while ((n = TEMP_FAILURE_RETRY (pread (fd, buf, sizeof (buf), (off_t)size)))
         > 0)
    {
      sha256_feed (&c, buf, (size_t)n);
      size += (uint64_t)n;
    }
  if (n < 0)
    return moat_fail (err, errno, "image archive: reading");
  sha256_finish_hex (&c, hex);
  *ret_size = size;
  return 0;
}

/* A file manifest.json names, opened inside the unpacked archive (its
 * symlinks, as Docker's dedup of layers, stay inside), linked in as
 * blobs/sha256/<hex>; its descriptor written to w. */
static int
add_blob (struct json_writer *w, int xfd, int blobsfd, const char *path,
          const char *media_type, char hex[65], struct moat_error **err)
{
  struct open_how how = { .flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC,
                          .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
  cleanup_close int fd
      = (int)syscall (SYS_openat2, xfd, path, &how, sizeof (how));
  cleanup_free char *digest = NULL;
  char proc[64];
  uint64_t size;
  struct stat st;

  if (fd < 0)
    return moat_fail (err, errno, "image archive: %s", path);
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return moat_fail (err, 0, "image archive: %s: not a regular file", path);
  if (image_hash_fd (fd, hex, &size, err) < 0)
    return moat_error_wrap (err, "%s", path);
  snprintf (proc, sizeof (proc), "/proc/self/fd/%d", fd);
  if (linkat (AT_FDCWD, proc, blobsfd, hex, AT_SYMLINK_FOLLOW) < 0
      && errno != EEXIST)
    return moat_fail (err, errno, "image archive: %s", path);
  jw_object_begin (w);
  jw_key (w, "mediaType");
  jw_string (w, media_type);
  digest = xasprintf ("sha256:%s", hex);
  jw_key (w, "digest");
  jw_string (w, digest);
  jw_key (w, "size");
  jw_uint (w, size);
  jw_object_end (w);
  return 0;
}

/* The config's rootfs.diff_ids, the sha256 of each uncompressed layer tar:
 * manifest.json names layers by path, so nothing else says which content
 * they must have. A docker-archive's layers are uncompressed tars, whose
 * sha256 is their diff_id. */
static int
read_diff_ids (int xfd, const char *config, json_node **ret_root,
               const json_node **ret_ids, struct moat_error **err)
{
  struct open_how how = { .flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC,
                          .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
  cleanup_close int fd
      = (int)syscall (SYS_openat2, xfd, config, &how, sizeof (how));
  cleanup_free char *text = NULL;
  const json_node *ids;
  size_t len;

  if (fd < 0 || read_fd_all (fd, ARCHIVE_MANIFEST_MAX, &text, &len) < 0
      || json_parse (text, len, ARCHIVE_MANIFEST_MAX, ret_root, err) < 0)
    return moat_fail (err, errno, "image archive: %s unreadable", config);
  ids = json_get (json_get (*ret_root, "rootfs"), "diff_ids");
  if (ids == NULL || !json_is_array (ids))
    {
      json_free (*ret_root);
      *ret_root = NULL;
      return moat_fail (err, 0, "image archive: %s: no rootfs.diff_ids",
                        config);
    }
  *ret_ids = ids;
  return 0;
}

static int
check_diff_id (const json_node *ids, size_t i, const char *path,
               const char *hex, struct moat_error **err)
{
  const char *want = json_string (json_array_get (ids, i));

  if (want == NULL)
    return moat_fail (err, 0,
                      "image archive: layer %zu (%s): the config has no "
                      "diff_id for it",
                      i, path);
  if (strncmp (want, "sha256:", 7) != 0 || strcmp (want + 7, hex) != 0)
    return moat_fail (err, 0,
                      "image archive: layer %zu (%s): its sha256 %.12s is "
                      "not the config's diff_id %.19s",
                      i, path, hex, want);
  return 0;
}

static int
write_json (int dirfd, const char *name, const char *text,
            struct moat_error **err)
{
  int r = write_file_atomic (dirfd, name, text, strlen (text), 0600);
  return r < 0 ? moat_fail (err, -r, "image archive: writing %s", name) : 0;
}

/* xfd/blobs/sha256, made where missing, each step a directory of the
 * archive's reached without a link: the archive's own "blobs" may be a
 * symlink to anywhere, which moat must not make directories in. */
static int
blobs_dir_open (int xfd)
{
  struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                          .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
                                     | RESOLVE_NO_MAGICLINKS };
  cleanup_close int blobs = -1;

  if ((mkdirat (xfd, "blobs", 0700) < 0 && errno != EEXIST)
      || (blobs = (int)syscall (SYS_openat2, xfd, "blobs", &how, sizeof (how)))
             < 0
      || (mkdirat (blobs, "sha256", 0700) < 0 && errno != EEXIST))
    return -1;
  return (int)syscall (SYS_openat2, blobs, "sha256", &how, sizeof (how));
}

/* manifest.json's first image -> blobs, manifest, index.json, oci-layout. */
static int
layout_from_docker_manifest (int xfd, struct moat_error **err)
{
  struct open_how how = { .flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC,
                          .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
                                     | RESOLVE_NO_MAGICLINKS };
  cleanup_close int fd
      = (int)syscall (SYS_openat2, xfd, "manifest.json", &how, sizeof (how));
  cleanup_close int blobsfd = -1;
  cleanup_free char *text = NULL, *manifest = NULL, *index = NULL;
  json_node *root = NULL, *cfg = NULL;
  const json_node *img, *layers, *ids = NULL;
  const char *config;
  struct json_writer *w;
  char hex[65];
  size_t len;
  int r = 0;

  if (fd < 0)
    return moat_fail (err, errno,
                      "image: neither an OCI layout (index.json) nor a "
                      "docker-archive (manifest.json)");
  if (read_fd_all (fd, ARCHIVE_MANIFEST_MAX, &text, &len) < 0
      || json_parse (text, len, ARCHIVE_MANIFEST_MAX, &root, err) < 0)
    return moat_fail (err, 0, "image archive: manifest.json unreadable");
  img = json_is_array (root) ? json_array_get (root, 0) : NULL;
  config = img ? json_string (json_get (img, "Config")) : NULL;
  layers = img ? json_get (img, "Layers") : NULL;
  if (config == NULL || layers == NULL || !json_is_array (layers))
    {
      json_free (root);
      return moat_fail (err, 0,
                        "image archive: manifest.json: no Config and Layers");
    }
  if (read_diff_ids (xfd, config, &cfg, &ids, err) < 0)
    {
      json_free (root);
      return -1;
    }
  if ((blobsfd = blobs_dir_open (xfd)) < 0)
    {
      json_free (cfg);
      json_free (root);
      return moat_fail (err, errno, "image archive: blobs");
    }
  w = json_writer_new (false);
  jw_object_begin (w);
  jw_key (w, "schemaVersion");
  jw_int (w, 2);
  jw_key (w, "mediaType");
  jw_string (w, "application/vnd.oci.image.manifest.v1+json");
  jw_key (w, "config");
  r = add_blob (w, xfd, blobsfd, config,
                "application/vnd.oci.image.config.v1+json", hex, err);
  jw_key (w, "layers");
  jw_array_begin (w);
  for (size_t i = 0; r == 0 && i < json_array_len (layers); i++)
    {
      const char *p = json_string (json_array_get (layers, i));
      r = p ? add_blob (w, xfd, blobsfd, p,
                        "application/vnd.oci.image.layer.v1.tar", hex, err)
            : moat_fail (err, 0, "image archive: a layer is not a path");
      if (r == 0)
        r = check_diff_id (ids, i, p, hex, err);
    }
  if (r == 0 && json_array_len (ids) != json_array_len (layers))
    r = moat_fail (err, 0, "image archive: %zu layers but %zu diff_ids",
                   json_array_len (layers), json_array_len (ids));
  jw_array_end (w);
  jw_object_end (w);
  manifest = json_writer_finish (w);
  json_free (cfg);
  json_free (root);
  if (r < 0)
    return -1;
  if (sha256_hex_of (manifest, strlen (manifest), hex, err) < 0
      || write_json (blobsfd, hex, manifest, err) < 0)
    return -1;
  index = xasprintf ("{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":"
                     "\"application/vnd.oci.image.manifest.v1+json\","
                     "\"digest\":\"sha256:%s\",\"size\":%zu}]}\n",
                     hex, strlen (manifest));
  if (write_json (xfd, "index.json", index, err) < 0
      || write_json (xfd, "oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}\n",
                     err)
             < 0)
    return -1;
  return 0;
}

int
image_archive_layout (int imagesfd, int fd, const char *hex,
                      const struct image_limits *limits, char *ret_tmpname,
                      int *ret_lockfd, int *ret_layoutfd,
                      struct moat_error **err)
{
  cleanup_close int tmpfd = -1, lockfd = -1, xfd = -1;
  struct image_unpack_notes notes = { 0 };
  /* The archive may be compressed: its unpacked tars are bounded as an
   * image's files are. */
  struct image_budget budget
      = { .max_bytes = limits->max_bytes, .max_entries = limits->max_entries };
  unsigned char rnd[6];

  if (getrandom (rnd, sizeof (rnd), 0) != sizeof (rnd))
    return moat_fail (err, errno, "getrandom");
  /* .tmp-: prune removes it if this moat dies, once its lock is free. */
  snprintf (ret_tmpname, 32, ".tmp-a%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1],
            rnd[2], rnd[3], rnd[4], rnd[5]);
  if (mkdirat (imagesfd, ret_tmpname, 0700) < 0
      || (tmpfd = openat (imagesfd, ret_tmpname,
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
             < 0)
    return moat_fail (err, errno, "image cache: %s", ret_tmpname);
  lockfd = openat (tmpfd, "lock", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (lockfd < 0 || flock (lockfd, LOCK_EX) < 0
      || mkdirat (tmpfd, "x", 0700) < 0
      || (xfd = openat (tmpfd, "x", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    {
      int e = errno;
      remove_tree_at (imagesfd, ret_tmpname);
      return moat_fail (err, e, "image cache: %s", ret_tmpname);
    }
  if (image_unpack_layer (xfd, fd, hex, &budget, &notes, err) < 0
      || (faccessat (xfd, "index.json", F_OK, AT_SYMLINK_NOFOLLOW) < 0
          && layout_from_docker_manifest (xfd, err) < 0))
    {
      remove_tree_at (imagesfd, ret_tmpname);
      return -1;
    }
  *ret_lockfd = steal_fd (&lockfd);
  *ret_layoutfd = steal_fd (&xfd);
  return 0;
}

/* CACHE/by-archive/<archive sha256> holds the digest of the manifest moat
 * made of that archive, so that the next run of the same archive goes to
 * its entry without unpacking it again. */
void
image_archive_remember (int imagesfd, const char *archive_hex,
                        const char *digest)
{
  cleanup_close int dirfd = -1;
  cleanup_free char *text = xasprintf ("%s\n", digest);

  if (mkdirat (imagesfd, IMAGE_BY_ARCHIVE, 0700) < 0 && errno != EEXIST)
    return;
  dirfd = openat (imagesfd, IMAGE_BY_ARCHIVE,
                  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd >= 0)
    write_file_atomic (dirfd, archive_hex, text, strlen (text), 0600);
}

char *
image_archive_recall (int imagesfd, const char *archive_hex)
{
  cleanup_close int dirfd
      = openat (imagesfd, IMAGE_BY_ARCHIVE,
                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  char *text = NULL;
  size_t len;

  if (dirfd < 0 || read_file_at (dirfd, archive_hex, 128, &text, &len) < 0)
    return NULL;
  if (len != 7 + 64 + 1 || text[len - 1] != '\n')
    {
      free (text);
      return NULL;
    }
  text[len - 1] = '\0';
  return text;
}
