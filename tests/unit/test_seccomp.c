/* runtime/seccomp.c: config.json's filter (every action, operator, errno,
 * flag and architecture, runc's rules for odd profiles, errors naming the
 * field), checked by what syscalls return in a child that loaded it; and
 * seccomp_load. The builtin filter: test_seccomp_builtin.c. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "seccomp_child.h"

static char *
compile_error (const struct spec_seccomp *s)
{
  struct seccomp_prog prog = { 0 };
  struct moat_error *err = NULL;
  char *msg;

  if (seccomp_compile_config (s, &prog, &err) == 0)
    {
      seccomp_prog_clear (&prog);
      return NULL;
    }
  assert_non_null (err);
  msg = xstrdup (err->msg);
  moat_error_free (&err);
  return msg;
}

/* Default ALLOW plus rules. */
static void
compile_rules (struct spec_seccomp_rule *rules, size_t n,
               struct seccomp_prog *ret)
{
  struct spec_seccomp s = { .present = true,
                            .default_action = "SCMP_ACT_ALLOW",
                            .syscalls = rules,
                            .n_syscalls = n };
  compile_ok (&s, ret);
  assert_true (ret->n_insns > 0);
  assert_int_equal (ret->flags, 0);
}

static void
assert_rules_behave (struct spec_seccomp_rule *rules, size_t n, child_body body)
{
  struct seccomp_prog prog = { 0 };

  compile_rules (rules, n, &prog);
  assert_child_passes (&prog, NULL, body);
  seccomp_prog_clear (&prog);
  assert_null (prog.insns);
}

static void
body_errno_rules (int fd)
{
  EXPECT_ERRNO (fd, mkdir ("/nonexistent-moat-test/x", 0700), EACCES);
  EXPECT_ERRNO (fd, syscall (SYS_mkdirat, AT_FDCWD, "/nonexistent-moat/x", 0),
                EACCES);
  EXPECT_ERRNO (fd, rmdir ("/nonexistent-moat-test"), EPERM);
  EXPECT_OK (fd, getpid ());
}

static void
body_errno_mkdir (int fd)
{
  EXPECT_ERRNO (fd, mkdir ("/nonexistent-moat-test/x", 0700), EACCES);
  EXPECT_OK (fd, getpid ());
}

static void
test_config_errno_ret (void **state)
{
  struct spec_seccomp_rule rules[] = {
    { .names = (char *[]){ "mkdir", "mkdirat", NULL },
      .action = "SCMP_ACT_ERRNO",
      .has_errno_ret = true,
      .errno_ret = EACCES },
    /* errnoRet absent: EPERM */
    { .names = (char *[]){ "rmdir", NULL }, .action = "SCMP_ACT_ERRNO" },
  };

  assert_rules_behave (rules, 2, body_errno_rules);
}

static void
body_default_errno (int fd)
{
  /* Not in the allowlist: the default errno. */
  EXPECT_ERRNO (fd, syscall (SYS_getppid), EXDEV);
  EXPECT_ERRNO (fd, syscall (SYS_getuid), EXDEV);
  EXPECT_OK (fd, syscall (SYS_getpid));
}

static void
test_config_default_errno_ret (void **state)
{
  struct spec_seccomp_rule rules[] = {
    /* what the child needs, and what a sanitizer's runtime calls */
    { .names = (char *[]){ "write",
                           "exit",
                           "exit_group",
                           "rt_sigreturn",
                           "getpid",
                           "gettid",
                           "mmap",
                           "munmap",
                           "mprotect",
                           "madvise",
                           "brk",
                           "sigaltstack",
                           "rt_sigaction",
                           "rt_sigprocmask",
                           "futex",
                           "sched_yield",
                           "prctl",
                           "open",
                           "openat",
                           "read",
                           "close",
                           "fstat",
                           "newfstatat",
                           "readlink",
                           NULL },
      .action = "SCMP_ACT_ALLOW" },
  };
  struct spec_seccomp s = { .present = true,
                            .default_action = "SCMP_ACT_ERRNO",
                            .has_default_errno_ret = true,
                            .default_errno_ret = EXDEV,
                            .syscalls = rules,
                            .n_syscalls = 1 };
  struct seccomp_prog prog = { 0 };

  compile_ok (&s, &prog);
  assert_child_passes (&prog, NULL, body_default_errno);
  seccomp_prog_clear (&prog);
}

