/* runtime/statedir.c: state.json rewritten in place (same inode, padded
 * with blanks when shorter), replaced whole when it outgrows a page. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../lib/util.h"
#include "../../oci/state.h"
#include "../../runtime/statedir.h"

struct dir
{
  char path[64];
  int fd;
};

static int
dir_setup (void **state)
{
  struct dir *d = xcalloc (1, sizeof (*d));
  snprintf (d->path, sizeof (d->path), "/tmp/moat-statedir.XXXXXX");
  assert_non_null (mkdtemp (d->path));
  d->fd = open (d->path, O_DIRECTORY | O_CLOEXEC);
  assert_true (d->fd >= 0);
  *state = d;
  return 0;
}

static int
dir_teardown (void **state)
{
  struct dir *d = *state;
  unlinkat (d->fd, "state.json", 0);
  close (d->fd);
  rmdir (d->path);
  free (d);
  return 0;
}

/* A state whose annotation value is n bytes long. */
static struct container_state
state_with (const char *id, struct spec_kv *kv, size_t n)
{
  char *value = xmalloc (n + 1);
  memset (value, 'v', n);
  value[n] = '\0';
  kv->key = "k";
  kv->value = value;
  return (struct container_state){ .id = (char *)id,
                                   .bundle = "/b",
                                   .rootfs = "/b/rootfs",
                                   .pid = 42,
                                   .created = "2026-11-26T07:00:00Z",
                                   .annotations = kv,
                                   .n_annotations = 1 };
}

static void
write_state (int dirfd, const char *id, size_t n)
{
  struct spec_kv kv;
  struct container_state st = state_with (id, &kv, n);
  struct moat_error *err = NULL;
  assert_int_equal (statedir_write_state (dirfd, &st, &err), 0);
  free (kv.value);
}

static struct stat
stat_state (int dirfd)
{
  struct stat sb;
  assert_int_equal (fstatat (dirfd, "state.json", &sb, 0), 0);
  return sb;
}

static void
assert_reads_back (int dirfd, const char *id, size_t n)
{
  struct container_state *st = NULL;
  struct moat_error *err = NULL;
  int r = statedir_read_state (dirfd, &st, &err);
  if (r < 0)
    fail_msg ("%s", err->msg);
  assert_string_equal (st->id, id);
  assert_int_equal (st->n_annotations, 1);
  assert_int_equal (strlen (st->annotations[0].value), n);
  state_free (st);
}

static void
test_rewritten_in_place (void **state)
{
  struct dir *d = *state;
  write_state (d->fd, "first", 300);
  struct stat before = stat_state (d->fd);
  assert_reads_back (d->fd, "first", 300);

  write_state (d->fd, "second", 400);
  struct stat grown = stat_state (d->fd);
  assert_int_equal (grown.st_ino, before.st_ino);
  assert_true (grown.st_size > before.st_size);
  assert_reads_back (d->fd, "second", 400);

  /* Shorter: blanks pad it to the old size, and it reads back whole. */
  write_state (d->fd, "third", 10);
  struct stat shrunk = stat_state (d->fd);
  assert_int_equal (shrunk.st_ino, before.st_ino);
  assert_int_equal (shrunk.st_size, grown.st_size);
  assert_reads_back (d->fd, "third", 10);
}

static void
test_past_a_page_replaced_whole (void **state)
{
  struct dir *d = *state;
  write_state (d->fd, "small", 10);
  struct stat before = stat_state (d->fd);
  write_state (d->fd, "large", 5000);
  struct stat after = stat_state (d->fd);
  assert_int_not_equal (after.st_ino, before.st_ino);
  assert_reads_back (d->fd, "large", 5000);
  /* And from more than a page back to less: no blank tail that long. */
  write_state (d->fd, "small-again", 10);
  assert_true (stat_state (d->fd).st_size < 4096);
  assert_reads_back (d->fd, "small-again", 10);
}

/* A reader holding state.json (or stopped while it does): the writer
 * does not wait for it, it replaces the file whole; the reader's file
 * keeps the old text, whole. */
static void
test_reader_holding_it_is_not_waited_for (void **state)
{
  struct dir *d = *state;
  char buf[64] = "";
  write_state (d->fd, "old", 10);
  struct stat before = stat_state (d->fd);
  int held = openat (d->fd, "state.json", O_RDONLY | O_CLOEXEC);
  assert_true (held >= 0);
  assert_int_equal (flock (held, LOCK_SH), 0);

  write_state (d->fd, "new", 10);
  assert_int_not_equal (stat_state (d->fd).st_ino, before.st_ino);
  assert_reads_back (d->fd, "new", 10);
  assert_true (pread (held, buf, sizeof (buf) - 1, 0) > 0);
  assert_non_null (strstr (buf, "\"old\""));
  close (held);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_rewritten_in_place, dir_setup,
                                     dir_teardown),
    cmocka_unit_test_setup_teardown (test_past_a_page_replaced_whole, dir_setup,
                                     dir_teardown),
    cmocka_unit_test_setup_teardown (test_reader_holding_it_is_not_waited_for,
                                     dir_setup, dir_teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
