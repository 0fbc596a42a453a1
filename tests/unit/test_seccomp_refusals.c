/* runtime/seccomp/seccomp_refusals.c: the filter run in user space gives
 * the kernel's answers, the refusals become notifications and nothing
 * else does, and a supervisor answers and counts them. */
#include <seccomp.h>

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../runtime/seccomp/seccomp_refusals.h"
#include "../../lib/util.h"

static struct seccomp_prog levels[2];

static int
setup_levels (void **state)
{
  struct moat_error *err = NULL;

  (void)state;
  for (int l = 0; l < 2; l++)
    if (seccomp_builtin_level ((enum seccomp_level)l, NULL, &levels[l], &err)
        < 0)
      {
        fprintf (stderr, "seccomp_builtin_level: %s\n", err->msg);
        return -1;
      }
  return 0;
}

static int
teardown_levels (void **state)
{
  (void)state;
  for (int l = 0; l < 2; l++)
    seccomp_prog_clear (&levels[l]);
  return 0;
}

struct call
{
  long nr;
  uint64_t a0, a1;
  uint32_t action; /* what the built-in filter answers */
};

#define DENY(e) (SECCOMP_RET_ERRNO | (e))

static const struct call calls[] = {
  { SYS_read, 0, 0, SECCOMP_RET_ALLOW },
  { SYS_io_uring_setup, 1, 0, DENY (EPERM) },
  { SYS_bpf, 0, 0, DENY (EPERM) },
  { SYS_clone3, 0, 0, DENY (ENOSYS) },
  { 1000, 0, 0, DENY (ENOSYS) },
  { SYS_socket, AF_UNIX, SOCK_STREAM, SECCOMP_RET_ALLOW },
  { SYS_socket, 40 /* AF_VSOCK */, SOCK_STREAM, DENY (EPERM) },
  { SYS_clone, CLONE_NEWUSER, 0, DENY (EPERM) },
  { SYS_clone, SIGCHLD, 0, SECCOMP_RET_ALLOW },
  { SYS_clone,
    CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD
        | CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID
        | CLONE_CHILD_CLEARTID,
    0, SECCOMP_RET_ALLOW },
  { SYS_ioctl, 0, TCGETS, SECCOMP_RET_ALLOW },
  { SYS_ioctl, 0, TIOCSTI, DENY (EPERM) },
};
#define N_CALLS (sizeof (calls) / sizeof (calls[0]))

static struct seccomp_data
data_of (const struct call *c)
{
  struct seccomp_data d = { .nr = (int)c->nr, .arch = AUDIT_ARCH_X86_64 };
  d.args[0] = c->a0;
  d.args[1] = c->a1;
  return d;
}

static void
test_run_gives_the_filters_answers (void **state)
{
  (void)state;
  for (int l = 0; l < 2; l++)
    for (size_t i = 0; i < N_CALLS; i++)
      {
        struct seccomp_data d = data_of (&calls[i]);
        uint32_t got = seccomp_prog_run (&levels[l], &d);
        if (got != calls[i].action)
          fail_msg ("level %d, syscall %ld (%#llx): %#x, not %#x", l,
                    calls[i].nr, (unsigned long long)calls[i].a0, got,
                    calls[i].action);
      }
}

/* The same refusals, made for real in a child under the filter: the
 * kernel's errno is the one the user-space run found. */
static void
test_run_agrees_with_the_kernel (void **state)
{
  (void)state;
  for (size_t i = 0; i < N_CALLS; i++)
    {
      int status = 0;
      pid_t pid;

      if (calls[i].action == SECCOMP_RET_ALLOW)
        continue;
      pid = fork ();
      assert_true (pid >= 0);
      if (pid == 0)
        {
          long r;
          if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
              || seccomp_prog_load (&levels[0], NULL) < 0)
            _exit (255);
          r = syscall (calls[i].nr, calls[i].a0, calls[i].a1, 0, 0, 0, 0);
          _exit (r < 0 ? errno : 0);
        }
      assert_int_equal (waitpid (pid, &status, 0), pid);
      assert_true (WIFEXITED (status));
      assert_int_equal (WEXITSTATUS (status),
                        calls[i].action & SECCOMP_RET_DATA);
    }
}

