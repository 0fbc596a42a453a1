/* oci/config*.c on what it must refuse or tolerate: wrong types name
 * their JSON path, truncated configs, spec_load's errors, and leniency
 * where the engines need it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../oci/config_fields.h"
#include "../../oci/spec.h"
#include "../../lib/util.h"
#include "fixtures.h"

#define BASE "\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"}"
#define PROC(x) BASE ",\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"," x "}"
#define LINUX(x) BASE ",\"linux\":{" x "}"
#define RES(x) LINUX ("\"resources\":{" x "}")

static char *
parse_error (const char *text)
{
  struct moat_error *err = NULL;
  struct spec *s = NULL;
  char *msg;
  if (spec_parse (text, strlen (text), &s, &err) == 0)
    {
      spec_free (s);
      return NULL;
    }
  assert_null (s);
  msg = xstrdup (err->msg);
  moat_error_free (&err);
  return msg;
}

static struct spec *
parse_ok (const char *text)
{
  struct moat_error *err = NULL;
  struct spec *s = NULL;
  if (spec_parse (text, strlen (text), &s, &err) < 0)
    fail_msg ("%s: %s", text, err->msg);
  return s;
}

static void
test_wrong_types_name_the_path (void **state)
{
  static const struct
  {
    const char *json;
    const char *msg;
  } cases[] = {
    { "[]", "config.json: expected a JSON object at the top level" },
    { "42", "config.json: expected a JSON object at the top level" },
    { "null", "config.json: expected a JSON object at the top level" },
    { "\"x\"", "config.json: expected a JSON object at the top level" },
    { "", "config.json: empty input" },
    { "{", "config.json: invalid JSON: " },
    { "{} {}", "config.json: invalid JSON: parse error: trailing garbage" },
    { "{}", "config.json: ociVersion: required" },
    { "{\"ociVersion\":1}", "config.json: ociVersion: expected string" },
    { "{\"ociVersion\":\"1\"}", "config.json: root: required" },
    { "{\"ociVersion\":\"1\",\"root\":\"/\"}",
      "config.json: root: expected object" },
    { "{\"ociVersion\":\"1\",\"root\":{}}",
      "config.json: root.path: required" },
    { "{\"ociVersion\":\"1\",\"root\":{\"path\":\"\"}}",
      "config.json: root.path: must not be empty" },
    { "{" BASE ",\"root\":{\"path\":\"r\",\"readonly\":\"yes\"}}",
      "config.json: root.readonly: expected boolean" },
    { "{" BASE ",\"process\":[]}", "config.json: process: expected object" },
    { "{" BASE ",\"process\":{\"cwd\":\"/\"}}",
      "config.json: process.args: required" },
    { "{" BASE ",\"process\":{\"args\":\"sh\",\"cwd\":\"/\"}}",
      "config.json: process.args: expected array of strings" },
    { "{" BASE ",\"process\":{\"args\":[\"sh\",1],\"cwd\":\"/\"}}",
      "config.json: process.args: expected array of strings" },
    { "{" BASE ",\"process\":{\"args\":[],\"cwd\":\"/\"}}",
      "config.json: process.args: must not be empty" },
    { "{" BASE ",\"process\":{\"args\":[\"sh\"]}}",
      "config.json: process.cwd: required" },
    /* Capability names are bad input when they are not OCI names or not
     * capabilities at all, though the profile drops every one (issue 15). */
    { "{" PROC ("\"capabilities\":{\"bounding\":[\"CAP_NOPE\"]}") "}",
      "config.json: process.capabilities.bounding[0]: unknown capability "
      "CAP_NOPE" },
    { "{" PROC (
          "\"capabilities\":{\"ambient\":[\"CAP_KILL\",\"cap_kill\"]}") "}",
      "config.json: process.capabilities.ambient[1]: unknown capability "
      "cap_kill" },
    { "{" PROC ("\"capabilities\":{\"effective\":[\"12\"]}") "}",
      "config.json: process.capabilities.effective[0]: unknown capability "
      "12" },
    { "{" PROC ("\"capabilities\":{\"permitted\":[\"CAP_CHOWN \"]}") "}",
      "config.json: process.capabilities.permitted[0]: unknown capability "
      "CAP_CHOWN " },
    { "{" BASE ",\"process\":{\"args\":[\"sh\"],\"cwd\":\"tmp\"}}",
      "config.json: process.cwd: must be an absolute path" },
    { "{" PROC ("\"env\":{}") "}",
      "config.json: process.env: expected array of strings" },
    { "{" PROC ("\"terminal\":1") "}",
      "config.json: process.terminal: expected boolean" },
    { "{" PROC ("\"user\":{\"uid\":-1}") "}",
      "config.json: process.user.uid: -1 is out of range (0 to 4294967295)" },
    { "{" PROC ("\"user\":{\"gid\":4294967296}") "}",
      "config.json: process.user.gid: 4294967296 is out of range" },
    { "{" PROC ("\"user\":{\"uid\":\"0\"}") "}",
      "config.json: process.user.uid: expected integer" },
    { "{" PROC ("\"user\":{\"additionalGids\":[1,-5]}") "}",
      "config.json: process.user.additionalGids[1]: -5 is out of range" },
    { "{" PROC ("\"user\":{\"umask\":4096}") "}",
      "config.json: process.user.umask: " },
    { "{" PROC ("\"consoleSize\":{\"height\":-1,\"width\":80}") "}",
      "config.json: process.consoleSize.height: -1 is out of range" },
    { "{" PROC ("\"capabilities\":{\"bounding\":\"CAP_CHOWN\"}") "}",
      "config.json: process.capabilities.bounding: expected array of strings" },
    { "{" PROC (
          "\"rlimits\":[{\"type\":\"RLIMIT_FOO\",\"soft\":1,\"hard\":1}]") "}",
      "config.json: process.rlimits[0].type: unknown rlimit RLIMIT_FOO" },
    { "{" PROC ("\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":-1,\"hard\":"
                "1}]") "}",
      "config.json: process.rlimits[0].soft: -1 is out of range" },
    { "{" PROC ("\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":1}]") "}",
      "config.json: process.rlimits[0].hard: required" },
    { "{" PROC ("\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":2,\"hard\":"
                "1}]") "}",
      "config.json: process.rlimits[0]: soft limit above the hard limit" },
    { "{" PROC ("\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"soft\":0,\"hard\":0},"
                "{\"type\":\"RLIMIT_CORE\",\"soft\":0,\"hard\":0}]") "}",
      "config.json: process.rlimits[1].type: duplicate RLIMIT_CORE" },
    { "{" PROC ("\"rlimits\":[1]") "}",
      "config.json: process.rlimits[0]: expected object" },
    { "{" PROC ("\"oomScoreAdj\":1001") "}",
      "config.json: process.oomScoreAdj: 1001 is out of range (-1000 to "
      "1000)" },
    { "{" PROC ("\"noNewPrivileges\":\"true\"") "}",
      "config.json: process.noNewPrivileges: expected boolean" },
    { "{" PROC ("\"apparmorProfile\":[]") "}",
      "config.json: process.apparmorProfile: expected string" },
    { "{" BASE ",\"hostname\":7}", "config.json: hostname: expected string" },
    { "{" BASE ",\"mounts\":{}}", "config.json: mounts: expected array" },
    { "{" BASE ",\"mounts\":[{\"destination\":\"/a\"},{\"destination\":\"/b\"},"
      "{\"destination\":3}]}",
      "config.json: mounts[2].destination: expected string" },
    { "{" BASE ",\"mounts\":[{\"type\":\"tmpfs\"}]}",
      "config.json: mounts[0].destination: required" },
    { "{" BASE ",\"mounts\":[{\"destination\":\"/a\",\"options\":\"ro\"}]}",
      "config.json: mounts[0].options: expected array of strings" },
    { "{" BASE ",\"hooks\":{\"prestart\":[{\"path\":\"hook\"}]}}",
      "config.json: hooks.prestart[0].path: must be an absolute path" },
    { "{" BASE ",\"hooks\":{\"poststop\":[{\"path\":\"/h\",\"timeout\":-1}]}}",
      "config.json: hooks.poststop[0].timeout: -1 is out of range" },
    { "{" BASE ",\"hooks\":{\"createRuntime\":{}}}",
      "config.json: hooks.createRuntime: expected array" },
    { "{" BASE ",\"annotations\":{\"a\":1}}",
      "config.json: annotations.a: expected string" },
    { "{" BASE ",\"annotations\":[]}",
      "config.json: annotations: expected object of strings" },
    { "{" BASE ",\"linux\":[]}", "config.json: linux: expected object" },
    { "{" LINUX ("\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"pid\"}]") "}",
      "config.json: linux.namespaces[1].type: duplicate namespace type "
      "\"pid\"" },
    { "{" LINUX ("\"namespaces\":[{\"type\":\"foo\"}]") "}",
      "config.json: linux.namespaces[0].type: unknown namespace type \"foo\"" },
    { "{" LINUX ("\"namespaces\":[{}]") "}",
      "config.json: linux.namespaces[0].type: required" },
    { "{" LINUX ("\"namespaces\":[{\"type\":\"net\"}]") "}",
      "config.json: linux.namespaces[0].type: unknown namespace type \"net\"" },
    { "{" LINUX ("\"namespaces\":[{\"type\":\"network\",\"path\":\"x\"}]") "}",
      "config.json: linux.namespaces[0].path: must be an absolute path" },
    { "{" LINUX (
          "\"uidMappings\":[{\"containerID\":0,\"hostID\":-1,\"size\":1}]") "}",
      "config.json: linux.uidMappings[0].hostID: -1 is out of range" },
    { "{" LINUX ("\"gidMappings\":[{\"containerID\":0,\"hostID\":1}]") "}",
      "config.json: linux.gidMappings[0].size: required" },
    { "{" LINUX (
          "\"gidMappings\":[{\"containerID\":0,\"hostID\":1,\"size\":0}]") "}",
      "config.json: linux.gidMappings[0].size: must be greater than zero" },
    { "{" LINUX ("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"q\"}]") "}",
      "config.json: linux.devices[0].type: unknown device type \"q\"" },
    { "{" LINUX (
          "\"devices\":[{\"path\":\"/dev/x\",\"type\":\"c\",\"major\":1}]") "}",
      "config.json: linux.devices[0].minor: required" },
    { "{" LINUX ("\"devices\":[{\"path\":\"dev/x\",\"type\":\"p\"}]") "}",
      "config.json: linux.devices[0].path: must be an absolute path" },
    { "{" RES ("\"memory\":{\"limit\":\"64m\"}") "}",
      "config.json: linux.resources.memory.limit: expected integer" },
    { "{" RES ("\"memory\":{\"limit\":1.5}") "}",
      "config.json: linux.resources.memory.limit: expected integer" },
    { "{" RES ("\"memory\":{\"swap\":-2}") "}",
      "config.json: linux.resources.memory.swap: -2 is out of range" },
    { "{" RES ("\"memory\":[]") "}",
      "config.json: linux.resources.memory: expected object" },
    { "{" RES ("\"cpu\":{\"shares\":-1}") "}",
      "config.json: linux.resources.cpu.shares: -1 is out of range" },
    { "{" RES ("\"cpu\":{\"cpus\":0}") "}",
      "config.json: linux.resources.cpu.cpus: expected string" },
    { "{" RES ("\"pids\":{\"limit\":true}") "}",
      "config.json: linux.resources.pids.limit: expected integer" },
    { "{" RES ("\"blockIO\":{\"weight\":70000}") "}",
      "config.json: linux.resources.blockIO.weight: 70000 is out of range" },
    { "{" RES ("\"devices\":[{\"access\":\"rwm\"}]") "}",
      "config.json: linux.resources.devices[0].allow: required" },
    { "{" RES ("\"devices\":[{\"allow\":true,\"access\":\"rwx\"}]") "}",
      "config.json: linux.resources.devices[0].access: \"rwx\" is not a "
      "subset" },
    { "{" RES ("\"devices\":[{\"allow\":true,\"access\":\"rr\"}]") "}",
      "config.json: linux.resources.devices[0].access: " },
    { "{" RES ("\"devices\":[{\"allow\":true,\"major\":-2}]") "}",
      "config.json: linux.resources.devices[0].major: -2 is out of range" },
    { "{" RES ("\"devices\":[{\"allow\":true,\"type\":\"p\"}]") "}",
      "config.json: linux.resources.devices[0].type: unknown device type" },
    { "{" RES ("\"unified\":{\"memory.max\":1}") "}",
      "config.json: linux.resources.unified.memory.max: expected string" },
    { "{" LINUX ("\"sysctl\":{\"a\":null}") "}",
      "config.json: linux.sysctl.a: expected string" },
    { "{" LINUX ("\"seccomp\":{}") "}",
      "config.json: linux.seccomp.defaultAction: required" },
    { "{" LINUX (
          "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\","
          "\"syscalls\":[{\"names\":[],\"action\":\"SCMP_ACT_ERRNO\"}]}") "}",
      "config.json: linux.seccomp.syscalls[0].names: must not be empty" },
    { "{" LINUX ("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\","
                 "\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_"
                 "ERRNO\","
                 "\"args\":[{\"index\":0,\"value\":-1,\"op\":\"SCMP_CMP_EQ\"}]}"
                 "]}") "}",
      "config.json: linux.seccomp.syscalls[0].args[0].value: -1 is out of "
      "range" },
    { "{" LINUX ("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\","
                 "\"syscalls\":[{\"names\":[\"read\"]}]}") "}",
      "config.json: linux.seccomp.syscalls[0].action: required" },
    { "{" LINUX ("\"maskedPaths\":\"/proc/kcore\"") "}",
      "config.json: linux.maskedPaths: expected array of strings" },
    { "{" LINUX ("\"timeOffsets\":{\"monotonic\":{\"secs\":1,\"nanosecs\":"
                 "1000000000}}") "}",
      "config.json: linux.timeOffsets.monotonic.nanosecs: 1000000000 is out of "
      "range" },
  };
  for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    {
      cleanup_free char *msg = parse_error (cases[i].json);
      if (msg == NULL)
        fail_msg ("accepted: %s", cases[i].json);
      if (strncmp (msg, cases[i].msg, strlen (cases[i].msg)) != 0)
        fail_msg ("%s\n got: %s\n want: %s", cases[i].json, msg, cases[i].msg);
      assert_null (strchr (msg, '\n'));
    }
}

