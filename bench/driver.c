/* driver: the timing loops of `make bench` (bench/bench.sh does the rest).
 *
 * Each runtime is given as NAME=COMMAND, COMMAND being the binary and its
 * global flags split on spaces ("moat=/x/moat --root /r --config /c").  A
 * runtime named "floor" is bench/floor and takes ROOTFS instead of a verb.
 * The driver makes itself a child subreaper, as containerd's shim does, so
 * that container inits become its children once the runtime exits: it waits
 * for them itself and reaps whatever else is orphaned.
 *
 * Every sample goes to stdout as one TSV line: METRIC RUNTIME VALUE, where
 * times are in microseconds and memory in KiB; failures as METRIC.fail.
 *
 *   driver run   RUNS WARMUP BUNDLE RT...  `run` of the bundle, and floor
 *   driver shim  RUNS WARMUP BUNDLE RT...  create, state, kill (SIGCONT),
 *                                          start, wait, delete
 *   driver scale LEVELS EXTRA BUNDLE RT... LEVELS containers running
 *                                          (e.g. 1,50,200), EXTRA more
 *                                          created at each level, then all
 *                                          deleted; then leftover checks
 *   driver cmd   RUNS WARMUP METRIC RT...  whole commands, "{id}" in them
 *                                          replaced by a fresh id (wall
 *                                          and cpu.METRIC)
 *   driver bpfcount                        number of loaded BPF programs
 *
 * A COMMAND may begin with "mntns=PATH": it then runs in that mount
 * namespace (setns in the child before exec, so nothing extra is timed).
 * The bench runs crun so where crun 1.8 refuses the host's hybrid layout.
 *
 * BENCH_GAP_MS (default 50): the pause before each measured lifecycle.
 * BENCH_METRIC (default "run"): the metric name of driver run's samples.
 * BENCH_SUFFIX (default ""): appended to every metric name, so that one
 * samples file holds both modes (".b2b" for BENCH_GAP_MS=0). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_ARGS 64

struct runtime
{
  const char *name;
  char *argv[MAX_ARGS]; /* binary and global flags, then the verb's */
  int n_global;
  bool floor;
  int mntns_fd; /* -1, or the mount namespace the command runs in */
};

static const char *bundle;
static int gap_ms = 50;
static const char *metric_suffix = "";
static const char *log_path; /* stdout/stderr of every spawned command */
static unsigned long serial;

static uint64_t
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* A pause before each measured lifecycle.  Writing a pid to cgroup.procs
 * takes the kernel's global threadgroup lock, whose first writer waits for
 * an RCU grace period (4-18 ms here) and whose later writers, within a grace
 * period or two, do not.  Back to back, a runtime's cost would depend on
 * which runtime ran just before it; after a pause each starts from the same
 * idle state, as a container start on a quiet host does. */
static void
settle (void)
{
  if (gap_ms > 0)
    usleep ((useconds_t)gap_ms * 1000);
}

static void
emit (const char *metric, const char *rt, uint64_t v)
{
  printf ("%s%s\t%s\t%llu\n", metric, metric_suffix, rt, (unsigned long long)v);
}

static void
emit_fail (const char *metric, const char *rt)
{
  printf ("%s%s.fail\t%s\t1\n", metric, metric_suffix, rt);
}

static void
parse_runtime (char *arg, struct runtime *rt)
{
  char *eq = strchr (arg, '=');
  if (eq == NULL)
    {
      fprintf (stderr, "driver: runtime %s: expected NAME=COMMAND\n", arg);
      exit (2);
    }
  *eq = '\0';
  rt->name = arg;
  rt->floor = strcmp (arg, "floor") == 0;
  rt->mntns_fd = -1;
  for (char *tok = strtok (eq + 1, " "); tok; tok = strtok (NULL, " "))
    {
      if (rt->n_global == 0 && strncmp (tok, "mntns=", 6) == 0)
        {
          rt->mntns_fd = open (tok + 6, O_RDONLY | O_CLOEXEC);
          if (rt->mntns_fd < 0)
            {
              fprintf (stderr, "driver: runtime %s: %s: %s\n", arg, tok + 6,
                       strerror (errno));
              exit (2);
            }
          continue;
        }
      if (rt->n_global >= MAX_ARGS - 8)
        {
          fprintf (stderr, "driver: runtime %s: too many flags\n", arg);
          exit (2);
        }
      rt->argv[rt->n_global++] = tok;
    }
}

