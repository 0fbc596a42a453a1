/* profile_apply and friends on real engine configs and on a config that
 * asks for everything (tests/fixtures/permissive.config.json). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "../../oci/spec.h"
#include "../../runtime/profile.h"
#include "../../runtime/profile_internal.h"
#include "../../runtime/util.h"

#define FIXTURES "tests/fixtures"
#define MIB (INT64_C (1) << 20)

static const char *const profile_masked[] = {
  "/proc/acpi",          "/proc/asound",
  "/proc/interrupts",    "/proc/kallsyms",
  "/proc/kcore",         "/proc/keys",
  "/proc/latency_stats", "/proc/sched_debug",
  "/proc/scsi",          "/proc/timer_list",
  "/proc/timer_stats",   "/sys/devices/virtual/powercap",
  "/sys/firmware",       NULL,
};
static const char *const profile_readonly[] = {
  "/proc/bus",           "/proc/fs", "/proc/irq", "/proc/sys",
  "/proc/sysrq-trigger", NULL,
};

/* ---- helpers ---- */

static struct profile *
load_profile (const char *name)
{
  char path[] = "/tmp/moat-test-profile-XXXXXX";
  int fd = mkstemp (path);
  struct profile *p = NULL;
  struct moat_error *err = NULL;

  assert_true (fd >= 0);
  assert_int_equal (write (fd, "{}", 2), 2);
  close (fd);
  if (profile_load (path, name, &p, &err) < 0)
    fail_msg ("profile_load: %s", err->msg);
  unlink (path);
  return p;
}

static struct spec *
load_spec (const char *path)
{
  struct spec *s = NULL;
  struct moat_error *err = NULL;
  if (spec_load (path, &s, &err) < 0)
    fail_msg ("spec_load %s: %s", path, err->msg);
  return s;
}

static struct spec *
parse_spec (const char *json)
{
  struct spec *s = NULL;
  struct moat_error *err = NULL;
  if (spec_parse (json, strlen (json), &s, &err) < 0)
    fail_msg ("spec_parse: %s", err->msg);
  return s;
}

static const struct override *
find_override (const struct override_list *ov, enum override_kind kind,
               const char *path)
{
  for (size_t i = 0; i < ov->n; i++)
    if (ov->v[i].kind == kind && strcmp (ov->v[i].path, path) == 0)
      return &ov->v[i];
  return NULL;
}

static const struct override *
find_override_asked (const struct override_list *ov, enum override_kind kind,
                     const char *path, const char *asked)
{
  for (size_t i = 0; i < ov->n; i++)
    if (ov->v[i].kind == kind && strcmp (ov->v[i].path, path) == 0
        && ov->v[i].asked && strcmp (ov->v[i].asked, asked) == 0)
      return &ov->v[i];
  return NULL;
}

