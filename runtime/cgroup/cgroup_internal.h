/* Shared between cgroup.c (layout, paths, directories, processes) and the
 * two back-ends that know the controller files: cgroup_v1.c and
 * cgroup_v2.c. Not part of the public interface.
 *
 * The files call downwards only, never back up (no ring):
 *   cgroup.c: the layout probe, the object, processes, stats
 *   cgroup_v1.c, cgroup_v2.c: the controller files (struct cgroup_backend)
 *   cgroup_systemd.c: transient units; cgroup_usage.c: sandbox records
 *   cgroup_dirs.c: making and removing the directories
 *   cgroup_path.c: cgroupsPath mapping
 *   cgroup_sub.c: exec --cgroup's sub-cgroups, an exec's own join and
 *     tracking cgroups
 *   cgroup_fs.c: file access, cgroup_hier_for, and the kernel's cgroupfs
 *     (struct cgroup_fs), which attaches the device filter
 *     (cgroup_devices.c, through bpf.c). */
#ifndef MOAT_CGROUP_INTERNAL_H
#define MOAT_CGROUP_INTERNAL_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"

/* Controllers a hierarchy carries (v1: by mount; v2: all of them). */
enum
{
  CG_CPU = 1u << 0,
  CG_CPUACCT = 1u << 1,
  CG_CPUSET = 1u << 2,
  CG_MEMORY = 1u << 3,
  CG_PIDS = 1u << 4,
  CG_DEVICES = 1u << 5,
  CG_FREEZER = 1u << 6,
  CG_BLKIO = 1u << 7,
  CG_NAMED = 1u << 8,   /* name=systemd: no controller, only membership */
  CG_UNIFIED = 1u << 9, /* a cgroup2 hierarchy */
  CG_HUGETLB = 1u << 10,
};

struct cgroup_fs;

struct cgroup_hier
{
  char *name;                 /* "memory", "cpu,cpuacct", "name=systemd" */
  unsigned ctrls;             /* CG_* */
  int mount_fd;               /* the hierarchy's mount point */
  const struct cgroup_fs *fs; /* what it is mounted from */
  int fd;                     /* the container's cgroup dir, -1 when missing */
  size_t n_made; /* trailing path components cgroup_create made here */
};

/* The filesystem the hierarchies are on: the kernel's cgroupfs
 * (cgroup_fs_kernel) everywhere but in the unit tests, whose trees of
 * plain directories stand in for it (tests/unit/cgroup_emulation.c). */
struct cgroup_fs
{
  /* The magic number dir counts as (CGROUP_SUPER_MAGIC for a v1
   * hierarchy, CGROUP2_SUPER_MAGIC), 0 if it cannot be read. */
  long (*magic) (const char *dir);
  /* Write value to the file below dirfd, in one write(2). 0 or -errno. */
  int (*write) (int dirfd, const char *file, const char *value);
  /* values[0..n) to the file in turn, a write(2) each, through one open
   * (NULL: write for each). 0 or -errno. */
  int (*write_each) (int dirfd, const char *file, const char *const *values,
                     size_t n);
  /* A cgroup directory dir_fd was just made below parent_fd in the
   * hierarchy mounted at mount_fd: the files the kernel gives it, if the
   * kernel does not (NULL). */
  void (*populate) (int mount_fd, int parent_fd, int dir_fd);
  /* Remove the cgroup directory name below parent_fd. 0 or -errno. */
  int (*rmdir) (int parent_fd, const char *name);
  /* linux.resources.devices as a program on a cgroup2 directory. */
  int (*attach_devices) (int cgroup_fd, const struct spec_device_rule *rules,
                         size_t n_rules, struct moat_error **err);
  /* Does systemd run the host (sd_booted)? */
  bool (*systemd_booted) (void);
};

extern const struct cgroup_fs cgroup_fs_kernel;

/* Where the hierarchies are and what they are mounted from: root NULL is
 * /sys/fs/cgroup, fs NULL the kernel's cgroupfs. The layout is probed
 * again on next use. For tests. */
void cgroup_set_fs (const char *root, const struct cgroup_fs *fs);

struct cgroup;

/* Numbers for cgroup_stats_json; absent files leave zeros. */
struct cgroup_stat_kv
{
  char key[64];
  uint64_t value;
};

struct cgroup_stats
{
  uint64_t cpu_total_ns, cpu_kernel_ns, cpu_user_ns;
  uint64_t *percpu_ns;
  size_t n_percpu;
  uint64_t periods, throttled_periods, throttled_ns;
  uint64_t mem_usage, mem_limit, mem_max_usage, mem_failcnt, mem_cache;
  uint64_t swap_usage, swap_limit, swap_max_usage, swap_failcnt;
  struct cgroup_stat_kv *raw; /* memory.stat */
  size_t n_raw;
  uint64_t pids_current, pids_limit;
};

