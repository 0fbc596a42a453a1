/* The fields of struct profile, once: the operator config sets them
 * (profile_config.c's apply_fields, for those with a config kind), `moat
 * profile show` and the saved form (policy.json's "profile") are written
 * from this table, and the saved form read back from it; so a new field is
 * one line here. A dotted key ("limits.pids") is a member of a nested
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
show_zero (struct json_writer *w, const struct profile *p)
{
  jw_int (w, 0);
}

/* The CPU count as an operator writes it ("1.000"). */
static void
show_cpus (struct json_writer *w, const struct profile *p)
{
  cleanup_free char *cpus = xasprintf (
      "%" PRIu64 ".%03" PRIu64, (uint64_t)p->cpu_quota / p->cpu_period,
      (uint64_t)p->cpu_quota % p->cpu_period * 1000 / p->cpu_period);
  jw_string (w, cpus);
}

static void
show_network (struct json_writer *w, const struct profile *p)
{
  profile_network_json (w, p, NULL, 0, false);
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
show_masked (struct json_writer *w, const struct profile *p)
{
  show_list (w, profile_masked_paths);
}

static void
show_readonly (struct json_writer *w, const struct profile *p)
{
  show_list (w, profile_readonly_paths);
}

static void
show_sysctls (struct json_writer *w, const struct profile *p)
{
  show_list (w, profile_allowed_sysctls);
}

static void
show_devices (struct json_writer *w, const struct profile *p)
{
  jw_array_begin (w);
  for (size_t i = 0; i < n_safe_devices; i++)
    if (safe_devices[i].node)
      jw_string (w, safe_devices[i].name);
  jw_array_end (w);
}

static void
show_block_size (struct json_writer *w, const struct profile *p)
{
  jw_uint (w, PROFILE_USERNS_BLOCK);
}

static void
show_landlock (struct json_writer *w, const struct profile *p)
{
  jw_string (w, profile_landlock_name (p->landlock));
}

static void
show_seccomp (struct json_writer *w, const struct profile *p)
{
  jw_string (w, p->seccomp_agent ? "agent" : "default");
}

#define AT(member) offsetof (struct profile, member)
#define ENGINE(k, name)                                                        \
  {                                                                            \
    "engine_roots." name, "engine_roots." name, F_STRV,                        \
        AT (engine_roots) + (k) * sizeof (char **), 0, NULL, C_TREES, 0, false \
  }

const struct field profile_fields[] = {
  { "name", "name", F_STR, AT (name), 0, NULL, C_NONE, 0, false },
  { "egress", "egress", F_BOOL, AT (egress), 0, NULL, C_NONE, 0, false },
  { "pids_limit", "limits.pids", F_INT, AT (pids_limit), 1, NULL, C_COUNT,
    4194304, false },
  { "memory_limit", "limits.memory", F_INT, AT (memory_limit), 1, NULL, C_SIZE,
    0, false },
  { NULL, "limits.swap", F_SHOW, 0, 0, show_zero, C_NONE, 0, false },
  { NULL, "limits.cpus", F_SHOW, 0, 0, show_cpus, C_NONE, 0, false },
  { "cpu_quota", "limits.cpu_quota", F_INT, AT (cpu_quota), 1000, NULL, C_NONE,
    0, false },
  { "cpu_period", "limits.cpu_period", F_UINT, AT (cpu_period), 1000, NULL,
    C_NONE, 0, false },
  { "tmpfs_size", "limits.tmpfs_size", F_UINT, AT (tmpfs_size), 1, NULL, C_SIZE,
    0, false },
  { "nofile", "limits.nofile", F_UINT, AT (nofile), 1, NULL, C_COUNT, 1 << 30,
    false },
  { NULL, "limits.core", F_SHOW, 0, 0, show_zero, C_NONE, 0, false },
  { NULL, "network", F_SHOW, 0, 0, show_network, C_NONE, 0, false },
  { "credential_env", "credential_env", F_STRV, AT (credential_env), 0, NULL,
    C_LIST, 0, false },
  /* The metadata ranges (G2) included. */
  { "deny", "deny", F_DENY, AT (deny), 0, NULL, C_NONE, 0, false },
  /* egress: an allowlist, or the private networks opened (egress_allow,
   * egress_allow_private, narrowed by run.moat.egress-allow). */
  { "allowlist", NULL, F_BOOL, AT (allowlist), 0, NULL, C_NONE, 0, false },
  { "allow", NULL, F_ALLOW, AT (allow), 0, NULL, C_NONE, 0, false },
  { NULL, "masked_paths", F_SHOW, 0, 0, show_masked, C_NONE, 0, false },
  { NULL, "readonly_paths", F_SHOW, 0, 0, show_readonly, C_NONE, 0, false },
  { NULL, "allowed_sysctls", F_SHOW, 0, 0, show_sysctls, C_NONE, 0, false },
  { NULL, "allowed_devices", F_SHOW, 0, 0, show_devices, C_NONE, 0, false },
  { "writable_bind_trees", "writable_bind_trees", F_STRV,
    AT (writable_bind_trees), 0, NULL, C_TREES, 0, false },
  { "noexec_volumes", "noexec_volumes", F_BOOL, AT (noexec_volumes), 0, NULL,
    C_BOOL, 0, false },
  ENGINE (ENGINE_DOCKER, "docker"),
  ENGINE (ENGINE_PODMAN, "podman"),
  ENGINE (ENGINE_CONTAINERD, "containerd"),
  ENGINE (ENGINE_KUBELET, "kubelet"),
  { "audit_log", "audit_log", F_STR, AT (audit_log), 0, NULL, C_PATH, 0, true },
  { "image_cache", "image_cache", F_STR, AT (image_cache), 0, NULL, C_PATH, 0,
    true },
  { "audit_read_verbs", "audit_read_verbs", F_BOOL, AT (audit_read_verbs), 0,
    NULL, C_BOOL, 0, true },
  { "seccomp_agents", "seccomp_agents", F_STRV, AT (seccomp_agents), 0, NULL,
    C_TREES, 0, true },
  /* G14 and G8's level; create records both in the container's state. */
  { NULL, "landlock", F_SHOW, 0, 0, show_landlock, C_NONE, 0, false },
  { NULL, "seccomp", F_SHOW, 0, 0, show_seccomp, C_NONE, 0, false },
  /* G12 as create applied it, and the pool its block came from (delete
   * gives it back there). */
  { "userns", "userns.enabled", F_BOOL, AT (userns), 0, NULL, C_NONE, 0,
    false },
  { "userns_first", "userns.first_id", F_U32, AT (userns_first), 0, NULL,
    C_NONE, 0, false },
  { "userns_blocks", "userns.blocks", F_U32, AT (userns_blocks), 0, NULL,
    C_NONE, 0, false },
  { NULL, "userns.block_size", F_SHOW, 0, 0, show_block_size, C_NONE, 0,
    false },
  { "userns_pool_dir", "userns.pool_dir", F_STR, AT (userns_pool_dir), 0, NULL,
    C_NONE, 0, false },
  { "caller_volume", NULL, F_OPT, AT (caller_volume), 0, NULL, C_NONE, 0,
    false },
};
const size_t profile_n_fields
    = sizeof (profile_fields) / sizeof (profile_fields[0]);

#define CFIELD(p, f, type) ((type const *)((const char *)(p) + (f)->offset))

static void
write_value (struct json_writer *w, const struct field *f,
             const struct profile *p)
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
    case F_OPT:
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
      f->show_fn (w, p);
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

static void
write_fields (struct json_writer *w, const struct profile *p, bool show)
{
  const char *open = NULL; /* the nested object being written */
  size_t open_len = 0;

  jw_object_begin (w);
  for (size_t i = 0; i < profile_n_fields; i++)
    {
      const struct field *f = &profile_fields[i];
      const char *key = show ? f->show : f->saved;
      size_t g;

      if (key == NULL || (f->type == F_OPT && *CFIELD (p, f, char *) == NULL))
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
      write_value (w, f, p);
    }
  if (open)
    jw_object_end (w);
  jw_object_end (w);
}

void
profile_write_saved (struct json_writer *w, const struct profile *p)
{
  write_fields (w, p, false);
}

int
profile_to_json (const struct profile *p, char **ret, struct moat_error **err)
{
  struct json_writer *w = json_writer_new (true);
  write_fields (w, p, true);
  *ret = json_writer_finish (w);
  return 0;
}

/* ---- the saved form read back ---- */

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

static int
read_cidrs (const json_node *v, const struct field *f, struct profile *p)
{
  bool deny = f->type == F_DENY;

  if (!json_is_array (v))
    return -1;
  for (size_t i = 0; i < json_array_len (v); i++)
    {
      const json_node *e = json_array_get (v, i);
      struct cidr c;
      struct cidr **list = deny ? &p->deny : &p->allow;
      size_t *n = deny ? &p->n_deny : &p->n_allow;
      bool dup = false;

      if (!json_is_string (e)
          || (deny ? cidr_parse (json_string (e), &c)
                   : cidr_port_parse (json_string (e), &c))
                 < 0)
        return -1;
      /* The built-in deny list (G2's metadata ranges) stays, even if the
       * saved list lost an entry. */
      for (size_t j = 0; deny && j < *n && !dup; j++)
        dup = (*list)[j].family == c.family && (*list)[j].prefix == c.prefix
              && memcmp ((*list)[j].addr, c.addr, sizeof (c.addr)) == 0;
      if (dup)
        continue;
      *list = xrealloc (*list, (*n + 1) * sizeof (c));
      (*list)[(*n)++] = c;
    }
  return 0;
}

static int
read_value (const json_node *v, const struct field *f, struct profile *p)
{
  int64_t n;

  switch (f->type)
    {
    case F_BOOL:
      if (!json_is_bool (v))
        return -1;
      *PROFILE_FIELD (p, f, bool) = json_bool (v);
      return 0;
    case F_INT:
    case F_UINT:
    case F_U32:
      if (json_int64 (v, &n) < 0 || n < f->min
          || (f->type == F_U32 && n > UINT32_MAX))
        return -1;
      if (f->type == F_INT)
        *PROFILE_FIELD (p, f, int64_t) = n;
      else if (f->type == F_UINT)
        *PROFILE_FIELD (p, f, uint64_t) = (uint64_t)n;
      else
        *PROFILE_FIELD (p, f, uint32_t) = (uint32_t)n;
      return 0;
    case F_STR:
    case F_OPT:
      if (!json_is_string (v))
        return -1;
      free (*PROFILE_FIELD (p, f, char *));
      *PROFILE_FIELD (p, f, char *) = xstrdup (json_string (v));
      return 0;
    case F_STRV:
      if (!json_is_array (v))
        return -1;
      strv_free (*PROFILE_FIELD (p, f, char **));
      *PROFILE_FIELD (p, f, char **) = xcalloc (1, sizeof (char *));
      for (size_t i = 0; i < json_array_len (v); i++)
        {
          const json_node *e = json_array_get (v, i);
          if (!json_is_string (e))
            return -1;
          strv_append (PROFILE_FIELD (p, f, char **), json_string (e));
        }
      return 0;
    case F_DENY:
    case F_ALLOW:
      return read_cidrs (v, f, p);
    case F_SHOW:
      break;
    }
  return 0;
}

int
profile_read_saved (const json_node *o, struct profile *p,
                    struct moat_error **err)
{
  const char *name
      = o && json_is_object (o) ? json_member_string (o, "name", false) : NULL;

  if (name == NULL)
    return moat_fail (err, 0, "profile: name expected");
  /* The built-in tables (masked paths, devices ...) come with the name. */
  if (profile_init_default (p, name, err) < 0)
    return -1;
  for (size_t i = 0; i < profile_n_fields; i++)
    {
      const struct field *f = &profile_fields[i];
      const json_node *v;

      if (f->saved == NULL || strcmp (f->saved, "name") == 0)
        continue;
      v = profile_json_member (o, f->saved);
      if (v == NULL && f->type == F_OPT)
        continue;
      if (v == NULL || read_value (v, f, p) < 0)
        return moat_fail (err, 0, "profile: %s: missing or malformed",
                          f->saved);
    }
  return 0;
}
