/* --systemd-cgroup where systemd is PID 1: the container's cgroup becomes a
 * transient unit systemd knows, as runc and crun make it, through
 * systemd's D-Bus API with libsystemd's sd-bus (a well-kept client that
 * every systemd host already has; writing our own D-Bus marshalling would
 * be more code to trust, for no gain).
 *
 * moat keeps making the cgroup itself (cgroup_create: the directory, the
 * limits, the BPF network guard, CLONE_INTO_CGROUP), at exactly the path
 * systemd gives the unit. Once the container's init is in it, moat asks
 * systemd for the unit: a scope with PIDs=[init], Delegate=yes and the
 * slice the path names (or the slice itself, when the name is a ".slice"),
 * and the limits moat wrote, read back from the cgroup's files, as unit
 * properties: systemd writes its own values for those files whenever it
 * realizes the unit (at start, at daemon-reload), and without them would
 * reset memory.max, pids.max, cpu.max, cpu.weight, io.weight, cpuset.* to
 * its defaults. After the job, systemd's ControlGroup for the unit must be
 * the path moat made, and moat's limits are written once more.
 *
 * Where systemd is not running (no /run/systemd/system) this does nothing
 * and the cgroupfs mapping of cgroup_path.c is all there is. */
#include "cgroup.h"
#include "cgroup_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "../../lib/dynlib.h"
#include "../../lib/util.h"

/* sd-bus (and the gcrypt, lz4, zstd behind libsystemd) is loaded only
 * when a unit is asked of systemd. */
static struct dynlib libsystemd = { .soname = "libsystemd.so.0" };
DYNLIB_DECLARE (sd_bus_call);
DYNLIB_DECLARE (sd_bus_call_method);
DYNLIB_DECLARE (sd_bus_error_free);
DYNLIB_DECLARE (sd_bus_error_has_name);
DYNLIB_DECLARE (sd_bus_error_is_set);
DYNLIB_DECLARE (sd_bus_flush_close_unref);
DYNLIB_DECLARE (sd_bus_get_property_string);
DYNLIB_DECLARE (sd_bus_is_bus_client);
DYNLIB_DECLARE (sd_bus_match_signal);
DYNLIB_DECLARE (sd_bus_message_append);
DYNLIB_DECLARE (sd_bus_message_append_array);
DYNLIB_DECLARE (sd_bus_message_close_container);
DYNLIB_DECLARE (sd_bus_message_new_method_call);
DYNLIB_DECLARE (sd_bus_message_open_container);
DYNLIB_DECLARE (sd_bus_message_read);
DYNLIB_DECLARE (sd_bus_message_unref);
DYNLIB_DECLARE (sd_bus_new);
DYNLIB_DECLARE (sd_bus_open_system);
DYNLIB_DECLARE (sd_bus_process);
DYNLIB_DECLARE (sd_bus_set_address);
DYNLIB_DECLARE (sd_bus_set_fd);
DYNLIB_DECLARE (sd_bus_slot_unref);
DYNLIB_DECLARE (sd_bus_start);
DYNLIB_DECLARE (sd_bus_unref);
DYNLIB_DECLARE (sd_bus_wait);
static const struct dynlib_symbol libsystemd_symbols[] = {
  DYNLIB_SYMBOL (sd_bus_call),
  DYNLIB_SYMBOL (sd_bus_call_method),
  DYNLIB_SYMBOL (sd_bus_error_free),
  DYNLIB_SYMBOL (sd_bus_error_has_name),
  DYNLIB_SYMBOL (sd_bus_error_is_set),
  DYNLIB_SYMBOL (sd_bus_flush_close_unref),
  DYNLIB_SYMBOL (sd_bus_get_property_string),
  DYNLIB_SYMBOL (sd_bus_is_bus_client),
  DYNLIB_SYMBOL (sd_bus_match_signal),
  DYNLIB_SYMBOL (sd_bus_message_append),
  DYNLIB_SYMBOL (sd_bus_message_append_array),
  DYNLIB_SYMBOL (sd_bus_message_close_container),
  DYNLIB_SYMBOL (sd_bus_message_new_method_call),
  DYNLIB_SYMBOL (sd_bus_message_open_container),
  DYNLIB_SYMBOL (sd_bus_message_read),
  DYNLIB_SYMBOL (sd_bus_message_unref),
  DYNLIB_SYMBOL (sd_bus_new),
  DYNLIB_SYMBOL (sd_bus_open_system),
  DYNLIB_SYMBOL (sd_bus_process),
  DYNLIB_SYMBOL (sd_bus_set_address),
  DYNLIB_SYMBOL (sd_bus_set_fd),
  DYNLIB_SYMBOL (sd_bus_slot_unref),
  DYNLIB_SYMBOL (sd_bus_start),
  DYNLIB_SYMBOL (sd_bus_unref),
  DYNLIB_SYMBOL (sd_bus_wait),
};

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
/* TCG guests and loaded hosts: systemd may take seconds to run a job. */
#define JOB_TIMEOUT_USEC (60ull * 1000 * 1000)