/* sched_get_priority_max(2) and getpriority(2) with out-of-range arguments
 * are EINVAL from the kernel; a rule ERRNO(EDOM) on their arguments shows
 * which values matched. */
static char *sched_max[] = { "sched_get_priority_max", NULL };

static void
assert_edom_rule_behaves (char **names, struct spec_seccomp_arg *args,
                          size_t n_args, child_body body)
{
  struct spec_seccomp_rule rule = { .names = names,
                                    .action = "SCMP_ACT_ERRNO",
                                    .has_errno_ret = true,
                                    .errno_ret = EDOM,
                                    .args = args,
                                    .n_args = n_args };
  assert_rules_behave (&rule, 1, body);
}

struct op_case
{
  const char *op;
  uint64_t value, value_two;
  long matching, not_matching;
};

static const struct op_case op_cases[] = {
  { "SCMP_CMP_EQ", 200, 0, 200, 201 },
  { "SCMP_CMP_NE", 200, 0, 201, 200 },
  { "SCMP_CMP_LT", 200, 0, 199, 200 },
  { "SCMP_CMP_LE", 200, 0, 200, 201 },
  { "SCMP_CMP_GE", 200, 0, 200, 199 },
  { "SCMP_CMP_GT", 200, 0, 201, 200 },
  { "SCMP_CMP_MASKED_EQ", 0xf0, 0xa0, 0xa5, 0xb5 },
};
static const struct op_case *current_op;

static void
body_op (int fd)
{
  EXPECT_ERRNO (fd, syscall (SYS_sched_get_priority_max, current_op->matching),
                EDOM);
  EXPECT_ERRNO (fd,
                syscall (SYS_sched_get_priority_max, current_op->not_matching),
                EINVAL);
}

static void
test_config_every_operator (void **state)
{
  for (size_t i = 0; i < sizeof (op_cases) / sizeof (op_cases[0]); i++)
    {
      struct spec_seccomp_arg arg = { .index = 0,
                                      .value = op_cases[i].value,
                                      .value_two = op_cases[i].value_two,
                                      .op = (char *)op_cases[i].op };
      current_op = &op_cases[i];
      assert_edom_rule_behaves (sched_max, &arg, 1, body_op);
    }
}

static void
body_args_and (int fd)
{
  EXPECT_ERRNO (fd, syscall (SYS_getpriority, 77, 5), EDOM);
  EXPECT_ERRNO (fd, syscall (SYS_getpriority, 77, 6), EINVAL);
  EXPECT_ERRNO (fd, syscall (SYS_getpriority, 78, 5), EINVAL);
}

static void
test_config_args_on_different_indexes_and (void **state)
{
  struct spec_seccomp_arg args[] = {
    { .index = 0, .value = 77, .op = "SCMP_CMP_EQ" },
    { .index = 1, .value = 5, .op = "SCMP_CMP_EQ" },
  };

  assert_edom_rule_behaves ((char *[]){ "getpriority", NULL }, args, 2,
                            body_args_and);
}

static void
body_args_or (int fd)
{
  EXPECT_ERRNO (fd, syscall (SYS_sched_get_priority_max, 300), EDOM);
  EXPECT_ERRNO (fd, syscall (SYS_sched_get_priority_max, 400), EDOM);
  EXPECT_ERRNO (fd, syscall (SYS_sched_get_priority_max, 350), EINVAL);
}

/* runc's rule, which engines' profiles rely on: conditions sharing an
 * argument index become one rule each. */
