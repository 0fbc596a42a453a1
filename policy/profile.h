/* The policy. profile_apply() is a pure function (no I/O) from a parsed spec
 * and a profile to the hardened spec, plus the list of what it changed or
 * refused. Mechanisms in runtime/ apply the hardened spec and nothing else. */
#ifndef MOAT_PROFILE_H
#define MOAT_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../lib/error.h"
#include "../lib/cidr.h"
#include "netguard_rules.h"
#include "../oci/decision.h"
#include "../oci/override.h"
#include "../oci/process_bounds.h"
#include "../oci/spec.h"

/* The engines whose state dirs moat knows (G5). */
enum engine_kind
{
  ENGINE_DOCKER,
  ENGINE_PODMAN,
  ENGINE_CONTAINERD,
  ENGINE_KUBELET,
  ENGINE__N,
};

/* G14: Landlock, machine-wide ("landlock" in the operator config). */
enum profile_landlock
{
  PROFILE_LANDLOCK_AUTO,    /* what the kernel offers, none without it */
  PROFILE_LANDLOCK_REQUIRE, /* a kernel without it fails create */
  PROFILE_LANDLOCK_OFF,
};

/* The operator's and the host's configuration: read from the operator
 * config (and moat's flags), the same for every container of a profile;
 * create judges under it, and the sandbox's caller (as trusted as the
 * operator) adds to it, never to a decision. */
struct operator_config
{
  char *audit_log;   /* G11, default /var/log/moat/audit.jsonl */
  char *image_cache; /* sandbox --image's unpacked images, persistent:
                        default /var/lib/moat/images */
  /* What one image may unpack to (the bytes of its files, its entries)
   * and what the cache may hold (least recently used entries go first). */
  uint64_t image_max_bytes;       /* default 16 GiB */
  uint64_t image_max_entries;     /* default 1,000,000 */
  uint64_t image_cache_max_bytes; /* default 64 GiB */
  bool audit_read_verbs; /* audit state, list, ps, events too (default no) */
  char **writable_bind_trees; /* G5: operator's trees binds may write to */
  /* Host sockets of seccomp agents a linux.seccomp.listenerPath may name
   * (operator config only; none by default). */
  char **seccomp_agents;
  bool noexec_volumes; /* G13: the engines' volume trees noexec too */
  char **engine_roots[ENGINE__N]; /* G5: the operator's, besides defaults */
  /* Not from any config: the host tree `moat sandbox --workdir` names (its
   * caller is as trusted as the operator), bound as a volume: writable and
   * executable. NULL elsewhere. */
  char *caller_volume;
  /* G12's pool: each container's ids 0-65535 on a block of 65536 host ids
   * from [userns_first, + blocks * 65536). */
  uint32_t userns_first;          /* default 0x40000000 */
  uint32_t userns_blocks;         /* default 16384 (up to 0x7fffffff) */
  char *userns_pool_dir;          /* machine-wide allocation records */
  enum profile_landlock landlock; /* G14 */
};

/* A profile: the values one container is judged to get (the built-in
 * profile, the operator's settings for it, then the container's
 * annotations, which only tighten): the per-container decision's values,
 * apart from the operator_config it was judged under.
 * profile_apply_effective returns one per container; create saves it in
 * the decision (policy.json) with the overrides and the final spec. */
struct profile
{
  char *name;            /* "strict" or "egress" */
  bool egress;           /* G1: false = loopback only */
  int64_t pids_limit;    /* G7, default 64 */
  int64_t memory_limit;  /* bytes, default 512 MiB; swap = memory */
  int64_t cpu_quota;     /* us per period, default 100000 (1 CPU) */
  uint64_t cpu_period;   /* us, default 100000 */
  uint64_t tmpfs_size;   /* G6, bytes, default 64 MiB */
  uint64_t nofile;       /* RLIMIT_NOFILE cap, default 1024 */
  char **credential_env; /* G10 glob patterns ("*_TOKEN", "AWS_*" ...) */
  struct cidr *deny;     /* G2 metadata ranges + operator's egress_deny */
  size_t n_deny;
  /* egress: egress_allow (allowlist set) or egress_allow_private */
  struct cidr *allow;
  size_t n_allow;
  bool allowlist;
  struct cidr *private_nets; /* egress: the built-in non-public ranges */
  size_t n_private;
  /* deny, allow and private_nets are those of the profile this one was
   * made from (profile_effective), which outlives it: not freed here, and
   * copied before any is changed. */
  bool lists_borrowed;
  /* The digests of deny and allow (cidr_list_digest) where longer than
   * PROFILE_AUDIT_LIST_HEAD, taken once the effective profile is final,
   * for the audit line and policy.json's record alike; "": not taken. */
  char deny_digest[CIDR_LIST_DIGEST_LEN];
  char allow_digest[CIDR_LIST_DIGEST_LEN];
  bool userns; /* G12: a user namespace for every container */
  /* G8: the built-in filter's agent level for every container (operator
   * config "seccomp": "agent"); else only where an annotation asks. */
  bool seccomp_agent;
};