static void
bus_unrefp (sd_bus **b)
{
  if (*b)
    sym_sd_bus_flush_close_unref (*b);
}
/* The library's own cleanup helpers are inline calls into it: these run
 * only where it was loaded (anything non-NULL came from it). */
static void
bus_message_unrefp (sd_bus_message **m)
{
  if (*m)
    sym_sd_bus_message_unref (*m);
}
static void
bus_slot_unrefp (sd_bus_slot **s)
{
  if (*s)
    sym_sd_bus_slot_unref (*s);
}
static void
bus_error_freep (sd_bus_error *e)
{
  if (sym_sd_bus_error_free)
    sym_sd_bus_error_free (e);
}
#define cleanup_bus __attribute__ ((cleanup (bus_unrefp)))
#define cleanup_msg __attribute__ ((cleanup (bus_message_unrefp)))
#define cleanup_slot __attribute__ ((cleanup (bus_slot_unrefp)))
#define cleanup_bus_error __attribute__ ((cleanup (bus_error_freep)))

static int
libsystemd_load (struct moat_error **err)
{
  int r = dynlib_load (
      &libsystemd, libsystemd_symbols,
      sizeof (libsystemd_symbols) / sizeof (*libsystemd_symbols), err);
  return r < 0 ? moat_error_wrap (err, "systemd") : 0;
}

/* The system bus, or systemd's private socket when no dbus-daemon runs. */
static int
bus_open (sd_bus **ret, struct moat_error **err)
{
  sd_bus *bus = NULL;
  int r = libsystemd_load (err);
  if (r < 0)
    return r;
  r = sym_sd_bus_open_system (&bus);
  if (r >= 0)
    {
      *ret = bus;
      return 0;
    }
  r = sym_sd_bus_new (&bus);
  if (r < 0)
    return moat_fail (err, -r, "systemd: connecting to the system bus");
  r = sym_sd_bus_set_address (bus, "unix:path=/run/systemd/private");
  if (r >= 0)
    r = sym_sd_bus_start (bus);
  if (r < 0)
    {
      sym_sd_bus_unref (bus);
      return moat_fail (err, -r, "systemd: connecting to the system bus");
    }
  *ret = bus;
  return 0;
}

struct job_wait
{
  const char *job; /* set once StartTransientUnit/StopUnit answered */
  char *result;    /* JobRemoved's result for it */
  char *seen[8];   /* JobRemoved for jobs before we knew ours */
  char *seen_result[8];
  size_t n_seen;
};

static int
on_job_removed (sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
  struct job_wait *w = userdata;
  const char *path, *unit, *result;
  uint32_t id;

  if (sym_sd_bus_message_read (m, "uoss", &id, &path, &unit, &result) < 0)
    return 0;
  if (w->job && strcmp (path, w->job) == 0)
    w->result = xstrdup (result);
  else if (!w->job && w->n_seen < 8)
    {
      w->seen[w->n_seen] = xstrdup (path);
      w->seen_result[w->n_seen++] = xstrdup (result);
    }
  return 0;
}

