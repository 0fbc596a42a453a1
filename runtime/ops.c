/* ps, pause/resume, update and events: verbs that act on a running
 * container's cgroup. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "netguard/netguard.h"
#include "container_internal.h"
#include "../lib/util.h"

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

static bool
has_pid (const pid_t *pids, size_t n, long pid)
{
  for (size_t i = 0; i < n; i++)
    if (pids[i] == pid)
      return true;
  return false;
}

/* The host ids of the container's root (its init's user namespace maps
 * them; 0 without one, or when the init is gone). The maps are opened
 * while a pidfd pins the init (container_init_proc_open): read by pid
 * alone, a pid the init gave up would lend ps(1) the ids of whichever
 * process holds it now. */
static void
container_root_host_ids (const struct container_state *st, uid_t *ret_uid,
                         gid_t *ret_gid)
{
  static const char *const files[] = { "uid_map", "gid_map" };
  unsigned long inside, outside, count, ids[2] = { 0, 0 };
  int fds[2];
  bool opened = container_init_proc_open (st, files, 2, fds) == 0;

  for (size_t i = 0; opened && i < 2; i++)
    {
      cleanup_close int fd = fds[i];
      cleanup_free char *map = NULL;
      if (read_fd_all (fd, 4096, &map, NULL) == 0
          && sscanf (map, "%lu %lu %lu", &inside, &outside, &count) == 3
          && inside == 0)
        ids[i] = outside;
    }
  *ret_uid = (uid_t)ids[0];
  *ret_gid = (gid_t)ids[1];
}

/* Run ps(1) with argv, its stdout into a pipe; *ret_fd reads it. ps runs
 * as the host ids of the container's root: for runc, whose container root
 * is host root, `ps x` (the caller's own processes) lists the container's;
 * under moat's user namespace (G12) they belong to that uid. */
static int
ps_spawn (char **argv, uid_t uid, gid_t gid, pid_t *ret_pid, int *ret_fd,
          struct moat_error **err)
{
  int pfd[2];
  pid_t child;

  if (pipe2 (pfd, O_CLOEXEC) < 0)
    return moat_fail (err, errno, "pipe");
  child = fork ();
  if (child < 0)
    {
      close (pfd[0]);
      close (pfd[1]);
      return moat_fail (err, errno, "fork");
    }
  if (child == 0)
    {
      if (dup2 (pfd[1], STDOUT_FILENO) < 0)
        _exit (127);
      if (uid != 0
          && (setgroups (0, NULL) < 0 || setresgid (gid, gid, gid) < 0
              || setresuid (uid, uid, uid) < 0))
        _exit (127);
      execvp ("ps", argv);
      _exit (127);
    }
  close (pfd[1]);
  *ret_pid = child;
  *ret_fd = pfd[0];
  return 0;
}

/* runc's ps: run ps(1) with the caller's arguments (-ef when none), find
 * its PID column in the header, print the header and the lines of the
 * container's pids. */
