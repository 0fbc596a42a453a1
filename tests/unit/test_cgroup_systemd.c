/* runtime/cgroup_systemd.c and the systemd side of cgroup_path.c: which
 * cgroupsPath names a systemd unit, and which unit; and that nothing is
 * asked of systemd where it does not run (this machine, a fake tree). The
 * D-Bus side itself is tested where systemd is PID 1: tests/host/. */
#include <errno.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../runtime/cgroup/cgroup.h"
#include "../../runtime/cgroup/cgroup_internal.h"
#include "../../lib/util.h"
#include "cgroup_emulation.h"

static void
expect_unit (const char *path, const char *slice, const char *unit)
{
  struct moat_error *err = NULL;
  char *got_slice = NULL, *got_unit = NULL;
  if (cg_systemd_unit (path, &got_slice, &got_unit, &err) < 0)
    fail_msg ("%s: %s", path, err->msg);
  assert_string_equal (got_slice, slice);
  assert_string_equal (got_unit, unit);
  free (got_slice);
  free (got_unit);
}

static void
test_unit_names (void **state)
{
  expect_unit ("kubepods-burstable-pod1.slice:cri-containerd:abc",
               "kubepods-burstable-pod1.slice", "cri-containerd-abc.scope");
  expect_unit ("system.slice:docker:abc", "system.slice", "docker-abc.scope");
  expect_unit (":crio:abc", "system.slice", "crio-abc.scope");
  expect_unit ("machine.slice::abc", "machine.slice", "abc.scope");
  expect_unit ("system.slice:x:system-pod.slice", "system.slice",
               "system-pod.slice");
}

static void
test_unit_names_refused (void **state)
{
  static const char *const bad[]
      = { "a.slice:b", "a.slice:b:c:d", "a.slice:b:", "a.slice:p/q:c",
          "a.slice:p:c/d" };
  for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
    {
      struct moat_error *err = NULL;
      char *slice = NULL, *unit = NULL;
      assert_int_equal (cg_systemd_unit (bad[i], &slice, &unit, &err), -EINVAL);
      assert_non_null (strstr (err->msg, "expected slice:prefix:name"));
      moat_error_free (&err);
    }
}

static void
test_systemd_form (void **state)
{
  /* --systemd-cgroup: anything not absolute. */
  assert_true (cg_is_systemd_form ("system.slice:a:b", true));
  assert_true (cg_is_systemd_form ("a:b:c", false));
  assert_false (cg_is_systemd_form ("/system.slice/a.scope", true));
  assert_false (cg_is_systemd_form ("a/b:c:d", false));
  assert_false (cg_is_systemd_form ("", true));
  assert_false (cg_is_systemd_form (NULL, true));
}

/* Where systemd is not PID 1, --systemd-cgroup asks nothing of it: the
 * cgroupfs path alone, as before. */
static void
test_no_systemd_nothing_asked (void **state)
{
  struct cgroup *cg = NULL;
  struct moat_error *err = NULL;
  char tree[] = "/tmp/moat-sdtest-XXXXXX";
  char *file, *cmd;
  FILE *f;

  if (cgroup_fs_kernel.systemd_booted ())
    skip ();
  assert_non_null (mkdtemp (tree));
  file = xasprintf ("%s/cgroup.controllers", tree);
  f = fopen (file, "we");
  assert_non_null (f);
  fputs ("memory pids\n", f);
  fclose (f);
  free (file);
  cgroup_emulate (tree);
  assert_int_equal (cgroup_create ("/system.slice/x-y.scope", NULL, &cg, &err),
                    0);
  assert_int_equal (
      cgroup_systemd_register (cg, "system.slice:x:y", getpid (), NULL, &err),
      0);
  assert_int_equal (cgroup_destroy (cg, &err), 0);
  cgroup_free (cg);
  cgroup_emulate (NULL);
  cmd = xasprintf ("rm -rf %s", tree);
  assert_int_equal (system (cmd), 0);
  free (cmd);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_unit_names),
    cmocka_unit_test (test_unit_names_refused),
    cmocka_unit_test (test_systemd_form),
    cmocka_unit_test (test_no_systemd_nothing_asked),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
