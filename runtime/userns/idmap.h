/* G12: idmapped mounts for a container whose user namespace moat maps
 * (idmap.c). Internal to runtime/. */
#ifndef MOAT_IDMAP_H
#define MOAT_IDMAP_H

#include <stdbool.h>
#include <sys/types.h>

#include "../../lib/error.h"
#include "../../policy/profile.h"
#include "../../oci/spec.h"

/* With the user namespace userns_fd (-1: pid's, its maps written), as
 * G12 maps it on the container's block: idmap the detached
 * rootfs tree (-1: none; an overlay is rebuilt from idmapped layers, and
 * *rootfs_tree replaced) and the bind trees src_fds[i] where idmap[i].
 * A tree the kernel or its filesystem cannot idmap is left as it is, and
 * said in ov (the audit line) and on stderr: the container still runs,
 * host-owned files showing as the overflow id. */
int idmap_container_mounts (int userns_fd, pid_t pid, const struct spec *s,
                            const char *rootfs, int *rootfs_tree,
                            const int *src_fds, const bool *idmap,
                            struct override_list *ov, struct moat_error **err);
/* For an overlay rootfs (idmap_overlay.c): a read-only overlay of the same
 * layers, each idmapped with userns_fd, as a detached mount in *ret_tree;
 * -errno where the layers are not what it knows. */
int idmap_overlay_rebuild (const char *rootfs, int userns_fd, int *ret_tree);
/* Can this kernel make that overlay (overlayfs' "lowerdir+" taking a layer
 * by fd: Linux 6.8)? Before it an overlay rootfs is not idmapped. */
bool idmap_overlay_supported (void);

#endif
