/* oci/config*.c: every engine sample parses with the right values, wrong
 * types name their JSON path, and the name tables. Fixtures are found in
 * $MOAT_FIXTURES, else tests/fixtures (make runs tests from the top). */
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

#include "../../oci/spec.h"
#include "../../runtime/util.h"

static const char *
fixtures_dir (void)
{
  const char *d = getenv ("MOAT_FIXTURES");
  return d ? d : "tests/fixtures";
}

static char *
read_fixture (const char *name, size_t *len)
{
  cleanup_free char *path = xasprintf ("%s/%s", fixtures_dir (), name);
  char *text = NULL;
  int r = read_file_at (AT_FDCWD, path, 8 << 20, &text, len);
  if (r < 0)
    fail_msg ("reading %s: %s", path, strerror (-r));
  return text;
}

static struct spec *
load_fixture (const char *name)
{
  cleanup_free char *path = xasprintf ("%s/%s", fixtures_dir (), name);
  struct moat_error *err = NULL;
  struct spec *s = NULL;
  if (spec_load (path, &s, &err) < 0)
    fail_msg ("%s: %s", name, err->msg);
  return s;
}

static bool
has_suffix (const char *s, const char *suffix)
{
  size_t n = strlen (s), m = strlen (suffix);
  return n >= m && strcmp (s + n - m, suffix) == 0;
}

/* Each kind of sample through its own parser. */
static void
test_every_fixture_parses (void **state)
{
  DIR *dir = opendir (fixtures_dir ());
  struct dirent *de;
  size_t configs = 0, processes = 0, updates = 0;

  assert_non_null (dir);
  while ((de = readdir (dir)) != NULL)
    {
      struct moat_error *err = NULL;
      cleanup_free char *text = NULL;
      size_t len = 0;
      int r;

      if (!has_suffix (de->d_name, ".json"))
        continue;
      text = read_fixture (de->d_name, &len);
      if (has_suffix (de->d_name, ".config.json"))
        {
          struct spec *s = NULL;
          r = spec_parse (text, len, &s, &err);
          if (r == 0)
            {
              assert_non_null (s->process);
              assert_non_null (s->root_path);
              assert_true (s->linux_.ns[NS_MOUNT].present);
            }
          spec_free (s);
          configs++;
        }
      else if (has_suffix (de->d_name, ".process.json"))
        {
          struct spec_process *p = NULL;
          r = spec_process_parse (text, len, &p, &err);
          spec_process_free (p);
          processes++;
        }
      else
        {
          struct spec_resources res;
          r = spec_resources_parse (text, len, &res, &err);
          spec_resources_clear (&res);
          updates++;
        }
      if (r < 0)
        fail_msg ("%s: %s", de->d_name, err->msg);
    }
  closedir (dir);
  /* The engine samples (20, 7, 3), and any fixture added since. */
  assert_true (configs >= 20 && processes >= 7 && updates >= 3);
}

