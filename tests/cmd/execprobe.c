/* execprobe: can a container run what it writes at run time (G13), and do
 * the things that must keep working (POSIX shared memory and semaphores,
 * JIT memory) still work? Static, libc only: it runs in a busybox rootfs.
 *
 *   execprobe OP [ARGS]
 *
 * prints "ok" and exits 0, or "LABEL: STRERROR (errno N)" and exits 1; a
 * usage error exits 2. A copy it runs prints nothing and exits 0.
 *
 *   copy-exec DIR        copy this program to DIR, execve the copy
 *   memfd-exec [seal|exec]  memfd_create (plain, MFD_NOEXEC_SEAL or
 *                        MFD_EXEC), copy this program in, execveat it
 *   memfd-jit [seal]     memfd_create, map it twice (rw and r-x), run code
 *                        written through the first in the second
 *   anon-jit             mmap anonymous rw memory, write code, mprotect it
 *                        r-x, run it
 *   shm                  shm_open + ftruncate + mmap in /dev/shm, unlink
 *   sem                  sem_open, sem_wait, sem_post, sem_unlink (what
 *                        Python's multiprocessing does) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

static int
usage (void)
{
  fputs ("usage: execprobe copy-exec DIR | memfd-exec [seal|exec] | "
         "memfd-jit [seal] | anon-jit | shm | sem\n",
         stderr);
  return 2;
}

static int
fail (const char *label)
{
  int e = errno;
  printf ("%s: %s (errno %d)\n", label, strerror (e), e);
  return 1;
}

static int
ok (void)
{
  puts ("ok");
  return 0;
}

/* Copy /proc/self/exe into fd. */
static int
copy_self (int fd)
{
  char buf[65536];
  ssize_t n;
  int in = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);

  if (in < 0)
    return -1;
  while ((n = read (in, buf, sizeof (buf))) > 0)
    if (write (fd, buf, (size_t)n) != n)
      {
        close (in);
        return -1;
      }
  close (in);
  return n < 0 ? -1 : 0;
}

/* Run the copy in a child: its exec's errno comes back over a pipe. */
static int
run_child (int dirfd, const char *path, int flags, const char *label)
{
  int pfd[2], e = 0, status;
  pid_t pid;

  if (pipe2 (pfd, O_CLOEXEC) < 0)
    return fail ("pipe");
  pid = fork ();
  if (pid < 0)
    return fail ("fork");
  if (pid == 0)
    {
      char *argv[] = { "execprobe", "child", NULL };
      char *envp[] = { NULL };
      syscall (SYS_execveat, dirfd, path, argv, envp, flags);
      e = errno;
      if (write (pfd[1], &e, sizeof (e)) < 0)
        _exit (3);
      _exit (1);
    }
  close (pfd[1]);
  if (read (pfd[0], &e, sizeof (e)) != sizeof (e))
    e = 0;
  close (pfd[0]);
  waitpid (pid, &status, 0);
  if (e != 0)
    {
      errno = e;
      return fail (label);
    }
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      printf ("%s: the copy failed (status %d)\n", label, status);
      return 1;
    }
  return ok ();
}

static int
copy_exec (const char *dir)
{
  char path[4096], label[4200];
  int fd;

  snprintf (path, sizeof (path), "%s/execprobe-copy-%d", dir, getpid ());
  snprintf (label, sizeof (label), "exec %s", path);
  fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  if (fd < 0)
    {
      snprintf (label, sizeof (label), "write %s", path);
      return fail (label);
    }
  if (copy_self (fd) < 0)
    return fail ("copy");
  close (fd);
  fd = run_child (AT_FDCWD, path, 0, label);
  unlink (path);
  return fd;
}