static bool
has_option (const struct spec_mount *m, const char *opt)
{
  for (size_t i = 0; m->options && m->options[i]; i++)
    if (strcmp (m->options[i], opt) == 0)
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

static const struct spec_mount *
find_mount (const struct spec *s, const char *dest)
{
  for (size_t i = 0; i < s->n_mounts; i++)
    if (strcmp (s->mounts[i].destination, dest) == 0)
      return &s->mounts[i];
  return NULL;
}

static const struct spec_rlimit *
find_rlimit (const struct spec_process *p, int resource)
{
  for (size_t i = 0; i < p->n_rlimits; i++)
    if (p->rlimits[i].resource == resource)
      return &p->rlimits[i];
  return NULL;
}

static void
remove_mount (struct spec *s, const char *dest)
{
  for (size_t i = 0; i < s->n_mounts; i++)
    if (strcmp (s->mounts[i].destination, dest) == 0)
      {
        spec_mount_clear (&s->mounts[i]);
        memmove (&s->mounts[i], &s->mounts[i + 1],
                 (s->n_mounts - i - 1) * sizeof (s->mounts[0]));
        s->n_mounts--;
        return;
      }
  fail_msg ("no mount at %s", dest);
}

/* What every hardened spec must satisfy, whatever it asked. */
static void
assert_hardened (const struct spec *s, const struct profile *p)
{
  const struct spec_resources *r = &s->linux_.resources;

  assert_true (s->root_readonly);
  assert_true (s->linux_.ns[NS_NET].present);
  assert_true (s->linux_.ns[NS_PID].present);
  assert_true (s->linux_.ns[NS_MOUNT].present);
  if (s->process)
    {
      const struct spec_caps *c = &s->process->caps;
      const struct spec_rlimit *core, *nofile;
      assert_true (c->present);
      assert_true (c->bounding == 0 && c->effective == 0 && c->inheritable == 0
                   && c->permitted == 0 && c->ambient == 0);
      assert_true (s->process->no_new_privileges);
      core = find_rlimit (s->process, RLIMIT_CORE);
      nofile = find_rlimit (s->process, RLIMIT_NOFILE);
      assert_non_null (core);
      assert_true (core->soft == 0 && core->hard == 0);
      assert_non_null (nofile);
      assert_true (nofile->soft <= p->nofile && nofile->hard <= p->nofile);
      assert_false (s->process->has_oom_score_adj
                    && s->process->oom_score_adj < 0);
    }
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      const struct spec_mount *m = &s->mounts[i];
      bool devices = (m->type && strcmp (m->type, "devpts") == 0)
                     || strcmp (m->destination, "/dev") == 0;
      assert_true (has_option (m, "nosuid"));
      assert_false (has_option (m, "suid"));
      if (!devices)
        {
          assert_true (has_option (m, "nodev"));
          assert_false (has_option (m, "dev"));
        }
      if (m->type
          && (strcmp (m->type, "sysfs") == 0
              || strncmp (m->type, "cgroup", 6) == 0))
        {
          assert_true (has_option (m, "ro"));
          assert_false (has_option (m, "rw"));
        }
    }
  for (const char *const *d = (const char *const[]){ "/tmp", "/var/tmp", NULL };
       *d; d++)
    {
      const struct spec_mount *m = find_mount (s, *d);
      assert_non_null (m);
      assert_string_equal (m->type, "tmpfs");
      assert_true (has_option (m, "noexec") && has_option (m, "nodev")
                   && has_option (m, "mode=1777"));
    }
  assert_true (s->linux_.has_resources);
  assert_true (r->has_pids_limit && r->pids_limit > 0
               && r->pids_limit <= p->pids_limit);
  assert_true (r->memory.has_limit && r->memory.limit > 0
               && r->memory.limit <= p->memory_limit);
  assert_true (r->memory.has_swap && r->memory.swap == r->memory.limit);
  assert_true (r->cpu.has_quota && r->cpu.has_period);
  assert_true ((unsigned __int128)r->cpu.quota * p->cpu_period
               <= (unsigned __int128)p->cpu_quota * r->cpu.period);
  /* deny-all, the safe set, then only the config's rules that narrow it:
   * denials, and allowances of safe character devices. */
  assert_true (r->n_devices >= 10);
  assert_false (r->devices[0].allow);
  assert_int_equal (r->devices[0].type, 'a');
  for (size_t i = 1; i < 10; i++)
    assert_true (r->devices[i].allow && r->devices[i].type == 'c');
  for (size_t i = 10; i < r->n_devices; i++)
    assert_true (!r->devices[i].allow
                 || (r->devices[i].type == 'c' && r->devices[i].major >= 0));
  for (size_t i = 0; profile_masked[i]; i++)
    assert_true (strv_has (s->linux_.masked_paths, profile_masked[i]));
  for (size_t i = 0; profile_readonly[i]; i++)
    assert_true (strv_has (s->linux_.readonly_paths, profile_readonly[i]));
}

/* ---- the permissive config ---- */

static void
test_permissive_refuses_dangerous_binds (void **state)
{
  struct profile *p = load_profile (NULL);
  struct spec *s = load_spec (FIXTURES "/permissive.config.json");
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  const struct override *o;

  assert_true (profile_apply (s, p, &ov, &err) < 0);
  assert_non_null (err);
  assert_string_equal (err->msg, "mounts[6]: refusing to bind "
                                 "/var/run/docker.sock into the container "
                                 "(profile strict)");
  o = find_override (&ov, OVERRIDE_REFUSED, "mounts[6]");
  assert_non_null (o);
  assert_string_equal (o->asked, "bind /var/run/docker.sock");
  o = find_override (&ov, OVERRIDE_REFUSED, "mounts[7]");
  assert_non_null (o);
  assert_string_equal (o->asked, "bind /etc");
  moat_error_free (&err);
  override_list_clear (&ov);
  spec_free (s);
  profile_free (p);
}