/* Load the operator config (path NULL: /etc/moat/config.json if it exists,
 * else built-in defaults) and pick the profile by name (NULL: the config's
 * "profile", else "strict"): its values in *ret, the configuration for it
 * in *ret_config (may be NULL). Unknown keys or bad values are errors. */
int profile_load (const char *config_path, const char *name,
                  struct profile **ret, struct operator_config **ret_config,
                  struct moat_error **err);
/* The same, through the operator config's cache in cache_dir (a directory
 * of the effective user's alone; NULL: none): a config read before by any
 * verb is not parsed again (profile_config_cache.c). */
int profile_load_cached (const char *config_path, const char *cache_dir,
                         const char *name, struct profile **ret,
                         struct operator_config **ret_config,
                         struct moat_error **err);
/* The built-in profiles alone, no operator config: what verbs that only
 * read or stop containers fall back to when that config is broken. */
int profile_load_builtin (const char *name, struct profile **ret,
                          struct operator_config **ret_config,
                          struct moat_error **err);
/* The operator configuration alone, for the verbs that never judge (they
 * obey the decision create saved): the same config, name and errors as
 * profile_load; *ret_name (may be NULL) is the profile's name ("strict",
 * "egress"; static). */
int operator_config_load (const char *config_path, const char *name,
                          struct operator_config **ret, const char **ret_name,
                          struct moat_error **err);
int operator_config_load_cached (const char *config_path, const char *cache_dir,
                                 const char *name, struct operator_config **ret,
                                 const char **ret_name,
                                 struct moat_error **err);
/* The built-in configuration, as profile_load_builtin. */
int operator_config_load_builtin (const char *name,
                                  struct operator_config **ret,
                                  const char **ret_name,
                                  struct moat_error **err);
void profile_free (struct profile *p);
void operator_config_free (struct operator_config *c);
struct operator_config *operator_config_dup (const struct operator_config *c);
/* Where a judging function below takes a configuration, NULL means the
 * built-in one (no operator config: no extra trees, no seccomp agents). */
/* "auto", "require", "off". */
const char *profile_landlock_name (enum profile_landlock mode);
/* Deep copy (the effective profile is a tightened copy of the loaded one). */
struct profile *profile_dup (const struct profile *p);

/* Harden spec in place. Refusals (G5 dangerous binds) return an error and
 * are also in *ret_overrides (OVERRIDE_REFUSED). */
int profile_apply (struct spec *spec, const struct profile *p,
                   const struct operator_config *cfg,
                   struct override_list *ret_overrides,
                   struct moat_error **err);
/* The same, and the effective profile it hardened with (the base tightened
 * by the annotations) in *ret_effective (may be NULL), also on a refusal:
 * create saves it. */
int profile_apply_effective (struct spec *spec, const struct profile *base,
                             const struct operator_config *cfg,
                             struct profile **ret_effective,
                             struct override_list *ret_overrides,
                             struct moat_error **err);
/* The same for a process `moat exec` starts (caps, nnp, rlimits, env). */
int profile_apply_process (struct spec_process *proc, const struct profile *p,
                           struct override_list *ret_overrides,
                           struct moat_error **err);
/* The profile tightened by run.moat.* annotations (a new copy in *ret,
 * borrowing p's lists until it changes one: p must outlive it).
 * Annotations come from the pod author: a stricter value tightens, a looser
 * or unparseable one is ignored (OVERRIDE_IGNORED in ov, which may be NULL).
 * profile_apply calls it itself; the runtime calls it (ov NULL) to get the
 * netguard rules for create and the process policy for exec, from the
 * container's annotations. */
int profile_effective (const struct profile *p,
                       const struct spec_kv *annotations, size_t n_annotations,
                       struct profile **ret, struct override_list *ov,
                       struct moat_error **err);
