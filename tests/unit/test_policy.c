/* The policy a container keeps (policy.json: its effective profile and
 * every override, exactly as create decided them), and the policy's second
 * step, which judges what only the filesystem can tell (a bind source's
 * real path, a namespace to join) into the same override list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../oci/decision.h"
#include "../../policy/profile.h"
#include "../../policy/verdicts.h"
#include "../../lib/util.h"

static struct profile *
load (const char *text, const char *name)
{
  char dir[] = "/tmp/moat-test-policy-XXXXXX";
  char path[64];
  struct profile *p = NULL;
  struct moat_error *err = NULL;
  FILE *f;

  assert_non_null (mkdtemp (dir));
  snprintf (path, sizeof (path), "%s/config.json", dir);
  f = fopen (path, "we");
  assert_non_null (f);
  fputs (text, f);
  fclose (f);
  if (profile_load (path, name, &p, NULL, &err) < 0)
    fail_msg ("profile_load: %s", err->msg);
  unlink (path);
  rmdir (dir);
  return p;
}

static bool
cidr_eq (const struct cidr *a, const struct cidr *b)
{
  return a->family == b->family && a->prefix == b->prefix
         && memcmp (a->addr, b->addr, sizeof (a->addr)) == 0;
}

/* The operator configuration's keys (struct operator_config). */
static const char *const config_keys[] = { "audit_log",
                                           "image_cache",
                                           "audit_read_verbs",
                                           "seccomp_agents",
                                           "writable_bind_trees",
                                           "noexec_volumes",
                                           "engine_roots",
                                           "caller_volume",
                                           "userns_first",
                                           "userns_blocks",
                                           "first_id",
                                           "pool_dir",
                                           "userns_pool_dir",
                                           "image_max_bytes",
                                           "image_max_entries",
                                           "image_cache_max_bytes" };

/* The effective profile of a container with annotations, saved: its
 * values and overrides written exactly (a CPU quota no "cpus" string could
 * say), and the decision the later verbs obey read back the same. */
static void
test_policy_round_trip (void **state)
{
  struct profile *base = load (
      "{\"audit_log\": \"/var/log/x/a.jsonl\", \"egress_deny\": "
      "[\"10.0.0.0/8\", \"fc00::/7\"], \"credential_env_extra\": [\"V_*\"], "
      "\"profiles\": {\"egress\": {\"limits\": {\"pids\": 128, \"cpu_period\": "
      "30000}}}}",
      "egress");
  struct spec_kv ann[]
      = { { "run.moat.pids-limit", "10" }, { "run.moat.cpu-quota", "7777" } };
  struct profile *eff = NULL;
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  struct decision_guard guard;
  const char *config
      = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
        "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\","
        "\"env\":[\"A=1\"]},\"mounts\":[{\"destination\":\"/mnt\","
        "\"source\":\"/srv\",\"options\":[\"rbind\",\"ro\"]}]}";
  struct spec *spec = NULL;
  struct decision *d = NULL;
  struct cidr dns[1];
  char *json, *spec_text, *back_text;

  assert_int_equal (profile_effective (base, ann, 2, &eff, NULL, &err), 0);
  assert_int_equal (spec_parse (config, strlen (config), &spec, &err), 0);
  assert_int_equal (cidr_parse ("10.96.0.10", &dns[0]), 0);
  assert_int_equal (eff->pids_limit, 10);
  assert_int_equal (eff->cpu_quota, 7777);
  override_list_add (&ov, OVERRIDE_CHANGED, "mounts[/mnt].options", "rbind",
                     "rbind,ro");
  override_list_add (&ov, OVERRIDE_ADDED, "mounts[/tmp]", NULL, "tmpfs");
  json = profile_policy_to_json (
      &(struct judgement){ .values = eff, .overrides = ov }, spec, dns, 1,
      "/run/moat-idpool", false);
  assert_null (strchr (json, '\n')); /* one line */
  /* The judged values and the overrides, as a record (no verb reads them
   * back: the decision below is what they obey). */
  assert_non_null (strstr (json, "\"pids_limit\":10,"));
  assert_non_null (strstr (json, "\"cpu_quota\":7777,"));
  assert_non_null (strstr (json, "{\"kind\":\"changed\",\"path\":"
                                 "\"mounts[/mnt].options\",\"asked\":"
                                 "\"rbind\",\"enforced\":\"rbind,ro\"}"));
  /* The operator's configuration is not part of the decision: none of it
   * in the saved profile (the pool dir is the decision's own field). */
  for (size_t i = 0; i < sizeof (config_keys) / sizeof (*config_keys); i++)
    {
      cleanup_free char *key = xasprintf ("\"%s\":", config_keys[i]);
      const char *profile = strstr (json, "\"profile\":{");
      const char *end = strstr (json, "\"overrides\":");
      const char *at = strstr (json, key);
      assert_non_null (profile);
      assert_non_null (end);
      if (at && at > profile && at < end)
        fail_msg ("%s saved in the profile: %s", config_keys[i], json);
    }
  /* The rest of the decision, read without the policy. */
  if (decision_parse (json, strlen (json), &d, &err) < 0)
    fail_msg ("decision: %s", err->msg);
  assert_string_equal (d->profile_name, "egress");
  assert_int_equal (d->process.nofile, eff->nofile);
  assert_string_equal (d->process.credential_env[0], eff->credential_env[0]);
  assert_string_equal (d->nameservers[0], "10.96.0.10/32");
  assert_null (d->nameservers[1]);
  assert_string_equal (d->userns_pool_dir, "/run/moat-idpool");
  assert_int_equal (d->resources.pids_limit, 10); /* the annotation's */
  assert_int_equal (d->resources.cpu_quota, 7777);
  assert_int_equal (d->resources.memory_limit, eff->memory_limit);
  assert_int_equal (d->resources.cpu_period, eff->cpu_period);
  /* The fallback guard's lists, as create judged them (start reads these,
   * never the operator config). */
  assert_int_equal (decision_guard_lists (d, &guard, &err), 0);
  assert_true (guard.egress);
  assert_false (guard.allowlist);
  assert_int_equal (guard.n_deny, eff->n_deny);
  for (size_t i = 0; i < eff->n_deny; i++)
    assert_true (cidr_eq (&guard.deny[i], &eff->deny[i]));
  assert_int_equal (guard.n_private, eff->n_private);
  assert_true (guard.n_private > 0);
  decision_guard_free (&guard);
  spec_text = spec_to_json (spec);
  back_text = spec_to_json (d->spec);
  assert_string_equal (spec_text, back_text);
  free (spec_text);
  free (back_text);
  decision_free (d);
  spec_free (spec);
  free (json);
  override_list_clear (&ov);
  profile_free (eff);
  profile_free (base);
}

