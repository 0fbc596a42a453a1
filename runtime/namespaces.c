/* The namespaces config.json names by path, on the host side of create:
 * opened and judged (the host's own are refused), those moat must be in
 * before clone (pid and time apply to children only), and under G12 the
 * user namespace they need: a moat container's, adopted. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container_internal.h"
#include "statedir.h"
#include "userns/userns.h"
#include "../lib/util.h"

int
container_enter_parent_namespaces (const struct spec *s, int *ns_fds,
                                   struct moat_error **err)
{
  /* pid and time namespaces apply to children only: moat enters (or
   * creates) them before clone so that the init is born inside. */
  if (ns_fds[NS_PID] >= 0 && setns (ns_fds[NS_PID], CLONE_NEWPID) < 0)
    return moat_fail (err, errno, "joining pid namespace %s",
                      s->linux_.ns[NS_PID].path);
  if (ns_fds[NS_TIME] >= 0 && setns (ns_fds[NS_TIME], CLONE_NEWTIME) < 0)
    return moat_fail (err, errno, "joining time namespace %s",
                      s->linux_.ns[NS_TIME].path);
  if (s->linux_.ns[NS_TIME].present && s->linux_.ns[NS_TIME].path == NULL)
    {
      if (unshare (CLONE_NEWTIME) < 0)
        return moat_fail (err, errno, "creating the time namespace");
      if (s->linux_.has_time_offsets)
        {
          cleanup_free char *off
              = xasprintf ("monotonic %lld %lld\nboottime %lld %lld\n",
                           (long long)s->linux_.monotonic_secs,
                           (long long)s->linux_.monotonic_nanosecs,
                           (long long)s->linux_.boottime_secs,
                           (long long)s->linux_.boottime_nanosecs);
          int r = write_file_at (AT_FDCWD, "/proc/self/timens_offsets", off);
          if (r < 0)
            return moat_fail (err, -r, "writing time namespace offsets");
        }
    }
  return 0;
}

/* G12: the uid and gid maps of a user namespace joined by path, as a
 * process inside it reads them (host ids as its parent namespace sees
 * them), "UIDMAP\0GIDMAP\0": a fact create gathers before judging, from a
 * child that joins it (setns would change moat's own credentials). */
static int
read_joined_maps (int userns_fd, char **ret, struct moat_error **err)
{
  static const char *const files[]
      = { "/proc/self/uid_map", "/proc/self/gid_map" };
  cleanup_close int rd = -1;
  cleanup_free char *buf = xcalloc (1, 65536 * 2 + 2);
  size_t len = 0;
  ssize_t n;
  int p[2], status = 0;
  pid_t pid;

  if (pipe2 (p, O_CLOEXEC) < 0)
    return moat_fail (err, errno, "pipe");
  rd = p[0];
  pid = fork ();
  if (pid == 0)
    {
      close (p[0]);
      if (setns (userns_fd, CLONE_NEWUSER) < 0)
        _exit (1);
      for (size_t i = 0; i < 2; i++)
        {
          cleanup_free char *text = NULL;
          size_t tlen = 0;
          if (read_file_at (AT_FDCWD, files[i], 65536, &text, &tlen) < 0
              || write (p[1], text, tlen) != (ssize_t)tlen
              || write (p[1], "", 1) != 1)
            _exit (1);
        }
      _exit (0);
    }
  close (p[1]);
  while (pid > 0 && len < 65536 * 2
         && (n = read (rd, buf + len, 65536 * 2 - len)) > 0)
    len += (size_t)n;
  if (pid < 0 || waitpid (pid, &status, 0) < 0 || !WIFEXITED (status)
      || WEXITSTATUS (status) != 0 || memchr (buf, '\0', len) == NULL)
    return moat_fail (err, pid < 0 ? errno : 0,
                      "reading the maps of the user namespace to join");
  *ret = steal_pointer (&buf);
  return 0;
}

/* A user namespace joined by path must not make container root host root:
 * its maps read, the policy judges them (a refusal recorded in ov). */
