/* The operator config (profile_load), profile_to_json, the bind source
 * rules the runtime applies to realpaths, and the size parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "../../oci/json.h"
#include "../../policy/profile.h"
#include "../../policy/profile_internal.h"
#include "../../lib/util.h"

#define MIB (INT64_C (1) << 20)

struct tmpconf
{
  char dir[64];
  char path[96];
};

static void
write_config (struct tmpconf *t, const char *text)
{
  FILE *f;

  snprintf (t->dir, sizeof (t->dir), "/tmp/moat-test-conf-XXXXXX");
  assert_non_null (mkdtemp (t->dir));
  snprintf (t->path, sizeof (t->path), "%s/config.json", t->dir);
  f = fopen (t->path, "we");
  assert_non_null (f);
  fputs (text, f);
  fclose (f);
}

static void
remove_config (struct tmpconf *t)
{
  unlink (t->path);
  rmdir (t->dir);
}

/* profile_load on text; returns the profile or NULL with *ret_msg, and the
 * operator configuration in *ret_config (when not NULL). */
static struct profile *
load_text_config (const char *text, const char *name, char **ret_msg,
                  struct operator_config **ret_config)
{
  struct tmpconf t;
  struct profile *p = NULL;
  struct moat_error *err = NULL;

  write_config (&t, text);
  if (profile_load (t.path, name, &p, ret_config, &err) < 0)
    {
      /* error messages start with the file: keep only what follows */
      const char *rest = strncmp (err->msg, t.path, strlen (t.path)) == 0
                             ? err->msg + strlen (t.path) + 2
                             : err->msg;
      *ret_msg = xstrdup (rest);
      moat_error_free (&err);
    }
  remove_config (&t);
  return p;
}

static struct profile *
load_text (const char *text, const char *name, char **ret_msg)
{
  return load_text_config (text, name, ret_msg, NULL);
}

static void
expect_error (const char *text, const char *msg)
{
  char *got = NULL;
  struct profile *p = load_text (text, NULL, &got);

  if (p != NULL)
    fail_msg ("accepted: %s", text);
  assert_string_equal (got, msg);
  free (got);
}

static bool
has_deny (const struct profile *p, int family, const char *addr, int prefix)
{
  uint8_t want[16] = { 0 };

  assert_int_equal (inet_pton (family, addr, want), 1);
  for (size_t i = 0; i < p->n_deny; i++)
    if (p->deny[i].family == family && p->deny[i].prefix == prefix
        && memcmp (p->deny[i].addr, want, family == AF_INET ? 4 : 16) == 0)
      return true;
  return false;
}

static bool
strv_has (char *const *v, const char *s)
{
  for (size_t i = 0; v && v[i]; i++)
    if (strcmp (v[i], s) == 0)
      return true;
  return false;
}

static void
test_defaults (void **state)
{
  char *msg = NULL;
  struct operator_config *config = NULL;
  struct profile *p = load_text_config ("{}", NULL, &msg, &config);
  struct netguard_rules rules;

  assert_non_null (p);
  assert_string_equal (p->name, "strict");
  assert_false (p->egress);
  assert_int_equal (p->pids_limit, 64);
  assert_int_equal (p->memory_limit, 512 * MIB);
  assert_int_equal (p->cpu_quota, 100000);
  assert_int_equal (p->cpu_period, 100000);
  assert_int_equal (p->tmpfs_size, 64 * MIB);
  assert_int_equal (p->nofile, 1024);
  assert_string_equal (config->audit_log, "/var/log/moat/audit.jsonl");
  operator_config_free (config);
  assert_true (has_deny (p, AF_INET, "169.254.0.0", 16));
  assert_true (has_deny (p, AF_INET6, "fd00:ec2::254", 128));
  assert_true (strv_has (p->credential_env, "AWS_*"));
  profile_netguard_rules (p, NULL, 0, &rules);
  assert_false (rules.egress);
  assert_int_equal (rules.n_deny,
                    4); /* G2: 169.254/16, Alibaba, Azure, fd00:ec2::254 */
  profile_free (p);

  p = load_text ("{}", "egress", &msg);
  assert_true (p->egress);
  assert_true (has_deny (p, AF_INET, "169.254.0.0", 16));
  profile_netguard_rules (p, NULL, 0, &rules);
  assert_true (rules.egress);
  profile_free (p);
}