static void
job_wait_clear (struct job_wait *w)
{
  for (size_t i = 0; i < w->n_seen; i++)
    {
      free (w->seen[i]);
      free (w->seen_result[i]);
    }
  free (w->result);
}

/* Until the job is removed; its result ("done" when it worked). The time
 * spent is counted in whole microseconds of the monotonic clock: a
 * difference of timespecs taken apart went negative in its nanoseconds
 * once a second boundary was crossed, and a wake-up then read as the
 * whole timeout spent. */
static int
job_wait (sd_bus *bus, struct job_wait *w, const char *job,
          uint64_t timeout_usec)
{
  uint64_t start = monotonic_usec ();
  w->job = job;
  for (size_t i = 0; i < w->n_seen && !w->result; i++)
    if (strcmp (w->seen[i], job) == 0)
      w->result = xstrdup (w->seen_result[i]);
  while (!w->result)
    {
      uint64_t spent;
      int r = sym_sd_bus_process (bus, NULL);
      if (r < 0)
        return r;
      if (r > 0)
        continue;
      spent = monotonic_usec () - start;
      if (spent >= timeout_usec)
        return -ETIMEDOUT;
      r = sym_sd_bus_wait (bus, timeout_usec - spent);
      if (r < 0)
        return r;
    }
  return 0;
}

static int
watch_jobs (sd_bus *bus, sd_bus_slot **slot, struct job_wait *w)
{
  sd_bus_error e = SD_BUS_ERROR_NULL;
  /* Through a dbus-daemon a signal names its sender; on systemd's private
   * socket (a direct connection) it names none, and a match on the sender
   * would never fire: systemd's own clients match there without one. */
  const char *sender = sym_sd_bus_is_bus_client (bus) > 0 ? SD_DEST : NULL;
  int r = sym_sd_bus_match_signal (bus, slot, sender, SD_PATH, SD_MANAGER,
                                   "JobRemoved", on_job_removed, w);
  if (r < 0)
    return r;
  /* Job signals go to subscribers (and the job's own client). A second
   * Subscribe on one connection fails with AlreadySubscribed: harmless. */
  r = sym_sd_bus_call_method (bus, SD_DEST, SD_PATH, SD_MANAGER, "Subscribe",
                              &e, NULL, "");
  if (r < 0
      && !sym_sd_bus_error_has_name (
          &e, "org.freedesktop.systemd1.AlreadySubscribed"))
    {
      sym_sd_bus_error_free (&e);
      return r;
    }
  sym_sd_bus_error_free (&e);
  return 0;
}

/* ---- the cgroup's limits as unit properties ---- */

static bool
read_u64_or_max (struct cgroup_hier *h, const char *file, uint64_t *ret)
{
  return cg_read_u64 (h->fd, file, ret) == 0;
}

static int
append_u64 (sd_bus_message *m, const char *name, uint64_t v)
{
  return sym_sd_bus_message_append (m, "(sv)", name, "t", v);
}

/* cpuset list "0-3,5" -> the little-endian byte mask systemd takes. */
static int
append_cpuset (sd_bus_message *m, const char *name, const char *list)
{
  uint8_t mask[128];
  size_t used = 0;
  const char *p = list;

  memset (mask, 0, sizeof (mask));
  while (*p && *p != '\n')
    {
      char *end;
      unsigned long a = strtoul (p, &end, 10), b = a;
      if (end == p)
        return -EINVAL;
      if (*end == '-')
        {
          p = end + 1;
          b = strtoul (p, &end, 10);
          if (end == p)
            return -EINVAL;
        }
      if (b < a || b >= sizeof (mask) * 8)
        return -ERANGE;
      for (unsigned long i = a; i <= b; i++)
        mask[i / 8] |= (uint8_t)(1u << (i % 8));
      if (b / 8 + 1 > used)
        used = b / 8 + 1;
      p = *end == ',' ? end + 1 : end;
    }
  if (used == 0)
    return 0;
  int r = sym_sd_bus_message_open_container (m, 'r', "sv");
  if (r >= 0)
    r = sym_sd_bus_message_append (m, "s", name);
  if (r >= 0)
    r = sym_sd_bus_message_open_container (m, 'v', "ay");
  if (r >= 0)
    r = sym_sd_bus_message_append_array (m, 'y', mask, used);
  if (r >= 0)
    r = sym_sd_bus_message_close_container (m);
  if (r >= 0)
    r = sym_sd_bus_message_close_container (m);
  return r;
}

