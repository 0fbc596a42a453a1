/* runtime/cgroup cgroup_add_self and runtime/linux linux_clone: the
 * container's init joins its cgroups from the inside (v1 `tasks`, and
 * CLONE_INTO_CGROUP for v2). On the real host, as root (skipped
 * otherwise); every cgroup and process made here is removed. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../runtime/cgroup/cgroup.h"
#include "../../runtime/init/linux.h"
#include "../../lib/util.h"
#include "cgroup_harness.h"

static char rel[64];
static struct cgroup *cg;
static pid_t child = -1;

static bool
usable (void)
{
  enum cgroup_mode mode;
  struct moat_error *err = NULL;

  if (geteuid () != 0)
    {
      print_message ("skipped: needs root\n");
      return false;
    }
  if (cgroup_mode (&mode, &err) < 0)
    {
      print_message ("skipped: no cgroups: %s\n", err->msg);
      moat_error_free (&err);
      return false;
    }
  return true;
}

static int
setup (void **state)
{
  snprintf (rel, sizeof (rel), "/moat-test-self-%d", (int)getpid ());
  cg = NULL;
  child = -1;
  return 0;
}

/* Whatever happened: the child dies, the cgroup goes. */
static int
teardown (void **state)
{
  if (child > 0)
    {
      kill (child, SIGKILL);
      waitpid (child, NULL, 0);
      child = -1;
    }
  if (cg)
    {
      cgroup_destroy (cg, NULL);
      cgroup_free (cg);
      cg = NULL;
    }
  return 0;
}

/* Is pid listed in /proc/<pid>/cgroup under rel for every hierarchy moat
 * manages?  Returns how many hierarchies hold it, or -1 on a line that
 * names a managed hierarchy elsewhere. */
static int
count_hierarchies_at (pid_t pid, const char *want)
{
  char path[64];
  cleanup_free char *text = NULL;
  int n = 0;

  snprintf (path, sizeof (path), "/proc/%d/cgroup", (int)pid);
  assert_int_equal (read_file_at (AT_FDCWD, path, 1 << 16, &text, NULL), 0);
  for (char *save = NULL, *line = strtok_r (text, "\n", &save); line;
       line = strtok_r (NULL, "\n", &save))
    {
      char *ctrl = strchr (line, ':');
      char *where = ctrl ? strchr (ctrl + 1, ':') : NULL;
      assert_non_null (where);
      /* moat leaves the hierarchies it does not know (net_cls, perf_event
       * ...) alone. */
      if (strcmp (where + 1, want) == 0)
        n++;
    }
  return n;
}

static int
hierarchies_expected (void)
{
  enum cgroup_mode mode;
  struct moat_error *err = NULL;
  static const char *const v1[]
      = { "cpu",     "cpuacct", "cpuset", "memory",  "pids",
          "devices", "freezer", "blkio",  "hugetlb", "systemd" };
  int n = 0;
  char path[128];

  assert_int_equal (cgroup_mode (&mode, &err), 0);
  if (mode == CGROUP_MODE_V2)
    return 1;
  for (size_t i = 0; i < sizeof (v1) / sizeof (v1[0]); i++)
    {
      struct stat a, b;
      snprintf (path, sizeof (path), "/sys/fs/cgroup/%s", v1[i]);
      if (!host_cgroup_hierarchy (v1[i]) || stat (path, &a) < 0)
        continue;
      /* co-mounted controllers (cpu,cpuacct) count once */
      bool dup = false;
      for (size_t j = 0; j < i && !dup; j++)
        {
          snprintf (path, sizeof (path), "/sys/fs/cgroup/%s", v1[j]);
          dup = stat (path, &b) == 0 && a.st_ino == b.st_ino
                && a.st_dev == b.st_dev;
        }
      n += !dup;
    }
  return n + (mode == CGROUP_MODE_HYBRID);
}

/* The child joins by itself and then waits; the parent checks where the
 * kernel says it is. */
static void
test_add_self_joins_every_hierarchy (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  int ready[2];
  char c;

  if (!usable ())
    return;
  assert_int_equal (cgroup_create (rel, NULL, &cg, &err), 0);
  assert_int_equal (pipe2 (ready, O_CLOEXEC), 0);
  child = fork ();
  assert_true (child >= 0);
  if (child == 0)
    {
      struct moat_error *e = NULL;
      if (cgroup_add_self (cg, false, NULL, &e) < 0)
        {
          fprintf (stderr, "cgroup_add_self: %s\n", e->msg);
          _exit (1);
        }
      if (write (ready[1], "x", 1) != 1)
        _exit (1);
      for (;;)
        pause ();
    }
  close (ready[1]);
  assert_int_equal (read (ready[0], &c, 1), 1);
  close (ready[0]);
  assert_int_equal (count_hierarchies_at (child, rel), hierarchies_expected ());
  /* and the cgroup lists it */
  {
    cleanup_free pid_t *pids = NULL;
    size_t n = 0;
    assert_int_equal (cgroup_pids (cg, &pids, &n, &err), 0);
    assert_int_equal (n, 1);
    assert_int_equal (pids[0], child);
  }
}

/* A cgroup removed under the init (a concurrent delete --force): the
 * failure names it, and the init never runs outside its cgroup. */
static void
test_add_self_reports_a_missing_cgroup (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  int status;

  if (!usable ())
    return;
  assert_int_equal (cgroup_create (rel, NULL, &cg, &err), 0);
  /* The directories go away under it (another moat's delete --force). */
  assert_int_equal (cgroup_destroy (cg, &err), 0);
  child = fork ();
  assert_true (child >= 0);
  if (child == 0)
    {
      struct moat_error *e = NULL;
      int r = cgroup_add_self (cg, false, NULL, &e);
      _exit (r < 0 && e && strstr (e->msg, rel) ? 0 : 1);
    }
  assert_int_equal (waitpid (child, &status, 0), child);
  child = -1;
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
}

/* linux_clone with the v2 fd: the child is born in the cgroup (nothing
 * moves it) and says so. */
static void
test_clone_into_unified (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  bool in = false;
  int status;

  if (!usable ())
    return;
  assert_int_equal (cgroup_create (rel, NULL, &cg, &err), 0);
  if (cgroup_unified_fd (cg) < 0)
    {
      print_message ("skipped: no cgroup2 hierarchy\n");
      return;
    }
  child = linux_clone (0, cgroup_unified_fd (cg), &in);
  assert_true (child >= 0);
  if (child == 0)
    _exit (count_hierarchies_at (getpid (), rel) == 1 && in ? 0 : 1);
  assert_true (in);
  assert_int_equal (waitpid (child, &status, 0), child);
  child = -1;
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
}

/* Without a cgroup fd it is a plain fork-like clone. */
static void
test_clone_without_cgroup (void **state)
{
  bool in = true;
  int status;

  child = linux_clone (0, -1, &in);
  assert_true (child >= 0);
  if (child == 0)
    _exit (7);
  assert_false (in);
  assert_int_equal (waitpid (child, &status, 0), child);
  child = -1;
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 7);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_add_self_joins_every_hierarchy, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_add_self_reports_a_missing_cgroup,
                                     setup, teardown),
    cmocka_unit_test_setup_teardown (test_clone_into_unified, setup, teardown),
    cmocka_unit_test_setup_teardown (test_clone_without_cgroup, setup,
                                     teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