static void
test_full_config (void **state)
{
  static const char *text
      = "{\"profile\":\"egress\",\"audit_log\":\"/srv/audit/moat.jsonl\","
        "\"limits\":{\"pids\":256,\"memory\":\"2G\",\"cpus\":\"1.5\","
        "\"tmpfs_size\":134217728,\"nofile\":4096},"
        "\"credential_env\":[\"*_TOKEN\"],"
        "\"credential_env_extra\":[\"MY_CORP_*\"],"
        "\"egress_deny\":[\"10.0.0.0/8\",\"fd00::/8\"],"
        "\"profiles\":{\"egress\":{\"limits\":{\"pids\":128},"
        "\"egress_deny\":[\"192.168.0.0/16\"]},"
        "\"strict\":{\"limits\":{\"cpu_period\":50000}}}}";
  char *msg = NULL;
  struct operator_config *config = NULL;
  struct profile *p = load_text_config (text, NULL, &msg, &config);

  assert_non_null (p);
  assert_string_equal (p->name, "egress"); /* the config's default */
  assert_true (p->egress);
  assert_int_equal (p->pids_limit, 128);
  assert_int_equal (p->memory_limit, 2048 * MIB);
  assert_int_equal (p->cpu_quota, 150000);
  assert_int_equal (p->tmpfs_size, 128 * MIB);
  assert_int_equal (p->nofile, 4096);
  assert_string_equal (config->audit_log, "/srv/audit/moat.jsonl");
  operator_config_free (config);
  assert_int_equal (strv_len (p->credential_env), 2);
  assert_true (strv_has (p->credential_env, "MY_CORP_*"));
  assert_true (has_deny (p, AF_INET, "169.254.0.0", 16));
  assert_true (has_deny (p, AF_INET, "10.0.0.0", 8));
  assert_true (has_deny (p, AF_INET, "192.168.0.0", 16));
  assert_true (has_deny (p, AF_INET6, "fd00::", 8));
  profile_free (p);

  /* the flag picks strict, which got the top level but not egress's */
  p = load_text (text, "strict", &msg);
  assert_false (p->egress);
  assert_int_equal (p->pids_limit, 256);
  assert_int_equal (p->cpu_period, 50000);
  assert_int_equal (p->cpu_quota, 75000); /* still 1.5 CPUs */
  assert_false (has_deny (p, AF_INET, "192.168.0.0", 16));
  profile_free (p);
}

/* The shipped example must load, and say what it claims. */
static void
test_example_config (void **state)
{
  struct profile *p = NULL;
  struct moat_error *err = NULL;

  if (profile_load ("contrib/moat-config.example.json", "egress", &p, NULL,
                    &err)
      < 0)
    fail_msg ("example config: %s", err->msg);
  assert_int_equal (p->pids_limit, 128);
  assert_int_equal (p->memory_limit, 1024 * MIB);
  assert_int_equal (p->cpu_quota, 200000);
  assert_true (strv_has (p->credential_env, "VAULT_*"));
  assert_true (strv_has (p->credential_env, "GITHUB_TOKEN"));
  /* The example's egress_deny: the private ranges are built in now. */
  assert_true (has_deny (p, AF_INET, "203.0.113.0", 24));
  assert_true (has_deny (p, AF_INET, "169.254.0.0", 16));
  assert_true (p->n_private >= 10);
  profile_free (p);
  if (profile_load ("contrib/moat-config.example.json", NULL, &p, NULL, &err)
      < 0)
    fail_msg ("example config: %s", err->msg);
  assert_string_equal (p->name, "strict");
  assert_int_equal (p->pids_limit, 64);
  profile_free (p);
}

