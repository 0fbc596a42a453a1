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

#include <stdint.h>
#include <stdio.h>

#include "../lib/error.h"

/* What unpacking left out of the image, told to the user. */
struct image_unpack_notes
{
  unsigned long devices_skipped; /* char/block nodes and sockets */
  unsigned long setid_stripped;  /* setuid/setgid bits removed */
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
 * not there. *ret_rootfs: its rootfs path; *ret_lockfd: the shared lock to
 * keep open while the rootfs is used; *ret_config: the image's config;
 * notes: filled on a fresh unpack. */
int image_prepare (const char *cache_dir, const char *layout, char **ret_rootfs,
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
 * what is not beneath it; skips device nodes; strips setuid/setgid. */
int image_unpack_layer (int rootfd, int blobfd, const char *hex,
                        struct image_unpack_notes *notes,
                        struct moat_error **err);

/* A docker-archive or OCI tar (docker save, podman save), open as fd, of
 * sha256 hex, unpacked into imagesfd/.tmp-aXXXX (its name in
 * ret_tmpname[32], its lock held in *ret_lockfd: the caller removes it) as
 * an OCI layout, *ret_layoutfd. A docker-archive's layers must hash to the
 * config's diff_ids. */
int image_archive_layout (int imagesfd, int fd, const char *hex,
                          char *ret_tmpname, int *ret_lockfd, int *ret_layoutfd,
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

/* rm -rf of dirfd/name without following symlinks; ENOENT is fine. */
int remove_tree_at (int dirfd, const char *name);

#endif