static int
judge_joined_userns (int userns_fd, const char *path, struct override_list *ov,
                     struct moat_error **err)
{
  cleanup_free char *maps = NULL;
  int r = read_joined_maps (userns_fd, &maps, err);

  if (r == 0)
    r = profile_apply_joined_userns (path, maps, maps + strlen (maps) + 1, ov,
                                     err);
  if (r < 0)
    return moat_error_wrap (err, "user namespace %s", path);
  return 0;
}

int
container_open_namespaces (const struct spec *s, const struct profile *p,
                           struct override_list *ov, int *ns_fds,
                           struct moat_error **err)
{
  for (int t = 0; t < NS__MAX; t++)
    {
      const char *path = s->linux_.ns[t].path;
      char host[64];
      struct stat st, hst;
      int r;

      ns_fds[t] = -1;
      if (!s->linux_.ns[t].present || path == NULL)
        continue;
      ns_fds[t] = open (path, O_RDONLY | O_CLOEXEC);
      if (ns_fds[t] < 0)
        return moat_fail (err, errno, "opening %s namespace %s",
                          ns_type_name (t), path);
      /* Joining the host's own namespace would undo the isolation: pid 1's
       * or moat's own. pid 1 may be out of reach (EACCES when it holds
       * capabilities moat lacks): moat's own still has to be checked. */
      if (fstat (ns_fds[t], &st) < 0)
        return moat_fail (err, errno, "checking %s namespace %s",
                          ns_type_name (t), path);
      for (int owner = 0; owner < 2; owner++)
        {
          snprintf (host, sizeof (host), "/proc/%s/ns/%s",
                    owner == 0 ? "self" : "1", ns_table[t].proc_name);
          if (stat (host, &hst) < 0)
            {
              if (owner == 1 && errno == EACCES)
                continue;
              return moat_fail (err, errno, "checking %s namespace %s",
                                ns_type_name (t), path);
            }
          r = profile_apply_ns_join (t, path, st.st_dev, st.st_ino, hst.st_dev,
                                     hst.st_ino, p, ov, err);
          if (r < 0)
            return r;
        }
      if (t == NS_USER && judge_joined_userns (ns_fds[t], path, ov, err) < 0)
        return -1;
    }
  return 0;
}

/* ---- G12: a namespace joined by path, and the user namespace it needs ---- */

/* The uid_map and gid_map read from maps[0] and maps[1] are exactly
 * moat's block FIRST: one line, ids 0-65535 onto it, nothing onto host 0. */
static bool
maps_are_block (const int *maps, uint32_t first)
{
  for (size_t i = 0; i < 2; i++)
    {
      cleanup_free char *text = NULL;
      unsigned long long in, out, count;
      int n = 0;

      if (read_fd_all (maps[i], 4096, &text, NULL) < 0
          || sscanf (text, " %llu %llu %llu %n", &in, &out, &count, &n) != 3
          || text[n] != '\0' || in != 0 || out != first
          || count != PROFILE_USERNS_BLOCK)
        return false;
    }
  return true;
}

struct adopt_probe
{
  struct stat userns; /* the user namespace to find */
  pid_t pid;          /* the holder's init, once found */
  char *holder;       /* its state dir */
};

/* Is OWNER (a state dir the pool names) a live moat container holding
 * FIRST, whose init is in the user namespace probed? Its namespace and
 * maps are opened while a pidfd pins the init, and count only if it still
 * runs after (container_init_proc_open): a process the init's pid went
 * to, in the same namespace (another holder's), must not pass for a
 * stopped holder's init. */
