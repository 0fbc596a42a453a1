/* oci/state.c: moat's state file round trip, strict reading, OCI state. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../oci/json.h"
#include "../../oci/state.h"
#include "../../lib/util.h"

static struct container_state *
sample_state (void)
{
  struct container_state *st = xcalloc (1, sizeof (*st));
  st->id = xstrdup ("web-1");
  st->bundle = xstrdup ("/run/bundles/web \"quoted\"");
  st->rootfs = xstrdup ("/run/bundles/web/rootfs");
  st->pid = 4242;
  st->pid_starttime = UINT64_MAX - 1;
  st->created = xstrdup ("2026-11-21T16:29:25.123456789Z");
  st->cgroup = xstrdup ("/moat/web-1");
  st->profile = xstrdup ("strict");
  st->netguard = xstrdup ("cgroup-bpf");
  st->started = true;
  st->has_tty = true;
  st->landlock_exec = xstrdup ("/etc\n/root\n/bin\n");
  st->config_digest = xstrdup ("sha256:00ff");
  st->n_annotations = 2;
  st->annotations = xcalloc (2, sizeof (struct spec_kv));
  st->annotations[0].key = xstrdup ("io.kubernetes.cri-o.TTY");
  st->annotations[0].value = xstrdup ("false");
  st->annotations[1].key = xstrdup ("run.moat.pids");
  st->annotations[1].value = xstrdup ("line1\nline2\t\x01");
  return st;
}

static char *
to_json (const struct container_state *st)
{
  struct moat_error *err = NULL;
  char *text = NULL;
  assert_int_equal (state_to_json (st, &text, &err), 0);
  assert_null (err);
  return text;
}

static char *
from_json_error (const char *text, size_t len)
{
  struct moat_error *err = NULL;
  struct container_state *st = NULL;
  char *msg;

  if (state_from_json (text, len, &st, &err) == 0)
    {
      state_free (st);
      return NULL;
    }
  assert_null (st);
  msg = xstrdup (err->msg);
  moat_error_free (&err);
  return msg;
}

static void
test_round_trip (void **state)
{
  struct container_state *st = sample_state (), *back = NULL;
  struct moat_error *err = NULL;
  cleanup_free char *text = to_json (st);

  assert_int_equal (state_from_json (text, strlen (text), &back, &err), 0);
  assert_string_equal (back->id, st->id);
  assert_string_equal (back->bundle, st->bundle);
  assert_string_equal (back->rootfs, st->rootfs);
  assert_int_equal (back->pid, 4242);
  assert_true (back->pid_starttime == UINT64_MAX - 1);
  assert_string_equal (back->created, st->created);
  assert_string_equal (back->cgroup, st->cgroup);
  assert_string_equal (back->profile, "strict");
  assert_string_equal (back->netguard, "cgroup-bpf");
  assert_true (back->started);
  assert_true (back->has_tty);
  assert_string_equal (back->landlock_exec, "/etc\n/root\n/bin\n");
  assert_string_equal (back->config_digest, "sha256:00ff");
  assert_int_equal (back->n_annotations, 2);
  assert_string_equal (back->annotations[0].key, "io.kubernetes.cri-o.TTY");
  assert_string_equal (back->annotations[1].value, "line1\nline2\t\x01");
  state_free (back);
  state_free (st);
}

static void
test_round_trip_optional_fields (void **state)
{
  struct container_state *st = xcalloc (1, sizeof (*st)), *back = NULL;
  struct moat_error *err = NULL;
  cleanup_free char *text = NULL;

  st->id = xstrdup ("a");
  st->bundle = xstrdup ("/b");
  st->rootfs = xstrdup ("/b/r");
  st->created = xstrdup ("2026-01-01T00:00:00Z");
  text = to_json (st);
  assert_int_equal (state_from_json (text, strlen (text), &back, &err), 0);
  assert_null (back->cgroup);
  assert_null (back->profile);
  assert_null (back->netguard);
  assert_null (back->landlock_exec);
  assert_null (back->config_digest);
  assert_null (strstr (text, "landlockExec"));
  assert_false (back->started);
  assert_int_equal (back->pid, 0);
  assert_int_equal (back->n_annotations, 0);
  state_free (back);
  state_free (st);
}

/* Every proper prefix of a valid state file is refused with "state.json:",
 * and none of them crashes. */
static void
test_truncated (void **state)
{
  struct container_state *st = sample_state ();
  cleanup_free char *text = to_json (st);
  size_t len = strlen (text);

  for (size_t n = 0; n < len; n++)
    {
      cleanup_free char *msg = from_json_error (text, n);
      if (msg == NULL)
        fail_msg ("prefix of %zu bytes accepted", n);
      assert_true (strncmp (msg, "state.json: ", 12) == 0);
    }
  state_free (st);
}

