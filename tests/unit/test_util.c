/* lib/util.c: the --pid-file writer create and exec share. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../lib/dynlib.h"
#include "../../lib/util.h"

static char dir[] = "/tmp/moat-test-util-XXXXXX";

static int
setup (void **state)
{
  (void)state;
  return mkdtemp (dir) ? 0 : -1;
}

static int
teardown (void **state)
{
  cleanup_free char *cmd = xasprintf ("rm -rf '%s'", dir);
  (void)state;
  return system (cmd) == 0 ? 0 : -1;
}

static char *
slurp (const char *path)
{
  char *text = NULL;
  assert_int_equal (read_file_at (AT_FDCWD, path, 64, &text, NULL), 0);
  return text;
}

static void
test_pid_file_written (void **state)
{
  cleanup_free char *path = xasprintf ("%s/pid", dir);
  cleanup_free char *text = NULL;
  cleanup_free char *tmp = xasprintf ("%s/pid.tmp", dir);
  struct moat_error *err = NULL;
  struct stat st;

  (void)state;
  assert_int_equal (write_pid_file (path, 4242, &err), 0);
  assert_null (err);
  text = slurp (path);
  assert_string_equal (text, "4242");
  assert_int_equal (stat (path, &st), 0);
  assert_true (S_ISREG (st.st_mode));
  assert_int_equal (access (tmp, F_OK), -1);
}

static void
test_pid_file_replaced_atomically (void **state)
{
  cleanup_free char *path = xasprintf ("%s/replaced", dir);
  cleanup_free char *tmp = xasprintf ("%s/replaced.tmp", dir);
  cleanup_free char *text = NULL;
  struct moat_error *err = NULL;
  struct stat before, after;
  int fd;

  (void)state;
  /* A longer old content: the new file is a new inode, never a truncated
   * old one that a reader could catch empty. */
  fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  assert_true (fd >= 0);
  assert_int_equal (write_all (fd, "123456789", 9), 0);
  close (fd);
  assert_int_equal (stat (path, &before), 0);
  assert_int_equal (write_pid_file (path, 7, &err), 0);
  assert_int_equal (stat (path, &after), 0);
  assert_int_not_equal (before.st_ino, after.st_ino);
  text = slurp (path);
  assert_string_equal (text, "7");
  /* The old file, swapped out to the temporary name, is gone too. */
  assert_int_equal (access (tmp, F_OK), -1);
  assert_int_equal (stat (path, &before), 0);
  assert_int_equal (write_pid_file (path, 8, &err), 0);
  free (text);
  text = slurp (path);
  assert_string_equal (text, "8");
  assert_int_equal (access (tmp, F_OK), -1);
}

static void
test_pid_file_relative (void **state)
{
  cleanup_free char *sub = xasprintf ("%s/sub", dir);
  cleanup_free char *p1 = xasprintf ("%s/bare", dir);
  cleanup_free char *p2 = xasprintf ("%s/sub/nested", dir);
  cleanup_free char *t1 = NULL;
  cleanup_free char *t2 = NULL;
  struct moat_error *err = NULL;
  char cwd[4096];

  (void)state;
  assert_non_null (getcwd (cwd, sizeof (cwd)));
  assert_int_equal (mkdir (sub, 0755), 0);
  assert_int_equal (chdir (dir), 0);
  assert_int_equal (write_pid_file ("bare", 1, &err), 0);
  assert_int_equal (write_pid_file ("sub/nested", 2, &err), 0);
  assert_int_equal (chdir (cwd), 0);
  t1 = slurp (p1);
  t2 = slurp (p2);
  assert_string_equal (t1, "1");
  assert_string_equal (t2, "2");
}

static void
test_pid_file_missing_dir (void **state)
{
  cleanup_free char *path = xasprintf ("%s/no/such/pid", dir);
  cleanup_free char *want = NULL;
  struct moat_error *err = NULL;

  (void)state;
  assert_true (write_pid_file (path, 1, &err) < 0);
  assert_non_null (err);
  assert_int_equal (err->errnum, ENOENT);
  want = xasprintf ("pid file %s", path);
  assert_memory_equal (err->msg, want, strlen (want));
  moat_error_free (&err);
}