static void
test_lenient_where_engines_need_it (void **state)
{
  struct spec *s = parse_ok (
      "{" BASE ",\"unknownTopLevel\":{\"deep\":[1,2]},\"hostname\":null,"
      "\"mounts\":[{\"destination\":\"tmp\",\"type\":\"tmpfs\",\"x\":1}],"
      "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\",\"user\":{\"uid\":0,"
      "\"gid\":0},\"capabilities\":{\"bounding\":[\"CAP_CHOWN\","
      "\"CAP_KILL\",\"CAP_CHOWN\"]},\"scheduler\":{}},"
      "\"annotations\":{\"k\":\"first\",\"j\":\"x\",\"k\":\"last\"},"
      "\"linux\":{\"resources\":{\"memory\":{\"limit\":-1,\"swappiness\":"
      "18446744073709551615,\"kernel\":5},\"devices\":[{\"allow\":true}]},"
      "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{"
      "\"names\":[\"x\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":1,"
      "\"value\":18446744073709551615,\"valueTwo\":3,\"op\":\"SCMP_CMP_"
      "MASKED_EQ\"}]}]},\"intelRdt\":{},\"timeOffsets\":{\"boottime\":{"
      "\"secs\":-5,\"nanosecs\":7}},\"namespaces\":[{\"type\":\"time\"},"
      "{\"type\":\"network\",\"path\":\"\"}]}}");
  const struct spec_device_rule *rule = &s->linux_.resources.devices[0];

  assert_null (s->hostname);
  assert_string_equal (s->mounts[0].destination, "/tmp");
  /* A repeated capability is no error. */
  assert_true (s->process->caps.bounding
               == ((UINT64_C (1) << CAP_CHOWN) | (UINT64_C (1) << CAP_KILL)));
  assert_int_equal (s->n_annotations, 2);
  assert_string_equal (spec_annotation (s, "k"), "last");
  assert_true (s->linux_.resources.memory.has_limit);
  assert_int_equal (s->linux_.resources.memory.limit, -1);
  assert_true (s->linux_.resources.memory.swappiness == UINT64_MAX);
  assert_true (rule->allow);
  assert_int_equal (rule->type, 'a');
  assert_int_equal (rule->major, -1);
  assert_int_equal (rule->minor, -1);
  assert_string_equal (rule->access, "");
  assert_true (s->linux_.seccomp.syscalls[0].args[0].value == UINT64_MAX);
  assert_int_equal (s->linux_.seccomp.syscalls[0].args[0].value_two, 3);
  assert_false (s->linux_.seccomp.syscalls[0].has_errno_ret);
  assert_true (s->linux_.has_time_offsets);
  assert_int_equal (s->linux_.boottime_secs, -5);
  assert_int_equal (s->linux_.boottime_nanosecs, 7);
  assert_true (s->linux_.ns[NS_TIME].present);
  assert_true (s->linux_.ns[NS_NET].present);
  assert_null (s->linux_.ns[NS_NET].path);
  assert_true (s->linux_.has_resources);
  spec_free (s);

  s = parse_ok ("{" BASE "}");
  assert_null (s->process);
  assert_false (s->linux_.has_resources);
  assert_false (s->linux_.seccomp.present);
  assert_int_equal (s->n_mounts, 0);
  spec_free (s);
}

