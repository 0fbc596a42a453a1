/* lib/util.c: the --pid-file writer create and exec share. */
#include <dirent.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/* write_file_atomic where the filesystem has no O_TMPFILE (vfat, NFS),
 * or where an unnamed file cannot be linked (no CAP_DAC_READ_SEARCH and
 * no /proc): a seccomp filter makes openat with O_TMPFILE, or linkat,
 * fail as they do there. */
enum without
{
  WITH_ALL,
  WITHOUT_TMPFILE,
  WITHOUT_LINKAT,
};

static void
take_away (enum without what)
{
  struct sock_filter tmpfile[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 3),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
              offsetof (struct seccomp_data, args[2])),
    BPF_JUMP (BPF_JMP | BPF_JSET | BPF_K, __O_TMPFILE & ~O_DIRECTORY, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EOPNOTSUPP),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_filter linking[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_linkat, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOENT),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog
      = what == WITHOUT_TMPFILE
            ? (struct sock_fprog){ sizeof (tmpfile) / sizeof (tmpfile[0]),
                                   tmpfile }
            : (struct sock_fprog){ sizeof (linking) / sizeof (linking[0]),
                                   linking };

  if (what == WITH_ALL)
    return;
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
      || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
    _exit (99);
}

enum
{
  WRITERS = 4,
  ROUNDS = 300,
  CONTENT = 16384
};

/* Writer w's content: CONTENT + w bytes of its own letter. */
static bool
is_one_writers_whole (const char *text, size_t len)
{
  if (len < CONTENT || len >= CONTENT + WRITERS)
    return false;
  for (size_t i = 0; i < len; i++)
    if (text[i] != (char)('a' + (len - CONTENT)))
      return false;
  return true;
}

static size_t
count_entries (const char *path)
{
  DIR *d = opendir (path);
  struct dirent *de;
  size_t n = 0;

  assert_non_null (d);
  while ((de = readdir (d)))
    n += strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0;
  closedir (d);
  return n;
}

static char *
fresh_subdir (const char *name)
{
  char *sub = xasprintf ("%s/%s", dir, name);
  assert_int_equal (mkdir (sub, 0700), 0);
  return sub;
}

/* Writers of one file at once, none serialised: whenever the file is
 * read, and at the end, it is one writer's whole content, every write
 * succeeds, and no temporary file is left. */
