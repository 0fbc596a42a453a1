/* The profiles' built-in values and the operator config that adjusts them
 * (/etc/moat/config.json, or --config FILE). The operator is trusted: its
 * limits may be higher than the defaults. Annotations (the pod author) can
 * only tighten, see profile_resources.c. The G2 metadata ranges cannot be
 * removed by anyone. Keys starting with "//" are comments (JSON has none),
 * so that contrib/moat-config.example.json documents itself and loads. */
#include "profile.h"
#include "profile_internal.h"
#include "../lib/util.h"
#include "../oci/json.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>

#define DEFAULT_CONFIG_PATH "/etc/moat/config.json"
#define CONFIG_MAX_SIZE (1024 * 1024)
#define MIB (UINT64_C (1) << 20)
#define GIB (UINT64_C (1) << 30)
/* G12: well above /etc/subuid ranges (100000 + 65536 per user) and real
 * users; 16384 blocks end at 0x7fffffff, clear of signed-int confusion. */
#define USERNS_DEFAULT_FIRST 0x40000000u
#define USERNS_DEFAULT_BLOCKS 16384u
#define USERNS_DEFAULT_POOL_DIR "/run/moat-idpool"

const char *const profile_default_credential_env[] = {
  "*_TOKEN",
  "*_TOKEN_*",
  "*_SECRET",
  "*_SECRET_*",
  "*SECRET_KEY*",
  "*PASSWORD*",
  "*PASSWD*",
  "*_API_KEY",
  "*_APIKEY",
  "*_ACCESS_KEY*",
  "*_PRIVATE_KEY*",
  "AWS_*",
  "AZURE_CLIENT_SECRET",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "GH_TOKEN",
  "GITHUB_TOKEN",
  "NPM_TOKEN",
  NULL,
};

static const char *const profile_names[] = { "strict", "egress", NULL };
/* By enum profile_landlock. */
static const char *const landlock_modes[] = { "auto", "require", "off", NULL };

const char *
profile_landlock_name (enum profile_landlock mode)
{
  return landlock_modes[mode];
}

static const char *const top_keys[] = { "profile",
                                        "audit_log",
                                        "audit_read_verbs",
                                        "image_cache",
                                        "image_max_bytes",
                                        "image_max_entries",
                                        "image_cache_max_bytes",
                                        "limits",
                                        "credential_env",
                                        "credential_env_extra",
                                        "egress_deny",
                                        "egress_allow",
                                        "egress_allow_private",
                                        "writable_bind_trees",
                                        "noexec_volumes",
                                        "engine_roots",
                                        "profiles",
                                        "userns",
                                        "seccomp_agents",
                                        "landlock",
                                        "seccomp",
                                        NULL };
static const char *const per_profile_keys[] = { "limits",
                                                "credential_env",
                                                "credential_env_extra",
                                                "egress_deny",
                                                "egress_allow",
                                                "egress_allow_private",
                                                "writable_bind_trees",
                                                "noexec_volumes",
                                                "engine_roots",
                                                NULL };
static const char *const limit_keys[]
    = { "pids", "memory", "cpus", "cpu_period", "tmpfs_size", "nofile", NULL };

/* ---- lifetime ---- */

void
profile_free (struct profile *p)
{
  if (p == NULL)
    return;
  free (p->name);
  strv_free (p->credential_env);
  profile_network_free (p);
  free (p);
}

void
operator_config_free (struct operator_config *c)
{
  if (c == NULL)
    return;
  free (c->audit_log);
  free (c->image_cache);
  strv_free (c->writable_bind_trees);
  strv_free (c->seccomp_agents);
  for (int k = 0; k < ENGINE__N; k++)
    strv_free (c->engine_roots[k]);
  free (c->caller_volume);
  free (c->userns_pool_dir);
  free (c);
}

