/* profile_apply on small specs written inline: annotations tighten and
 * never loosen; host namespace paths, refused mounts, the scratch tmpfs
 * and sysctl names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../../oci/spec.h"
#include "../../policy/profile.h"
#include "../../policy/profile_internal.h"
#include "../../lib/util.h"
#include "profile_harness.h"

/* ---- annotations ---- */

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

  assert_int_equal (profile_apply (s, p, NULL, &ov, &err), 0);
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
  assert_int_equal (profile_apply (s, p, NULL, &ov, &err), 0);
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

  assert_int_equal (profile_apply (s, p, NULL, &ov, &err), 0);
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

  assert_true (profile_apply (s, p, NULL, &ov, &err) < 0);
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
        if (profile_apply (s, p, NULL, &ov, &err) == 0)
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

  assert_int_equal (profile_apply (s, p, NULL, &ov, &err), 0);
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
  assert_int_equal (profile_apply (s, p, NULL, &ov, &err), 0);
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

  assert_int_equal (profile_apply (s, p, NULL, &ov, &err), 0);
  assert_int_equal (s->linux_.n_sysctl, 2);
  assert_string_equal (s->linux_.sysctl[0].key, "fs.mqueue.msg_max");
  assert_string_equal (s->linux_.sysctl[1].key, "kernel.sem");
  assert_non_null (find_override (&ov, OVERRIDE_REMOVED,
                                  "linux.sysctl.net/../kernel/core_pattern"));
  override_list_clear (&ov);
  spec_free (s);
  profile_free (p);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_annotations_tighten_never_loosen),
    cmocka_unit_test (test_annotation_profile_strict_only),
    cmocka_unit_test (test_host_namespace_paths),
    cmocka_unit_test (test_mounts_refused),
    cmocka_unit_test (test_scratch_tmpfs),
    cmocka_unit_test (test_sysctl_names),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