/* A policy.json as create writes it, for the built-in profile NAME, with
 * the first FROM in its text replaced by TO. */
static char *
saved_text (const char *name, const char *from, const char *to)
{
  struct profile *p = NULL;
  struct override_list ov = { 0 };
  struct spec *s = NULL;
  struct moat_error *err = NULL;
  const char *config = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"}}";
  char *text, *at, *out;

  assert_int_equal (profile_load_builtin (name, &p, NULL, &err), 0);
  assert_int_equal (spec_parse (config, strlen (config), &s, &err), 0);
  text = profile_policy_to_json (
      &(struct judgement){ .values = p, .overrides = ov }, s, NULL, 0,
      "/run/moat-idpool", false);
  at = strstr (text, from);
  if (at == NULL)
    fail_msg ("%s not in %s", from, text);
  out = xasprintf ("%.*s%s%s", (int)(at - text), text, to, at + strlen (from));
  free (text);
  spec_free (s);
  profile_free (p);
  return out;
}

/* A long deny list: policy.json's record of the profile names it (head,
 * count, digest); the guard keeps it whole for start's fallback, or only
 * names it where the cgroup-bpf programs hold it (guard_holds_lists). */
static void
test_long_lists_named_where_held (void **state)
{
  const char *config = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"}}";
  struct profile *p = NULL;
  struct spec *s = NULL;
  struct moat_error *err = NULL;
  struct override_list ov = { 0 };
  size_t builtin;

  (void)state;
  assert_int_equal (profile_load_builtin ("egress", &p, NULL, &err), 0);
  assert_int_equal (spec_parse (config, strlen (config), &s, &err), 0);
  builtin = p->n_deny;
  p->deny = xrealloc (p->deny, (builtin + 100) * sizeof (*p->deny));
  for (size_t i = 0; i < 100; i++)
    {
      cleanup_free char *text = xasprintf ("203.0.%zu.0/24", i);
      assert_int_equal (cidr_parse (text, &p->deny[builtin + i]), 0);
    }
  p->n_deny = builtin + 100;
  for (int held = 0; held < 2; held++)
    {
      cleanup_free char *json = profile_policy_to_json (
          &(struct judgement){ .values = p, .overrides = ov }, s, NULL, 0,
          "/run/moat-idpool", held);
      cleanup_free char *count = xasprintf ("\"count\":%zu", builtin + 100);
      struct decision *d = NULL;
      struct decision_guard g;
      const char *last = strstr (json, "203.0.99.0/24");

      /* The profile's record: the head, the count and the digest. */
      assert_non_null (strstr (json, "\"deny\":{\"head\":\""));
      assert_non_null (strstr (json, count));
      assert_int_equal (decision_parse (json, strlen (json), &d, &err), 0);
      if (held)
        {
          /* Only named: start's fallback has nothing to read. */
          assert_null (last);
          assert_non_null (strstr (json, "\"held\":true"));
          assert_true (decision_guard_lists (d, &g, &err) < 0);
          assert_non_null (strstr (err->msg, "held by its cgroup-bpf"));
          moat_error_free (&err);
        }
      else
        {
          /* Once, in the guard: what start's fallback installs. */
          assert_non_null (last);
          assert_null (strstr (last + 1, "203.0.99.0/24"));
          assert_int_equal (decision_guard_lists (d, &g, &err), 0);
          assert_int_equal (g.n_deny, builtin + 100);
          decision_guard_free (&g);
        }
      decision_free (d);
    }
  spec_free (s);
  profile_free (p);
}