struct operator_config *
operator_config_dup (const struct operator_config *c)
{
  struct operator_config *d = xmalloc (sizeof (*d));

  *d = *c;
  d->audit_log = xstrdup (c->audit_log);
  d->image_cache = xstrdup (c->image_cache);
  d->writable_bind_trees = strv_dup (c->writable_bind_trees);
  d->seccomp_agents = strv_dup (c->seccomp_agents);
  for (int k = 0; k < ENGINE__N; k++)
    d->engine_roots[k] = strv_dup (c->engine_roots[k]);
  d->caller_volume = c->caller_volume ? xstrdup (c->caller_volume) : NULL;
  d->userns_pool_dir = xstrdup (c->userns_pool_dir);
  return d;
}

/* The configuration with no operator config (string literals: never
 * freed). */
static const struct operator_config builtin_config = {
  .audit_log = (char *)"/var/log/moat/audit.jsonl",
  .image_cache = (char *)"/var/lib/moat/images",
  /* The largest images in common use (CUDA, PyTorch) unpack to 10-12 GB
   * in about 100,000 files. */
  .image_max_bytes = 16 * GIB,
  .image_max_entries = 1000000,
  .image_cache_max_bytes = 64 * GIB,
  .userns_first = USERNS_DEFAULT_FIRST,
  .userns_blocks = USERNS_DEFAULT_BLOCKS,
  .userns_pool_dir = (char *)USERNS_DEFAULT_POOL_DIR,
};

const struct operator_config *
operator_config_or_builtin (const struct operator_config *cfg)
{
  return cfg ? cfg : &builtin_config;
}

struct profile *
profile_dup (const struct profile *p)
{
  struct profile *d = xmalloc (sizeof (*d));

  *d = *p;
  d->name = xstrdup (p->name);
  d->credential_env = strv_dup (p->credential_env);
  profile_network_dup (d, p);
  return d;
}

struct profile *
profile_dup_borrowing_lists (const struct profile *p)
{
  struct profile *d = xmalloc (sizeof (*d));

  *d = *p;
  d->name = xstrdup (p->name);
  d->credential_env = strv_dup (p->credential_env);
  d->lists_borrowed = true;
  return d;
}

static bool
is_known_profile (const char *name)
{
  for (size_t i = 0; profile_names[i]; i++)
    if (strcmp (profile_names[i], name) == 0)
      return true;
  return false;
}

int
profile_init_default (struct profile *p, const char *name,
                      struct moat_error **err)
{
  if (!is_known_profile (name))
    return moat_fail (err, 0, "unknown profile %s (known: strict, egress)",
                      name);
  *p = (struct profile){
    .name = xstrdup (name),
    .egress = strcmp (name, "egress") == 0,
    .pids_limit = 64,
    .memory_limit = 512 * MIB,
    .cpu_quota = 100000,
    .cpu_period = 100000,
    .tmpfs_size = 64 * MIB,
    .nofile = 1024,
    .credential_env = strv_dup ((char *const *)profile_default_credential_env),
    .userns = true,
  };
  return profile_network_init (p, err);
}

/* ---- operator config ---- */

static int
check_keys (const json_node *obj, const char *const *known, const char *prefix,
            struct moat_error **err)
{
  if (!json_is_object (obj))
    return moat_fail (err, 0, "%s: expected an object",
                      *prefix ? prefix : "top level");
  for (size_t i = 0; i < json_object_len (obj); i++)
    {
      const char *key = json_object_key (obj, i);
      bool found = strncmp (key, "//", 2) == 0; /* a comment */
      for (size_t k = 0; known[k] && !found; k++)
        found = strcmp (known[k], key) == 0;
      if (!found)
        return moat_fail (err, 0, "%s%s%s: unknown key", prefix,
                          *prefix ? "." : "", key);
    }
  return 0;
}

static int
get_positive (const json_node *v, const char *path, uint64_t max, uint64_t *ret,
              struct moat_error **err)
{
  uint64_t n;

  if (!json_is_integer (v) || json_uint64 (v, &n) < 0 || n == 0 || n > max)
    return moat_fail (err, 0, "%s: expected an integer from 1 to %" PRIu64,
                      path, max);
  *ret = n;
  return 0;
}