static void
test_config_args_on_one_index_or (void **state)
{
  struct spec_seccomp_arg args[] = {
    { .index = 0, .value = 300, .op = "SCMP_CMP_EQ" },
    { .index = 0, .value = 400, .op = "SCMP_CMP_EQ" },
  };

  assert_edom_rule_behaves (sched_max, args, 2, body_args_or);
}

static void
body_getppid_allowed (int fd)
{
  EXPECT_OK (fd, syscall (SYS_getppid));
}

static void
body_getppid_enosys (int fd)
{
  EXPECT_ERRNO (fd, syscall (SYS_getppid), ENOSYS);
}

static void
body_getppid (int fd)
{
  syscall (SYS_getppid);
  child_fail (fd, "getppid returned");
}

static void
test_config_actions (void **state)
{
  static const char *const killing[]
      = { "SCMP_ACT_KILL", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_KILL_PROCESS",
          "SCMP_ACT_TRAP" };
  struct spec_seccomp_rule rule = { .names = (char *[]){ "getppid", NULL } };
  struct seccomp_prog prog = { 0 };

  for (size_t i = 0; i < sizeof (killing) / sizeof (killing[0]); i++)
    {
      rule.action = (char *)killing[i];
      compile_rules (&rule, 1, &prog);
      assert_child_killed (&prog, NULL, body_getppid, SIGSYS);
      seccomp_prog_clear (&prog);
    }
  rule.action = "SCMP_ACT_LOG";
  assert_rules_behave (&rule, 1, body_getppid_allowed);
  /* TRACE without a tracer: the kernel answers ENOSYS. */
  rule.action = "SCMP_ACT_TRACE";
  assert_rules_behave (&rule, 1, body_getppid_enosys);
}

static void
test_config_skips_what_runc_skips (void **state)
{
  struct spec_seccomp_rule rules[] = {
    /* a syscall of a newer kernel */
    { .names = (char *[]){ "no_such_syscall_moat", "mkdir", NULL },
      .action = "SCMP_ACT_ERRNO",
      .has_errno_ret = true,
      .errno_ret = EACCES },
    /* the default action again: libseccomp would refuse it */
    { .names = (char *[]){ "getpid", NULL }, .action = "SCMP_ACT_ALLOW" },
    /* no names at all */
    { .names = NULL, .action = "SCMP_ACT_ALLOW" },
  };

  assert_rules_behave (rules, 3, body_errno_mkdir);
}

static void
test_config_absent (void **state)
{
  struct spec_seccomp s = { .present = false };
  struct seccomp_prog prog = { .insns = NULL, .n_insns = 7, .flags = 3 };
  struct moat_error *err = NULL;

  compile_ok (&s, &prog);
  assert_null (prog.insns);
  assert_int_equal (prog.n_insns, 0);
  assert_int_equal (prog.flags, 0);
  /* Loading nothing is nothing. */
  assert_int_equal (seccomp_load (&prog, &err), 0);
}

static void
body_getpid_ok (int fd)
{
  EXPECT_OK (fd, getpid ());
}

static void
test_config_flags_and_architectures (void **state)
{
  struct spec_seccomp_rule rule
      = { .names = (char *[]){ "mkdir", NULL }, .action = "SCMP_ACT_ERRNO" };
  struct spec_seccomp s
      = { .present = true,
          .default_action = "SCMP_ACT_ALLOW",
          .flags = (char *[]){ "SECCOMP_FILTER_FLAG_LOG",
                               "SECCOMP_FILTER_FLAG_SPEC_"
                               "ALLOW",
                               "SECCOMP_FILTER_FLAG_TSYNC", NULL },
          .syscalls = &rule,
          .n_syscalls = 1 };
  struct seccomp_prog native = { 0 }, multi = { 0 };

  compile_ok (&s, &native);
  assert_int_equal (native.flags, SECCOMP_FILTER_FLAG_LOG
                                      | SECCOMP_FILTER_FLAG_SPEC_ALLOW
                                      | SECCOMP_FILTER_FLAG_TSYNC);
  assert_child_passes (&native, NULL, body_getpid_ok);

  s.architectures = (char *[]){ "SCMP_ARCH_X86_64", "SCMP_ARCH_X86",
                                "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64", NULL };
  compile_ok (&s, &multi);
  /* One more arch check and rule set per added architecture. */
  assert_true (multi.n_insns > native.n_insns);
  assert_child_passes (&multi, NULL, body_getpid_ok);
  seccomp_prog_clear (&native);
  seccomp_prog_clear (&multi);
}

