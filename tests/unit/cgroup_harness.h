/* Shared by the cgroup unit tests (test_cgroup*.c): small file helpers and
 * the fake trees, plain directories declaring a v2 or a hybrid layout (see
 * cgroup_emulation.h), made in a fresh directory `tree` by the setup
 * functions, which point the cgroup code at them, and removed by
 * teardown_tree. */
#ifndef MOAT_TEST_CGROUP_HARNESS_H
#define MOAT_TEST_CGROUP_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/error.h"

#define MiB (1024 * 1024)

/* Write text to the file (created or truncated). */
void put (const char *text, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* The file's text without its trailing newline ("(missing)" if missing). */
char *get (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
#define assert_file(expected, ...)                                             \
  do                                                                           \
    {                                                                          \
      cleanup_free char *_got = get (__VA_ARGS__);                             \
      assert_string_equal (_got, expected);                                    \
    }                                                                          \
  while (0)
bool exists (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
/* A directory with no directory (no cgroup) below it. */
bool empty_of_cgroups (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2)));
void make_dir (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
void rm_rf (const char *dir);
void assert_error_contains (struct moat_error *err, const char *needle);
/* text is a JSON object. */
void assert_valid_json (const char *text);

/* ---- fake trees ---- */

extern char tree[128];

/* The hybrid tree's hierarchies and the interface files each one has. */
struct cg_fake_hier
{
  const char *dir;
  const char *files[12];
};
extern const struct cg_fake_hier v1_tree[];
extern const size_t n_v1_tree;

int setup_v2_tree (void **state);
int setup_hybrid_tree (void **state);
int setup_hybrid_tree_unified_hugetlb (void **state);
/* A cgroup hierarchy is mounted at /sys/fs/cgroup/NAME on this host, not a
 * plain directory of the tmpfs there (Podman's cgroupfs manager makes one
 * for every controller it expects, hugetlb on a host that mounts none). */
bool host_cgroup_hierarchy (const char *name);
int teardown_tree (void **state);

#endif
