/* The container's filesystem setup as an ordered list of typed operations
 * (bubblewrap's model), built from the hardened spec by a pure function:
 * `moat profile explain` prints it, tests check it. rootfs.c does these
 * operations in this order (converting it to execute the list itself is
 * the next step; until then a change to one is a change to both). */
#ifndef MOAT_MOUNT_OPS_H
#define MOAT_MOUNT_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "cgroup.h"
#include "../oci/spec.h"

enum mount_op_kind
{
  MOUNT_OP_ROOTFS,      /* / slave, then the rootfs bound on itself */
  MOUNT_OP_BIND,        /* bind source (opened by fd on the host) at dest */
  MOUNT_OP_MOUNT,       /* a new filesystem of type at dest */
  MOUNT_OP_DEV_NODE,    /* bind the host's /dev/NAME, checked, at dest */
  MOUNT_OP_DEV_LINK,    /* symlink dest -> source */
  MOUNT_OP_MKDIR,       /* create process.cwd while the root is writable */
  MOUNT_OP_PIVOT,       /* pivot_root, the old root detached (or chroot) */
  MOUNT_OP_READONLY,    /* bind dest on itself read-only */
  MOUNT_OP_MASK,        /* cover dest: empty tmpfs, or /dev/null on a file */
  MOUNT_OP_PROPAGATION, /* linux.rootfsPropagation on / */
  MOUNT_OP_ATTRS,       /* attributes set on a mount in place (/dev ro) */
  MOUNT_OP_ROOT_ATTRS,  /* / nosuid,nodev (and read-only) */
};

struct mount_op
{
  enum mount_op_kind kind;
  char *dest;         /* inside the container ("/proc") */
  char *source;       /* host path, fs source, or link target; may be NULL */
  char *type;         /* MOUNT_OP_MOUNT: fs type */
  char *options;      /* comma-separated, as applied; may be NULL */
  size_t mount_index; /* BIND/MOUNT: index in the hardened mounts[] */
};

struct mount_plan
{
  struct mount_op *v;
  size_t n;
};

/* The operations for hardened spec s with its rootfs at rootfs (host
 * path), on a host whose cgroups are in cgmode. No I/O. */
void mount_plan_build (const struct spec *s, const char *rootfs,
                       enum cgroup_mode cgmode, bool no_pivot,
                       struct mount_plan *ret);
void mount_plan_clear (struct mount_plan *plan);
const char *mount_op_kind_name (enum mount_op_kind k);
/* One line: "bind /host/src at /data (rbind,nosuid,nodev,ro)". */
char *mount_op_text (const struct mount_op *op);

#endif