/* What a back-end knows: the controller files. */
struct cgroup_backend
{
  /* Each directory on the way down to the leaf in hierarchy h, just after
   * it is opened (parent_fd is -1 for the mount itself), before the next
   * one is made: the kernel wants a parent set up before its children.
   * made: cgroup_create has just made dir_fd (nothing set in it yet). */
  int (*prepare_dir) (struct cgroup_hier *h, int parent_fd, int dir_fd,
                      bool is_leaf, bool made, struct moat_error **err);
  int (*apply) (struct cgroup *cg, const struct spec_resources *res,
                struct moat_error **err);
  int (*freeze) (struct cgroup *cg, bool frozen, struct moat_error **err);
  int (*is_frozen) (struct cgroup *cg, bool *ret, struct moat_error **err);
  void (*stats) (struct cgroup *cg, struct cgroup_stats *st);
};

struct cgroup
{
  enum cgroup_mode mode;
  char *rel;
  struct cgroup_hier *hiers;
  size_t n_hiers;
  const struct cgroup_backend *backend;
  bool keep_parents; /* a tracking cgroup: its parent is a live container's */
  struct override_list ignored; /* cg_ignore's, until cgroup_take_ignored */
};

/* A value of res the back-end leaves alone because this host has no file
 * for it (see cgroup_take_ignored): path is config.json's, asked the value,
 * why the host's reason. Recorded once per path. */
void cg_ignore (struct cgroup *cg, const char *path, const char *asked,
                const char *why);

/* cgroup_devices.c: the device rules as a BPF_PROG_TYPE_CGROUP_DEVICE
 * program (v1 semantics: deny all, then the rules in order), and its
 * attachment to a cgroup2 directory, replacing what was attached there. */
struct bpf_insn;
int cg_devices_build (const struct spec_device_rule *rules, size_t n_rules,
                      struct bpf_insn **ret, size_t *ret_n,
                      struct moat_error **err);
int cg_devices_attach (int cgroup_fd, const struct spec_device_rule *rules,
                       size_t n_rules, struct moat_error **err);

/* Stats pieces both back-ends share. */
void cg_stats_raw (int dirfd, const char *file, struct cgroup_stats *st);
uint64_t cg_stats_raw_get (const struct cgroup_stats *st, const char *key);
void cg_stats_pids (struct cgroup *cg, struct cgroup_stats *st);

extern const struct cgroup_backend cgroup_backend_v1;
extern const struct cgroup_backend cgroup_backend_v2;

/* cgroup_path.c: fold "//" and a trailing "/"; refuse "." and "..",
 * control characters, and "/" itself. */
int cg_normalize_rel (const char *path, char **ret, struct moat_error **err);
/* Is cgroupsPath read in the systemd form "slice:prefix:name"? (See
 * cgroup_resolve_path.) */
bool cg_is_systemd_form (const char *cgroups_path, bool systemd);
/* Its slice and unit name ("kubepods.slice", "cri-containerd-ID.scope"). */
int cg_systemd_unit (const char *spec, char **ret_slice, char **ret_unit,
                     struct moat_error **err);

/* cgroup_systemd.c: on delete, the transient unit cg->rel was registered
 * as is stopped (when systemd runs and the unit's cgroup is cg->rel). */
void cg_systemd_release (struct cgroup *cg);
/* After an update: the unit's properties follow the cgroup's files again,
 * so that systemd does not put the old limits back. */
int cg_systemd_sync (struct cgroup *cg, struct moat_error **err);
/* The wait for a systemd job's JobRemoved, on a direct connection on FD
 * (taken over, as systemd's private socket is one): its result, or
 * -ETIMEDOUT after TIMEOUT_USEC. For tests with a fake systemd. */
int cg_systemd_wait_job_on_fd (int fd, const char *job, uint64_t timeout_usec,
                               char **ret_result, struct moat_error **err);

/* cgroup_dirs.c. rel is always normalized ("/a/b"). */
size_t cg_count_components (const char *rel);
/* The first n components of rel without the leading "/" ("" for n = 0). */
char *cg_rel_prefix (const char *rel, size_t n);
/* rel's parent directory in h; *ret_name points into rel. For "/a" it is
 * the mount itself, lent: *ret_owned is what the caller closes (-1 then). */
int cg_open_parent (struct cgroup_hier *h, const char *rel,
                    const char **ret_name, int *ret_owned);
/* mkdir -p of cg->rel in h; sets h->fd and h->n_made. On failure nothing
 * it made is left. */
int cg_make_dirs (struct cgroup *cg, struct cgroup_hier *h,
                  struct moat_error **err);
/* Remove the n_made trailing components cgroup_create made in h. */
void cg_remove_made (struct cgroup_hier *h, const char *rel);
/* rmdir name below parent_fd after any cgroups nested in it. */
int cg_remove_tree (struct cgroup_hier *h, int parent_fd, const char *name,
                    int depth);
/* A directory stream over dir_fd's directory, on a descriptor of its own
 * (dir_fd stays open); NULL on failure. */
