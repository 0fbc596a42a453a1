/* hooks_run: state on stdin, exact args and env, exit status, signals,
 * timeouts, bad paths, order, and hooks that ignore their stdin.
 *
 * The test binary doubles as a hook: run through a symlink named
 * "dump-hook", main() writes its argv, env, stdin and open fds next to the
 * link, so that argv[0] and the env can be checked byte for byte. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../hooks/hooks.h"
#include "../../lib/util.h"

#define DUMP_HOOK_NAME "dump-hook"

extern char **environ;

static char tmpdir[PATH_MAX];

/* ---- the dump hook (runs in the hook's process) ---- */

static void
dump_write (const char *dir, const char *name, const void *buf, size_t len)
{
  char path[PATH_MAX];
  int fd;

  snprintf (path, sizeof (path), "%s/%s", dir, name);
  fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || write_all (fd, buf, len) < 0)
    _exit (90);
  close (fd);
}

/* argv and environ as NUL-terminated strings back to back. */
static void
dump_strv (const char *dir, const char *name, char **v)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);

  for (size_t i = 0; v && v[i]; i++)
    fwrite (v[i], 1, strlen (v[i]) + 1, f);
  fclose (f);
  dump_write (dir, name, buf, len);
  free (buf);
}

static void
dump_stdin (const char *dir)
{
  char *buf = NULL;
  size_t len = 0;
  char chunk[65536];
  ssize_t n;
  FILE *f = open_memstream (&buf, &len);

  while ((n = read (0, chunk, sizeof (chunk))) > 0)
    fwrite (chunk, 1, (size_t)n, f);
  fclose (f);
  dump_write (dir, "stdin", buf, len);
  free (buf);
}

/* "0 1 2" for the fds the hook inherited; "1=2" when fds 1 and 2 are the
 * same open file (moat's stderr). */
static void
dump_fds (const char *dir)
{
  char out[4096] = "";
  DIR *d = opendir ("/proc/self/fd");
  struct dirent *de;
  struct stat st1, st2;
  int fds[64], n = 0;

  if (d == NULL)
    _exit (91);
  while ((de = readdir (d)) != NULL && n < 64)
    {
      int fd;
      if (de->d_name[0] == '.' || parse_int (de->d_name, &fd) < 0
          || fd == dirfd (d))
        continue;
      fds[n++] = fd;
    }
  closedir (d);
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (fds[j] < fds[i])
        {
          int t = fds[i];
          fds[i] = fds[j];
          fds[j] = t;
        }
  for (int i = 0; i < n; i++)
    snprintf (out + strlen (out), sizeof (out) - strlen (out), "%s%d",
              i ? " " : "", fds[i]);
  if (fstat (1, &st1) == 0 && fstat (2, &st2) == 0 && st1.st_dev == st2.st_dev
      && st1.st_ino == st2.st_ino)
    strcat (out, " 1=2");
  dump_write (dir, "fds", out, strlen (out));
}

static int
dump_hook_main (int argc, char **argv)
{
  char execfn[PATH_MAX];
  char *dir;

  snprintf (execfn, sizeof (execfn), "%s", (const char *)getauxval (AT_EXECFN));
  dir = dirname (execfn);
  dump_fds (dir);
  dump_strv (dir, "argv", argv);
  dump_strv (dir, "env", environ);
  dump_stdin (dir);
  if (write_all (1, "to stdout\n", 10) < 0
      || write_all (2, "to stderr\n", 10) < 0)
    return 92;
  return 0;
}

static bool
running_as_dump_hook (void)
{
  const char *execfn = (const char *)getauxval (AT_EXECFN);
  const char *base;

  if (execfn == NULL)
    return false;
  base = strrchr (execfn, '/');
  return strcmp (base ? base + 1 : execfn, DUMP_HOOK_NAME) == 0;
}

/* ---- helpers ---- */

static char *
tmp_path (const char *name)
{
  return xasprintf ("%s/%s", tmpdir, name);
}