static void
test_permissive_hardened (void **state)
{
  struct profile *p = load_profile (NULL);
  struct spec *s = load_spec (FIXTURES "/permissive.config.json");
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  const struct spec_resources *r = &s->linux_.resources;
  const struct spec_mount *m;
  const struct override *o;

  remove_mount (s, "/var/run/docker.sock");
  remove_mount (s, "/host-etc");
  if (profile_apply (s, p, &ov, &err) < 0)
    fail_msg ("profile_apply: %s", err->msg);
  assert_hardened (s, p);

  /* G1 */
  assert_null (s->linux_.ns[NS_NET].path);
  assert_non_null (
      find_override (&ov, OVERRIDE_ADDED, "linux.namespaces.network"));
  /* G12: a user namespace moat maps itself (no mappings in the spec). */
  assert_true (s->linux_.ns[NS_USER].present);
  assert_null (s->linux_.ns[NS_USER].path);
  assert_int_equal (s->linux_.n_uid_mappings, 0);
  assert_non_null (
      find_override (&ov, OVERRIDE_ADDED, "linux.namespaces.user"));
  /* G3: every set reported, with what it held */
  for (const char *const *set
       = (const char *const[]){ "bounding", "effective", "inheritable",
                                "permitted", "ambient", NULL };
       *set; set++)
    {
      char path[64];
      snprintf (path, sizeof (path), "process.capabilities.%s", *set);
      o = find_override (&ov, OVERRIDE_REMOVED, path);
      assert_non_null (o);
      assert_non_null (strstr (o->asked, "CAP_SYS_ADMIN"));
      assert_non_null (strstr (o->asked, "CAP_CHECKPOINT_RESTORE"));
    }
  /* G4, G5 */
  assert_non_null (
      find_override (&ov, OVERRIDE_CHANGED, "process.noNewPrivileges"));
  assert_non_null (find_override (&ov, OVERRIDE_CHANGED, "root.readonly"));
  m = find_mount (s, "/sys");
  assert_true (has_option (m, "ro") && !has_option (m, "rw"));
  m = find_mount (s, "/data");
  assert_true (has_option (m, "nosuid") && has_option (m, "nodev")
               && !has_option (m, "suid") && !has_option (m, "dev"));
  m = find_mount (s, "/dev");
  assert_false (has_option (m, "nodev")); /* device nodes live there */
  /* G6: /tmp capped from 10g, /var/tmp added, /dev/shm capped from 1g */
  m = find_mount (s, "/tmp");
  assert_true (has_option (m, "size=67108864"));
  assert_false (has_option (m, "size=10g") || has_option (m, "exec"));
  o = find_override (&ov, OVERRIDE_CHANGED, "mounts[5]");
  assert_non_null (o);
  assert_non_null (strstr (o->asked, "size=10g"));
  assert_non_null (find_override (&ov, OVERRIDE_ADDED, "mounts[/var/tmp]"));
  m = find_mount (s, "/dev/shm");
  assert_true (has_option (m, "size=67108864") && !has_option (m, "size=1g"));
  /* G7 */
  assert_int_equal (r->pids_limit, 64);
  assert_int_equal (r->memory.limit, 512 * MIB);
  assert_int_equal (r->memory.swap, 512 * MIB);
  assert_int_equal (r->cpu.quota, 100000);
  assert_int_equal (r->cpu.period, 100000);
  o = find_override (&ov, OVERRIDE_CHANGED, "linux.resources.pids.limit");
  assert_string_equal (o->asked, "100000");
  assert_string_equal (o->enforced, "64");
  o = find_override (&ov, OVERRIDE_CHANGED, "linux.resources.memory.swap");
  assert_string_equal (o->asked, "unlimited");
  assert_int_equal (r->n_unified, 1);
  assert_string_equal (r->unified[0].key, "memory.high");
  assert_non_null (find_override (&ov, OVERRIDE_REMOVED,
                                  "linux.resources.unified.pids.max"));
  o = find_override (&ov, OVERRIDE_CHANGED, "linux.resources.devices");
  assert_string_equal (o->asked, "a *:* rwm");
  assert_int_equal (find_rlimit (s->process, RLIMIT_NOFILE)->hard, 1024);
  assert_int_equal (find_rlimit (s->process, RLIMIT_NPROC)->hard, 4096);
  assert_non_null (
      find_override (&ov, OVERRIDE_ADDED, "process.rlimits.RLIMIT_CORE"));
  assert_int_equal (s->process->oom_score_adj, 0);
  /* devices, sysctl, seccomp */
  assert_int_equal (s->linux_.n_devices, 1);
  assert_string_equal (s->linux_.devices[0].path, "/dev/null");
  o = find_override (&ov, OVERRIDE_REMOVED, "linux.devices");
  assert_non_null (strstr (o->asked, "/dev/kvm"));
  assert_non_null (strstr (o->asked, "/dev/sda"));
  assert_int_equal (s->linux_.n_sysctl, 2);
  assert_non_null (find_override (&ov, OVERRIDE_REMOVED,
                                  "linux.sysctl.kernel.core_pattern"));
  assert_non_null (find_override (&ov, OVERRIDE_ADDED, "linux.seccomp"));
  /* G10: names gone and reported, values nowhere */
  assert_int_equal (strv_len (s->process->env), 5);
  assert_true (strv_has (s->process->env, "HOSTNAME=permissive"));
  for (const char *const *n
       = (const char *const[]){ "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN",
                                "DB_PASSWORD", NULL };
       *n; n++)
    assert_non_null (
        find_override_asked (&ov, OVERRIDE_REMOVED, "process.env", *n));
  for (size_t i = 0; i < ov.n; i++)
    for (const char *const *v
         = (const char *const[]){ "x-aws-secret-value", "y-github-token-value",
                                  "z-db-password-value", NULL };
         *v; v++)
      {
        assert_null (ov.v[i].asked ? strstr (ov.v[i].asked, *v) : NULL);
        assert_null (ov.v[i].enforced ? strstr (ov.v[i].enforced, *v) : NULL);
      }
  override_list_clear (&ov);
  spec_free (s);
  profile_free (p);
}

/* ---- the engines' own configs ---- */

static void
test_engine_samples (void **state)
{
  struct profile *p = load_profile (NULL);
  DIR *d = opendir (FIXTURES);
  struct dirent *e;
  int n = 0;

  assert_non_null (d);
  while ((e = readdir (d)))
    {
      char path[512];
      struct spec *s;
      struct override_list ov = { 0 };
      struct moat_error *err = NULL;
      size_t len = strlen (e->d_name);

      if (len < 12 || strcmp (e->d_name + len - 12, ".config.json") != 0
          || strncmp (e->d_name, "permissive", 10) == 0)
        continue;
      snprintf (path, sizeof (path), FIXTURES "/%s", e->d_name);
      s = load_spec (path);
      if (profile_apply (s, p, &ov, &err) < 0)
        fail_msg ("%s: %s", e->d_name, err->msg);
      assert_hardened (s, p);
      override_list_clear (&ov);
      spec_free (s);
      n++;
    }
  closedir (d);
  assert_true (n >= 15);
  profile_free (p);
}

