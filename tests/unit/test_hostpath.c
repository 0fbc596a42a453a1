/* lib/hostpath.c: a link anywhere on a host path is refused, by openat2
 * and by the walk that stands in for it on kernels without one (this
 * kernel has openat2: the walk is called directly). */
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
#include <unistd.h>

#include <cmocka.h>

#include "../../lib/hostpath.h"
#include "../../lib/util.h"

static char tree[] = "/tmp/moat-hostpath.XXXXXX";

typedef int (*open_fn) (const char *path, int flags, mode_t mode);

/* d/f, d/link -> f, linkdir -> d, fifo; the cwd is the tree. */
static int
make_tree (void **state)
{
  (void)state;
  if (mkdtemp (tree) == NULL || chdir (tree) < 0 || mkdir ("d", 0755) < 0
      || symlink ("f", "d/link") < 0 || symlink ("d", "linkdir") < 0
      || mkfifo ("fifo", 0600) < 0)
    return -1;
  return write_file_atomic (AT_FDCWD, "d/f", "x", 1, 0644) < 0 ? -1 : 0;
}

static int
remove_tree (void **state)
{
  static const char *const names[] = { "d/f", "d/link", "linkdir", "fifo" };

  (void)state;
  for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++)
    unlink (names[i]);
  if (rmdir ("d") < 0 || chdir ("/") < 0)
    return -1;
  return rmdir (tree);
}

static void
assert_opens (open_fn fn, const char *path, int flags)
{
  int fd = fn (path, flags, 0);
  if (fd < 0)
    fail_msg ("%s: %s", path, strerror (-fd));
  close (fd);
}

static void
check_paths (open_fn fn)
{
  cleanup_free char *abs = xasprintf ("%s/d/f", tree);

  assert_opens (fn, "d/f", O_RDONLY);
  assert_opens (fn, abs, O_RDONLY);
  assert_opens (fn, "d/", O_RDONLY | O_DIRECTORY);
  assert_opens (fn, "d//../d/./f", O_RDONLY);
  assert_opens (fn, "/", O_RDONLY | O_DIRECTORY);
  assert_opens (fn, "d", O_PATH);
  assert_int_equal (fn ("d/link", O_RDONLY, 0), -ELOOP);
  assert_int_equal (fn ("d/link", O_PATH, 0), -ELOOP);
  assert_int_equal (fn ("linkdir/f", O_RDONLY, 0), -ELOOP);
  assert_int_equal (fn ("linkdir", O_RDONLY | O_DIRECTORY, 0), -ELOOP);
  assert_int_equal (fn ("d/f/", O_RDONLY, 0), -ENOTDIR);
  assert_int_equal (fn ("d/f/x", O_RDONLY, 0), -ENOTDIR);
  assert_int_equal (fn ("d/none", O_RDONLY, 0), -ENOENT);
  /* /proc/self is a link, and what is under it magic links. */
  assert_int_equal (fn ("/proc/self/fd/0", O_RDONLY, 0), -ELOOP);
  assert_int_equal (fn ("/dev/stdin", O_RDONLY, 0), -ELOOP);
  assert_int_equal (fn ("linkdir/made", O_WRONLY | O_CREAT, 0600), -ELOOP);
  assert_int_equal (access ("d/made", F_OK), -1);
  assert_opens (fn, "d/made", O_WRONLY | O_CREAT);
  assert_int_equal (unlink ("d/made"), 0);
}

static void
test_openat2 (void **state)
{
  (void)state;
  check_paths (hostpath_open);
}

static void
test_walking (void **state)
{
  (void)state;
  check_paths (hostpath_open_walking);
}

static void
test_typed (void **state)
{
  struct moat_error *err = NULL;
  int fd = -1;

  (void)state;
  assert_int_equal (
      hostpath_open_typed ("fifo", O_RDONLY, 0, HOSTPATH_REG, "F", &fd, &err),
      -1);
  assert_string_equal (err->msg, "F: a FIFO; a regular file only");
  moat_error_free (&err);
  assert_int_equal (
      hostpath_open_typed ("fifo", O_WRONLY, 0, HOSTPATH_REG, "F", &fd, &err),
      -1);
  assert_string_equal (err->msg, "F: a FIFO; a regular file only");
  moat_error_free (&err);
  assert_int_equal (hostpath_open_typed ("d", O_RDONLY, 0,
                                         HOSTPATH_REG | HOSTPATH_FIFO, "F", &fd,
                                         &err),
                    -1);
  assert_string_equal (err->msg,
                       "F: a directory; a regular file or a FIFO only");
  moat_error_free (&err);
  assert_int_equal (
      hostpath_open_typed ("d/link", O_RDONLY, 0, HOSTPATH_REG, "F", &fd, &err),
      -1);
  assert_string_equal (err->msg, "F: " HOSTPATH_LINK_TEXT);
  moat_error_free (&err);
  /* A FIFO with no writer opens at once, and blocks the payload's reads
   * as a FIFO should. */
  assert_int_equal (hostpath_open_typed ("fifo", O_RDONLY, 0,
                                         HOSTPATH_REG | HOSTPATH_FIFO, "F", &fd,
                                         &err),
                    0);
  assert_int_equal (fcntl (fd, F_GETFL) & O_NONBLOCK, 0);
  close (fd);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_openat2),
    cmocka_unit_test (test_walking),
    cmocka_unit_test (test_typed),
  };
  return cmocka_run_group_tests (tests, make_tree, remove_tree);
}