struct error_case
{
  const char *what;
  const char *expected;
};

/* A listenerPath: NOTIFY rules compile, the filter asks the kernel for a
 * listener (and drops TSYNC, whose return value it would take). */
static void
test_notify_with_listener (void **state)
{
  struct spec_seccomp_rule rules[] = {
    { .names = (char *[]){ "mkdir", NULL }, .action = "SCMP_ACT_NOTIFY" },
  };
  char *flags[] = { "SECCOMP_FILTER_FLAG_TSYNC",
                    "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", NULL };
  struct spec_seccomp s = { .present = true,
                            .default_action = "SCMP_ACT_ALLOW",
                            .listener_path = "/run/agent.sock",
                            .flags = flags,
                            .syscalls = rules,
                            .n_syscalls = 1 };
  struct seccomp_prog prog = { 0 };
  struct moat_error *err = NULL;
  (void)state;

  assert_int_equal (seccomp_compile_config (&s, &prog, &err), 0);
  assert_true (prog.n_insns > 0);
  assert_true (prog.flags & SECCOMP_FILTER_FLAG_NEW_LISTENER);
  assert_true (prog.flags & (1u << 5)); /* WAIT_KILLABLE_RECV */
  assert_false (prog.flags & SECCOMP_FILTER_FLAG_TSYNC);
  seccomp_prog_clear (&prog);
}

