/* audit_write: one valid JSON line per call, every override in it, never a
 * credential's value; whole lines even when processes write at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../oci/json.h"
#include "../../oci/spec.h"
#include "../../runtime/audit.h"
#include "../../lib/util.h"

struct tmpdir
{
  char dir[64];
  char log[160];
};

static int
setup (void **state)
{
  struct tmpdir *t = xcalloc (1, sizeof (*t));

  snprintf (t->dir, sizeof (t->dir), "/tmp/moat-test-audit-XXXXXX");
  if (mkdtemp (t->dir) == NULL)
    return -1;
  /* a directory audit_write has to create */
  snprintf (t->log, sizeof (t->log), "%s/log/moat/audit.jsonl", t->dir);
  *state = t;
  return 0;
}

static int
teardown (void **state)
{
  struct tmpdir *t = *state;
  char path[200];

  unlink (t->log);
  snprintf (path, sizeof (path), "%s/link.jsonl", t->dir);
  unlink (path);
  snprintf (path, sizeof (path), "%s/log/moat", t->dir);
  rmdir (path);
  snprintf (path, sizeof (path), "%s/log", t->dir);
  rmdir (path);
  rmdir (t->dir);
  free (t);
  return 0;
}

static char *
read_log (const char *path)
{
  char *text = NULL;
  size_t len;
  assert_int_equal (read_file_at (AT_FDCWD, path, 64 << 20, &text, &len), 0);
  return text;
}

/* Parse each line; returns how many there were. */
static size_t
for_each_line (char *text, void (*fn) (json_node *, void *), void *data)
{
  size_t n = 0;

  for (char *line = text, *nl; (nl = strchr (line, '\n')); line = nl + 1)
    {
      json_node *root = NULL;
      struct moat_error *err = NULL;
      if (json_parse (line, nl - line, JSON_MAX_SIZE, &root, &err) < 0)
        fail_msg ("line %zu is not JSON: %s", n, err->msg);
      if (fn)
        fn (root, data);
      json_free (root);
      n++;
    }
  return n;
}

static const char *
str (json_node *obj, const char *key)
{
  json_node *v = json_get (obj, key);
  assert_non_null (v);
  return json_is_null (v) ? NULL : json_string (v);
}

static struct profile *
default_profile (const char *dir)
{
  char path[200];
  struct profile *p = NULL;
  struct moat_error *err = NULL;
  FILE *f;

  snprintf (path, sizeof (path), "%s/config.json", dir);
  f = fopen (path, "we");
  assert_non_null (f);
  fputs ("{}", f);
  fclose (f);
  if (profile_load (path, NULL, &p, NULL, &err) < 0)
    fail_msg ("profile_load: %s", err->msg);
  unlink (path);
  return p;
}

static void
check_create_line (json_node *root, void *data)
{
  const struct override_list *ov = data;
  json_node *list = json_get (root, "overrides");

  assert_non_null (str (root, "time"));
  assert_string_equal (str (root, "verb"), "create");
  assert_string_equal (str (root, "id"), "c1");
  assert_string_equal (str (root, "bundle"), "/srv/bundles/c1");
  assert_string_equal (str (root, "profile"), "strict");
  assert_string_equal (str (root, "result"), "ok");
  assert_null (json_get (root, "error"));
  assert_string_equal (str (root, "network_guard"), "cgroup-bpf");
  assert_int_equal (json_array_len (list), ov->n);
  for (size_t i = 0; i < ov->n; i++)
    {
      json_node *o = json_array_get (list, i);
      const char *asked = str (o, "asked"), *enforced = str (o, "enforced");
      assert_string_equal (str (o, "kind"), override_kind_name (ov->v[i].kind));
      assert_string_equal (str (o, "path"), ov->v[i].path);
      if (ov->v[i].asked)
        assert_string_equal (asked, ov->v[i].asked);
      else
        assert_null (asked);
      if (ov->v[i].enforced)
        assert_string_equal (enforced, ov->v[i].enforced);
      else
        assert_null (enforced);
    }
}

