/* exec --cgroup: the process joins a sub-cgroup of the container's, as
 * runc's does (see cgroup_add_pid_sub in cgroup.h); an exec that joins by
 * itself (cgroup_open_join_files); a session exec's tracking cgroup
 * (cgroup_create_tracking). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_internal.h"
#include "../../lib/util.h"

/* Does the comma-separated list have word? */
static bool
list_has (const char *list, const char *word, size_t len)
{
  for (const char *p = list; *p;)
    {
      size_t n = strcspn (p, ",");
      if (n == len && strncmp (p, word, len) == 0)
        return true;
      p += n;
      if (*p == ',')
        p++;
    }
  return false;
}

/* Does entry (its controllers part, ctrls_len long) name hierarchy h? */
static bool
entry_names (const char *entry, size_t ctrls_len, const struct cgroup_hier *h)
{
  for (const char *p = entry; p < entry + ctrls_len;)
    {
      size_t n = strcspn (p, ",:");
      if (n > 0 && list_has (h->name, p, n))
        return true;
      p += n + 1;
    }
  return false;
}

/* Every controller the entry names is on some v1 hierarchy of cg. */
static int
check_controllers (struct cgroup *cg, const char *entry, size_t ctrls_len,
                   struct moat_error **err)
{
  for (const char *p = entry; p < entry + ctrls_len;)
    {
      size_t n = strcspn (p, ",:");
      bool found = false;
      for (size_t i = 0; i < cg->n_hiers && n > 0; i++)
        found = found
                || (!(cg->hiers[i].ctrls & CG_UNIFIED)
                    && list_has (cg->hiers[i].name, p, n));
      if (!found)
        return moat_fail (err, ENOENT,
                          "--cgroup %s: no cgroup v1 hierarchy has "
                          "controller %.*s",
                          entry, (int)n, p);
      p += n + 1;
    }
  return 0;
}

/* The sub-cgroup path for h among subs (NULL: the container's own). */
static int
sub_for (struct cgroup *cg, const struct cgroup_hier *h, char *const *subs,
         const char **ret, struct moat_error **err)
{
  const char *found = NULL, *fallback = NULL;

  for (; subs && *subs; subs++)
    {
      const char *colon = strchr (*subs, ':');
      size_t ctrls_len = colon ? (size_t)(colon - *subs) : 0;
      int r = check_controllers (cg, *subs, ctrls_len, err);
      if (r < 0)
        return r;
      if (colon == NULL)
        {
          if (fallback)
            return moat_fail (err, EINVAL,
                              "--cgroup %s: a sub-cgroup for every "
                              "controller is given twice",
                              *subs);
          fallback = *subs;
          continue;
        }
      if ((h->ctrls & CG_UNIFIED) || !entry_names (*subs, ctrls_len, h))
        continue;
      if (found)
        return moat_fail (err, EINVAL,
                          "--cgroup %s: %s already has a sub-cgroup", *subs,
                          h->name);
      found = colon + 1;
    }
  *ret = found ? found : fallback;
  return 0;
}

/* The directory of h that pid joins: SUB's where subs name one, else the
 * container's own (a new descriptor either way). */
static int
open_join_dir (struct cgroup_hier *h, const char *sub, struct moat_error **err)
{
  cleanup_free char *rel = NULL;
  int dir;

  if (sub == NULL)
    {
      dir = fcntl (h->fd, F_DUPFD_CLOEXEC, 3);
      return dir < 0 ? moat_fail (err, errno, "cgroup %s", h->name) : dir;
    }
  if (cg_normalize_rel (sub, &rel, err) < 0)
    return moat_error_wrap (err, "--cgroup %s", sub);
  dir = cg_open_beneath (h->fd, rel + 1, O_RDONLY | O_DIRECTORY);
  if (dir < 0)
    return moat_fail (err, errno, "--cgroup %s: no such sub-cgroup in %s", sub,
                      h->name);
  return dir;
}

