/* Shared by the lifecycle files of runtime/ (not by cmd/). */
#ifndef MOAT_CONTAINER_INTERNAL_H
#define MOAT_CONTAINER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "container.h"
#include "../oci/decision.h"
#include "../policy/profile.h"
#include "../oci/json.h"
#include "../oci/state.h"

#define JSON_MAX_SIZE_CONFIG (4u * 1024 * 1024)

static inline void
cleanup_specp (struct spec **s)
{
  spec_free (*s);
}
#define cleanup_spec __attribute__ ((cleanup (cleanup_specp)))
static inline void
cleanup_statep (struct container_state **s)
{
  if (*s)
    state_free (*s);
}
#define cleanup_state __attribute__ ((cleanup (cleanup_statep)))

static inline void
cleanup_profilep (struct profile **p)
{
  if (*p)
    profile_free (*p);
}
#define cleanup_profile __attribute__ ((cleanup (cleanup_profilep)))

static inline void
cleanup_decisionp (struct decision **d)
{
  decision_free (*d);
}
#define cleanup_decision __attribute__ ((cleanup (cleanup_decisionp)))

static inline void
cleanup_overridesp (struct override_list *l)
{
  override_list_clear (l);
}
#define cleanup_overrides __attribute__ ((cleanup (cleanup_overridesp)))

/* The decision as create saved it, read without the policy: the final
 * spec as applied and the bounds of every process (exec, start, delete). */
struct decision;
int container_load_decision (const struct moat_globals *g, int dirfd,
                             const struct container_state *st,
                             struct decision **ret, struct moat_error **err);
/* Write policy.json (once, at create, when every verdict is given): the
 * decision whole, with the final spec, the nameservers the network guard
 * lets through and the G12 pool its block came from; the guard's lists
 * only named where its cgroup-bpf programs hold them (guard_holds_lists). */
int container_save_policy (int dirfd, const struct judgement *j,
                           const struct spec *final, const struct cidr *dns,
                           size_t n_dns, const char *userns_pool_dir,
                           bool guard_holds_lists, struct moat_error **err);

/* BUNDLE/config.json parsed (and its text); root.path resolved. */
int read_config (const char *bundle, struct spec **ret, char **ret_text,
                 size_t *ret_len, struct moat_error **err);
/* The same from a text in memory (copied into *ret_text). */
int parse_config (const char *text, size_t len, struct spec **ret,
                  char **ret_text, size_t *ret_len, struct moat_error **err);
int resolve_rootfs (const struct spec *s, const char *bundle, char **ret,
                    struct moat_error **err);

/* Open and judge every bind source of s (G5, G13) under p and cfg, hardening
 * their options, every verdict in ov; *ret_fds holds, per mount, a detached
 * tree or -1 (ret_fds NULL: judge only, as `profile explain` does), and
 * idmap[i] (when not NULL) how G12 idmaps it: as the policy would,
 * and probe (not NULL: a user namespace moat maps) finds the kernel can. */
struct idmap_probe;
/* create's first step after reading config.json (facts.c): the host's
 * facts the policy judges (verdicts.h), for spec s (not yet hardened)
 * under base; probe is opened where G12 may idmap, unless the cache of
 * state_root (NULL: none) answers for the rootfs (the
 * caller closes it: the bind sources are probed with it too, opening it
 * if it was not). */
struct host_facts;
int container_gather_facts (const struct spec *s, const struct profile *base,
                            const char *bundle, const char *rootfs,
                            const char *state_root, struct host_facts *ret,
                            struct idmap_probe *probe, struct moat_error **err);
int container_open_bind_sources (struct spec *s, const char *bundle,
                                 const char *rootfs, const struct profile *p,
                                 const struct operator_config *cfg,
                                 struct override_list *ov, int **ret_fds,
                                 enum profile_bind_idmap *idmap,
                                 struct idmap_probe *probe,
                                 struct moat_error **err);

/* Record the bundle for the audit line (G11). */
void container_audit_bundle (const struct moat_globals *g, const char *bundle);
/* And the container's profile name (from its state, not the flags). */
void container_audit_profile (const struct moat_globals *g, const char *name);

/* /proc/PID/stat: state letter and start time (field 22); with exit code
 * (field 52, waitpid's encoding, read from the same text) where asked. */
#define PROC_STAT_STARTTIME 22
#define PROC_STAT_EXIT_CODE 52
int proc_stat_read (pid_t pid, char *ret_state, uint64_t *ret_starttime);
int proc_stat_read_exit (pid_t pid, char *ret_state, uint64_t *ret_starttime,
                         int *ret_exit_code);
/* Is the init of st alive (same start time, not a zombie)? A state without
 * a start time (0) has no init moat may act on. */