/* Run RT's command with ARGS (NULL-terminated) appended, "{id}" in it
 * replaced by SUBST_ID; its wall time and peak RSS (of the command and of the
 * children it reaped, as GNU time's %M). */
struct result
{
  int status;
  uint64_t us;
  uint64_t cpu_us; /* user + system */
  long nvcsw;      /* voluntary context switches: times it blocked */
  long maxrss_kb;
};

static struct result
spawn_cmd (struct runtime *rt, const char *const *args, const char *subst_id)
{
  struct result res = { .status = -1 };
  char *argv[MAX_ARGS];
  int n = 0;
  for (; n < rt->n_global; n++)
    argv[n] = subst_id && strcmp (rt->argv[n], "{id}") == 0 ? (char *)subst_id
                                                            : rt->argv[n];
  for (int i = 0; args[i] && n < MAX_ARGS - 1; i++)
    argv[n++] = (char *)args[i];
  argv[n] = NULL;

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
  /* stdout (state's JSON) is not needed; errors are kept. */
  posix_spawn_file_actions_addopen (&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen (&fa, 2, log_path,
                                    O_WRONLY | O_APPEND | O_CREAT, 0644);

  uint64_t t0 = now_us ();
  pid_t pid;
  volatile int r = 0; /* vfork below */
  if (rt->mntns_fd < 0)
    r = posix_spawnp (&pid, argv[0], &fa, NULL, argv, environ);
  else if ((pid = vfork ()) == 0)
    {
      /* As posix_spawn's child does, plus the setns. */
      int in = open ("/dev/null", O_RDONLY), out = open ("/dev/null", O_WRONLY);
      int err = open (log_path, O_WRONLY | O_APPEND | O_CREAT, 0644);
      if (in < 0 || out < 0 || err < 0 || dup2 (in, 0) < 0 || dup2 (out, 1) < 0
          || dup2 (err, 2) < 0 || setns (rt->mntns_fd, CLONE_NEWNS) < 0)
        _exit (126);
      execvp (argv[0], argv);
      _exit (127);
    }
  else if (pid < 0)
    r = errno;
  posix_spawn_file_actions_destroy (&fa);
  if (r != 0)
    {
      fprintf (stderr, "driver: %s: %s\n", argv[0], strerror (r));
      return res;
    }
  struct rusage ru;
  int st;
  while (wait4 (pid, &st, 0, &ru) < 0)
    if (errno != EINTR)
      return res;
  res.us = now_us () - t0;
  res.maxrss_kb = ru.ru_maxrss;
  res.cpu_us = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u
               + (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  res.nvcsw = ru.ru_nvcsw;
  res.status = WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);
  if (res.status != 0)
    {
      FILE *f = fopen (log_path, "a");
      if (f)
        {
          fprintf (f, "driver: exit %d:", res.status);
          for (int i = 0; argv[i]; i++)
            fprintf (f, " %s", argv[i]);
          fprintf (f, "\n");
          fclose (f);
        }
    }
  return res;
}

static struct result
spawn_verb (struct runtime *rt, const char *const *args)
{
  return spawn_cmd (rt, args, NULL);
}

static void
reap_orphans (void)
{
  while (waitpid (-1, NULL, WNOHANG) > 0)
    ;
}

/* Ids carry the runtime's name, so that bench.sh can tell whose leftovers
 * (state dirs, cgroups, mounts) it finds. */
static void
new_id (char *buf, size_t len, const struct runtime *rt, const char *tag)
{
  const char *prefix = getenv ("BENCH_ID_PREFIX");
  if (prefix)
    snprintf (buf, len, "%s-%s-%s-%lu", prefix, rt->name, tag, serial++);
  else
    snprintf (buf, len, "mb%d-%s-%s-%lu", (int)getpid (), rt->name, tag,
              serial++);
}

static void
force_delete (struct runtime *rt, const char *id)
{
  const char *args[] = { "delete", "--force", id, NULL };
  spawn_verb (rt, args);
}

static long
read_pid_file (const char *path)
{
  FILE *f = fopen (path, "r");
  long pid = -1;
  if (f)
    {
      if (fscanf (f, "%ld", &pid) != 1)
        pid = -1;
      fclose (f);
    }
  return pid;
}

/* Wait for a container's init: as its subreaper when it is our child, else
 * through a pidfd.  *ret_maxrss: its peak RSS (before exec too: exec keeps
 * the high-water mark), 0 if not our child. */
static int
wait_init (pid_t pid, long *ret_maxrss)
{
  struct rusage ru;
  int st;
  *ret_maxrss = 0;
  for (;;)
    {
      if (wait4 (pid, &st, 0, &ru) == pid)
        {
          *ret_maxrss = ru.ru_maxrss;
          return WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);
        }
      if (errno == EINTR)
        continue;
      break;
    }
  int fd = (int)syscall (SYS_pidfd_open, pid, 0);
  if (fd < 0)
    return errno == ESRCH ? 0 : -1;
  struct pollfd p = { .fd = fd, .events = POLLIN };
  while (poll (&p, 1, -1) < 0 && errno == EINTR)
    ;
  close (fd);
  return 0;
}

