/* runtime/bpf.c: a program the verifier refuses is reported with the
 * verifier's words; and (as root, with a cgroup2 mount) attach, query and
 * detach on a cgroup of the test's own. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include <cmocka.h>

#include "../../runtime/bpf/bpf.h"
#include "../../lib/util.h"

#define INSN(c, d, s, o, i)                                                    \
  ((struct bpf_insn){                                                          \
      .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/* r0 = 1; exit: allows every device. */
static const struct bpf_insn allow_all[] = {
  INSN (BPF_ALU | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1),
  INSN (BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
};

static void
test_refused_program_says_why (void **state)
{
  /* exit with r0 never written: the verifier says "R0 !read_ok". */
  static const struct bpf_insn bad[] = {
    INSN (BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
  };
  struct moat_error *err = NULL;
  int fd = -1;

  if (geteuid () != 0)
    skip ();
  assert_true (bpf_prog_load (BPF_PROG_TYPE_CGROUP_DEVICE, 0, "moat_test", bad,
                              1, &fd, &err)
               < 0);
  assert_int_equal (fd, -1);
  assert_non_null (err);
  if (strstr (err->msg, "loading BPF program moat_test (verifier: ") == NULL
      || strstr (err->msg, "R0") == NULL)
    fail_msg ("no verifier reason in `%s`", err->msg);
  moat_error_free (&err);
}

static char dir[128];

static int
teardown_dir (void **state)
{
  if (dir[0])
    rmdir (dir);
  dir[0] = '\0';
  return 0;
}

static void
test_attach_query_detach (void **state)
{
  struct moat_error *err = NULL;
  cleanup_close int cg = -1, prog = -1;
  struct statfs sfs;
  const char *mount = NULL;
  uint32_t ids[4], n = 4;

  if (geteuid () != 0)
    skip ();
  if (statfs ("/sys/fs/cgroup", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
    mount = "/sys/fs/cgroup";
  else if (statfs ("/sys/fs/cgroup/unified", &sfs) == 0
           && sfs.f_type == CGROUP2_SUPER_MAGIC)
    mount = "/sys/fs/cgroup/unified";
  if (mount == NULL)
    skip ();
  snprintf (dir, sizeof (dir), "%s/moat-test-bpf-%d", mount, (int)getpid ());
  assert_int_equal (mkdir (dir, 0755), 0);
  cg = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true (cg >= 0);

  assert_int_equal (bpf_cgroup_query (cg, BPF_CGROUP_DEVICE, ids, &n), 0);
  assert_int_equal (n, 0);
  if (bpf_prog_load (BPF_PROG_TYPE_CGROUP_DEVICE, 0, "moat_test", allow_all, 2,
                     &prog, &err)
      < 0)
    fail_msg ("%s", err->msg);
  assert_true (fcntl (prog, F_GETFD) & FD_CLOEXEC);
  assert_int_equal (bpf_cgroup_attach (cg, prog, BPF_CGROUP_DEVICE), 0);
  /* ALLOW_MULTI: a second attachment of another program is accepted. */
  {
    cleanup_close int prog2 = -1;
    assert_int_equal (bpf_prog_load (BPF_PROG_TYPE_CGROUP_DEVICE, 0,
                                     "moat_test2", allow_all, 2, &prog2, &err),
                      0);
    assert_int_equal (bpf_cgroup_attach (cg, prog2, BPF_CGROUP_DEVICE), 0);
  }
  n = 4;
  assert_int_equal (bpf_cgroup_query (cg, BPF_CGROUP_DEVICE, ids, &n), 0);
  assert_int_equal (n, 2);
  /* Too small a buffer: the kernel says how many there are. */
  n = 1;
  assert_int_equal (bpf_cgroup_query (cg, BPF_CGROUP_DEVICE, ids, &n), -ENOSPC);

  assert_int_equal (bpf_cgroup_detach (cg, prog, BPF_CGROUP_DEVICE), 0);
  n = 4;
  assert_int_equal (bpf_cgroup_query (cg, BPF_CGROUP_DEVICE, ids, &n), 0);
  assert_int_equal (n, 1);
  assert_int_equal (bpf_cgroup_detach_id (cg, ids[0], BPF_CGROUP_DEVICE), 0);
  n = 4;
  assert_int_equal (bpf_cgroup_query (cg, BPF_CGROUP_DEVICE, ids, &n), 0);
  assert_int_equal (n, 0);
  /* Detaching what is not attached is an error the caller sees. */
  assert_true (bpf_cgroup_detach (cg, prog, BPF_CGROUP_DEVICE) < 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_refused_program_says_why),
    cmocka_unit_test_teardown (test_attach_query_detach, teardown_dir),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