/* The saved guard (what start's fallback guard installs, read without the
 * policy) keeps G2 too: its deny list cut down to 10/8 still denies every
 * metadata range. */
static void
test_decision_guard_keeps_metadata_ranges (void **state)
{
  const char *guard = "\"guard\":{\"egress\":true,\"allowlist\":false,";
  /* policy.json's form, and the array of earlier state dirs. */
  static const char *const forms[] = {
    "\"deny\":\"10.0.0.0/8\",\"x\":\"",
    "\"deny\":[\"10.0.0.0/8\"],\"x\":\"",
  };

  for (size_t f = 0; f < 2; f++)
    {
      cleanup_free char *from = xasprintf ("%s\"deny\":\"", guard);
      cleanup_free char *to = xasprintf ("%s%s", guard, forms[f]);
      char *text = saved_text ("egress", from, to);
      struct decision *d = NULL;
      struct decision_guard g;
      struct moat_error *err = NULL;
      bool ten = false;

      if (decision_parse (text, strlen (text), &d, &err) < 0
          || decision_guard_lists (d, &g, &err) < 0)
        fail_msg ("parse: %s", err->msg);
      for (size_t i = 0; decision_metadata_ranges[i]; i++)
        {
          struct cidr m;
          bool denied = false;
          assert_int_equal (cidr_parse (decision_metadata_ranges[i], &m), 0);
          for (size_t k = 0; k < g.n_deny; k++)
            denied |= cidr_contains (&g.deny[k], &m);
          if (!denied)
            fail_msg ("%s not denied", decision_metadata_ranges[i]);
        }
      for (size_t k = 0; k < g.n_deny; k++)
        {
          struct cidr c;
          assert_int_equal (cidr_parse ("10.0.0.0/8", &c), 0);
          ten |= cidr_eq (&g.deny[k], &c);
        }
      assert_true (ten);
      decision_guard_free (&g);
      decision_free (d);
      free (text);
    }
}

static void
expect_bad (const char *text, const char *msg_part)
{
  struct decision *d = NULL;
  struct moat_error *err = NULL;

  assert_true (decision_parse (text, strlen (text), &d, &err) < 0);
  assert_null (d);
  if (strstr (err->msg, msg_part) == NULL)
    fail_msg ("\"%s\" lacks \"%s\"", err->msg, msg_part);
  moat_error_free (&err);
}

static void
expect_bad_saved (const char *from, const char *to, const char *msg_part)
{
  char *text = saved_text ("strict", from, to);
  expect_bad (text, msg_part);
  free (text);
}

static void
test_policy_malformed (void **state)
{
  expect_bad ("", "policy.json");
  expect_bad ("[]", "version");
  expect_bad ("{\"version\": 1}", "another moat");
  expect_bad ("{\"version\": 2}", "another moat");
  expect_bad ("{\"version\": 3}", "another moat");
  expect_bad ("{\"version\": 4}", "another moat");
  expect_bad ("{\"version\": 5, \"profile\": {\"egress\": true}}",
              "profile.name");
  expect_bad_saved (
      "\"process\":{\"nofile\":", "\"process\":{\"nofilx\":", "process.nofile");
  expect_bad_saved (
      "\"userns_pool_dir\":", "\"userns_pool_dix\":", "userns_pool_dir");
  expect_bad_saved ("\"spec\":", "\"spex\":", "spec: missing");
}

/* The saved guard lists, read without the policy: a bad entry or a
 * missing guard is an error, never a shorter list. */
static void
expect_bad_guard (const char *from, const char *to, const char *msg_part)
{
  char *text = saved_text ("egress", from, to);
  struct decision *d = NULL;
  struct moat_error *err = NULL;

  struct decision_guard g;

  /* A bad list entry is found where the lists are read, a bad guard at
   * once. */
  if (decision_parse (text, strlen (text), &d, &err) == 0)
    {
      assert_true (decision_guard_lists (d, &g, &err) < 0);
      decision_free (d);
    }
  else
    assert_null (d);
  if (strstr (err->msg, msg_part) == NULL)
    fail_msg ("\"%s\" lacks \"%s\"", err->msg, msg_part);
  moat_error_free (&err);
  free (text);
}

