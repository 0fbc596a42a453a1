/* G12: idmapped mounts for a container whose user namespace moat maps
 * (idmap.c). Internal to runtime/. */
#ifndef MOAT_IDMAP_H
#define MOAT_IDMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../lib/error.h"
#include "../../policy/profile.h"
#include "../../oci/spec.h"

/* With the user namespace userns_fd (-1: pid's, its maps written), as
 * G12 maps it on the container's block from host id first: the detached
 * rootfs tree (-1: none) as the policy judged (rootfs_idmap: idmapped, or
 * an overlay rebuilt from idmapped layers and *rootfs_tree replaced, or
 * left as it is), and the bind trees src_fds[i] as idmap[i] says (OWNER:
 * with a user namespace of its own that maps the tree's owner and group
 * to the container's process user and group, nothing else). The policy
 * judged on what idmap_probe_* found: a tree the kernel then refuses is an
 * error. */
int idmap_container_mounts (int userns_fd, pid_t pid, uint32_t first,
                            const struct spec *s, const char *rootfs,
                            enum profile_rootfs_idmap rootfs_idmap,
                            int *rootfs_tree, const int *src_fds,
                            const enum profile_bind_idmap *idmap,
                            struct moat_error **err);

/* A user namespace of moat's, made before judging to probe which trees
 * the kernel and their filesystems can idmap: it answers as the
 * container's would (any user namespace moat controls, with maps). */
struct idmap_probe
{
  int userns_fd; /* -1: none (not yet made, or errnum says why) */
  int errnum;
  bool opened; /* made (or tried): idmap_probe_tree makes it when not */
};
void idmap_probe_open (struct idmap_probe *p);
void idmap_probe_close (struct idmap_probe *p);
/* 0 if the tree at dirfd/path ("": dirfd itself) can be idmapped (a clone
 * of it is, then dropped), else why not (an errno). */
int idmap_probe_tree (struct idmap_probe *p, int dirfd, const char *path,
                      bool recursive);
/* The rootfs' facts (verdicts.h host_facts): *ret_direct as
 * idmap_probe_tree says, and where that is EINVAL (an overlay),
 * *ret_rebuild: 0 if it can be rebuilt from idmapped layers. */
void idmap_probe_rootfs (struct idmap_probe *p, const char *rootfs,
                         int *ret_direct, int *ret_rebuild);
/* The same, not probed where the file "idmap" of the cache directory
 * cache_fd (ROOT/.cache, checked by the caller; -1: no cache) says every
 * filesystem type of the rootfs' tree was idmapped by an earlier probe on
 * this kernel (idmap_cache.c); a probe that passes adds its types. p is
 * made only where a probe is run (or later, by idmap_probe_tree). */
void idmap_probe_rootfs_cached (struct idmap_probe *p, const char *rootfs,
                                int cache_fd, int *ret_direct,
                                int *ret_rebuild);
/* For an overlay rootfs (idmap_overlay.c): a read-only overlay of the same
 * layers, each idmapped with userns_fd, as a detached mount in *ret_tree;
 * -errno where the layers are not what it knows. */
int idmap_overlay_rebuild (const char *rootfs, int userns_fd, int *ret_tree);
/* The same, as far as every layer (no overlay made): 0 if it can be. */
int idmap_overlay_probe (const char *rootfs, int userns_fd);
/* Can this kernel make that overlay (overlayfs' "lowerdir+" taking a layer
 * by fd: Linux 6.8)? Before it an overlay rootfs is not idmapped. */
bool idmap_overlay_supported (void);

#endif
