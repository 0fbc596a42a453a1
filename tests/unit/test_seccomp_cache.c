/* runtime/seccomp_cache.c: config.json's filter compiled once. A hit gives
 * what the file holds, and only a file of ours describing exactly this
 * filter counts: one planted under another filter's name, one writable by
 * others, or a damaged one is recompiled instead. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/filter.h>
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

#include "../../runtime/seccomp/seccomp.h"
#include "../../lib/util.h"

static char dir[64];

static int
rm_entry (const char *path, const struct stat *st, int flag, struct FTW *f)
{
  return remove (path);
}

static int
setup (void **state)
{
  snprintf (dir, sizeof (dir), "/tmp/moat-test-sccache.XXXXXX");
  assert_non_null (mkdtemp (dir));
  return 0;
}

static int
teardown (void **state)
{
  nftw (dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  return 0;
}

static char *names_a[] = { "mkdir", "rmdir", NULL };
static char *names_b[] = { "chmod", NULL };
static char *names_c[] = { "chown", NULL }; /* as long as names_b */
static struct spec_seccomp_rule rule_a = { .names = names_a,
                                           .action = "SCMP_ACT_ERRNO",
                                           .has_errno_ret = true,
                                           .errno_ret = 13 };
static struct spec_seccomp_rule rule_b
    = { .names = names_b, .action = "SCMP_ACT_ERRNO" };
static struct spec_seccomp_rule rule_c
    = { .names = names_c, .action = "SCMP_ACT_ERRNO" };
static char *log_flag[] = { "SECCOMP_FILTER_FLAG_LOG", NULL };

static struct spec_seccomp filter_a = { .present = true,
                                        .default_action = "SCMP_ACT_ALLOW",
                                        .syscalls = &rule_a,
                                        .n_syscalls = 1,
                                        .flags = log_flag };
static struct spec_seccomp filter_b = { .present = true,
                                        .default_action = "SCMP_ACT_ALLOW",
                                        .syscalls = &rule_b,
                                        .n_syscalls = 1 };
/* Described in as many bytes as filter_b. */
static struct spec_seccomp filter_c = { .present = true,
                                        .default_action = "SCMP_ACT_ALLOW",
                                        .syscalls = &rule_c,
                                        .n_syscalls = 1 };

static void
compile (const struct spec_seccomp *s, const char *cache,
         struct seccomp_prog *ret)
{
  cleanup_error struct moat_error *err = NULL;
  int r = cache ? seccomp_compile_config_cached (s, cache, ret, &err)
                : seccomp_compile_config (s, ret, &err);
  if (r < 0)
    fail_msg ("compile: %s", err->msg);
}

static bool
same_prog (const struct seccomp_prog *a, const struct seccomp_prog *b)
{
  return a->n_insns == b->n_insns && a->flags == b->flags
         && memcmp (a->insns, b->insns,
                    a->n_insns * sizeof (struct sock_filter))
                == 0;
}

/* The one cache file in dir (the test makes one at a time). */
static char *
only_file (void)
{
  DIR *d = opendir (dir);
  struct dirent *de;
  char *path = NULL;
  int n = 0;

  assert_non_null (d);
  while ((de = readdir (d)))
    if (strncmp (de->d_name, "seccomp-config-", 15) == 0)
      {
        free (path);
        path = xasprintf ("%s/%s", dir, de->d_name);
        n++;
      }
  closedir (d);
  assert_int_equal (n, 1);
  return path;
}

/* The file's layout (seccomp_cache.c): magic[8], desc_len, n_insns,
 * checksum (of description and program), flags, pad; description; program.
 * Replace the program by one instruction, checksum fixed up: a file that
 * only the hit path can have produced. */
#define HDR 40
static void
plant_one_insn_program (const char *path)
{
  cleanup_free char *buf = NULL;
  size_t len = 0;
  uint64_t desc_len, n = 1, sum;
  struct sock_filter ret_allow = BPF_STMT (BPF_RET | BPF_K, 0x7fff0000);

  assert_int_equal (read_file_at (AT_FDCWD, path, 1 << 20, &buf, &len), 0);
  memcpy (&desc_len, buf + 8, 8);
  len = HDR + desc_len + sizeof (ret_allow);
  memcpy (buf + HDR + desc_len, &ret_allow, sizeof (ret_allow));
  memcpy (buf + 16, &n, 8);
  sum = fnv1a64 (buf + HDR, len - HDR, FNV1A64_INIT);
  memcpy (buf + 24, &sum, 8);
  assert_int_equal (write_file_atomic (AT_FDCWD, path, buf, len, 0600), 0);
}

static void
test_second_compile_comes_from_the_file (void **state)
{
  struct seccomp_prog plain = { 0 }, first = { 0 }, second = { 0 };
  cleanup_free char *path = NULL;

  compile (&filter_a, NULL, &plain);
  compile (&filter_a, dir, &first);
  assert_true (same_prog (&plain, &first));
  assert_int_not_equal (first.flags, 0); /* SECCOMP_FILTER_FLAG_LOG kept */
  path = only_file ();
  plant_one_insn_program (path);
  compile (&filter_a, dir, &second);
  assert_int_equal (second.n_insns, 1);
  assert_int_equal (second.flags, plain.flags);
  seccomp_prog_clear (&plain);
  seccomp_prog_clear (&first);
  seccomp_prog_clear (&second);
}