/* What moat wrote in the cgroup, as systemd's properties for it. */
static int
append_limits (sd_bus_message *m, struct cgroup_hier *h)
{
  cleanup_free char *cpu_max = NULL, *io_weight = NULL, *cpus = NULL,
                    *mems = NULL;
  uint64_t v;
  int r = 0;

  if (r >= 0 && read_u64_or_max (h, "memory.max", &v))
    r = append_u64 (m, "MemoryMax", v);
  if (r >= 0 && read_u64_or_max (h, "memory.high", &v))
    r = append_u64 (m, "MemoryHigh", v);
  if (r >= 0 && read_u64_or_max (h, "memory.low", &v))
    r = append_u64 (m, "MemoryLow", v);
  if (r >= 0 && read_u64_or_max (h, "memory.min", &v))
    r = append_u64 (m, "MemoryMin", v);
  if (r >= 0 && read_u64_or_max (h, "memory.swap.max", &v))
    r = append_u64 (m, "MemorySwapMax", v);
  if (r >= 0 && read_u64_or_max (h, "pids.max", &v))
    r = append_u64 (m, "TasksMax", v);
  if (r >= 0 && read_u64_or_max (h, "cpu.weight", &v))
    r = append_u64 (m, "CPUWeight", v);
  if (r >= 0 && cg_read (h->fd, "cpu.max", &cpu_max) == 0)
    {
      char quota[32] = "";
      uint64_t period = 0;
      if (sscanf (cpu_max, "%31s %" SCNu64, quota, &period) == 2 && period)
        {
          uint64_t per_sec = UINT64_MAX;
          if (strcmp (quota, "max") != 0)
            per_sec = strtoull (quota, NULL, 10) * 1000000 / period;
          r = append_u64 (m, "CPUQuotaPerSecUSec", per_sec);
          if (r >= 0)
            r = append_u64 (m, "CPUQuotaPeriodUSec", period);
        }
    }
  if (r >= 0 && cg_read (h->fd, "io.weight", &io_weight) == 0)
    {
      uint64_t w = 0;
      if (sscanf (io_weight, "default %" SCNu64, &w) == 1 && w)
        r = append_u64 (m, "IOWeight", w);
    }
  if (r >= 0 && cg_read (h->fd, "cpuset.cpus", &cpus) == 0)
    r = append_cpuset (m, "AllowedCPUs", cpus);
  if (r >= 0 && cg_read (h->fd, "cpuset.mems", &mems) == 0)
    r = append_cpuset (m, "AllowedMemoryNodes", mems);
  return r;
}