bool container_init_alive (const struct container_state *st);
/* A pidfd of the init of st, checked to be it (opened before the check:
 * no signal can land on a process given the pid later); -ESRCH when it is
 * gone or was never recorded. Signal only through it. */
int container_init_pidfd (const struct container_state *st);
/* /proc/PID/FILE of the init of st for each of the n files, opened
 * read-only under one pidfd that pins it, and checked to be the init's
 * (still running after the opens): 0 with ret_fds[0..n) open; -ESRCH when
 * the init is gone, else -errno of the open that failed, every fd -1. */
int container_init_proc_open (const struct container_state *st,
                              const char *const *files, size_t n, int *ret_fds);
/* creating | created | running | paused | stopped */
const char *container_status (int dirfd, const struct container_state *st);
/* The same; a running or paused container's cgroup, opened to tell which,
 * goes to *ret_cg (NULL otherwise) for the caller to use and free. */
struct cgroup;
const char *container_status_cgroup (int dirfd,
                                     const struct container_state *st,
                                     struct cgroup **ret_cg);
/* ROOT/.cache: compiled seccomp filters, for create and exec. */
char *container_cache_dir (const struct moat_globals *g);
/* Open ROOT/ID (locked if lock) and read its state. */
int container_load (const struct moat_globals *g, const char *id, bool lock,
                    int *ret_rootfd, int *ret_dirfd,
                    struct container_state **ret_st, struct moat_error **err);
/* Wait for PID, a container process moat started (after relaying MASTER,
 * when >= 0): it has a session and process group of its own (G10), so the
 * caller's Ctrl-C and kill reach only moat, which passes HUP, INT, QUIT,
 * TERM, USR1, USR2 and WINCH on. 128 + N for a death by signal N. */
int container_wait_forwarding (pid_t pid, int master, int *ret_status,
                               struct moat_error **err);
/* linux.namespaces[].path, opened into ns_fds[NS__MAX] (-1: none) and
 * judged by the policy's second step against the host's own, refusals in
 * ov (namespaces.c). */
int container_open_namespaces (const struct spec *s, const struct profile *p,
                               struct override_list *ov, int *ns_fds,
                               struct moat_error **err);
/* G12, for a container whose user namespace moat makes: a pid or cgroup
 * namespace joined by path belongs to a user namespace. The host's: the
 * container's root could not use it (a pid namespace without /proc runs as
 * before); refused. A live moat container's, mapped on its block: the
 * container adopts that user namespace and block instead of a new one
 * (docker run --pid container:X, a Kubernetes pod sharing its pid
 * namespace), ns_fds[NS_USER] and linux.namespaces.user's path set, the
 * pool's record naming it too (*ret_first, *ret_root_path as
 * userns_block_take's). Any other: refused. A mount namespace joined by
 * path is refused. *ret_first is 0 where nothing is adopted; else
 * *ret_joined (may be NULL) says whose namespace, a fact of the container
 * (its audit line), not an override. */
int container_adopt_userns (struct spec *s, const struct operator_config *cfg,
                            const char *root, const char *id, int *ns_fds,
                            char **ret_joined, uint32_t *ret_first,
                            char **ret_root_path, struct moat_error **err);
/* Enter (or make) the pid and time namespaces the init must be born in. */
int container_enter_parent_namespaces (const struct spec *s, int *ns_fds,
                                       struct moat_error **err);
/* create's warning on stderr: the network requests (run.moat.*) the
 * profile ignored. container.c. */
void container_warn_ignored (const struct override_list *ov);

/* What create hands a `start` in the same process (run, sandbox): the
 * state dir still locked, the state as saved, the final spec. start then
 * reads none of what create has just written. create_carry_release
 * closes (unlocks) and frees what is left. */
struct create_carry
{
  int rootfd, dirfd;
  int start_fd; /* the init reads start's byte from the other end */
  struct container_state *st;
  struct spec *spec;
  struct cgroup *cg; /* open in every hierarchy, for delete */
};
#define CREATE_CARRY_INIT                                                      \
  {                                                                            \
    .rootfd = -1, .dirfd = -1, .start_fd = -1                                  \
  }
void create_carry_release (struct create_carry *carry);
/* ret_carry NULL: the state dir is closed at the end, as `create` does. */
int container_create_internal (const struct moat_globals *g,
                               const struct create_opts *o, bool for_run,
                               pid_t *ret_pid, int *ret_master,
                               struct create_carry *ret_carry,
                               struct moat_error **err);
/* start of a container create_carry holds; the carry's lock is released
 * on return (the dir stays open for container_delete_carried). */
int container_start_carried (const struct moat_globals *g,
                             struct create_carry *carry,
                             struct moat_error **err);
/* delete --force of it, locking again; 0 when another delete came first. */
int container_delete_carried (const struct moat_globals *g,
                              struct create_carry *carry,
                              struct moat_error **err);

#endif