static void
bench_run (int runs, int warmup, struct runtime *rts, int n_rts)
{
  /* BENCH_METRIC names a variant (another config.json in the bundle). */
  const char *metric
      = getenv ("BENCH_METRIC") ? getenv ("BENCH_METRIC") : "run";
  char cpu_metric[64], rss_metric[64];
  char rootfs[4096];
  snprintf (cpu_metric, sizeof (cpu_metric), "cpu.%s", metric);
  snprintf (rss_metric, sizeof (rss_metric), "rss.%s", metric);
  snprintf (rootfs, sizeof (rootfs), "%s/rootfs", bundle);
  for (int i = 0; i < warmup + runs; i++)
    for (int k = 0; k < n_rts; k++)
      {
        struct runtime *rt = &rts[k];
        char id[128];
        new_id (id, sizeof (id), rt, "run");
        const char *run_args[] = { "run", "--bundle", bundle, id, NULL };
        const char *floor_args[] = { rootfs, NULL };
        settle ();
        struct result res = spawn_verb (rt, rt->floor ? floor_args : run_args);
        reap_orphans ();
        if (res.status != 0)
          {
            emit_fail (metric, rt->name);
            if (!rt->floor)
              force_delete (rt, id);
            continue;
          }
        if (i < warmup)
          continue;
        emit (metric, rt->name, res.us);
        emit (cpu_metric, rt->name, res.cpu_us);
        emit (rss_metric, rt->name, (uint64_t)res.maxrss_kb);
      }
}

/* create, state, kill, start, wait, delete as separate processes. */
static void
bench_shim (int runs, int warmup, const char *dir, struct runtime *rts,
            int n_rts)
{
  for (int i = 0; i < warmup + runs; i++)
    for (int k = 0; k < n_rts; k++)
      {
        struct runtime *rt = &rts[k];
        if (rt->floor)
          continue;
        char id[128], pidfile[4096];
        new_id (id, sizeof (id), rt, "shim");
        snprintf (pidfile, sizeof (pidfile), "%s/%s.pid", dir, id);
        bool keep = i >= warmup;
        const char *create_args[]
            = { "create", "--bundle", bundle, "--pid-file", pidfile, id, NULL };
        const char *state_args[] = { "state", id, NULL };
        /* A signal the waiting init shrugs off: `kill`'s cost and peak RSS
         * (engines call it on every stop), not part of the lifecycle. */
        const char *kill_args[] = { "kill", id, "CONT", NULL };
        const char *start_args[] = { "start", id, NULL };
        const char *delete_args[] = { "delete", id, NULL };

        settle ();
        uint64_t t0 = now_us ();
        struct result c = spawn_verb (rt, create_args);
        long pid = read_pid_file (pidfile);
        unlink (pidfile);
        if (c.status != 0 || pid <= 0)
          {
            emit_fail ("shim", rt->name);
            force_delete (rt, id);
            reap_orphans ();
            continue;
          }
        uint64_t t_created = now_us ();
        struct result s = spawn_verb (rt, state_args);
        struct result kl = spawn_verb (rt, kill_args);
        uint64_t extra_us = now_us () - t_created;
        uint64_t t1 = now_us ();
        struct result st = spawn_verb (rt, start_args);
        uint64_t t2 = now_us ();
        long init_rss;
        int init_status = wait_init ((pid_t)pid, &init_rss);
        uint64_t t3 = now_us ();
        struct result d = spawn_verb (rt, delete_args);
        uint64_t t4 = now_us ();
        reap_orphans ();
        if (s.status != 0 || kl.status != 0 || st.status != 0
            || init_status != 0 || d.status != 0)
          {
            emit_fail ("shim", rt->name);
            force_delete (rt, id);
            continue;
          }
        if (!keep)
          continue;
        /* The shim's lifecycle excludes our extra `state` and `kill`. */
        emit ("shim.total", rt->name, (t1 - t0) - extra_us + (t4 - t1));
        emit ("shim.create", rt->name, c.us);
        emit ("shim.state", rt->name, s.us);
        emit ("shim.kill", rt->name, kl.us);
        emit ("shim.start", rt->name, st.us);
        emit ("shim.wait", rt->name, t3 - t2);
        emit ("shim.delete", rt->name, d.us);
        emit ("cpu.shim.total", rt->name, c.cpu_us + st.cpu_us + d.cpu_us);
        emit ("cpu.create", rt->name, c.cpu_us);
        emit ("cpu.start", rt->name, st.cpu_us);
        emit ("cpu.delete", rt->name, d.cpu_us);
        emit ("blocks.create", rt->name, (uint64_t)c.nvcsw);
        emit ("rss.create", rt->name, (uint64_t)c.maxrss_kb);
        emit ("rss.state", rt->name, (uint64_t)s.maxrss_kb);
        emit ("rss.kill", rt->name, (uint64_t)kl.maxrss_kb);
        emit ("rss.start", rt->name, (uint64_t)st.maxrss_kb);
        emit ("rss.delete", rt->name, (uint64_t)d.maxrss_kb);
        if (init_rss > 0)
          emit ("rss.init", rt->name, (uint64_t)init_rss);
      }
}

