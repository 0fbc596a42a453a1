/* pidreuse [--at-ns-open | --at-open FILE] [--new-netns]
 *          [--map-root-to ID | --in-userns PATH] [--after CHECK]
 *          PREP CMD [ARG...]:
 * give a pid to a new process while CMD (moat) is between its look at the
 * pid and its pidfd_open of it (or, with --at-ns-open, its first open of a
 * file under /proc/PID/ns/; with --at-open, of /proc/PID/FILE).
 *
 * Starts a victim V (a child that waits forever), runs `sh -c PREP` with
 * VICTIM_PID and VICTIM_START (V's start time, /proc/PID/stat field 22) in
 * its environment (PREP forges a container's state to name V), then runs
 * CMD under ptrace. When CMD is about to open V's pid, V is killed,
 * reaped, and a new waiting process W is made with the same pid (clone3
 * with set_tid): as if V had exited and the kernel had handed its pid on.
 * Once CMD has exited, prints "moat exited N", then "victim alive" if the
 * process that now has the pid (W, or V if CMD never opened it) is still
 * running, or "victim killed by signal N", and "pid reused" or "pid not
 * reused". --new-netns: W has a network namespace of its own;
 * --map-root-to: W has a user namespace of its own, whose root is host id
 * ID (uid and gid); --in-userns: V and W join the user namespace at PATH;
 * --after: `sh -c CHECK` runs once CMD has exited, while W still runs (its
 * pid in VICTIM_PID). Exits 77 where ptrace or set_tid is not permitted. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static void
die (const char *what)
{
  fprintf (stderr, "pidreuse: %s: %s\n", what, strerror (errno));
  exit (1);
}

/* --in-userns: the user namespace V and W join before they wait. */
static const char *waiter_userns;

/* In a waiter: join waiter_userns, say so (its end of READY closed), wait. */
static void
wait_forever (int ready[2])
{
  close (ready[0]);
  if (waiter_userns)
    {
      int fd = open (waiter_userns, O_RDONLY | O_CLOEXEC);
      if (fd < 0 || setns (fd, CLONE_NEWUSER) < 0)
        _exit (1);
      close (fd);
    }
  close (ready[1]);
  for (;;)
    pause ();
}

/* In the parent: the waiter pid has joined its namespace and waits. */
static void
waiter_ready (pid_t pid, int ready[2])
{
  char byte;

  close (ready[1]);
  if (read (ready[0], &byte, 1) != 0 || waitpid (pid, NULL, WNOHANG) != 0)
    {
      errno = EINVAL;
      die ("the waiter did not start (joining its user namespace?)");
    }
  close (ready[0]);
}

static pid_t
start_waiter (void)
{
  int ready[2];
  pid_t pid;

  if (pipe2 (ready, O_CLOEXEC) < 0)
    die ("pipe");
  pid = fork ();
  if (pid < 0)
    die ("fork");
  if (pid == 0)
    wait_forever (ready);
  waiter_ready (pid, ready);
  return pid;
}

/* A new waiting child whose pid is pid (free: its holder was reaped). */
/* W's user namespace maps its root onto host id ID: written before CMD
 * goes on, so CMD reads the maps whole. */
static void
map_root_to (pid_t pid, const char *id)
{
  static const char *const maps[] = { "uid_map", "gid_map" };
  char path[64], line[64];

  snprintf (line, sizeof (line), "0 %s 1\n", id);
  for (size_t i = 0; i < 2; i++)
    {
      FILE *f;
      snprintf (path, sizeof (path), "/proc/%d/%s", pid, maps[i]);
      f = fopen (path, "we");
      if (f == NULL || fputs (line, f) < 0 || fclose (f) != 0)
        die (path);
    }
}

static pid_t
start_waiter_as (pid_t pid, int new_netns, const char *root_id)
{
  struct clone_args args = { 0 };
  pid_t tid = pid;
  int ready[2];
  long r;

  args.flags = (new_netns ? CLONE_NEWNET : 0) | (root_id ? CLONE_NEWUSER : 0);
  args.exit_signal = SIGCHLD;
  args.set_tid = (uint64_t)(uintptr_t)&tid;
  args.set_tid_size = 1;
  if (pipe2 (ready, O_CLOEXEC) < 0)
    die ("pipe");
  r = syscall (SYS_clone3, &args, sizeof (args));
  if (r < 0 && (errno == EPERM || errno == ENOSYS))
    {
      printf ("set_tid not permitted here\n");
      exit (77);
    }
  if (r < 0)
    die ("clone3 with set_tid");
  if (r == 0)
    wait_forever (ready);
  waiter_ready ((pid_t)r, ready);
  if (root_id)
    map_root_to ((pid_t)r, root_id);
  return (pid_t)r;
}

static int
read_starttime (pid_t pid, unsigned long long *ret)
{
  char path[64], buf[4096];
  FILE *f;
  size_t n;
  char *p;

  snprintf (path, sizeof (path), "/proc/%d/stat", pid);
  f = fopen (path, "re");
  if (f == NULL)
    return -1;
  n = fread (buf, 1, sizeof (buf) - 1, f);
  fclose (f);
  buf[n] = '\0';
  p = strrchr (buf, ')');
  for (int field = 2; p && field < 22; field++)
    p = strchr (p + 1, ' ');
  if (p == NULL || sscanf (p + 1, "%llu", ret) != 1)
    return -1;
  return 0;
}

/* Is CMD, stopped at a system call's entry, about to pidfd_open pid? */
static int
opens_pidfd_of (pid_t cmd, pid_t pid)
{
  struct __ptrace_syscall_info info;

  if (ptrace (PTRACE_GET_SYSCALL_INFO, cmd, sizeof (info), &info) <= 0)
    return 0;
  return info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == SYS_pidfd_open
         && (pid_t)info.entry.args[0] == pid;
}

