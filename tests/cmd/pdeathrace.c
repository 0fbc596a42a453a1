/* pdeathrace CMD [ARG...]: run CMD (moat) under ptrace and SIGKILL it at
 * the moment one of its children is about to ask for a parent-death signal
 * (prctl(PR_SET_PDEATHSIG, SIG) with SIG != 0), so that the child asks
 * only once CMD is gone, which is what a kill at that instant does. That
 * child then goes on untraced; this program is its subreaper, reaps it and
 * prints how it ended: "child exited N" or "child killed by signal N". It
 * prints "no child asked" and exits 2 if CMD ended without that call, and
 * exits 77 where this system does not permit ptrace (Yama, a sandbox).
 *
 * pdeathrace --at-next-fork CMD [ARG...]: CMD's first child is held when
 * it is about to execve or to wait on a socket for CMD (recvfrom,
 * recvmsg), CMD when it next forks (a session exec's watchdog); once both
 * are held CMD is SIGKILLed and the child reported as above: a child that
 * execs before its parent's fork runs with nothing to clean up after it.
 *
 * pdeathrace --fork-after-child CMD [ARG...]: CMD is held at its next fork
 * after its first child exists until that child has exited or waits on a
 * socket for CMD; then all goes on. Prints "moat exited N" (CMD's status;
 * its own output is its own). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void
die (const char *what)
{
  fprintf (stderr, "pdeathrace: %s: %s\n", what, strerror (errno));
  exit (1);
}

/* Is pid, stopped at a system call's entry, asking for a death signal? */
static int
asks_death_signal (pid_t pid)
{
  struct __ptrace_syscall_info info;

  if (ptrace (PTRACE_GET_SYSCALL_INFO, pid, sizeof (info), &info) <= 0)
    return 0;
  return info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == SYS_prctl
         && info.entry.args[0] == PR_SET_PDEATHSIG && info.entry.args[1] != 0;
}

/* Is pid, stopped at a system call's entry, making one of nrs? */
static int
enters (pid_t pid, const long *nrs, size_t n)
{
  struct __ptrace_syscall_info info;

  if (ptrace (PTRACE_GET_SYSCALL_INFO, pid, sizeof (info), &info) <= 0
      || info.op != PTRACE_SYSCALL_INFO_ENTRY)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (info.entry.nr == (unsigned long)nrs[i])
      return 1;
  return 0;
}

static const long forks[] = { SYS_clone, SYS_clone3, SYS_fork, SYS_vfork };
static const long waits_or_execs[] = { SYS_execve, SYS_recvfrom, SYS_recvmsg };

static int
report_child (pid_t child)
{
  int status;

  /* Gone already (its parent-death signal): reaped below all the same. */
  if (ptrace (PTRACE_DETACH, child, 0, 0) < 0 && errno != ESRCH)
    die ("detaching the child");
  if (TEMP_FAILURE_RETRY (waitpid (child, &status, __WALL)) != child)
    die ("waiting for the child");
  if (WIFEXITED (status))
    printf ("child exited %d\n", WEXITSTATUS (status));
  else
    printf ("child killed by signal %d\n", WTERMSIG (status));
  return 0;
}

/* After CMD's end: what it forked is traced too (a session exec's
 * watchdog, maybe still at the SIGSTOP a new tracee starts with), and this
 * program is the subreaper of its orphans. Each is let go untraced, that
 * first stop dropped, and reaped: one left stopped when this program exits
 * would hold CMD's output open, and whoever reads it would wait forever. A
 * bound all the same: an alarm ends this program after 30 s. */
static void
let_the_rest_go (void)
{
  pid_t pid;
  int status;

  fflush (stdout);
  alarm (30);
  while ((pid = waitpid (-1, &status, __WALL)) > 0 || errno == EINTR)
    if (pid > 0 && WIFSTOPPED (status))
      {
        int sig = WSTOPSIG (status);
        bool keep
            = sig != SIGSTOP && sig != (SIGTRAP | 0x80) && (status >> 16) == 0;
        ptrace (PTRACE_DETACH, pid, 0, keep ? sig : 0);
      }
}

