/* What exec and update may ask, bounded by the profile:
 * profile_apply_process and the resources of an update. */
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
  size_t base = n_safe_devices + 1;
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
    cmocka_unit_test (test_apply_process),
    cmocka_unit_test (test_apply_resources_update),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