static int
append_properties (sd_bus_message *m, struct cgroup_hier *h, const char *unit,
                   const char *slice, pid_t pid)
{
  bool is_slice
      = strlen (unit) > 6 && strcmp (unit + strlen (unit) - 6, ".slice") == 0;
  int r = sym_sd_bus_message_open_container (m, 'a', "(sv)");
  if (r >= 0)
    r = sym_sd_bus_message_append (m, "(sv)", "Description", "s",
                                   "moat container");
  if (r >= 0)
    r = sym_sd_bus_message_append (m, "(sv)", "DefaultDependencies", "b", 0);
  if (r >= 0 && is_slice)
    /* A slice's parent is in its name; Wants= keeps the parent up. */
    r = sym_sd_bus_message_append (m, "(sv)", "Wants", "as", 1, slice);
  else if (r >= 0)
    {
      r = sym_sd_bus_message_append (m, "(sv)", "Slice", "s", slice);
      if (r >= 0)
        r = sym_sd_bus_message_append (m, "(sv)", "Delegate", "b", 1);
      if (r >= 0)
        r = sym_sd_bus_message_append (m, "(sv)", "PIDs", "au", 1,
                                       (uint32_t)pid);
    }
  for (const char *const *a
       = (const char *const[]){ "MemoryAccounting", "TasksAccounting",
                                "CPUAccounting", "IOAccounting", NULL };
       r >= 0 && *a; a++)
    r = sym_sd_bus_message_append (m, "(sv)", *a, "b", 1);
  if (r >= 0)
    r = append_limits (m, h);
  if (r >= 0)
    r = sym_sd_bus_message_close_container (m);
  if (r >= 0)
    r = sym_sd_bus_message_append (m, "a(sa(sv))", 0);
  return r;
}

static int
unit_control_group (sd_bus *bus, const char *unit, char **ret)
{
  cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
  cleanup_msg sd_bus_message *reply = NULL;
  const char *path;
  bool is_slice
      = strlen (unit) > 6 && strcmp (unit + strlen (unit) - 6, ".slice") == 0;
  int r = sym_sd_bus_call_method (bus, SD_DEST, SD_PATH, SD_MANAGER, "GetUnit",
                                  &e, &reply, "s", unit);
  if (r < 0)
    return r;
  r = sym_sd_bus_message_read (reply, "o", &path);
  if (r < 0)
    return r;
  return sym_sd_bus_get_property_string (bus, SD_DEST, path,
                                         is_slice
                                             ? "org.freedesktop.systemd1.Slice"
                                             : "org.freedesktop.systemd1.Scope",
                                         "ControlGroup", &e, ret);
}

/* StopUnit and wait for it (best effort: what is gone is gone). */
static void
stop_unit (sd_bus *bus, const char *unit)
{
  cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
  cleanup_msg sd_bus_message *reply = NULL;
  cleanup_slot sd_bus_slot *slot = NULL;
  struct job_wait w = { 0 };
  const char *job;

  if (watch_jobs (bus, &slot, &w) >= 0
      && sym_sd_bus_call_method (bus, SD_DEST, SD_PATH, SD_MANAGER, "StopUnit",
                                 &e, &reply, "ss", unit, "replace")
             >= 0
      && sym_sd_bus_message_read (reply, "o", &job) >= 0)
    job_wait (bus, &w, job, JOB_TIMEOUT_USEC);
  job_wait_clear (&w);
  sym_sd_bus_error_free (&e);
  sym_sd_bus_call_method (bus, SD_DEST, SD_PATH, SD_MANAGER, "ResetFailedUnit",
                          &e, NULL, "s", unit);
}

static int
bus_fail (struct moat_error **err, int r, const sd_bus_error *e,
          const char *what, const char *unit)
{
  if (e && sym_sd_bus_error_is_set (e) && e->message)
    return moat_error_setx (err, -r, "systemd: %s %s: %s", what, unit,
                            e->message);
  return moat_fail (err, -r, "systemd: %s %s", what, unit);
}

/* A statically linked moat has no sd-bus (lib/dynlib.h): moat-dl makes
 * the call, `moat-dl _systemd OP REL [CGROUPS_PATH PID]`, with nothing on
 * its stdin and stdout and its stderr read back as the error. 1 when it
 * acted, 0 when there was nothing to do. err may be NULL. */
