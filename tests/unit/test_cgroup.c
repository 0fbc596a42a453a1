/* runtime/cgroup on fake v2 and hybrid trees (plain directories declaring
 * their layout, see cgroup_emulation.h): what create, update, freeze, stats
 * and destroy write and remove. The real host: test_cgroup_host.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../runtime/cgroup/cgroup.h"
#include "../../lib/util.h"
#include "cgroup_emulation.h"
#include "cgroup_harness.h"

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
  assert_true (empty_of_cgroups ("%s/moat", tree)); /* kept, as crun does */
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

  snprintf (path, sizeof (path), "%s/pids.max", tree);
  assert_int_equal (unlink (path), 0);
  assert_true (cgroup_create ("/moat/deep/c2", &res, &cg, &err) < 0);
  assert_null (cg);
  assert_error_contains (err, "writing pids.max: No such file or directory");
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
  put ("", "%s/pids.max", tree);
  make_dir ("%s/kept", tree);
  res.memory.swap = 128 * MiB;
  res.unified = &(struct spec_kv){ (char *)"cgroup.kill", (char *)"1" };
  res.n_unified = 1;
  assert_true (cgroup_create ("/kept/a/b", &res, &cg, &err) < 0);
  assert_true (exists ("%s/kept", tree));
  assert_false (exists ("%s/kept/a", tree));
}

static void
assert_ignored_none (struct cgroup *cg)
{
  struct override_list ov = { 0 };
  cgroup_take_ignored (cg, &ov);
  assert_int_equal (ov.n, 0);
}

/* The one entry cgroup_take_ignored gives for path, asked as `asked`. */
static void
assert_ignored (struct cgroup *cg, const char *path, const char *asked,
                const char *why)
{
  struct override_list ov = { 0 };
  cgroup_take_ignored (cg, &ov);
  assert_int_equal (ov.n, 1);
  assert_int_equal (ov.v[0].kind, OVERRIDE_IGNORED);
  assert_string_equal (ov.v[0].path, path);
  assert_string_equal (ov.v[0].asked, asked);
  assert_non_null (strstr (ov.v[0].enforced, why));
  override_list_clear (&ov);
  cgroup_take_ignored (cg, &ov);
  assert_int_equal (ov.n, 0);
}

static struct spec_resources
weighted (uint16_t weight)
{
  struct spec_resources r;
  memset (&r, 0, sizeof (r));
  r.has_blkio_weight = true;
  r.blkio_weight = weight;
  return r;
}

/* A file the host's kernel does not give (tree/NAME). */
static void
remove_from_tree (const char *name)
{
  char path[PATH_MAX];
  snprintf (path, sizeof (path), "%s/%s", tree, name);
  assert_int_equal (unlink (path), 0);
}

/* blockIO.weight as runc and crun find it: io.bfq.weight as is, else
 * io.weight converted, else (no BFQ, no iocost) left alone and told. */
static void
test_v2_blkio_weight_by_host (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct spec_resources res = weighted (500);
  struct cgroup *cg = NULL;

  assert_int_equal (cgroup_create ("/moat/w1", &res, &cg, &err), 0);
  assert_file ("4950", "%s/moat/w1/io.weight", tree);
  assert_ignored_none (cg);
  assert_int_equal (cgroup_destroy (cg, &err), 0);
  cgroup_free (cg);

  put ("", "%s/io.bfq.weight", tree);
  assert_int_equal (cgroup_create ("/moat/w2", &res, &cg, &err), 0);
  assert_file ("500", "%s/moat/w2/io.bfq.weight", tree);
  assert_file ("", "%s/moat/w2/io.weight", tree);
  assert_int_equal (cgroup_destroy (cg, &err), 0);
  cgroup_free (cg);

  remove_from_tree ("io.bfq.weight");
  remove_from_tree ("io.weight");
  assert_int_equal (cgroup_create ("/moat/w3", &res, &cg, &err), 0);
  assert_false (exists ("%s/moat/w3/io.weight", tree));
  assert_ignored (cg, "linux.resources.blockIO.weight", "500",
                  "neither io.bfq.weight nor io.weight");
  res.blkio_weight = 200;
  assert_int_equal (cgroup_update (cg, &res, &err), 0);
  assert_ignored (cg, "linux.resources.blockIO.weight", "200", "BFQ");
  assert_int_equal (cgroup_destroy (cg, &err), 0);
  cgroup_free (cg);
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
  struct cgroup *a = NULL, *b = NULL, *d = NULL, *again = NULL, *deep = NULL;

  assert_int_equal (cgroup_create ("/moat/a", NULL, &a, &err), 0);
  assert_int_equal (cgroup_create ("/moat/b", NULL, &b, &err), 0);
  assert_int_equal (cgroup_create ("/docker/d", NULL, &d, &err), 0);
  assert_int_equal (cgroup_destroy (a, &err), 0);
  assert_false (exists ("%s/moat/a", tree));
  assert_true (exists ("%s/moat/b", tree));

  /* A later verb reopens it by path. */
  assert_int_equal (cgroup_open ("/moat/b", &again, &err), 0);
  assert_int_equal (cgroup_destroy (again, &err), 0);
  assert_true (empty_of_cgroups ("%s/moat", tree));
  assert_int_equal (cgroup_open ("/moat/b", &again, &err), -ENOENT);
  moat_error_free (&err);

  /* A level moat named below /moat goes with its last leaf; /moat stays
   * (the next container finds it), holding no cgroup. */
  assert_int_equal (cgroup_create ("/moat/deep/c", NULL, &deep, &err), 0);
  assert_true (exists ("%s/moat/deep/c", tree));
  assert_int_equal (cgroup_destroy (deep, &err), 0);
  cgroup_free (deep);
  assert_false (exists ("%s/moat/deep", tree));
  assert_true (empty_of_cgroups ("%s/moat", tree));

  /* Nothing above a cgroup moat did not name goes: /docker is the
   * engine's. */
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
  for (size_t i = 0; i < n_v1_tree; i++)
    {
      assert_true (empty_of_cgroups ("%s/%s/moat", tree, v1_tree[i].dir));
      assert_true (exists ("%s/%s/cgroup.procs", tree, v1_tree[i].dir));
    }
}