static void
test_config_errors_name_the_field (void **state)
{
  static const struct error_case cases[] = {
    { "default", "linux.seccomp.defaultAction: unknown action SCMP_ACT_FOO" },
    { "missing-default", "linux.seccomp.defaultAction: missing" },
    { "action", "linux.seccomp.syscalls[1].action: unknown action "
                "SCMP_ACT_FOO" },
    { "notify", "linux.seccomp.syscalls[1].action: SCMP_ACT_NOTIFY needs "
                "linux.seccomp.listenerPath" },
    { "notify-default", "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY needs "
                        "linux.seccomp.listenerPath and cannot be the "
                        "default action" },
    { "arch", "linux.seccomp.architectures[1]: unknown architecture "
              "SCMP_ARCH_FOO" },
    { "arch-bare", "linux.seccomp.architectures[0]: unknown architecture "
                   "x86_64" },
    { "flag", "linux.seccomp.flags[0]: unknown flag SECCOMP_FILTER_FLAG_FOO" },
    { "killable", "linux.seccomp.flags[0]: "
                  "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV only applies" },
    { "op", "linux.seccomp.syscalls[1].args[0].op: unknown operator "
            "SCMP_CMP_FOO" },
    { "index", "linux.seccomp.syscalls[1].args[0].index: 6 is not a syscall "
               "argument" },
    { "errno-on-allow", "linux.seccomp.syscalls[1].errnoRet: only "
                        "SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno" },
    { "errno-range", "linux.seccomp.syscalls[1].errnoRet: 5000 is not an "
                     "errno value" },
    { "default-errno-range", "linux.seccomp.defaultErrnoRet: 70000 is not an "
                             "errno value" },
  };

  /* Not compound literals in the branches below: those die with the
   * branch. */
  char *bad_arch[] = { "SCMP_ARCH_X86", "SCMP_ARCH_FOO", NULL };
  char *bare_arch[] = { "x86_64", NULL };
  char *bad_flag[] = { "SECCOMP_FILTER_FLAG_FOO", NULL };
  char *killable_flag[] = { "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", NULL };

  for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    {
      const char *w = cases[i].what;
      struct spec_seccomp_arg arg = { .index = 0, .op = "SCMP_CMP_EQ" };
      struct spec_seccomp_rule rules[] = {
        { .names = (char *[]){ "getpid", NULL }, .action = "SCMP_ACT_ERRNO" },
        { .names = (char *[]){ "mkdir", NULL },
          .action = "SCMP_ACT_ERRNO",
          .args = &arg,
          .n_args = 1 },
      };
      struct spec_seccomp s = { .present = true,
                                .default_action = "SCMP_ACT_ALLOW",
                                .syscalls = rules,
                                .n_syscalls = 2 };
      cleanup_free char *msg = NULL;

      if (strcmp (w, "default") == 0)
        s.default_action = "SCMP_ACT_FOO";
      else if (strcmp (w, "missing-default") == 0)
        s.default_action = NULL;
      else if (strcmp (w, "action") == 0)
        rules[1].action = "SCMP_ACT_FOO";
      else if (strcmp (w, "notify") == 0)
        rules[1].action = "SCMP_ACT_NOTIFY";
      else if (strcmp (w, "notify-default") == 0)
        {
          s.listener_path = "/run/agent.sock";
          s.default_action = "SCMP_ACT_NOTIFY";
        }
      else if (strcmp (w, "arch") == 0)
        s.architectures = bad_arch;
      else if (strcmp (w, "arch-bare") == 0)
        s.architectures = bare_arch;
      else if (strcmp (w, "flag") == 0)
        s.flags = bad_flag;
      else if (strcmp (w, "killable") == 0)
        s.flags = killable_flag;
      else if (strcmp (w, "op") == 0)
        arg.op = "SCMP_CMP_FOO";
      else if (strcmp (w, "index") == 0)
        arg.index = 6;
      else if (strcmp (w, "errno-on-allow") == 0)
        {
          rules[1].action = "SCMP_ACT_ALLOW";
          rules[1].has_errno_ret = true;
        }
      else if (strcmp (w, "errno-range") == 0)
        {
          rules[1].has_errno_ret = true;
          rules[1].errno_ret = 5000;
        }
      else if (strcmp (w, "default-errno-range") == 0)
        {
          s.default_action = "SCMP_ACT_ERRNO";
          s.has_default_errno_ret = true;
          s.default_errno_ret = 70000;
        }
      msg = compile_error (&s);
      if (msg == NULL)
        fail_msg ("case %s: compiled", w);
      if (strstr (msg, cases[i].expected) == NULL)
        fail_msg ("case %s: \"%s\" lacks \"%s\"", w, msg, cases[i].expected);
    }
}

static void
test_load_rejects_a_bad_program (void **state)
{
  /* A jump past the end: the kernel's checker refuses it. */
  struct sock_filter bad[] = { BPF_JUMP (BPF_JMP | BPF_JA, 5, 0, 0) };
  struct seccomp_prog prog = { .insns = bad, .n_insns = 1 };
  struct moat_error *err = NULL;
  pid_t pid = fork ();
  int status;

  assert_true (pid >= 0);
  if (pid == 0)
    {
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        _exit (2);
      if (seccomp_load (&prog, &err) == 0)
        _exit (3);
      _exit (strcmp (err->msg, "loading seccomp filter: Invalid argument") == 0
                 ? 0
                 : 4);
    }
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
}
int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_config_errno_ret),
    cmocka_unit_test (test_config_default_errno_ret),
    cmocka_unit_test (test_config_every_operator),
    cmocka_unit_test (test_config_args_on_different_indexes_and),
    cmocka_unit_test (test_config_args_on_one_index_or),
    cmocka_unit_test (test_config_actions),
    cmocka_unit_test (test_config_skips_what_runc_skips),
    cmocka_unit_test (test_config_absent),
    cmocka_unit_test (test_config_flags_and_architectures),
    cmocka_unit_test (test_config_errors_name_the_field),
    cmocka_unit_test (test_notify_with_listener),
    cmocka_unit_test (test_load_rejects_a_bad_program),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