/* `moat update`: cap the given resources at the profile (never above it;
 * absent values stay absent, "unlimited" becomes the profile's value). */
int profile_apply_resources (struct spec_resources *r, const struct profile *p,
                             struct override_list *ov, struct moat_error **err);
/* G5 for the runtime, with the realpath of a bind mount's source (so a
 * symlink to /etc is refused too). Returns 0 if allowed, or -1 with err
 * ("refusing to bind /etc into the container (profile strict)"). */
int profile_check_bind_source (const char *resolved_path,
                               const struct profile *p,
                               const struct operator_config *cfg,
                               struct moat_error **err);
/* What the runtime found out about an open bind source. */
struct bind_facts
{
  const char *path;   /* its realpath, after every symlink */
  const char *bundle; /* the bundle's realpath */
  const char *rootfs; /* the rootfs' realpath */
  bool pseudo_fs;     /* on, or (rbind) holding, a pseudo filesystem */
  bool is_socket;     /* a unix socket */
};
/* G5/G13 for the runtime, once the bind source of mounts[index] is open.
 * Refuses (-1 with err), or hardens m->options: read-only outside the
 * writable trees (the engines' per-container and volume trees, the bundle
 * but for its rootfs, the operator's), noexec outside the volume trees and
 * the host's program trees. Each change lands in ov; a write or exec asked
 * for and refused also in *ret_warning (a line for stderr naming the
 * operator key to set; NULL if none, caller frees). */
int profile_harden_bind (struct spec_mount *m, size_t index,
                         const struct bind_facts *f, const struct profile *p,
                         const struct operator_config *cfg,
                         struct override_list *ov, char **ret_warning,
                         struct moat_error **err);
/* What `--workdir` names, as the caller's side found it without following
 * a link. */
struct workdir_facts
{
  const char *path;        /* its real path */
  uid_t owner;             /* st_uid */
  mode_t mode;             /* st_mode */
  uid_t caller;            /* SUDO_UID under sudo, else the real uid */
  const char *state_root;  /* moat's --root (real path where it exists) */
  const char *image_cache; /* the same for the image cache */
};
/* G5 for the sandbox's and the session's workdir (bound writable and
 * executable at /work): NULL if it may be, else why not. A directory of the
 * caller's outside the system trees, moat's own state and the shared
 * parents (/home, /tmp ...), not writable by every user; or one in
 * writable_bind_trees. The same answer under any operator config but for
 * that key. */
const char *profile_workdir_refusal (const struct workdir_facts *f,
                                     const struct operator_config *cfg);
/* G12 for the runtime: how a bind (by the realpath of its source) is
 * idmapped. The engines' per-container files and volumes with the
 * container's user namespace, so that the container's root owns what host
 * root owns there; the caller's workdir (caller_volume) with the
 * container's user (root unless --user) as the workdir's owner on disk, and
 * no other id: what the payload writes there is the caller's, never host
 * root's (unless root owns the workdir). Every other bind is not idmapped:
 * host files show as the overflow id. */
enum profile_bind_idmap
{
  PROFILE_BIND_IDMAP_NONE,
  PROFILE_BIND_IDMAP_CONTAINER,
  PROFILE_BIND_IDMAP_OWNER,
};
enum profile_bind_idmap
profile_bind_idmapped (const char *resolved_path,
                       const struct operator_config *cfg);
/* G12: the tree at dest (a bind's destination, "root.path") that the
 * policy idmaps: can it be, as the runtime probed before judging
 * (probe_errno 0: yes; else the kernel's errno for a user namespace of
 * moat's)? If not, it is left as it is, recorded in ov and told on stderr. */
bool profile_idmap_possible (const char *dest, int probe_errno,
                             struct override_list *ov);
/* G1/G5 for the runtime: joining a namespace (linux.namespaces[].path) is
 * allowed unless it is the host's own (same dev/inode as /proc/1/ns/TYPE)
 * for the types that isolate the container (network, pid, ipc, uts, mount). */
int profile_check_ns_join (enum ns_type type, dev_t dev, ino_t ino,
                           dev_t host_dev, ino_t host_ino,
                           const struct profile *p, struct moat_error **err);
/* The policy's second step (profile_host.c): joining the namespace at
 * ns_path (profile_check_ns_join), a refusal recorded in ov. */