static int
join_sub (struct cgroup_hier *h, const char *sub, pid_t pid,
          struct moat_error **err)
{
  cleanup_close int dir = open_join_dir (h, sub, err);
  char value[32];
  int r;

  if (dir < 0)
    return -1;
  snprintf (value, sizeof (value), "%d", (int)pid);
  r = cg_write_fd (dir, h->fs, "cgroup.procs", value);
  if (r < 0)
    return moat_fail (err, -r, "--cgroup %s: adding pid %d in %s", sub,
                      (int)pid, h->name);
  return 0;
}

int
cgroup_open_join_files (struct cgroup *cg, char *const *subs, int **ret_fds,
                        int *ret_unified_dir, struct moat_error **err)
{
  int *fds = xcalloc (cg->n_hiers + 1, sizeof (int));

  *ret_unified_dir = -1;
  for (size_t i = 0; i < cg->n_hiers; i++)
    fds[i] = -1;
  for (size_t i = 0; i < cg->n_hiers; i++)
    {
      struct cgroup_hier *h = &cg->hiers[i];
      bool v2 = (h->ctrls & CG_UNIFIED) != 0;
      const char *sub = NULL;
      cleanup_close int dir = -1;

      if (h->fd < 0)
        continue;
      if (sub_for (cg, h, subs, &sub, err) < 0
          || (dir = open_join_dir (h, sub, err)) < 0)
        {
          cgroup_close_self_files (fds, cg->n_hiers);
          if (*ret_unified_dir >= 0)
            close (*ret_unified_dir);
          return -1;
        }
      fds[i] = cg_open_beneath (dir, v2 ? "cgroup.procs" : "tasks", O_WRONLY);
      if (fds[i] < 0)
        {
          int e = errno;
          cgroup_close_self_files (fds, cg->n_hiers);
          if (*ret_unified_dir >= 0)
            close (*ret_unified_dir);
          return moat_fail (err, e, "joining cgroup %s (%s)", cg->rel, h->name);
        }
      if (v2)
        *ret_unified_dir = steal_fd (&dir);
    }
  *ret_fds = fds;
  return 0;
}

int
cgroup_add_pid_sub (struct cgroup *cg, pid_t pid, char *const *subs,
                    struct moat_error **err)
{
  if (subs == NULL || *subs == NULL)
    return cgroup_add_pid (cg, pid, err);
  for (size_t i = 0; i < cg->n_hiers; i++)
    {
      struct cgroup_hier *h = &cg->hiers[i];
      const char *sub = NULL;
      int r = sub_for (cg, h, subs, &sub, err);
      if (r == 0 && sub)
        r = join_sub (h, sub, pid, err);
      else if (r == 0)
        r = cg_writef (h, "cgroup.procs", err, "%d", (int)pid);
      if (r < 0)
        return r;
    }
  return 0;
}

int
cgroup_create_tracking (const char *rel, struct cgroup **ret,
                        char **ret_controllers, struct moat_error **err)
{
  const unsigned tracking = CG_CPUACCT | CG_MEMORY | CG_PIDS | CG_FREEZER;
  enum cgroup_mode mode;
  struct cgroup *cg = NULL;
  int r = cgroup_mode (&mode, err);

  if (r == 0)
    r = cg_create_in (rel, NULL, mode == CGROUP_MODE_V2 ? CG_UNIFIED : tracking,
                      &cg, err);
  if (r < 0)
    return r;
  cg->keep_parents = true;
  *ret_controllers = NULL;
  for (size_t i = 0; mode != CGROUP_MODE_V2 && i < cg->n_hiers; i++)
    if (cg->hiers[i].fd >= 0)
      {
        char *had = *ret_controllers;
        *ret_controllers = had ? xasprintf ("%s,%s", had, cg->hiers[i].name)
                               : xstrdup (cg->hiers[i].name);
        free (had);
      }
  *ret = cg;
  return 0;
}

bool
cg_is_empty (struct cgroup *cg)
{
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  return cgroup_pids (cg, &pids, &n, NULL) == 0 && n == 0;
}