static void
test_docker_19 (void **state)
{
  struct spec *s = load_fixture (
      "docker.19.docker-run-with-resources-user-readonly-tmpfs-volume-init-"
      "ca.config.json");
  const struct spec_process *p = s->process;
  const struct spec_linux *l = &s->linux_;
  const struct spec_resources *res = &l->resources;

  assert_string_equal (s->oci_version, "1.0.2-dev");
  assert_true (s->root_readonly);
  assert_string_equal (s->hostname, "argvhost");
  assert_int_equal (p->user.uid, 1);
  assert_int_equal (p->user.gid, 1);
  assert_int_equal (p->user.n_additional_gids, 1);
  assert_int_equal (p->user.additional_gids[0], 1);
  assert_false (p->user.has_umask);
  assert_int_equal (strv_len (p->args), 5);
  assert_string_equal (p->args[0], "/sbin/docker-init");
  assert_string_equal (p->args[4], "id; ulimit -n");
  assert_string_equal (p->env[2], "FOO=bar");
  assert_string_equal (p->cwd, "/tmp");
  assert_true (p->caps.present);
  assert_true (p->caps.bounding == UINT64_C (1) << CAP_NET_BIND_SERVICE);
  assert_true (p->caps.effective == 0 && p->caps.permitted == 0);
  assert_int_equal (p->n_rlimits, 1);
  assert_int_equal (p->rlimits[0].resource, RLIMIT_NOFILE);
  assert_string_equal (p->rlimits[0].type, "RLIMIT_NOFILE");
  assert_int_equal (p->rlimits[0].soft, 1024);
  assert_int_equal (p->rlimits[0].hard, 2048);
  assert_true (p->has_oom_score_adj);
  assert_int_equal (p->oom_score_adj, 0);
  assert_false (p->terminal);

  assert_int_equal (s->n_mounts, 13);
  assert_string_equal (s->mounts[0].destination, "/proc");
  assert_string_equal (s->mounts[0].type, "proc");
  assert_string_equal (s->mounts[8].destination, "/host");
  assert_string_equal (s->mounts[8].source, "/var/lib/oci-clients");
  assert_string_equal (s->mounts[8].options[0], "rbind");
  assert_int_equal (s->hooks[HOOK_PRESTART].n, 1);
  assert_string_equal (s->hooks[HOOK_PRESTART].v[0].path, "/proc/32364/exe");
  assert_string_equal (s->hooks[HOOK_PRESTART].v[0].args[0],
                       "libnetwork-setkey");
  assert_int_equal (s->hooks[HOOK_POSTSTOP].n, 0);

  for (int t = 0; t < NS__MAX; t++)
    assert_int_equal (l->ns[t].present, t == NS_MOUNT || t == NS_NET
                                            || t == NS_UTS || t == NS_PID
                                            || t == NS_IPC);
  assert_null (l->ns[NS_NET].path);
  assert_int_equal (l->n_sysctl, 2);
  assert_string_equal (l->sysctl[0].key, "net.ipv4.ip_unprivileged_port_start");
  assert_string_equal (l->sysctl[1].value, "0 2147483647");
  assert_string_equal (l->cgroups_path,
                       "/docker/ed1cd064b8c2601559ba482eb95a00da3480b044756b"
                       "8017859cc87e6672a22c");

  assert_true (l->has_resources);
  assert_true (res->memory.has_limit);
  assert_int_equal (res->memory.limit, 67108864);
  assert_int_equal (res->memory.swap, 134217728);
  assert_false (res->memory.has_reservation);
  assert_false (res->memory.disable_oom_killer);
  assert_true (res->has_pids_limit);
  assert_int_equal (res->pids_limit, 50);
  assert_int_equal (res->cpu.quota, 50000);
  assert_int_equal (res->cpu.period, 100000);
  assert_true (res->cpu.has_shares);
  assert_true (res->has_blkio_weight);
  assert_int_equal (res->n_devices, 8);
  assert_false (res->devices[0].allow);
  assert_int_equal (res->devices[0].type, 'a');
  assert_int_equal (res->devices[0].major, -1);
  assert_int_equal (res->devices[0].minor, -1);
  assert_string_equal (res->devices[0].access, "rwm");
  assert_int_equal (res->devices[7].type, 'c');
  assert_int_equal (res->devices[7].major, 10);
  assert_int_equal (res->devices[7].minor, 229);

  assert_true (l->seccomp.present);
  assert_string_equal (l->seccomp.default_action, "SCMP_ACT_ERRNO");
  assert_int_equal (strv_len (l->seccomp.architectures), 3);
  assert_int_equal (l->seccomp.n_syscalls, 11);
  assert_string_equal (l->seccomp.syscalls[0].names[0], "accept");
  assert_int_equal (l->seccomp.syscalls[2].n_args, 1);
  assert_string_equal (l->seccomp.syscalls[2].args[0].op, "SCMP_CMP_EQ");
  assert_int_equal (l->seccomp.syscalls[6].args[0].value, 4294967295u);
  assert_string_equal (l->seccomp.syscalls[10].names[0], "clone3");
  assert_true (l->seccomp.syscalls[10].has_errno_ret);
  assert_int_equal (l->seccomp.syscalls[10].errno_ret, 38);
  assert_int_equal (strv_len (l->masked_paths), 10);
  assert_int_equal (strv_len (l->readonly_paths), 5);
  spec_free (s);
}

