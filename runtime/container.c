/* What the lifecycle verbs share on the host side: the container id,
 * reading config.json and the rootfs, a state dir loaded, the init's
 * liveness and status. create itself is create.c; start, kill, delete,
 * run and list are lifecycle.c. */
#include "container.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../oci/state.h"
#include "audit.h"
#include "cgroup/cgroup.h"
#include "container_internal.h"
#include "statedir.h"
#include "../lib/cidr.h"
#include "../policy/profile.h"
#include "../lib/util.h"

int
container_id_check (const char *id, struct moat_error **err)
{
  size_t n;
  if (id == NULL || *id == '\0')
    return moat_fail (err, 0, "container id is empty");
  n = strlen (id);
  if (n > 1024)
    return moat_fail (err, 0, "container id is longer than 1024 characters");
  for (size_t i = 0; i < n; i++)
    {
      char c = id[i];
      bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                   || (c >= '0' && c <= '9');
      if (alnum || (i > 0 && (c == '_' || c == '.' || c == '+' || c == '-')))
        continue;
      return moat_fail (err, 0,
                        "invalid container id: must match "
                        "[A-Za-z0-9][A-Za-z0-9_.+-]*");
    }
  return 0;
}

void
container_audit_bundle (const struct moat_globals *g, const char *bundle)
{
  /* run goes through create, start and delete: the last one wins. */
  if (g->audit == NULL || bundle == NULL)
    return;
  free (g->audit->bundle);
  g->audit->bundle = xstrdup (bundle);
}

int
proc_stat_read_exit (pid_t pid, char *ret_state, uint64_t *ret_starttime,
                     int *ret_exit_code)
{
  char path[64];
  cleanup_free char *buf = NULL;
  char *p, *field[PROC_STAT_EXIT_CODE + 1] = { NULL };
  int n = 3, r;

  snprintf (path, sizeof (path), "/proc/%d/stat", pid);
  r = read_file_at (AT_FDCWD, path, 4096, &buf, NULL);
  if (r < 0)
    return r;
  /* comm may hold spaces and parens: the fields start after the last ')'. */
  p = strrchr (buf, ')');
  if (p == NULL || p[1] != ' ')
    return -EINVAL;
  p += 2;
  p[strcspn (p, "\n")] = '\0';
  for (; p && n <= PROC_STAT_EXIT_CODE; n++)
    {
      field[n] = p;
      p = strchr (p, ' ');
      if (p)
        *p++ = '\0';
    }
  if (field[PROC_STAT_STARTTIME] == NULL)
    return -EINVAL;
  *ret_state = field[3][0];
  r = parse_uint64 (field[PROC_STAT_STARTTIME], ret_starttime);
  if (r < 0 || ret_exit_code == NULL)
    return r;
  /* Linux 3.5 and later; waitpid's encoding. */
  if (field[PROC_STAT_EXIT_CODE] == NULL)
    return -ENODATA;
  return parse_int (field[PROC_STAT_EXIT_CODE], ret_exit_code);
}

int
proc_stat_read (pid_t pid, char *ret_state, uint64_t *ret_starttime)
{
  return proc_stat_read_exit (pid, ret_state, ret_starttime, NULL);
}

char *
container_cache_dir (const struct moat_globals *g)
{
  return xasprintf ("%s/.cache", g->root);
}

bool
container_init_alive (const struct container_state *st)
{
  char state;
  uint64_t start;
  if (st->pid <= 0)
    return false;
  if (proc_stat_read (st->pid, &state, &start) < 0)
    return false;
  if (state == 'Z' || state == 'X')
    return false;
  /* Create records the start time or fails: a state without one names no
   * process moat may take for the init (its cgroup is still the
   * container's, and delete --force empties it). */
  return st->pid_starttime != 0 && start == st->pid_starttime;
}

/* The process of pidfd has not exited (what was read of /proc/PID since
 * the pidfd was opened was its). */
static bool
pidfd_running (int pidfd)
{
  struct pollfd exited = { .fd = pidfd, .events = POLLIN };
  return poll (&exited, 1, 0) == 0;
}

int
container_init_pidfd (const struct container_state *st)
{
  int pidfd;

  if (st->pid <= 0)
    return -ESRCH;
  /* The pidfd first: it pins whichever process has the pid now, so the
   * start time read next is either that process's or, if it has exited
   * meanwhile, a later one's; the pidfd not yet readable (its process
   * still running) rules the second out. Checked the other way round, a
   * pid freed and given to a new process between the check and the open
   * would have the signal go to that stranger. */
  pidfd = pidfd_open (st->pid, 0);
  if (pidfd < 0)
    return -errno;
  if (!container_init_alive (st) || !pidfd_running (pidfd))
    {
      close (pidfd);
      return -ESRCH;
    }
  return pidfd;
}