/* Whole commands (engines: `docker run --rm ...`), "{id}" a fresh id. */
static void
bench_cmd (int runs, int warmup, const char *metric, struct runtime *rts,
           int n_rts)
{
  for (int i = 0; i < warmup + runs; i++)
    for (int k = 0; k < n_rts; k++)
      {
        struct runtime *rt = &rts[k];
        char id[128];
        const char *none[] = { NULL };
        new_id (id, sizeof (id), rt, "cmd");
        settle ();
        struct result res = spawn_cmd (rt, none, id);
        reap_orphans ();
        if (res.status != 0)
          emit_fail (metric, rt->name);
        else if (i >= warmup)
          {
            char cpu_metric[80];
            snprintf (cpu_metric, sizeof (cpu_metric), "cpu.%s", metric);
            emit (metric, rt->name, res.us);
            emit (cpu_metric, rt->name, res.cpu_us);
          }
      }
}

struct running
{
  char id[128];
  long pid;
};

static int
create_started (struct runtime *rt, const char *dir, struct running *c,
                struct result *ret_create)
{
  char pidfile[4096];
  snprintf (pidfile, sizeof (pidfile), "%s/%s.pid", dir, c->id);
  const char *create_args[]
      = { "create", "--bundle", bundle, "--pid-file", pidfile, c->id, NULL };
  const char *start_args[] = { "start", c->id, NULL };
  struct result r = spawn_verb (rt, create_args);
  if (ret_create)
    *ret_create = r;
  c->pid = read_pid_file (pidfile);
  unlink (pidfile);
  if (r.status != 0 || c->pid <= 0)
    return -1;
  return spawn_verb (rt, start_args).status == 0 ? 0 : -1;
}

/* LEVELS containers running `sleep`; at each level EXTRA more are created
 * (timed), started and force-deleted; at the end all are deleted and the
 * driver checks that none of their processes is left. */
