/* cgroups: the layout probe, the cgroup object, its processes, and the
 * stats. Paths are mapped in cgroup_path.c, directories made and removed
 * in cgroup_dirs.c, controller files written by the back-ends
 * (cgroup_v1.c, cgroup_v2.c). Hybrid hosts use v1 for every limit and keep
 * a directory in the cgroup2 mount for BPF programs and
 * CLONE_INTO_CGROUP. */
#include "cgroup.h"
#include "cgroup_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/util.h"

#define DEFAULT_ROOT "/sys/fs/cgroup"
/* Containers may nest cgroups of their own below the leaf; this bounds the
 * walk over them. */
#define MAX_NESTING 32

struct layout_hier
{
  char *name;
  char *dir;
  unsigned ctrls;
  /* The mount point, opened by the first cgroup object and lent to the
   * others: a session exec makes or opens three, 11 hierarchies each. */
  int fd;
};

static struct
{
  char *root;                 /* NULL: DEFAULT_ROOT */
  const struct cgroup_fs *fs; /* NULL: cgroup_fs_kernel */
  bool probed;
  enum cgroup_mode mode;
  struct layout_hier *hiers;
  size_t n_hiers;
} layout;

/* The v1 hierarchies moat puts a container in (runc's set, with
 * name=systemd for membership only). */
static const struct
{
  const char *dir, *name;
  unsigned ctrl;
} v1_hierarchies[] = {
  { "cpu", "cpu", CG_CPU },
  { "cpuacct", "cpuacct", CG_CPUACCT },
  { "cpuset", "cpuset", CG_CPUSET },
  { "memory", "memory", CG_MEMORY },
  { "pids", "pids", CG_PIDS },
  { "devices", "devices", CG_DEVICES },
  { "freezer", "freezer", CG_FREEZER },
  { "blkio", "blkio", CG_BLKIO },
  { "hugetlb", "hugetlb", CG_HUGETLB },
  { "systemd", "name=systemd", CG_NAMED },
};

static void
layout_reset (void)
{
  for (size_t i = 0; i < layout.n_hiers; i++)
    {
      free (layout.hiers[i].name);
      free (layout.hiers[i].dir);
      if (layout.hiers[i].fd >= 0)
        close (layout.hiers[i].fd);
    }
  free (layout.hiers);
  layout.hiers = NULL;
  layout.n_hiers = 0;
  layout.probed = false;
}

void
cgroup_set_fs (const char *root, const struct cgroup_fs *fs)
{
  layout_reset ();
  free (layout.root);
  layout.root = root ? xstrdup (root) : NULL;
  layout.fs = fs;
}

static const char *
root_dir (void)
{
  return layout.root ? layout.root : DEFAULT_ROOT;
}

static const struct cgroup_fs *
layout_fs (void)
{
  return layout.fs ? layout.fs : &cgroup_fs_kernel;
}

static void
layout_add (const char *name, const char *dir, unsigned ctrls, int fd)
{
  struct layout_hier *h;
  layout.hiers
      = xrealloc (layout.hiers, (layout.n_hiers + 1) * sizeof (*layout.hiers));
  h = &layout.hiers[layout.n_hiers++];
  h->name = xstrdup (name);
  h->dir = xstrdup (dir);
  h->ctrls = ctrls;
  h->fd = fd;
}

/* A hierarchy is usable if it is the filesystem it should be: its
 * directory, opened once (the fd is the layout's), or -1. */
static int
hierarchy_open (const char *dir, long magic, struct stat *ret_st)
{
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  if (fstat (fd, ret_st) < 0 || layout_fs ()->magic (dir) != magic)
    {
      close (fd);
      return -1;
    }
  return fd;
}