static bool
holder_is (const char *owner, uint32_t first, void *data)
{
  static const char *const files[] = { "ns/user", "uid_map", "gid_map" };
  struct adopt_probe *a = data;
  cleanup_close int dirfd = open (owner, O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  cleanup_state struct container_state *st = NULL;
  int fds[3];
  struct stat sb;
  bool is;

  if (dirfd < 0 || statedir_read_state (dirfd, &st, NULL) < 0
      || st->userns_host_id != first
      || container_init_proc_open (st, files, 3, fds) < 0)
    return false;
  is = fstat (fds[0], &sb) == 0 && sb.st_dev == a->userns.st_dev
       && sb.st_ino == a->userns.st_ino && maps_are_block (fds + 1, first);
  for (size_t i = 0; i < 3; i++)
    close (fds[i]);
  if (!is)
    return false;
  a->pid = st->pid;
  a->holder = xstrdup (owner);
  return true;
}

int
container_adopt_userns (struct spec *s, const struct operator_config *cfg,
                        const char *root, const char *id, int *ns_fds,
                        char **ret_joined, uint32_t *ret_first,
                        char **ret_root_path, struct moat_error **err)
{
  static const enum ns_type judged[] = { NS_PID, NS_CGROUP };
  struct adopt_probe probe = { .pid = 0 };
  cleanup_close int adopt = -1;
  cleanup_free char *by = NULL;
  cleanup_free char *holder = NULL;
  char real[PATH_MAX];
  struct stat own;
  int r;

  *ret_first = 0;
  if (!userns_moat_maps (s))
    return 0;
  /* moat builds the rootfs by mounting and pivoting: in a mount namespace
   * of the host's user namespace the container's root cannot, and in
   * another container's it would rearrange that one's files. */
  if (ns_fds[NS_MOUNT] >= 0)
    return moat_fail (err, 0,
                      "mount namespace %s: cannot be joined by path with the "
                      "container's own user namespace (G12): its root could "
                      "not mount there",
                      s->linux_.ns[NS_MOUNT].path);
  if (stat ("/proc/self/ns/user", &own) < 0)
    return moat_fail (err, errno, "checking moat's user namespace");
  for (size_t i = 0; i < sizeof (judged) / sizeof (judged[0]); i++)
    {
      enum ns_type t = judged[i];
      const char *path = s->linux_.ns[t].path;
      cleanup_close int owner = -1;
      struct stat st;

      if (ns_fds[t] < 0)
        continue;
      owner = ioctl (ns_fds[t], NS_GET_USERNS);
      if (owner < 0 || fstat (owner, &st) < 0)
        return moat_fail (err, errno, "%s namespace %s: its user namespace",
                          ns_type_name (t), path);
      if (st.st_dev == own.st_dev && st.st_ino == own.st_ino)
        {
          /* Without /proc, a pid namespace of the host's runs as before:
           * its processes stay strangers to the container's root. */
          if (t == NS_PID && !userns_has_proc_mount (s))
            continue;
          return moat_fail (err, 0,
                            "%s namespace %s: joined by path, it belongs to "
                            "the host's user namespace, where the container's "
                            "root (G12) cannot %s",
                            ns_type_name (t), path,
                            t == NS_PID ? "mount /proc" : "join it");
        }
      if (adopt >= 0
          && (st.st_dev != probe.userns.st_dev
              || st.st_ino != probe.userns.st_ino))
        return moat_fail (err, 0,
                          "%s namespace %s: belongs to another user namespace "
                          "than %s namespace %s",
                          ns_type_name (t), path, ns_type_name (NS_PID), by);
      if (adopt < 0)
        {
          adopt = steal_fd (&owner);
          probe.userns = st;
          by = xstrdup (path);
        }
    }
  if (adopt < 0)
    return 0;
  if (realpath (root, real) == NULL)
    return moat_fail (err, errno, "state root %s", root);
  r = userns_block_adopt (cfg, real, id, holder_is, &probe, ret_first, err);
  holder = probe.holder;
  if (r < 0)
    return r;
  if (*ret_first == 0)
    return moat_fail (err, 0,
                      "namespace %s: joined by path, it belongs to a user "
                      "namespace that is not a live moat container's: the "
                      "container's root (G12) could not use it",
                      by);
  if (ret_joined)
    {
      const char *holder_id = strrchr (holder, '/');
      *ret_joined = xasprintf ("moat container %s's, whose namespace %s it "
                               "shares",
                               holder_id ? holder_id + 1 : holder, by);
    }
  s->linux_.ns[NS_USER].path = xasprintf ("/proc/%d/ns/user", probe.pid);
  ns_fds[NS_USER] = steal_fd (&adopt);
  *ret_root_path = xstrdup (real);
  return 0;
}
