/* G5 for --workdir (profile_workdir_refusal): one answer whatever the
 * operator config holds but writable_bind_trees; and lib/procargs, which
 * hides moat's argv and environment from what it clones into a container. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/procargs.h"
#include "../../lib/util.h"
#include "../../policy/profile.h"

static struct operator_config *
config_with (const char *audit_log, const char *image_cache,
             const char *writable_tree)
{
  struct operator_config *c = xcalloc (1, sizeof (*c));

  c->audit_log = xstrdup (audit_log);
  c->image_cache = xstrdup (image_cache);
  if (writable_tree)
    strv_append (&c->writable_bind_trees, writable_tree);
  c->userns_pool_dir = xstrdup ("/run/moat-idpool");
  return c;
}

/* Refused (want_refused) or not, under each of the configs. */
static void
expect_workdir (struct operator_config *const *cfgs, size_t n, const char *path,
                uid_t owner, mode_t mode, uid_t caller, bool want_refused)
{
  struct workdir_facts f = { .path = path,
                             .owner = owner,
                             .mode = S_IFDIR | mode,
                             .caller = caller,
                             .state_root = "/tmp/moat-state",
                             .image_cache = NULL };

  for (size_t i = 0; i < n; i++)
    {
      const char *why = profile_workdir_refusal (&f, cfgs[i]);
      if ((why != NULL) != want_refused)
        fail_msg ("--workdir %s under config %zu: %s", path, i,
                  why ? why : "allowed");
    }
}

static void
test_workdir_one_rule (void **state)
{
  struct operator_config *cfgs[3];
  (void)state;

  cfgs[0] = NULL; /* the built-in config */
  cfgs[1] = config_with ("/tmp/moat-b/audit.jsonl", "/tmp/moat-b/images", NULL);
  cfgs[2] = config_with ("/tmp/audit.jsonl", "/tmp/images", NULL);
  /* a directory of the caller's, root's or sudo's user's */
  expect_workdir (cfgs, 3, "/tmp/job", 0, 0700, 0, false);
  expect_workdir (cfgs, 3, "/home/alice/job", 1000, 0755, 1000, false);
  expect_workdir (cfgs, 3, "/var/tmp/job", 0, 0700, 0, false);
  /* another user's */
  expect_workdir (cfgs, 3, "/home/alice/job", 1000, 0755, 0, true);
  expect_workdir (cfgs, 3, "/tmp/job", 0, 0700, 1000, true);
  /* system trees, shared parents, everyone's */
  static const char *const refused[]
      = { "/",           "/opt",       "/usr/local/sbin",
          "/srv/x",      "/var/spool", "/usr/lib/systemd/system",
          "/etc/cron.d", "/root/job",  "/run/user/0",
          "/home",       "/tmp",       "/var/lib/docker/volumes/v/_data",
          "/boot/x",     "/var/log",   "/tmp/moat-state/x" };
  for (size_t i = 0; i < sizeof (refused) / sizeof (refused[0]); i++)
    expect_workdir (cfgs, 3, refused[i], 0, 0755, 0, true);
  expect_workdir (cfgs, 3, "/tmp/shared", 0, 0777, 0, true);
  /* the audit log's directory, the image cache: refused where they are */
  expect_workdir (cfgs + 1, 1, "/tmp/moat-b", 0, 0700, 0, true);
  expect_workdir (cfgs + 1, 1, "/tmp/moat-b/images/sha256", 0, 0700, 0, true);
  expect_workdir (cfgs + 2, 1, "/tmp/images/x", 0, 0700, 0, true);
  for (size_t i = 1; i < 3; i++)
    operator_config_free (cfgs[i]);

  /* writable_bind_trees: the operator's word, in a system tree too */
  cfgs[0] = config_with ("/var/log/moat/audit.jsonl", "/var/lib/moat/images",
                         "/srv/jobs");
  expect_workdir (cfgs, 1, "/srv/jobs/7", 1000, 0755, 0, false);
  expect_workdir (cfgs, 1, "/srv/other", 0, 0755, 0, true);
  operator_config_free (cfgs[0]);
}

static void
test_procargs_hide_show (void **state)
{
  char block[] = "/usr/bin/moat\0--env\0GITHUB_TOKEN=s3cret\0HOME=/root";
  char *argv[] = { block, block + 14, block + 20, NULL };
  char *env[] = { block + 40, NULL };
  char **saved_environ = environ;
  char copy[sizeof (block)];
  (void)state;

  memcpy (copy, block, sizeof (block));
  environ = env;
  procargs_take (3, argv);
  /* moat reads its heap copies from here on */
  assert_ptr_not_equal (argv[0], block);
  assert_string_equal (argv[2], "GITHUB_TOKEN=s3cret");
  assert_string_equal (getenv ("HOME"), "/root");
  procargs_hide ();
  assert_string_equal (block, "moat");
  for (size_t i = 5; i < sizeof (block); i++)
    assert_int_equal (block[i], 0);
  assert_string_equal (argv[2], "GITHUB_TOKEN=s3cret");
  procargs_show ();
  assert_memory_equal (block, copy, sizeof (block));
  environ = saved_environ;
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_workdir_one_rule),
    cmocka_unit_test (test_procargs_hide_show),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