static void
test_config_errors (void **state)
{
  expect_error ("{\"limits\":{\"pidz\":3}}", "limits.pidz: unknown key");
  expect_error ("{\"color\":\"red\"}", "color: unknown key");
  expect_error ("{\"profiles\":{\"egress\":{\"audit_log\":\"/x\"}}}",
                "profiles.egress.audit_log: unknown key");
  expect_error ("{\"limits\":{\"pids\":-1}}",
                "limits.pids: expected an integer from 1 to 4194304");
  expect_error ("{\"limits\":{\"pids\":\"64\"}}",
                "limits.pids: expected an integer from 1 to 4194304");
  expect_error ("{\"limits\":{\"memory\":\"lots\"}}",
                "limits.memory: expected a size in bytes or with a unit "
                "(\"512M\", \"1G\")");
  expect_error ("{\"limits\":{\"cpus\":0}}",
                "limits.cpus: expected a CPU count (1, 2, or a string like "
                "\"0.5\"), at most 1024");
  expect_error ("{\"egress_deny\":[\"10.0.0.0/8\",\"nowhere\"]}",
                "egress_deny[1]: not a CIDR: \"nowhere\"");
  expect_error ("{\"credential_env\":\"*_TOKEN\"}",
                "credential_env: expected an array of strings");
  expect_error ("{\"audit_log\":\"relative.log\"}",
                "audit_log: expected an absolute path");
  expect_error ("{\"profile\":\"lax\"}",
                "profile: unknown profile lax (known: strict, egress)");
  expect_error ("{\"profiles\":{\"lax\":{}}}",
                "profiles.lax: unknown profile lax (known: strict, egress)");
  /* One scope's egress_deny must not silently replace another's. */
  expect_error ("{\"profiles\":{\"egress\":{\"egress_deny\":[\"10.1.0.0/16\"]},"
                "\"egress\":{\"egress_deny\":[\"10.2.0.0/16\"]}}}",
                "profiles.egress: given twice");
  expect_error ("[]", "top level: expected an object");
  expect_error ("{\"// note\":1,\"limits\":{\"//\":\"x\",\"nofile\":0}}",
                "limits.nofile: expected an integer from 1 to 1073741824");
}

static void
test_load_failures (void **state)
{
  struct profile *p = NULL;
  struct moat_error *err = NULL;
  char *msg = NULL;

  assert_true (
      profile_load ("/nonexistent/moat/config.json", NULL, &p, NULL, &err) < 0);
  assert_string_equal (err->msg, "reading operator config "
                                 "/nonexistent/moat/config.json: No such "
                                 "file or directory");
  moat_error_free (&err);
  assert_null (load_text ("{}", "lax", &msg));
  assert_string_equal (msg, "unknown profile lax (known: strict, egress)");
  free (msg);
  msg = NULL;
  assert_null (load_text ("{\"limits\":", NULL, &msg));
  assert_non_null (msg);
  free (msg);
}

/* The verbs that never judge load the operator configuration alone: the
 * same configuration, profile name and errors as profile_load. */
