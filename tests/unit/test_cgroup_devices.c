/* runtime/cgroup_devices.c: the device rules as a cgroup BPF program, its
 * shape, and (as root, with a cgroup2 mount) what it lets a process in the
 * cgroup open. */
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
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <linux/magic.h>

#include <cmocka.h>

#include "../../runtime/cgroup/cgroup.h"
#include "../../runtime/cgroup/cgroup_internal.h"
#include "../../lib/util.h"
#include "cgroup_harness.h"

/* ---- device rules as a cgroup BPF program ---- */

static void
test_devices_program_shape (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct spec_device_rule rules[] = {
    { false, 'a', -1, -1, "rwm" },
    { true, 'c', 1, 3, "r" },
    { true, 'b', 8, -1, "" },
    { true, 'c', 1, 5, "rwx" },
  };
  struct bpf_insn *prog = NULL;
  size_t n = 0;

  /* prologue 6; "b 8:* rwm": type, major, result 2 = 4; "c 1:3 r": type,
   * access 3, major, minor, result 2 = 8; "a *:* rwm" decides alone
   * (result 2), so no default follows it. */
  assert_int_equal (cg_devices_build (rules, 3, &prog, &n, &err), 0);
  assert_int_equal (n, 6 + 4 + 8 + 2);
  assert_int_equal (prog[n - 2].imm, 0);
  /* Last rule first: the first test after the prologue is rule 2's type. */
  assert_int_equal (prog[6].code, BPF_JMP32 | BPF_JNE | BPF_K);
  assert_int_equal (prog[6].imm, BPF_DEVCG_DEV_BLOCK);
  assert_int_equal (prog[6].off, 3);
  free (prog);
  prog = NULL;
  /* Without a catch-all, the default (deny) ends the program. */
  assert_int_equal (cg_devices_build (rules + 1, 2, &prog, &n, &err), 0);
  assert_int_equal (n, 6 + 4 + 8 + 2);
  assert_int_equal (prog[n - 2].code, BPF_ALU | BPF_MOV | BPF_K);
  assert_int_equal (prog[n - 2].imm, 0);
  free (prog);
  prog = NULL;
  /* A bad rule is refused even behind a catch-all. */
  rules[0] = rules[3];
  rules[3] = (struct spec_device_rule){ false, 'a', -1, -1, "rwm" };
  assert_true (cg_devices_build (rules, 4, &prog, &n, &err) < 0);
  assert_error_contains (err, "devices[0]");
  assert_null (prog);
  moat_error_free (&err);
  rules[0] = rules[3];
  rules[3] = (struct spec_device_rule){ true, 'c', 1, 5, "rwx" };
  assert_true (cg_devices_build (rules, 4, &prog, &n, &err) < 0);
  assert_error_contains (err, "devices[3]");
  assert_null (prog);
}

static char v2_test_dir[PATH_MAX];
static pid_t dev_child = -1;

