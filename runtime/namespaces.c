/* The namespaces config.json names by path, on the host side of create:
 * opened and judged (the host's own are refused), and those moat must be
 * in before clone (pid and time apply to children only). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container_internal.h"
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

static const char *const proc_ns_name[NS__MAX]
    = { [NS_MOUNT] = "mnt",     [NS_PID] = "pid",  [NS_NET] = "net",
        [NS_IPC] = "ipc",       [NS_UTS] = "uts",  [NS_USER] = "user",
        [NS_CGROUP] = "cgroup", [NS_TIME] = "time" };

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
                    owner == 0 ? "self" : "1", proc_ns_name[t]);
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
    }
  return 0;
}
