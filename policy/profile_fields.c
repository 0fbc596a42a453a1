/* The fields of struct profile, once: the operator config sets them
 * (profile_config.c's apply_fields, for those with a config kind), `moat
 * profile show`, the saved form (policy.json's "profile") and create's
 * audit line ("effective", the FIELD_AUDIT ones) are written from this
 * table, and the saved form read back from it; so a new field is one line
 * here. A dotted key ("limits.pids") is a member of a nested
 * object; the fields of one object are listed together. What the table
 * cannot say is by hand: the CPU count and period (one value two ways),
 * credential_env_extra, the user namespace pool's checks, the network
 * lists (profile_network.c). */
#include "profile.h"
#include "profile_internal.h"
#include "../lib/util.h"
#include "../oci/json.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

static void
show_zero (struct json_writer *w, const struct profile *p,
           const struct show_ctx *ctx)
{
  jw_int (w, 0);
}

/* The CPU count as an operator writes it ("1.000"). */
static void
show_cpus (struct json_writer *w, const struct profile *p,
           const struct show_ctx *ctx)
{
  cleanup_free char *cpus = xasprintf (
      "%" PRIu64 ".%03" PRIu64, (uint64_t)p->cpu_quota / p->cpu_period,
      (uint64_t)p->cpu_quota % p->cpu_period * 1000 / p->cpu_period);
  jw_string (w, cpus);
}

static void
show_network (struct json_writer *w, const struct profile *p,
              const struct show_ctx *ctx)
{
  profile_network_json (w, p, ctx->dns, ctx->n_dns, ctx->with_dns,
                        ctx->bounded_lists);
}

static void
show_list (struct json_writer *w, const char *const *v)
{
  jw_array_begin (w);
  for (size_t i = 0; v[i]; i++)
    jw_string (w, v[i]);
  jw_array_end (w);
}

static void
show_masked (struct json_writer *w, const struct profile *p,
             const struct show_ctx *ctx)
{
  show_list (w, profile_masked_paths);
}

static void
show_readonly (struct json_writer *w, const struct profile *p,
               const struct show_ctx *ctx)
{
  show_list (w, profile_readonly_paths);
}

static void
show_sysctls (struct json_writer *w, const struct profile *p,
              const struct show_ctx *ctx)
{
  show_list (w, profile_allowed_sysctls);
}

static void
show_devices (struct json_writer *w, const struct profile *p,
              const struct show_ctx *ctx)
{
  jw_array_begin (w);
  for (size_t i = 0; i < n_safe_devices; i++)
    if (safe_devices[i].node)
      jw_string (w, safe_devices[i].name);
  jw_array_end (w);
}

static void
show_block_size (struct json_writer *w, const struct profile *p,
                 const struct show_ctx *ctx)
{
  jw_uint (w, PROFILE_USERNS_BLOCK);
}

static void
show_landlock (struct json_writer *w, const struct profile *p,
               const struct show_ctx *ctx)
{
  jw_string (w, profile_landlock_name (ctx->config->landlock));
}

static void
show_seccomp (struct json_writer *w, const struct profile *p,
              const struct show_ctx *ctx)
{
  jw_string (w, p->seccomp_agent ? "agent" : "default");
}

#define AT(member) offsetof (struct profile, member)
#define CONF(member) offsetof (struct operator_config, member)
#define ENGINE(k, name)                                                        \
  {                                                                            \
    NULL, "engine_roots." name, F_STRV,                                        \
        CONF (engine_roots) + (k) * sizeof (char **), 0, NULL, C_TREES, 0,     \
        FIELD_CONFIG                                                           \
  }