static struct spec *
apply_fixture (const char *name, const struct profile *p,
               struct override_list *ov)
{
  char path[512];
  struct spec *s;
  struct moat_error *err = NULL;

  snprintf (path, sizeof (path), FIXTURES "/%s", name);
  s = load_spec (path);
  if (profile_apply (s, p, ov, &err) < 0)
    fail_msg ("%s: %s", name, err->msg);
  return s;
}

/* Tighter values of config.json are kept, looser ones capped. */
static void
test_docker_resources_kept (void **state)
{
  struct profile *p = load_profile (NULL);
  struct override_list ov = { 0 };
  struct spec *s = apply_fixture (
      "docker.19.docker-run-with-resources-user-readonly-tmpfs-volume-init-"
      "ca.config.json",
      p, &ov);
  const struct spec_resources *r = &s->linux_.resources;
  const struct spec_rlimit *nofile = find_rlimit (s->process, RLIMIT_NOFILE);

  assert_int_equal (r->pids_limit, 50);
  assert_int_equal (r->memory.limit, 64 * MIB);
  assert_int_equal (r->memory.swap, 64 * MIB);
  assert_int_equal (r->cpu.quota, 50000);
  assert_null (
      find_override (&ov, OVERRIDE_CHANGED, "linux.resources.pids.limit"));
  assert_int_equal (nofile->soft, 1024);
  assert_int_equal (nofile->hard, 1024);
  /* the engine's files under /var/lib/docker stay bound */
  assert_non_null (find_mount (s, "/etc/resolv.conf"));
  /* /usr/bin/docker-init: host programs are bound read-only */
  assert_true (has_option (find_mount (s, "/sbin/docker-init"), "ro"));
  override_list_clear (&ov);
  spec_free (s);
  profile_free (p);
}

static void
test_ctr_net_host_privileged (void **state)
{
  struct profile *p = load_profile (NULL);
  struct override_list ov = { 0 };
  struct spec *s = apply_fixture (
      "ctr.17.ctr-run-rm-net-host-privileged.config.json", p, &ov);

  assert_true (s->linux_.ns[NS_NET].present);
  assert_non_null (
      find_override (&ov, OVERRIDE_ADDED, "linux.namespaces.network"));
  /* the host's /etc/hosts is allowed, but never writable */
  assert_true (has_option (find_mount (s, "/etc/hosts"), "ro"));
  assert_true (has_option (find_mount (s, "/etc/resolv.conf"), "ro"));
  assert_int_equal (s->linux_.n_devices, 7);
  assert_non_null (find_override (&ov, OVERRIDE_REMOVED, "linux.devices"));
  override_list_clear (&ov);
  spec_free (s);
  profile_free (p);
}

/* ---- annotations ---- */

static struct spec *
spec_with (const char *mounts, const char *annotations, const char *linux_)
{
  char *json
      = xasprintf ("{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
                   "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
                   "\"mounts\":[%s],\"annotations\":{%s},\"linux\":{%s}}",
                   mounts, annotations, linux_);
  struct spec *s = parse_spec (json);
  free (json);
  return s;
}

static void
test_annotations_tighten_never_loosen (void **state)
{
  struct profile *p = load_profile (NULL);
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  struct spec *s = spec_with (
      "",
      "\"run.moat.pids-limit\":\"10\",\"run.moat.memory-limit\":\"128M\","
      "\"run.moat.cpus\":\"0.5\",\"run.moat.tmpfs-size\":\"8m\","
      "\"run.moat.nofile\":\"100000\",\"run.moat.bogus\":\"1\","
      "\"run.moat.profile\":\"egress\"",
      "");
  const struct spec_resources *r = &s->linux_.resources;

  assert_int_equal (profile_apply (s, p, &ov, &err), 0);
  assert_int_equal (r->pids_limit, 10);
  assert_int_equal (r->memory.limit, 128 * MIB);
  assert_int_equal (r->cpu.quota, 50000);
  assert_true (has_option (find_mount (s, "/tmp"), "size=8388608"));
  assert_int_equal (find_rlimit (s->process, RLIMIT_NOFILE)->hard, 1024);
  assert_non_null (
      find_override (&ov, OVERRIDE_CHANGED, "annotations.run.moat.pids-limit"));
  assert_non_null (
      find_override (&ov, OVERRIDE_IGNORED, "annotations.run.moat.nofile"));
  assert_non_null (
      find_override (&ov, OVERRIDE_IGNORED, "annotations.run.moat.bogus"));
  assert_non_null (
      find_override (&ov, OVERRIDE_IGNORED, "annotations.run.moat.profile"));
  /* the profile itself is untouched */
  assert_int_equal (p->pids_limit, 64);
  override_list_clear (&ov);
  spec_free (s);

  s = spec_with ("",
                 "\"run.moat.pids-limit\":\"1000\","
                 "\"run.moat.memory-limit\":\"lots\","
                 "\"run.moat.cpus\":\"-1\"",
                 "\"resources\":{\"pids\":{\"limit\":50}}");
  assert_int_equal (profile_apply (s, p, &ov, &err), 0);
  assert_int_equal (s->linux_.resources.pids_limit, 50);
  assert_int_equal (s->linux_.resources.memory.limit, 512 * MIB);
  assert_int_equal (s->linux_.resources.cpu.quota, 100000);
  assert_non_null (
      find_override (&ov, OVERRIDE_IGNORED, "annotations.run.moat.pids-limit"));
  assert_non_null (find_override (&ov, OVERRIDE_IGNORED,
                                  "annotations.run.moat.memory-limit"));
  assert_non_null (
      find_override (&ov, OVERRIDE_IGNORED, "annotations.run.moat.cpus"));
  override_list_clear (&ov);
  spec_free (s);
  profile_free (p);
}