static void
test_corrupt (void **state)
{
  static const struct
  {
    const char *text;
    const char *msg;
  } cases[] = {
    { "", "state.json: empty input" },
    { "[]", "state.json: expected a JSON object at the top level" },
    { "{\"version\":2}", "state.json: version: 2 is not 1" },
    { "{\"id\":\"x\"}", "state.json: version: required" },
    { "{\"version\":1,\"id\":\"\"}", "state.json: id: must not be empty" },
    { "{\"version\":1,\"id\":\"x\",\"bundle\":\"/b\",\"rootfs\":\"/r\","
      "\"pid\":\"12\"}",
      "state.json: pid: expected integer" },
    { "{\"version\":1,\"id\":\"x\",\"bundle\":\"/b\",\"rootfs\":\"/r\","
      "\"pid\":-1}",
      "state.json: pid: -1 is out of range" },
    { "{\"version\":1,\"id\":\"x\",\"bundle\":\"/b\",\"rootfs\":\"/r\","
      "\"pid\":1,\"pidStartTime\":5,\"created\":\"t\",\"started\":true}",
      "state.json: tty: required" },
    { "{\"version\":1,\"id\":\"x\",\"bundle\":\"/b\",\"rootfs\":\"/r\","
      "\"pid\":1,\"pidStartTime\":5,\"created\":\"t\",\"started\":1,"
      "\"tty\":false}",
      "state.json: started: expected boolean" },
    { "{\"version\":1,\"id\":\"x\",\"bundle\":\"/b\",\"rootfs\":\"/r\","
      "\"pid\":1,\"pidStartTime\":5,\"created\":\"t\",\"started\":true,"
      "\"tty\":false,\"annotations\":{\"a\":[]}}",
      "state.json: annotations.a: expected string" },
  };
  for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    {
      cleanup_free char *msg
          = from_json_error (cases[i].text, strlen (cases[i].text));
      if (msg == NULL)
        fail_msg ("accepted %s", cases[i].text);
      if (strncmp (msg, cases[i].msg, strlen (cases[i].msg)) != 0)
        fail_msg ("\"%s\" does not start with \"%s\"", msg, cases[i].msg);
    }
}

static json_node *
parse_oci (const struct container_state *st, const char *status, bool pretty)
{
  struct moat_error *err = NULL;
  cleanup_free char *text = NULL;
  json_node *n = NULL;

  assert_int_equal (state_oci_json (st, status, pretty, &text, &err), 0);
  assert_int_equal (json_parse (text, strlen (text), 0, &n, &err), 0);
  if (pretty)
    assert_non_null (strstr (text, "\n  \"id\": \"web-1\",\n"));
  else
    assert_null (strchr (text, '\n'));
  return n;
}

static void
test_oci_json (void **state)
{
  struct container_state *st = sample_state ();
  json_node *n = parse_oci (st, "running", false), *ann;
  static const char *const order[]
      = { "ociVersion", "id",      "pid",   "status",     "bundle",
          "rootfs",     "created", "owner", "annotations" };
  int64_t pid;

  assert_int_equal (json_object_len (n), 9);
  for (size_t i = 0; i < 9; i++)
    assert_string_equal (json_object_key (n, i), order[i]);
  assert_string_equal (json_string (json_get (n, "ociVersion")), "1.0.2");
  assert_string_equal (json_string (json_get (n, "id")), "web-1");
  assert_int_equal (json_int64 (json_get (n, "pid"), &pid), 0);
  assert_int_equal (pid, 4242);
  assert_string_equal (json_string (json_get (n, "status")), "running");
  assert_string_equal (json_string (json_get (n, "bundle")), st->bundle);
  assert_string_equal (json_string (json_get (n, "rootfs")), st->rootfs);
  assert_string_equal (json_string (json_get (n, "created")), st->created);
  assert_string_equal (json_string (json_get (n, "owner")), "");
  ann = json_get (n, "annotations");
  assert_int_equal (json_object_len (ann), 2);
  assert_string_equal (json_string (json_get (ann, "run.moat.pids")),
                       "line1\nline2\t\x01");
  json_free (n);
  state_free (st);
}

static void
test_oci_json_stopped_pid_zero (void **state)
{
  struct container_state *st = sample_state ();
  json_node *n = parse_oci (st, "stopped", true);
  int64_t pid = -1;

  assert_int_equal (json_int64 (json_get (n, "pid"), &pid), 0);
  assert_int_equal (pid, 0);
  assert_string_equal (json_string (json_get (n, "status")), "stopped");
  json_free (n);

  n = parse_oci (st, "created", true);
  assert_int_equal (json_int64 (json_get (n, "pid"), &pid), 0);
  assert_int_equal (pid, 4242);
  json_free (n);
  state_free (st);
}

static void
test_oci_json_no_annotations (void **state)
{
  struct container_state *st = sample_state ();
  json_node *n;
  for (size_t i = 0; i < st->n_annotations; i++)
    {
      free (st->annotations[i].key);
      free (st->annotations[i].value);
    }
  free (st->annotations);
  st->annotations = NULL;
  st->n_annotations = 0;
  n = parse_oci (st, "creating", false);
  assert_true (json_is_object (json_get (n, "annotations")));
  assert_int_equal (json_object_len (json_get (n, "annotations")), 0);
  json_free (n);
  state_free (st);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_round_trip),
    cmocka_unit_test (test_round_trip_optional_fields),
    cmocka_unit_test (test_truncated),
    cmocka_unit_test (test_corrupt),
    cmocka_unit_test (test_oci_json),
    cmocka_unit_test (test_oci_json_stopped_pid_zero),
    cmocka_unit_test (test_oci_json_no_annotations),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
