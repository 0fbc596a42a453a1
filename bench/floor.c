/* floor: the least any container runtime must do to run /bin/true in a
 * bundle: clone into new mount, pid, network, IPC and UTS namespaces,
 * pivot_root into the rootfs, mount /proc, exec, wait.  No config, no
 * cgroups, no state, no security profile.  `make bench` times it next to the
 * runtimes as the lower bound.
 *
 * usage: floor ROOTFS [COMMAND [ARGS...]]   (default COMMAND: /bin/true) */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *rootfs;
static char **command;
static char stack[64 * 1024] __attribute__ ((aligned (16)));

static int
die (const char *what)
{
  fprintf (stderr, "floor: %s: %s\n", what, strerror (errno));
  return 127;
}

static int
child (void *arg)
{
  (void)arg;
  /* Keep our mounts out of the host's mount namespace. */
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return die ("make / private");
  /* pivot_root needs the new root to be a mount point. */
  if (mount (rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return die ("bind rootfs");
  if (chdir (rootfs) < 0)
    return die ("chdir rootfs");
  if (syscall (SYS_pivot_root, ".", ".") < 0)
    return die ("pivot_root");
  if (umount2 (".", MNT_DETACH) < 0)
    return die ("detach old root");
  if (chdir ("/") < 0)
    return die ("chdir /");
  if (mount ("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)
      < 0)
    return die ("mount /proc");
  execv (command[0], command);
  return die (command[0]);
}

int
main (int argc, char **argv)
{
  static char *default_command[] = { "/bin/true", NULL };
  if (argc < 2)
    {
      fprintf (stderr, "usage: floor ROOTFS [COMMAND [ARGS...]]\n");
      return 2;
    }
  rootfs = argv[1];
  command = argc > 2 ? argv + 2 : default_command;

  int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
              | CLONE_NEWUTS | SIGCHLD;
  pid_t pid = clone (child, stack + sizeof (stack), flags, NULL);
  if (pid < 0)
    return die ("clone");
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return die ("waitpid");
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  return 128 + WTERMSIG (status);
}