static void
test_annotation_profile_strict_only (void **state)
{
  struct profile *egress = load_profile ("egress"), *e = NULL;
  struct profile *strict = load_profile ("strict");
  struct spec_kv to_strict = { "run.moat.profile", "strict" };
  struct spec_kv to_egress = { "run.moat.profile", "egress" };
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  struct netguard_rules rules;

  assert_int_equal (profile_effective (egress, &to_strict, 1, &e, &ov, &err),
                    0);
  assert_false (e->egress);
  assert_string_equal (e->name, "strict");
  profile_netguard_rules (e, NULL, 0, &rules);
  assert_false (rules.egress);
  profile_free (e);
  assert_int_equal (profile_effective (strict, &to_egress, 1, &e, &ov, &err),
                    0);
  assert_false (e->egress);
  assert_non_null (
      find_override (&ov, OVERRIDE_IGNORED, "annotations.run.moat.profile"));
  profile_free (e);
  override_list_clear (&ov);
  profile_free (egress);
  profile_free (strict);
}

/* ---- namespaces, mounts, sysctl edge cases ---- */

static void
test_host_namespace_paths (void **state)
{
  struct profile *p = load_profile (NULL);
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  struct spec *s = spec_with (
      "", "",
      "\"namespaces\":[{\"type\":\"network\",\"path\":\"/proc/1/ns/net\"},"
      "{\"type\":\"pid\",\"path\":\"/proc/1234/ns/pid\"},{\"type\":\"ipc\"},"
      "{\"type\":\"uts\"},{\"type\":\"mount\"}]");

  assert_int_equal (profile_apply (s, p, &ov, &err), 0);
  assert_true (s->linux_.ns[NS_NET].present);
  assert_null (s->linux_.ns[NS_NET].path);
  assert_string_equal (s->linux_.ns[NS_PID].path, "/proc/1234/ns/pid");
  assert_non_null (
      find_override (&ov, OVERRIDE_CHANGED, "linux.namespaces.network"));
  assert_int_equal (profile_check_ns_join (NS_NET, 1, 2, 1, 3, p, &err), 0);
  assert_true (profile_check_ns_join (NS_NET, 1, 2, 1, 2, p, &err) < 0);
  assert_string_equal (err->msg, "refusing to join the host's network "
                                 "namespace (profile strict)");
  moat_error_free (&err);
  /* G12: the host's user namespace would make container root host root. */
  assert_int_equal (profile_check_ns_join (NS_USER, 1, 2, 1, 2, p, &err), -1);
  assert_string_equal (err->msg,
                       "refusing to join the host's user namespace: container "
                       "root would be host root (G12, profile strict)");
  moat_error_free (&err);
  override_list_clear (&ov);
  spec_free (s);
  profile_free (p);
}

static void
expect_mount_refused (const struct profile *p, const char *mount,
                      const char *msg)
{
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  struct spec *s = spec_with (mount, "", "");

  assert_true (profile_apply (s, p, &ov, &err) < 0);
  assert_string_equal (err->msg, msg);
  assert_non_null (find_override (&ov, OVERRIDE_REFUSED, "mounts[0]"));
  moat_error_free (&err);
  override_list_clear (&ov);
  spec_free (s);
}

