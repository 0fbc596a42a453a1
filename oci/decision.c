/* policy.json read back for the verbs that act on an existing container:
 * the final spec and the process bounds, without the policy. */
#include "decision.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "../lib/util.h"

void
decision_write_parts (struct json_writer *w, const struct spec *final,
                      const struct process_bounds *process,
                      const struct resource_bounds *resources,
                      char *const *nameservers, const char *userns_pool_dir)
{
  jw_key (w, "process");
  jw_object_begin (w);
  jw_key (w, "nofile");
  jw_uint (w, process->nofile);
  jw_strv_member (w, "credential_env", process->credential_env);
  jw_object_end (w);
  jw_key (w, "resources");
  jw_object_begin (w);
  jw_key (w, "pids_limit");
  jw_int (w, resources->pids_limit);
  jw_key (w, "memory_limit");
  jw_int (w, resources->memory_limit);
  jw_key (w, "cpu_quota");
  jw_int (w, resources->cpu_quota);
  jw_key (w, "cpu_period");
  jw_uint (w, resources->cpu_period);
  jw_object_end (w);
  jw_strv_member (w, "nameservers", nameservers);
  jw_key (w, "userns_pool_dir");
  jw_string (w, userns_pool_dir);
  jw_key (w, "spec");
  spec_write (w, final);
}

/* A member that must be an array of strings, into *ret. */
static int
read_strv (const json_node *o, const char *key, char ***ret,
           struct moat_error **err)
{
  const json_node *v = json_get (o, key);

  if (v == NULL || !json_is_array (v))
    return moat_fail (err, 0, "%s: expected an array of strings", key);
  *ret = xcalloc (1, sizeof (char *));
  for (size_t i = 0; i < json_array_len (v); i++)
    {
      const json_node *e = json_array_get (v, i);
      if (!json_is_string (e))
        return moat_fail (err, 0, "%s[%zu]: expected a string", key, i);
      strv_append (ret, json_string (e));
    }
  return 0;
}

/* The resource bounds: every one a positive number (a CPU period of at
 * least 1 ms). */
static int
read_resources (const json_node *o, struct resource_bounds *b,
                struct moat_error **err)
{
  static const char *const keys[]
      = { "pids_limit", "memory_limit", "cpu_quota", "cpu_period" };
  int64_t *slots[] = { &b->pids_limit, &b->memory_limit, &b->cpu_quota, NULL };
  int64_t period = 0;

  slots[3] = &period;
  for (size_t i = 0; i < 4; i++)
    {
      const json_node *v
          = o && json_is_object (o) ? json_get (o, keys[i]) : NULL;
      if (v == NULL || json_int64 (v, slots[i]) < 0 || *slots[i] < 1)
        return moat_fail (err, 0, "resources.%s: expected a positive number",
                          keys[i]);
    }
  if (period < 1000)
    return moat_fail (err, 0, "resources.cpu_period: under 1 ms");
  b->cpu_period = (uint64_t)period;
  return 0;
}

static int
read_decision (const json_node *root, struct decision *d,
               struct moat_error **err)
{
  const json_node *v, *proc;
  int64_t version;

  if (!json_is_object (root) || (v = json_get (root, "version")) == NULL
      || json_int64 (v, &version) < 0)
    return moat_fail (err, 0, "version: expected a number");
  if (version != DECISION_VERSION)
    return moat_fail (err, 0,
                      "version %lld, written by another moat (this one reads "
                      "version %d): delete the container and create it again",
                      (long long)version, DECISION_VERSION);
  v = json_get (root, "profile");
  v = v && json_is_object (v) ? json_get (v, "name") : NULL;
  if (v == NULL || !json_is_string (v))
    return moat_fail (err, 0, "profile.name: expected a string");
  d->profile_name = xstrdup (json_string (v));
  proc = json_get (root, "process");
  if (proc == NULL || !json_is_object (proc)
      || (v = json_get (proc, "nofile")) == NULL
      || json_uint64 (v, &d->process.nofile) < 0)
    return moat_fail (err, 0, "process.nofile: expected a number");
  if (read_strv (proc, "credential_env", &d->process.credential_env, err) < 0
      || read_strv (root, "nameservers", &d->nameservers, err) < 0)
    return -1;
  if (read_resources (json_get (root, "resources"), &d->resources, err) < 0)
    return -1;
  v = json_get (root, "userns_pool_dir");
  if (v == NULL || !json_is_string (v))
    return moat_fail (err, 0, "userns_pool_dir: expected a string");
  d->userns_pool_dir = xstrdup (json_string (v));
  v = json_get (root, "spec");
  if (v == NULL)
    return moat_fail (err, 0, "spec: missing");
  if (spec_parse_node (v, &d->spec, err) < 0)
    return moat_error_wrap (err, "spec");
  return 0;
}

int
decision_parse (const char *text, size_t len, struct decision **ret,
                struct moat_error **err)
{
  struct decision *d = xcalloc (1, sizeof (*d));
  json_node *root = NULL;
  int r;

  r = json_parse (text, len, JSON_MAX_SIZE, &root, err);
  if (r == 0)
    r = read_decision (root, d, err);
  json_free (root);
  if (r < 0)
    {
      decision_free (d);
      return moat_error_wrap (err, "policy.json");
    }
  *ret = d;
  return 0;
}

void
decision_free (struct decision *d)
{
  if (d == NULL)
    return;
  free (d->profile_name);
  spec_free (d->spec);
  strv_free (d->process.credential_env);
  strv_free (d->nameservers);
  free (d->userns_pool_dir);
  free (d);
}
