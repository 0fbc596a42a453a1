/* oci/config*.c: every engine sample parses with the right values, and the
 * name tables (wrong types and errors: test_config_errors.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
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
#include "../../lib/util.h"
#include "fixtures.h"

static bool
has_suffix (const char *s, const char *suffix)
{
  size_t n = strlen (s), m = strlen (suffix);
  return n >= m && strcmp (s + n - m, suffix) == 0;
}

/* Each kind of sample through its own parser. */
/* spec_to_json then spec_parse: what create saves and later verbs read. */
static struct spec *
round_trip (const struct spec *s)
{
  cleanup_free char *text = spec_to_json (s);
  struct spec *back = NULL;
  struct moat_error *err = NULL;

  if (spec_parse (text, strlen (text), &back, &err) < 0)
    fail_msg ("the written spec does not parse: %s", err->msg);
  return back;
}

/* Written, read back and written again: the same text, so nothing the
 * writer puts out is lost or changed by the parser. */
static void
assert_written_spec_reads_back (const struct spec *s, const char *name)
{
  cleanup_free char *once = spec_to_json (s);
  struct spec *back = round_trip (s);
  cleanup_free char *twice = spec_to_json (back);

  if (strcmp (once, twice) != 0)
    fail_msg ("%s: written twice differs:\n%s\n%s", name, once, twice);
  spec_free (back);
}

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
              assert_written_spec_reads_back (s, de->d_name);
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
check_docker_19 (const struct spec *s)
{
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
}

/* docker.19 (hooks, resources, devices, rlimits, caps, sysctls) as parsed,
 * and again after being written out and read back. */
static void
test_docker_19 (void **state)
{
  struct spec *s = load_fixture (
      "docker.19.docker-run-with-resources-user-readonly-tmpfs-volume-init-"
      "ca.config.json");
  struct spec *back = round_trip (s);

  check_docker_19 (s);
  check_docker_19 (back);
  spec_free (back);
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

/* The one namespace table: config.json's name, the kernel's /proc name and
 * clone flag for each type. */
static void
test_ns_table (void **state)
{
  static const struct
  {
    const char *proc;
    int flag;
  } want[NS__MAX] = {
    [NS_MOUNT] = { "mnt", CLONE_NEWNS },
    [NS_PID] = { "pid", CLONE_NEWPID },
    [NS_NET] = { "net", CLONE_NEWNET },
    [NS_IPC] = { "ipc", CLONE_NEWIPC },
    [NS_UTS] = { "uts", CLONE_NEWUTS },
    [NS_USER] = { "user", CLONE_NEWUSER },
    [NS_CGROUP] = { "cgroup", CLONE_NEWCGROUP },
    [NS_TIME] = { "time", CLONE_NEWTIME },
  };

  (void)state;
  for (int t = 0; t < NS__MAX; t++)
    {
      char path[64];
      int fd;

      assert_string_equal (ns_table[t].config_name, ns_type_name (t));
      assert_string_equal (ns_table[t].proc_name, want[t].proc);
      assert_int_equal (ns_table[t].clone_flag, want[t].flag);
      snprintf (path, sizeof (path), "/proc/self/ns/%s", ns_table[t].proc_name);
      fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT)
        continue; /* a kernel without that namespace (time: before 5.6) */
      assert_true (fd >= 0);
      close (fd);
    }
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
    cmocka_unit_test (test_ns_table),
    cmocka_unit_test (test_name_tables),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
