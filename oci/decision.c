/* policy.json read back for the verbs that act on an existing container:
 * the final spec and the process bounds, without the policy. */
#include "decision.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "../lib/util.h"

const char *const decision_metadata_ranges[DECISION_N_METADATA_RANGES + 1] = {
  "169.254.0.0/16",     /* AWS, GCP, ECS, OpenStack, Oracle, DigitalOcean */
  "100.100.100.200/32", /* Alibaba Cloud */
  "168.63.129.16/32",   /* Azure WireServer */
  "fd00:ec2::254/128",  /* AWS IMDS over IPv6 */
  NULL,
};

void
jw_cidrs (struct json_writer *w, const char *key, const struct cidr *list,
          size_t n, uint16_t port)
{
  jw_key (w, key);
  jw_array_begin (w);
  for (size_t i = 0; i < n; i++)
    {
      struct cidr c = list[i];
      char text[CIDR_TEXT_MAX];
      if (port)
        c.port = port;
      cidr_format (&c, text);
      jw_string (w, text);
    }
  jw_array_end (w);
}

void
jw_cidrs_joined (struct json_writer *w, const char *key,
                 const struct cidr *list, size_t n)
{
  cleanup_free char *text = cidr_list_join (list, n);
  jw_key (w, key);
  jw_string (w, text);
}

/* A list the programs hold: its length (the saved profile's record
 * carries the digest of the same deny and allow lists). */
static void
jw_cidrs_named (struct json_writer *w, const char *key, const struct cidr *list,
                size_t n)
{
  (void)list;
  jw_key (w, key);
  jw_object_begin (w);
  jw_key (w, "count");
  jw_uint (w, n);
  jw_object_end (w);
}

static void
write_guard (struct json_writer *w, const struct decision_guard *g)
{
  void (*list) (struct json_writer *, const char *, const struct cidr *, size_t)
      = g->held ? jw_cidrs_named : jw_cidrs_joined;

  jw_key (w, "guard");
  jw_object_begin (w);
  jw_key (w, "egress");
  jw_bool (w, g->egress);
  jw_key (w, "allowlist");
  jw_bool (w, g->allowlist);
  if (g->held)
    {
      jw_key (w, "held");
      jw_bool (w, true);
    }
  list (w, "deny", g->deny, g->n_deny);
  list (w, "allow", g->allow, g->n_allow);
  list (w, "private", g->private_nets, g->n_private);
  jw_object_end (w);
}

void
decision_write_parts (struct json_writer *w, const struct spec *final,
                      const struct process_bounds *process,
                      const struct resource_bounds *resources,
                      const struct decision_guard *guard,
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
  write_guard (w, guard);
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

static const char *const guard_keys[DECISION_GUARD_LISTS]
    = { "deny", "allow", "private" };

/* guard.KEY's text, kept unparsed (decision_guard_lists reads it): one
 * string (cidr_list_join), or the array an earlier moat wrote, checked and
 * joined here. */
static int
read_list_text (const json_node *o, const char *key, char **ret,
                struct moat_error **err)
{
  const json_node *v = json_get (o, key);
  cleanup_free struct cidr *list = NULL;

  if (v && json_is_string (v))
    {
      *ret = xstrdup (json_string (v));
      return 0;
    }
  if (v == NULL || !json_is_array (v))
    return moat_fail (err, 0, "guard.%s: expected CIDRs", key);
  list = xcalloc (json_array_len (v) + 1, sizeof (*list));
  for (size_t i = 0; i < json_array_len (v); i++)
    {
      const json_node *e = json_array_get (v, i);
      if (!json_is_string (e)
          || cidr_port_parse (json_string (e), &list[i]) < 0)
        return moat_fail (err, 0, "guard.%s[%zu]: expected a CIDR", key, i);
    }
  *ret = cidr_list_join (list, json_array_len (v));
  return 0;
}

/* G2's floor: each metadata range the saved deny list does not already
 * cover is added to it (a hand-edited or damaged policy.json cannot open
 * one). */
static void
add_metadata_floor (struct decision_guard *g)
{
  for (size_t i = 0; decision_metadata_ranges[i]; i++)
    {
      struct cidr m;
      bool covered = false;
      if (cidr_parse (decision_metadata_ranges[i], &m) < 0)
        abort (); /* a built-in constant */
      for (size_t k = 0; k < g->n_deny && !covered; k++)
        covered = g->deny[k].port == 0 && cidr_contains (&g->deny[k], &m);
      if (covered)
        continue;
      g->deny = xrealloc (g->deny, (g->n_deny + 1) * sizeof (*g->deny));
      g->deny[g->n_deny++] = m;
    }
}

static int
read_guard (const json_node *o, struct decision *d, struct moat_error **err)
{
  const json_node *egress
      = o && json_is_object (o) ? json_get (o, "egress") : NULL;
  const json_node *allowlist
      = o && json_is_object (o) ? json_get (o, "allowlist") : NULL;
  const json_node *held = o && json_is_object (o) ? json_get (o, "held") : NULL;

  if (egress == NULL || !json_is_bool (egress) || allowlist == NULL
      || !json_is_bool (allowlist) || (held && !json_is_bool (held)))
    return moat_fail (err, 0, "guard: egress and allowlist expected");
  d->guard.egress = json_bool (egress);
  d->guard.allowlist = json_bool (allowlist);
  d->guard.held = held && json_bool (held);
  for (size_t i = 0; i < DECISION_GUARD_LISTS && !d->guard.held; i++)
    if (read_list_text (o, guard_keys[i], &d->guard_text[i], err) < 0)
      return -1;
  return 0;
}

int
decision_guard_lists (const struct decision *d, struct decision_guard *ret,
                      struct moat_error **err)
{
  struct decision_guard g
      = { .egress = d->guard.egress, .allowlist = d->guard.allowlist };
  struct cidr **lists[] = { &g.deny, &g.allow, &g.private_nets };
  size_t *counts[] = { &g.n_deny, &g.n_allow, &g.n_private };

  if (d->guard.held)
    return moat_fail (err, 0,
                      "policy.json: the guard's lists are held by its "
                      "cgroup-bpf programs, not saved");

  for (size_t i = 0; i < DECISION_GUARD_LISTS; i++)
    if (cidr_list_split (d->guard_text[i], true, lists[i], counts[i]) < 0)
      {
        size_t at = *counts[i];
        decision_guard_free (&g);
        return moat_fail (err, 0, "policy.json: guard.%s[%zu]: expected a CIDR",
                          guard_keys[i], at);
      }
  add_metadata_floor (&g);
  *ret = g;
  return 0;
}

void
decision_guard_free (struct decision_guard *g)
{
  free (g->deny);
  free (g->allow);
  free (g->private_nets);
  *g = (struct decision_guard){ 0 };
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
  if (read_resources (json_get (root, "resources"), &d->resources, err) < 0
      || read_guard (json_get (root, "guard"), d, err) < 0)
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
  decision_guard_free (&d->guard);
  for (size_t i = 0; i < DECISION_GUARD_LISTS; i++)
    free (d->guard_text[i]);
  free (d);
}