/* format_rfc3339 converts days to dates itself (gmtime_r would load the
 * time zone): the same text as libc's, over leap days, century years, and
 * every day of 1969-2101 at an awkward time of day. */
static void
test_rfc3339_matches_libc (void **state)
{
  static const int64_t fixed[]
      = { 0,          -1,         951782400,    951868799,
          4107542400, 4107456000, 253402300799, 1764084493 };
  (void)state;
  for (size_t i = 0; i < sizeof (fixed) / sizeof (*fixed) + 48211; i++)
    {
      struct timespec ts = { .tv_nsec = 123456789 };
      struct tm tm;
      char want[64], base[32], got[64];
      ts.tv_sec = i < sizeof (fixed) / sizeof (*fixed)
                      ? fixed[i]
                      : -86400 * 366 + (int64_t)(i - 8) * 86400 + 86399 - 7;
      gmtime_r (&ts.tv_sec, &tm);
      strftime (base, sizeof (base), "%Y-%m-%dT%H:%M:%S", &tm);
      snprintf (want, sizeof (want), "%s.123456789Z", base);
      format_rfc3339 (&ts, got, sizeof (got));
      assert_string_equal (got, want);
    }
}

/* Once sealed (moat entering a container's namespaces), nothing more is
 * loaded: the loader would read the container's files. A library loaded
 * before stays usable. In a child: the seal is for the process's life. */
static void
test_dynlib_sealed_loads_nothing (void **state)
{
  static struct dynlib before = { .soname = "libz.so.1" };
  static struct dynlib after = { .soname = "libnettle.so.8" };
  static void *zlib_version, *sha256_init;
  const struct dynlib_symbol before_syms[]
      = { { "zlibVersion", &zlib_version } };
  const struct dynlib_symbol after_syms[]
      = { { "nettle_sha256_init", &sha256_init } };
  pid_t pid;
  int status;
  (void)state;

  pid = fork ();
  if (pid == 0)
    {
      struct moat_error *err = NULL;
      if (dynlib_load (&before, before_syms, 1, &err) < 0)
        _exit (10);
      dynlib_seal ();
      if (dynlib_load (&before, before_syms, 1, &err) < 0)
        _exit (11);
      if (dynlib_load (&after, after_syms, 1, &err) == 0 || sha256_init)
        _exit (12);
      _exit (err && strstr (err->msg, "refused inside a container") ? 0 : 13);
    }
  assert_true (pid > 0);
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
}

/* The program's own build-id, as readelf reads it from the file. */
static void
test_program_build_id (void **state)
{
  char id[41], line[256], want[64] = "", cmd[64];
  FILE *f;

  (void)state;
  /* binutils comes with build-essential; the guest of check-host runs the
   * host's binaries without it. */
  if (system ("command -v readelf >/dev/null 2>&1") != 0)
    {
      fprintf (stderr, "skipped: no readelf to read the build-id with\n");
      skip ();
    }
  snprintf (cmd, sizeof (cmd), "readelf -n /proc/%d/exe 2>/dev/null",
            (int)getpid ());
  f = popen (cmd, "r");
  assert_non_null (f);
  while (fgets (line, sizeof (line), f))
    if (sscanf (line, " Build ID: %63s", want) == 1)
      break;
  pclose (f);
  assert_true (program_build_id (id, sizeof (id)));
  assert_int_equal (strlen (id), 40);
  assert_string_equal (id, want);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_pid_file_written),
    cmocka_unit_test (test_pid_file_replaced_atomically),
    cmocka_unit_test (test_pid_file_relative),
    cmocka_unit_test (test_pid_file_missing_dir),
    cmocka_unit_test (test_rfc3339_matches_libc),
    cmocka_unit_test (test_dynlib_sealed_loads_nothing),
    cmocka_unit_test (test_program_build_id),
  };
  return cmocka_run_group_tests (tests, setup, teardown);
}
