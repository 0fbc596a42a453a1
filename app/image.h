/* OCI image layouts (index.json -> manifest -> layers, as `skopeo copy
 * oci:DIR` and `podman save --format oci-dir` write) unpacked once into a
 * content-addressed cache, CACHE/<manifest sha256>/rootfs (CACHE: the
 * operator config's image_cache, persistent storage), that sandboxes share
 * read-only. A sandbox holds a shared flock on the entry's lock file while
 * it runs; a session, which outlives its moat processes, leaves a record in
 * the entry's holders/ naming its directory; prune takes the lock
 * exclusively and skips an entry whose holder is still there, so an entry
 * in use is never removed. */
#ifndef MOAT_IMAGE_H
#define MOAT_IMAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../lib/error.h"

/* What unpacking left out of the image, and what the cache's bound
 * evicted, told to the user. */
struct image_unpack_notes
{
  unsigned long devices_skipped; /* char/block nodes and sockets */
  unsigned long setid_stripped;  /* setuid/setgid bits removed */
  unsigned long evicted;         /* entries removed to make room */
  uint64_t evicted_bytes;
};

/* The operator's bounds (image_max_bytes, image_max_entries,
 * image_cache_max_bytes in the operator config). */
struct image_limits
{
  uint64_t max_bytes;   /* the sizes of one image's files, all layers */
  uint64_t max_entries; /* the entries of one image's layers */
  uint64_t cache_max_bytes;
};

/* One unpack's share of the limits: what the layers so far took. */
struct image_budget
{
  uint64_t max_bytes, max_entries;
  uint64_t bytes, entries;
};

/* What the image's config says a process runs with (config.Env,
 * WorkingDir, User), as `docker run` applies it unless told otherwise. */
struct image_config
{
  char **env;    /* "K=V" */
  char *workdir; /* NULL: not set */
  char *user;    /* "uid[:gid]" or "name[:group]"; NULL: not set */
};
void image_config_clear (struct image_config *c);

/* The cache entry of the layout's manifest, unpacking it first when it is
 * not there, within limits (the cache made room for it: least recently used
 * entries that nothing holds removed). *ret_rootfs: its rootfs path;
 * *ret_lockfd: the shared lock to keep open while the rootfs is used;
 * *ret_config: the image's config; notes: filled on a fresh unpack. A bound
 * passed: "image LAYOUT: unpacked size over image_max_bytes (N)", nothing
 * left in the cache. */
int image_prepare (const char *cache_dir, const char *layout,
                   const struct image_limits *limits, char **ret_rootfs,
                   char **ret_digest, int *ret_lockfd,
                   struct image_config *ret_config,
                   struct image_unpack_notes *notes, struct moat_error **err);

/* The image's User as numeric ids: numbers as they are, names looked up
 * in the rootfs' /etc/passwd and /etc/group (opened inside it). A user
 * without a group takes its passwd group (its uid when numeric, as
 * --user). */
int image_user_resolve (const char *rootfs, const char *user, int64_t *ret_uid,
                        int64_t *ret_gid, struct moat_error **err);
int image_cache_list (const char *cache_dir, FILE *out,
                      struct moat_error **err);
int image_cache_prune (const char *cache_dir, FILE *out,
                       struct moat_error **err);
/* Record holder_dir (absolute) as a user of the entry of digest
 * ("sha256:..."), under name, while the caller holds the entry's shared
 * lock: prune leaves the entry while that directory exists. */
int image_hold (const char *cache_dir, const char *digest, const char *name,
                const char *holder_dir, struct moat_error **err);

/* Unpack one layer blob (tar, tar+gzip, tar+zstd: whatever libarchive
 * reads) into rootfd, honouring whiteouts (.wh.NAME, .wh..wh..opq), whose
 * sha256 must be hex. Refuses paths leaving the root and hard links to
 * what is not beneath it; skips device nodes; strips setuid/setgid. Its
 * entries and file sizes are taken from budget: over it, nothing of this
 * layer written and an EFBIG error naming the bound (not to be wrapped
 * with the layer: the bound is the image's). */
int image_unpack_layer (int rootfd, int blobfd, const char *hex,
                        struct image_budget *budget,
                        struct image_unpack_notes *notes,
                        struct moat_error **err);

/* A docker-archive or OCI tar (docker save, podman save), open as fd, of
 * sha256 hex, unpacked into imagesfd/.tmp-aXXXX (its name in
 * ret_tmpname[32], its lock held in *ret_lockfd: the caller removes it) as
 * an OCI layout, *ret_layoutfd, within limits' bytes and entries. A
 * docker-archive's layers must hash to the config's diff_ids. */
int image_archive_layout (int imagesfd, int fd, const char *hex,
                          const struct image_limits *limits, char *ret_tmpname,
                          int *ret_lockfd, int *ret_layoutfd,
                          struct moat_error **err);
/* sha256 and size of an open regular file, from its start. */
int image_hash_fd (int fd, char hex[65], uint64_t *ret_size,
                   struct moat_error **err);
/* The cache's map from an archive's sha256 to the digest ("sha256:...") of
 * the manifest made of it: recall gives NULL when it has none. */
#define IMAGE_BY_ARCHIVE "by-archive"
void image_archive_remember (int imagesfd, const char *archive_hex,
                             const char *digest);
char *image_archive_recall (int imagesfd, const char *archive_hex);

/* "sha256:<64 hex>" -> the hex part, or NULL; is it 64 lowercase hex? */
const char *image_digest_hex (const char *digest);
bool image_hex_ok (const char *hex);
/* The cache directory (made 0700 if missing), open. */
int image_cache_open (const char *dir, int *ret, struct moat_error **err);
/* The entry whose lock is lockfd is used now (the cache's LRU order). */
void image_entry_touch (int lockfd);
/* The bytes of the files of the entry's rootfs, measured and recorded in
 * it. -errno on failure. */
int image_entry_record_size (int entryfd, uint64_t *ret);
/* Room for an entry of need bytes in a cache of at most max: the least
 * recently used entries nothing holds removed (told in notes) until it
 * fits. Fails (EFBIG, naming image_cache_max_bytes) when need is over max,
 * or when the entries in use leave no room. */
int image_cache_make_room (int imagesfd, uint64_t max, uint64_t need,
                           struct image_unpack_notes *notes,
                           struct moat_error **err);

/* rm -rf of dirfd/name without following symlinks; ENOENT is fine. */
int remove_tree_at (int dirfd, const char *name);

#endif