static void
test_decision_guard_malformed (void **state)
{
  expect_bad_guard ("\"private\":\"", "\"private\":\"nope,",
                    "guard.private[0]");
  expect_bad_guard ("\"private\":\"", "\"private\":\"10.0.0.0/8,,",
                    "guard.private[1]");
  expect_bad_guard ("\"private\":\"", "\"private\":[\"nope\"],\"x\":\"",
                    "guard.private[0]");
  expect_bad_guard ("\"guard\":", "\"guarx\":", "guard:");
  expect_bad_guard ("\"allow\":\"\",\"private\"", "\"allow\":7,\"private\"",
                    "guard.allow");
}

/* G8's level is the policy's verdict, recorded on the hardened spec over
 * whatever config.json's annotation said. */
static void
test_seccomp_level_verdict (void **state)
{
  struct spec *s = xcalloc (1, sizeof (*s));
  struct profile eff = { .seccomp_agent = false };

  spec_set_annotation (s, SECCOMP_LEVEL_ANNOTATION, "agent");
  profile_decide_seccomp_level (s, &eff);
  assert_string_equal (
      spec_kv_get (s->annotations, s->n_annotations, SECCOMP_LEVEL_ANNOTATION),
      "default");
  eff.seccomp_agent = true;
  profile_decide_seccomp_level (s, &eff);
  assert_string_equal (
      spec_kv_get (s->annotations, s->n_annotations, SECCOMP_LEVEL_ANNOTATION),
      "agent");
  assert_int_equal (s->n_annotations, 1);
  spec_free (s);
}

static char **
strv (const char *a, const char *b, const char *c)
{
  char **v = xcalloc (1, sizeof (char *));
  const char *in[] = { a, b, c };
  for (size_t i = 0; i < 3 && in[i]; i++)
    strv_append (&v, in[i]);
  return v;
}

/* A bind whose source reaches /usr through a symlink: the real path makes
 * it read-only, and the list says so, with what config.json asked, keyed
 * by destination (the profile's own mounts shift the indices). */
static int
harden (struct spec_mount *m, const char *real, const struct profile *p,
        struct override_list *ov, struct moat_error **err)
{
  struct bind_facts f = { .path = real, .bundle = "/b", .rootfs = "/b/rootfs" };
  cleanup_free char *warning = NULL;
  return profile_harden_bind (m, 9, &f, p, NULL, ov, &warning, err);
}

static void
test_bind_source_step (void **state)
{
  struct profile *p = load ("{}", NULL);
  struct spec_mount m = { .destination = "/mnt/share", .type = "bind" };
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;

  m.options = strv ("rbind", "nosuid", "nodev");
  assert_int_equal (harden (&m, "/usr/share", p, &ov, &err), 0);
  assert_string_equal (m.options[3], "ro");
  /* Down to every submount ("ro" alone is the top only, as runc's). */
  assert_string_equal (m.options[4], "rro");
  assert_int_equal (ov.n, 1);
  assert_int_equal (ov.v[0].kind, OVERRIDE_CHANGED);
  assert_string_equal (ov.v[0].path, "mounts[/mnt/share].options");
  assert_string_equal (ov.v[0].asked, "rbind,nosuid,nodev");
  assert_string_equal (ov.v[0].enforced, "rbind,nosuid,nodev,ro,rro");
  /* Already read-only: nothing changes, nothing recorded. */
  assert_int_equal (harden (&m, "/usr/share", p, &ov, &err), 0);
  assert_int_equal (ov.n, 1);
  assert_null (m.options[5]);
  strv_free (m.options);

  /* An ordinary host directory: read-only and noexec (G5, G13). */
  m.options = strv ("rbind", NULL, NULL);
  assert_int_equal (harden (&m, "/home/user/data", p, &ov, &err), 0);
  assert_int_equal (ov.n, 2);
  assert_string_equal (ov.v[1].enforced, "rbind,ro,rro,noexec");

  /* A link to /etc: refused, and the refusal is in the list. */
  assert_true (harden (&m, "/etc", p, &ov, &err) < 0);
  assert_non_null (strstr (err->msg, "refusing to bind /etc"));
  moat_error_free (&err);
  assert_int_equal (ov.n, 3);
  assert_int_equal (ov.v[2].kind, OVERRIDE_REFUSED);
  assert_string_equal (ov.v[2].path, "mounts[/mnt/share]");
  assert_string_equal (ov.v[2].asked, "bind /etc");
  strv_free (m.options);
  override_list_clear (&ov);
  profile_free (p);
}

