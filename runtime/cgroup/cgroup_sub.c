/* exec --cgroup: the process joins a sub-cgroup of the container's, as
 * runc's does (see cgroup_add_pid_sub in cgroup.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

static int
join_sub (struct cgroup_hier *h, const char *sub, pid_t pid,
          struct moat_error **err)
{
  cleanup_free char *rel = NULL;
  cleanup_close int dir = -1;
  char value[32];
  int r;

  r = cg_normalize_rel (sub, &rel, err);
  if (r < 0)
    return moat_error_wrap (err, "--cgroup %s", sub);
  dir = cg_open_beneath (h->fd, rel + 1, O_RDONLY | O_DIRECTORY);
  if (dir < 0)
    return moat_fail (err, errno, "--cgroup %s: no such sub-cgroup in %s", sub,
                      h->name);
  snprintf (value, sizeof (value), "%d", (int)pid);
  r = cg_write_fd (dir, h->fs, "cgroup.procs", value);
  if (r < 0)
    return moat_fail (err, -r, "--cgroup %s: adding pid %d in %s", sub,
                      (int)pid, h->name);
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