static int
via_moat_dl (const char *op, const char *rel, const char *cgroups_path,
             pid_t pid, struct moat_error **err)
{
  cleanup_free char *path = NULL, *out = NULL;
  char pidbuf[16];
  char *argv[] = { NULL,
                   (char *)CGROUP_SYSTEMD_HELPER_VERB,
                   (char *)op,
                   (char *)rel,
                   (char *)cgroups_path,
                   pidbuf,
                   NULL };
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  sigset_t none, all;
  int pipefd[2], status, r;
  pid_t child;

  if (dynlib_helper_path (&path, err) < 0)
    return moat_error_wrap (err, "systemd");
  argv[0] = path;
  if (cgroups_path)
    snprintf (pidbuf, sizeof (pidbuf), "%d", (int)pid);
  else
    argv[4] = NULL;
  if (pipe2 (pipefd, O_CLOEXEC) < 0)
    return moat_fail (err, errno, "systemd: a pipe for moat-dl");
  sigemptyset (&none);
  sigfillset (&all);
  posix_spawnattr_init (&attr);
  posix_spawnattr_setflags (&attr,
                            POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setsigdefault (&attr, &all);
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen (&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2 (&fa, pipefd[1], 2);
  r = posix_spawn (&child, path, &fa, &attr, argv, environ);
  posix_spawn_file_actions_destroy (&fa);
  posix_spawnattr_destroy (&attr);
  close (pipefd[1]);
  if (r != 0)
    {
      close (pipefd[0]);
      return moat_fail (err, r, "systemd: running %s", path);
    }
  read_fd_all (pipefd[0], 4096, &out, NULL);
  close (pipefd[0]);
  while (waitpid (child, &status, 0) < 0)
    if (errno != EINTR)
      return moat_fail (err, errno, "systemd: waiting for %s", path);
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 1;
  if (WIFEXITED (status)
      && WEXITSTATUS (status) == CGROUP_SYSTEMD_HELPER_NOTHING)
    return 0;
  if (out)
    out[strcspn (out, "\n")] = '\0';
  if (out && *out)
    return moat_error_setx (err, EIO, "%s", out);
  return moat_error_setx (err, EIO, "systemd: %s %s: moat-dl %s %d", op, rel,
                          WIFEXITED (status) ? "exited with" : "killed by",
                          WIFEXITED (status) ? WEXITSTATUS (status)
                                             : WTERMSIG (status));
}

int
cgroup_systemd_register (struct cgroup *cg, const char *cgroups_path, pid_t pid,
                         const struct spec_resources *res,
                         struct moat_error **err)
{
  cleanup_bus sd_bus *bus = NULL;
  cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
  cleanup_msg sd_bus_message *m = NULL, *reply = NULL;
  cleanup_slot sd_bus_slot *slot = NULL;
  cleanup_free char *slice = NULL, *unit = NULL, *got = NULL;
  struct cgroup_hier *h = cgroup_hier_for (cg, CG_UNIFIED);
  struct job_wait w = { 0 };
  const char *job;
  int r;

  if (!cg_is_systemd_form (cgroups_path, true) || cg->mode != CGROUP_MODE_V2
      || h == NULL || !h->fs->systemd_booted ())
    return 0;
  if (dynlib_static ())
    {
      r = via_moat_dl ("register", cg->rel, cgroups_path, pid, err);
      if (r <= 0 || res == NULL)
        return r;
      r = cg->backend->apply (cg, res, err);
      if (r < 0)
        via_moat_dl ("stop", cg->rel, NULL, 0, NULL);
      return r < 0 ? r : 1;
    }
  r = cg_systemd_unit (cgroups_path, &slice, &unit, err);
  if (r < 0)
    return r;
  r = bus_open (&bus, err);
  if (r < 0)
    return r;

  r = watch_jobs (bus, &slot, &w);
  if (r >= 0)
    r = sym_sd_bus_message_new_method_call (bus, &m, SD_DEST, SD_PATH,
                                            SD_MANAGER, "StartTransientUnit");
  if (r >= 0)
    r = sym_sd_bus_message_append (m, "ss", unit, "fail");
  if (r >= 0)
    r = append_properties (m, h, unit, slice, pid);
  if (r >= 0)
    r = sym_sd_bus_call (bus, m, JOB_TIMEOUT_USEC, &e, &reply);
  if (r >= 0)
    r = sym_sd_bus_message_read (reply, "o", &job);
  if (r >= 0)
    {
      r = job_wait (bus, &w, job, JOB_TIMEOUT_USEC);
      if (r < 0)
        {
          /* The unit may come up later: not with moat's cgroup in it. */
          job_wait_clear (&w);
          r = bus_fail (err, r, NULL, "waiting for the start of", unit);
          stop_unit (bus, unit);
          return r;
        }
    }
  if (r < 0)
    {
      job_wait_clear (&w);
      return bus_fail (err, r, &e, "starting", unit);
    }
  if (strcmp (w.result, "done") != 0)
    {
      r = moat_error_setx (err, EIO, "systemd: starting %s: job %s", unit,
                           w.result);
      job_wait_clear (&w);
      stop_unit (bus, unit);
      return r;
    }
  job_wait_clear (&w);

  /* systemd must have put the unit where moat made the cgroup (and the
   * BPF guard is): a slice whose name is not below the slice the path
   * named lands elsewhere. */
  r = unit_control_group (bus, unit, &got);
  if (r < 0 || got == NULL || strcmp (got, cg->rel) != 0)
    {
      if (r < 0)
        r = bus_fail (err, r, NULL, "reading ControlGroup of", unit);
      else
        r = moat_error_setx (
            err, EINVAL,
            "systemd: unit %s is at %s, not at %s as cgroupsPath "
            "`%s` says",
            unit, got ? got : "(none)", cg->rel, cgroups_path);
      stop_unit (bus, unit);
      return r;
    }
  /* systemd wrote its view of the limits: moat's own values are the law. */
  if (res)
    {
      r = cg->backend->apply (cg, res, err);
      if (r < 0)
        {
          stop_unit (bus, unit);
          return r;
        }
    }
  return 1;
}

/* The unit cgroup rel would be the cgroup of: its last component, when
 * that names a scope or a slice. NULL otherwise. */
static const char *
unit_of_rel (const char *rel)
{
  const char *unit = strrchr (rel, '/');
  size_t len;

  if (unit == NULL)
    return NULL;
  unit++;
  len = strlen (unit);
  if (len <= 6
      || (strcmp (unit + len - 6, ".scope") != 0
          && strcmp (unit + len - 6, ".slice") != 0))
    return NULL;
  return unit;
}

/* Could cg be a unit's cgroup: cgroup v2, systemd running, a unit's name?
 * The name, or NULL (no library is loaded to tell). */
static const char *
unit_of (struct cgroup *cg)
{
  const char *unit = unit_of_rel (cg->rel);

  if (unit == NULL || cg->mode != CGROUP_MODE_V2 || cg->n_hiers == 0
      || !cg->hiers[0].fs->systemd_booted ())
    return NULL;
  return unit;
}

/* Is unit the systemd unit whose cgroup is rel (never a stranger of that
 * name)? 1 with *ret_bus set, else 0. */
static int
find_unit (const char *rel, const char *unit, sd_bus **ret_bus)
{
  cleanup_bus sd_bus *bus = NULL;
  cleanup_free char *got = NULL;

  if (bus_open (&bus, NULL) < 0)
    return 0;
  if (unit_control_group (bus, unit, &got) < 0 || got == NULL
      || strcmp (got, rel) != 0)
    return 0;
  *ret_bus = steal_pointer (&bus);
  return 1;
}

void
cg_systemd_release (struct cgroup *cg)
{
  cleanup_bus sd_bus *bus = NULL;
  const char *unit = unit_of (cg);

  if (unit == NULL)
    return;
  if (dynlib_static ())
    via_moat_dl ("stop", cg->rel, NULL, 0, NULL);
  else if (find_unit (cg->rel, unit, &bus) > 0)
    stop_unit (bus, unit);
}

int
cg_systemd_sync (struct cgroup *cg, struct moat_error **err)
{
  cleanup_bus sd_bus *bus = NULL;
  cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
  cleanup_msg sd_bus_message *m = NULL;
  struct cgroup_hier *h = cgroup_hier_for (cg, CG_UNIFIED);
  const char *unit = unit_of (cg);
  int r;

  if (h == NULL || unit == NULL)
    return 0;
  if (dynlib_static ())
    return via_moat_dl ("sync", cg->rel, NULL, 0, err);
  if (find_unit (cg->rel, unit, &bus) <= 0)
    return 0;
  r = sym_sd_bus_message_new_method_call (bus, &m, SD_DEST, SD_PATH, SD_MANAGER,
                                          "SetUnitProperties");
  if (r >= 0)
    r = sym_sd_bus_message_append (m, "sb", unit, 1);
  if (r >= 0)
    r = sym_sd_bus_message_open_container (m, 'a', "(sv)");
  if (r >= 0)
    r = append_limits (m, h);
  if (r >= 0)
    r = sym_sd_bus_message_close_container (m);
  if (r >= 0)
    r = sym_sd_bus_call (bus, m, JOB_TIMEOUT_USEC, &e, NULL);
  if (r < 0)
    return bus_fail (err, r, &e, "setting the limits of", unit);
  return 1;
}

int
cgroup_systemd_helper (int argc, char **argv, struct moat_error **err)
{
  const char *op = argc > 1 ? argv[1] : "";
  const char *rel = argc > 2 ? argv[2] : "";
  struct cgroup *cg = NULL;
  int pid = 0, r;

  if (strcmp (op, "stop") == 0 && argc == 3)
    {
      cleanup_bus sd_bus *bus = NULL;
      const char *unit = unit_of_rel (rel);
      if (unit == NULL || find_unit (rel, unit, &bus) <= 0)
        return CGROUP_SYSTEMD_HELPER_NOTHING;
      stop_unit (bus, unit);
      return 0;
    }
  if (!((strcmp (op, "register") == 0 && argc == 5
         && parse_int (argv[4], &pid) == 0 && pid > 0)
        || (strcmp (op, "sync") == 0 && argc == 3)))
    return moat_error_setx (err, EINVAL,
                            "usage: moat-dl " CGROUP_SYSTEMD_HELPER_VERB
                            " register CGROUP CGROUPS_PATH PID | sync CGROUP "
                            "| stop CGROUP");
  r = cgroup_open (rel, &cg, err);
  if (r < 0)
    return r;
  if (op[0] == 'r')
    r = cgroup_systemd_register (cg, argv[3], pid, NULL, err);
  else
    r = cg_systemd_sync (cg, err);
  cgroup_free (cg);
  if (r < 0)
    return r;
  return r > 0 ? 0 : CGROUP_SYSTEMD_HELPER_NOTHING;
}

int
cg_systemd_wait_job_on_fd (int fd, const char *job, uint64_t timeout_usec,
                           char **ret_result, struct moat_error **err)
{
  cleanup_bus sd_bus *bus = NULL;
  cleanup_slot sd_bus_slot *slot = NULL;
  struct job_wait w = { 0 };
  int r = libsystemd_load (err);

  if (r < 0)
    {
      close (fd);
      return r;
    }
  r = sym_sd_bus_new (&bus);
  if (r < 0)
    {
      close (fd);
      return moat_fail (err, -r, "systemd: a connection on fd %d", fd);
    }
  r = sym_sd_bus_set_fd (bus, fd, fd);
  if (r >= 0)
    r = sym_sd_bus_start (bus);
  if (r >= 0)
    r = watch_jobs (bus, &slot, &w);
  if (r >= 0)
    r = job_wait (bus, &w, job, timeout_usec);
  if (r >= 0)
    *ret_result = steal_pointer (&w.result);
  job_wait_clear (&w);
  return r < 0 ? moat_fail (err, -r, "systemd: waiting for job %s", job) : 0;
}