static void
test_ns_join_step (void **state)
{
  struct profile *p = load ("{}", NULL);
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;

  assert_int_equal (
      profile_apply_ns_join (NS_NET, "/run/netns/x", 1, 2, 1, 3, p, &ov, &err),
      0);
  assert_int_equal (ov.n, 0);
  assert_true (
      profile_apply_ns_join (NS_NET, "/proc/1/ns/net", 1, 2, 1, 2, p, &ov, &err)
      < 0);
  moat_error_free (&err);
  assert_int_equal (ov.n, 1);
  assert_int_equal (ov.v[0].kind, OVERRIDE_REFUSED);
  assert_string_equal (ov.v[0].path, "linux.namespaces.network");
  assert_non_null (strstr (ov.v[0].asked, "/proc/1/ns/net"));
  /* The host's user namespace: container root would be host root (G12). */
  assert_true (profile_apply_ns_join (NS_USER, "/proc/1/ns/user", 1, 2, 1, 2, p,
                                      &ov, &err)
               < 0);
  assert_non_null (strstr (err->msg, "G12"));
  moat_error_free (&err);
  assert_int_equal (ov.n, 2);
  assert_string_equal (ov.v[1].path, "linux.namespaces.user");
  /* One joined by path, judged on the maps the runtime read: a gid map
   * reaching host root is refused and recorded, a safe one passes. */
  assert_int_equal (profile_apply_joined_userns ("/run/u", "0 100000 65536\n",
                                                 "0 100000 65536\n", &ov, &err),
                    0);
  assert_int_equal (ov.n, 2);
  assert_true (profile_apply_joined_userns ("/run/u", "0 100000 65536\n",
                                            "0 0 1\n", &ov, &err)
               < 0);
  moat_error_free (&err);
  assert_int_equal (ov.n, 3);
  assert_int_equal (ov.v[2].kind, OVERRIDE_REFUSED);
  assert_string_equal (ov.v[2].path, "linux.namespaces.user");
  assert_string_equal (ov.v[2].asked, "join /run/u");
  override_list_clear (&ov);
  profile_free (p);
}

/* create's one decision: profile_apply hands back the effective profile it
 * hardened with (annotations applied), the one policy.json saves. */
static void
test_apply_returns_effective (void **state)
{
  const char *text = "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"r\"},"
                     " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"},"
                     " \"annotations\": {\"run.moat.pids-limit\": \"10\","
                     " \"run.moat.nofile\": \"100000\"}}";
  struct profile *base = load ("{}", NULL), *eff = NULL;
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  struct spec *s = NULL;
  bool ignored = false;

  assert_int_equal (spec_parse (text, strlen (text), &s, &err), 0);
  assert_int_equal (profile_apply_effective (s, base, NULL, &eff, &ov, &err),
                    0);
  assert_non_null (eff);
  assert_int_equal (eff->pids_limit, 10);
  assert_int_equal (eff->nofile, base->nofile); /* looser: ignored */
  assert_int_equal (s->linux_.resources.pids_limit, 10);
  for (size_t i = 0; i < ov.n; i++)
    ignored |= ov.v[i].kind == OVERRIDE_IGNORED
               && strcmp (ov.v[i].path, "annotations.run.moat.nofile") == 0;
  assert_true (ignored);
  override_list_clear (&ov);
  profile_free (eff);
  profile_free (base);
  spec_free (s);
}

/* The effective profile borrows the loaded one's long lists, and takes
 * their digests once: an annotation narrowing the allowlist gives it its
 * own lists (the loaded one's left whole), and each digest is that of the
 * list it names, in the record policy.json keeps too. */