/* Is CMD, stopped at a system call's entry, about to open /proc/PID/FILE
 * (FILE a prefix: "ns/" is any file under /proc/PID/ns/)? */
static int
opens_proc_file_of (pid_t cmd, pid_t pid, const char *file)
{
  struct __ptrace_syscall_info info;
  char prefix[64], path[64] = "";
  struct iovec local = { path, sizeof (path) - 1 }, remote;

  if (ptrace (PTRACE_GET_SYSCALL_INFO, cmd, sizeof (info), &info) <= 0
      || info.op != PTRACE_SYSCALL_INFO_ENTRY
      || (info.entry.nr != SYS_openat && info.entry.nr != SYS_open))
    return 0;
  remote.iov_base
      = (void *)(uintptr_t)info.entry.args[info.entry.nr == SYS_openat];
  remote.iov_len = sizeof (path) - 1;
  /* A short read (the path ends near the end of a page) is fine. */
  if (process_vm_readv (cmd, &local, 1, &remote, 1, 0) <= 0)
    return 0;
  snprintf (prefix, sizeof (prefix), "/proc/%d/%s", pid, file);
  return strncmp (path, prefix, strlen (prefix)) == 0;
}

static pid_t
run_traced (char **argv)
{
  int status;
  pid_t cmd = fork ();

  if (cmd < 0)
    die ("fork");
  if (cmd == 0)
    {
      if (ptrace (PTRACE_TRACEME, 0, 0, 0) < 0)
        _exit (77);
      raise (SIGSTOP);
      execvp (argv[0], argv);
      die (argv[0]);
    }
  if (waitpid (cmd, &status, 0) != cmd)
    die ("waiting for the command to stop");
  if (WIFEXITED (status) && WEXITSTATUS (status) == 77)
    {
      printf ("ptrace not permitted here\n");
      exit (77);
    }
  if (ptrace (PTRACE_SETOPTIONS, cmd, 0,
              PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)
          < 0
      || ptrace (PTRACE_SYSCALL, cmd, 0, 0) < 0)
    die ("tracing the command");
  return cmd;
}

int
main (int argc, char **argv)
{
  unsigned long long start;
  char text[32];
  pid_t victim, cmd;
  int status, reused = 0, new_netns = 0;
  const char *after = NULL, *at_open = NULL, *root_id = NULL;

  for (; argc > 1 && strncmp (argv[1], "--", 2) == 0; argv++, argc--)
    if (strcmp (argv[1], "--at-ns-open") == 0)
      at_open = "ns/";
    else if (strcmp (argv[1], "--new-netns") == 0)
      new_netns = 1;
    else if (strcmp (argv[1], "--after") == 0 && argc > 2)
      after = (++argv, --argc, argv[1]);
    else if (strcmp (argv[1], "--at-open") == 0 && argc > 2)
      at_open = (++argv, --argc, argv[1]);
    else if (strcmp (argv[1], "--map-root-to") == 0 && argc > 2)
      root_id = (++argv, --argc, argv[1]);
    else if (strcmp (argv[1], "--in-userns") == 0 && argc > 2)
      waiter_userns = (++argv, --argc, argv[1]);
    else
      break;
  if (argc < 3)
    {
      fprintf (stderr, "usage: pidreuse [--at-ns-open | --at-open FILE] "
                       "[--new-netns] [--map-root-to ID | --in-userns PATH] "
                       "[--after CHECK] PREP CMD [ARG...]\n");
      return 2;
    }
  victim = start_waiter ();
  if (read_starttime (victim, &start) < 0)
    die ("reading the victim's start time");
  snprintf (text, sizeof (text), "%d", victim);
  setenv ("VICTIM_PID", text, 1);
  snprintf (text, sizeof (text), "%llu", start);
  setenv ("VICTIM_START", text, 1);
  status = system (argv[1]);
  if (status != 0)
    {
      fprintf (stderr, "pidreuse: PREP failed (%d)\n", status);
      kill (victim, SIGKILL);
      return 1;
    }
  cmd = run_traced (argv + 2);
  for (;;)
    {
      int sig, deliver = 0;

      if (TEMP_FAILURE_RETRY (waitpid (cmd, &status, __WALL)) != cmd)
        die ("waitpid");
      if (WIFEXITED (status) || WIFSIGNALED (status))
        break;
      sig = WSTOPSIG (status);
      if (sig == (SIGTRAP | 0x80) && !reused
          && (at_open ? opens_proc_file_of (cmd, victim, at_open)
                      : opens_pidfd_of (cmd, victim)))
        {
          if (kill (victim, SIGKILL) < 0 || waitpid (victim, NULL, 0) != victim)
            die ("ending the victim");
          if (start_waiter_as (victim, new_netns, root_id) != victim)
            die ("the new process did not get the pid");
          reused = 1;
        }
      if (sig != (SIGTRAP | 0x80) && (status >> 16) == 0 && sig != SIGSTOP)
        deliver = sig;
      ptrace (PTRACE_SYSCALL, cmd, 0, deliver);
    }
  printf ("moat exited %d\n",
          WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status));
  fflush (stdout);
  if (after && system (after) != 0)
    printf ("check failed\n");
  if (waitpid (victim, &status, WNOHANG) == 0)
    {
      printf ("victim alive\n");
      kill (victim, SIGKILL);
      waitpid (victim, &status, 0);
    }
  else
    printf ("victim killed by signal %d\n",
            WIFSIGNALED (status) ? WTERMSIG (status) : 0);
  printf ("pid %s\n", reused ? "reused" : "not reused");
  return 0;
}