static void
probe_v1 (const char *root)
{
  struct stat seen[sizeof (v1_hierarchies) / sizeof (v1_hierarchies[0])];
  size_t first_of[sizeof (v1_hierarchies) / sizeof (v1_hierarchies[0])];
  size_t n_seen = 0;

  for (size_t i = 0; i < sizeof (v1_hierarchies) / sizeof (v1_hierarchies[0]);
       i++)
    {
      cleanup_free char *dir = xasprintf ("%s/%s", root, v1_hierarchies[i].dir);
      struct stat st;
      bool dup = false;
      int fd = hierarchy_open (dir, CGROUP_SUPER_MAGIC, &st);

      if (fd < 0)
        continue;
      /* Co-mounted controllers (cpu,cpuacct) are one hierarchy behind two
       * names: one directory, joined once. */
      for (size_t j = 0; j < n_seen && !dup; j++)
        if (seen[j].st_dev == st.st_dev && seen[j].st_ino == st.st_ino)
          {
            struct layout_hier *h = &layout.hiers[first_of[j]];
            char *name = xasprintf ("%s,%s", h->name, v1_hierarchies[i].name);
            free (h->name);
            h->name = name;
            h->ctrls |= v1_hierarchies[i].ctrl;
            dup = true;
          }
      if (dup)
        {
          close (fd);
          continue;
        }
      seen[n_seen] = st;
      first_of[n_seen++] = layout.n_hiers;
      layout_add (v1_hierarchies[i].name, dir, v1_hierarchies[i].ctrl, fd);
    }
}

/* A hybrid host may bind a controller to its cgroup2 mount rather than to
 * a v1 hierarchy (a fresh Debian host with systemd's hybrid layout has
 * hugetlb there): moat uses it from whichever hierarchy holds it. Only
 * hugetlb is taken from cgroup2 so far; the others are all on v1 in every
 * hybrid layout seen. */
static unsigned
unified_only_ctrls (int unified_fd)
{
  cleanup_free char *available = NULL;

  for (size_t i = 0; i < layout.n_hiers; i++)
    if (layout.hiers[i].ctrls & CG_HUGETLB)
      return 0;
  if (cg_read (unified_fd, "cgroup.controllers", &available) < 0)
    return 0;
  return cg_has_word (available, "hugetlb") ? CG_HUGETLB : 0;
}

static int
probe_layout (struct moat_error **err)
{
  const char *root = root_dir ();
  cleanup_free char *unified = xasprintf ("%s/unified", root);
  struct stat st;
  long magic;
  int fd;

  if (layout.probed)
    return 0;
  errno = 0;
  magic = layout_fs ()->magic (root);
  if (magic == 0)
    return moat_fail (err, errno ? errno : ENOENT, "probing cgroups at %s",
                      root);

  if (magic == CGROUP2_SUPER_MAGIC)
    {
      layout_add ("unified", root, ~0u, -1);
      layout.mode = CGROUP_MODE_V2;
      layout.probed = true;
      return 0;
    }

  probe_v1 (root);
  if (layout.n_hiers == 0)
    return moat_fail (err, ENOENT, "probing cgroups at %s: no hierarchy found",
                      root);
  layout.mode = CGROUP_MODE_V1;
  fd = hierarchy_open (unified, CGROUP2_SUPER_MAGIC, &st);
  if (fd >= 0)
    {
      layout_add ("unified", unified, CG_UNIFIED | unified_only_ctrls (fd), fd);
      layout.mode = CGROUP_MODE_HYBRID;
    }
  layout.probed = true;
  return 0;
}

int
cgroup_mode (enum cgroup_mode *ret, struct moat_error **err)
{
  int r = probe_layout (err);
  if (r < 0)
    return r;
  *ret = layout.mode;
  return 0;
}

static int
check_rel (const char *rel, struct moat_error **err)
{
  cleanup_free char *normal = NULL;
  int r;
  if (rel == NULL || rel[0] != '/')
    return moat_fail (err, EINVAL, "cgroup path must be absolute");
  r = cg_normalize_rel (rel, &normal, err);
  if (r < 0)
    return r;
  if (strcmp (normal, rel) != 0)
    return moat_fail (err, EINVAL, "cgroup path `%s` is not normalized", rel);
  return 0;
}