/* Bytes as an integer, or a string with a unit ("512M"). */
static int
get_size (const json_node *v, const char *path, uint64_t *ret,
          struct moat_error **err)
{
  uint64_t n = 0;
  int r = -EINVAL;

  if (json_is_integer (v))
    r = json_uint64 (v, &n);
  else if (json_is_string (v))
    r = parse_byte_size (json_string (v), &n);
  if (r < 0 || n == 0 || n > INT64_MAX)
    return moat_fail (err, 0,
                      "%s: expected a size in bytes or with a unit "
                      "(\"512M\", \"1G\")",
                      path);
  *ret = n;
  return 0;
}

/* A CPU count: an integer, or a string for fractions ("1.5"). */
static int
get_cpus (const json_node *v, const char *path, uint64_t *ret_millis,
          struct moat_error **err)
{
  uint64_t n = 0;
  int r = -EINVAL;

  if (json_is_integer (v))
    {
      r = json_uint64 (v, &n);
      if (r == 0 && n > UINT64_MAX / 1000)
        r = -ERANGE;
      n *= 1000;
    }
  else if (json_is_string (v))
    r = profile_parse_millis (json_string (v), &n);
  if (r < 0 || n == 0 || n > 1024 * 1000)
    return moat_fail (err, 0,
                      "%s: expected a CPU count (1, 2, or a string like "
                      "\"0.5\"), at most 1024",
                      path);
  *ret_millis = n;
  return 0;
}

static int
apply_limits (const json_node *obj, const char *prefix, struct profile *p,
              struct moat_error **err)
{
  cleanup_free char *lp = xasprintf ("%s%slimits", prefix, *prefix ? "." : "");
  const json_node *v;
  uint64_t n;

  if (check_keys (obj, limit_keys, lp, err) < 0)
    return -1;
  if ((v = json_get (obj, "cpu_period")))
    {
      cleanup_free char *path = xasprintf ("%s.cpu_period", lp);
      uint64_t old = p->cpu_period;
      if (get_positive (v, path, 1000000, &n, err) < 0)
        return -1;
      if (n < 1000)
        return moat_fail (err, 0, "%s: expected 1000 to 1000000 (us)", path);
      /* same CPU count at the new period */
      p->cpu_period = n;
      p->cpu_quota = (int64_t)((unsigned __int128)p->cpu_quota * n / old);
    }
  if ((v = json_get (obj, "cpus")))
    {
      cleanup_free char *path = xasprintf ("%s.cpus", lp);
      if (get_cpus (v, path, &n, err) < 0)
        return -1;
      p->cpu_quota = (int64_t)(n * p->cpu_period / 1000);
    }
  if (p->cpu_quota < 1000)
    return moat_fail (err, 0, "%s: CPU quota under 1 ms per period", lp);
  return 0;
}

static int
get_string_list (const json_node *v, const char *path, char ***ret,
                 struct moat_error **err)
{
  cleanup_strv char **list = xcalloc (1, sizeof (char *));

  if (!json_is_array (v))
    return moat_fail (err, 0, "%s: expected an array of strings", path);
  for (size_t i = 0; i < json_array_len (v); i++)
    {
      const json_node *s = json_array_get (v, i);
      if (!json_is_string (s) || json_string (s)[0] == '\0')
        return moat_fail (err, 0, "%s[%zu]: expected a non-empty string", path,
                          i);
      strv_append (&list, json_string (s));
    }
  *ret = steal_pointer (&list);
  return 0;
}

/* Absolute paths of host trees, normalized; "/" would name every host
 * path: list the trees. */
static int
add_trees (const json_node *v, const char *path, char ***trees,
           struct moat_error **err)
{
  cleanup_strv char **list = NULL;

