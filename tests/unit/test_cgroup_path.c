/* runtime/cgroup_path.c: config.json's cgroupsPath mapped to the path
 * relative to every hierarchy, and what is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include <cmocka.h>

#include "../../runtime/cgroup/cgroup.h"
#include "../../lib/util.h"

/* ---- cgroupsPath mapping ---- */

static void
expect_path (const char *in, const char *id, bool systemd, const char *want)
{
  cleanup_error struct moat_error *err = NULL;
  cleanup_free char *rel = NULL;
  int r = cgroup_resolve_path (in, id, systemd, &rel, &err);
  if (r < 0)
    fail_msg ("`%s`: unexpected error: %s", in ? in : "(null)", err->msg);
  assert_string_equal (rel, want);
}

static void
expect_refused (const char *in, const char *id, bool systemd)
{
  cleanup_error struct moat_error *err = NULL;
  char *rel = NULL;
  int r = cgroup_resolve_path (in, id, systemd, &rel, &err);
  if (r >= 0)
    fail_msg ("`%s` was accepted as `%s`", in ? in : "(null)", rel);
  assert_non_null (err);
  assert_null (rel);
}

static void
test_resolve_path (void **state)
{
  expect_path (NULL, "abc", false, "/moat/abc");
  expect_path ("", "abc", true, "/moat/abc");
  expect_path ("/docker/abc", "x", false, "/docker/abc");
  expect_path ("/docker/abc", "x", true, "/docker/abc");
  expect_path ("a/b", "x", false, "/a/b");
  expect_path ("//a///b/", "x", false, "/a/b");
  expect_path ("kubepods-pod1.slice:cri-containerd:ID", "x", true,
               "/kubepods.slice/kubepods-pod1.slice/cri-containerd-ID.scope");
  /* Sent without --systemd-cgroup on a host without systemd. */
  expect_path ("kubepods-pod1.slice:cri-containerd:ID", "x", false,
               "/kubepods.slice/kubepods-pod1.slice/cri-containerd-ID.scope");
  expect_path ("system.slice:docker:ID", "x", true,
               "/system.slice/docker-ID.scope");
  expect_path (":docker:ID", "x", true, "/system.slice/docker-ID.scope");
  expect_path ("-.slice:moat:ID", "x", true, "/moat-ID.scope");
  expect_path ("-:moat:ID", "x", true, "/moat-ID.scope");
  expect_path ("a-b-c.slice:p:n", "x", true,
               "/a.slice/a-b.slice/a-b-c.slice/p-n.scope");
  expect_path ("user.slice:p:x.slice", "x", true, "/user.slice/x.slice");
  expect_path ("system.slice::ID", "x", true, "/system.slice/ID.scope");
}

static void
test_resolve_path_refused (void **state)
{
  expect_refused ("..", "x", false);
  expect_refused ("../../..", "x", false);
  expect_refused ("/../../..", "x", false);
  expect_refused ("/a/../../b", "x", false);
  expect_refused ("/a/./b", "x", false);
  expect_refused ("/", "x", false);
  expect_refused ("//", "x", false);
  expect_refused ("/a\nb", "x", false);
  expect_refused ("/a\tb", "x", false);
  expect_refused (NULL, NULL, false);
  expect_refused (NULL, "a/b", false);
  expect_refused ("bad-.slice:p:n", "x", true);
  expect_refused ("-bad.slice:p:n", "x", true);
  expect_refused ("a--b.slice:p:n", "x", true);
  expect_refused ("noslice:p:n", "x", true);
  expect_refused (".slice:p:n", "x", true);
  expect_refused ("a/b.slice:p:n", "x", true);
  expect_refused ("system.slice:p:../../x", "x", true);
  expect_refused ("system.slice:p:", "x", true);
  expect_refused ("a:b", "x", true);
  expect_refused ("a:b:c:d", "x", true);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_resolve_path),
    cmocka_unit_test (test_resolve_path_refused),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
