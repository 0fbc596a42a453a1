/* See cgroup_harness.h. */
#include "cgroup_harness.h"

#include <sys/statfs.h>
#include <linux/magic.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include <cmocka.h>

#include "../../runtime/cgroup/cgroup.h"
#include "../../runtime/cgroup/cgroup_internal.h"
#include "../../lib/util.h"
#include "cgroup_emulation.h"

char tree[128];

/* ---- small file helpers ---- */

void __attribute__ ((format (printf, 2, 3)))
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
char *__attribute__ ((format (printf, 1, 2))) get (const char *fmt, ...)
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

bool __attribute__ ((format (printf, 1, 2))) exists (const char *fmt, ...)
{
  char path[PATH_MAX];
  struct stat st;
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (path, sizeof (path), fmt, ap);
  va_end (ap);
  return lstat (path, &st) == 0;
}

bool __attribute__ ((format (printf, 1, 2)))
empty_of_cgroups (const char *fmt, ...)
{
  char path[PATH_MAX];
  cleanup_close int fd = -1;
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (path, sizeof (path), fmt, ap);
  va_end (ap);
  fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return fd >= 0 && !cg_has_child_dirs (fd);
}

void __attribute__ ((format (printf, 1, 2))) make_dir (const char *fmt, ...)
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

void
rm_rf (const char *dir)
{
  nftw (dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void
assert_error_contains (struct moat_error *err, const char *needle)
{
  assert_non_null (err);
  if (strstr (err->msg, needle) == NULL)
    fail_msg ("error `%s` does not contain `%s`", err->msg, needle);
}

void
assert_valid_json (const char *text)
{
  char errbuf[256];
  yajl_val v = yajl_tree_parse (text, errbuf, sizeof (errbuf));
  if (v == NULL)
    fail_msg ("invalid JSON (%s): %s", errbuf, text);
  assert_true (YAJL_IS_OBJECT (v));
  yajl_tree_free (v);
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

int
setup_v2_tree (void **state)
{
  snprintf (tree, sizeof (tree), "/tmp/moat-cgv2-XXXXXX");
  assert_non_null (mkdtemp (tree));
  for (size_t i = 0; v2_files[i]; i++)
    put ("", "%s/%s", tree, v2_files[i]);
  put ("cpuset cpu io memory hugetlb pids\n", "%s/cgroup.controllers", tree);
  put ("", "%s/cgroup.subtree_control", tree);
  cgroup_emulate (tree);
  return 0;
}

const struct cg_fake_hier v1_tree[] = {
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
const size_t n_v1_tree = sizeof (v1_tree) / sizeof (v1_tree[0]);

/* A hybrid tree; without_hugetlb leaves out the v1 hugetlb hierarchy, as
 * on a fresh Debian host whose hugetlb controller sits on the cgroup2
 * mount. */
static int
make_hybrid_tree (bool without_hugetlb)
{
  snprintf (tree, sizeof (tree), "/tmp/moat-cgv1-XXXXXX");
  assert_non_null (mkdtemp (tree));
  for (size_t i = 0; i < n_v1_tree; i++)
    {
      if (without_hugetlb && strcmp (v1_tree[i].dir, "hugetlb") == 0)
        continue;
      make_dir ("%s/%s", tree, v1_tree[i].dir);
      for (size_t j = 0; v1_tree[i].files[j]; j++)
        put ("", "%s/%s/%s", tree, v1_tree[i].dir, v1_tree[i].files[j]);
    }
  put ("0-1\n", "%s/cpuset/cpuset.cpus", tree);
  put ("0\n", "%s/cpuset/cpuset.mems", tree);
  put ("hugetlb\n", "%s/unified/cgroup.controllers", tree);
  cgroup_emulate (tree);
  return 0;
}

int
setup_hybrid_tree (void **state)
{
  return make_hybrid_tree (false);
}

int
setup_hybrid_tree_unified_hugetlb (void **state)
{
  return make_hybrid_tree (true);
}

int
teardown_tree (void **state)
{
  cgroup_emulate (NULL);
  rm_rf (tree);
  return 0;
}

bool
host_cgroup_hierarchy (const char *name)
{
  char path[PATH_MAX];
  struct statfs sfs;
  snprintf (path, sizeof (path), "/sys/fs/cgroup/%s", name);
  return statfs (path, &sfs) == 0
         && (sfs.f_type == CGROUP_SUPER_MAGIC
             || sfs.f_type == CGROUP2_SUPER_MAGIC);
}