static void
test_effective_lists_and_digests (void **state)
{
  char spec_text[4096]
      = "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": "
        "\"r\"}, \"process\": {\"args\": [\"sh\"], \"cwd\": "
        "\"/\"}, \"annotations\": {\"run.moat.egress-allow\": \"";
  const char *plain = "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": "
                      "\"r\"}, \"process\": {\"args\": [\"sh\"], \"cwd\": "
                      "\"/\"}}";
  struct profile *base = load ("{}", "egress"), *eff = NULL;
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  struct spec *s = NULL;
  char digest[CIDR_LIST_DIGEST_LEN];
  size_t builtin = base->n_deny;

  (void)state;
  base->deny = xrealloc (base->deny, (builtin + 40) * sizeof (*base->deny));
  free (base->allow);
  base->allow = xcalloc (40, sizeof (*base->allow));
  for (size_t i = 0; i < 40; i++)
    {
      cleanup_free char *deny = xasprintf ("203.0.%zu.0/24", i);
      cleanup_free char *allow = xasprintf ("198.51.%zu.0/24", i);
      assert_int_equal (cidr_parse (deny, &base->deny[builtin + i]), 0);
      assert_int_equal (cidr_parse (allow, &base->allow[i]), 0);
      /* The pod author keeps 20 of the 40. */
      if (i < 20)
        snprintf (spec_text + strlen (spec_text),
                  sizeof (spec_text) - strlen (spec_text), "%s%s", i ? "," : "",
                  allow);
    }
  base->n_deny = builtin + 40;
  base->n_allow = 40;
  base->allowlist = true;
  snprintf (spec_text + strlen (spec_text),
            sizeof (spec_text) - strlen (spec_text), "\"}}");
  /* No annotation: the lists borrowed, not copied. */
  assert_int_equal (spec_parse (plain, strlen (plain), &s, &err), 0);
  assert_int_equal (profile_apply_effective (s, base, NULL, &eff, &ov, &err),
                    0);
  assert_true (eff->deny == base->deny && eff->allow == base->allow);
  profile_free (eff);
  spec_free (s);
  override_list_clear (&ov);
  assert_int_equal (spec_parse (spec_text, strlen (spec_text), &s, &err), 0);
  assert_int_equal (profile_apply_effective (s, base, NULL, &eff, &ov, &err),
                    0);
  assert_int_equal (eff->n_allow, 20);
  assert_int_equal (base->n_allow, 40);
  assert_true (eff->allow != base->allow && eff->deny != base->deny);
  assert_memory_equal (eff->deny, base->deny,
                       base->n_deny * sizeof (*base->deny));
  cidr_list_digest (eff->deny, eff->n_deny, digest);
  assert_string_equal (eff->deny_digest, digest);
  cidr_list_digest (eff->allow, eff->n_allow, digest);
  assert_string_equal (eff->allow_digest, digest);
  {
    cleanup_free char *json = profile_policy_to_json (
        &(struct judgement){ .values = eff, .overrides = ov }, s, NULL, 0,
        "/run/moat-idpool", true);
    assert_non_null (strstr (json, digest));
  }
  override_list_clear (&ov);
  profile_free (eff);
  profile_free (base); /* its lists still its own, freed once */
  spec_free (s);
}

static bool
has_override (const struct override_list *ov, enum override_kind kind,
              const char *path)
{
  for (size_t i = 0; i < ov->n; i++)
    if (ov->v[i].kind == kind && strcmp (ov->v[i].path, path) == 0)
      return true;
  return false;
}

/* config.json's text judged under base on a host with facts. */
static struct spec *
judge_text (const char *text, const struct profile *base,
            const struct host_facts *facts, struct judgement *j)
{
  struct moat_error *err = NULL;
  struct spec *s = NULL;

  assert_int_equal (spec_parse (text, strlen (text), &s, &err), 0);
  if (profile_judge (s, base, NULL, facts, j, &err) < 0)
    fail_msg ("judge: %s", err->msg);
  return s;
}

/* create's judging returns one value owning the effective profile and every
 * override, the host's facts judged in it: a kernel without
 * vm.memfd_noexec is an ignored request there, not the runtime's note. */
static void
test_judge_owns_overrides (void **state)
{
  const char *text = "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"r\"},"
                     " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"},"
                     " \"annotations\": {\"run.moat.nofile\": \"100000\"}}";
  struct profile *base = load ("{}", NULL);

  for (int has_memfd = 0; has_memfd < 2; has_memfd++)
    {
      const struct host_facts facts = { .memfd_noexec = has_memfd };
      struct judgement j = { 0 };
      struct spec *s = judge_text (text, base, &facts, &j);

      assert_non_null (j.values);
      assert_int_equal (j.values->nofile, base->nofile);
      assert_true (has_override (&j.overrides, OVERRIDE_IGNORED,
                                 "annotations.run.moat.nofile"));
      assert_int_equal (has_override (&j.overrides, OVERRIDE_IGNORED,
                                      "sysctl.vm.memfd_noexec"),
                        !has_memfd);
      assert_string_equal (spec_annotation (s, SECCOMP_LEVEL_ANNOTATION),
                           "default");
      judgement_clear (&j);
      assert_null (j.values);
      assert_int_equal (j.overrides.n, 0);
      spec_free (s);
    }
  profile_free (base);
}

static bool
has_mount (const struct spec *s, const char *dest)
{
  for (size_t i = 0; i < s->n_mounts; i++)
    if (strcmp (s->mounts[i].destination, dest) == 0)
      return true;
  return false;
}

/* The fact "a read-only rootfs lacks /tmp" (bit 0 of
 * profile_scratch_points) is judged: the profile's /tmp left out and told
 * in the judgement, /var/tmp (which the rootfs has) kept; a /dev/shm inside
 * the container's /dev mount is made there, never left out. */