int
main (int argc, char **argv)
{
  const long options = PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE
                       | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK
                       | PTRACE_O_TRACEEXEC;
  pid_t top, child = -1, first = -1;
  int status, at_fork = 0, top_held = 0, first_held = 0, child_first = 0;

  if (argc > 1 && strcmp (argv[1], "--at-next-fork") == 0)
    at_fork = 1;
  if (argc > 1 && strcmp (argv[1], "--fork-after-child") == 0)
    at_fork = child_first = 1;
  if (at_fork)
    {
      argv++;
      argc--;
    }
  if (argc < 2)
    {
      fprintf (stderr, "usage: pdeathrace [--at-next-fork] CMD [ARG...]\n");
      return 1;
    }
  /* CMD's orphans come here, the child among them. */
  if (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
    die ("PR_SET_CHILD_SUBREAPER");
  top = fork ();
  if (top < 0)
    die ("fork");
  if (top == 0)
    {
      if (ptrace (PTRACE_TRACEME, 0, 0, 0) < 0)
        _exit (77);
      raise (SIGSTOP);
      execvp (argv[1], argv + 1);
      die (argv[1]);
    }
  if (waitpid (top, &status, 0) != top)
    die ("waiting for the command to stop");
  if (WIFEXITED (status) && WEXITSTATUS (status) == 77)
    {
      printf ("ptrace not permitted here\n");
      return 77;
    }
  if (!WIFSTOPPED (status))
    die ("waiting for the command to stop");
  if (ptrace (PTRACE_SETOPTIONS, top, 0, options) < 0
      || ptrace (PTRACE_SYSCALL, top, 0, 0) < 0)
    die ("tracing the command");
  for (;;)
    {
      pid_t pid = waitpid (-1, &status, __WALL);
      int sig, deliver = 0;

      if (pid < 0)
        die ("waitpid");
      if (child_first && pid == top
          && (WIFEXITED (status) || WIFSIGNALED (status)))
        {
          printf ("moat exited %d\n",
                  WIFEXITED (status) ? WEXITSTATUS (status) : 128);
          let_the_rest_go ();
          return 0;
        }
      if (child_first == 1 && pid == first
          && (WIFEXITED (status) || WIFSIGNALED (status)))
        {
          first_held = 1; /* gone: nothing to hold */
          child_first = 2;
          if (top_held)
            ptrace (PTRACE_SYSCALL, top, 0, 0);
          continue;
        }
      if (pid == top && (WIFEXITED (status) || WIFSIGNALED (status)))
        {
          if (child < 0)
            {
              printf ("no child asked\n");
              let_the_rest_go ();
              return 2;
            }
          report_child (child);
          let_the_rest_go ();
          return 0;
        }
      if (!WIFSTOPPED (status))
        continue;
      sig = WSTOPSIG (status);
      if (at_fork && pid == top && first < 0
          && (status >> 16 == PTRACE_EVENT_CLONE
              || status >> 16 == PTRACE_EVENT_FORK
              || status >> 16 == PTRACE_EVENT_VFORK))
        {
          unsigned long msg;
          if (ptrace (PTRACE_GETEVENTMSG, top, 0, &msg) == 0)
            first = (pid_t)msg;
        }
      if (at_fork && sig == (SIGTRAP | 0x80) && first > 0)
        {
          if (pid == top && !top_held && enters (pid, forks, 4))
            top_held = 1;
          else if (pid == first && !first_held
                   && enters (pid, waits_or_execs, 3))
            first_held = 1;
          else
            {
              ptrace (PTRACE_SYSCALL, pid, 0, 0);
              continue;
            }
          /* Both held: the child first, then CMD, go on. */
          if (child_first && top_held && first_held)
            {
              ptrace (PTRACE_SYSCALL, first, 0, 0);
              ptrace (PTRACE_SYSCALL, top, 0, 0);
              child_first = 2; /* done: CMD's exit is all that is left */
              continue;
            }
          /* Both held: CMD goes; the child stays held until it is gone. */
          if (top_held && first_held && child < 0)
            {
              child = first;
              kill (top, SIGKILL);
            }
          continue;
        }
      if (sig == (SIGTRAP | 0x80) && pid != top && child < 0 && !at_fork
          && asks_death_signal (pid))
        {
          /* Held here until CMD is gone. */
          child = pid;
          kill (top, SIGKILL);
          continue;
        }
      /* Not a system call or ptrace event stop, nor a new tracee's first
       * SIGSTOP: a signal to deliver. */
      if (sig != (SIGTRAP | 0x80) && (status >> 16) == 0 && sig != SIGSTOP)
        deliver = sig;
      ptrace (PTRACE_SYSCALL, pid, 0, deliver);
    }
}
