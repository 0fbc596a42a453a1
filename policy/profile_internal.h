/* Shared between the files of the policy layer (profile.c, profile_mounts.c,
 * profile_config.c). Not an interface for the rest of moat. */
#ifndef MOAT_PROFILE_INTERNAL_H
#define MOAT_PROFILE_INTERNAL_H

#include "profile.h"
#include "../oci/resource_bounds.h"

/* G9 paths the profile always masks / makes read-only, NULL-terminated. */
extern const char *const profile_masked_paths[];
extern const char *const profile_readonly_paths[];
/* The operator config's names of enum engine_kind ("docker" ...),
 * NULL-terminated. */
extern const char *const profile_engine_names[ENGINE__N + 1];
/* G10 default credential patterns, NULL-terminated. */
extern const char *const profile_default_credential_env[];
/* sysctl names a container may set (fnmatch patterns on the dotted name). */
extern const char *const profile_allowed_sysctls[];

/* Lexical normalization: collapses "//", "." and "..". A relative path is
 * taken relative to "/" (as mount destinations are relative to the rootfs).
 * ".." never climbs above "/". */
char *profile_path_normalize (const char *path);
/* Is path tree itself or beneath it (both normalized)? */
bool profile_path_in_tree (const char *path, const char *tree);

/* What a bind source may be, by where it really is. */
enum bind_class
{
  BIND_REFUSED,
  BIND_HOST_FILE,     /* resolv.conf and friends: read-only */
  BIND_HOST_PROGRAMS, /* /usr and friends: read-only, executable */
  BIND_ENGINE_FILE,   /* an engine's per-container files: writable */
  BIND_VOLUME,        /* an engine's volumes: writable, executable */
  BIND_WRITABLE,      /* the bundle, the operator's trees: writable */
  BIND_OTHER,         /* any other host path: read-only */
};
/* G5's class of path (absolute, normalized); bundle and rootfs are
 * realpaths, or NULL where not known. */
enum bind_class
profile_classify_bind_source (const char *path, const char *bundle,
                              const char *rootfs,
                              const struct operator_config *cfg);

/* Built-in defaults of a profile name ("strict" / "egress"). */
int profile_init_default (struct profile *p, const char *name,
                          struct moat_error **err);

/* G5/G6 on spec->mounts. Keeps going after a refusal so that every refusal
 * lands in ov; returns -1 with err naming the first one. */
int profile_harden_mounts (struct spec *spec, const struct profile *p,
                           const struct operator_config *cfg,
                           struct override_list *ov, struct moat_error **err);

/* G12: what becomes of the rootfs of the user namespace moat maps for
 * hardened spec (its judgement in j->rootfs_idmap, each fallback in
 * j->overrides), from the facts create probed. */
struct host_facts;
void profile_judge_rootfs_idmap (const struct spec *spec,
                                 const struct host_facts *facts,
                                 struct judgement *j);
/* The profile's scratch tmpfs whose mount point a read-only rootfs lacks
 * (bit k of unplaceable: profile_scratch_points[k]) and no other mount
 * holds: left out, and told in ov. */
void profile_drop_unplaceable_scratch (struct spec *spec, unsigned unplaceable,
                                       struct override_list *ov);

/* The bounds of p (saved in the decision for update). */
struct resource_bounds profile_resource_bounds (const struct profile *p);
/* G7 on linux.resources. create: absent limits get the profile's; else
 * (moat update) absent values stay absent. */
void profile_harden_resources (struct spec_resources *r,
                               const struct profile *p, bool create,
                               struct override_list *ov);

/* G12 on linux.namespaces / uid and gid mappings (profile_userns.c). A
 * user namespace moat must map itself is left present with no mappings. */
int profile_harden_userns (struct spec_linux *linux_, const struct profile *p,
                           const struct operator_config *cfg,
                           struct override_list *ov, struct moat_error **err);

/* "1", "0.5", "2.25" (at most 3 decimals) -> thousandths. */
int profile_parse_millis (const char *s, uint64_t *ret);

/* "10.0.0.0/8" (newly allocated). */

/* The network lists (profile_network.c): built-in defaults, copies, the
 * operator config's egress_* keys, the run.moat.egress-allow annotation. */
struct json_node;
int profile_network_init (struct profile *p, struct moat_error **err);
void profile_network_dup (struct profile *d, const struct profile *p);
/* profile_dup, the lists borrowed (struct profile lists_borrowed): the
 * effective profile of a create with 10,000-entry lists copies none. */