static void
test_podman_samples (void **state)
{
  struct spec *s = load_fixture (
      "podman.18.podman-run-in-a-user-namespace-uidmap-gidmap.config.json");
  assert_true (s->linux_.ns[NS_USER].present);
  assert_int_equal (s->linux_.n_uid_mappings, 1);
  assert_int_equal (s->linux_.uid_mappings[0].host_id, 100000);
  assert_int_equal (s->linux_.uid_mappings[0].size, 65536);
  assert_int_equal (s->linux_.gid_mappings[0].container_id, 0);
  assert_true (s->process->user.has_umask);
  assert_int_equal (s->process->user.umask, 18);
  assert_int_equal (s->process->n_rlimits, 2);
  assert_int_equal (s->process->rlimits[1].resource, RLIMIT_NPROC);
  assert_true (s->linux_.seccomp.has_default_errno_ret);
  assert_int_equal (s->linux_.seccomp.default_errno_ret, 38);
  assert_string_equal (spec_annotation (s, "io.container.manager"), "libpod");
  assert_null (spec_annotation (s, "missing"));
  spec_free (s);

  s = load_fixture ("podman.17.podman-run-privileged.config.json");
  assert_int_equal (s->linux_.n_devices, 102);
  assert_string_equal (s->linux_.devices[0].path, "/dev/autofs");
  assert_int_equal (s->linux_.devices[0].type, 'c');
  assert_int_equal (s->linux_.devices[0].major, 10);
  assert_int_equal (s->linux_.devices[0].minor, 235);
  assert_true (s->linux_.devices[0].has_file_mode);
  assert_int_equal (s->linux_.devices[0].file_mode, 8612);
  assert_true (s->linux_.devices[0].has_uid);
  assert_true (s->process->caps.bounding & (UINT64_C (1) << CAP_SYS_ADMIN));
  spec_free (s);
}

static void
test_ctr_samples (void **state)
{
  struct spec *s
      = load_fixture ("ctr.17.ctr-run-rm-net-host-privileged.config.json");
  assert_false (s->linux_.ns[NS_NET].present);
  assert_true (s->linux_.ns[NS_PID].present);
  spec_free (s);

  s = load_fixture ("ctr.15.ctr-run-rm-with-memory-limit-cpus-env-cwd-mount-"
                    "seccomp.config.json");
  assert_int_equal (s->linux_.resources.memory.limit, 67108864);
  assert_int_equal (s->linux_.resources.cpu.shares, 1024);
  assert_int_equal (s->linux_.resources.n_devices, 10);
  /* "major" given, "minor" absent: any minor. */
  assert_int_equal (s->linux_.resources.devices[8].major, 136);
  assert_int_equal (s->linux_.resources.devices[8].minor, -1);
  assert_string_equal (s->process->cwd, "/tmp");
  spec_free (s);
}

static void
test_process_fixtures (void **state)
{
  struct moat_error *err = NULL;
  struct spec_process *p = NULL;
  size_t len;
  cleanup_free char *text = read_fixture (
      "docker.05.docker-exec-u-1-1-w-tmp-e-X-1.process.json", &len);
  cleanup_free char *tty
      = read_fixture ("docker.04.docker-exec-it-tty.process.json", &len);

  assert_int_equal (spec_process_parse (text, strlen (text), &p, &err), 0);
  assert_int_equal (p->user.uid, 1);
  assert_int_equal (p->user.gid, 1);
  assert_string_equal (p->cwd, "/tmp");
  assert_string_equal (p->args[0], "id");
  assert_string_equal (p->env[2], "X=1");
  assert_false (p->terminal);
  assert_true (p->caps.effective & (UINT64_C (1) << CAP_CHOWN));
  spec_process_free (p);

  assert_int_equal (spec_process_parse (tty, strlen (tty), &p, &err), 0);
  assert_true (p->terminal);
  spec_process_free (p);
}

