/* moat's one door to the bpf() syscall for cgroup programs: load a program
 * (with the verifier's log when the kernel refuses it), attach it to a
 * cgroup, detach it, and ask what is attached. The callers only assemble
 * their instructions (with bpf_asm.h): the network guard (netguard_bpf.c)
 * and the device rules (cgroup_devices.c); the maps the network guard's
 * lists live in (LPM tries, and the refusal counters); and pins in a BPF
 * filesystem, through which containers share the network guard's programs
 * (netguard_share.c). No libbpf. */
#ifndef MOAT_BPF_H
#define MOAT_BPF_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

#include "../../lib/error.h"

/* The bpf() syscall; returns what the kernel returns, errno on failure. */
long bpf_sys (int cmd, union bpf_attr *attr);

/* Load n instructions as a program of this type (GPL; expected is the
 * attach type for the kinds that need one, else 0; name shows in bpftool,
 * at most 15 characters). An EPERM from RLIMIT_MEMLOCK (kernels before
 * 5.11) is retried with the soft limit raised to the hard one. On failure
 * the error carries the end of the verifier's log. *ret_fd is O_CLOEXEC
 * (the kernel makes program fds so). */
int bpf_prog_load (enum bpf_prog_type type, enum bpf_attach_type expected,
                   const char *name, const struct bpf_insn *insns, size_t n,
                   int *ret_fd, struct moat_error **err);

/* Attach prog_fd to the cgroup at this hook with BPF_F_ALLOW_MULTI: the
 * engine's or systemd's programs on the cgroup or its parents keep
 * running, and every one of them must agree. 0 or -errno. */
int bpf_cgroup_attach (int cgroup_fd, int prog_fd, enum bpf_attach_type hook);
/* Take prog_fd off the cgroup's hook again. 0 or -errno. */
int bpf_cgroup_detach (int cgroup_fd, int prog_fd, enum bpf_attach_type hook);
/* Take the program with this id off the cgroup's hook (it may be gone
 * already: then nothing happens). 0 or -errno. */
int bpf_cgroup_detach_id (int cgroup_fd, uint32_t id,
                          enum bpf_attach_type hook);
/* The ids of the programs attached to the cgroup itself at this hook: at
 * most *n_ids in ids; *n_ids becomes how many are attached (which may be
 * more than fit). 0 or -errno. */
int bpf_cgroup_query (int cgroup_fd, enum bpf_attach_type hook, uint32_t *ids,
                      uint32_t *n_ids);

/* Create a map (BPF_MAP_CREATE); *ret_fd is O_CLOEXEC. flags: e.g.
 * BPF_F_NO_PREALLOC, which LPM tries require. */
int bpf_map_create (enum bpf_map_type type, uint32_t key_size,
                    uint32_t value_size, uint32_t max_entries, uint32_t flags,
                    const char *name, int *ret_fd, struct moat_error **err);
/* Look KEY up (for an LPM trie: the longest prefix matching it) into
 * VALUE. 0, or -errno (-ENOENT: no entry). */
int bpf_map_lookup (int map_fd, const void *key, void *value);
/* Set KEY to VALUE (BPF_ANY). 0 or -errno. */
int bpf_map_update (int map_fd, const void *key, const void *value);
/* The maps named NAMES[0..N) among those the program with id PROG_ID
 * uses, in one pass: ret_fds[i], O_CLOEXEC, for NAMES[i]. 0, or -errno
 * (-ENOENT: one of them is not there; no fd is left open then). */
int bpf_prog_maps_by_name (uint32_t prog_id, const char *const *names,
                           int *ret_fds, size_t n);
/* The next key after KEY (NULL: the first). 0, or -errno (-ENOENT: none). */
int bpf_map_next_key (int map_fd, const void *key, void *ret_next);
/* The id of the program PROG_FD (as bpftool and BPF_PROG_QUERY name it).
 * 0 or -errno. */
int bpf_prog_id (int prog_fd, uint32_t *ret);
/* Delete KEY. 0 or -errno (-ENOENT: none). */
int bpf_map_delete (int map_fd, const void *key);
/* The value size of the map. 0 or -errno. */
int bpf_map_value_size (int map_fd, uint32_t *ret);
/* Make the map read-only to the bpf() syscall (programs may still write
 * it: the lists' programs only read). 0 or -errno. */
int bpf_map_freeze (int map_fd);

/* Pin the program or map FD at PATH in a BPF filesystem (BPF_OBJ_PIN).
 * 0 or -errno. */
int bpf_obj_pin (int fd, const char *path);
/* Open what is pinned at PATH (BPF_OBJ_GET): *ret_fd, O_CLOEXEC. 0 or
 * -errno (-ENOENT: nothing there). */
int bpf_obj_get (const char *path, int *ret_fd);

#endif