static void
test_judge_drops_unplaceable_scratch (void **state)
{
  const char *text = "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"r\"},"
                     " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"},"
                     " \"mounts\": [{\"destination\": \"/dev\","
                     " \"type\": \"tmpfs\", \"source\": \"tmpfs\"}]}";
  const struct host_facts facts
      = { .memfd_noexec = true, .scratch_unplaceable = 1u | 4u };
  struct profile *base = load ("{}", NULL);
  struct judgement j = { 0 };
  struct moat_error *err = NULL;
  struct spec *s = NULL;

  assert_string_equal (profile_scratch_points[0], "/tmp");
  assert_string_equal (profile_scratch_points[2], "/dev/shm");
  assert_int_equal (spec_parse (text, strlen (text), &s, &err), 0);
  if (profile_judge (s, base, NULL, &facts, &j, &err) < 0)
    fail_msg ("judge: %s", err->msg);
  assert_false (has_mount (s, "/tmp"));
  assert_true (has_mount (s, "/var/tmp"));
  assert_true (has_mount (s, "/dev/shm"));
  assert_true (has_override (&j.overrides, OVERRIDE_CHANGED, "mounts[/tmp]"));
  assert_false (
      has_override (&j.overrides, OVERRIDE_CHANGED, "mounts[/dev/shm]"));
  judgement_clear (&j);
  spec_free (s);
  profile_free (base);
}

static const struct override *
find_override (const struct override_list *ov, const char *path)
{
  for (size_t i = 0; i < ov->n; i++)
    if (strcmp (ov->v[i].path, path) == 0)
      return &ov->v[i];
  return NULL;
}

/* What the runtime probed about the rootfs before judging (G12: can it be
 * idmapped, or rebuilt from idmapped layers) is judged here: the verdict
 * in the judgement, each fallback an override of the judgement (not one
 * the runtime adds later); none where moat maps no user namespace. */
static void
test_judge_rootfs_idmap (void **state)
{
  const char *plain = "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"r\"},"
                      " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}}";
  const char *mapped
      = "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"r\"},"
        " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"},"
        " \"linux\": {\"namespaces\": [{\"type\": \"user\"}],"
        " \"uidMappings\": [{\"containerID\": 0, \"hostID\": 5000, \"size\": "
        "1}],"
        " \"gidMappings\": [{\"containerID\": 0, \"hostID\": 5000, \"size\": "
        "1}]}}";
  const struct
  {
    const char *config, *spec;
    int direct, rebuild;
    enum profile_rootfs_idmap verdict;
    const char *enforced; /* of "idmap root.path"; NULL: none */
  } cases[] = {
    { "{}", plain, 0, 0, PROFILE_ROOTFS_IDMAP_DIRECT, NULL },
    { "{}", plain, EINVAL, 0, PROFILE_ROOTFS_IDMAP_REBUILT,
      "overlay rebuilt read-only from idmapped layers" },
    { "{}", plain, EINVAL, EOPNOTSUPP, PROFILE_ROOTFS_IDMAP_NONE,
      "not idmapped (Invalid argument): host-owned files show as nobody "
      "(65534) inside" },
    { "{}", plain, EPERM, EPERM, PROFILE_ROOTFS_IDMAP_NONE,
      "not idmapped (Operation not permitted): host-owned files show as "
      "nobody (65534) inside" },
    /* No user namespace moat maps: nothing idmapped, nothing to say. */
    { "{\"userns\": {\"enabled\": false}}", plain, EINVAL, EINVAL,
      PROFILE_ROOTFS_IDMAP_DIRECT, NULL },
    { "{}", mapped, EINVAL, EINVAL, PROFILE_ROOTFS_IDMAP_DIRECT, NULL },
  };

  for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    {
      struct host_facts facts = { .memfd_noexec = true,
                                  .rootfs_idmap_errno = cases[i].direct,
                                  .rootfs_rebuild_errno = cases[i].rebuild };
      struct profile *base = load (cases[i].config, NULL);
      const struct override *o;
      struct judgement j = { 0 };
      struct spec *s = judge_text (cases[i].spec, base, &facts, &j);

      assert_int_equal (j.rootfs_idmap, cases[i].verdict);
      o = find_override (&j.overrides, "idmap root.path");
      if (cases[i].enforced == NULL)
        assert_null (o);
      else
        {
          assert_non_null (o);
          assert_int_equal (o->kind, OVERRIDE_CHANGED);
          assert_string_equal (o->asked, "idmapped");
          assert_string_equal (o->enforced, cases[i].enforced);
        }
      judgement_clear (&j);
      spec_free (s);
      profile_free (base);
    }
}

/* A bind the policy idmaps that the probe found the kernel cannot (an
 * overlay, a filesystem without idmap support): left as it is, and the
 * policy records it. */