static int
memfd_exec (const char *how)
{
  unsigned flags = MFD_CLOEXEC;
  int fd;

  if (how && strcmp (how, "seal") == 0)
    flags |= MFD_NOEXEC_SEAL;
  else if (how && strcmp (how, "exec") == 0)
    flags |= MFD_EXEC;
  else if (how)
    return usage ();
  fd = (int)syscall (SYS_memfd_create, "execprobe", flags);
  if (fd < 0)
    return fail ("memfd_create");
  if (copy_self (fd) < 0)
    return fail ("copy");
  /* The kernel execs a memfd that was written to only once no fd of it
   * is open for writing: reopen it read-only, as fexecve users do. */
  {
    char p[64];
    int ro;
    snprintf (p, sizeof (p), "/proc/self/fd/%d", fd);
    ro = open (p, O_RDONLY | O_CLOEXEC);
    if (ro < 0)
      return fail ("reopen");
    close (fd);
    fd = ro;
  }
  return run_child (fd, "", AT_EMPTY_PATH, "execveat(memfd)");
}

/* x86-64: mov eax, 42; ret. Elsewhere the mapping is made but not run. */
static const unsigned char code[] = { 0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3 };

static int
call_code (void *x)
{
#if defined(__x86_64__)
  int (*fn) (void) = (int (*) (void))x;
  if (fn () != 42)
    {
      puts ("jit: wrong answer");
      return 1;
    }
#else
  (void)x;
#endif
  return ok ();
}

static int
memfd_jit (const char *how)
{
  unsigned flags = MFD_CLOEXEC;
  void *w, *x;
  int fd;

  if (how && strcmp (how, "seal") == 0)
    flags |= MFD_NOEXEC_SEAL;
  else if (how)
    return usage ();
  fd = (int)syscall (SYS_memfd_create, "jit", flags);
  if (fd < 0)
    return fail ("memfd_create");
  if (ftruncate (fd, 4096) < 0)
    return fail ("ftruncate");
  w = mmap (NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (w == MAP_FAILED)
    return fail ("mmap(rw)");
  x = mmap (NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
  if (x == MAP_FAILED)
    return fail ("mmap(r-x)");
  memcpy (w, code, sizeof (code));
  return call_code (x);
}

static int
anon_jit (void)
{
  void *m = mmap (NULL, 4096, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return fail ("mmap");
  memcpy (m, code, sizeof (code));
  if (mprotect (m, 4096, PROT_READ | PROT_EXEC) < 0)
    return fail ("mprotect(r-x)");
  return call_code (m);
}

static int
shm (void)
{
  char name[64];
  void *m;
  int fd;

  snprintf (name, sizeof (name), "/execprobe-%d", getpid ());
  fd = shm_open (name, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
    return fail ("shm_open");
  shm_unlink (name);
  if (ftruncate (fd, 1 << 20) < 0)
    return fail ("ftruncate");
  m = mmap (NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED)
    return fail ("mmap");
  memset (m, 1, 1 << 20);
  return ok ();
}

static int
sem (void)
{
  char name[64];
  sem_t *s;

  snprintf (name, sizeof (name), "/execprobe-%d", getpid ());
  s = sem_open (name, O_CREAT | O_EXCL, 0600, 1);
  if (s == SEM_FAILED)
    return fail ("sem_open");
  sem_unlink (name);
  if (sem_wait (s) < 0)
    return fail ("sem_wait");
  if (sem_post (s) < 0)
    return fail ("sem_post");
  return ok ();
}

int
main (int argc, char **argv)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  if (argc < 2)
    return usage ();
  if (strcmp (argv[1], "child") == 0)
    return 0;
  if (strcmp (argv[1], "copy-exec") == 0 && argc == 3)
    return copy_exec (argv[2]);
  if (strcmp (argv[1], "memfd-exec") == 0 && argc <= 3)
    return memfd_exec (argv[2]);
  if (strcmp (argv[1], "memfd-jit") == 0 && argc <= 3)
    return memfd_jit (argv[2]);
  if (strcmp (argv[1], "anon-jit") == 0 && argc == 2)
    return anon_jit ();
  if (strcmp (argv[1], "shm") == 0 && argc == 2)
    return shm ();
  if (strcmp (argv[1], "sem") == 0 && argc == 2)
    return sem ();
  return usage ();
}