static void
test_operator_config_alone (void **state)
{
  struct tmpconf t;
  struct operator_config *config = NULL;
  const char *name = NULL;
  struct moat_error *err = NULL;

  write_config (&t, "{\"profile\":\"egress\",\"audit_log\":\"/srv/a.jsonl\","
                    "\"userns\":{\"pool_dir\":\"/srv/pool\"}}");
  assert_int_equal (operator_config_load (t.path, NULL, &config, &name, &err),
                    0);
  assert_string_equal (name, "egress"); /* the config's default */
  assert_string_equal (config->audit_log, "/srv/a.jsonl");
  assert_string_equal (config->userns_pool_dir, "/srv/pool");
  operator_config_free (config);
  assert_int_equal (
      operator_config_load (t.path, "strict", &config, &name, &err), 0);
  assert_string_equal (name, "strict");
  assert_string_equal (config->audit_log, "/srv/a.jsonl");
  operator_config_free (config);
  assert_true (operator_config_load (t.path, "lax", &config, &name, &err) < 0);
  assert_string_equal (err->msg, "unknown profile lax (known: strict, egress)");
  moat_error_free (&err);
  remove_config (&t);
  assert_true (operator_config_load ("/nonexistent/moat/config.json", NULL,
                                     &config, NULL, &err)
               < 0);
  assert_string_equal (err->msg, "reading operator config "
                                 "/nonexistent/moat/config.json: No such "
                                 "file or directory");
  moat_error_free (&err);
  /* The built-in one reads no file. */
  assert_int_equal (operator_config_load_builtin (NULL, &config, &name, &err),
                    0);
  assert_string_equal (name, "strict");
  assert_string_equal (config->audit_log, "/var/log/moat/audit.jsonl");
  operator_config_free (config);
}

static void
test_to_json (void **state)
{
  char *msg = NULL, *text = NULL;
  struct profile *p
      = load_text ("{\"egress_deny\":[\"10.0.0.0/8\"]}", "egress", &msg);
  struct moat_error *err = NULL;
  json_node *root = NULL, *deny, *limits, *network;
  int64_t v;

  assert_int_equal (profile_to_json (p, NULL, &text, &err), 0);
  if (json_parse (text, strlen (text), JSON_MAX_SIZE, &root, &err) < 0)
    fail_msg ("profile_to_json gave bad JSON: %s", err->msg);
  assert_string_equal (json_string (json_get (root, "name")), "egress");
  assert_true (json_bool (json_get (root, "egress")));
  limits = json_get (root, "limits");
  assert_int_equal (json_int64 (json_get (limits, "pids"), &v), 0);
  assert_int_equal (v, 64);
  assert_string_equal (json_string (json_get (limits, "cpus")), "1.000");
  deny = json_get (root, "deny");
  /* G2 grew (SPEC.md): Alibaba's and Azure's addresses. */
  assert_int_equal (json_array_len (deny), 5);
  assert_string_equal (json_string (json_array_get (deny, 0)),
                       "169.254.0.0/16");
  assert_string_equal (json_string (json_array_get (deny, 1)),
                       "100.100.100.200/32");
  assert_string_equal (json_string (json_array_get (deny, 2)),
                       "168.63.129.16/32");
  assert_string_equal (json_string (json_array_get (deny, 3)),
                       "fd00:ec2::254/128");
  assert_string_equal (json_string (json_array_get (deny, 4)), "10.0.0.0/8");
  network = json_get (root, "network");
  assert_string_equal (json_string (json_get (network, "mode")), "public");
  assert_int_equal (json_array_len (json_get (network, "deny")), 5);
  assert_true (json_array_len (json_get (network, "private_refused")) >= 10);
  assert_true (json_array_len (json_get (root, "masked_paths")) >= 10);
  assert_true (json_array_len (json_get (root, "credential_env")) >= 10);
  assert_non_null (strchr (text, '\n')); /* pretty */
  json_free (root);
  free (text);
  profile_free (p);
}

/* What the runtime makes of a bind of path (its realpath), from the bundle
 * /srv/bundle: allowed, and then read-only and noexec or not. */