static char *
write_script (const char *name, const char *fmt, ...)
{
  char *path = tmp_path (name);
  char *body;
  va_list ap;
  int fd;

  va_start (ap, fmt);
  assert_true (vasprintf (&body, fmt, ap) >= 0);
  va_end (ap);
  fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  assert_true (fd >= 0);
  assert_int_equal (write_all (fd, "#!/bin/sh\n", 10), 0);
  assert_int_equal (write_all (fd, body, strlen (body)), 0);
  close (fd);
  free (body);
  return path;
}

static char *
read_tmp (const char *name, size_t *ret_len)
{
  cleanup_free char *path = tmp_path (name);
  char *data = NULL;
  size_t len = 0;

  assert_int_equal (read_file_at (AT_FDCWD, path, 8 << 20, &data, &len), 0);
  if (ret_len)
    *ret_len = len;
  return data;
}

static void
assert_strv_file (const char *name, const char *const *expect)
{
  size_t len = 0, off = 0;
  cleanup_free char *data = read_tmp (name, &len);
  size_t i;

  for (i = 0; expect[i]; i++)
    {
      assert_true (off < len);
      assert_string_equal (data + off, expect[i]);
      off += strlen (data + off) + 1;
    }
  assert_int_equal (off, len);
}

static struct spec_hook
hook_of (char *path, char **args, char **env, int timeout)
{
  return (struct spec_hook){
    .path = path, .args = args, .env = env, .timeout = timeout
  };
}

static int
run_one (struct spec_hook hook, enum hook_kind kind, const char *state,
         struct moat_error **err)
{
  struct spec_hook_list list = { .v = &hook, .n = 1 };
  return hooks_run (&list, kind, state, err);
}

static void
assert_fails_with (struct spec_hook hook, enum hook_kind kind,
                   const char *expect)
{
  cleanup_error struct moat_error *err = NULL;

  assert_true (run_one (hook, kind, "{}", &err) < 0);
  assert_non_null (err);
  assert_string_equal (err->msg, expect);
}

/* Point our fd 2 at a file for the duration of one hook run. */
static int
redirect_stderr (const char *path)
{
  int saved = fcntl (2, F_DUPFD_CLOEXEC, 3);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

  assert_true (saved >= 0 && fd >= 0);
  assert_int_equal (dup2 (fd, 2), 2);
  close (fd);
  return saved;
}

static void
restore_stderr (int saved)
{
  dup2 (saved, 2);
  close (saved);
}

static int
rm_entry (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  return remove (path);
}

static int
setup (void **state)
{
  snprintf (tmpdir, sizeof (tmpdir), "/tmp/moat-test-hooks-XXXXXX");
  return mkdtemp (tmpdir) ? 0 : -1;
}