static void
test_idmap_possible (void **state)
{
  struct override_list ov = { 0 };
  const struct override *o;

  assert_true (profile_idmap_possible ("/data", 0, &ov));
  assert_int_equal (ov.n, 0);
  assert_false (profile_idmap_possible ("/data", EINVAL, &ov));
  o = find_override (&ov, "idmap /data");
  assert_non_null (o);
  assert_string_equal (o->enforced, "not idmapped (Invalid argument): "
                                    "host-owned files show as nobody (65534) "
                                    "inside");
  override_list_clear (&ov);
}

/* The nameservers create read from resolv.conf before judging are the
 * judgement's (saved with the decision, the guard's port-53 rules): under
 * egress only, and one in a denied range (G2's metadata) is said there, as
 * an override, not by the runtime. */
static void
test_judge_nameservers (void **state)
{
  const char *text = "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"r\"},"
                     " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}}";
  struct host_facts facts = { .memfd_noexec = true, .n_dns = 2 };

  assert_int_equal (cidr_parse ("169.254.169.253", &facts.dns[0]), 0);
  assert_int_equal (cidr_parse ("10.96.0.10", &facts.dns[1]), 0);
  for (int egress = 0; egress < 2; egress++)
    {
      struct profile *base = load ("{}", egress ? "egress" : "strict");
      const struct override *o;
      struct judgement j = { 0 };
      struct spec *s = judge_text (text, base, &facts, &j);

      o = find_override (&j.overrides,
                         "resolv.conf nameserver 169.254.169.253/32");
      if (!egress)
        {
          assert_int_equal (j.n_dns, 0);
          assert_null (o);
        }
      else
        {
          assert_int_equal (j.n_dns, 2);
          assert_true (cidr_contains (&j.dns[1], &facts.dns[1]));
          assert_non_null (o);
          assert_string_equal (
              o->enforced,
              "DNS through it refused: in the denied range 169.254.0.0/16");
          /* A private one gets port 53 all the same (a cluster's DNS),
           * and that is said. */
          o = find_override (&j.overrides,
                             "resolv.conf nameserver 10.96.0.10/32");
          assert_non_null (o);
          assert_int_equal (o->kind, OVERRIDE_ADDED);
          assert_string_equal (o->enforced,
                               "reachable on port 53 only, for DNS (refused "
                               "otherwise: in the private range 10.0.0.0/8)");
        }
      judgement_clear (&j);
      spec_free (s);
      profile_free (base);
    }
}

/* A nameserver written as an IPv6 form of a denied IPv4 address is
 * refused by the guard's programs (they look up the IPv4 address it
 * carries): it is judged as that address, the override said. A public
 * one, in either family, gets no override. */
static void
test_judge_nameservers_other_family (void **state)
{
  const char *text = "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"r\"},"
                     " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}}";
  /* Denied (G2) in an IPv6 form, then public ones. */
  const char *const nameservers[]
      = { "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe",   "2002:a9fe:a9fe::1",
          "::ffff:100.100.100.200", "::ffff:198.51.100.53", "2001:db8::53" };
  struct profile *base = load ("{}", "egress");

  (void)state;
  for (size_t i = 0; i < sizeof (nameservers) / sizeof (*nameservers); i++)
    {
      struct host_facts facts = { .memfd_noexec = true, .n_dns = 1 };
      struct judgement j = { 0 };
      struct spec *s;
      const struct override *o;

      assert_int_equal (cidr_parse (nameservers[i], &facts.dns[0]), 0);
      s = judge_text (text, base, &facts, &j);
      {
        cleanup_free char *ns = cidr_to_string (&facts.dns[0]);
        cleanup_free char *path = xasprintf ("resolv.conf nameserver %s", ns);
        o = find_override (&j.overrides, path);
      }
      if (i >= 4)
        assert_null (o);
      else
        {
          assert_non_null (o);
          assert_int_equal (o->kind, OVERRIDE_CHANGED);
          assert_non_null (strstr (o->enforced, "DNS through it refused: in "
                                                "the denied range "));
        }
      judgement_clear (&j);
      spec_free (s);
    }
  profile_free (base);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_policy_round_trip),
    cmocka_unit_test (test_decision_guard_keeps_metadata_ranges),
    cmocka_unit_test (test_long_lists_named_where_held),
    cmocka_unit_test (test_policy_malformed),
    cmocka_unit_test (test_decision_guard_malformed),
    cmocka_unit_test (test_seccomp_level_verdict),
    cmocka_unit_test (test_bind_source_step),
    cmocka_unit_test (test_ns_join_step),
    cmocka_unit_test (test_apply_returns_effective),
    cmocka_unit_test (test_effective_lists_and_digests),
    cmocka_unit_test (test_judge_owns_overrides),
    cmocka_unit_test (test_judge_drops_unplaceable_scratch),
    cmocka_unit_test (test_judge_rootfs_idmap),
    cmocka_unit_test (test_idmap_possible),
    cmocka_unit_test (test_judge_nameservers),
    cmocka_unit_test (test_judge_nameservers_other_family),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