static void
test_create_line_has_every_override (void **state)
{
  struct tmpdir *t = *state;
  struct profile *p = default_profile (t->dir);
  struct spec *s = NULL;
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  struct stat st;
  char *text;

  if (spec_load ("tests/fixtures/permissive.config.json", &s, &err) < 0)
    fail_msg ("spec_load: %s", err->msg);
  /* refusals are overrides too: the line must carry them */
  assert_true (profile_apply (s, p, NULL, &ov, &err) < 0);
  moat_error_free (&err);
  assert_true (ov.n > 20);

  struct audit_record rec = {
    .verb = "create",
    .id = "c1",
    .bundle = "/srv/bundles/c1",
    .profile = p->name,
    .mechanism = "cgroup-bpf",
    .overrides = &ov,
  };
  assert_int_equal (audit_write (t->log, &rec, &err), 0);
  text = read_log (t->log);
  assert_int_equal (for_each_line (text, check_create_line, &ov), 1);
  assert_non_null (strstr (text, "\"kind\":\"refused\""));
  assert_non_null (strstr (text, "AWS_SECRET_ACCESS_KEY"));
  assert_null (strstr (text, "x-aws-secret-value"));
  assert_null (strstr (text, "y-github-token-value"));
  assert_null (strstr (text, "z-db-password-value"));
  free (text);

  assert_int_equal (stat (t->log, &st), 0);
  assert_int_equal (st.st_mode & 0777, 0600);
  assert_true (strrchr (t->log, '/'));
  {
    char dir[200];
    snprintf (dir, sizeof (dir), "%s/log/moat", t->dir);
    assert_int_equal (stat (dir, &st), 0);
    assert_int_equal (st.st_mode & 0777, 0700);
  }
  override_list_clear (&ov);
  spec_free (s);
  profile_free (p);
}

static void
check_error_line (json_node *root, void *data)
{
  assert_string_equal (str (root, "result"), "error");
  assert_string_equal (str (root, "error"), "container \"x\" does not exist");
  assert_null (str (root, "bundle"));
  assert_int_equal (json_array_len (json_get (root, "overrides")), 0);
}

static void
test_error_line_appends (void **state)
{
  struct tmpdir *t = *state;
  struct moat_error *err = NULL;
  struct audit_record rec = {
    .verb = "delete",
    .id = "x",
    .result = -1,
    .error = "container \"x\" does not exist",
  };
  char *text;

  assert_int_equal (audit_write (t->log, &rec, &err), 0);
  assert_int_equal (audit_write (t->log, &rec, &err), 0);
  text = read_log (t->log);
  assert_int_equal (for_each_line (text, check_error_line, NULL), 2);
  free (text);
}

/* Concurrent verbs: every line whole. Lines are large so that an unsafe
 * writer (stdio buffering, two writes per line) would interleave. */
static void
test_concurrent_writers (void **state)
{
  struct tmpdir *t = *state;
  enum
  {
    WRITERS = 8,
    LINES = 50
  };
  char *text;

  for (int w = 0; w < WRITERS; w++)
    {
      pid_t pid = fork ();
      assert_true (pid >= 0);
      if (pid == 0)
        {
          struct override_list ov = { 0 };
          struct moat_error *err = NULL;
          char big[4096];
          int rc = 0;

          memset (big, 'a' + w, sizeof (big) - 1);
          big[sizeof (big) - 1] = '\0';
          for (int i = 0; i < 8; i++)
            override_list_add (&ov, OVERRIDE_CHANGED, "mounts[0].options", big,
                               big);
          struct audit_record rec
              = { .verb = "exec", .id = "c", .overrides = &ov };
          for (int i = 0; i < LINES; i++)
            if (audit_write (t->log, &rec, &err) < 0)
              rc = 1;
          _exit (rc);
        }
    }
  for (int w = 0; w < WRITERS; w++)
    {
      int status;
      assert_true (wait (&status) > 0);
      assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    }
  text = read_log (t->log);
  assert_int_equal (for_each_line (text, NULL, NULL), WRITERS * LINES);
  free (text);
}

static void
test_refuses_bad_paths (void **state)
{
  struct tmpdir *t = *state;
  struct moat_error *err = NULL;
  struct audit_record rec = { .verb = "state" };
  char link[200];

  assert_true (audit_write ("relative/audit.jsonl", &rec, &err) < 0);
  moat_error_free (&err);
  /* a symlink planted where the log goes is not followed */
  snprintf (link, sizeof (link), "%s/link.jsonl", t->dir);
  assert_int_equal (symlink ("/dev/null", link), 0);
  assert_true (audit_write (link, &rec, &err) < 0);
  assert_int_equal (err->errnum, ELOOP);
  moat_error_free (&err);
}