int profile_apply_ns_join (enum ns_type type, const char *ns_path, dev_t dev,
                           ino_t ino, dev_t host_dev, ino_t host_ino,
                           const struct profile *p, struct override_list *ov,
                           struct moat_error **err);
/* The bounds every process of a container gets under p (its init's at
 * create, each exec's later: saved in the decision). */
struct process_bounds profile_process_bounds (const struct profile *p);
/* A seccomp agent (linux.seccomp.listenerPath) must be one of the operator
 * config's seccomp_agents; 0, or -1 with err. */
int profile_check_seccomp_agent (const struct spec_seccomp *s,
                                 const struct operator_config *cfg,
                                 struct moat_error **err);
/* One container's judgement: the values it gets (the effective profile)
 * and every override and refusal behind them, in one value the policy
 * returns (profile_judge, verdicts.h) and create saves whole. */
enum profile_rootfs_idmap
{
  PROFILE_ROOTFS_IDMAP_DIRECT,  /* idmapped as it is (or no G12 block) */
  PROFILE_ROOTFS_IDMAP_REBUILT, /* an overlay rebuilt from idmapped layers */
  PROFILE_ROOTFS_IDMAP_NONE,    /* left as it is: shows as nobody inside */
};
struct judgement
{
  struct profile *values;
  struct override_list overrides;
  /* G12: what the runtime does with the rootfs of a user namespace moat
   * maps, judged from the host_facts create probed (verdicts.h). */
  enum profile_rootfs_idmap rootfs_idmap;
  /* The nameservers the guard lets through on port 53 (egress only). */
  struct cidr dns[NETGUARD_MAX_DNS];
  size_t n_dns;
};
void judgement_clear (struct judgement *j);

/* What create decided for a container, saved whole in ROOT/ID/policy.json
 * (oci/decision.h): the effective profile, every override and refusal, the
 * process bounds, the nameservers the guard lets through and the final
 * spec (one line of JSON). Later verbs load it with decision_parse and
 * obey it; the profile and overrides are written here, the rest in oci/.
 * guard_holds_lists: the cgroup-bpf guard is attached and holds the lists,
 * which are then named, not saved (only start's fallback reads them). */
char *profile_policy_to_json (const struct judgement *j,
                              const struct spec *final, const struct cidr *dns,
                              size_t n_dns, const char *userns_pool_dir,
                              bool guard_holds_lists);
/* G12: the ids a moat-made user namespace maps (0-65535, one block). */
#define PROFILE_USERNS_BLOCK 65536u
/* G12 for a config.json that joins a user namespace by path: its uid_map or
 * gid_map text (as /proc/PID/uid_map reads) must not reach host id 0. */
int profile_check_joined_idmap (const char *map_text, const char *what,
                                struct moat_error **err);
/* The policy's second step for a user namespace joined by path (its maps
 * as the runtime read them): profile_check_joined_idmap on both, a
 * refusal recorded in ov. */
int profile_apply_joined_userns (const char *ns_path, const char *uid_map,
                                 const char *gid_map, struct override_list *ov,
                                 struct moat_error **err);
/* The effective profile's audited fields (the field table's FIELD_AUDIT:
 * limits, network lists with the nameservers, Landlock and seccomp modes,
 * G12) as one JSON object, for create's audit line ("effective";
 * malloc'ed). */
char *profile_audit_json (const struct profile *p,
                          const struct operator_config *cfg,
                          const struct cidr *dns, size_t n_dns);
/* The effective profile as pretty JSON (moat profile show). */
int profile_to_json (const struct profile *p, const struct operator_config *cfg,
                     char **ret, struct moat_error **err);
/* Netguard rules for this profile and the container's nameservers
 * (pointers into p and dns). */
void profile_netguard_rules (const struct profile *p, const struct cidr *dns,
                             size_t n_dns, struct netguard_rules *ret);
/* The effective network lists as a JSON object (the field table's
 * "network", in profile show and create's audit line): the nameservers
 * when with_dns; when bounded (the audit line), a list longer than
 * PROFILE_AUDIT_LIST_HEAD entries is written as its first entries, its
 * length ("KEY_count") and a digest of the whole ("KEY_digest"). */
#define PROFILE_AUDIT_LIST_HEAD 16
struct json_writer;
void profile_network_json (struct json_writer *w, const struct profile *p,
                           const struct cidr *dns, size_t n_dns, bool with_dns,
                           bool bounded);

#endif