static void
expect_bind (const struct profile *p, const struct operator_config *cfg,
             const char *path, bool allowed, bool readonly)
{
  struct moat_error *err = NULL;
  int r = profile_check_bind_source (path, p, cfg, &err);
  char *opts[] = { "rbind", "rw", NULL };
  struct spec_mount m = { .options = strv_dup (opts) };
  char *warning = NULL;

  if (allowed && r < 0)
    fail_msg ("%s refused: %s", path, err->msg);
  if (!allowed)
    {
      char want[512];
      if (r == 0)
        fail_msg ("%s allowed", path);
      snprintf (want, sizeof (want),
                "refusing to bind %s into the container (profile strict)",
                path);
      assert_string_equal (err->msg, want);
      moat_error_free (&err);
    }
  struct bind_facts f = { .path = path,
                          .bundle = "/srv/bundle",
                          .rootfs = "/srv/bundle/rootfs" };
  r = profile_harden_bind (&m, 0, &f, p, cfg, NULL, &warning, &err);
  if ((r == 0) != allowed)
    fail_msg ("%s: profile_harden_bind says %d", path, r);
  moat_error_free (&err);
  if (allowed)
    {
      bool ro = false;
      for (size_t i = 0; m.options[i]; i++)
        ro |= strcmp (m.options[i], "ro") == 0;
      if (ro != readonly)
        fail_msg ("%s: read-only should be %d", path, readonly);
    }
  free (warning);
  strv_free (m.options);
}

/* Does a bind of path (asked rw) end up with option opt? */
static bool
bind_gets (const struct profile *p, const struct operator_config *cfg,
           const char *path, const char *opt)
{
  char *opts[] = { "rbind", "rw", NULL };
  struct spec_mount m = { .options = strv_dup (opts) };
  struct bind_facts f = { .path = path, .bundle = "/srv/bundle" };
  struct moat_error *err = NULL;
  char *warning = NULL;
  bool found = false;

  assert_int_equal (
      profile_harden_bind (&m, 0, &f, p, cfg, NULL, &warning, &err), 0);
  for (size_t i = 0; m.options[i]; i++)
    found |= strcmp (m.options[i], opt) == 0;
  free (warning);
  strv_free (m.options);
  return found;
}

/* G13: noexec everywhere but volumes and the host's programs; the
 * operator's noexec_volumes covers volumes too. */
static void
test_bind_noexec (void **state)
{
  char *msg = NULL;
  struct operator_config *cfg = NULL;
  struct profile *p = load_text_config ("{}", NULL, &msg, &cfg);

  assert_false (
      bind_gets (p, cfg, "/var/lib/docker/volumes/v/_data", "noexec"));
  assert_false (bind_gets (
      p, cfg, "/var/lib/kubelet/pods/u/volumes/kubernetes.io~configmap/c",
      "noexec"));
  assert_false (bind_gets (p, cfg, "/usr/bin/docker-init", "noexec"));
  assert_true (
      bind_gets (p, cfg, "/var/lib/docker/containers/c/hosts", "noexec"));
  assert_true (bind_gets (p, cfg, "/srv/bundle/data", "noexec"));
  assert_true (bind_gets (p, cfg, "/home/user", "noexec"));
  assert_true (bind_gets (p, cfg, "/home/user", "ro"));
  profile_free (p);
  operator_config_free (cfg);
  p = load_text_config ("{\"noexec_volumes\": true}", NULL, &msg, &cfg);
  assert_true (bind_gets (p, cfg, "/var/lib/docker/volumes/v/_data", "noexec"));
  assert_false (bind_gets (p, cfg, "/var/lib/docker/volumes/v/_data", "ro"));
  profile_free (p);
  operator_config_free (cfg);
  (void)state;
}

/* create's audit line is written from the field table: every field marked
 * FIELD_AUDIT is there under its profile show key, no other one is, and
 * the network lists carry the nameservers create read. */
