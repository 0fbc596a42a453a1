/* G12, the mechanism: the pool of host-id blocks, the uid/gid maps, the
 * namespaces moat joins for the init before it has a user namespace of its
 * own, and idmapped mounts. The policy (who gets a namespace, which binds
 * are idmapped) is in profile_userns.c and profile_mounts.c. */
#ifndef MOAT_USERNS_H
#define MOAT_USERNS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../lib/error.h"
#include "../../policy/profile.h"
#include "../../oci/spec.h"

/* Does moat map this container's user namespace itself (G12's default)? */
bool userns_moat_maps (const struct spec *s);

/* Take a free block of the operator's pool for ROOT_PATH/ID (the realpath
 * of --root and the container id): one record file per held block in
 * cfg->userns_pool_dir, made under the pool's lock. A record whose state
 * dir is gone (a crash, a kill -9 before delete) is stale and taken again.
 * *ret_first: the block's first host id. */
int userns_block_alloc (const struct operator_config *cfg,
                        const char *root_path, const char *id,
                        uint32_t *ret_first, struct moat_error **err);
/* userns_block_alloc for ROOT/ID (ROOT as --root says): *ret_root_path is
 * what the record names. The block is a fact of the container (its state,
 * its audit line), not an override. */
int userns_block_take (const struct operator_config *cfg, const char *root,
                       const char *id, char **ret_root_path,
                       uint32_t *ret_first, struct moat_error **err);
/* ROOT_PATH/ID no longer holds the block: the block is given back to the
 * pool at pool_dir (the one create took it from, as its decision saved)
 * once its record names no other holder. */
void userns_block_release (const char *pool_dir, uint32_t first,
                           const char *root_path, const char *id);

/* The same, for a state dir whose state.json is unreadable (a crash in
 * the middle of create): every record naming ROOT_PATH/ID. */
void userns_block_release_owner (const struct operator_config *cfg,
                                 const char *root_path, const char *id);

/* A namespace joined by path that belongs to the user namespace of a live
 * moat container (docker run --pid container:X, a Kubernetes pod that
 * shares its pid namespace): the new container adopts that user namespace
 * and its block, as a second holder. HOLDS judges each holder of each
 * record (OWNER: its state dir, FIRST: the block), under the pool's lock;
 * the first it accepts gets ROOT_PATH/ID added to its record, and
 * *ret_first is set (0: none accepted). The block stays held until its
 * last holder releases it (userns_block_release drops one line). */
typedef bool (*userns_holder_fn) (const char *owner, uint32_t first,
                                  void *data);
int userns_block_adopt (const struct operator_config *cfg,
                        const char *root_path, const char *id,
                        userns_holder_fn holds, void *data, uint32_t *ret_first,
                        struct moat_error **err);

/* Write /proc/PID/{uid,gid}_map: moat's block (first != 0), or the
 * mappings of config.json. setgroups stays allowed: the payload's
 * additionalGids need it, and every group it can name is mapped. */
int userns_write_maps (pid_t pid, const struct spec_linux *l, uint32_t first,
                       struct moat_error **err);

/* Namespaces joined by path that the init could not join from inside its
 * new user namespace (they belong to another one): moat joins them before
 * clone so that the init is born in them, and goes back after.
 * saved[NS__MAX] receives moat's own (-1 where untouched); joined fds in
 * init_fds are set to -1 so that the init does not join them again. */
int userns_parent_join (const struct spec *s, const int *ns_fds, int *init_fds,
                        int *saved, struct moat_error **err);
int userns_parent_restore (int *saved, struct moat_error **err);
/* While joined: the sysfs (net) and mqueue (ipc) of namespaces the init's
 * user namespace does not own cannot be mounted from inside; moat makes
 * them here as detached mounts that the init attaches (src_fds[i]). */
int userns_pseudo_mounts (const struct spec *s, const int *init_fds_before,
                          int *src_fds, struct moat_error **err);

/* Does config.json mount a procfs? */
bool userns_has_proc_mount (const struct spec *s);

/* Everything above, before clone, for an init with a user namespace of
 * its own, new or joined by path (userns false: saved[] is only cleared):
 * the rootfs cloned as a
 * detached tree (*ret_tree) that the init attaches while it is still host
 * uid 0 to host files, the joins, the pseudo filesystems and sysctls of
 * joined namespaces (first: moat's block, 0: none). On failure
 * moat is back in its own namespaces. */
int userns_before_clone (const struct spec *s, const char *rootfs, bool userns,
                         uint32_t first, const int *ns_fds, int *init_fds,
                         int *src_fds, int *ret_tree, int *saved,
                         struct moat_error **err);

/* The owner of a user namespace is the effective uid that makes it, and
 * the kernel charges per-user counts (inotify instances and watches,
 * mqueue bytes, pending signals, user namespaces) to each owner up the
 * chain: with host root as the owner, the container would spend host
 * root's. moat clones with its effective uid set to the block's first id,
 * its capabilities kept and its fsuid still 0 (the init reaches host files
 * as before until it becomes the namespace's root), and goes back right
 * after (userns_owner_leave, also on failure). */
int userns_owner_enter (uint32_t first, struct moat_error **err);
/* The owner for a new user namespace: the block's first id, or the host id
 * config.json maps container root to (its first mapping without one);
 * 0: none (moat stays the owner). */
uint32_t userns_owner_for (const struct spec *s, uint32_t first);
int userns_owner_leave (struct moat_error **err);
/* Right before clone: the init's cgroup files opened as host root
 * (cgroup_open_self_files), then userns_owner_enter. */
struct cgroup;
int userns_clone_prepare (struct cgroup *cg, uint32_t first, int **ret_cg_fds,
                          struct moat_error **err);

/* Idmap a detached tree (OPEN_TREE_CLONE) with the user namespace of
 * userns_fd: host id 0 on disk shows as container root. -errno if the
 * kernel or the filesystem cannot (the tree is then left as it was). */
int userns_idmap_tree (int tree, int userns_fd, bool recursive);

/* Kernel support, probed: user namespaces can be made, mount_setattr
 * exists. For moat features. */
bool userns_kernel_supported (void);
bool userns_idmap_supported (void);

#endif
