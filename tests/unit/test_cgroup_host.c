/* runtime/cgroup on the real host's v1 or hybrid hierarchies, as root
 * (skipped otherwise): limits, membership, freeze, stats, kill and
 * destroy. Every cgroup and process made here is removed. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "../../lib/util.h"
#include "cgroup_harness.h"

/* ---- the real host (root, v1 or hybrid) ---- */

static const char *const host_hierarchies[]
    = { "cpu",     "cpuacct", "cpuset",  "memory",  "pids",   "devices",
        "freezer", "blkio",   "hugetlb", "systemd", "unified" };
#define N_HOST (sizeof (host_hierarchies) / sizeof (host_hierarchies[0]))

static char host_parent[64];
static pid_t host_child = -1;

static bool
host_usable (void)
{
  if (geteuid () != 0)
    {
      print_message ("skipped: needs root\n");
      return false;
    }
  if (!exists ("/sys/fs/cgroup/memory"))
    {
      print_message ("skipped: no /sys/fs/cgroup/memory (not v1/hybrid)\n");
      return false;
    }
  return true;
}

static int
setup_host (void **state)
{
  snprintf (host_parent, sizeof (host_parent), "moat-test-%d", (int)getpid ());
  host_child = -1;
  return 0;
}

/* Whatever happened: the child dies, the directories go. */
static int
teardown_host (void **state)
{
  char procs[PATH_MAX];
  cleanup_free char *left = NULL;

  if (host_child > 0)
    {
      kill (host_child, SIGKILL);
      waitpid (host_child, NULL, 0);
      host_child = -1;
    }
  /* Grandchildren the test started inside its own cgroup. */
  snprintf (procs, sizeof (procs), "/sys/fs/cgroup/pids/%s/x/cgroup.procs",
            host_parent);
  if (read_file_at (AT_FDCWD, procs, 1 << 16, &left, NULL) == 0)
    for (char *save = NULL, *w = strtok_r (left, "\n", &save); w;
         w = strtok_r (NULL, "\n", &save))
      {
        int pid;
        if (parse_int (w, &pid) == 0 && pid > 1)
          kill (pid, SIGKILL);
      }
  /* The killed processes leave their cgroups asynchronously. */
  for (int attempt = 0; attempt < 500; attempt++)
    {
      bool left_over = false;
      for (size_t i = 0; i < N_HOST; i++)
        {
          char path[PATH_MAX];
          snprintf (path, sizeof (path), "/sys/fs/cgroup/%s/%s/x",
                    host_hierarchies[i], host_parent);
          if (rmdir (path) < 0 && errno == EBUSY)
            left_over = true;
          snprintf (path, sizeof (path), "/sys/fs/cgroup/%s/%s",
                    host_hierarchies[i], host_parent);
          rmdir (path);
        }
      if (!left_over)
        break;
      usleep (10000);
    }
  return 0;
}

static pid_t
start_sleeper (void)
{
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      for (;;)
        pause ();
      _exit (0);
    }
  return pid;
}