int
container_init_proc_open (const struct container_state *st,
                          const char *const *files, size_t n, int *ret_fds)
{
  cleanup_close int pidfd = container_init_pidfd (st);
  char path[64];
  int r = 0;

  for (size_t i = 0; i < n; i++)
    ret_fds[i] = -1;
  if (pidfd < 0)
    return -ESRCH;
  for (size_t i = 0; i < n && r == 0; i++)
    {
      snprintf (path, sizeof (path), "/proc/%d/%s", st->pid, files[i]);
      ret_fds[i] = open (path, O_RDONLY | O_CLOEXEC);
      if (ret_fds[i] < 0)
        r = -errno;
    }
  /* Still running: what was opened is the init's, not a file of a
   * process its pid went to since. */
  if (r == 0 && !pidfd_running (pidfd))
    r = -ESRCH;
  for (size_t i = 0; r < 0 && i < n; i++)
    close_if_open (&ret_fds[i]);
  return r;
}

const char *
container_status_cgroup (int dirfd, const struct container_state *st,
                         struct cgroup **ret_cg)
{
  bool alive = container_init_alive (st);
  struct cgroup *cg = NULL;
  bool frozen = false;

  if (ret_cg)
    *ret_cg = NULL;
  if (st->created == NULL || *st->created == '\0')
    return alive ? "creating" : "stopped";
  if (!alive)
    return "stopped";
  if (faccessat (dirfd, "exec.fifo", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    return "created";
  if (st->cgroup && cgroup_open (st->cgroup, &cg, NULL) == 0)
    cgroup_is_frozen (cg, &frozen, NULL);
  if (ret_cg)
    *ret_cg = cg;
  else
    cgroup_free (cg);
  return frozen ? "paused" : "running";
}

const char *
container_status (int dirfd, const struct container_state *st)
{
  return container_status_cgroup (dirfd, st, NULL);
}

int
container_load (const struct moat_globals *g, const char *id, bool lock,
                int *ret_rootfd, int *ret_dirfd,
                struct container_state **ret_st, struct moat_error **err)
{
  cleanup_close int rootfd = -1;
  cleanup_close int dirfd = -1;
  int r;

  r = container_id_check (id, err);
  if (r < 0)
    return r;
  r = statedir_root_open (g->root, false, &rootfd, err);
  if (r < 0)
    return r;
  r = statedir_open (rootfd, id, lock, &dirfd, err);
  if (r < 0)
    return r;
  r = statedir_read_state (dirfd, ret_st, err);
  if (r < 0)
    return r;
  container_audit_bundle (g, (*ret_st)->bundle);
  container_audit_profile (g, (*ret_st)->profile);
  if (ret_rootfd)
    *ret_rootfd = steal_fd (&rootfd);
  *ret_dirfd = steal_fd (&dirfd);
  return 0;
}

int
read_config (const char *bundle, struct spec **ret, char **ret_text,
             size_t *ret_len, struct moat_error **err)
{
  cleanup_free char *path = xasprintf ("%s/config.json", bundle);
  cleanup_free char *text = NULL;
  size_t len;
  int r;

  r = read_file_at (AT_FDCWD, path, JSON_MAX_SIZE_CONFIG, &text, &len);
  if (r == -EFBIG)
    return moat_fail (err, 0, "config.json: larger than 4 MiB");
  if (r < 0)
    return moat_fail (err, -r, "reading %s", path);
  /* spec_parse's messages start with "config.json: " already. */
  r = spec_parse (text, len, ret, err);
  if (r < 0)
    return r;
  *ret_text = steal_pointer (&text);
  *ret_len = len;
  return 0;
}

int
parse_config (const char *text, size_t len, struct spec **ret, char **ret_text,
              size_t *ret_len, struct moat_error **err)
{
  int r = spec_parse (text, len, ret, err);
  if (r < 0)
    return r;
  *ret_text = xstrdup (text);
  *ret_len = len;
  return 0;
}

int
resolve_rootfs (const struct spec *s, const char *bundle, char **ret,
                struct moat_error **err)
{
  cleanup_free char *path = NULL;
  char real[PATH_MAX];
  struct stat st;

  path = s->root_path[0] == '/' ? xstrdup (s->root_path)
                                : xasprintf ("%s/%s", bundle, s->root_path);
  if (realpath (path, real) == NULL)
    return moat_fail (err, errno, "root.path %s", path);
  if (stat (real, &st) < 0)
    return moat_fail (err, errno, "root.path %s", path);
  if (!S_ISDIR (st.st_mode))
    return moat_fail (err, ENOTDIR, "root.path %s", path);
  if (strcmp (real, "/") == 0)
    return moat_fail (err, 0, "root.path %s: the host's / cannot be a rootfs",
                      path);
  *ret = xstrdup (real);
  return 0;
}

/* The run.moat.* requests the profile ignored that concern the network
 * (a loosening run.moat.egress-allow entry): told on stderr too. */
void
container_warn_ignored (const struct override_list *ov)
{
  for (size_t i = 0; i < ov->n; i++)
    if (ov->v[i].kind == OVERRIDE_IGNORED
        && strcmp (ov->v[i].path, "annotations.run.moat.egress-allow") == 0)
      {
        cleanup_free char *asked
            = printable_text (ov->v[i].asked ? ov->v[i].asked : "", 300);
        fprintf (stderr, "moat: warning: %s: %s ignored (%s)\n", ov->v[i].path,
                 asked, ov->v[i].enforced ? ov->v[i].enforced : "");
      }
}
