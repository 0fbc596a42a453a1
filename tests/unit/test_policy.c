/* The policy a container keeps (policy.json: its effective profile and
 * every override, exactly as create decided them), and the policy's second
 * step, which judges what only the filesystem can tell (a bind source's
 * real path, a namespace to join) into the same override list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../oci/decision.h"
#include "../../policy/profile.h"
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
  if (profile_load (path, name, &p, &err) < 0)
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

static void
assert_same_profile (const struct profile *a, const struct profile *b)
{
  assert_string_equal (a->name, b->name);
  assert_int_equal (a->egress, b->egress);
  assert_int_equal (a->pids_limit, b->pids_limit);
  assert_int_equal (a->memory_limit, b->memory_limit);
  assert_int_equal (a->cpu_quota, b->cpu_quota);
  assert_int_equal (a->cpu_period, b->cpu_period);
  assert_int_equal (a->tmpfs_size, b->tmpfs_size);
  assert_int_equal (a->nofile, b->nofile);
  assert_string_equal (a->audit_log, b->audit_log);
  assert_int_equal (a->n_deny, b->n_deny);
  for (size_t i = 0; i < a->n_deny; i++)
    assert_true (cidr_eq (&a->deny[i], &b->deny[i]));
  for (size_t i = 0; a->credential_env[i] || b->credential_env[i]; i++)
    {
      assert_non_null (a->credential_env[i]);
      assert_non_null (b->credential_env[i]);
      assert_string_equal (a->credential_env[i], b->credential_env[i]);
    }
}

/* The effective profile of a container with annotations, saved and read
 * back: every field the same (a CPU quota no "cpus" string could say
 * exactly included), and the overrides too. */
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
  struct profile *eff = NULL, *back = NULL;
  struct override_list ov = { 0 }, ov_back = { 0 };
  struct moat_error *err = NULL;
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
  json = profile_policy_to_json (eff, &ov, spec, dns, 1);
  assert_null (strchr (json, '\n')); /* one line */
  if (profile_policy_parse (json, strlen (json), &back, &ov_back, &err) < 0)
    fail_msg ("parse: %s", err->msg);
  assert_same_profile (eff, back);
  assert_int_equal (back->userns_first, eff->userns_first);
  assert_int_equal (back->userns_blocks, eff->userns_blocks);
  assert_string_equal (back->userns_pool_dir, eff->userns_pool_dir);
  /* The rest of the decision, read without the policy. */
  if (decision_parse (json, strlen (json), &d, &err) < 0)
    fail_msg ("decision: %s", err->msg);
  assert_string_equal (d->profile_name, "egress");
  assert_int_equal (d->process.nofile, eff->nofile);
  assert_string_equal (d->process.credential_env[0], eff->credential_env[0]);
  assert_string_equal (d->nameservers[0], "10.96.0.10/32");
  assert_null (d->nameservers[1]);
  assert_string_equal (d->userns_pool_dir, eff->userns_pool_dir);
  assert_int_equal (d->resources.pids_limit, 10); /* the annotation's */
  assert_int_equal (d->resources.cpu_quota, 7777);
  assert_int_equal (d->resources.memory_limit, eff->memory_limit);
  assert_int_equal (d->resources.cpu_period, eff->cpu_period);
  spec_text = spec_to_json (spec);
  back_text = spec_to_json (d->spec);
  assert_string_equal (spec_text, back_text);
  free (spec_text);
  free (back_text);
  decision_free (d);
  spec_free (spec);
  assert_int_equal (ov_back.n, 2);
  assert_int_equal (ov_back.v[0].kind, OVERRIDE_CHANGED);
  assert_string_equal (ov_back.v[0].path, "mounts[/mnt].options");
  assert_string_equal (ov_back.v[0].asked, "rbind");
  assert_string_equal (ov_back.v[0].enforced, "rbind,ro");
  assert_int_equal (ov_back.v[1].kind, OVERRIDE_ADDED);
  assert_null (ov_back.v[1].asked);
  free (json);
  override_list_clear (&ov);
  override_list_clear (&ov_back);
  profile_free (back);
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

  assert_int_equal (profile_load_builtin (name, &p, &err), 0);
  assert_int_equal (spec_parse (config, strlen (config), &s, &err), 0);
  text = profile_policy_to_json (p, &ov, s, NULL, 0);
  at = strstr (text, from);
  if (at == NULL)
    fail_msg ("%s not in %s", from, text);
  out = xasprintf ("%.*s%s%s", (int)(at - text), text, to, at + strlen (from));
  free (text);
  spec_free (s);
  profile_free (p);
  return out;
}

/* G2 holds even against a saved file without the metadata ranges. */
static void
test_policy_keeps_metadata_ranges (void **state)
{
  char *text = saved_text ("egress", "\"deny\":[",
                           "\"deny\":[\"10.0.0.0/8\"],\"x\":[");
  struct profile *p = NULL;
  struct moat_error *err = NULL;
  bool metadata = false, ten = false;
  char *deny = strstr (text, "\"deny\":[\"10.0.0.0/8\"]");

  /* Only 10/8 left in the saved list: the rest is moved to "x". */
  assert_non_null (deny);
  if (profile_policy_parse (text, strlen (text), &p, NULL, &err) < 0)
    fail_msg ("parse: %s", err->msg);
  for (size_t i = 0; i < p->n_deny; i++)
    {
      struct cidr c;
      assert_int_equal (cidr_parse ("169.254.0.0/16", &c), 0);
      metadata |= cidr_eq (&p->deny[i], &c);
      assert_int_equal (cidr_parse ("10.0.0.0/8", &c), 0);
      ten |= cidr_eq (&p->deny[i], &c);
    }
  assert_true (metadata);
  assert_true (ten);
  profile_free (p);
  free (text);
}

static void
expect_bad (const char *text, const char *msg_part)
{
  struct profile *p = NULL;
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;

  assert_true (profile_policy_parse (text, strlen (text), &p, &ov, &err) < 0);
  assert_null (p);
  assert_int_equal (ov.n, 0);
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
  expect_bad ("{\"version\": 2, \"profile\": {\"name\": \"lax\", \"egress\": "
              "true}}",
              "unknown profile lax");
  expect_bad_saved ("\"pids_limit\":64", "\"pids_limit\":-1", "pids_limit");
  expect_bad_saved ("\"deny\":[", "\"deny\":[\"nope\",", "deny");
  expect_bad_saved ("\"userns_pool_dir\"", "\"pool\"", "userns_pool_dir");
  expect_bad_saved ("\"overrides\":[]",
                    "\"overrides\":[{\"kind\":\"loosened\",\"path\":\"x\"}]",
                    "overrides[0]");
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
  return profile_harden_bind (m, 9, &f, p, ov, &warning, err);
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
  assert_int_equal (profile_apply_effective (s, base, &eff, &ov, &err), 0);
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

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_policy_round_trip),
    cmocka_unit_test (test_policy_keeps_metadata_ranges),
    cmocka_unit_test (test_policy_malformed),
    cmocka_unit_test (test_bind_source_step),
    cmocka_unit_test (test_ns_join_step),
    cmocka_unit_test (test_apply_returns_effective),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