  if (get_string_list (v, path, &list, err) < 0)
    return -1;
  for (size_t i = 0; list[i]; i++)
    {
      cleanup_free char *norm = profile_path_normalize (list[i]);
      if (list[i][0] != '/' || strcmp (norm, "/") == 0)
        return moat_fail (
            err, 0, "%s[%zu]: expected an absolute path other than /", path, i);
      strv_append (trees, norm);
    }
  return 0;
}

/* One value of the field table (profile_fields.c) from the operator
 * config, at path. */
static int
apply_field (const json_node *v, const struct field *f, const char *path,
             struct profile *p, struct operator_config *cfg,
             struct moat_error **err)
{
  uint64_t n = 0;

  switch (f->config)
    {
    case C_COUNT:
    case C_SIZE:
      if ((f->config == C_COUNT ? get_positive (v, path, f->max, &n, err)
                                : get_size (v, path, &n, err))
          < 0)
        return -1;
      if (f->type == F_INT)
        *PROFILE_FIELD (p, cfg, f, int64_t) = (int64_t)n;
      else
        *PROFILE_FIELD (p, cfg, f, uint64_t) = n;
      return 0;
    case C_BOOL:
      if (!json_is_bool (v))
        return moat_fail (err, 0, "%s: expected true or false", path);
      *PROFILE_FIELD (p, cfg, f, bool) = json_bool (v);
      return 0;
    case C_LIST:
      {
        char **list;
        if (get_string_list (v, path, &list, err) < 0)
          return -1;
        strv_free (*PROFILE_FIELD (p, cfg, f, char **));
        *PROFILE_FIELD (p, cfg, f, char **) = list;
        return 0;
      }
    case C_TREES:
      return add_trees (v, path, PROFILE_FIELD (p, cfg, f, char **), err);
    case C_PATH:
      if (!json_is_string (v) || json_string (v)[0] != '/')
        return moat_fail (err, 0, "%s: expected an absolute path", path);
      free (*PROFILE_FIELD (p, cfg, f, char *));
      *PROFILE_FIELD (p, cfg, f, char *) = xstrdup (json_string (v));
      return 0;
    case C_NONE:
      break;
    }
  return 0;
}

/* The fields the table says the operator config sets: the machine-wide
 * ones (top level only) or a profile's (top level or profiles.NAME). */
static int
apply_fields (const json_node *obj, const char *prefix, bool machine,
              struct profile *p, struct operator_config *cfg,
              struct moat_error **err)
{
  for (size_t i = 0; i < profile_n_fields; i++)
    {
      const struct field *f = &profile_fields[i];
      const json_node *v;
      cleanup_free char *path = NULL;

      if (f->config == C_NONE || !(f->flags & FIELD_MACHINE) != !machine
          || (v = profile_json_member (obj, f->show)) == NULL)
        continue;
      path = xasprintf ("%s%s%s", prefix, *prefix ? "." : "", f->show);
      if (apply_field (v, f, path, p, cfg, err) < 0)
        return -1;
    }
  return 0;
}

/* The settings a profile can take, at the top level (for every profile)
 * or under profiles.NAME. */
static int
apply_settings (const json_node *obj, const char *prefix, struct profile *p,
                struct operator_config *cfg, struct moat_error **err)
{
  const char *dot = *prefix ? "." : "";
  const json_node *v;

  if ((v = json_get (obj, "limits")) && apply_limits (v, prefix, p, err) < 0)
    return -1;
  if ((v = json_get (obj, "engine_roots")))
    {
      cleanup_free char *path = xasprintf ("%s%sengine_roots", prefix, dot);
      if (check_keys (v, profile_engine_names, path, err) < 0)
        return -1;
    }
  if (apply_fields (obj, prefix, false, p, cfg, err) < 0)
    return -1;
  if ((v = json_get (obj, "credential_env_extra")))
    {
      cleanup_free char *path
          = xasprintf ("%s%scredential_env_extra", prefix, dot);
      cleanup_strv char **list = NULL;
      if (get_string_list (v, path, &list, err) < 0)
        return -1;
      for (size_t i = 0; list[i]; i++)
        strv_append (&p->credential_env, list[i]);
    }
  return 0;
}