static void
test_update_fixtures (void **state)
{
  struct moat_error *err = NULL;
  struct spec_resources res;
  size_t len;
  cleanup_free char *pids = read_fixture (
      "docker.10.docker-update-pids-limit-100.update-stdin.json", &len);
  cleanup_free char *mem = read_fixture (
      "docker.11.docker-update-memory-64m-memory-swap-128m-cpus-0-5.update-"
      "stdin.json",
      &len);
  cleanup_free char *podman = read_fixture (
      "podman.09.podman-update-cpus-0-5-memory-64m-4-3-has-no-pids-limit."
      "update-resources.json",
      &len);

  assert_int_equal (spec_resources_parse (pids, strlen (pids), &res, &err), 0);
  assert_true (res.has_pids_limit);
  assert_int_equal (res.pids_limit, 100);
  /* Docker sends zeros for what it leaves alone; the parser keeps them as
   * given and the update verb decides. */
  assert_true (res.memory.has_limit);
  assert_int_equal (res.memory.limit, 0);
  spec_resources_clear (&res);

  assert_int_equal (spec_resources_parse (mem, strlen (mem), &res, &err), 0);
  assert_int_equal (res.memory.limit, 67108864);
  assert_int_equal (res.memory.swap, 134217728);
  assert_int_equal (res.cpu.quota, 50000);
  assert_int_equal (res.cpu.period, 100000);
  assert_false (res.has_pids_limit);
  spec_resources_clear (&res);

  assert_int_equal (spec_resources_parse (podman, strlen (podman), &res, &err),
                    0);
  assert_false (res.has_pids_limit);
  assert_false (res.cpu.has_shares);
  assert_int_equal (res.memory.swap, 134217728);
  spec_resources_clear (&res);
}

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
test_name_tables (void **state)
{
  static const char *const ns[]
      = { "mount", "pid", "network", "ipc", "uts", "user", "cgroup", "time" };
  static const char *const hooks[]
      = { "prestart",       "createRuntime", "createContainer",
          "startContainer", "poststart",     "poststop" };
  static const struct
  {
    const char *name;
    int value;
  } rl[] = {
    { "RLIMIT_AS", RLIMIT_AS },
    { "RLIMIT_CORE", RLIMIT_CORE },
    { "RLIMIT_CPU", RLIMIT_CPU },
    { "RLIMIT_DATA", RLIMIT_DATA },
    { "RLIMIT_FSIZE", RLIMIT_FSIZE },
    { "RLIMIT_LOCKS", RLIMIT_LOCKS },
    { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
    { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
    { "RLIMIT_NICE", RLIMIT_NICE },
    { "RLIMIT_NOFILE", RLIMIT_NOFILE },
    { "RLIMIT_NPROC", RLIMIT_NPROC },
    { "RLIMIT_RSS", RLIMIT_RSS },
    { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
    { "RLIMIT_RTTIME", RLIMIT_RTTIME },
    { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
    { "RLIMIT_STACK", RLIMIT_STACK },
  };

  assert_int_equal (NS__MAX, 8);
  for (int t = 0; t < NS__MAX; t++)
    {
      assert_string_equal (ns_type_name (t), ns[t]);
      assert_int_equal (ns_type_from_name (ns[t]), t);
    }
  assert_null (ns_type_name (NS__MAX));
  assert_int_equal (ns_type_from_name ("net"), -1);
  assert_int_equal (ns_type_from_name (NULL), -1);
  for (int k = 0; k < HOOK__MAX; k++)
    assert_string_equal (hook_kind_name (k), hooks[k]);
  assert_null (hook_kind_name (HOOK__MAX));
  assert_int_equal (RLIM_NLIMITS, 16);
  for (size_t i = 0; i < sizeof (rl) / sizeof (rl[0]); i++)
    assert_int_equal (rlimit_from_name (rl[i].name), rl[i].value);
  assert_int_equal (rlimit_from_name ("RLIMIT_FOO"), -1);
  assert_int_equal (rlimit_from_name ("NOFILE"), -1);
  assert_int_equal (rlimit_from_name (NULL), -1);
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

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_every_fixture_parses),
    cmocka_unit_test (test_docker_19),
    cmocka_unit_test (test_podman_samples),
    cmocka_unit_test (test_ctr_samples),
    cmocka_unit_test (test_process_fixtures),
    cmocka_unit_test (test_update_fixtures),
    cmocka_unit_test (test_wrong_types_name_the_path),
    cmocka_unit_test (test_lenient_where_engines_need_it),
    cmocka_unit_test (test_process_json_errors),
    cmocka_unit_test (test_resources_json_errors),
    cmocka_unit_test (test_truncated_configs_refused),
    cmocka_unit_test (test_spec_load_errors),
    cmocka_unit_test (test_name_tables),
    cmocka_unit_test (test_mount_clear),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