static void
test_process_json_errors (void **state)
{
  static const char *const bad[][2] = {
    { "[]", "process.json: expected a JSON object at the top level" },
    { "{\"cwd\":\"/\"}", "process.json: args: required" },
    { "{\"args\":[\"a\"],\"cwd\":\"/\",\"user\":{\"uid\":-3}}",
      "process.json: user.uid: -3 is out of range" },
    { "{\"args\":[\"a\"],\"cwd\":\"x\"}",
      "process.json: cwd: must be an absolute path" },
    { "[[", "process.json: invalid JSON" },
  };
  for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
    {
      struct moat_error *err = NULL;
      struct spec_process *p = NULL;
      assert_true (spec_process_parse (bad[i][0], strlen (bad[i][0]), &p, &err)
                   < 0);
      assert_null (p);
      if (strncmp (err->msg, bad[i][1], strlen (bad[i][1])) != 0)
        fail_msg ("got %s, want %s", err->msg, bad[i][1]);
      moat_error_free (&err);
    }
}

static void
test_resources_json_errors (void **state)
{
  struct moat_error *err = NULL;
  struct spec_resources res;
  static const char text[]
      = "{\"pids\":{\"limit\":5},\"memory\":{\"limit\":\"x\"}}";

  assert_true (spec_resources_parse (text, strlen (text), &res, &err) < 0);
  assert_string_equal (err->msg,
                       "resources JSON: memory.limit: expected integer");
  /* Cleared on failure: nothing half-filled, nothing to free. */
  assert_false (res.has_pids_limit);
  assert_null (res.devices);
  moat_error_free (&err);

  assert_true (spec_resources_parse ("7", 1, &res, &err) < 0);
  assert_string_equal (
      err->msg, "resources JSON: expected a JSON object at the top level");
  moat_error_free (&err);
}