struct profile *profile_dup_borrowing_lists (const struct profile *p);
void profile_network_free (struct profile *p);
/* The egress_* lists of one object of the operator config (the top level
 * or profiles.NAME), parsed and checked once, whichever profile they go
 * to; and kept in the operator config's cache (profile_config_cache.c). */
enum profile_allow_kind
{
  PROFILE_ALLOW_NONE,
  PROFILE_ALLOWLIST,     /* egress_allow */
  PROFILE_ALLOW_PRIVATE, /* egress_allow_private */
};
struct profile_network_lists
{
  bool has_deny;
  struct cidr *deny;
  size_t n_deny;
  enum profile_allow_kind allow_kind;
  struct cidr *allow;
  size_t n_allow;
  /* Of a profile's scope (profiles.NAME): the digests that profile's deny
   * and allow take once every scope's lists are taken (struct profile's
   * deny_digest, allow_digest), where known; "": not known. */
  char deny_digest[CIDR_LIST_DIGEST_LEN];
  char allow_digest[CIDR_LIST_DIGEST_LEN];
};
void profile_network_lists_free (struct profile_network_lists *l);
/* The lists of obj (an object; prefix "" or "profiles.NAME" for errors). */
int profile_network_read (const struct json_node *obj, const char *prefix,
                          struct profile_network_lists *ret,
                          struct moat_error **err);
/* l's denied entries added to *n_deny, within the guard's bound. */
int profile_network_count (size_t *n_deny,
                           const struct profile_network_lists *l,
                           const char *prefix, struct moat_error **err);
/* Add l's denied entries to p's, and its allowed ones in place of p's,
 * moved from l (which keeps its kinds, not its entries). */
int profile_network_take (struct profile *p, struct profile_network_lists *l,
                          const char *prefix, struct moat_error **err);

/* The egress_* lists of each scope (the top level, then profiles.NAME in
 * the order of NAMES, NULL-terminated), read once whatever number of
 * profiles they go to. */
int profile_network_read_scopes (const struct json_node *root,
                                 const char *const *names,
                                 struct profile_network_lists *lists,
                                 struct moat_error **err);
/* The lists of every scope (the top level, then profiles.NAME in the
 * order of NAMES, NULL-terminated) within the guard's bounds for each
 * profile: counted, not applied, whichever profile is picked. */
int profile_network_check_scopes (struct profile *const *profiles,
                                  const char *const *names,
                                  const struct profile_network_lists *lists,
                                  struct moat_error **err);
/* The top level's lists, then those of lists[scope] (profiles.NAME),
 * moved to P, the profile picked. */
int profile_network_take_scopes (struct profile *p, const char *name,
                                 struct profile_network_lists *lists, int scope,
                                 struct moat_error **err);
void profile_network_scopes_free (struct profile_network_lists *lists);
/* Into lists[1 + k], the digests profiles[k]'s lists will have once the
 * scopes' are taken (before profile_network_take_scopes). */
void profile_network_scope_digests (struct profile *const *profiles,
                                    struct profile_network_lists *lists);

/* The operator config's cache (profile_config_cache.c): the lists of its
 * scopes (the top level, then profiles.strict and profiles.egress), as
 * profile_network_read gave them, and the config's text without them. */
#define PROFILE_CONFIG_SCOPES 3
/* The entry for the config at config_path whose bytes are those of
 * config_fd (read with pread, its offset left alone): 0 with that text
 * less its lists (*ret_reduced, NUL-terminated) and, with want_lists, the
 * lists (else empty: neither read nor checked); -1 where there is none to
 * trust. */
int profile_config_cache_load (const char *cache_dir, const char *config_path,
                               int config_fd, bool want_lists,
                               char **ret_reduced, size_t *ret_reduced_len,
                               struct profile_network_lists *ret_lists);
/* Save what was read from text (root its tree) for the next verb; quietly
 * nothing where the directory cannot be made ours. */
void profile_config_cache_store (const char *cache_dir, const char *config_path,
                                 const char *text, size_t text_len,
                                 const struct json_node *root,
                                 const struct profile_network_lists *lists);
int profile_network_annotation (struct profile *e, const char *value,
                                struct override_list *ov,
                                struct moat_error **err);