/* Filter C's file renamed to the name filter B's would have (a hash
 * collision, as a pod author could craft): B compiles anew and does not get
 * C's program. C's description is as long as B's, so only comparing its
 * bytes tells them apart. */
static void
test_file_under_another_filters_name_is_ignored (void **state)
{
  struct seccomp_prog plain_b = { 0 }, got = { 0 }, c = { 0 };
  cleanup_free char *path_b = NULL, *path_c = NULL;

  compile (&filter_b, dir, &plain_b);
  path_b = only_file ();
  assert_int_equal (unlink (path_b), 0);
  compile (&filter_c, dir, &c);
  assert_false (same_prog (&c, &plain_b));
  path_c = only_file ();
  assert_int_equal (rename (path_c, path_b), 0);
  compile (&filter_b, dir, &got);
  assert_true (same_prog (&plain_b, &got));
  seccomp_prog_clear (&plain_b);
  seccomp_prog_clear (&got);
  seccomp_prog_clear (&c);
}

static void
test_file_writable_by_others_is_ignored (void **state)
{
  struct seccomp_prog first = { 0 }, got = { 0 };
  cleanup_free char *path = NULL;

  compile (&filter_a, dir, &first);
  path = only_file ();
  plant_one_insn_program (path);
  assert_int_equal (chmod (path, 0622), 0);
  compile (&filter_a, dir, &got);
  assert_true (same_prog (&first, &got));
  seccomp_prog_clear (&first);
  seccomp_prog_clear (&got);
}

static void
test_damaged_file_is_ignored (void **state)
{
  struct seccomp_prog first = { 0 }, got = { 0 };
  cleanup_free char *path = NULL;
  cleanup_close int fd = -1;

  compile (&filter_a, dir, &first);
  path = only_file ();
  fd = open (path, O_WRONLY | O_CLOEXEC);
  assert_true (fd >= 0);
  assert_int_equal (pwrite (fd, "X", 1, HDR + 3), 1); /* in the description */
  compile (&filter_a, dir, &got);
  assert_true (same_prog (&first, &got));
  seccomp_prog_clear (&first);
  seccomp_prog_clear (&got);
}

/* A filter that does not compile leaves no file and fails as before. */
static void
test_errors_are_not_cached (void **state)
{
  struct spec_seccomp_rule bad
      = { .names = names_b, .action = "SCMP_ACT_NO_SUCH_THING" };
  struct spec_seccomp s = { .present = true,
                            .default_action = "SCMP_ACT_ALLOW",
                            .syscalls = &bad,
                            .n_syscalls = 1 };
  struct seccomp_prog p = { 0 };
  cleanup_error struct moat_error *err = NULL;
  DIR *d;
  struct dirent *de;
  int n = 0;

  assert_true (seccomp_compile_config_cached (&s, dir, &p, &err) < 0);
  assert_non_null (strstr (err->msg, "SCMP_ACT_NO_SUCH_THING"));
  d = opendir (dir);
  assert_non_null (d);
  while ((de = readdir (d)))
    n += de->d_name[0] != '.';
  closedir (d);
  assert_int_equal (n, 0);
}

static void
test_absent_filter_and_no_cache_dir (void **state)
{
  struct spec_seccomp none = { .present = false };
  struct seccomp_prog p = { 0 }, plain = { 0 };

  compile (&none, dir, &p);
  assert_int_equal (p.n_insns, 0);
  compile (&filter_b, NULL, &plain);
  {
    cleanup_error struct moat_error *err = NULL;
    assert_int_equal (seccomp_compile_config_cached (&filter_b, NULL, &p, &err),
                      0);
  }
  assert_true (same_prog (&plain, &p));
  seccomp_prog_clear (&p);
  seccomp_prog_clear (&plain);
}

/* A pod author can vary config.json's filter at will: the cache keeps at
 * most 64 files, the one just written among them. */
static void
test_cache_is_bounded (void **state)
{
  enum
  {
    FILTERS = 70
  };
  DIR *d;
  struct dirent *de;
  size_t n = 0;

  for (uint32_t i = 0; i < FILTERS; i++)
    {
      struct spec_seccomp_rule rule = rule_a;
      struct spec_seccomp filter = filter_a;
      struct seccomp_prog prog = { 0 };

      rule.errno_ret = 1000 + i; /* a filter of its own */
      filter.syscalls = &rule;
      compile (&filter, dir, &prog);
      seccomp_prog_clear (&prog);
    }
  d = opendir (dir);
  assert_non_null (d);
  while ((de = readdir (d)))
    n += strncmp (de->d_name, "seccomp-config-", 15) == 0;
  closedir (d);
  assert_int_equal (n, 64);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_second_compile_comes_from_the_file,
                                     setup, teardown),
    cmocka_unit_test_setup_teardown (
        test_file_under_another_filters_name_is_ignored, setup, teardown),
    cmocka_unit_test_setup_teardown (test_file_writable_by_others_is_ignored,
                                     setup, teardown),
    cmocka_unit_test_setup_teardown (test_damaged_file_is_ignored, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_errors_are_not_cached, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_absent_filter_and_no_cache_dir, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_cache_is_bounded, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