/* The index of a profile name in profile_names, -1 if unknown. */
static int
pick (const char *name)
{
  for (int i = 0; profile_names[i]; i++)
    if (strcmp (profile_names[i], name) == 0)
      return i;
  return -1;
}

/* G12, machine-wide (one pool for every profile): "userns": {"enabled",
 * "first_id", "blocks", "pool_dir"}. The pool must stay clear of host id 0
 * and of the ids -1 and 65534 (overflow) that mean "nobody". */
static int
apply_userns (const json_node *obj, struct profile *p,
              struct operator_config *cfg, struct moat_error **err)
{
  static const char *const keys[]
      = { "enabled", "first_id", "blocks", "pool_dir", NULL };
  const json_node *v;
  uint64_t n;

  if (check_keys (obj, keys, "userns", err) < 0)
    return -1;
  if ((v = json_get (obj, "enabled")))
    {
      if (!json_is_bool (v))
        return moat_fail (err, 0, "userns.enabled: expected true or false");
      p->userns = json_bool (v);
    }
  if ((v = json_get (obj, "first_id")))
    {
      if (get_positive (v, "userns.first_id", UINT32_MAX, &n, err) < 0)
        return -1;
      if (n < 65536 || n % 65536 != 0)
        return moat_fail (err, 0,
                          "userns.first_id: expected a multiple of 65536, "
                          "at least 65536");
      cfg->userns_first = (uint32_t)n;
    }
  if ((v = json_get (obj, "blocks"))
      && get_positive (v, "userns.blocks", 65535, &n, err) < 0)
    return -1;
  else if (v)
    cfg->userns_blocks = (uint32_t)n;
  if ((uint64_t)cfg->userns_first
          + (uint64_t)cfg->userns_blocks * PROFILE_USERNS_BLOCK
      > 0xffff0000ull)
    return moat_fail (err, 0,
                      "userns: first_id + blocks * 65536 reaches past "
                      "4294901760 (the ids -1 and 65534 mean nobody)");
  if ((v = json_get (obj, "pool_dir")))
    {
      if (!json_is_string (v) || json_string (v)[0] != '/')
        return moat_fail (err, 0, "userns.pool_dir: expected an absolute path");
      free (cfg->userns_pool_dir);
      cfg->userns_pool_dir = xstrdup (json_string (v));
    }
  return 0;
}

/* Fills profiles[] (indexed like profile_names) and *default_name. The
 * lists of each scope are read from root, unless lists_read (the cache's,
 * root then being the config without them). */
static int
apply_config (const json_node *root, struct profile *const *profiles,
              struct operator_config *const *configs, char **default_name,
              struct profile_network_lists *lists, bool lists_read,
              struct moat_error **err)
{
  const json_node *v;

