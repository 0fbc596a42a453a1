/* runtime/cgroup_systemd.c and the systemd side of cgroup_path.c: which
 * cgroupsPath names a systemd unit, and which unit; that nothing is asked
 * of systemd where it does not run (this machine, a fake tree); and the
 * wait for a job's JobRemoved, against a fake systemd on a socketpair. The
 * D-Bus side itself is tested where systemd is PID 1: tests/host/. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <systemd/sd-bus.h>
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

#define FAKE_PATH "/org/freedesktop/systemd1"
#define FAKE_MANAGER "org.freedesktop.systemd1.Manager"
#define FAKE_JOB FAKE_PATH "/job/42"

static void
fake_job_removed (sd_bus *bus, uint32_t id, const char *job, const char *unit)
{
  if (sd_bus_emit_signal (bus, FAKE_PATH, FAKE_MANAGER, "JobRemoved", "uoss",
                          id, job, unit, "done")
          < 0
      || sd_bus_flush (bus) < 0)
    _exit (1);
}

/* systemd as its private socket serves it (a direct connection: its
 * signals name no sender): it answers Subscribe, then other jobs end, one
 * every 50 ms for 1.2 s, so that the client wakes up past a second
 * boundary while its own job still runs; then the client's job ends. */
static void __attribute__ ((noreturn)) fake_systemd (int fd)
{
  sd_bus *bus = NULL;
  sd_id128_t id;
  bool subscribed = false;

  if (sd_id128_randomize (&id) < 0 || sd_bus_new (&bus) < 0
      || sd_bus_set_fd (bus, fd, fd) < 0 || sd_bus_set_server (bus, 1, id) < 0
      || sd_bus_start (bus) < 0)
    _exit (1);
  while (!subscribed)
    {
      sd_bus_message *m = NULL;
      int r = sd_bus_process (bus, &m);
      if (r < 0)
        _exit (1);
      if (m && sd_bus_message_is_method_call (m, FAKE_MANAGER, "Subscribe"))
        subscribed = sd_bus_reply_method_return (m, "") >= 0;
      sd_bus_message_unref (m);
      if (r == 0 && sd_bus_wait (bus, UINT64_MAX) < 0)
        _exit (1);
    }
  for (uint32_t i = 0; i < 24; i++)
    {
      fake_job_removed (bus, i, FAKE_PATH "/job/1", "other.scope");
      usleep (50 * 1000);
    }
  fake_job_removed (bus, 42, FAKE_JOB, "moat-x.scope");
  _exit (0);
}

/* To 0.3 s past a second of the monotonic clock: a wait that starts here
 * and wakes up every 50 ms wakes once past the next second boundary with
 * fewer nanoseconds than it started with. */
static void
wait_until_mid_second (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  t.tv_sec += 1;
  t.tv_nsec = 300 * 1000 * 1000;
  while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
    ;
}

/* The Debian guest once failed "waiting for the start of …scope:
 * Connection timed out" long before the 60 s: the time spent was read
 * wrong across a second boundary. And on the private socket the match on
 * the sender never fired at all. */
static void
test_job_wait_direct_connection (void **state)
{
  struct moat_error *err = NULL;
  char *result = NULL;
  int sv[2], status, r;
  pid_t pid;

  assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      close (sv[0]);
      fake_systemd (sv[1]);
    }
  close (sv[1]);
  wait_until_mid_second ();
  r = cg_systemd_wait_job_on_fd (sv[0], FAKE_JOB, 20 * 1000 * 1000, &result,
                                 &err);
  kill (pid, SIGKILL);
  assert_int_equal (waitpid (pid, &status, 0), pid);
  if (r < 0)
    fail_msg ("%s", err->msg);
  assert_string_equal (result, "done");
  free (result);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_unit_names),
    cmocka_unit_test (test_unit_names_refused),
    cmocka_unit_test (test_systemd_form),
    cmocka_unit_test (test_no_systemd_nothing_asked),
    cmocka_unit_test (test_job_wait_direct_connection),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