static void
test_mounts_refused (void **state)
{
  struct profile *p = load_profile (NULL);

  expect_mount_refused (
      p,
      "{\"destination\":\"/x\",\"type\":\"bind\",\"source\":"
      "\"//var//run/./docker.sock\",\"options\":[\"rbind\"]}",
      "mounts[0]: refusing to bind //var//run/./docker.sock into the "
      "container (profile strict)");
  expect_mount_refused (
      p,
      "{\"destination\":\"/x\",\"type\":\"none\",\"source\":"
      "\"/home/user/../../etc\",\"options\":[\"bind\"]}",
      "mounts[0]: refusing to bind /home/user/../../etc into the container "
      "(profile strict)");
  expect_mount_refused (p,
                        "{\"destination\":\"/x\",\"type\":\"bind\","
                        "\"source\":\"/var/lib\"}",
                        "mounts[0]: refusing to bind /var/lib into the "
                        "container (profile strict)");
  expect_mount_refused (p,
                        "{\"destination\":\"/sys/fs/bpf\",\"type\":\"bpf\","
                        "\"source\":\"bpf\"}",
                        "mounts[0]: refusing mount type bpf at /sys/fs/bpf "
                        "(profile strict)");
  expect_mount_refused (p,
                        "{\"destination\":\"/mnt\",\"type\":\"nfs\","
                        "\"source\":\"10.0.0.1:/export\"}",
                        "mounts[0]: refusing mount type nfs at /mnt "
                        "(profile strict)");
  /* G5: pseudo filesystems only at their own place; nothing over or in
   * /proc and /sys; no remount or move. */
  {
    static const char *const mounts[] = {
      "{\"destination\":\"/mnt/proc2\",\"type\":\"proc\",\"source\":\"proc\"}",
      "{\"destination\":\"//proc/../mnt/p\",\"type\":\"proc\"}",
      "{\"destination\":\"/host-sys\",\"type\":\"sysfs\"}",
      "{\"destination\":\"/cg\",\"type\":\"cgroup2\"}",
      "{\"destination\":\"/tmp/mq\",\"type\":\"mqueue\"}",
      "{\"destination\":\"/pts2\",\"type\":\"devpts\"}",
      "{\"destination\":\"/proc/sys\",\"type\":\"tmpfs\"}",
      "{\"destination\":\"/proc\",\"type\":\"tmpfs\"}",
      "{\"destination\":\"//proc//kcore\",\"type\":\"bind\","
      "\"source\":\"/srv/x\"}",
      "{\"destination\":\"/sys/kernel\",\"type\":\"tmpfs\"}",
      "{\"destination\":\"/\",\"type\":\"tmpfs\"}",
      "{\"destination\":\"/x\",\"type\":\"tmpfs\",\"options\":[\"remount\"]}",
      NULL,
    };
    for (size_t i = 0; mounts[i]; i++)
      {
        struct override_list ov = { 0 };
        struct moat_error *err = NULL;
        struct spec *s = spec_with (mounts[i], "", "");
        if (profile_apply (s, p, &ov, &err) == 0)
          fail_msg ("allowed: %s", mounts[i]);
        assert_true (strncmp (err->msg, "mounts[0]: refusing ", 20) == 0);
        assert_non_null (find_override (&ov, OVERRIDE_REFUSED, "mounts[0]"));
        moat_error_free (&err);
        override_list_clear (&ov);
        spec_free (s);
      }
  }
  expect_mount_refused (p,
                        "{\"destination\":\"/mnt/proc2\",\"type\":\"proc\","
                        "\"source\":\"proc\"}",
                        "mounts[0]: refusing a proc mount at /mnt/proc2 "
                        "(profile strict): pseudo filesystems only at their "
                        "own place (proc at /proc, sysfs at /sys, cgroup at "
                        "/sys/fs/cgroup, mqueue at /dev/mqueue, devpts at "
                        "/dev/pts)");
  profile_free (p);
}

/* A bind at /tmp becomes the scratch tmpfs; a tmpfs asking less keeps it. */
static void
test_scratch_tmpfs (void **state)
{
  struct profile *p = load_profile (NULL);
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  struct spec *s = spec_with (
      "{\"destination\":\"/tmp/\",\"type\":\"bind\",\"source\":\"/srv/x\","
      "\"options\":[\"rbind\"]},{\"destination\":\"/var/tmp\",\"type\":"
      "\"tmpfs\",\"source\":\"tmpfs\",\"options\":[\"size=1m\"]},"
      "{\"destination\":\"/var/tmp/sub\",\"type\":\"tmpfs\","
      "\"source\":\"tmpfs\"}",
      "", "");

  assert_int_equal (profile_apply (s, p, &ov, &err), 0);
  assert_int_equal (s->n_mounts, 3);
  assert_string_equal (s->mounts[0].type, "tmpfs");
  assert_true (has_option (&s->mounts[0], "size=67108864"));
  assert_non_null (find_override (&ov, OVERRIDE_CHANGED, "mounts[0]"));
  assert_true (has_option (&s->mounts[1], "size=1m"));
  assert_true (has_option (&s->mounts[1], "noexec"));
  override_list_clear (&ov);
  spec_free (s);

  /* added /tmp goes before the mounts below it */
  s = spec_with ("{\"destination\":\"/tmp/.X11-unix\",\"type\":\"bind\","
                 "\"source\":\"/srv/x11\",\"options\":[\"rbind\"]}",
                 "", "");
  assert_int_equal (profile_apply (s, p, &ov, &err), 0);
  assert_string_equal (s->mounts[0].destination, "/tmp");
  assert_string_equal (s->mounts[1].destination, "/tmp/.X11-unix");
  assert_string_equal (s->mounts[2].destination, "/var/tmp");
  override_list_clear (&ov);
  spec_free (s);
  profile_free (p);
}

static void
test_sysctl_names (void **state)
{
  struct profile *p = load_profile (NULL);
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  struct spec *s = spec_with (
      "", "",
      "\"sysctl\":{\"net/../kernel/core_pattern\":\"x\",\"net..a\":\"1\","
      "\"fs.mqueue.msg_max\":\"10\",\"kernel.sem\":\"1 2 3 4\","
      "\"kernel.hostname\":\"x\",\"vm.overcommit_memory\":\"1\"}");

  assert_int_equal (profile_apply (s, p, &ov, &err), 0);
  assert_int_equal (s->linux_.n_sysctl, 2);
  assert_string_equal (s->linux_.sysctl[0].key, "fs.mqueue.msg_max");
  assert_string_equal (s->linux_.sysctl[1].key, "kernel.sem");
  assert_non_null (find_override (&ov, OVERRIDE_REMOVED,
                                  "linux.sysctl.net/../kernel/core_pattern"));
  override_list_clear (&ov);
  spec_free (s);
  profile_free (p);
}