  if (check_keys (root, top_keys, "", err) < 0)
    return -1;
  if (!lists_read
      && profile_network_read_scopes (root, profile_names, lists, err) < 0)
    return -1;
  if ((v = json_get (root, "profile")))
    {
      if (!json_is_string (v))
        return moat_fail (err, 0, "profile: expected a string");
      if (!is_known_profile (json_string (v)))
        return moat_fail (err, 0,
                          "profile: unknown profile %s (known: strict, egress)",
                          json_string (v));
      free (*default_name);
      *default_name = xstrdup (json_string (v));
    }
  /* The machine-wide keys (the audit log, the seccomp agents' sockets),
   * then the settings, for every profile. */
  for (size_t i = 0; profile_names[i]; i++)
    if (apply_fields (root, "", true, profiles[i], configs[i], err) < 0
        || apply_settings (root, "", profiles[i], configs[i], err) < 0)
      return -1;
  if ((v = json_get (root, "landlock")))
    {
      size_t m = 0;
      while (landlock_modes[m]
             && !(json_is_string (v)
                  && strcmp (json_string (v), landlock_modes[m]) == 0))
        m++;
      if (landlock_modes[m] == NULL)
        return moat_fail (
            err, 0, "landlock: expected \"auto\", \"require\" or \"off\"");
      for (size_t i = 0; profile_names[i]; i++)
        configs[i]->landlock = (enum profile_landlock)m;
    }
  if ((v = json_get (root, "seccomp")))
    {
      bool agent = json_is_string (v) && strcmp (json_string (v), "agent") == 0;
      if (!agent
          && !(json_is_string (v) && strcmp (json_string (v), "default") == 0))
        return moat_fail (err, 0, "seccomp: expected \"default\" or \"agent\"");
      for (size_t i = 0; profile_names[i]; i++)
        profiles[i]->seccomp_agent = agent;
    }
  if ((v = json_get (root, "userns")))
    for (size_t i = 0; profile_names[i]; i++)
      if (apply_userns (v, profiles[i], configs[i], err) < 0)
        return -1;
  if ((v = json_get (root, "profiles")))
    {
      unsigned seen = 0;
      if (!json_is_object (v))
        return moat_fail (err, 0, "profiles: expected an object");
      for (size_t i = 0; i < json_object_len (v); i++)
        {
          const char *name = json_object_key (v, i);
          const json_node *settings = json_object_value (v, i);
          cleanup_free char *prefix = xasprintf ("profiles.%s", name);
          int k = pick (name);

          if (strncmp (name, "//", 2) == 0)
            continue;
          if (k < 0)
            return moat_fail (err, 0,
                              "%s: unknown profile %s (known: strict, egress)",
                              prefix, name);
          /* A second object under one name would have its lists read
           * over the first's: refused, not merged or dropped. */
          if (seen & (1u << k))
            return moat_fail (err, 0, "%s: given twice", prefix);
          seen |= 1u << k;
          if (check_keys (settings, per_profile_keys, prefix, err) < 0
              || apply_settings (settings, prefix, profiles[k], configs[k], err)
                     < 0)
            return -1;
        }
    }
  return profile_network_check_scopes (profiles, profile_names, lists, err);
}

/* The config's text applied: from the cache's entry for it where there
 * is one to trust (cache_dir non-NULL), else parsed whole, and (with
 * store) the cache filled for the next verb. The lists go to the profile
 * picked (NAME, else the config's default) alone, with want_lists. */
static int
apply_text (const char *path, int fd, const char *cache_dir, bool store,
            bool want_lists, const char *name, struct profile *const *profiles,
            struct operator_config *const *configs, char **default_name,
            struct moat_error **err)
{
  struct profile_network_lists lists[PROFILE_CONFIG_SCOPES] = { 0 };
  cleanup_free char *reduced = NULL, *text = NULL;
  size_t reduced_len = 0, len = 0;
  bool cached = cache_dir
                && profile_config_cache_load (cache_dir, path, fd, want_lists,
                                              &reduced, &reduced_len, lists)
                       == 0;
  json_node *root = NULL;
  int r = cached ? 0 : read_fd_all (fd, CONFIG_MAX_SIZE, &text, &len);
  int k;

  if (r < 0)
    return moat_fail (err, -r, "reading operator config %s", path);
  r = cached ? json_parse (reduced, reduced_len, CONFIG_MAX_SIZE, &root, err)
             : json_parse (text, len, CONFIG_MAX_SIZE, &root, err);
  if (r == 0)
    r = apply_config (root, profiles, configs, default_name, lists, cached,
                      err);
  if (r == 0 && cache_dir && store && !cached)
    {
      profile_network_scope_digests (profiles, lists);
      profile_config_cache_store (cache_dir, path, text, len, root, lists);
    }
  k = pick (name ? name : *default_name);
  if (r == 0 && want_lists && k >= 0)
    r = profile_network_take_scopes (profiles[k], profile_names[k], lists,
                                     1 + k, err);
  json_free (root);
  profile_network_scopes_free (lists);
  return r < 0 ? moat_error_wrap (err, "%s", path) : 0;
}

