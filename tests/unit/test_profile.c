/* profile_apply and friends on real engine configs and on a config that
 * asks for everything (tests/fixtures/permissive.config.json).
 * Annotations and edge cases: test_profile_spec.c; exec and update:
 * test_profile_update.c. */
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
#include "../../policy/profile.h"
#include "../../policy/profile_internal.h"
#include "../../lib/util.h"
#include "profile_harness.h"

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

static struct spec *
load_spec (const char *path)
{
  struct spec *s = NULL;
  struct moat_error *err = NULL;
  if (spec_load (path, &s, &err) < 0)
    fail_msg ("spec_load %s: %s", path, err->msg);
  return s;
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

  assert_true (profile_apply (s, p, NULL, &ov, &err) < 0);
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
  if (profile_apply (s, p, NULL, &ov, &err) < 0)
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
      if (profile_apply (s, p, NULL, &ov, &err) < 0)
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
  if (profile_apply (s, p, NULL, ov, &err) < 0)
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

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_permissive_refuses_dangerous_binds),
    cmocka_unit_test (test_permissive_hardened),
    cmocka_unit_test (test_engine_samples),
    cmocka_unit_test (test_docker_resources_kept),
    cmocka_unit_test (test_ctr_net_host_privileged),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