static void
test_audit_from_table (void **state)
{
  struct profile *p = NULL;
  struct moat_error *err = NULL;
  struct cidr dns;
  json_node *root = NULL;
  char *text;

  (void)state;
  assert_int_equal (profile_load_builtin ("egress", &p, NULL, &err), 0);
  assert_int_equal (cidr_parse ("10.96.0.10", &dns), 0);
  text = profile_audit_json (p, NULL, &dns, 1);
  assert_int_equal (json_parse (text, strlen (text), 1 << 20, &root, &err), 0);
  for (size_t i = 0; i < profile_n_fields; i++)
    {
      const struct field *f = &profile_fields[i];
      const json_node *v = f->show ? profile_json_member (root, f->show) : NULL;
      if (!(f->flags & FIELD_AUDIT) != (v == NULL))
        fail_msg ("%s: %s in the audit line", f->show ? f->show : f->saved,
                  v ? "wrongly" : "missing");
    }
  assert_string_equal (json_string (json_array_get (
                           json_get (json_get (root, "network"), "dns"), 0)),
                       "10.96.0.10/32:53");
  json_free (root);
  free (text);
  profile_free (p);
}

static void
test_bind_sources (void **state)
{
  char *msg = NULL;
  struct operator_config *cfg = NULL;
  struct profile *p = load_text_config ("{}", NULL, &msg, &cfg);
  struct moat_error *err = NULL;

  expect_bind (p, cfg, "/etc", false, false);
  expect_bind (p, cfg, "/etc/shadow", false, false);
  expect_bind (p, cfg, "/run/docker.sock", false, false);
  expect_bind (p, cfg, "/var/lib/docker/x", false, false);
  /* G5: any other host path is read-only, the bundle writable */
  expect_bind (p, cfg, "/home/user/data", true, true);
  expect_bind (p, cfg, "/srv/bundle/data", true, false);
  expect_bind (p, cfg, "/srv/bundle/rootfs", true, true);
  expect_bind (p, cfg, "/srv/bundle/rootfs/etc", true, true);
  expect_bind (p, cfg, "/srv", true, true);
  expect_bind (p, cfg, "/var/lib/dpkg", true, true);
  expect_bind (p, cfg, "/var/spool/cron", true, true);
  expect_bind (p, cfg, "/run/dbus", false, false);
  expect_bind (p, cfg, "/run/systemd/private", false, false);
  expect_bind (p, cfg, "/run/user/1000", false, false);
  expect_bind (p, cfg, "/run/lock", false, false);
  expect_bind (p, cfg, "/var/run/dbus/system_bus_socket", false, false);
  expect_bind (p, cfg, "/run/systemd/resolve/stub-resolv.conf", true, true);
  expect_bind (p, cfg, "/", false, false);
  expect_bind (p, cfg, "/var", false, false);
  expect_bind (p, cfg, "/var/run", false, false);
  expect_bind (p, cfg, "/run", false, false);
  expect_bind (p, cfg, "/proc/1/root", false, false);
  expect_bind (p, cfg, "/sys/fs/cgroup", false, false);
  expect_bind (p, cfg, "/dev/kvm", false, false);
  expect_bind (p, cfg, "/boot", false, false);
  expect_bind (p, cfg, "/root/.ssh", false, false);
  expect_bind (p, cfg, "/run/containerd/containerd.sock", false, false);
  expect_bind (p, cfg, "/run/user/1000/podman/podman.sock", false, false);
  expect_bind (p, cfg, "/home/user/docker.sock", false, false);
  expect_bind (p, cfg, "/var/lib/kubelet/pki", false, false);
  expect_bind (p, cfg, "/var/log/moat", false, false); /* the audit log */
  expect_bind (p, cfg, "/run/moat", false, false);
  /* the engines' per-container files and volumes */
  expect_bind (p, cfg, "/var/lib/docker/containers/abc/hosts", true, false);
  expect_bind (p, cfg, "/var/lib/docker/containers/abc/mounts/shm", true,
               false);
  expect_bind (p, cfg, "/var/lib/docker/volumes/data/_data/sub", true, false);
  expect_bind (p, cfg, "/var/lib/docker/volumes/data/_data/docker.sock", false,
               false);
  expect_bind (p, cfg, "/var/lib/docker/containers/abc/config.v2.json", false,
               false);
  expect_bind (p, cfg,
               "/run/containers/storage/overlay-containers/abc/userdata/hosts",
               true, false);
  expect_bind (p, cfg,
               "/var/lib/kubelet/pods/uid/volumes/kubernetes.io~secret/t", true,
               false);
  /* host files allowed read-only */
  expect_bind (p, cfg, "/etc/resolv.conf", true, true);
  expect_bind (p, cfg, "/usr/bin/docker-init", true, true);
  expect_bind (p, cfg, "/usr", true, true);
  expect_bind (p, cfg, "/usrlocal", true, true);
  assert_true (profile_check_bind_source ("etc", p, cfg, &err) < 0);
  moat_error_free (&err);
  profile_free (p);
  operator_config_free (cfg);

  /* engine_roots: an engine's data-root elsewhere; writable_bind_trees */
  p = load_text_config ("{\"engine_roots\": {\"docker\": [\"/data/docker\"], "
                        "\"podman\": [\"/run/eng/podman\"]}, "
                        "\"writable_bind_trees\": [\"/srv/shared/\"]}",
                        NULL, &msg, &cfg);
  assert_non_null (p);
  expect_bind (p, cfg, "/data/docker/containers/abc/hosts", true, false);
  expect_bind (p, cfg, "/data/docker/volumes/v/_data/x", true, false);
  expect_bind (p, cfg, "/data/docker/containers/abc/config.v2.json", false,
               false);
  expect_bind (p, cfg, "/data/docker", false, false);
  expect_bind (p, cfg, "/data", false, false);
  expect_bind (p, cfg, "/run/eng/podman/overlay-containers/abc/userdata/hosts",
               true, false);
  expect_bind (p, cfg, "/run/eng/podman/overlay-containers/abc", false, false);
  expect_bind (p, cfg, "/srv/shared/x", true, false);
  expect_bind (p, cfg, "/srv", true, true);
  profile_free (p);
  operator_config_free (cfg);
  assert_null (load_text_config ("{\"engine_roots\": {\"dockr\": [\"/x\"]}}",
                                 NULL, &msg, &cfg));
  assert_non_null (strstr (msg, "engine_roots.dockr: unknown key"));
  free (msg);
  msg = NULL;
  assert_null (load_text_config ("{\"writable_bind_trees\": [\"/\"]}", NULL,
                                 &msg, &cfg));
  free (msg);
}