DIR *cg_opendir (int dir_fd);
void cg_closedirp (DIR **d);
#define cleanup_dir __attribute__ ((cleanup (cg_closedirp)))
/* A directory other than "." and ".." (a child cgroup). */
bool cg_is_child_dir (const struct dirent *de);
bool cg_has_child_dirs (int dir_fd);
/* The leaf in every hierarchy; *ret_gone when none is left. */
int cg_remove_leaves (struct cgroup *cg, bool *ret_gone);
/* Anything between "/moat" and the leaf, once empty; "/moat" stays. */
void cg_remove_levels_below_moat (struct cgroup *cg);

char *cg_strndup (const char *s, size_t n);

/* Open (flags | O_CLOEXEC) a path below dirfd that can never resolve
 * outside it: no "..", no symlinks, no magic links. */
int cg_open_beneath (int dirfd, const char *path, int flags);

/* The first hierarchy carrying any of ctrls (with its dir open), or NULL. */
struct cgroup_hier *cgroup_hier_for (struct cgroup *cg, unsigned ctrls);

/* Write value to file below dirfd in one write(2), the file opened with
 * O_WRONLY | extra_flags. 0 or -errno. */
int cg_write_file (int dirfd, const char *file, const char *value,
                   int extra_flags);

/* Controller files of one cgroup dir. Errors name the file:
 * "writing memory.limit_in_bytes: Device or resource busy". */
int cg_write (struct cgroup_hier *h, const char *file, const char *value,
              struct moat_error **err);
/* Each of values[0..n) to one file, in order (device rules). */
int cg_write_each (struct cgroup_hier *h, const char *file,
                   const char *const *values, size_t n,
                   struct moat_error **err);
/* h->fs->write: a file of a cgroup dir that h->fs holds. */
int cg_write_fd (int dirfd, const struct cgroup_fs *fs, const char *file,
                 const char *value);
int cg_writef (struct cgroup_hier *h, const char *file, struct moat_error **err,
               const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));
/* Returns 0 or -errno (no error object: callers decide if absence matters). */
int cg_read (int dirfd, const char *file, char **ret);
/* One number; "max" reads as UINT64_MAX. */
int cg_read_u64 (int dirfd, const char *file, uint64_t *ret);
/* "key value" lines (memory.stat, cpu.stat, cgroup.events). */
int cg_read_keyed (int dirfd, const char *file, const char *key, uint64_t *ret);
bool cg_has_file (struct cgroup_hier *h, const char *file);
/* linux.resources.blockIO.weight, as runc and crun look for it: bfq_file
 * (the weight as is) where the host has it, else file (converted), else
 * neither: the host has no weight-based block scheduler (BFQ) and the
 * weight is left alone and told (cg_ignore), where runc and crun fail on
 * the write. h NULL: no hierarchy carries the controller (runc skips it). */
int cg_apply_blkio_weight (struct cgroup *cg, struct cgroup_hier *h,
                           const char *bfq_file, const char *file,
                           uint16_t weight, unsigned converted,
                           struct moat_error **err);
/* linux.resources.hugepageLimits into hugetlb.SIZE.SUFFIX ("limit_in_bytes"
 * on v1, "max" on v2); every other page size of the host gets the memory
 * limit, when res has one (G7: huge pages are memory that memory.limit
 * does not count). A size the host does not have is an error. */
int cg_apply_hugetlb (struct cgroup_hier *h, const struct spec_resources *res,
                      const char *suffix, struct moat_error **err);
/* Is word one of the space-separated words of list? */
bool cg_has_word (const char *list, const char *word);
/* Enable controller name for the children of dir_fd (a cgroup2 directory)
 * where the directory has it and it is not on yet; a refusal is left to
 * show as a missing file when the limit is written. */
void cg_enable_v2_controller (int dir_fd, const struct cgroup_fs *fs,
                              const char *name);
/* cpuset lists ("0-3,5") only: no stray characters reach the kernel. */
int cg_check_cpuset (const char *what, const char *value,
                     struct moat_error **err);

/* Write two files whose kernel checks depend on each other's current value
 * (memory limit and memsw, cfs period and quota): in the given order first,
 * and in the other order when the kernel says EINVAL. */
int cg_write_pair (struct cgroup_hier *h, const char *file1, const char *value1,
                   const char *file2, const char *value2,
                   struct moat_error **err);

/* Sleep between polls of a state that the kernel changes asynchronously;
 * false once the deadline (~5 s from the first call with *tries = 0) is
 * reached. */
bool cg_backoff (unsigned *tries);

/* No process in it, in any hierarchy (cgroup_sub.c). */
bool cg_is_empty (struct cgroup *cg);
/* cgroup_create in the hierarchies carrying one of ctrls (CG_*) only. */
int cg_create_in (const char *rel, const struct spec_resources *res,
                  unsigned ctrls, struct cgroup **ret, struct moat_error **err);

#endif