static void
test_host_lifecycle (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct spec_resources res;
  struct spec_device_rule rules[] = {
    { false, 'a', -1, -1, "rwm" },
    { true, 'c', 1, 3, "rwm" },
    { true, 'c', 1, 5, "r" },
  };
  struct cgroup *cg = NULL;
  cleanup_free char *rel = NULL, *json = NULL, *self_cg = NULL;
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  bool frozen = false, memsw;
  int status;

  if (!host_usable ())
    return;
  rel = xasprintf ("/%s/x", host_parent);
  memset (&res, 0, sizeof (res));
  res.memory.has_limit = true;
  res.memory.limit = 64 * MiB;
  memsw = exists ("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes");
  res.memory.has_swap = memsw;
  res.memory.swap = 64 * MiB;
  res.has_pids_limit = true;
  res.pids_limit = 10;
  res.cpu.has_quota = res.cpu.has_period = true;
  res.cpu.quota = 50000;
  res.cpu.period = 100000;
  res.devices = rules;
  res.n_devices = 3;

  if (cgroup_create (rel, &res, &cg, &err) < 0)
    fail_msg ("cgroup_create: %s", err->msg);
  assert_file ("67108864", "/sys/fs/cgroup/memory%s/memory.limit_in_bytes",
               rel);
  if (memsw)
    assert_file ("67108864",
                 "/sys/fs/cgroup/memory%s/memory.memsw.limit_in_bytes", rel);
  assert_file ("10", "/sys/fs/cgroup/pids%s/pids.max", rel);
  assert_file ("50000", "/sys/fs/cgroup/cpu%s/cpu.cfs_quota_us", rel);
  assert_file ("100000", "/sys/fs/cgroup/cpu%s/cpu.cfs_period_us", rel);
  assert_file ("c 1:3 rwm\nc 1:5 r", "/sys/fs/cgroup/devices%s/devices.list",
               rel);

  /* Raising memory above the current memsw needs memsw first: the
   * EINVAL retry in the other order. Then lowering both again. */
  memset (&res, 0, sizeof (res));
  res.memory.has_limit = res.memory.has_swap = memsw;
  res.memory.limit = 256 * MiB;
  res.memory.swap = 512 * MiB;
  if (memsw)
    {
      if (cgroup_update (cg, &res, &err) < 0)
        fail_msg ("raising memory: %s", err->msg);
      assert_file ("268435456", "/sys/fs/cgroup/memory%s/memory.limit_in_bytes",
                   rel);
      assert_file ("536870912",
                   "/sys/fs/cgroup/memory%s/memory.memsw.limit_in_bytes", rel);
      res.memory.limit = 32 * MiB;
      res.memory.swap = 48 * MiB;
      if (cgroup_update (cg, &res, &err) < 0)
        fail_msg ("lowering memory: %s", err->msg);
      assert_file ("33554432", "/sys/fs/cgroup/memory%s/memory.limit_in_bytes",
                   rel);
      assert_file ("50331648",
                   "/sys/fs/cgroup/memory%s/memory.memsw.limit_in_bytes", rel);
    }

  host_child = start_sleeper ();
  if (cgroup_add_pid (cg, host_child, &err) < 0)
    fail_msg ("cgroup_add_pid: %s", err->msg);
  self_cg = get ("/proc/%d/cgroup", (int)host_child);
  {
    cleanup_free char *want_mem = xasprintf (":memory:%s\n", rel);
    cleanup_free char *want_v2 = xasprintf ("0::%s\n", rel);
    cleanup_free char *with_nl = xasprintf ("%s\n", self_cg);
    assert_non_null (strstr (with_nl, want_mem));
    if (exists ("/sys/fs/cgroup/unified"))
      assert_non_null (strstr (with_nl, want_v2));
  }
  assert_int_equal (cgroup_pids (cg, &pids, &n, &err), 0);
  assert_int_equal (n, 1);
  assert_int_equal (pids[0], host_child);

  if (cgroup_freeze (cg, true, &err) < 0)
    fail_msg ("freeze: %s", err->msg);
  assert_int_equal (cgroup_is_frozen (cg, &frozen, &err), 0);
  assert_true (frozen);
  assert_file ("FROZEN", "/sys/fs/cgroup/freezer%s/freezer.state", rel);
  assert_int_equal (cgroup_freeze (cg, false, &err), 0);
  assert_int_equal (cgroup_is_frozen (cg, &frozen, &err), 0);
  assert_false (frozen);

  assert_int_equal (cgroup_stats_json (cg, &json, &err), 0);
  assert_valid_json (json);
  assert_non_null (strstr (json, "\"pids\":{\"current\":1,\"limit\":10}"));

  /* Not SIGKILL, so through the freezer (no cgroup.kill shortcut): the
   * signal arrives, and the cgroup is thawed again afterwards. */
  assert_int_equal (cgroup_kill_all (cg, SIGTERM, &err), 0);
  assert_int_equal (waitpid (host_child, &status, 0), host_child);
  host_child = -1;
  assert_true (WIFSIGNALED (status));
  assert_int_equal (WTERMSIG (status), SIGTERM);
  assert_file ("THAWED", "/sys/fs/cgroup/freezer%s/freezer.state", rel);

  if (cgroup_destroy (cg, &err) < 0)
    fail_msg ("destroy: %s", err->msg);
  cgroup_free (cg);
  for (size_t i = 0; i < N_HOST; i++)
    if (host_cgroup_hierarchy (host_hierarchies[i]))
      {
        assert_false (exists ("/sys/fs/cgroup/%s%s", host_hierarchies[i], rel));
        /* Not named /moat: the parent is the caller's, and stays. */
        assert_true (
            exists ("/sys/fs/cgroup/%s/%s", host_hierarchies[i], host_parent));
      }
}

/* destroy alone kills what is left, a process's own children included. */
static void
test_host_destroy_kills (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct cgroup *cg = NULL;
  cleanup_free char *rel = NULL;
  int status, pipefd[2];
  char byte;

  if (!host_usable ())
    return;
  rel = xasprintf ("/%s/x", host_parent);
  if (cgroup_create (rel, NULL, &cg, &err) < 0)
    fail_msg ("cgroup_create: %s", err->msg);
  assert_int_equal (pipe2 (pipefd, O_CLOEXEC), 0);
  host_child = fork ();
  assert_true (host_child >= 0);
  if (host_child == 0)
    {
      /* Wait until moved, then fork a grandchild inside the cgroup. */
      close (pipefd[1]);
      if (read (pipefd[0], &byte, 1) != 1)
        _exit (1);
      if (fork () == 0)
        for (;;)
          pause ();
      for (;;)
        pause ();
    }
  close (pipefd[0]);
  assert_int_equal (cgroup_add_pid (cg, host_child, &err), 0);
  assert_int_equal (write (pipefd[1], "x", 1), 1);
  close (pipefd[1]);
  for (;;)
    {
      cleanup_free pid_t *pids = NULL;
      size_t n = 0;
      assert_int_equal (cgroup_pids (cg, &pids, &n, &err), 0);
      if (n == 2)
        break;
      usleep (1000);
    }
  if (cgroup_destroy (cg, &err) < 0)
    fail_msg ("destroy: %s", err->msg);
  assert_int_equal (waitpid (host_child, &status, 0), host_child);
  host_child = -1;
  assert_true (WIFSIGNALED (status));
  assert_false (exists ("/sys/fs/cgroup/memory%s", rel));
  cgroup_free (cg);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_host_lifecycle, setup_host,
                                     teardown_host),
    cmocka_unit_test_setup_teardown (test_host_destroy_kills, setup_host,
                                     teardown_host),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