/* ---- exec and update ---- */

static void
test_apply_process (void **state)
{
  struct profile *p = load_profile (NULL);
  static const char *const names[] = {
    "docker.03.docker-exec.process.json",
    "docker.05.docker-exec-u-1-1-w-tmp-e-X-1.process.json",
    "podman.03.podman-exec.process.json",
    "ctr.03.ctr-task-exec.process.json",
    NULL,
  };

  for (size_t i = 0; names[i]; i++)
    {
      char path[512];
      char *text = NULL;
      size_t len;
      struct spec_process *proc = NULL;
      struct override_list ov = { 0 };
      struct moat_error *err = NULL;

      snprintf (path, sizeof (path), FIXTURES "/%s", names[i]);
      assert_int_equal (read_file_at (AT_FDCWD, path, 1 << 20, &text, &len), 0);
      if (spec_process_parse (text, len, &proc, &err) < 0)
        fail_msg ("%s: %s", names[i], err->msg);
      strv_append (&proc->env, "NPM_TOKEN=secret");
      assert_int_equal (profile_apply_process (proc, p, &ov, &err), 0);
      assert_true (proc->caps.present && proc->caps.bounding == 0
                   && proc->caps.effective == 0 && proc->caps.permitted == 0);
      assert_true (proc->no_new_privileges);
      assert_int_equal (find_rlimit (proc, RLIMIT_CORE)->hard, 0);
      assert_true (find_rlimit (proc, RLIMIT_NOFILE)->hard <= 1024);
      assert_false (strv_has (proc->env, "NPM_TOKEN=secret"));
      override_list_clear (&ov);
      spec_process_free (proc);
      free (text);
    }
  profile_free (p);
}

static void
test_apply_resources_update (void **state)
{
  struct profile *p = load_profile (NULL);
  static const char *update_json
      = "{\"memory\":{\"limit\":68719476736,\"swap\":137438953472},"
        "\"cpu\":{\"quota\":50000,\"period\":100000},\"pids\":{\"limit\":100}}";
  struct spec_resources r = { 0 };
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;

  if (spec_resources_parse (update_json, strlen (update_json), &r, &err) < 0)
    fail_msg ("spec_resources_parse: %s", err->msg);
  assert_int_equal (profile_apply_resources (&r, p, &ov, &err), 0);
  assert_int_equal (r.pids_limit, 64);
  assert_int_equal (r.memory.limit, 512 * MIB);
  assert_int_equal (r.memory.swap, 512 * MIB);
  assert_int_equal (r.cpu.quota, 50000);
  assert_int_equal (r.n_devices, 0); /* update leaves device rules alone */
  spec_resources_clear (&r);
  override_list_clear (&ov);

  /* absent stays absent; a lone period cannot raise the CPU share */
  memset (&r, 0, sizeof (r));
  r.cpu.has_period = true;
  r.cpu.period = 10000;
  assert_int_equal (profile_apply_resources (&r, p, &ov, &err), 0);
  assert_false (r.has_pids_limit || r.memory.has_limit);
  assert_true (r.cpu.has_quota);
  assert_int_equal (r.cpu.quota, 10000);
  spec_resources_clear (&r);
  override_list_clear (&ov);
  profile_free (p);
}

/* Issue 15, G7: hugepageLimits are parsed, and no page size gets more
 * than the memory limit, asked in hugepageLimits or in unified. */
