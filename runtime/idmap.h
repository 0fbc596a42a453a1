/* G12: idmapped mounts for a container whose user namespace moat maps
 * (idmap.c). Internal to runtime/. */
#ifndef MOAT_IDMAP_H
#define MOAT_IDMAP_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "profile.h"
#include "../oci/spec.h"

/* With the user namespace of pid (its maps written): idmap the detached
 * rootfs tree (-1: none) and the bind trees src_fds[i] where idmap[i].
 * A tree the kernel or its filesystem cannot idmap is left as it is, and
 * said in ov (the audit line) and on stderr: the container still runs,
 * host-owned files showing as the overflow id. */
int idmap_container_mounts (pid_t pid, const struct spec *s, int rootfs_tree,
                            const int *src_fds, const bool *idmap,
                            struct override_list *ov, struct moat_error **err);

#endif