static int
ps_filtered (const pid_t *pids, size_t n, const struct container_state *st,
             char *const *ps_args, FILE *out, struct moat_error **err)
{
  cleanup_strv char **argv = NULL;
  cleanup_free char *text = NULL;
  cleanup_close int fd = -1;
  size_t len = 0, cap = 0;
  int status, pid_col = -1, col = 0, r;
  pid_t child = -1;
  uid_t uid;
  gid_t gid;
  char *line, *save = NULL;

  strv_append (&argv, "ps");
  if (*ps_args == NULL)
    strv_append (&argv, "-ef");
  for (; *ps_args; ps_args++)
    strv_append (&argv, *ps_args);
  container_root_host_ids (st, &uid, &gid);
  r = ps_spawn (argv, uid, gid, &child, &fd, err);
  if (r < 0)
    return r;
  for (;;)
    {
      ssize_t got;
      if (cap - len < 4096 && len < (64u << 20))
        text = xrealloc (text, cap = cap * 2 + 8192);
      got = TEMP_FAILURE_RETRY (read (fd, text + len, cap - len - 1));
      if (got <= 0)
        break;
      len += (size_t)got;
    }
  if (TEMP_FAILURE_RETRY (waitpid (child, &status, 0)) < 0
      || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return moat_fail (err, 0, "ps failed (exit status %d)",
                      WIFEXITED (status) ? WEXITSTATUS (status) : -1);
  text[len] = '\0';
  line = strtok_r (text, "\n", &save);
  if (line == NULL)
    return moat_fail (err, 0, "ps printed nothing");
  {
    cleanup_free char *header = xstrdup (line);
    char *tsave = NULL;
    for (char *t = strtok_r (header, " \t", &tsave); t;
         t = strtok_r (NULL, " \t", &tsave), col++)
      if (strcmp (t, "PID") == 0)
        pid_col = col;
  }
  if (pid_col < 0)
    return moat_fail (err, 0, "ps output has no PID column");
  fprintf (out, "%s\n", line);
  while ((line = strtok_r (NULL, "\n", &save)))
    {
      cleanup_free char *copy = xstrdup (line);
      char *tsave = NULL, *t = strtok_r (copy, " \t", &tsave);
      int64_t pid;
      for (int i = 0; t && i < pid_col; i++)
        t = strtok_r (NULL, " \t", &tsave);
      if (t && parse_int64 (t, &pid) == 0 && has_pid (pids, n, pid))
        fprintf (out, "%s\n", line);
    }
  return 0;
}

int
container_ps (const struct moat_globals *g, const char *id, bool json,
              char *const *ps_args, FILE *out, struct moat_error **err)
{
  struct cgroup *cg = NULL;
  cleanup_state struct container_state *st = NULL;
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  int r;

  r = open_running_cgroup (g, id, false, false, &st, NULL, &cg, err);
  if (r < 0)
    return r;
  r = cgroup_pids (cg, &pids, &n, err);
  cgroup_free (cg);
  if (r < 0)
    return r;
  if (!json)
    return ps_filtered (pids, n, st, ps_args, out, err);
  fputc ('[', out);
  for (size_t i = 0; i < n; i++)
    fprintf (out, "%s%d", i ? "," : "", pids[i]);
  fputs ("]\n", out);
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

/* The ceiling is the resource bounds the container's decision saved
 * (operator config, --profile and its annotations, as create resolved
 * them): update never loosens what an annotation tightened, and never calls
 * the policy. Values above it are capped (and recorded), zeros mean
 * "unchanged" (Docker sends them). */
int
container_update (const struct moat_globals *g, const struct update_opts *o,
                  struct moat_error **err)
{
  cleanup_close int dirfd = -1;
  cleanup_state struct container_state *st = NULL;
  cleanup_decision struct decision *d = NULL;
  cleanup_overrides struct override_list own_ov = { 0 };
  struct cgroup *cg = NULL;
  struct spec_resources res = o->res;
  cleanup_free char *text = NULL;
  int r;

  if (o->resources_file)
    {
      size_t len;
      r = read_file_at (AT_FDCWD,
                        strcmp (o->resources_file, "-") == 0
                            ? "/dev/stdin"
                            : o->resources_file,
                        1 << 20, &text, &len);
      if (r < 0)
        return moat_fail (err, -r, "reading resources %s", o->resources_file);
      memset (&res, 0, sizeof (res));
      r = spec_resources_parse (text, len, &res, err);
      if (r < 0)
        return moat_error_wrap (err, "resources");
    }
  r = open_running_cgroup (g, o->id, true, false, &st, &dirfd, &cg, err);
  if (r == 0)
    r = container_load_decision (g, dirfd, st, &d, err);
  if (r == 0)
    {
      resource_bounds_apply (&res, &d->resources, false,
                             g->audit ? g->audit->overrides : &own_ov);
      r = cgroup_update (cg, &res, err);
      cgroup_take_ignored (cg, g->audit ? g->audit->overrides : &own_ov);
    }
  if (cg)
    cgroup_free (cg);
  if (o->resources_file)
    spec_resources_clear (&res);
  return r;
}

int
container_events (const struct moat_globals *g, const char *id, bool stats,
                  uint64_t interval_ms, FILE *out, struct moat_error **err)
{
  uint64_t ooms = 0, elapsed = 0, next_stats = 0;
  /* An OOM kill is told within a second (or the interval, if shorter), as
   * runc tells it (from memory.events on v2); stats every interval. */
  uint64_t tick_ms = interval_ms > 0 && interval_ms < 1000 ? interval_ms : 1000;

  for (int tick = 0;; tick++, elapsed += tick_ms)
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
      if (elapsed >= next_stats)
        {
          r = cgroup_stats_json (cg, &data, err);
          if (r == 0)
            {
              /* The network guard's refusals as data.network, beside
               * runc's fields. */
              cleanup_free char *refused = NULL;
              size_t len = strlen (data);
              if (len > 0 && cgroup_unified_fd (cg) >= 0
                  && netguard_refusals_json (cgroup_unified_fd (cg), &refused)
                         == 0)
                data[len - 1] = '\0';
              fprintf (out,
                       "{\"type\":\"stats\",\"id\":\"%s\",\"data\":%s%s%s%s}"
                       "\n",
                       id, data, refused ? ",\"network\":" : "",
                       refused ? refused : "", refused ? "}" : "");
            }
          next_stats += interval_ms > 0 ? interval_ms : 1000;
        }
      cgroup_free (cg);
      if (r < 0)
        return r;
      fflush (out);
      if (stats)
        return 0;
      {
        struct timespec ts
            = { (time_t)(tick_ms / 1000), (long)(tick_ms % 1000) * 1000000 };
        while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
          ;
      }
    }
}