static void
concurrent_writers (const char *name, enum without what)
{
  cleanup_free char *sub = fresh_subdir (name);
  cleanup_free char *path = xasprintf ("%s/shared", sub);
  size_t reads = 0, torn = 0, live = WRITERS;
  int failed = 0;

  for (int w = 0; w < WRITERS; w++)
    {
      pid_t pid = fork ();
      assert_true (pid >= 0);
      if (pid == 0)
        {
          static char buf[CONTENT + WRITERS];
          int dfd = open (sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

          take_away (what);
          memset (buf, 'a' + w, CONTENT + w);
          for (int i = 0; i < ROUNDS; i++)
            if (write_file_atomic (dfd, "shared", buf, CONTENT + w, 0600) < 0)
              _exit (1);
          _exit (0);
        }
    }
  while (live > 0)
    {
      cleanup_free char *text = NULL;
      size_t len;
      int status;
      pid_t done = waitpid (-1, &status, WNOHANG);

      if (done > 0)
        {
          live--;
          failed += !WIFEXITED (status) || WEXITSTATUS (status) != 0;
        }
      if (read_file_at (AT_FDCWD, path, 1 << 20, &text, &len) == 0)
        {
          reads++;
          torn += !is_one_writers_whole (text, len);
        }
    }
  assert_int_equal (failed, 0);
  assert_int_equal (torn, 0);
  assert_true (reads > 0);
  {
    cleanup_free char *text = NULL;
    size_t len;
    assert_int_equal (read_file_at (AT_FDCWD, path, 1 << 20, &text, &len), 0);
    assert_true (is_one_writers_whole (text, len));
  }
  assert_int_equal (count_entries (sub), 1);
}

static void
test_atomic_concurrent_writers (void **state)
{
  (void)state;
  concurrent_writers ("concurrent", WITH_ALL);
}

static void
test_atomic_concurrent_writers_named_temp (void **state)
{
  (void)state;
  concurrent_writers ("concurrent-named", WITHOUT_TMPFILE);
}

static void
test_atomic_concurrent_writers_no_link (void **state)
{
  (void)state;
  concurrent_writers ("concurrent-nolink", WITHOUT_LINKAT);
}

/* A symlink planted at the temporary name the writer once used (f.tmp)
 * is neither followed nor in the way; a directory at path is not
 * replaced, and nothing is left. 0, or the line that failed. */
static int
planted_names (const char *sub)
{
  cleanup_close int dfd = open (sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_free char *text = NULL;
  struct stat st;

  if (dfd < 0 || write_file_atomic (dfd, "victim", "keep", 4, 0600) < 0
      || symlinkat ("victim", dfd, "f.tmp") < 0 || mkdirat (dfd, "d", 0700) < 0)
    return __LINE__;
  for (int round = 0; round < 2; round++)
    {
      free (text);
      text = NULL;
      if (write_file_atomic (dfd, "f", round ? "newer" : "new", round ? 5 : 3,
                             0600)
          < 0)
        return __LINE__;
      if (read_file_at (dfd, "f", 64, &text, NULL) < 0
          || strcmp (text, round ? "newer" : "new") != 0)
        return __LINE__;
      free (text);
      text = NULL;
      if (read_file_at (dfd, "victim", 64, &text, NULL) < 0
          || strcmp (text, "keep") != 0)
        return __LINE__;
      if (fstatat (dfd, "f.tmp", &st, AT_SYMLINK_NOFOLLOW) < 0
          || !S_ISLNK (st.st_mode))
        return __LINE__;
    }
  if (write_file_atomic (dfd, "d", "x", 1, 0600) >= 0)
    return __LINE__;
  if (fstatat (dfd, "d", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (st.st_mode))
    return __LINE__;
  /* victim, f.tmp, f, d: no temporary file */
  return count_entries (sub) == 4 ? 0 : __LINE__;
}

static void
test_atomic_planted_names (void **state)
{
  cleanup_free char *sub = fresh_subdir ("planted");
  (void)state;
  assert_int_equal (planted_names (sub), 0);
}

static void
planted_names_without (const char *name, enum without what)
{
  cleanup_free char *sub = fresh_subdir (name);
  pid_t pid = fork ();
  int status;

  assert_true (pid >= 0);
  if (pid == 0)
    {
      take_away (what);
      _exit (planted_names (sub) % 256);
    }
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
}

static void
test_atomic_planted_names_named_temp (void **state)
{
  (void)state;
  planted_names_without ("planted-named", WITHOUT_TMPFILE);
}

static void
test_atomic_planted_names_no_link (void **state)
{
  (void)state;
  planted_names_without ("planted-nolink", WITHOUT_LINKAT);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_pid_file_written),
    cmocka_unit_test (test_pid_file_replaced_atomically),
    cmocka_unit_test (test_pid_file_relative),
    cmocka_unit_test (test_pid_file_missing_dir),
    cmocka_unit_test (test_atomic_concurrent_writers),
    cmocka_unit_test (test_atomic_concurrent_writers_named_temp),
    cmocka_unit_test (test_atomic_planted_names),
    cmocka_unit_test (test_atomic_planted_names_named_temp),
    cmocka_unit_test (test_atomic_concurrent_writers_no_link),
    cmocka_unit_test (test_atomic_planted_names_no_link),
    cmocka_unit_test (test_rfc3339_matches_libc),
    cmocka_unit_test (test_dynlib_sealed_loads_nothing),
    cmocka_unit_test (test_program_build_id),
  };
  return cmocka_run_group_tests (tests, setup, teardown);
}
