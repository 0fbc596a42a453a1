/* runtime/container.c's reading of /proc/PID/stat: the state, the start time
 * that tells the container's init from a later process given its pid, and
 * a zombie's exit status (delete's audit line), all from one read, past a
 * comm that holds spaces, parens and a newline. And a state without the
 * start time names no live process. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../runtime/container_internal.h"

/* A child named to trip a naive parser, exited with status 3 and left a
 * zombie (not reaped) for the test to read. */
static pid_t
zombie_child (void)
{
  siginfo_t info;
  pid_t pid = fork ();

  assert_true (pid >= 0);
  if (pid == 0)
    {
      prctl (PR_SET_NAME, "a) Z 1 (b\n", 0, 0, 0);
      _exit (3);
    }
  assert_int_equal (waitid (P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
  return pid;
}

static void
test_zombie_state_start_and_status (void **state)
{
  pid_t pid = zombie_child ();
  uint64_t start = 0, start_again = 0;
  char letter = 0;
  int code = -1;

  assert_int_equal (proc_stat_read_exit (pid, &letter, &start, &code), 0);
  assert_int_equal (letter, 'Z');
  assert_true (start > 0);
  assert_true (WIFEXITED (code));
  assert_int_equal (WEXITSTATUS (code), 3);
  assert_int_equal (proc_stat_read (pid, &letter, &start_again), 0);
  assert_true (start_again == start);
  waitpid (pid, NULL, 0);
}

static void
test_alive_needs_the_start_time (void **state)
{
  struct container_state st = { .pid = getpid () };
  char letter;
  int fd;

  assert_int_equal (proc_stat_read (st.pid, &letter, &st.pid_starttime), 0);
  assert_true (container_init_alive (&st));
  fd = container_init_pidfd (&st);
  assert_true (fd >= 0);
  close (fd);
  st.pid_starttime++;
  assert_false (container_init_alive (&st));
  assert_int_equal (container_init_pidfd (&st), -ESRCH);
  /* Unknown (0): no process is taken for the init. */
  st.pid_starttime = 0;
  assert_false (container_init_alive (&st));
  assert_int_equal (container_init_pidfd (&st), -ESRCH);
}

static void
test_zombie_is_not_alive (void **state)
{
  pid_t pid = zombie_child ();
  struct container_state st = { .pid = pid };
  char letter;

  assert_int_equal (proc_stat_read (pid, &letter, &st.pid_starttime), 0);
  assert_false (container_init_alive (&st));
  assert_int_equal (container_init_pidfd (&st), -ESRCH);
  waitpid (pid, NULL, 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_zombie_state_start_and_status),
    cmocka_unit_test (test_alive_needs_the_start_time),
    cmocka_unit_test (test_zombie_is_not_alive),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
