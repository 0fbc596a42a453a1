/* runtime/cgroup: cgroupsPath mapping; fake v2 and hybrid trees (plain
 * directories declaring their layout, see cgroup_set_root); and the real
 * host's hierarchies when run as root (skipped otherwise). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <yajl/yajl_tree.h>

#include <cmocka.h>

#include "../../runtime/cgroup.h"
#include "../../runtime/cgroup_internal.h"
#include "../../runtime/util.h"

#define MiB (1024 * 1024)

static char tree[128];

/* ---- small file helpers ---- */

static void __attribute__ ((format (printf, 2, 3)))
put (const char *text, const char *fmt, ...)
{
  char path[PATH_MAX];
  va_list ap;
  FILE *f;
  va_start (ap, fmt);
  vsnprintf (path, sizeof (path), fmt, ap);
  va_end (ap);
  f = fopen (path, "we");
  assert_non_null (f);
  fputs (text, f);
  assert_int_equal (fclose (f), 0);
}

/* The file's text without its trailing newline ("" if missing). */
static char *__attribute__ ((format (printf, 1, 2))) get (const char *fmt, ...)
{
  char path[PATH_MAX];
  char *text = NULL;
  va_list ap;
  size_t n;
  va_start (ap, fmt);
  vsnprintf (path, sizeof (path), fmt, ap);
  va_end (ap);
  if (read_file_at (AT_FDCWD, path, 1 << 20, &text, &n) < 0)
    return xstrdup ("(missing)");
  while (n > 0 && text[n - 1] == '\n')
    text[--n] = '\0';
  return text;
}

#define assert_file(expected, ...)                                             \
  do                                                                           \
    {                                                                          \
      cleanup_free char *_got = get (__VA_ARGS__);                             \
      assert_string_equal (_got, expected);                                    \
    }                                                                          \
  while (0)

static bool __attribute__ ((format (printf, 1, 2)))
exists (const char *fmt, ...)
{
  char path[PATH_MAX];
  struct stat st;
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (path, sizeof (path), fmt, ap);
  va_end (ap);
  return lstat (path, &st) == 0;
}

static void __attribute__ ((format (printf, 1, 2)))
make_dir (const char *fmt, ...)
{
  char path[PATH_MAX];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (path, sizeof (path), fmt, ap);
  va_end (ap);
  assert_int_equal (mkdir_p (path, 0755), 0);
}

static int
rm_entry (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  return remove (path);
}

