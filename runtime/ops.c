/* ps, pause/resume, update and events: verbs that act on a running
 * container's cgroup. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "container_internal.h"
#include "profile.h"
#include "util.h"

static int
open_running_cgroup (const struct moat_globals *g, const char *id, bool lock,
                     bool must_run, struct container_state **ret_st,
                     int *ret_dirfd, struct cgroup **ret_cg,
                     struct moat_error **err)
{
  cleanup_close int dirfd = -1;
  cleanup_state struct container_state *st = NULL;
  int r;

  r = container_load (g, id, lock, NULL, &dirfd, &st, err);
  if (r < 0)
    return r;
  if (must_run && strcmp (container_status (dirfd, st), "stopped") == 0)
    return moat_fail (err, 0, "container not running");
  r = cgroup_open (st->cgroup, ret_cg, err);
  if (r < 0)
    return r;
  if (ret_st)
    *ret_st = steal_pointer (&st);
  if (ret_dirfd)
    *ret_dirfd = steal_fd (&dirfd);
  return 0;
}

int
container_ps (const struct moat_globals *g, const char *id, bool json,
              FILE *out, struct moat_error **err)
{
  struct cgroup *cg = NULL;
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  int r;

  r = open_running_cgroup (g, id, false, false, NULL, NULL, &cg, err);
  if (r < 0)
    return r;
  r = cgroup_pids (cg, &pids, &n, err);
  cgroup_free (cg);
  if (r < 0)
    return r;
  if (json)
    {
      fputc ('[', out);
      for (size_t i = 0; i < n; i++)
        fprintf (out, "%s%d", i ? "," : "", pids[i]);
      fputs ("]\n", out);
      return 0;
    }
  fprintf (out, "PID\tCMD\n");
  for (size_t i = 0; i < n; i++)
    {
      char path[64];
      cleanup_free char *cmd = NULL;
      snprintf (path, sizeof (path), "/proc/%d/comm", pids[i]);
      if (read_file_at (AT_FDCWD, path, 256, &cmd, NULL) == 0)
        cmd[strcspn (cmd, "\n")] = '\0';
      fprintf (out, "%d\t%s\n", pids[i], cmd ? cmd : "?");
    }
  return 0;
}

int
container_pause (const struct moat_globals *g, const char *id, bool pause,
                 struct moat_error **err)
{
  cleanup_close int dirfd = -1;
  cleanup_state struct container_state *st = NULL;
  struct cgroup *cg = NULL;
  const char *status;
  int r;

  r = open_running_cgroup (g, id, true, true, &st, &dirfd, &cg, err);
  if (r < 0)
    return r;
  status = container_status (dirfd, st);
  if (pause && strcmp (status, "running") != 0 && strcmp (status, "created"))
    r = moat_fail (err, 0, "container not running");
  else if (!pause && strcmp (status, "paused") != 0)
    r = moat_fail (err, 0, "container not paused");
  else
    r = cgroup_freeze (cg, pause, err);
  cgroup_free (cg);
  return r;
}

/* The profile's ceiling applies to update as to create: values above it are
 * capped (and recorded), zeros mean "unchanged" (Docker sends them). */
static void
cap_resources (const struct moat_globals *g, struct spec_resources *res)
{
  struct override_list ov = { 0 };
  profile_apply_resources (res, g->profile,
                           g->audit ? g->audit->overrides : &ov, NULL);
  override_list_clear (&ov);
}

int
container_update (const struct moat_globals *g, const struct update_opts *o,
                  struct moat_error **err)
{
  struct cgroup *cg = NULL;
  struct spec_resources res = o->res;
  cleanup_free char *text = NULL;
  int r;

  if (o->resources_file)
    {
      size_t len;
      r = read_file_at (AT_FDCWD,
                        strcmp (o->resources_file, "-") == 0 ? "/dev/stdin"
                                                             : o->resources_file,
                        1 << 20, &text, &len);
      if (r < 0)
        return moat_fail (err, -r, "reading resources %s", o->resources_file);
      memset (&res, 0, sizeof (res));
      r = spec_resources_parse (text, len, &res, err);
      if (r < 0)
        return moat_error_wrap (err, "resources");
    }
  cap_resources (g, &res);
  r = open_running_cgroup (g, o->id, true, false, NULL, NULL, &cg, err);
  if (r == 0)
    {
      r = cgroup_update (cg, &res, err);
      cgroup_free (cg);
    }
  if (o->resources_file)
    spec_resources_clear (&res);
  return r;
}

int
container_events (const struct moat_globals *g, const char *id, bool stats,
                  int interval, FILE *out, struct moat_error **err)
{
  uint64_t ooms = 0;
  /* Once a second: an OOM kill is told within a second, as runc tells it
   * (from memory.events on v2), stats every `interval` seconds. */
  for (int tick = 0;; tick++)
    {
      struct cgroup *cg = NULL;
      cleanup_free char *data = NULL;
      uint64_t now;
      int r = open_running_cgroup (g, id, false, true, NULL, NULL, &cg, err);
      if (r < 0)
        return r;
      now = cgroup_oom_kills (cg);
      if (tick > 0 && now > ooms)
        fprintf (out, "{\"type\":\"oom\",\"id\":\"%s\"}\n", id);
      ooms = now;
      if (tick % interval == 0)
        {
          r = cgroup_stats_json (cg, &data, err);
          if (r == 0)
            fprintf (out, "{\"type\":\"stats\",\"id\":\"%s\",\"data\":%s}\n",
                     id, data);
        }
      cgroup_free (cg);
      if (r < 0)
        return r;
      fflush (out);
      if (stats)
        return 0;
      sleep (1);
    }
}