static int
cgroup_new (const char *rel, struct cgroup **ret, struct moat_error **err)
{
  struct cgroup *cg;
  int r = check_rel (rel, err);
  if (r < 0)
    return r;
  r = probe_layout (err);
  if (r < 0)
    return r;
  cg = xcalloc (1, sizeof (*cg));
  cg->mode = layout.mode;
  cg->rel = xstrdup (rel);
  cg->backend
      = layout.mode == CGROUP_MODE_V2 ? &cgroup_backend_v2 : &cgroup_backend_v1;
  cg->hiers = xcalloc (layout.n_hiers, sizeof (*cg->hiers));
  for (size_t i = 0; i < layout.n_hiers; i++)
    {
      struct cgroup_hier *h = &cg->hiers[i];
      h->fd = -1;
      h->name = xstrdup (layout.hiers[i].name);
      h->ctrls = layout.hiers[i].ctrls;
      h->fs = layout_fs ();
      if (layout.hiers[i].fd < 0)
        layout.hiers[i].fd
            = open (layout.hiers[i].dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      h->mount_fd = layout.hiers[i].fd;
      cg->n_hiers++;
      if (h->mount_fd < 0)
        {
          r = moat_fail (err, errno, "opening %s", layout.hiers[i].dir);
          cgroup_free (cg);
          return r;
        }
    }
  *ret = cg;
  return 0;
}

void
cgroup_free (struct cgroup *cg)
{
  if (cg == NULL)
    return;
  for (size_t i = 0; i < cg->n_hiers; i++)
    {
      cleanup_closep (&cg->hiers[i].fd);
      free (cg->hiers[i].name);
    }
  free (cg->hiers);
  free (cg->rel);
  override_list_clear (&cg->ignored);
  free (cg);
}

void
cg_ignore (struct cgroup *cg, const char *path, const char *asked,
           const char *why)
{
  for (size_t i = 0; i < cg->ignored.n; i++)
    if (strcmp (cg->ignored.v[i].path, path) == 0)
      return;
  override_list_add (&cg->ignored, OVERRIDE_IGNORED, path, asked, why);
}

void
cgroup_take_ignored (struct cgroup *cg, struct override_list *to)
{
  if (to)
    override_list_move (to, &cg->ignored);
  override_list_clear (&cg->ignored);
}

/* A cgroup_create in progress: on any early return, what it made goes. */
static void
cgroup_discardp (struct cgroup **pcg)
{
  struct cgroup *cg = *pcg;
  if (cg == NULL)
    return;
  for (size_t i = 0; i < cg->n_hiers; i++)
    {
      cleanup_closep (&cg->hiers[i].fd);
      cg->hiers[i].fd = -1;
      cg_remove_made (&cg->hiers[i], cg->rel);
    }
  cgroup_free (cg);
}

static bool
procs_nonempty (int dir_fd)
{
  cleanup_free char *text = NULL;
  if (cg_read (dir_fd, "cgroup.procs", &text) < 0)
    return false;
  return strpbrk (text, "0123456789") != NULL;
}

/* A cgroup someone froze (or whose parent is frozen) would freeze the
 * container's init the moment it joins, and create would wait for it
 * forever: refused instead, as runc does. */
static const char *
frozen_by (const struct cgroup_hier *h)
{
  cleanup_free char *state = NULL;
  uint64_t freeze = 0, frozen = 0;

  if (h->ctrls & CG_FREEZER)
    {
      /* FROZEN, or FREEZING on its way there. */
      if (cg_read (h->fd, "freezer.state", &state) == 0
          && strncmp (state, "FR", strlen ("FR")) == 0)
        return "freezer.state";
      return NULL;
    }
  if (!(h->ctrls & CG_UNIFIED))
    return NULL;
  /* Its own cgroup.freeze, or a frozen parent's (cgroup.events). */
  cg_read_u64 (h->fd, "cgroup.freeze", &freeze);
  cg_read_keyed (h->fd, "cgroup.events", "frozen", &frozen);
  return freeze || frozen ? "cgroup.freeze" : NULL;
}

int
cg_create_in (const char *rel, const struct spec_resources *res, unsigned ctrls,
              struct cgroup **ret, struct moat_error **err)
{
  __attribute__ ((cleanup (cgroup_discardp))) struct cgroup *cg = NULL;
  int r = cgroup_new (rel, &cg, err);
  if (r < 0)
    return moat_error_wrap (err, "creating cgroup %s", rel ? rel : "(null)");

  for (size_t i = 0; i < cg->n_hiers; i++)
    {
      struct cgroup_hier *h = &cg->hiers[i];
      if (!(h->ctrls & ctrls))
        continue;
      r = cg_make_dirs (cg, h, err);
      if (r < 0)
        return moat_error_wrap (err, "creating cgroup %s", rel);
      /* Destroy kills and removes everything below the leaf: it must hold
       * nothing of anyone else's (cgroupsPath "/system.slice" would). A
       * leaf mkdir just made is empty: no need to read it (2 opens and 3
       * reads per hierarchy, 11 hierarchies here). */
      if (h->n_made == 0
          && (procs_nonempty (h->fd) || cg_has_child_dirs (h->fd)))
        return moat_fail (err, EBUSY,
                          "creating cgroup %s: it already holds processes or "
                          "child cgroups",
                          rel);
      const char *frozen = frozen_by (h);
      if (frozen)
        return moat_fail (err, EBUSY,
                          "creating cgroup %s: it is frozen (%s in %s): thaw "
                          "it first",
                          rel, frozen, h->name);
    }
  if (res)
    r = cg->backend->apply (cg, res, err);
  if (r < 0)
    return moat_error_wrap (err, "creating cgroup %s", rel);
  *ret = steal_pointer (&cg);
  return 0;
}

int
cgroup_create (const char *rel, const struct spec_resources *res,
               struct cgroup **ret, struct moat_error **err)
{
  return cg_create_in (rel, res, ~0u, ret, err);
}

int
cgroup_open (const char *rel, struct cgroup **ret, struct moat_error **err)
{
  struct cgroup *cg = NULL;
  bool any = false;
  int r = cgroup_new (rel, &cg, err);
  if (r < 0)
    return moat_error_wrap (err, "opening cgroup %s", rel ? rel : "(null)");
  for (size_t i = 0; i < cg->n_hiers; i++)
    {
      struct cgroup_hier *h = &cg->hiers[i];
      h->fd = cg_open_beneath (h->mount_fd, rel + 1, O_RDONLY | O_DIRECTORY);
      if (h->fd < 0 && errno != ENOENT)
        {
          r = moat_fail (err, errno, "opening cgroup %s in %s", rel, h->name);
          cgroup_free (cg);
          return r;
        }
      any |= h->fd >= 0;
    }
  if (!any)
    {
      cgroup_free (cg);
      return moat_fail (err, ENOENT, "opening cgroup %s", rel);
    }
  *ret = cg;
  return 0;
}

int
cgroup_add_pid (struct cgroup *cg, pid_t pid, struct moat_error **err)
{
  for (size_t i = 0; i < cg->n_hiers; i++)
    {
      struct cgroup_hier *h = &cg->hiers[i];
      int r = cg_writef (h, "cgroup.procs", err, "%d", (int)pid);
      if (r < 0)
        return moat_error_wrap (err, "adding pid %d to cgroup %s (%s)",
                                (int)pid, cg->rel, h->name);
    }
  return 0;
}

int
cgroup_open_self_files (struct cgroup *cg, int **ret_fds,
                        struct moat_error **err)
{
  int *fds = xcalloc (cg->n_hiers + 1, sizeof (int));

  for (size_t i = 0; i < cg->n_hiers; i++)
    {
      struct cgroup_hier *h = &cg->hiers[i];
      const char *file = h->ctrls & CG_UNIFIED ? "cgroup.procs" : "tasks";

      fds[i] = h->fd < 0 ? -1 : cg_open_beneath (h->fd, file, O_WRONLY);
      if (h->fd >= 0 && fds[i] < 0)
        {
          int e = errno;
          cgroup_close_self_files (fds, i);
          return moat_fail (err, e, "opening %s of cgroup %s (%s)", file,
                            cg->rel, h->name);
        }
    }
  *ret_fds = fds;
  return 0;
}

void
cgroup_close_self_files (int *fds, size_t n)
{
  for (size_t i = 0; fds && i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  free (fds);
}

size_t
cgroup_n_hiers (const struct cgroup *cg)
{
  return cg->n_hiers;
}

int
cgroup_add_self (struct cgroup *cg, bool skip_unified, const int *fds,
                 struct moat_error **err)
{
  for (size_t i = 0; i < cg->n_hiers; i++)
    {
      struct cgroup_hier *h = &cg->hiers[i];
      bool v2 = (h->ctrls & CG_UNIFIED) != 0;
      int r;

      if (v2 && skip_unified)
        continue;
      /* v1 `tasks` moves one thread: "0", the caller alone, is exempt from
       * the global threadgroup lock that a write to cgroup.procs takes and
       * whose RCU grace period it waits for. */
      if (fds && fds[i] >= 0)
        r = write (fds[i], "0", 1) == 1
                ? 0
                : moat_fail (err, errno, "writing %s",
                             v2 ? "cgroup.procs" : "tasks");
      else
        r = cg_write (h, v2 ? "cgroup.procs" : "tasks", "0", err);
      if (r < 0)
        return moat_error_wrap (err, "joining cgroup %s (%s)", cg->rel,
                                h->name);
    }
  return 0;
}

int
cgroup_unified_fd (struct cgroup *cg)
{
  struct cgroup_hier *h = cgroup_hier_for (cg, CG_UNIFIED);
  return h ? h->fd : -1;
}

int
cgroup_update (struct cgroup *cg, const struct spec_resources *res,
               struct moat_error **err)
{
  if (res == NULL)
    return 0;
  if (cg->backend->apply (cg, res, err) < 0 || cg_systemd_sync (cg, err) < 0)
    return moat_error_wrap (err, "updating cgroup %s", cg->rel);
  return 0;
}

int
cgroup_freeze (struct cgroup *cg, bool frozen, struct moat_error **err)
{
  if (cg->backend->freeze (cg, frozen, err) < 0)
    return moat_error_wrap (err, "%s cgroup %s",
                            frozen ? "freezing" : "thawing", cg->rel);
  return 0;
}

int
cgroup_is_frozen (struct cgroup *cg, bool *ret, struct moat_error **err)
{
  return cg->backend->is_frozen (cg, ret, err);
}

/* ---- processes ---- */

struct pid_set
{
  pid_t *v;
  size_t n;
};

static void
collect_procs (int dir_fd, int depth, struct pid_set *set)
{
  cleanup_free char *text = NULL;
  cleanup_dir DIR *d = NULL;
  struct dirent *de;

  if (cg_read (dir_fd, "cgroup.procs", &text) == 0)
    for (char *line = text, *end; line && *line; line = end)
      {
        int pid;
        end = strchr (line, '\n');
        if (end)
          *end++ = '\0';
        if (parse_int (line, &pid) == 0 && pid > 0)
          {
            set->v = xrealloc (set->v, (set->n + 1) * sizeof (pid_t));
            set->v[set->n++] = pid;
          }
      }
  if (depth >= MAX_NESTING)
    return;
  d = cg_opendir (dir_fd);
  while (d && (de = readdir (d)))
    {
      cleanup_close int sub = -1;
      if (!cg_is_child_dir (de))
        continue;
      sub = cg_open_beneath (dir_fd, de->d_name, O_RDONLY | O_DIRECTORY);
      if (sub >= 0)
        collect_procs (sub, depth + 1, set);
    }
}

static int
compare_pids (const void *a, const void *b)
{
  pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
  return (x > y) - (x < y);
}

int
cgroup_pids (struct cgroup *cg, pid_t **ret, size_t *ret_n,
             struct moat_error **err)
{
  struct pid_set set = { NULL, 0 };
  size_t n = 0;

  /* Every hierarchy: a process moved in one of them only still counts.
   * But a tracking cgroup's first hierarchy holds them all: a process
   * joins its hierarchies in this order (cgroup_add_self), its children
   * inherit them, and none can move (the container's cgroupfs is
   * read-only, it holds no capability). */
  for (size_t i = 0; i < cg->n_hiers; i++)
    if (cg->hiers[i].fd >= 0)
      {
        collect_procs (cg->hiers[i].fd, 0, &set);
        if (cg->keep_parents)
          break;
      }
  if (set.n)
    qsort (set.v, set.n, sizeof (pid_t), compare_pids);
  for (size_t i = 0; i < set.n; i++)
    if (n == 0 || set.v[n - 1] != set.v[i])
      set.v[n++] = set.v[i];
  *ret = set.v ? set.v : xmalloc (sizeof (pid_t));
  *ret_n = n;
  return 0;
}

static int
signal_pids (struct cgroup *cg, int sig, struct moat_error **err)
{
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  int r = cgroup_pids (cg, &pids, &n, err);
  if (r < 0)
    return r;
  for (size_t i = 0; i < n; i++)
    if (kill (pids[i], sig) < 0 && errno != ESRCH)
      return moat_fail (err, errno, "signalling pid %d", (int)pids[i]);
  return 0;
}

int
cgroup_kill_all (struct cgroup *cg, int sig, struct moat_error **err)
{
  struct cgroup_hier *unified = cgroup_hier_for (cg, CG_UNIFIED);
  cleanup_error struct moat_error *ignored = NULL;
  bool was_frozen = true;
  int r;

  /* The kernel kills the whole subtree at once: no fork can race it. */
  if (sig == SIGKILL && cg_has_file (unified, "cgroup.kill"))
    {
      r = cg_write (unified, "cgroup.kill", "1", err);
      return r < 0 ? moat_error_wrap (err, "killing cgroup %s", cg->rel) : 0;
    }
  /* Nothing in it (a session exec whose command has ended): nothing can
   * fork in there either, and freezing it is two writes for nothing. */
  if (cg_is_empty (cg))
    return 0;
  /* Otherwise hold the set still while we signal it, as runc does; where
   * there is no freezer a fork may slip through, and destroy loops. */
  if (cg->backend->is_frozen (cg, &was_frozen, &ignored) < 0)
    was_frozen = true;
  moat_error_free (&ignored);
  if (!was_frozen && cg->backend->freeze (cg, true, &ignored) < 0)
    was_frozen = true;
  moat_error_free (&ignored);
  r = signal_pids (cg, sig, err);
  if (!was_frozen)
    cg->backend->freeze (cg, false, &ignored);
  if (r < 0)
    return moat_error_wrap (err, "killing cgroup %s", cg->rel);
  return 0;
}

int
cgroup_destroy (struct cgroup *cg, struct moat_error **err)
{
  cleanup_error struct moat_error *ignored = NULL;
  unsigned tries = 0;
  bool gone = false;
  int r = 0;

  cg->backend->freeze (cg, false, &ignored);
  moat_error_free (&ignored);
  /* The usual case, a container whose processes are gone: the kernel
   * removes an empty leaf at once and refuses (EBUSY) one that still
   * holds a process, so the rmdir comes before any listing. */
  cg_remove_leaves (cg, &gone);
  while (!gone)
    {
      cleanup_free pid_t *pids = NULL;
      size_t n = 0;
      cgroup_pids (cg, &pids, &n, &ignored);
      if (n > 0)
        {
          cgroup_kill_all (cg, SIGKILL, &ignored);
          moat_error_free (&ignored);
          /* cgroup.kill reaches the unified tree only; a pid that is in a
           * v1 hierarchy alone gets its signal here. */
          signal_pids (cg, SIGKILL, &ignored);
          moat_error_free (&ignored);
        }
      else
        {
          r = cg_remove_leaves (cg, &gone);
          if (gone)
            break;
          /* EBUSY: the kernel has not let go of an exiting process yet.
           * Anything else will not change by waiting. */
          if (r != -EBUSY)
            return moat_fail (err, -r, "destroying cgroup %s", cg->rel);
        }
      if (!cg_backoff (&tries))
        {
          if (n > 0)
            return moat_fail (err, EBUSY,
                              "destroying cgroup %s: %zu processes left",
                              cg->rel, n);
          return moat_fail (err, -r, "destroying cgroup %s", cg->rel);
        }
    }
  if (!cg->keep_parents)
    cg_remove_levels_below_moat (cg);
  cg_systemd_release (cg);
  return 0;
}

/* ---- stats ---- */

uint64_t
cgroup_oom_kills (struct cgroup *cg)
{
  struct cgroup_hier *h = cgroup_hier_for (cg, CG_MEMORY);
  uint64_t n = 0;
  if (h && cg_read_keyed (h->fd, "memory.events", "oom_kill", &n) < 0
      && cg_read_keyed (h->fd, "memory.oom_control", "oom_kill", &n) < 0)
    n = 0;
  return n;
}