/* Every field a line can carry, in its order, byte for byte: the line is
 * read by people and by log pipelines, so a change of order or form shows
 * here. Time, uid, pid and ppid vary and are put in by hand. */
static void
test_line_with_every_field (void **state)
{
  struct tmpdir *t = *state;
  struct moat_error *err = NULL;
  struct override v[] = {
    { OVERRIDE_REFUSED, "process.capabilities.bounding", "CAP_SYS_ADMIN",
      NULL },
    { OVERRIDE_CHANGED, "linux.resources.pids.limit", "4096", "64" },
  };
  struct override_list ov = { .v = v, .n = 2 };
  struct audit_record rec = {
    .verb = "exec",
    .id = "c1",
    .bundle = "/srv/b",
    .profile = "strict",
    .mechanism = "cgroup-bpf",
    .effective = "{\"pids\":64}",
    .refused_connects = "[{\"to\":\"169.254.169.254:80\",\"count\":2}]",
    .landlock = "abi 6",
    .userns = "200000:65536",
    .userns_joined = "/proc/7/ns/user",
    .overrides = &ov,
    .result = -1,
    .error = "exec failed",
    .exit_status = 3,
    .config_digest = "sha256:ab12",
    .command = "/bin/sh",
    .outcome = "{\"ended\":\"deadline\"}",
  };
  char *text, *after_time, *expected;

  assert_int_equal (audit_write (t->log, &rec, &err), 0);
  text = read_log (t->log);
  assert_int_equal (strncmp (text, "{\"time\":\"", 9), 0);
  after_time = strstr (text, "\",\"verb\"");
  assert_non_null (after_time);
  expected = xasprintf (
      "\",\"verb\":\"exec\",\"id\":\"c1\",\"bundle\":\"/srv/b\","
      "\"profile\":\"strict\",\"uid\":%d,\"pid\":%d,\"ppid\":%d,"
      "\"config_digest\":\"sha256:ab12\",\"command\":\"/bin/sh\","
      "\"exit_status\":3,\"outcome\":{\"ended\":\"deadline\"},"
      "\"result\":\"error\",\"error\":\"exec failed\",\"refused\":true,"
      "\"network_guard\":\"cgroup-bpf\",\"effective\":{\"pids\":64},"
      "\"refused_connects\":[{\"to\":\"169.254.169.254:80\",\"count\":2}],"
      "\"landlock\":\"abi 6\",\"userns\":\"200000:65536\","
      "\"userns_joined\":\"/proc/7/ns/user\",\"overrides\":["
      "{\"kind\":\"refused\",\"path\":\"process.capabilities.bounding\","
      "\"asked\":\"CAP_SYS_ADMIN\",\"enforced\":null},"
      "{\"kind\":\"changed\",\"path\":\"linux.resources.pids.limit\","
      "\"asked\":\"4096\",\"enforced\":\"64\"}]}\n",
      (int)getuid (), (int)getpid (), (int)getppid ());
  assert_string_equal (after_time, expected);
  free (expected);
  free (text);
}

/* The same fields left out when absent: no key for an optional field. */
static void
test_line_without_optional_fields (void **state)
{
  struct tmpdir *t = *state;
  struct moat_error *err = NULL;
  struct audit_record rec = { .verb = "state", .exit_status = -1 };
  char *text, *after_time, *expected;

  assert_int_equal (audit_write (t->log, &rec, &err), 0);
  text = read_log (t->log);
  after_time = strstr (text, "\",\"verb\"");
  assert_non_null (after_time);
  expected = xasprintf (
      "\",\"verb\":\"state\",\"id\":null,\"bundle\":null,\"profile\":null,"
      "\"uid\":%d,\"pid\":%d,\"ppid\":%d,\"result\":\"ok\","
      "\"refused\":false,\"network_guard\":null,\"overrides\":[]}\n",
      (int)getuid (), (int)getpid (), (int)getppid ());
  assert_string_equal (after_time, expected);
  free (expected);
  free (text);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_create_line_has_every_override, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_error_line_appends, setup, teardown),
    cmocka_unit_test_setup_teardown (test_concurrent_writers, setup, teardown),
    cmocka_unit_test_setup_teardown (test_refuses_bad_paths, setup, teardown),
    cmocka_unit_test_setup_teardown (test_line_with_every_field, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_line_without_optional_fields, setup,
                                     teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