static void
rm_rf (const char *dir)
{
  nftw (dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void
assert_error_contains (struct moat_error *err, const char *needle)
{
  assert_non_null (err);
  if (strstr (err->msg, needle) == NULL)
    fail_msg ("error `%s` does not contain `%s`", err->msg, needle);
}

static void
assert_valid_json (const char *text)
{
  char errbuf[256];
  yajl_val v = yajl_tree_parse (text, errbuf, sizeof (errbuf));
  if (v == NULL)
    fail_msg ("invalid JSON (%s): %s", errbuf, text);
  assert_true (YAJL_IS_OBJECT (v));
  yajl_tree_free (v);
}

/* ---- cgroupsPath mapping ---- */

static void
expect_path (const char *in, const char *id, bool systemd, const char *want)
{
  cleanup_error struct moat_error *err = NULL;
  cleanup_free char *rel = NULL;
  int r = cgroup_resolve_path (in, id, systemd, &rel, &err);
  if (r < 0)
    fail_msg ("`%s`: unexpected error: %s", in ? in : "(null)", err->msg);
  assert_string_equal (rel, want);
}

static void
expect_refused (const char *in, const char *id, bool systemd)
{
  cleanup_error struct moat_error *err = NULL;
  char *rel = NULL;
  int r = cgroup_resolve_path (in, id, systemd, &rel, &err);
  if (r >= 0)
    fail_msg ("`%s` was accepted as `%s`", in ? in : "(null)", rel);
  assert_non_null (err);
  assert_null (rel);
}

static void
test_resolve_path (void **state)
{
  expect_path (NULL, "abc", false, "/moat/abc");
  expect_path ("", "abc", true, "/moat/abc");
  expect_path ("/docker/abc", "x", false, "/docker/abc");
  expect_path ("/docker/abc", "x", true, "/docker/abc");
  expect_path ("a/b", "x", false, "/a/b");
  expect_path ("//a///b/", "x", false, "/a/b");
  expect_path ("kubepods-pod1.slice:cri-containerd:ID", "x", true,
               "/kubepods.slice/kubepods-pod1.slice/cri-containerd-ID.scope");
  /* Sent without --systemd-cgroup on a host without systemd. */
  expect_path ("kubepods-pod1.slice:cri-containerd:ID", "x", false,
               "/kubepods.slice/kubepods-pod1.slice/cri-containerd-ID.scope");
  expect_path ("system.slice:docker:ID", "x", true,
               "/system.slice/docker-ID.scope");
  expect_path (":docker:ID", "x", true, "/system.slice/docker-ID.scope");
  expect_path ("-.slice:moat:ID", "x", true, "/moat-ID.scope");
  expect_path ("-:moat:ID", "x", true, "/moat-ID.scope");
  expect_path ("a-b-c.slice:p:n", "x", true,
               "/a.slice/a-b.slice/a-b-c.slice/p-n.scope");
  expect_path ("user.slice:p:x.slice", "x", true, "/user.slice/x.slice");
  expect_path ("system.slice::ID", "x", true, "/system.slice/ID.scope");
}

static void
test_resolve_path_refused (void **state)
{
  expect_refused ("..", "x", false);
  expect_refused ("../../..", "x", false);
  expect_refused ("/../../..", "x", false);
  expect_refused ("/a/../../b", "x", false);
  expect_refused ("/a/./b", "x", false);
  expect_refused ("/", "x", false);
  expect_refused ("//", "x", false);
  expect_refused ("/a\nb", "x", false);
  expect_refused ("/a\tb", "x", false);
  expect_refused (NULL, NULL, false);
  expect_refused (NULL, "a/b", false);
  expect_refused ("bad-.slice:p:n", "x", true);
  expect_refused ("-bad.slice:p:n", "x", true);
  expect_refused ("a--b.slice:p:n", "x", true);
  expect_refused ("noslice:p:n", "x", true);
  expect_refused (".slice:p:n", "x", true);
  expect_refused ("a/b.slice:p:n", "x", true);
  expect_refused ("system.slice:p:../../x", "x", true);
  expect_refused ("system.slice:p:", "x", true);
  expect_refused ("a:b", "x", true);
  expect_refused ("a:b:c:d", "x", true);
}

/* ---- fake trees ---- */

static const char *const v2_files[] = { "cgroup.procs",
                                        "cgroup.freeze",
                                        "cgroup.events",
                                        "cgroup.kill",
                                        "memory.max",
                                        "memory.swap.max",
                                        "memory.low",
                                        "memory.high",
                                        "memory.current",
                                        "memory.stat",
                                        "cpu.weight",
                                        "cpu.max",
                                        "cpu.stat",
                                        "pids.max",
                                        "pids.current",
                                        "io.weight",
                                        "cpuset.cpus",
                                        "cpuset.mems",
                                        NULL };

static int
setup_v2_tree (void **state)
{
  snprintf (tree, sizeof (tree), "/tmp/moat-cgv2-XXXXXX");
  assert_non_null (mkdtemp (tree));
  for (size_t i = 0; v2_files[i]; i++)
    put ("", "%s/%s", tree, v2_files[i]);
  put ("cpuset cpu io memory hugetlb pids\n", "%s/cgroup.controllers", tree);
  put ("", "%s/cgroup.subtree_control", tree);
  cgroup_set_root (tree);
  return 0;
}

static struct
{
  const char *dir;
  const char *files[12];
} v1_tree[] = {
  { "cpu",
    { "cgroup.procs", "cpu.shares", "cpu.cfs_quota_us", "cpu.cfs_period_us",
      "cpu.stat", NULL } },
  { "cpuacct",
    { "cgroup.procs", "cpuacct.usage", "cpuacct.stat", "cpuacct.usage_percpu",
      NULL } },
  { "cpuset", { "cgroup.procs", "cpuset.cpus", "cpuset.mems", NULL } },
  { "memory",
    { "cgroup.procs", "memory.limit_in_bytes", "memory.memsw.limit_in_bytes",
      "memory.soft_limit_in_bytes", "memory.swappiness", "memory.oom_control",
      "memory.usage_in_bytes", "memory.stat", NULL } },
  { "pids", { "cgroup.procs", "pids.max", "pids.current", NULL } },
  { "devices",
    { "cgroup.procs", "devices.allow", "devices.deny", "devices.list", NULL } },
  { "freezer", { "cgroup.procs", "freezer.state", NULL } },
  { "blkio", { "cgroup.procs", "blkio.weight", NULL } },
  { "hugetlb", { "cgroup.procs", NULL } },
  { "systemd", { "cgroup.procs", NULL } },
  { "unified",
    { "cgroup.procs", "cgroup.controllers", "cgroup.subtree_control",
      "cgroup.kill", NULL } },
};
#define N_V1_TREE (sizeof (v1_tree) / sizeof (v1_tree[0]))

static int
setup_hybrid_tree (void **state)
{
  snprintf (tree, sizeof (tree), "/tmp/moat-cgv1-XXXXXX");
  assert_non_null (mkdtemp (tree));
  for (size_t i = 0; i < N_V1_TREE; i++)
    {
      make_dir ("%s/%s", tree, v1_tree[i].dir);
      for (size_t j = 0; v1_tree[i].files[j]; j++)
        put ("", "%s/%s/%s", tree, v1_tree[i].dir, v1_tree[i].files[j]);
    }
  put ("0-1\n", "%s/cpuset/cpuset.cpus", tree);
  put ("0\n", "%s/cpuset/cpuset.mems", tree);
  put ("hugetlb\n", "%s/unified/cgroup.controllers", tree);
  cgroup_set_root (tree);
  return 0;
}

static int
teardown_tree (void **state)
{
  cgroup_set_root (NULL);
  rm_rf (tree);
  return 0;
}

static struct spec_resources
limits (void)
{
  struct spec_resources r;
  memset (&r, 0, sizeof (r));
  r.memory.has_limit = r.memory.has_swap = true;
  r.memory.limit = 64 * MiB;
  r.memory.swap = 128 * MiB;
  r.has_pids_limit = true;
  r.pids_limit = 10;
  r.cpu.has_quota = r.cpu.has_period = r.cpu.has_shares = true;
  r.cpu.quota = 50000;
  r.cpu.period = 100000;
  r.cpu.shares = 1024;
  r.cpu.cpus = (char *)"1";
  return r;
}

/* Docker's `update --pids-limit 100` JSON: zeros for everything else. */
static struct spec_resources
docker_pids_update (void)
{
  struct spec_resources r;
  memset (&r, 0, sizeof (r));
  r.memory.has_limit = r.memory.has_reservation = true;
  r.cpu.has_shares = r.cpu.has_quota = r.cpu.has_period = true;
  r.has_pids_limit = true;
  r.pids_limit = 100;
  r.has_blkio_weight = true;
  return r;
}

static void
test_v2_mode (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  enum cgroup_mode mode = CGROUP_MODE_V1;
  assert_int_equal (cgroup_mode (&mode, &err), 0);
  assert_int_equal (mode, CGROUP_MODE_V2);
}

static void
test_v2_create_update_destroy (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct spec_resources res = limits ();
  struct spec_resources zeros = docker_pids_update ();
  struct spec_kv unified[] = { { (char *)"memory.high", (char *)"50000000" } };
  struct cgroup *cg = NULL;
  cleanup_free char *json = NULL;
  bool frozen = true;

  struct spec_device_rule deny_all = { false, 'a', -1, -1, "rwm" };

  make_dir ("%s/other", tree);
  /* A plain-directory tree cannot hold the device program: skipped. */
  res.devices = &deny_all;
  res.n_devices = 1;
  res.unified = unified;
  res.n_unified = 1;
  assert_int_equal (cgroup_create ("/moat/c1", &res, &cg, &err), 0);
  assert_file ("67108864", "%s/moat/c1/memory.max", tree);
  assert_file ("67108864", "%s/moat/c1/memory.swap.max", tree);
  assert_file ("10", "%s/moat/c1/pids.max", tree);
  assert_file ("50000 100000", "%s/moat/c1/cpu.max", tree);
  assert_file ("39", "%s/moat/c1/cpu.weight", tree);
  assert_file ("1", "%s/moat/c1/cpuset.cpus", tree);
  assert_file ("50000000", "%s/moat/c1/memory.high", tree);
  /* Controllers enabled for the children of every ancestor, not the leaf. */
  assert_file ("+memory +pids +cpu +cpuset +io +hugetlb",
               "%s/cgroup.subtree_control", tree);
  assert_file ("+memory +pids +cpu +cpuset +io +hugetlb",
               "%s/moat/cgroup.subtree_control", tree);
  assert_file ("", "%s/moat/c1/cgroup.subtree_control", tree);
  assert_true (cgroup_unified_fd (cg) >= 0);

  /* Zeros leave every value alone. */
  assert_int_equal (cgroup_update (cg, &zeros, &err), 0);
  assert_file ("67108864", "%s/moat/c1/memory.max", tree);
  assert_file ("50000 100000", "%s/moat/c1/cpu.max", tree);
  assert_file ("39", "%s/moat/c1/cpu.weight", tree);
  assert_file ("100", "%s/moat/c1/pids.max", tree);

  /* A quota alone keeps the period; unlimited memory lifts swap too. */
  memset (&zeros, 0, sizeof (zeros));
  zeros.cpu.has_quota = true;
  zeros.cpu.quota = 20000;
  zeros.memory.has_limit = true;
  zeros.memory.limit = -1;
  assert_int_equal (cgroup_update (cg, &zeros, &err), 0);
  assert_file ("20000 100000", "%s/moat/c1/cpu.max", tree);
  assert_file ("max", "%s/moat/c1/memory.max", tree);
  assert_file ("max", "%s/moat/c1/memory.swap.max", tree);

  /* The freeze completes when cgroup.events says so (the kernel's part). */
  put ("populated 0\nfrozen 1\n", "%s/moat/c1/cgroup.events", tree);
  assert_int_equal (cgroup_freeze (cg, true, &err), 0);
  assert_file ("1", "%s/moat/c1/cgroup.freeze", tree);
  assert_int_equal (cgroup_is_frozen (cg, &frozen, &err), 0);
  assert_true (frozen);
  put ("populated 0\nfrozen 0\n", "%s/moat/c1/cgroup.events", tree);
  assert_int_equal (cgroup_freeze (cg, false, &err), 0);
  assert_int_equal (cgroup_is_frozen (cg, &frozen, &err), 0);
  assert_false (frozen);

  put ("1234\n", "%s/moat/c1/memory.current", tree);
  put ("anon 10\nfile 20\nbad key 3\n", "%s/moat/c1/memory.stat", tree);
  put ("usage_usec 7\nuser_usec 5\nsystem_usec 2\n", "%s/moat/c1/cpu.stat",
       tree);
  put ("3\n", "%s/moat/c1/pids.current", tree);
  assert_int_equal (cgroup_stats_json (cg, &json, &err), 0);
  assert_valid_json (json);
  assert_non_null (strstr (json, "\"total\":7000"));
  assert_non_null (strstr (json, "\"usage\":1234"));
  assert_non_null (strstr (json, "\"cache\":20"));
  assert_non_null (strstr (json, "\"current\":3"));
  assert_null (strstr (json, "bad"));

  assert_int_equal (cgroup_destroy (cg, &err), 0);
  cgroup_free (cg);
  assert_false (exists ("%s/moat/c1", tree));
  assert_false (exists ("%s/moat", tree));
  assert_true (exists ("%s/other", tree));
  assert_true (exists ("%s/memory.max", tree));
}

static void
test_v2_unified_keys_refused (void **state)
{
  const char *bad[]
      = { "cgroup.procs",           "../memory.max", "memory.max/x",
          "cgroup.subtree_control", ".hidden",       "nodot" };
  for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
    {
      cleanup_error struct moat_error *err = NULL;
      struct spec_resources res;
      struct spec_kv kv = { (char *)bad[i], (char *)"1" };
      struct cgroup *cg = NULL;
      memset (&res, 0, sizeof (res));
      res.unified = &kv;
      res.n_unified = 1;
      assert_true (cgroup_create ("/moat/u", &res, &cg, &err) < 0);
      assert_error_contains (err, "linux.resources.unified");
      assert_false (exists ("%s/moat", tree));
    }
}

/* A failed create leaves nothing; the error names the file. */
static void
test_v2_failed_create_leaves_nothing (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct spec_resources res = limits ();
  struct cgroup *cg = NULL;
  char path[PATH_MAX];

  snprintf (path, sizeof (path), "%s/io.weight", tree);
  assert_int_equal (unlink (path), 0);
  res.has_blkio_weight = true;
  res.blkio_weight = 500;
  assert_true (cgroup_create ("/moat/deep/c2", &res, &cg, &err) < 0);
  assert_null (cg);
  assert_error_contains (err, "writing io.weight: No such file or directory");
  assert_false (exists ("%s/moat", tree));

  /* Swap below memory makes no sense for memory.swap.max. */
  moat_error_free (&err);
  res = limits ();
  res.memory.swap = 32 * MiB;
  assert_true (cgroup_create ("/moat/c3", &res, &cg, &err) < 0);
  assert_error_contains (err, "memory.swap");
  assert_false (exists ("%s/moat", tree));

  /* Parents that were there stay. */
  moat_error_free (&err);
  make_dir ("%s/kept", tree);
  res.memory.swap = 128 * MiB;
  res.unified = &(struct spec_kv){ (char *)"cgroup.kill", (char *)"1" };
  res.n_unified = 1;
  assert_true (cgroup_create ("/kept/a/b", &res, &cg, &err) < 0);
  assert_true (exists ("%s/kept", tree));
  assert_false (exists ("%s/kept/a", tree));
}

static void
test_v2_busy_and_escapes (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct cgroup *cg = NULL;
  char outside[PATH_MAX], link[PATH_MAX];

  /* A cgroup someone else's processes are in is not ours to take. */
  make_dir ("%s/busy", tree);
  put ("4242\n", "%s/busy/cgroup.procs", tree);
  assert_true (cgroup_create ("/busy", NULL, &cg, &err) < 0);
  assert_int_equal (err->errnum, EBUSY);
  assert_true (exists ("%s/busy", tree));

  /* Nor one with child cgroups: destroy would take them down too. */
  moat_error_free (&err);
  make_dir ("%s/system.slice/cron.service", tree);
  assert_true (cgroup_create ("/system.slice", NULL, &cg, &err) < 0);
  assert_int_equal (err->errnum, EBUSY);
  assert_true (exists ("%s/system.slice/cron.service", tree));

  /* A symlink in the hierarchy cannot lead out of it. */
  moat_error_free (&err);
  snprintf (outside, sizeof (outside), "%s-outside", tree);
  assert_int_equal (mkdir (outside, 0755), 0);
  snprintf (link, sizeof (link), "%s/evil", tree);
  assert_int_equal (symlink (outside, link), 0);
  assert_true (cgroup_create ("/evil/c", NULL, &cg, &err) < 0);
  assert_false (exists ("%s/c", outside));
  assert_true (cgroup_create ("/../escape", NULL, &cg, &err) < 0);
  assert_true (cgroup_open ("/evil", &cg, &err) < 0);
  rm_rf (outside);
}

static void
test_v2_destroy_keeps_shared_parents (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct cgroup *a = NULL, *b = NULL, *d = NULL, *again = NULL;

  assert_int_equal (cgroup_create ("/moat/a", NULL, &a, &err), 0);
  assert_int_equal (cgroup_create ("/moat/b", NULL, &b, &err), 0);
  assert_int_equal (cgroup_create ("/docker/d", NULL, &d, &err), 0);
  assert_int_equal (cgroup_destroy (a, &err), 0);
  assert_false (exists ("%s/moat/a", tree));
  assert_true (exists ("%s/moat/b", tree));

  /* A later verb reopens it by path. */
  assert_int_equal (cgroup_open ("/moat/b", &again, &err), 0);
  assert_int_equal (cgroup_destroy (again, &err), 0);
  assert_false (exists ("%s/moat", tree));
  assert_int_equal (cgroup_open ("/moat/b", &again, &err), -ENOENT);
  moat_error_free (&err);

  /* Only moat's own parent goes; /docker is the engine's. */
  assert_int_equal (cgroup_destroy (d, &err), 0);
  assert_false (exists ("%s/docker/d", tree));
  assert_true (exists ("%s/docker", tree));
  /* Destroying twice is fine: missing dirs are not an error. */
  assert_int_equal (cgroup_destroy (d, &err), 0);
  cgroup_free (a);
  cgroup_free (b);
  cgroup_free (d);
  cgroup_free (again);
}

static void
test_hybrid_create_update_destroy (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct spec_resources res = limits ();
  struct spec_resources zeros = docker_pids_update ();
  struct spec_device_rule rules[] = {
    { false, 'a', -1, -1, "rwm" },
    { true, 'c', 1, 3, "rwm" },
    { true, 'c', 136, -1, "" },
  };
  struct cgroup *cg = NULL;
  cleanup_free char *json = NULL;
  enum cgroup_mode mode = CGROUP_MODE_V2;
  bool frozen = true;

  assert_int_equal (cgroup_mode (&mode, &err), 0);
  assert_int_equal (mode, CGROUP_MODE_HYBRID);
  res.devices = rules;
  res.n_devices = 3;
  res.has_blkio_weight = true;
  res.blkio_weight = 300;
  res.memory.has_swappiness = true;
  res.memory.swappiness = 10;
  assert_int_equal (cgroup_create ("/moat/h1", &res, &cg, &err), 0);
  assert_file ("67108864", "%s/memory/moat/h1/memory.limit_in_bytes", tree);
  assert_file ("134217728", "%s/memory/moat/h1/memory.memsw.limit_in_bytes",
               tree);
  assert_file ("10", "%s/memory/moat/h1/memory.swappiness", tree);
  assert_file ("10", "%s/pids/moat/h1/pids.max", tree);
  assert_file ("50000", "%s/cpu/moat/h1/cpu.cfs_quota_us", tree);
  assert_file ("100000", "%s/cpu/moat/h1/cpu.cfs_period_us", tree);
  assert_file ("1024", "%s/cpu/moat/h1/cpu.shares", tree);
  assert_file ("300", "%s/blkio/moat/h1/blkio.weight", tree);
  /* The last rule written to each file (the kernel keeps them all). */
  assert_file ("a *:* rwm", "%s/devices/moat/h1/devices.deny", tree);
  assert_file ("c 136:* rwm", "%s/devices/moat/h1/devices.allow", tree);
  /* cpuset: the parent inherits the root's, the leaf gets its own cpus. */
  assert_file ("0-1", "%s/cpuset/moat/cpuset.cpus", tree);
  assert_file ("0", "%s/cpuset/moat/cpuset.mems", tree);
  assert_file ("1", "%s/cpuset/moat/h1/cpuset.cpus", tree);
  assert_file ("0", "%s/cpuset/moat/h1/cpuset.mems", tree);
  assert_true (exists ("%s/systemd/moat/h1", tree));
  assert_true (exists ("%s/freezer/moat/h1", tree));
  assert_true (exists ("%s/cpuacct/moat/h1", tree));
  assert_true (exists ("%s/unified/moat/h1", tree));
  /* The unified hierarchy carries no limits on a hybrid host. */
  assert_file ("", "%s/unified/cgroup.subtree_control", tree);
  assert_true (cgroup_unified_fd (cg) >= 0);

  assert_int_equal (cgroup_update (cg, &zeros, &err), 0);
  assert_file ("67108864", "%s/memory/moat/h1/memory.limit_in_bytes", tree);
  assert_file ("50000", "%s/cpu/moat/h1/cpu.cfs_quota_us", tree);
  assert_file ("1024", "%s/cpu/moat/h1/cpu.shares", tree);
  assert_file ("300", "%s/blkio/moat/h1/blkio.weight", tree);
  assert_file ("100", "%s/pids/moat/h1/pids.max", tree);

  memset (&zeros, 0, sizeof (zeros));
  zeros.memory.has_limit = true;
  zeros.memory.limit = -1;
  zeros.has_pids_limit = true;
  zeros.pids_limit = -1;
  assert_int_equal (cgroup_update (cg, &zeros, &err), 0);
  assert_file ("-1", "%s/memory/moat/h1/memory.limit_in_bytes", tree);
  assert_file ("-1", "%s/memory/moat/h1/memory.memsw.limit_in_bytes", tree);
  assert_file ("max", "%s/pids/moat/h1/pids.max", tree);

  assert_int_equal (cgroup_freeze (cg, true, &err), 0);
  assert_file ("FROZEN", "%s/freezer/moat/h1/freezer.state", tree);
  assert_int_equal (cgroup_is_frozen (cg, &frozen, &err), 0);
  assert_true (frozen);
  assert_int_equal (cgroup_freeze (cg, false, &err), 0);
  assert_file ("THAWED", "%s/freezer/moat/h1/freezer.state", tree);
  assert_int_equal (cgroup_is_frozen (cg, &frozen, &err), 0);
  assert_false (frozen);

  put ("99\n", "%s/cpuacct/moat/h1/cpuacct.usage", tree);
  put ("5 6\n", "%s/cpuacct/moat/h1/cpuacct.usage_percpu", tree);
  put ("cache 11\nrss 4\n", "%s/memory/moat/h1/memory.stat", tree);
  assert_int_equal (cgroup_stats_json (cg, &json, &err), 0);
  assert_valid_json (json);
  assert_non_null (strstr (json, "\"total\":99,\"percpu\":[5,6]"));
  assert_non_null (strstr (json, "\"cache\":11"));
  assert_non_null (strstr (json, "\"limit\":0}}"));

  assert_int_equal (cgroup_destroy (cg, &err), 0);
  cgroup_free (cg);
  for (size_t i = 0; i < N_V1_TREE; i++)
    {
      assert_false (exists ("%s/%s/moat", tree, v1_tree[i].dir));
      assert_true (exists ("%s/%s/cgroup.procs", tree, v1_tree[i].dir));
    }
}

/* hugetlb.SIZE.SUFFIX of a container's cgroup at dir: hugepageLimits
 * where named, the memory limit for every other size (G7), a size the
 * host lacks refused. The kernel makes the files; here the test does. */
static void
check_hugetlb (const char *dir, const char *suffix)
{
  cleanup_error struct moat_error *err = NULL;
  struct spec_hugepage_limit one_gb[] = { { (char *)"1GB", 0 } };
  struct spec_hugepage_limit missing[] = { { (char *)"3MB", 4096 } };
  struct spec_resources res;
  struct cgroup *cg = NULL;

  assert_int_equal (cgroup_create ("/moat/hp", NULL, &cg, &err), 0);
  put ("", "%s/moat/hp/hugetlb.2MB.%s", dir, suffix);
  put ("", "%s/moat/hp/hugetlb.1GB.%s", dir, suffix);
  put ("", "%s/moat/hp/hugetlb.2MB.rsvd.%s", dir, suffix);
  memset (&res, 0, sizeof (res));
  res.memory.has_limit = true;
  res.memory.limit = 64 * MiB;
  res.hugepage_limits = one_gb;
  res.n_hugepage_limits = 1;
  assert_int_equal (cgroup_update (cg, &res, &err), 0);
  assert_file ("0", "%s/moat/hp/hugetlb.1GB.%s", dir, suffix);
  assert_file ("67108864", "%s/moat/hp/hugetlb.2MB.%s", dir, suffix);
  assert_file ("", "%s/moat/hp/hugetlb.2MB.rsvd.%s", dir, suffix);

  res.memory.has_limit = false;
  res.hugepage_limits = missing;
  assert_true (cgroup_update (cg, &res, &err) < 0);
  assert_non_null (strstr (err->msg, "this host has no 3MB huge pages"));
  assert_int_equal (cgroup_destroy (cg, &err), 0);
  cgroup_free (cg);
}

static void
test_v2_hugetlb (void **state)
{
  check_hugetlb (tree, "max");
}

static void
test_hybrid_hugetlb (void **state)
{
  cleanup_free char *dir = xasprintf ("%s/hugetlb", tree);
  check_hugetlb (dir, "limit_in_bytes");
}

static void
test_hybrid_refuses_unified_and_cleans_up (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct spec_kv kv = { (char *)"memory.high", (char *)"1" };
  struct spec_resources res = limits ();
  struct cgroup *cg = NULL;

  res.unified = &kv;
  res.n_unified = 1;
  assert_true (cgroup_create ("/moat/h2", &res, &cg, &err) < 0);
  assert_error_contains (err, "linux.resources.unified requires cgroup v2");
  for (size_t i = 0; i < N_V1_TREE; i++)
    assert_false (exists ("%s/%s/moat", tree, v1_tree[i].dir));
}

/* Co-mounted controllers (cpu,cpuacct behind two symlinks) are joined once. */
static void
test_v1_comounted (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct spec_resources res;
  struct cgroup *cg = NULL;
  enum cgroup_mode mode = CGROUP_MODE_V2;
  char path[PATH_MAX], comounted[PATH_MAX];

  snprintf (path, sizeof (path), "%s/unified", tree);
  rm_rf (path);
  snprintf (path, sizeof (path), "%s/cpuacct", tree);
  rm_rf (path);
  snprintf (path, sizeof (path), "%s/cpu", tree);
  snprintf (comounted, sizeof (comounted), "%s/cpu,cpuacct", tree);
  assert_int_equal (rename (path, comounted), 0);
  assert_int_equal (symlink ("cpu,cpuacct", path), 0);
  snprintf (path, sizeof (path), "%s/cpuacct", tree);
  assert_int_equal (symlink ("cpu,cpuacct", path), 0);
  cgroup_set_root (tree);

  assert_int_equal (cgroup_mode (&mode, &err), 0);
  assert_int_equal (mode, CGROUP_MODE_V1);
  memset (&res, 0, sizeof (res));
  res.cpu.has_shares = true;
  res.cpu.shares = 512;
  assert_int_equal (cgroup_create ("/moat/co", &res, &cg, &err), 0);
  assert_file ("512", "%s/cpu,cpuacct/moat/co/cpu.shares", tree);
  assert_int_equal (cgroup_unified_fd (cg), -1);
  assert_int_equal (cgroup_destroy (cg, &err), 0);
  cgroup_free (cg);
  assert_false (exists ("%s/cpu,cpuacct/moat", tree));
}

/* ---- the real host (root, v1 or hybrid) ---- */

static const char *const host_hierarchies[]
    = { "cpu",     "cpuacct", "cpuset", "memory",  "pids",
        "devices", "freezer", "blkio",  "systemd", "unified" };
#define N_HOST (sizeof (host_hierarchies) / sizeof (host_hierarchies[0]))

static char host_parent[64];
static pid_t host_child = -1;

static bool
host_usable (void)
{
  if (geteuid () != 0)
    {
      print_message ("skipped: needs root\n");
      return false;
    }
  if (!exists ("/sys/fs/cgroup/memory"))
    {
      print_message ("skipped: no /sys/fs/cgroup/memory (not v1/hybrid)\n");
      return false;
    }
  return true;
}

static int
setup_host (void **state)
{
  cgroup_set_root (NULL);
  snprintf (host_parent, sizeof (host_parent), "moat-test-%d", (int)getpid ());
  host_child = -1;
  return 0;
}

/* Whatever happened: the child dies, the directories go. */
static int
teardown_host (void **state)
{
  char procs[PATH_MAX];
  cleanup_free char *left = NULL;

  if (host_child > 0)
    {
      kill (host_child, SIGKILL);
      waitpid (host_child, NULL, 0);
      host_child = -1;
    }
  /* Grandchildren the test started inside its own cgroup. */
  snprintf (procs, sizeof (procs), "/sys/fs/cgroup/pids/%s/x/cgroup.procs",
            host_parent);
  if (read_file_at (AT_FDCWD, procs, 1 << 16, &left, NULL) == 0)
    for (char *save = NULL, *w = strtok_r (left, "\n", &save); w;
         w = strtok_r (NULL, "\n", &save))
      {
        int pid;
        if (parse_int (w, &pid) == 0 && pid > 1)
          kill (pid, SIGKILL);
      }
  /* The killed processes leave their cgroups asynchronously. */
  for (int attempt = 0; attempt < 500; attempt++)
    {
      bool left_over = false;
      for (size_t i = 0; i < N_HOST; i++)
        {
          char path[PATH_MAX];
          snprintf (path, sizeof (path), "/sys/fs/cgroup/%s/%s/x",
                    host_hierarchies[i], host_parent);
          if (rmdir (path) < 0 && errno == EBUSY)
            left_over = true;
          snprintf (path, sizeof (path), "/sys/fs/cgroup/%s/%s",
                    host_hierarchies[i], host_parent);
          rmdir (path);
        }
      if (!left_over)
        break;
      usleep (10000);
    }
  return 0;
}

static pid_t
start_sleeper (void)
{
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      for (;;)
        pause ();
      _exit (0);
    }
  return pid;
}

static void
test_host_lifecycle (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct spec_resources res;
  struct spec_device_rule rules[] = {
    { false, 'a', -1, -1, "rwm" },
    { true, 'c', 1, 3, "rwm" },
    { true, 'c', 1, 5, "r" },
  };
  struct cgroup *cg = NULL;
  cleanup_free char *rel = NULL, *json = NULL, *self_cg = NULL;
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  bool frozen = false, memsw;
  int status;

  if (!host_usable ())
    return;
  rel = xasprintf ("/%s/x", host_parent);
  memset (&res, 0, sizeof (res));
  res.memory.has_limit = true;
  res.memory.limit = 64 * MiB;
  memsw = exists ("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes");
  res.memory.has_swap = memsw;
  res.memory.swap = 64 * MiB;
  res.has_pids_limit = true;
  res.pids_limit = 10;
  res.cpu.has_quota = res.cpu.has_period = true;
  res.cpu.quota = 50000;
  res.cpu.period = 100000;
  res.devices = rules;
  res.n_devices = 3;

  if (cgroup_create (rel, &res, &cg, &err) < 0)
    fail_msg ("cgroup_create: %s", err->msg);
  assert_file ("67108864", "/sys/fs/cgroup/memory%s/memory.limit_in_bytes",
               rel);
  if (memsw)
    assert_file ("67108864",
                 "/sys/fs/cgroup/memory%s/memory.memsw.limit_in_bytes", rel);
  assert_file ("10", "/sys/fs/cgroup/pids%s/pids.max", rel);
  assert_file ("50000", "/sys/fs/cgroup/cpu%s/cpu.cfs_quota_us", rel);
  assert_file ("100000", "/sys/fs/cgroup/cpu%s/cpu.cfs_period_us", rel);
  assert_file ("c 1:3 rwm\nc 1:5 r", "/sys/fs/cgroup/devices%s/devices.list",
               rel);

  /* Raising memory above the current memsw needs memsw first: the
   * EINVAL retry in the other order. Then lowering both again. */
  memset (&res, 0, sizeof (res));
  res.memory.has_limit = res.memory.has_swap = memsw;
  res.memory.limit = 256 * MiB;
  res.memory.swap = 512 * MiB;
  if (memsw)
    {
      if (cgroup_update (cg, &res, &err) < 0)
        fail_msg ("raising memory: %s", err->msg);
      assert_file ("268435456", "/sys/fs/cgroup/memory%s/memory.limit_in_bytes",
                   rel);
      assert_file ("536870912",
                   "/sys/fs/cgroup/memory%s/memory.memsw.limit_in_bytes", rel);
      res.memory.limit = 32 * MiB;
      res.memory.swap = 48 * MiB;
      if (cgroup_update (cg, &res, &err) < 0)
        fail_msg ("lowering memory: %s", err->msg);
      assert_file ("33554432", "/sys/fs/cgroup/memory%s/memory.limit_in_bytes",
                   rel);
      assert_file ("50331648",
                   "/sys/fs/cgroup/memory%s/memory.memsw.limit_in_bytes", rel);
    }

  host_child = start_sleeper ();
  if (cgroup_add_pid (cg, host_child, &err) < 0)
    fail_msg ("cgroup_add_pid: %s", err->msg);
  self_cg = get ("/proc/%d/cgroup", (int)host_child);
  {
    cleanup_free char *want_mem = xasprintf (":memory:%s\n", rel);
    cleanup_free char *want_v2 = xasprintf ("0::%s\n", rel);
    cleanup_free char *with_nl = xasprintf ("%s\n", self_cg);
    assert_non_null (strstr (with_nl, want_mem));
    if (exists ("/sys/fs/cgroup/unified"))
      assert_non_null (strstr (with_nl, want_v2));
  }
  assert_int_equal (cgroup_pids (cg, &pids, &n, &err), 0);
  assert_int_equal (n, 1);
  assert_int_equal (pids[0], host_child);

  if (cgroup_freeze (cg, true, &err) < 0)
    fail_msg ("freeze: %s", err->msg);
  assert_int_equal (cgroup_is_frozen (cg, &frozen, &err), 0);
  assert_true (frozen);
  assert_file ("FROZEN", "/sys/fs/cgroup/freezer%s/freezer.state", rel);
  assert_int_equal (cgroup_freeze (cg, false, &err), 0);
  assert_int_equal (cgroup_is_frozen (cg, &frozen, &err), 0);
  assert_false (frozen);

  assert_int_equal (cgroup_stats_json (cg, &json, &err), 0);
  assert_valid_json (json);
  assert_non_null (strstr (json, "\"pids\":{\"current\":1,\"limit\":10}"));

  /* Not SIGKILL, so through the freezer (no cgroup.kill shortcut): the
   * signal arrives, and the cgroup is thawed again afterwards. */
  assert_int_equal (cgroup_kill_all (cg, SIGTERM, &err), 0);
  assert_int_equal (waitpid (host_child, &status, 0), host_child);
  host_child = -1;
  assert_true (WIFSIGNALED (status));
  assert_int_equal (WTERMSIG (status), SIGTERM);
  assert_file ("THAWED", "/sys/fs/cgroup/freezer%s/freezer.state", rel);

  if (cgroup_destroy (cg, &err) < 0)
    fail_msg ("destroy: %s", err->msg);
  cgroup_free (cg);
  for (size_t i = 0; i < N_HOST; i++)
    if (exists ("/sys/fs/cgroup/%s", host_hierarchies[i]))
      {
        assert_false (exists ("/sys/fs/cgroup/%s%s", host_hierarchies[i], rel));
        /* Not named /moat: the parent is the caller's, and stays. */
        assert_true (
            exists ("/sys/fs/cgroup/%s/%s", host_hierarchies[i], host_parent));
      }
}

/* destroy alone kills what is left, a process's own children included. */
static void
test_host_destroy_kills (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct cgroup *cg = NULL;
  cleanup_free char *rel = NULL;
  int status, pipefd[2];
  char byte;

  if (!host_usable ())
    return;
  rel = xasprintf ("/%s/x", host_parent);
  if (cgroup_create (rel, NULL, &cg, &err) < 0)
    fail_msg ("cgroup_create: %s", err->msg);
  assert_int_equal (pipe2 (pipefd, O_CLOEXEC), 0);
  host_child = fork ();
  assert_true (host_child >= 0);
  if (host_child == 0)
    {
      /* Wait until moved, then fork a grandchild inside the cgroup. */
      close (pipefd[1]);
      if (read (pipefd[0], &byte, 1) != 1)
        _exit (1);
      if (fork () == 0)
        for (;;)
          pause ();
      for (;;)
        pause ();
    }
  close (pipefd[0]);
  assert_int_equal (cgroup_add_pid (cg, host_child, &err), 0);
  assert_int_equal (write (pipefd[1], "x", 1), 1);
  close (pipefd[1]);
  for (;;)
    {
      cleanup_free pid_t *pids = NULL;
      size_t n = 0;
      assert_int_equal (cgroup_pids (cg, &pids, &n, &err), 0);
      if (n == 2)
        break;
      usleep (1000);
    }
  if (cgroup_destroy (cg, &err) < 0)
    fail_msg ("destroy: %s", err->msg);
  assert_int_equal (waitpid (host_child, &status, 0), host_child);
  host_child = -1;
  assert_true (WIFSIGNALED (status));
  assert_false (exists ("/sys/fs/cgroup/memory%s", rel));
  cgroup_free (cg);
}

/* ---- device rules as a cgroup BPF program ---- */

static void
test_devices_program_shape (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct spec_device_rule rules[] = {
    { false, 'a', -1, -1, "rwm" },
    { true, 'c', 1, 3, "r" },
    { true, 'b', 8, -1, "" },
    { true, 'c', 1, 5, "rwx" },
  };
  struct bpf_insn *prog = NULL;
  size_t n = 0;

  /* prologue 6; "b 8:* rwm": type, major, result 2 = 4; "c 1:3 r": type,
   * access 3, major, minor, result 2 = 8; "a *:* rwm" decides alone
   * (result 2), so no default follows it. */
  assert_int_equal (cg_devices_build (rules, 3, &prog, &n, &err), 0);
  assert_int_equal (n, 6 + 4 + 8 + 2);
  assert_int_equal (prog[n - 2].imm, 0);
  /* Last rule first: the first test after the prologue is rule 2's type. */
  assert_int_equal (prog[6].code, BPF_JMP32 | BPF_JNE | BPF_K);
  assert_int_equal (prog[6].imm, BPF_DEVCG_DEV_BLOCK);
  assert_int_equal (prog[6].off, 3);
  free (prog);
  prog = NULL;
  /* Without a catch-all, the default (deny) ends the program. */
  assert_int_equal (cg_devices_build (rules + 1, 2, &prog, &n, &err), 0);
  assert_int_equal (n, 6 + 4 + 8 + 2);
  assert_int_equal (prog[n - 2].code, BPF_ALU | BPF_MOV | BPF_K);
  assert_int_equal (prog[n - 2].imm, 0);
  free (prog);
  prog = NULL;
  /* A bad rule is refused even behind a catch-all. */
  rules[0] = rules[3];
  rules[3] = (struct spec_device_rule){ false, 'a', -1, -1, "rwm" };
  assert_true (cg_devices_build (rules, 4, &prog, &n, &err) < 0);
  assert_error_contains (err, "devices[0]");
  assert_null (prog);
  moat_error_free (&err);
  rules[0] = rules[3];
  rules[3] = (struct spec_device_rule){ true, 'c', 1, 5, "rwx" };
  assert_true (cg_devices_build (rules, 4, &prog, &n, &err) < 0);
  assert_error_contains (err, "devices[3]");
  assert_null (prog);
}

static char v2_test_dir[PATH_MAX];
static pid_t dev_child = -1;

static int
setup_v2_host (void **state)
{
  struct statfs sfs;
  const char *mount = NULL;
  v2_test_dir[0] = '\0';
  dev_child = -1;
  if (statfs ("/sys/fs/cgroup", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
    mount = "/sys/fs/cgroup";
  else if (statfs ("/sys/fs/cgroup/unified", &sfs) == 0
           && sfs.f_type == CGROUP2_SUPER_MAGIC)
    mount = "/sys/fs/cgroup/unified";
  if (mount)
    snprintf (v2_test_dir, sizeof (v2_test_dir), "%s/moat-test-%d-dev", mount,
              (int)getpid ());
  return 0;
}

static int
teardown_v2_host (void **state)
{
  if (dev_child > 0)
    {
      kill (dev_child, SIGKILL);
      waitpid (dev_child, NULL, 0);
      dev_child = -1;
    }
  for (int attempt = 0; v2_test_dir[0] && attempt < 500; attempt++)
    {
      if (rmdir (v2_test_dir) == 0 || errno != EBUSY)
        break;
      usleep (10000);
    }
  return 0;
}

/* What a process in the cgroup may open: one bit per probe that went the
 * expected way. */
static int
probe_devices (void)
{
  struct
  {
    const char *path;
    int flags;
    bool allowed;
  } probes[] = {
    { "/dev/null", O_RDONLY, true },  { "/dev/null", O_WRONLY, false },
    { "/dev/zero", O_RDONLY, true },  { "/dev/zero", O_WRONLY, false },
    { "/dev/full", O_RDONLY, false },
  };
  int bits = 0;
  for (size_t i = 0; i < sizeof (probes) / sizeof (probes[0]); i++)
    {
      int fd = open (probes[i].path, probes[i].flags | O_CLOEXEC);
      if (fd >= 0)
        close (fd);
      if (probes[i].allowed ? fd >= 0 : (fd < 0 && errno == EPERM))
        bits |= 1 << i;
    }
  return bits;
}

/* Run probe_devices in a child moved into the test cgroup. */
static int
probe_in_cgroup (void)
{
  cleanup_free char *procs = xasprintf ("%s/cgroup.procs", v2_test_dir);
  int pipefd[2], status;
  char byte, pid[16];

  assert_int_equal (pipe2 (pipefd, O_CLOEXEC), 0);
  dev_child = fork ();
  assert_true (dev_child >= 0);
  if (dev_child == 0)
    {
      close (pipefd[1]);
      if (read (pipefd[0], &byte, 1) != 1)
        _exit (255);
      _exit (probe_devices ());
    }
  close (pipefd[0]);
  snprintf (pid, sizeof (pid), "%d", (int)dev_child);
  put (pid, "%s", procs);
  assert_int_equal (write (pipefd[1], "x", 1), 1);
  close (pipefd[1]);
  assert_int_equal (waitpid (dev_child, &status, 0), dev_child);
  dev_child = -1;
  assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

static void
test_devices_program_enforced (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  /* Later rules override earlier ones, as in v1: /dev/zero (1:5) is
   * allowed, then its write access is taken away again. */
  struct spec_device_rule rules[] = {
    { false, 'a', -1, -1, "rwm" },
    { true, 'c', 1, 3, "r" },
    { true, 'c', 1, 5, "rwm" },
    { false, 'c', 1, 5, "w" },
  };
  struct spec_device_rule allow_all = { true, 'a', -1, -1, "" };
  cleanup_close int fd = -1;
  union bpf_attr attr;
  uint32_t ids[8];

  if (geteuid () != 0 || v2_test_dir[0] == '\0')
    {
      print_message ("skipped: needs root and a cgroup2 mount\n");
      return;
    }
  assert_int_equal (mkdir (v2_test_dir, 0755), 0);
  fd = open (v2_test_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true (fd >= 0);
  if (cg_devices_attach (fd, rules, 4, &err) < 0)
    fail_msg ("attach: %s", err->msg);
  assert_int_equal (probe_in_cgroup (), 0x1f);

  /* An update replaces the program: one attached, and it now allows all
   * (so only the three "denied" probes flip). */
  if (cg_devices_attach (fd, &allow_all, 1, &err) < 0)
    fail_msg ("re-attach: %s", err->msg);
  memset (&attr, 0, sizeof (attr));
  attr.query.target_fd = (uint32_t)fd;
  attr.query.attach_type = BPF_CGROUP_DEVICE;
  attr.query.prog_ids = (uint64_t)(uintptr_t)ids;
  attr.query.prog_cnt = 8;
  assert_int_equal (syscall (SYS_bpf, BPF_PROG_QUERY, &attr, sizeof (attr)), 0);
  assert_int_equal (attr.query.prog_cnt, 1);
  assert_int_equal (probe_in_cgroup (), 0x1 | 0x4);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_resolve_path),
    cmocka_unit_test (test_resolve_path_refused),
    cmocka_unit_test_setup_teardown (test_v2_mode, setup_v2_tree,
                                     teardown_tree),
    cmocka_unit_test_setup_teardown (test_v2_create_update_destroy,
                                     setup_v2_tree, teardown_tree),
    cmocka_unit_test_setup_teardown (test_v2_unified_keys_refused,
                                     setup_v2_tree, teardown_tree),
    cmocka_unit_test_setup_teardown (test_v2_failed_create_leaves_nothing,
                                     setup_v2_tree, teardown_tree),
    cmocka_unit_test_setup_teardown (test_v2_busy_and_escapes, setup_v2_tree,
                                     teardown_tree),
    cmocka_unit_test_setup_teardown (test_v2_destroy_keeps_shared_parents,
                                     setup_v2_tree, teardown_tree),
    cmocka_unit_test_setup_teardown (test_v2_hugetlb, setup_v2_tree,
                                     teardown_tree),
    cmocka_unit_test_setup_teardown (test_hybrid_hugetlb, setup_hybrid_tree,
                                     teardown_tree),
    cmocka_unit_test_setup_teardown (test_hybrid_create_update_destroy,
                                     setup_hybrid_tree, teardown_tree),
    cmocka_unit_test_setup_teardown (test_hybrid_refuses_unified_and_cleans_up,
                                     setup_hybrid_tree, teardown_tree),
    cmocka_unit_test_setup_teardown (test_v1_comounted, setup_hybrid_tree,
                                     teardown_tree),
    cmocka_unit_test_setup_teardown (test_host_lifecycle, setup_host,
                                     teardown_host),
    cmocka_unit_test_setup_teardown (test_host_destroy_kills, setup_host,
                                     teardown_host),
    cmocka_unit_test (test_devices_program_shape),
    cmocka_unit_test_setup_teardown (test_devices_program_enforced,
                                     setup_v2_host, teardown_v2_host),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
