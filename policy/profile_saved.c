/* The policy decision of one container, as create saves it (ROOT/ID/
 * policy.json): the effective profile (operator config, --profile and the
 * container's annotations, resolved once) and every override and refusal.
 * Later verbs read it back and obey it; they never work the profile out
 * again from config.json or from their own flags. Exact: every field of
 * struct profile is written as a number or a string, nothing is rounded. */
#include "profile.h"
#include "profile_internal.h"
#include "../lib/util.h"
#include "../oci/decision.h"
#include "../oci/json.h"

#include <errno.h>
#include <string.h>

/* NULL or absent: none. -1 if not an array of strings. */
static int
read_strv (const json_node *o, const char *key, char ***ret)
{
  const json_node *v = json_get (o, key);

  if (v == NULL || json_is_null (v))
    return 0;
  if (!json_is_array (v))
    return -1;
  strv_free (*ret);
  *ret = xcalloc (1, sizeof (char *));
  for (size_t i = 0; i < json_array_len (v); i++)
    {
      const json_node *e = json_array_get (v, i);
      if (!json_is_string (e))
        return -1;
      strv_append (ret, json_string (e));
    }
  return 0;
}

static void
write_profile (struct json_writer *w, const struct profile *p)
{
  jw_object_begin (w);
  jw_key (w, "name");
  jw_string (w, p->name);
  jw_key (w, "egress");
  jw_bool (w, p->egress);
  jw_key (w, "pids_limit");
  jw_int (w, p->pids_limit);
  jw_key (w, "memory_limit");
  jw_int (w, p->memory_limit);
  jw_key (w, "cpu_quota");
  jw_int (w, p->cpu_quota);
  jw_key (w, "cpu_period");
  jw_uint (w, p->cpu_period);
  jw_key (w, "tmpfs_size");
  jw_uint (w, p->tmpfs_size);
  jw_key (w, "nofile");
  jw_uint (w, p->nofile);
  jw_key (w, "credential_env");
  jw_array_begin (w);
  for (size_t i = 0; p->credential_env && p->credential_env[i]; i++)
    jw_string (w, p->credential_env[i]);
  jw_array_end (w);
  jw_cidrs (w, "deny", p->deny, p->n_deny, 0);
  /* egress: an allowlist, or the private networks opened (egress_allow,
   * egress_allow_private, narrowed by run.moat.egress-allow). */
  jw_key (w, "allowlist");
  jw_bool (w, p->allowlist);
  jw_cidrs (w, "allow", p->allow, p->n_allow, 0);
  jw_key (w, "audit_log");
  jw_string (w, p->audit_log);
  jw_key (w, "audit_read_verbs");
  jw_bool (w, p->audit_read_verbs);
  /* G12 as create applied it (the pool itself is the operator's). */
  jw_key (w, "userns");
  jw_bool (w, p->userns);
  /* G5/G13: later verbs re-harden the saved config.json with these. */
  jw_strv_member (w, "writable_bind_trees", p->writable_bind_trees);
  jw_key (w, "noexec_volumes");
  jw_bool (w, p->noexec_volumes);
  jw_key (w, "engine_roots");
  jw_object_begin (w);
  for (int k = 0; k < ENGINE__N; k++)
    jw_strv_member (w, profile_engine_names[k], p->engine_roots[k]);
  jw_object_end (w);
  /* G12's pool the block came from: delete gives it back there. */
  jw_key (w, "userns_first");
  jw_uint (w, p->userns_first);
  jw_key (w, "userns_blocks");
  jw_uint (w, p->userns_blocks);
  jw_key (w, "userns_pool_dir");
  jw_string (w, p->userns_pool_dir);
  jw_strv_member (w, "seccomp_agents", p->seccomp_agents);
  if (p->caller_volume)
    {
      jw_key (w, "caller_volume");
      jw_string (w, p->caller_volume);
    }
  jw_object_end (w);
}