static int
setup_v2_host (void **state)
{
  struct statfs sfs;
  const char *mount = NULL;
  v2_test_dir[0] = '\0';
  dev_child = -1;
  if (statfs ("/sys/fs/cgroup", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
    mount = "/sys/fs/cgroup";
  else if (statfs ("/sys/fs/cgroup/unified", &sfs) == 0
           && sfs.f_type == CGROUP2_SUPER_MAGIC)
    mount = "/sys/fs/cgroup/unified";
  if (mount)
    snprintf (v2_test_dir, sizeof (v2_test_dir), "%s/moat-test-%d-dev", mount,
              (int)getpid ());
  return 0;
}

static int
teardown_v2_host (void **state)
{
  if (dev_child > 0)
    {
      kill (dev_child, SIGKILL);
      waitpid (dev_child, NULL, 0);
      dev_child = -1;
    }
  for (int attempt = 0; v2_test_dir[0] && attempt < 500; attempt++)
    {
      if (rmdir (v2_test_dir) == 0 || errno != EBUSY)
        break;
      usleep (10000);
    }
  return 0;
}

/* What a process in the cgroup may open: one bit per probe that went the
 * expected way. */
static int
probe_devices (void)
{
  struct
  {
    const char *path;
    int flags;
    bool allowed;
  } probes[] = {
    { "/dev/null", O_RDONLY, true },  { "/dev/null", O_WRONLY, false },
    { "/dev/zero", O_RDONLY, true },  { "/dev/zero", O_WRONLY, false },
    { "/dev/full", O_RDONLY, false },
  };
  int bits = 0;
  for (size_t i = 0; i < sizeof (probes) / sizeof (probes[0]); i++)
    {
      int fd = open (probes[i].path, probes[i].flags | O_CLOEXEC);
      if (fd >= 0)
        close (fd);
      if (probes[i].allowed ? fd >= 0 : (fd < 0 && errno == EPERM))
        bits |= 1 << i;
    }
  return bits;
}

/* Run probe_devices in a child moved into the test cgroup. */
static int
probe_in_cgroup (void)
{
  cleanup_free char *procs = xasprintf ("%s/cgroup.procs", v2_test_dir);
  int pipefd[2], status;
  char byte, pid[16];

  assert_int_equal (pipe2 (pipefd, O_CLOEXEC), 0);
  dev_child = fork ();
  assert_true (dev_child >= 0);
  if (dev_child == 0)
    {
      close (pipefd[1]);
      if (read (pipefd[0], &byte, 1) != 1)
        _exit (255);
      _exit (probe_devices ());
    }
  close (pipefd[0]);
  snprintf (pid, sizeof (pid), "%d", (int)dev_child);
  put (pid, "%s", procs);
  assert_int_equal (write (pipefd[1], "x", 1), 1);
  close (pipefd[1]);
  assert_int_equal (waitpid (dev_child, &status, 0), dev_child);
  dev_child = -1;
  assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

static void
test_devices_program_enforced (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  /* Later rules override earlier ones, as in v1: /dev/zero (1:5) is
   * allowed, then its write access is taken away again. */
  struct spec_device_rule rules[] = {
    { false, 'a', -1, -1, "rwm" },
    { true, 'c', 1, 3, "r" },
    { true, 'c', 1, 5, "rwm" },
    { false, 'c', 1, 5, "w" },
  };
  struct spec_device_rule allow_all = { true, 'a', -1, -1, "" };
  cleanup_close int fd = -1;
  union bpf_attr attr;
  uint32_t ids[8];

  if (geteuid () != 0 || v2_test_dir[0] == '\0')
    {
      print_message ("skipped: needs root and a cgroup2 mount\n");
      return;
    }
  assert_int_equal (mkdir (v2_test_dir, 0755), 0);
  fd = open (v2_test_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true (fd >= 0);
  if (cg_devices_attach (fd, rules, 4, &err) < 0)
    fail_msg ("attach: %s", err->msg);
  assert_int_equal (probe_in_cgroup (), 0x1f);

  /* An update replaces the program: one attached, and it now allows all
   * (so only the three "denied" probes flip). */
  if (cg_devices_attach (fd, &allow_all, 1, &err) < 0)
    fail_msg ("re-attach: %s", err->msg);
  memset (&attr, 0, sizeof (attr));
  attr.query.target_fd = (uint32_t)fd;
  attr.query.attach_type = BPF_CGROUP_DEVICE;
  attr.query.prog_ids = (uint64_t)(uintptr_t)ids;
  attr.query.prog_cnt = 8;
  assert_int_equal (syscall (SYS_bpf, BPF_PROG_QUERY, &attr, sizeof (attr)), 0);
  assert_int_equal (attr.query.prog_cnt, 1);
  assert_int_equal (probe_in_cgroup (), 0x1 | 0x4);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_devices_program_shape),
    cmocka_unit_test_setup_teardown (test_devices_program_enforced,
                                     setup_v2_host, teardown_v2_host),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