const struct field profile_fields[] = {
  { "name", "name", F_STR, AT (name), 0, NULL, C_NONE, 0, 0 },
  { "egress", "egress", F_BOOL, AT (egress), 0, NULL, C_NONE, 0, FIELD_AUDIT },
  { "pids_limit", "limits.pids", F_INT, AT (pids_limit), 1, NULL, C_COUNT,
    4194304, FIELD_AUDIT },
  { "memory_limit", "limits.memory", F_INT, AT (memory_limit), 1, NULL, C_SIZE,
    0, FIELD_AUDIT },
  { NULL, "limits.swap", F_SHOW, 0, 0, show_zero, C_NONE, 0, FIELD_AUDIT },
  { NULL, "limits.cpus", F_SHOW, 0, 0, show_cpus, C_NONE, 0, FIELD_AUDIT },
  { "cpu_quota", "limits.cpu_quota", F_INT, AT (cpu_quota), 1000, NULL, C_NONE,
    0, FIELD_AUDIT },
  { "cpu_period", "limits.cpu_period", F_UINT, AT (cpu_period), 1000, NULL,
    C_NONE, 0, FIELD_AUDIT },
  { "tmpfs_size", "limits.tmpfs_size", F_UINT, AT (tmpfs_size), 1, NULL, C_SIZE,
    0, FIELD_AUDIT },
  { "nofile", "limits.nofile", F_UINT, AT (nofile), 1, NULL, C_COUNT, 1 << 30,
    FIELD_AUDIT },
  { NULL, "limits.core", F_SHOW, 0, 0, show_zero, C_NONE, 0, FIELD_AUDIT },
  { NULL, "network", F_SHOW, 0, 0, show_network, C_NONE, 0, FIELD_AUDIT },
  { "credential_env", "credential_env", F_STRV, AT (credential_env), 0, NULL,
    C_LIST, 0, 0 },
  /* The metadata ranges (G2) included. */
  { "deny", "deny", F_DENY, AT (deny), 0, NULL, C_NONE, 0, 0 },
  /* egress: an allowlist, or the private networks opened (egress_allow,
   * egress_allow_private, narrowed by run.moat.egress-allow). */
  { "allowlist", NULL, F_BOOL, AT (allowlist), 0, NULL, C_NONE, 0, 0 },
  { "allow", NULL, F_ALLOW, AT (allow), 0, NULL, C_NONE, 0, 0 },
  { NULL, "masked_paths", F_SHOW, 0, 0, show_masked, C_NONE, 0, 0 },
  { NULL, "readonly_paths", F_SHOW, 0, 0, show_readonly, C_NONE, 0, 0 },
  { NULL, "allowed_sysctls", F_SHOW, 0, 0, show_sysctls, C_NONE, 0, 0 },
  { NULL, "allowed_devices", F_SHOW, 0, 0, show_devices, C_NONE, 0, 0 },
  { NULL, "writable_bind_trees", F_STRV, CONF (writable_bind_trees), 0, NULL,
    C_TREES, 0, FIELD_CONFIG },
  { NULL, "noexec_volumes", F_BOOL, CONF (noexec_volumes), 0, NULL, C_BOOL, 0,
    FIELD_AUDIT | FIELD_CONFIG },
  ENGINE (ENGINE_DOCKER, "docker"),
  ENGINE (ENGINE_PODMAN, "podman"),
  ENGINE (ENGINE_CONTAINERD, "containerd"),
  ENGINE (ENGINE_KUBELET, "kubelet"),
  { NULL, "audit_log", F_STR, CONF (audit_log), 0, NULL, C_PATH, 0,
    FIELD_MACHINE | FIELD_CONFIG },
  { NULL, "image_cache", F_STR, CONF (image_cache), 0, NULL, C_PATH, 0,
    FIELD_MACHINE | FIELD_CONFIG },
  { NULL, "image_max_bytes", F_UINT, CONF (image_max_bytes), 1, NULL, C_SIZE, 0,
    FIELD_MACHINE | FIELD_CONFIG },
  { NULL, "image_max_entries", F_UINT, CONF (image_max_entries), 1, NULL,
    C_COUNT, UINT64_C (1) << 32, FIELD_MACHINE | FIELD_CONFIG },
  { NULL, "image_cache_max_bytes", F_UINT, CONF (image_cache_max_bytes), 1,
    NULL, C_SIZE, 0, FIELD_MACHINE | FIELD_CONFIG },
  { NULL, "audit_read_verbs", F_BOOL, CONF (audit_read_verbs), 0, NULL, C_BOOL,
    0, FIELD_MACHINE | FIELD_CONFIG },
  { NULL, "seccomp_agents", F_STRV, CONF (seccomp_agents), 0, NULL, C_TREES, 0,
    FIELD_MACHINE | FIELD_CONFIG },
  /* G14 and G8's level; create records both in the container's state. */
  { NULL, "landlock", F_SHOW, 0, 0, show_landlock, C_NONE, 0, FIELD_AUDIT },
  { NULL, "seccomp", F_SHOW, 0, 0, show_seccomp, C_NONE, 0, FIELD_AUDIT },
  /* G12 as create applied it, and the pool its block came from (delete
   * gives it back there). */
  { "userns", "userns.enabled", F_BOOL, AT (userns), 0, NULL, C_NONE, 0,
    FIELD_AUDIT },
  { NULL, "userns.first_id", F_U32, CONF (userns_first), 0, NULL, C_NONE, 0,
    FIELD_CONFIG },
  { NULL, "userns.blocks", F_U32, CONF (userns_blocks), 0, NULL, C_NONE, 0,
    FIELD_CONFIG },
  { NULL, "userns.block_size", F_SHOW, 0, 0, show_block_size, C_NONE, 0, 0 },
  { NULL, "userns.pool_dir", F_STR, CONF (userns_pool_dir), 0, NULL, C_NONE, 0,
    FIELD_CONFIG },
};
const size_t profile_n_fields
    = sizeof (profile_fields) / sizeof (profile_fields[0]);

/* The value of f: in p, or in ctx's configuration for a FIELD_CONFIG one. */
#define CFIELD(p, f, type)                                                     \
  ((type const *)((const char *)((f)->flags & FIELD_CONFIG                     \
                                     ? (const void *)ctx->config               \
                                     : (const void *)(p))                      \
                  + (f)->offset))