static void
test_hugepage_limits_capped (void **state)
{
  struct profile *p = load_profile (NULL);
  static const char *json
      = "{\"memory\":{\"limit\":104857600},"
        "\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194304},"
        "{\"pageSize\":\"1GB\",\"limit\":2147483648}],"
        "\"unified\":{\"hugetlb.2MB.max\":\"max\","
        "\"hugetlb.1GB.rsvd.max\":\"1048576\"}}";
  static const char *bad[]
      = { "{\"hugepageLimits\":[{\"pageSize\":\"../x\",\"limit\":1}]}",
          "{\"hugepageLimits\":[{\"pageSize\":\"2MB\"}]}",
          "{\"hugepageLimits\":[{\"pageSize\":\"02MB\",\"limit\":1}]}",
          "{\"hugepageLimits\":[{\"pageSize\":\"2mb\",\"limit\":1}]}",
          "{\"hugepageLimits\":[{\"limit\":1}]}" };
  struct spec_resources r = { 0 };
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  const struct override *o;
  (void)state;

  if (spec_resources_parse (json, strlen (json), &r, &err) < 0)
    fail_msg ("spec_resources_parse: %s", err->msg);
  assert_int_equal (profile_apply_resources (&r, p, &ov, &err), 0);
  assert_int_equal (r.n_hugepage_limits, 2);
  assert_string_equal (r.hugepage_limits[0].page_size, "2MB");
  assert_int_equal (r.hugepage_limits[0].limit, 4194304);
  assert_int_equal (r.hugepage_limits[1].limit, 104857600);
  o = find_override (&ov, OVERRIDE_CHANGED,
                     "linux.resources.hugepageLimits[1GB]");
  assert_non_null (o);
  assert_string_equal (o->asked, "2147483648");
  assert_string_equal (o->enforced, "104857600");
  assert_null (find_override (&ov, OVERRIDE_CHANGED,
                              "linux.resources.hugepageLimits[2MB]"));
  assert_int_equal (r.n_unified, 2);
  for (size_t i = 0; i < r.n_unified; i++)
    if (strcmp (r.unified[i].key, "hugetlb.2MB.max") == 0)
      assert_string_equal (r.unified[i].value, "104857600");
    else
      assert_string_equal (r.unified[i].value, "1048576");
  o = find_override (&ov, OVERRIDE_CHANGED,
                     "linux.resources.unified.hugetlb.2MB.max");
  assert_non_null (o);
  assert_string_equal (o->asked, "max");
  spec_resources_clear (&r);
  override_list_clear (&ov);

  /* An update without a memory limit: the profile's is the cap. */
  memset (&r, 0, sizeof (r));
  json = "{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":"
         "1099511627776}]}";
  if (spec_resources_parse (json, strlen (json), &r, &err) < 0)
    fail_msg ("spec_resources_parse: %s", err->msg);
  assert_int_equal (profile_apply_resources (&r, p, &ov, &err), 0);
  assert_int_equal (r.hugepage_limits[0].limit, 512 * MIB);
  spec_resources_clear (&r);
  override_list_clear (&ov);

  for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
    {
      memset (&r, 0, sizeof (r));
      assert_true (spec_resources_parse (bad[i], strlen (bad[i]), &r, &err)
                   < 0);
      assert_non_null (strstr (err->msg, "hugepageLimits[0]"));
      moat_error_free (&err);
      spec_resources_clear (&r);
    }
  profile_free (p);
}

/* Issue 15: the config's device rules narrow the profile's set (a denial
 * of a safe device holds) and never widen it. */
static void
test_device_rules_narrow_never_widen (void **state)
{
  struct profile *p = load_profile (NULL);
  static const char *json
      = "{\"devices\":[{\"allow\":false,\"access\":\"rwm\"},"
        "{\"allow\":true,\"type\":\"c\",\"major\":1,\"minor\":9,"
        "\"access\":\"rwm\"},"
        "{\"allow\":false,\"type\":\"c\",\"major\":1,\"minor\":9,"
        "\"access\":\"w\"},"
        "{\"allow\":true,\"type\":\"c\",\"major\":10,\"minor\":229,"
        "\"access\":\"rwm\"},"
        "{\"allow\":false,\"type\":\"c\",\"major\":1,\"minor\":5,"
        "\"access\":\"rwm\"}]}";
  struct spec_resources r = { 0 };
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  const struct override *o;
  size_t base = profile_n_safe_devices + 1;
  (void)state;

  if (spec_resources_parse (json, strlen (json), &r, &err) < 0)
    fail_msg ("spec_resources_parse: %s", err->msg);
  assert_int_equal (profile_apply_resources (&r, p, &ov, &err), 0);
  /* deny-all + safe set, then allow 1:9, deny 1:9 w, deny 1:5; the
   * leading deny-all is not repeated and 10:229 is not allowed. */
  assert_int_equal (r.n_devices, base + 3);
  assert_false (r.devices[0].allow);
  assert_true (r.devices[base].allow && r.devices[base].major == 1
               && r.devices[base].minor == 9);
  assert_false (r.devices[base + 1].allow);
  assert_string_equal (r.devices[base + 1].access, "w");
  assert_false (r.devices[base + 2].allow);
  assert_int_equal (r.devices[base + 2].minor, 5);
  for (size_t i = 0; i < r.n_devices; i++)
    assert_false (r.devices[i].allow && r.devices[i].major == 10);
  o = find_override (&ov, OVERRIDE_CHANGED, "linux.resources.devices");
  assert_non_null (o);
  assert_string_equal (o->asked, "c 10:229 rwm");
  spec_resources_clear (&r);
  override_list_clear (&ov);
  profile_free (p);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_device_rules_narrow_never_widen),
    cmocka_unit_test (test_hugepage_limits_capped),
    cmocka_unit_test (test_permissive_refuses_dangerous_binds),
    cmocka_unit_test (test_permissive_hardened),
    cmocka_unit_test (test_engine_samples),
    cmocka_unit_test (test_docker_resources_kept),
    cmocka_unit_test (test_ctr_net_host_privileged),
    cmocka_unit_test (test_annotations_tighten_never_loosen),
    cmocka_unit_test (test_annotation_profile_strict_only),
    cmocka_unit_test (test_host_namespace_paths),
    cmocka_unit_test (test_mounts_refused),
    cmocka_unit_test (test_scratch_tmpfs),
    cmocka_unit_test (test_sysctl_names),
    cmocka_unit_test (test_apply_process),
    cmocka_unit_test (test_apply_resources_update),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