char *
profile_policy_to_json (const struct profile *eff,
                        const struct override_list *ov,
                        const struct spec *final, const struct cidr *dns,
                        size_t n_dns)
{
  struct json_writer *w = json_writer_new (false);
  struct process_bounds bounds = profile_process_bounds (eff);
  cleanup_strv char **nameservers = xcalloc (1, sizeof (char *));

  for (size_t i = 0; i < n_dns; i++)
    {
      cleanup_free char *text = cidr_to_string (&dns[i]);
      strv_append (&nameservers, text);
    }
  jw_object_begin (w);
  jw_key (w, "version");
  jw_int (w, DECISION_VERSION);
  jw_key (w, "profile");
  write_profile (w, eff);
  jw_overrides (w, "overrides", ov);
  decision_write_parts (w, final, &bounds, nameservers);
  jw_object_end (w);
  return json_writer_finish (w);
}

/* ---- reading it back ---- */

static int
get_i64 (const json_node *obj, const char *key, int64_t min, int64_t *ret)
{
  const json_node *v = json_get (obj, key);
  if (v == NULL || json_int64 (v, ret) < 0 || *ret < min)
    return -1;
  return 0;
}

static int
read_profile (const json_node *o, struct profile *p, struct moat_error **err)
{
  const json_node *v;
  const char *s;
  int64_t n;

  if (!json_is_object (o) || (s = json_member_string (o, "name", false)) == NULL
      || (v = json_get (o, "egress")) == NULL || !json_is_bool (v))
    return moat_fail (err, 0, "profile: name and egress expected");
  /* The built-in tables (masked paths, devices ...) come with the name. */
  if (profile_init_default (p, s, err) < 0)
    return -1;
  p->egress = json_bool (v);
  if (get_i64 (o, "pids_limit", 1, &p->pids_limit) < 0
      || get_i64 (o, "memory_limit", 1, &p->memory_limit) < 0
      || get_i64 (o, "cpu_quota", 1000, &p->cpu_quota) < 0)
    return moat_fail (err, 0, "profile: limits expected");
  if (get_i64 (o, "cpu_period", 1000, &n) < 0)
    return moat_fail (err, 0, "profile: cpu_period expected");
  p->cpu_period = n;
  if (get_i64 (o, "tmpfs_size", 1, &n) < 0)
    return moat_fail (err, 0, "profile: tmpfs_size expected");
  p->tmpfs_size = n;
  if (get_i64 (o, "nofile", 1, &n) < 0)
    return moat_fail (err, 0, "profile: nofile expected");
  p->nofile = n;
  if ((v = json_get (o, "credential_env")) == NULL || !json_is_array (v))
    return moat_fail (err, 0, "profile: credential_env expected");
  strv_free (p->credential_env);
  p->credential_env = xcalloc (1, sizeof (char *));
  for (size_t i = 0; i < json_array_len (v); i++)
    {
      const json_node *e = json_array_get (v, i);
      if (!json_is_string (e))
        return moat_fail (err, 0, "profile: credential_env[%zu]", i);
      strv_append (&p->credential_env, json_string (e));
    }
  if ((v = json_get (o, "deny")) == NULL || !json_is_array (v))
    return moat_fail (err, 0, "profile: deny expected");
  /* The saved list holds the metadata ranges (G2) too; they stay even if
   * it did not: the defaults are kept and the rest added. */
  p->deny = xrealloc (p->deny,
                      (p->n_deny + json_array_len (v)) * sizeof (*p->deny));
  for (size_t i = 0; i < json_array_len (v); i++)
    {
      const json_node *e = json_array_get (v, i);
      struct cidr c;
      bool dup = false;

      if (!json_is_string (e) || cidr_parse (json_string (e), &c) < 0)
        return moat_fail (err, 0, "profile: deny[%zu]: not a CIDR", i);
      for (size_t j = 0; j < p->n_deny && !dup; j++)
        dup = p->deny[j].family == c.family && p->deny[j].prefix == c.prefix
              && memcmp (p->deny[j].addr, c.addr, sizeof (c.addr)) == 0;
      if (!dup)
        p->deny[p->n_deny++] = c;
    }
  /* Absent from a policy.json written before egress allowlists: none. */
  if ((v = json_get (o, "allowlist")) != NULL && json_is_bool (v))
    p->allowlist = json_bool (v);
  if ((v = json_get (o, "allow")) != NULL)
    {
      if (!json_is_array (v))
        return moat_fail (err, 0, "profile: allow: expected an array");
      for (size_t i = 0; i < json_array_len (v); i++)
        {
          const json_node *e = json_array_get (v, i);
          struct cidr c;

          if (!json_is_string (e) || cidr_port_parse (json_string (e), &c) < 0)
            return moat_fail (err, 0, "profile: allow[%zu]: not a CIDR", i);
          p->allow = xrealloc (p->allow, (p->n_allow + 1) * sizeof (c));
          p->allow[p->n_allow++] = c;
        }
    }
  if ((v = json_get (o, "audit_read_verbs")) != NULL && json_is_bool (v))
    p->audit_read_verbs = json_bool (v);
  /* Absent from a policy.json written before G12: there was none. */
  v = json_get (o, "userns");
  p->userns = v != NULL && json_is_bool (v) && json_bool (v);
  if (read_strv (o, "writable_bind_trees", &p->writable_bind_trees) < 0)
    return moat_fail (err, 0, "profile: writable_bind_trees");
  if ((v = json_get (o, "noexec_volumes")) != NULL && json_is_bool (v))
    p->noexec_volumes = json_bool (v);
  if ((v = json_get (o, "engine_roots")) != NULL && json_is_object (v))
    for (int k = 0; k < ENGINE__N; k++)
      if (read_strv (v, profile_engine_names[k], &p->engine_roots[k]) < 0)
        return moat_fail (err, 0, "profile: engine_roots.%s",
                          profile_engine_names[k]);
  if (get_i64 (o, "userns_first", 0, &n) < 0 || n > UINT32_MAX)
    return moat_fail (err, 0, "profile: userns_first expected");
  p->userns_first = (uint32_t)n;
  if (get_i64 (o, "userns_blocks", 0, &n) < 0 || n > UINT32_MAX)
    return moat_fail (err, 0, "profile: userns_blocks expected");
  p->userns_blocks = (uint32_t)n;
  if ((s = json_member_string (o, "userns_pool_dir", false)) == NULL)
    return moat_fail (err, 0, "profile: userns_pool_dir expected");
  free (p->userns_pool_dir);
  p->userns_pool_dir = xstrdup (s);
  if (read_strv (o, "seccomp_agents", &p->seccomp_agents) < 0)
    return moat_fail (err, 0, "profile: seccomp_agents");
  if ((s = json_member_string (o, "caller_volume", false)) != NULL)
    p->caller_volume = xstrdup (s);
  if ((s = json_member_string (o, "audit_log", false)) == NULL)
    return moat_fail (err, 0, "profile: audit_log expected");
  free (p->audit_log);
  p->audit_log = xstrdup (s);
  return 0;
}

int
profile_policy_parse (const char *text, size_t len, struct profile **ret,
                      struct override_list *ret_ov, struct moat_error **err)
{
  cleanup_profile struct profile *p = xcalloc (1, sizeof (*p));
  struct override_list ov = { 0 };
  json_node *root = NULL;
  int64_t version;
  int r;

  r = json_parse (text, len, 1 << 22, &root, err);
  if (r < 0)
    return moat_error_wrap (err, "policy.json");
  if (!json_is_object (root) || get_i64 (root, "version", 0, &version) < 0
      || version != DECISION_VERSION)
    r = moat_fail (err, 0,
                   "version: expected %d (written by another moat: delete "
                   "the container and create it again)",
                   DECISION_VERSION);
  if (r == 0)
    r = read_profile (json_get (root, "profile"), p, err);
  if (r == 0 && ret_ov)
    r = override_list_parse (json_get (root, "overrides"), &ov, err);
  json_free (root);
  if (r < 0)
    {
      override_list_clear (&ov);
      return moat_error_wrap (err, "policy.json");
    }
  *ret = steal_pointer (&p);
  if (ret_ov)
    *ret_ov = ov;
  return 0;
}