/* read_config false: the built-in profiles only. cache_dir: the cache is
 * read, and filled where fill_cache. */
static int
load (const char *config_path, const char *cache_dir, bool fill_cache,
      bool read_config, bool want_lists, const char *name, struct profile **ret,
      struct operator_config **ret_config, struct moat_error **err)
{
  const char *path = config_path ? config_path : DEFAULT_CONFIG_PATH;
  cleanup_profile struct profile *strict = xcalloc (1, sizeof (*strict));
  cleanup_profile struct profile *egress = xcalloc (1, sizeof (*egress));
  cleanup_operator_config struct operator_config *strict_config
      = operator_config_dup (&builtin_config);
  cleanup_operator_config struct operator_config *egress_config
      = operator_config_dup (&builtin_config);
  struct profile *profiles[] = { strict, egress };
  struct operator_config *configs[] = { strict_config, egress_config };
  cleanup_free char *default_name = xstrdup ("strict");
  cleanup_close int fd = -1;
  int k;

  if (profile_init_default (strict, "strict", err) < 0
      || profile_init_default (egress, "egress", err) < 0)
    return -1;
  if (read_config)
    fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (read_config && fd < 0 && !(errno == ENOENT && config_path == NULL))
    return moat_fail (err, errno, "reading operator config %s", path);
  if (fd >= 0
      && apply_text (path, fd, cache_dir, fill_cache, want_lists, name,
                     profiles, configs, &default_name, err)
             < 0)
    return -1;
  if (name == NULL)
    name = default_name;
  k = pick (name);
  if (k < 0)
    return moat_fail (err, 0, "unknown profile %s (known: strict, egress)",
                      name);
  *ret = k == 0 ? steal_pointer (&strict) : steal_pointer (&egress);
  if (ret_config)
    *ret_config = k == 0 ? steal_pointer (&strict_config)
                         : steal_pointer (&egress_config);
  return 0;
}

int
profile_load (const char *config_path, const char *name, struct profile **ret,
              struct operator_config **ret_config, struct moat_error **err)
{
  return load (config_path, NULL, false, true, true, name, ret, ret_config,
               err);
}

int
profile_load_cached (const char *config_path, const char *cache_dir,
                     const char *name, struct profile **ret,
                     struct operator_config **ret_config,
                     struct moat_error **err)
{
  /* The verbs that judge (create first) fill the cache. */
  return load (config_path, cache_dir, true, true, true, name, ret, ret_config,
               err);
}

int
profile_load_builtin (const char *name, struct profile **ret,
                      struct operator_config **ret_config,
                      struct moat_error **err)
{
  return load (NULL, NULL, false, false, true, name, ret, ret_config, err);
}

/* The configuration alone: the profile's values are built to read the
 * config (its per-profile settings share one pass) and dropped. */
static int
load_config_only (const char *config_path, const char *cache_dir,
                  bool read_config, const char *name,
                  struct operator_config **ret, const char **ret_name,
                  struct moat_error **err)
{
  cleanup_profile struct profile *p = NULL;
  int r = load (config_path, cache_dir, false, read_config, false, name, &p,
                ret, err);

  if (r == 0 && ret_name)
    *ret_name = profile_names[pick (p->name)];
  return r;
}

int
operator_config_load (const char *config_path, const char *name,
                      struct operator_config **ret, const char **ret_name,
                      struct moat_error **err)
{
  return load_config_only (config_path, NULL, true, name, ret, ret_name, err);
}

int
operator_config_load_cached (const char *config_path, const char *cache_dir,
                             const char *name, struct operator_config **ret,
                             const char **ret_name, struct moat_error **err)
{
  return load_config_only (config_path, cache_dir, true, name, ret, ret_name,
                           err);
}

int
operator_config_load_builtin (const char *name, struct operator_config **ret,
                              const char **ret_name, struct moat_error **err)
{
  return load_config_only (NULL, NULL, false, name, ret, ret_name, err);
}