/* A v1 host without BFQ has no blkio weight file: the weight is left alone
 * and told; it goes to blkio.bfq.weight where BFQ runs, blkio.weight under
 * CFQ; with no blkio hierarchy at all, it is told too. */
static void
test_hybrid_blkio_weight_by_host (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct spec_resources res = weighted (300);
  struct cgroup *cg = NULL;
  char path[PATH_MAX];

  res.has_pids_limit = true;
  res.pids_limit = 10;
  remove_from_tree ("blkio/blkio.weight");
  assert_int_equal (cgroup_create ("/moat/b1", &res, &cg, &err), 0);
  assert_file ("10", "%s/pids/moat/b1/pids.max", tree);
  assert_false (exists ("%s/blkio/moat/b1/blkio.weight", tree));
  assert_ignored (cg, "linux.resources.blockIO.weight", "300",
                  "neither blkio.bfq.weight nor blkio.weight");
  assert_int_equal (cgroup_destroy (cg, &err), 0);
  cgroup_free (cg);

  put ("", "%s/blkio/blkio.bfq.weight", tree);
  assert_int_equal (cgroup_create ("/moat/b2", &res, &cg, &err), 0);
  assert_file ("300", "%s/blkio/moat/b2/blkio.bfq.weight", tree);
  assert_ignored_none (cg);
  assert_int_equal (cgroup_destroy (cg, &err), 0);
  cgroup_free (cg);

  snprintf (path, sizeof (path), "%s/blkio", tree);
  rm_rf (path);
  cgroup_emulate (tree); /* the layout is probed again */
  assert_int_equal (cgroup_create ("/moat/b3", &res, &cg, &err), 0);
  assert_ignored (cg, "linux.resources.blockIO.weight", "300",
                  "no blkio hierarchy");
  assert_int_equal (cgroup_destroy (cg, &err), 0);
  cgroup_free (cg);
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

/* No v1 hugetlb hierarchy, hugetlb on the cgroup2 mount: the limits go
 * there, and every ancestor enables the controller for its children. */
static void
test_hybrid_hugetlb_on_unified (void **state)
{
  cleanup_free char *dir = xasprintf ("%s/unified", tree);
  check_hugetlb (dir, "max");
  assert_file ("+hugetlb", "%s/unified/cgroup.subtree_control", tree);
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
  for (size_t i = 0; i < n_v1_tree; i++)
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
  cgroup_emulate (tree);

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
  assert_true (empty_of_cgroups ("%s/cpu,cpuacct/moat", tree));
}

/* A sandbox's or session exec's record: each figure from its file. */
static void
test_v2_usage_record (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct cgroup *cg = NULL;
  struct cgroup_usage use;

  (void)state;
  assert_int_equal (cgroup_create ("/moat/u1", NULL, &cg, &err), 0);
  put ("usage_usec 7\nuser_usec 5\nsystem_usec 2\nnr_periods 9\n",
       "%s/moat/u1/cpu.stat", tree);
  put ("4096\n", "%s/moat/u1/memory.peak", tree);
  put ("low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n", "%s/moat/u1/memory.events",
       tree);
  put ("max 3\n", "%s/moat/u1/pids.events", tree);
  assert_int_equal (cgroup_usage (cg, &use), 0);
  assert_int_equal (use.cpu_ns, 7000);
  assert_int_equal (use.cpu_user_ns, 5000);
  assert_int_equal (use.cpu_system_ns, 2000);
  assert_int_equal (use.peak_memory, 4096);
  assert_int_equal (use.oom_kills, 1);
  assert_int_equal (use.pids_limit_hits, 3);
  assert_int_equal (cgroup_destroy (cg, &err), 0);
  cgroup_free (cg);
}

static void
test_hybrid_usage_record (void **state)
{
  cleanup_error struct moat_error *err = NULL;
  struct cgroup *cg = NULL;
  struct cgroup_usage use;
  uint64_t tick_ns = 1000000000ull / (uint64_t)sysconf (_SC_CLK_TCK);

  (void)state;
  assert_int_equal (cgroup_create ("/moat/u1", NULL, &cg, &err), 0);
  put ("99\n", "%s/cpuacct/moat/u1/cpuacct.usage", tree);
  put ("user 3\nsystem 1\n", "%s/cpuacct/moat/u1/cpuacct.stat", tree);
  put ("8192\n", "%s/memory/moat/u1/memory.max_usage_in_bytes", tree);
  put ("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
       "%s/memory/moat/u1/memory.oom_control", tree);
  put ("max 5\n", "%s/pids/moat/u1/pids.events", tree);
  assert_int_equal (cgroup_usage (cg, &use), 0);
  assert_int_equal (use.cpu_ns, 99);
  assert_int_equal (use.cpu_user_ns, 3 * tick_ns);
  assert_int_equal (use.cpu_system_ns, tick_ns);
  assert_int_equal (use.peak_memory, 8192);
  assert_int_equal (use.oom_kills, 2);
  assert_int_equal (use.pids_limit_hits, 5);
  /* A kernel before 4.13 counts no oom_kill: a failcnt at the limit. */
  put ("oom_kill_disable 0\nunder_oom 0\n",
       "%s/memory/moat/u1/memory.oom_control", tree);
  put ("1\n", "%s/memory/moat/u1/memory.failcnt", tree);
  put ("8192\n", "%s/memory/moat/u1/memory.limit_in_bytes", tree);
  assert_int_equal (cgroup_usage (cg, &use), 0);
  assert_int_equal (use.oom_kills, 1);
  assert_int_equal (cgroup_destroy (cg, &err), 0);
  cgroup_free (cg);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_v2_mode, setup_v2_tree,
                                     teardown_tree),
    cmocka_unit_test_setup_teardown (test_v2_create_update_destroy,
                                     setup_v2_tree, teardown_tree),
    cmocka_unit_test_setup_teardown (test_v2_unified_keys_refused,
                                     setup_v2_tree, teardown_tree),
    cmocka_unit_test_setup_teardown (test_v2_failed_create_leaves_nothing,
                                     setup_v2_tree, teardown_tree),
    cmocka_unit_test_setup_teardown (test_v2_blkio_weight_by_host,
                                     setup_v2_tree, teardown_tree),
    cmocka_unit_test_setup_teardown (test_hybrid_blkio_weight_by_host,
                                     setup_hybrid_tree, teardown_tree),
    cmocka_unit_test_setup_teardown (test_v2_busy_and_escapes, setup_v2_tree,
                                     teardown_tree),
    cmocka_unit_test_setup_teardown (test_v2_destroy_keeps_shared_parents,
                                     setup_v2_tree, teardown_tree),
    cmocka_unit_test_setup_teardown (test_v2_hugetlb, setup_v2_tree,
                                     teardown_tree),
    cmocka_unit_test_setup_teardown (test_hybrid_hugetlb, setup_hybrid_tree,
                                     teardown_tree),
    cmocka_unit_test_setup_teardown (test_hybrid_hugetlb_on_unified,
                                     setup_hybrid_tree_unified_hugetlb,
                                     teardown_tree),
    cmocka_unit_test_setup_teardown (test_hybrid_create_update_destroy,
                                     setup_hybrid_tree, teardown_tree),
    cmocka_unit_test_setup_teardown (test_hybrid_refuses_unified_and_cleans_up,
                                     setup_hybrid_tree, teardown_tree),
    cmocka_unit_test_setup_teardown (test_v1_comounted, setup_hybrid_tree,
                                     teardown_tree),
    cmocka_unit_test_setup_teardown (test_v2_usage_record, setup_v2_tree,
                                     teardown_tree),
    cmocka_unit_test_setup_teardown (test_hybrid_usage_record,
                                     setup_hybrid_tree, teardown_tree),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
