/* The container's filesystem setup as an ordered list of typed operations
 * (bubblewrap's model), built from the hardened spec by a pure function.
 * It is the one account of what is mounted and in what order: the init
 * executes it op by op (rootfs.c, one function per kind) and `moat
 * profile explain` prints it. Everything the executor applies is worked
 * out here; what it adds at run time is only what the host hands the
 * init (the bind sources' fds, the idmapped rootfs tree). Not in the
 * list: what moat prepares on the host before clone (the profile's mount
 * points, rootfs_place_profile_mounts; idmap's; the sources opened), and
 * the attaching of the rootfs tree, which the init does before it joins
 * the container's namespaces. */
#ifndef MOAT_MOUNT_OPS_H
#define MOAT_MOUNT_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../cgroup/cgroup.h"
#include "../../oci/spec.h"

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
  char *dest;    /* inside the container ("/proc") */
  char *source;  /* host path, fs source, or link target; may be NULL */
  char *type;    /* MOUNT_OP_MOUNT: fs type */
  char *options; /* comma-separated, as shown; may be NULL */
  /* BIND/MOUNT: index in the hardened mounts[], and of the source's fd
   * (opened on the host) in the init's mount_src_fds. */
  size_t mount_index;
  /* What the executor applies, from the options above. */
  unsigned long flags;       /* MS_*, no propagation (ROOTFS: the bind) */
  unsigned long propagation; /* MS_SHARED... | MS_REC, or 0 (ROOTFS: /'s) */
  uint64_t attrs;            /* ATTRS, ROOT_ATTRS: MOUNT_ATTR_* */
  char *data;                /* MOUNT: the filesystem's options, or NULL */
  bool recursive_ro;         /* BIND: rro; else "ro" is for the top alone */
  bool sysfs_ok;             /* BIND/MOUNT: cgroup's place is in /sys */
  bool chroot;               /* PIVOT: chroot (--no-pivot) */
  unsigned major, minor;     /* DEV_NODE: the char device source must be */
  /* Options the plan could not turn into the above: executing the op
   * fails with this message (at its turn, as before: explain still
   * prints the whole plan). NULL: none. */
  char *error;
};

struct mount_plan
{
  struct mount_op *v;
  size_t n, cap;
};

/* The operations for hardened spec s with its rootfs at rootfs (the host
 * path; in the init, its path to an attached tree), on a host whose
 * cgroups are in cgmode. No I/O. */
void mount_plan_build (const struct spec *s, const char *rootfs,
                       enum cgroup_mode cgmode, bool no_pivot,
                       struct mount_plan *ret);
void mount_plan_clear (struct mount_plan *plan);
#define cleanup_mount_plan __attribute__ ((cleanup (mount_plan_clear)))
const char *mount_op_kind_name (enum mount_op_kind k);
/* One line: "bind /host/src at /data (rbind,nosuid,nodev,ro)". */
char *mount_op_text (const struct mount_op *op);

#endif