static void
test_parse_size (void **state)
{
  uint64_t v;

  assert_int_equal (parse_byte_size ("67108864", &v), 0);
  assert_int_equal (v, 64 * MIB);
  assert_int_equal (parse_byte_size ("64m", &v), 0);
  assert_int_equal (v, 64 * MIB);
  assert_int_equal (parse_byte_size ("64MiB", &v), 0);
  assert_int_equal (v, 64 * MIB);
  assert_int_equal (parse_byte_size ("1G", &v), 0);
  assert_int_equal (v, 1024 * MIB);
  assert_int_equal (parse_byte_size ("65536k", &v), 0);
  assert_int_equal (v, 64 * MIB);
  assert_true (parse_byte_size ("", &v) < 0);
  assert_true (parse_byte_size ("-1", &v) < 0);
  assert_true (parse_byte_size ("1x", &v) < 0);
  assert_true (parse_byte_size ("50%", &v) < 0);
  assert_true (parse_byte_size (" 1", &v) < 0);
  assert_true (parse_byte_size ("99999999999999999999", &v) < 0);
  assert_true (parse_byte_size ("99999999999t", &v) < 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_defaults),
    cmocka_unit_test (test_operator_config_alone),
    cmocka_unit_test (test_example_config),
    cmocka_unit_test (test_full_config),
    cmocka_unit_test (test_config_errors),
    cmocka_unit_test (test_load_failures),
    cmocka_unit_test (test_to_json),
    cmocka_unit_test (test_audit_from_table),
    cmocka_unit_test (test_bind_sources),
    cmocka_unit_test (test_bind_noexec),
    cmocka_unit_test (test_parse_size),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