/* "10.0.0.0/8,1.2.3.4/32:443": the allowed entries, malloc'ed. */
char *profile_network_allow_text (const struct profile *p);
const char *profile_network_mode (const struct profile *p);
/* A list in policy.json's record of the profile: one string, or past
 * PROFILE_AUDIT_LIST_HEAD entries {"head": its first ones as one string,
 * "count", "digest"}. What the guard enforces is saved on its own
 * (the decision's "guard"); this record only names the list. */
struct json_writer;
void profile_write_joined_list (struct json_writer *w, const struct profile *p,
                                const struct cidr *list, size_t n);
/* p's deny_digest and allow_digest, taken now (p final). */
void profile_network_take_digests (struct profile *p);

/* The fields of struct profile, once: their keys in the saved form, in
 * profile show and in the operator config, and their types. */
enum field_type
{
  F_BOOL,
  F_INT,   /* int64_t, at least min */
  F_UINT,  /* uint64_t, at least min */
  F_U32,   /* uint32_t */
  F_STR,   /* char *, required */
  F_STRV,  /* char ** */
  F_DENY,  /* struct cidr * + n_deny: read back on top of the built-in */
  F_ALLOW, /* struct cidr * + n_allow, with ports */
  F_SHOW,  /* profile show only: show_fn writes the value */
};

/* How the operator config sets a field, under its show key ("limits.pids"
 * there too). C_NONE: not set there, or by hand (profile_config.c). */
enum config_kind
{
  C_NONE,
  C_COUNT, /* an integer from 1 to max */
  C_SIZE,  /* bytes, or with a unit ("512M") */
  C_BOOL,
  C_LIST,  /* non-empty strings, replacing the value */
  C_TREES, /* absolute host paths other than /, added to the value */
  C_PATH,  /* one absolute path */
};

/* What a show function may need beyond the profile: the nameservers
 * create read (the audit line has them; profile show does not). */
struct show_ctx
{
  const struct cidr *dns;
  size_t n_dns;
  bool with_dns;
  bool bounded_lists; /* the audit line: long lists as head, count, digest */
  bool joined_lists;  /* policy.json: deny and allow as one string each */
  const struct operator_config *config; /* the FIELD_CONFIG fields' */
};

/* Where a field is written besides the saved form (flags). */
enum field_flag
{
  FIELD_MACHINE = 1, /* operator config's top level only, every profile */
  FIELD_AUDIT = 2,   /* create's audit line ("effective"), under its show
                        key */
  FIELD_CONFIG = 4,  /* a member of struct operator_config, not of the
                        profile: never saved */
};

struct field
{
  const char *saved; /* key in the saved form; NULL: not saved */
  const char *show;  /* key in profile show and the operator config */
  enum field_type type;
  size_t offset;
  int64_t min;
  void (*show_fn) (struct json_writer *w, const struct profile *p,
                   const struct show_ctx *ctx);
  enum config_kind config;
  uint64_t max;   /* C_COUNT */
  unsigned flags; /* enum field_flag */
};

/* The table (profile_fields.c). */
extern const struct field profile_fields[];
extern const size_t profile_n_fields;
/* The field's slot: in the profile p, or in the configuration cfg for a
 * FIELD_CONFIG one. */
#define PROFILE_FIELD(p, cfg, f, type)                                         \
  ((type *)((char *)((f)->flags & FIELD_CONFIG ? (void *)(cfg) : (void *)(p))  \
            + (f)->offset))

/* The profile's fields in the saved form (policy.json's "profile", a
 * record no verb reads back): one table (profile_fields.c), which `profile
 * show` and the audit line use too. */
struct json_writer;
void profile_write_saved (struct json_writer *w, const struct profile *p);
/* The member at a key with at most one dot ("limits.pids"), or NULL. */
const struct json_node *profile_json_member (const struct json_node *o,
                                             const char *key);

/* cfg, or the built-in configuration where it is NULL. */
const struct operator_config *
operator_config_or_builtin (const struct operator_config *cfg);

#define cleanup_operator_config                                                \
  __attribute__ ((cleanup (operator_config_freep)))
static inline void
operator_config_freep (struct operator_config **c)
{
  operator_config_free (*c);
}

#define cleanup_profile __attribute__ ((cleanup (profile_freep)))
static inline void
profile_freep (struct profile **p)
{
  profile_free (*p);
}

#endif