/* Every prefix of a real config is refused cleanly (no crash, no leak under
 * ASan). */
static void
test_truncated_configs_refused (void **state)
{
  size_t len;
  cleanup_free char *text = read_fixture (
      "docker.19.docker-run-with-resources-user-readonly-tmpfs-volume-init-"
      "ca.config.json",
      &len);
  for (size_t n = 0; n < len; n += 7)
    {
      struct moat_error *err = NULL;
      struct spec *s = NULL;
      assert_true (spec_parse (text, n, &s, &err) < 0);
      assert_true (strncmp (err->msg, "config.json: ", 13) == 0);
      moat_error_free (&err);
    }
}

static void
test_spec_load_errors (void **state)
{
  struct moat_error *err = NULL;
  struct spec *s = NULL;
  char tmp[] = "/tmp/moat-test-config-XXXXXX";
  cleanup_close int fd = mkstemp (tmp);
  cleanup_free char *path = NULL;
  cleanup_free char *big = xmalloc ((4u << 20) + 2);

  /* Unlinked at once: nothing is left behind if an assertion fails. */
  assert_true (fd >= 0);
  unlink (tmp);
  path = xasprintf ("/proc/self/fd/%d", fd);

  assert_true (spec_load ("/nonexistent/config.json", &s, &err) < 0);
  assert_string_equal (err->msg,
                       "reading config.json: /nonexistent/config.json: "
                       "No such file or directory");
  moat_error_free (&err);

  memset (big, ' ', (4u << 20) + 1);
  big[0] = '{';
  big[(4u << 20)] = '}';
  assert_int_equal (write_all (fd, big, (4u << 20) + 1), 0);
  assert_true (spec_load (path, &s, &err) < 0);
  assert_non_null (strstr (err->msg, "larger than 4194304 bytes"));
  assert_true (strncmp (err->msg, "reading config.json: ", 21) == 0);
  moat_error_free (&err);

  /* One byte less is within the cap (and then fails as JSON, later). */
  assert_int_equal (ftruncate (fd, 4u << 20), 0);
  assert_true (spec_load (path, &s, &err) < 0);
  assert_string_equal (err->msg, "config.json: invalid JSON: parse error: "
                                 "premature EOF");
  moat_error_free (&err);
}
static void
test_mount_clear (void **state)
{
  struct spec *s = parse_ok ("{" BASE ",\"mounts\":[{\"destination\":\"/a\","
                             "\"source\":\"s\",\"options\":[\"ro\"]}]}");
  spec_mount_clear (&s->mounts[0]);
  assert_null (s->mounts[0].destination);
  assert_null (s->mounts[0].options);
  spec_free (s);
  spec_mount_clear (NULL);
  spec_free (NULL);
}

/* The paths errors name, joined by hand: every form, indexes of one and
 * of many digits. */
static void
test_field_paths (void **state)
{
  const struct
  {
    char *got;
    const char *want;
  } cases[] = {
    { field_path ("process", "user"), "process.user" },
    { field_path ("", "linux"), "linux" },
    { field_path (NULL, "linux"), "linux" },
    { field_path ("mounts[3]", NULL), "mounts[3]" },
    { field_index_path ("mounts", 0), "mounts[0]" },
    { field_index_path ("process.args", 10), "process.args[10]" },
    { field_index_path ("a", 18446744073709551615UL),
      "a[18446744073709551615]" },
  };
  (void)state;
  for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    {
      assert_string_equal (cases[i].got, cases[i].want);
      free (cases[i].got);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_wrong_types_name_the_path),
    cmocka_unit_test (test_lenient_where_engines_need_it),
    cmocka_unit_test (test_process_json_errors),
    cmocka_unit_test (test_resources_json_errors),
    cmocka_unit_test (test_truncated_configs_refused),
    cmocka_unit_test (test_spec_load_errors),
    cmocka_unit_test (test_mount_clear),
    cmocka_unit_test (test_field_paths),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