static void
write_value (struct json_writer *w, const struct field *f,
             const struct profile *p, const struct show_ctx *ctx)
{
  switch (f->type)
    {
    case F_BOOL:
      jw_bool (w, *CFIELD (p, f, bool));
      break;
    case F_INT:
      jw_int (w, *CFIELD (p, f, int64_t));
      break;
    case F_UINT:
      jw_uint (w, *CFIELD (p, f, uint64_t));
      break;
    case F_U32:
      jw_uint (w, *CFIELD (p, f, uint32_t));
      break;
    case F_STR:
      jw_string (w, *CFIELD (p, f, char *));
      break;
    case F_STRV:
      {
        char *const *v = *CFIELD (p, f, char **);
        jw_array_begin (w);
        for (size_t i = 0; v && v[i]; i++)
          jw_string (w, v[i]);
        jw_array_end (w);
      }
      break;
    case F_DENY:
    case F_ALLOW:
      {
        bool deny = f->type == F_DENY;
        const struct cidr *v = deny ? p->deny : p->allow;
        size_t n = deny ? p->n_deny : p->n_allow;
        if (ctx->joined_lists)
          {
            profile_write_joined_list (w, p, v, n);
            break;
          }
        jw_array_begin (w);
        for (size_t i = 0; i < n; i++)
          {
            cleanup_free char *text = cidr_to_string (&v[i]);
            jw_string (w, text);
          }
        jw_array_end (w);
      }
      break;
    case F_SHOW:
      f->show_fn (w, p, ctx);
      break;
    }
}

/* The object part of a dotted key ("limits" of "limits.pids"), its
 * length; 0 for a top-level key. */
static size_t
group_len (const char *key)
{
  const char *dot = strchr (key, '.');
  return dot ? (size_t)(dot - key) : 0;
}

/* The three forms the table writes. */
enum field_form
{
  FORM_SAVED, /* policy.json's "profile": saved keys */
  FORM_SHOW,  /* profile show: show keys */
  FORM_AUDIT, /* create's audit line: show keys of FIELD_AUDIT fields */
};

/* The key of f in form, NULL where it is not written. */
static const char *
form_key (const struct field *f, enum field_form form)
{
  switch (form)
    {
    case FORM_SAVED:
      return f->saved;
    case FORM_SHOW:
      return f->show;
    case FORM_AUDIT:
      return f->flags & FIELD_AUDIT ? f->show : NULL;
    }
  return NULL;
}

static void
write_fields (struct json_writer *w, const struct profile *p,
              enum field_form form, const struct show_ctx *ctx)
{
  const char *open = NULL; /* the nested object being written */
  size_t open_len = 0;

  jw_object_begin (w);
  for (size_t i = 0; i < profile_n_fields; i++)
    {
      const struct field *f = &profile_fields[i];
      const char *key = form_key (f, form);
      size_t g;

      if (key == NULL)
        continue;
      g = group_len (key);
      if (open && (g != open_len || strncmp (key, open, g) != 0))
        {
          jw_object_end (w);
          open = NULL;
        }
      if (g && open == NULL)
        {
          cleanup_free char *name = strndup (key, g);
          jw_key (w, name);
          jw_object_begin (w);
          open = key;
          open_len = g;
        }
      jw_key (w, key + (g ? g + 1 : 0));
      write_value (w, f, p, ctx);
    }
  if (open)
    jw_object_end (w);
  jw_object_end (w);
}

void
profile_write_saved (struct json_writer *w, const struct profile *p)
{
  static const struct show_ctx saved = { .joined_lists = true };
  write_fields (w, p, FORM_SAVED, &saved); /* no FIELD_CONFIG field */
}

int
profile_to_json (const struct profile *p, const struct operator_config *cfg,
                 char **ret, struct moat_error **err)
{
  struct show_ctx ctx = { .config = operator_config_or_builtin (cfg) };
  struct json_writer *w = json_writer_new (true);
  write_fields (w, p, FORM_SHOW, &ctx);
  *ret = json_writer_finish (w);
  return 0;
}

char *
profile_audit_json (const struct profile *p, const struct operator_config *cfg,
                    const struct cidr *dns, size_t n_dns)
{
  struct show_ctx ctx = { .dns = dns,
                          .n_dns = n_dns,
                          .with_dns = true,
                          .bounded_lists = true,
                          .config = operator_config_or_builtin (cfg) };
  struct json_writer *w = json_writer_new (false);
  write_fields (w, p, FORM_AUDIT, &ctx);
  return json_writer_finish (w);
}

/* ---- the members of a config object ---- */

const json_node *
profile_json_member (const json_node *o, const char *key)
{
  size_t g = group_len (key);
  cleanup_free char *name = NULL;

  if (g == 0)
    return json_get (o, key);
  name = strndup (key, g);
  o = json_get (o, name);
  return o && json_is_object (o) ? json_get (o, key + g + 1) : NULL;
}