static void
bench_scale (const char *levels, int extra, const char *dir,
             struct runtime *rts, int n_rts)
{
  for (int k = 0; k < n_rts; k++)
    {
      struct runtime *rt = &rts[k];
      if (rt->floor)
        continue;
      int cap = 0, n = 0, failures = 0;
      struct running *cs = NULL;
      char *lv = strdup (levels);
      for (char *tok = strtok (lv, ","); tok; tok = strtok (NULL, ","))
        {
          int level = atoi (tok); /* our own argv, from bench.sh */
          if (level > cap)
            {
              cs = realloc (cs, sizeof (*cs) * (size_t)level);
              cap = level;
            }
          while (n < level)
            {
              new_id (cs[n].id, sizeof (cs[n].id), rt, "scale");
              if (create_started (rt, dir, &cs[n], NULL) < 0)
                {
                  failures++;
                  force_delete (rt, cs[n].id);
                  reap_orphans ();
                  if (failures > 10)
                    break;
                  continue; /* retried under a new id */
                }
              n++;
            }
          if (failures > 10)
            {
              fprintf (stderr, "driver: %s: too many failures at %d\n",
                       rt->name, n);
              break;
            }
          char metric[64], cpu_metric[64];
          snprintf (metric, sizeof (metric), "scale.create@%d", level);
          snprintf (cpu_metric, sizeof (cpu_metric), "scale.cpu.create@%d",
                    level);
          for (int e = 0; e < extra; e++)
            {
              struct running one;
              struct result cr;
              new_id (one.id, sizeof (one.id), rt, "extra");
              settle ();
              if (create_started (rt, dir, &one, &cr) < 0)
                failures++;
              else
                {
                  emit (metric, rt->name, cr.us);
                  emit (cpu_metric, rt->name, cr.cpu_us);
                }
              force_delete (rt, one.id);
              reap_orphans ();
            }
        }
      free (lv);
      uint64_t t0 = now_us ();
      for (int i = 0; i < n; i++)
        force_delete (rt, cs[i].id);
      emit ("scale.delete_all", rt->name, now_us () - t0);
      reap_orphans ();
      int left = 0;
      for (int i = 0; i < n; i++)
        if (cs[i].pid > 0 && kill ((pid_t)cs[i].pid, 0) == 0)
          left++;
      emit ("scale.running", rt->name, (uint64_t)n);
      emit ("scale.failures", rt->name, (uint64_t)failures);
      emit ("scale.procs_left", rt->name, (uint64_t)left);
      free (cs);
      fflush (stdout);
    }
}

static int
bpf_prog_count (void)
{
  union bpf_attr attr;
  int n = 0;
  memset (&attr, 0, sizeof (attr));
  while (syscall (SYS_bpf, BPF_PROG_GET_NEXT_ID, &attr, sizeof (attr)) == 0)
    {
      n++;
      attr.start_id = attr.next_id;
    }
  return n;
}

int
main (int argc, char **argv)
{
  if (argc == 2 && strcmp (argv[1], "bpfcount") == 0)
    {
      printf ("%d\n", bpf_prog_count ());
      return 0;
    }
  if (argc < 6)
    {
      fprintf (stderr, "usage: driver run|shim RUNS WARMUP BUNDLE NAME=CMD...\n"
                       "       driver scale LEVELS EXTRA BUNDLE NAME=CMD...\n"
                       "       driver cmd RUNS WARMUP METRIC NAME=CMD...\n"
                       "       driver bpfcount\n");
      return 2;
    }
  setvbuf (stdout, NULL, _IOLBF, 0);
  if (prctl (PR_SET_CHILD_SUBREAPER, 1) < 0)
    {
      perror ("driver: PR_SET_CHILD_SUBREAPER");
      return 1;
    }
  bundle = argv[4];
  if (getenv ("BENCH_GAP_MS"))
    gap_ms = atoi (getenv ("BENCH_GAP_MS"));
  if (getenv ("BENCH_SUFFIX"))
    metric_suffix = getenv ("BENCH_SUFFIX");
  const char *dir = getenv ("BENCH_TMP") ? getenv ("BENCH_TMP") : "/tmp";
  static char logbuf[4096];
  snprintf (logbuf, sizeof (logbuf), "%s/driver.log", dir);
  log_path = logbuf;

  int n_rts = argc - 5;
  struct runtime *rts = calloc ((size_t)n_rts, sizeof (*rts));
  for (int i = 0; i < n_rts; i++)
    parse_runtime (argv[5 + i], &rts[i]);

  if (strcmp (argv[1], "run") == 0)
    bench_run (atoi (argv[2]), atoi (argv[3]), rts, n_rts);
  else if (strcmp (argv[1], "shim") == 0)
    bench_shim (atoi (argv[2]), atoi (argv[3]), dir, rts, n_rts);
  else if (strcmp (argv[1], "cmd") == 0)
    bench_cmd (atoi (argv[2]), atoi (argv[3]), argv[4], rts, n_rts);
  else if (strcmp (argv[1], "scale") == 0)
    bench_scale (argv[2], atoi (argv[3]), dir, rts, n_rts);
  else
    {
      fprintf (stderr, "driver: unknown mode %s\n", argv[1]);
      return 2;
    }
  reap_orphans ();
  return 0;
}
