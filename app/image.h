/* OCI image layouts (index.json -> manifest -> layers, as `skopeo copy
 * oci:DIR` and `podman save --format oci-dir` write) unpacked once into a
 * content-addressed cache, ROOT/.images/<manifest sha256>/rootfs, that
 * sandboxes share read-only. A sandbox holds a shared flock on the entry's
 * lock file while it runs; prune takes it exclusively, so an entry in use
 * is never removed. */
#ifndef MOAT_IMAGE_H
#define MOAT_IMAGE_H

#include <stdio.h>

#include "../lib/error.h"

/* What unpacking left out of the image, told to the user. */
struct image_unpack_notes
{
  unsigned long devices_skipped; /* char/block nodes and sockets */
  unsigned long setid_stripped;  /* setuid/setgid bits removed */
};

/* The cache entry of the layout's manifest, unpacking it first when it is
 * not there. *ret_rootfs: its rootfs path; *ret_lockfd: the shared lock to
 * keep open while the rootfs is used; notes: filled on a fresh unpack. */
int image_prepare (const char *state_root, const char *layout,
                   char **ret_rootfs, char **ret_digest, int *ret_lockfd,
                   struct image_unpack_notes *notes, struct moat_error **err);
int image_cache_list (const char *state_root, FILE *out,
                      struct moat_error **err);
int image_cache_prune (const char *state_root, FILE *out,
                       struct moat_error **err);

/* Unpack one layer blob (tar, tar+gzip, tar+zstd: whatever libarchive
 * reads) into rootfd, honouring whiteouts (.wh.NAME, .wh..wh..opq), whose
 * sha256 must be hex. Refuses paths leaving the root; skips device nodes;
 * strips setuid/setgid. */
int image_unpack_layer (int rootfd, int blobfd, const char *hex,
                        struct image_unpack_notes *notes,
                        struct moat_error **err);

/* rm -rf of dirfd/name without following symlinks; ENOENT is fine. */
int remove_tree_at (int dirfd, const char *name);

#endif