static void
test_only_refusals_notify (void **state)
{
  struct seccomp_prog notify = { 0 };

  (void)state;
  seccomp_prog_notify_refusals (&levels[1], &notify);
  assert_true (notify.flags & SECCOMP_FILTER_FLAG_NEW_LISTENER);
  assert_int_equal (notify.n_insns, levels[1].n_insns);
  for (size_t i = 0; i < N_CALLS; i++)
    {
      struct seccomp_data d = data_of (&calls[i]);
      uint32_t want
          = calls[i].action == SECCOMP_RET_ALLOW
                ? SECCOMP_RET_ALLOW
                : SECCOMP_RET_USER_NOTIF | (calls[i].action & SECCOMP_RET_DATA);
      assert_int_equal (seccomp_prog_run (&notify, &d), want);
    }
  seccomp_prog_clear (&notify);
}

/* A child loads the agent level supervised and makes refused calls; the
 * supervisor answers them with the filter's errno and counts them. */
static void
test_supervisor_answers_and_counts (void **state)
{
  struct seccomp_refusals r;
  struct seccomp_prog empty = { 0 };
  const struct seccomp_prog *prog;
  cleanup_free char *json = NULL;
  int sock = -1, status = 0, pidfd;
  pid_t pid;

  (void)state;
  assert_int_equal (seccomp_refusals_open (&r, NULL), 0);
  prog = seccomp_supervised (&r, &empty, &levels[1], &sock);
  assert_ptr_equal (prog, &r.prog);
  assert_int_equal (sock, r.child_sock);
  pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      int bad = 0;
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
          || seccomp_refusals_load (prog, sock, NULL) < 0)
        _exit (255);
      bad += !(syscall (SYS_io_uring_setup, 1, NULL) < 0 && errno == EPERM);
      bad += !(syscall (SYS_io_uring_setup, 1, NULL) < 0 && errno == EPERM);
      bad += !(syscall (SYS_clone3, NULL, 0) < 0 && errno == ENOSYS);
      bad += getpid () <= 0; /* allowed: never reaches the supervisor */
      _exit (bad);
    }
  seccomp_refusals_started (&r);
  /* As the sandbox's loop does, the end is the child's exit, not the
   * listener's hang-up: kernel 6.1 (Debian 12) hangs the listener up only
   * once the last task under the filter is reaped, newer kernels at exit. */
  pidfd = (int)syscall (SYS_pidfd_open, pid, 0);
  assert_true (pidfd >= 0);
  for (bool exited = false; !exited;)
    {
      struct pollfd p[2]
          = { { .fd = seccomp_refusals_fd (&r), .events = POLLIN },
              { .fd = pidfd, .events = POLLIN } };
      assert_true (poll (p, 2, 10000) > 0);
      if (p[0].revents)
        seccomp_refusals_handle (&r, p[0].revents);
      exited = (p[1].revents & POLLIN) != 0;
    }
  close (pidfd);
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
  json = seccomp_refusals_json (&r);
  assert_string_equal (json, "{\"io_uring_setup\":2,\"clone3\":1}");
  seccomp_refusals_clear (&r);
}

int
main (void)
{
  const struct CMUnitTest tests[]
      = { cmocka_unit_test (test_run_gives_the_filters_answers),
          cmocka_unit_test (test_run_agrees_with_the_kernel),
          cmocka_unit_test (test_only_refusals_notify),
          cmocka_unit_test (test_supervisor_answers_and_counts) };
  return cmocka_run_group_tests (tests, setup_levels, teardown_levels);
}
