/* Running checks in a child that loaded seccomp filters, for
 * test_seccomp.c and test_seccomp_builtin.c. Functions are static inline:
 * each test uses only some. */
#ifndef MOAT_TEST_SECCOMP_CHILD_H
#define MOAT_TEST_SECCOMP_CHILD_H

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../oci/spec.h"
#include "../../runtime/seccomp/seccomp.h"
#include "../../lib/util.h"

/* The child's verdicts travel as text through a pipe; only write(2) and
 * snprintf, so that a filter that denies almost everything still lets a
 * failure be told. */
static inline void
child_fail (int fd, const char *fmt, ...)
{
  char buf[512];
  va_list ap;
  int n;

  va_start (ap, fmt);
  n = vsnprintf (buf, sizeof (buf) - 1, fmt, ap);
  va_end (ap);
  if (n < 0)
    return;
  if ((size_t)n > sizeof (buf) - 2)
    n = sizeof (buf) - 2;
  buf[n++] = '\n';
  if (write (fd, buf, (size_t)n) < 0)
    _exit (99);
}

#define EXPECT_ERRNO(fd, call, want)                                           \
  do                                                                           \
    {                                                                          \
      long r_;                                                                 \
      int e_;                                                                  \
      errno = 0;                                                               \
      r_ = (long)(call);                                                       \
      e_ = errno;                                                              \
      if (r_ != -1 || e_ != (want))                                            \
        child_fail ((fd), "%s: returned %ld, errno %d, want errno %d (%s)",    \
                    #call, r_, e_, (want), strerror (want));                   \
    }                                                                          \
  while (0)

#define EXPECT_OK(fd, call)                                                    \
  do                                                                           \
    {                                                                          \
      long r_;                                                                 \
      errno = 0;                                                               \
      r_ = (long)(call);                                                       \
      if (r_ < 0)                                                              \
        child_fail ((fd), "%s: failed with errno %d (%s)", #call, errno,       \
                    strerror (errno));                                         \
    }                                                                          \
  while (0)

typedef void (*child_body) (int report_fd);

/* Fork; the child sets no_new_privs, loads first then second (either may
 * be NULL) and runs body. Returns the wait status; *ret_report gets what
 * the child reported (heap, maybe empty). */
static inline int
run_filtered (const struct seccomp_prog *first,
              const struct seccomp_prog *second, child_body body,
              char **ret_report)
{
  char *report = xstrdup ("");
  size_t len = 0;
  int p[2], status;
  pid_t pid;

  assert_int_equal (pipe2 (p, O_CLOEXEC), 0);
  pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      struct moat_error *err = NULL;
      struct rlimit no_core = { 0, 0 };

      close (p[0]);
      /* cmocka catches SIGSYS and would carry on with the next test in
       * this child. */
      signal (SIGSYS, SIG_DFL);
      /* Tests that end in SIGSYS leave no core file behind. */
      setrlimit (RLIMIT_CORE, &no_core);
      prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        _exit (90);
      if ((first && seccomp_load (first, &err) < 0)
          || (second && seccomp_load (second, &err) < 0))
        {
          child_fail (p[1], "%s", err->msg);
          _exit (91);
        }
      body (p[1]);
      _exit (0);
    }
  close (p[1]);
  for (;;)
    {
      char buf[1024];
      ssize_t n = read (p[0], buf, sizeof (buf));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      report = xrealloc (report, len + (size_t)n + 1);
      memcpy (report + len, buf, (size_t)n);
      len += (size_t)n;
      report[len] = '\0';
    }
  close (p[0]);
  assert_int_equal (waitpid (pid, &status, 0), pid);
  *ret_report = report;
  return status;
}

/* The child must exit 0 without reporting anything. */
static inline void
assert_child_passes (const struct seccomp_prog *first,
                     const struct seccomp_prog *second, child_body body)
{
  cleanup_free char *report = NULL;
  int status = run_filtered (first, second, body, &report);

  if (report[0] != '\0')
    fail_msg ("in the filtered child:\n%s", report);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    fail_msg ("filtered child ended with status %#x", status);
}

static inline void
assert_child_killed (const struct seccomp_prog *first,
                     const struct seccomp_prog *second, child_body body,
                     int sig)
{
  cleanup_free char *report = NULL;
  int status = run_filtered (first, second, body, &report);

  if (!WIFSIGNALED (status) || WTERMSIG (status) != sig)
    fail_msg ("child status %#x, want killed by signal %d; report: %s", status,
              sig, report);
}

static inline void
compile_ok (const struct spec_seccomp *s, struct seccomp_prog *ret)
{
  struct moat_error *err = NULL;

  if (seccomp_compile_config (s, ret, &err) < 0)
    fail_msg ("seccomp_compile_config: %s", err->msg);
  assert_null (err);
}

#endif