static int
teardown (void **state)
{
  return nftw (tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- tests ---- */

static void
test_state_args_env_exact (void **state)
{
  cleanup_free char *link = tmp_path (DUMP_HOOK_NAME);
  char self[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof (self) - 1);
  char *args[] = { "custom-argv0", "--flag", "two words", "", NULL };
  char *env[] = { "A=1", "EMPTY=", "B=x=y", NULL };
  const char *json = "{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":"
                     "\"created\",\"pid\":42,\"bundle\":\"/b\"}";
  cleanup_free char *got_stdin = NULL;
  cleanup_free char *got_fds = NULL;
  cleanup_free char *stderr_path = tmp_path ("stderr");
  cleanup_free char *got_stderr = NULL;
  cleanup_error struct moat_error *err = NULL;
  int leaked, saved_stderr, r;

  assert_true (n > 0);
  self[n] = '\0';
  assert_int_equal (symlink (self, link), 0);

  /* An fd without O_CLOEXEC must still not reach the hook. */
  leaked = open ("/dev/null", O_RDONLY);
  assert_true (leaked > 2);
  saved_stderr = redirect_stderr (stderr_path);
  r = run_one (hook_of (link, args, env, 0), HOOK_PRESTART, json, &err);
  restore_stderr (saved_stderr);
  close (leaked);
  assert_int_equal (r, 0);
  assert_null (err);
  got_stderr = read_tmp ("stderr", NULL);
  assert_string_equal (got_stderr, "to stdout\nto stderr\n");

  assert_strv_file ("argv", (const char *const[]){ "custom-argv0", "--flag",
                                                   "two words", "", NULL });
  assert_strv_file ("env",
                    (const char *const[]){ "A=1", "EMPTY=", "B=x=y", NULL });
  got_stdin = read_tmp ("stdin", NULL);
  assert_string_equal (got_stdin, json);
  got_fds = read_tmp ("fds", NULL);
  assert_string_equal (got_fds, "0 1 2 1=2");
}

static void
test_no_args_no_env (void **state)
{
  cleanup_free char *link = tmp_path (DUMP_HOOK_NAME);
  char self[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof (self) - 1);
  cleanup_free char *stderr_path = tmp_path ("stderr");
  cleanup_error struct moat_error *err = NULL;
  cleanup_free char *got_stdin = NULL;
  int saved_stderr, r;

  assert_true (n > 0);
  self[n] = '\0';
  assert_int_equal (symlink (self, link), 0);

  saved_stderr = redirect_stderr (stderr_path);
  r = run_one (hook_of (link, NULL, NULL, 0), HOOK_POSTSTOP, "{}", &err);
  restore_stderr (saved_stderr);
  assert_int_equal (r, 0);
  assert_strv_file ("argv", (const char *const[]){ link, NULL });
  assert_strv_file ("env", (const char *const[]){ NULL });
  got_stdin = read_tmp ("stdin", NULL);
  assert_string_equal (got_stdin, "{}");
}

static void
test_exit_status (void **state)
{
  cleanup_free char *path = write_script ("exit3", "exit 3\n");
  cleanup_free char *expect
      = xasprintf ("createRuntime hook %s: exited with status 3", path);

  assert_fails_with (hook_of (path, NULL, NULL, 0), HOOK_CREATE_RUNTIME,
                     expect);
}

static void
test_killed_by_signal (void **state)
{
  cleanup_free char *path = write_script ("kill9", "kill -9 $$\n");
  cleanup_free char *expect
      = xasprintf ("poststart hook %s: killed by signal 9", path);

  assert_fails_with (hook_of (path, NULL, NULL, 0), HOOK_POSTSTART, expect);
}

/* Reap every child (the hook's orphans come to us, a subreaper) and check
 * each died of SIGKILL: a survivor would make this wait for its exit and
 * fail the check. */
static void
assert_children_all_killed (void)
{
  int status;
  pid_t pid;

  while ((pid = waitpid (-1, &status, 0)) > 0)
    {
      assert_true (WIFSIGNALED (status));
      assert_int_equal (WTERMSIG (status), SIGKILL);
    }
  assert_int_equal (errno, ECHILD);
}

static void
test_timeout_kills_hook_and_its_children (void **state)
{
  cleanup_free char *pidfile = tmp_path ("hook.pid");
  cleanup_free char *path
      = write_script ("slow", "echo $$ > %s\nsleep 10 &\nwait\n", pidfile);
  cleanup_free char *expect
      = xasprintf ("prestart hook %s: timed out after 1s", path);
  cleanup_free char *hook_pid_text = NULL;
  size_t len;
  int hook_pid;

  assert_int_equal (prctl (PR_SET_CHILD_SUBREAPER, 1), 0);
  assert_fails_with (hook_of (path, NULL, NULL, 1), HOOK_PRESTART, expect);

  /* hooks_run reaped the hook itself. */
  if (access (pidfile, F_OK) == 0)
    {
      hook_pid_text = read_tmp ("hook.pid", &len);
      hook_pid_text[strcspn (hook_pid_text, "\n")] = '\0';
      assert_int_equal (parse_int (hook_pid_text, &hook_pid), 0);
      assert_int_equal (kill (hook_pid, 0), -1);
      assert_int_equal (errno, ESRCH);
    }
  assert_children_all_killed ();
  assert_int_equal (prctl (PR_SET_CHILD_SUBREAPER, 0), 0);
}

static void
test_missing_path (void **state)
{
  assert_fails_with (hook_of ("/nonexistent/moat-hook", NULL, NULL, 0),
                     HOOK_PRESTART,
                     "prestart hook /nonexistent/moat-hook: No such file or "
                     "directory");
}

static void
test_relative_path (void **state)
{
  assert_fails_with (hook_of ("foo", NULL, NULL, 0), HOOK_PRESTART,
                     "prestart hook foo: path must be absolute");
  assert_fails_with (hook_of ("", NULL, NULL, 0), HOOK_CREATE_CONTAINER,
                     "createContainer hook : path must be absolute");
}

static void
test_not_executable (void **state)
{
  cleanup_free char *noexec = tmp_path ("noexec");
  cleanup_free char *noshebang = tmp_path ("noshebang");
  cleanup_free char *expect1 = NULL, *expect2 = NULL;

  assert_int_equal (write_file_atomic (AT_FDCWD, noexec, "exit 0\n", 7, 0644),
                    0);
  assert_int_equal (write_file_atomic (AT_FDCWD, noshebang,
                                       "\x7f"
                                       "ELF garbage",
                                       12, 0755),
                    0);
  expect1 = xasprintf ("startContainer hook %s: Permission denied", noexec);
  expect2 = xasprintf ("startContainer hook %s: Exec format error", noshebang);
  assert_fails_with (hook_of (noexec, NULL, NULL, 0), HOOK_START_CONTAINER,
                     expect1);
  assert_fails_with (hook_of (noshebang, NULL, NULL, 0), HOOK_START_CONTAINER,
                     expect2);
}

static char *
big_state (size_t size)
{
  char *s = xmalloc (size + 1);
  memset (s, 'x', size);
  s[0] = '"';
  s[size - 1] = '"';
  s[size] = '\0';
  return s;
}

static void
assert_sigpipe_untouched (void)
{
  sigset_t pending, mask;

  sigpending (&pending);
  assert_int_equal (sigismember (&pending, SIGPIPE), 0);
  sigprocmask (SIG_BLOCK, NULL, &mask);
  assert_int_equal (sigismember (&mask, SIGPIPE), 0);
}

static void
test_hook_ignoring_big_state (void **state)
{
  cleanup_free char *json = big_state (1 << 20);
  cleanup_free char *quick = write_script ("quick", "exit 0\n");
  cleanup_free char *closer = write_script ("closer", "exec 0<&-\nexit 0\n");
  cleanup_error struct moat_error *err = NULL;

  /* SIGPIPE's default action would kill this test. */
  signal (SIGPIPE, SIG_DFL);
  assert_int_equal (
      run_one (hook_of (quick, NULL, NULL, 0), HOOK_PRESTART, json, &err), 0);
  assert_int_equal (
      run_one (hook_of (closer, NULL, NULL, 0), HOOK_PRESTART, json, &err), 0);
  assert_null (err);
  assert_sigpipe_untouched ();
}

static void
test_hook_not_reading_times_out (void **state)
{
  cleanup_free char *json = big_state (1 << 20);
  cleanup_free char *stuck = write_script ("stuck", "exec sleep 10\n");
  cleanup_free char *expect
      = xasprintf ("prestart hook %s: timed out after 1s", stuck);

  signal (SIGPIPE, SIG_DFL);
  {
    cleanup_error struct moat_error *err = NULL;
    struct spec_hook hook = hook_of (stuck, NULL, NULL, 1);
    assert_true (run_one (hook, HOOK_PRESTART, json, &err) < 0);
    assert_string_equal (err->msg, expect);
  }
  assert_sigpipe_untouched ();
}

static void
test_big_state_read_whole (void **state)
{
  cleanup_free char *json = big_state (1 << 20);
  cleanup_free char *out = tmp_path ("big");
  cleanup_free char *path = write_script ("reader", "cat > %s\n", out);
  cleanup_free char *got = NULL;
  cleanup_error struct moat_error *err = NULL;
  size_t len;

  assert_int_equal (
      run_one (hook_of (path, NULL, NULL, 0), HOOK_PRESTART, json, &err), 0);
  got = read_tmp ("big", &len);
  assert_int_equal (len, 1 << 20);
  assert_memory_equal (got, json, len);
}

static void
test_order_and_first_failure_stops (void **state)
{
  cleanup_free char *log = tmp_path ("order");
  cleanup_free char *h1 = write_script ("h1", "echo one >> %s\n", log);
  cleanup_free char *h2 = write_script ("h2", "echo two \"$1\" >> %s\n", log);
  cleanup_free char *h3
      = write_script ("h3", "echo three >> %s\nexit 7\n", log);
  cleanup_free char *h4 = write_script ("h4", "echo four >> %s\n", log);
  char *args2[] = { "h2", "arg", NULL };
  struct spec_hook v[] = {
    hook_of (h1, NULL, NULL, 0),
    hook_of (h2, args2, NULL, 0),
    hook_of (h3, NULL, NULL, 0),
    hook_of (h4, NULL, NULL, 0),
  };
  struct spec_hook_list all = { .v = v, .n = 4 };
  struct spec_hook_list first_two = { .v = v, .n = 2 };
  cleanup_error struct moat_error *err = NULL;
  cleanup_free char *got = NULL;
  cleanup_free char *expect
      = xasprintf ("createContainer hook %s: exited with status 7", h3);

  assert_int_equal (hooks_run (&first_two, HOOK_CREATE_CONTAINER, "{}", &err),
                    0);
  got = read_tmp ("order", NULL);
  assert_string_equal (got, "one\ntwo arg\n");
  unlink (log);
  free (steal_pointer (&got));

  assert_true (hooks_run (&all, HOOK_CREATE_CONTAINER, "{}", &err) < 0);
  assert_string_equal (err->msg, expect);
  got = read_tmp ("order", NULL);
  assert_string_equal (got, "one\ntwo arg\nthree\n");
}

/* runtime-spec: a failing poststart or poststop hook does not stop the
 * ones after it. */
static void
test_poststop_runs_all_and_reports_each_failure (void **state)
{
  cleanup_free char *log = tmp_path ("order");
  cleanup_free char *h1 = write_script ("p1", "echo one >> %s\nexit 1\n", log);
  cleanup_free char *h2 = write_script ("p2", "echo two >> %s\n", log);
  cleanup_free char *h3
      = write_script ("p3", "echo three >> %s\nexit 2\n", log);
  struct spec_hook v[] = {
    hook_of (h1, NULL, NULL, 0),
    hook_of (h2, NULL, NULL, 0),
    hook_of (h3, NULL, NULL, 0),
  };
  struct spec_hook_list all = { .v = v, .n = 3 };
  cleanup_error struct moat_error *err = NULL;
  cleanup_free char *got = NULL;
  cleanup_free char *expect = xasprintf (
      "poststop hook %s: exited with status 1; poststop hook %s: exited with "
      "status 2",
      h1, h3);

  assert_true (hooks_run (&all, HOOK_POSTSTOP, "{}", &err) < 0);
  assert_string_equal (err->msg, expect);
  got = read_tmp ("order", NULL);
  assert_string_equal (got, "one\ntwo\nthree\n");
}

static void
test_empty_list (void **state)
{
  struct spec_hook_list none = { 0 };
  cleanup_error struct moat_error *err = NULL;

  assert_int_equal (hooks_run (&none, HOOK_PRESTART, "{}", &err), 0);
  assert_int_equal (hooks_run (NULL, HOOK_PRESTART, "{}", &err), 0);
  assert_null (err);
}

static int
count_open_fds (void)
{
  DIR *d = opendir ("/proc/self/fd");
  int n = 0;

  assert_non_null (d);
  while (readdir (d) != NULL)
    n++;
  closedir (d);
  return n;
}

static void
test_no_fd_leaks (void **state)
{
  cleanup_free char *ok = write_script ("ok", "cat >/dev/null\n");
  cleanup_free char *fail = write_script ("fail", "exit 1\n");
  cleanup_free char *slow = write_script ("slow", "exec sleep 10\n");
  cleanup_free char *noexec = tmp_path ("noexec");
  struct spec_hook hooks[] = {
    hook_of (ok, NULL, NULL, 0),
    hook_of (fail, NULL, NULL, 0),
    hook_of (slow, NULL, NULL, 1),
    hook_of (noexec, NULL, NULL, 0),
    hook_of ("/nonexistent", NULL, NULL, 0),
  };
  int before;

  assert_int_equal (write_file_atomic (AT_FDCWD, noexec, "", 0, 0644), 0);
  before = count_open_fds ();
  for (size_t i = 0; i < sizeof (hooks) / sizeof (hooks[0]); i++)
    {
      cleanup_error struct moat_error *err = NULL;
      run_one (hooks[i], HOOK_PRESTART, "{}", &err);
    }
  assert_int_equal (count_open_fds (), before);
}

/* Exit code of the no-pidfd child below: 0, or the number of the failed
 * check. */
static int
run_without_pidfd_checks (void)
{
  cleanup_free char *exit3 = write_script ("nopidfd-exit3", "exit 3\n");
  cleanup_free char *slow = write_script ("nopidfd-slow", "exec sleep 10\n");
  cleanup_free char *ok = write_script ("nopidfd-ok", "cat >/dev/null\n");
  cleanup_free char *expect_exit
      = xasprintf ("prestart hook %s: exited with status 3", exit3);
  cleanup_free char *expect_timeout
      = xasprintf ("prestart hook %s: timed out after 1s", slow);
  cleanup_free char *json = big_state (1 << 20);
  struct moat_error *err = NULL;
  scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);

  if (ctx == NULL
      || seccomp_rule_add (ctx, SCMP_ACT_ERRNO (ENOSYS), SCMP_SYS (pidfd_open),
                           0)
             < 0
      || seccomp_load (ctx) < 0)
    return 1;
  seccomp_release (ctx);
  if (syscall (SYS_pidfd_open, getpid (), 0) >= 0 || errno != ENOSYS)
    return 2;

  if (run_one (hook_of (ok, NULL, NULL, 0), HOOK_PRESTART, json, &err) != 0)
    return 3;
  if (run_one (hook_of (exit3, NULL, NULL, 0), HOOK_PRESTART, "{}", &err) >= 0
      || strcmp (err->msg, expect_exit) != 0)
    return 4;
  moat_error_free (&err);
  if (run_one (hook_of (slow, NULL, NULL, 1), HOOK_PRESTART, json, &err) >= 0
      || strcmp (err->msg, expect_timeout) != 0)
    return 5;
  moat_error_free (&err);
  return 0;
}

static void
test_without_pidfd (void **state)
{
  int status;
  pid_t pid = fork ();

  assert_true (pid >= 0);
  if (pid == 0)
    _exit (run_without_pidfd_checks ());
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
}

int
main (int argc, char **argv)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_state_args_env_exact, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_no_args_no_env, setup, teardown),
    cmocka_unit_test_setup_teardown (test_exit_status, setup, teardown),
    cmocka_unit_test_setup_teardown (test_killed_by_signal, setup, teardown),
    cmocka_unit_test_setup_teardown (test_timeout_kills_hook_and_its_children,
                                     setup, teardown),
    cmocka_unit_test_setup_teardown (test_missing_path, setup, teardown),
    cmocka_unit_test_setup_teardown (test_relative_path, setup, teardown),
    cmocka_unit_test_setup_teardown (test_not_executable, setup, teardown),
    cmocka_unit_test_setup_teardown (test_hook_ignoring_big_state, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_hook_not_reading_times_out, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_big_state_read_whole, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_order_and_first_failure_stops, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (
        test_poststop_runs_all_and_reports_each_failure, setup, teardown),
    cmocka_unit_test (test_empty_list),
    cmocka_unit_test_setup_teardown (test_no_fd_leaks, setup, teardown),
    cmocka_unit_test_setup_teardown (test_without_pidfd, setup, teardown),
  };

  if (running_as_dump_hook ())
    return dump_hook_main (argc, argv);
  return cmocka_run_group_tests (tests, NULL, NULL);
}
