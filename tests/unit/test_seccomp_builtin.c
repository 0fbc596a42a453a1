/* runtime/seccomp_builtin.c: the G8 filter, checked from a child that
 * loaded it (alone, stacked with a config filter, and with every engine
 * fixture's filter), and its cache. Fixtures are read from $MOAT_FIXTURES,
 * else tests/fixtures (make runs tests from the top). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "seccomp_child.h"

static struct seccomp_prog builtin;

static int
setup_builtin (void **state)
{
  struct moat_error *err = NULL;

  if (seccomp_builtin (NULL, &builtin, &err) < 0)
    {
      fprintf (stderr, "seccomp_builtin: %s\n", err->msg);
      return -1;
    }
  return 0;
}

static int
teardown_builtin (void **state)
{
  seccomp_prog_clear (&builtin);
  return 0;
}

static void *
thread_main (void *arg)
{
  return arg;
}

/* The child of a successful clone leaves at once. */
static long
reaped (long pid)
{
  if (pid == 0)
    _exit (0);
  if (pid > 0)
    waitpid ((pid_t)pid, NULL, 0);
  return pid;
}

static long
raw_clone (unsigned long flags)
{
  return reaped (syscall (SYS_clone, flags | SIGCHLD, 0, 0, 0, 0));
}

static long
raw_clone3 (void)
{
  struct clone_args args = { .exit_signal = SIGCHLD };
  return reaped (syscall (SYS_clone3, &args, sizeof (args)));
}

static void
body_builtin_allows (int fd)
{
  pthread_t t;
  void *out = NULL;
  pid_t child;
  int status = -1;

  EXPECT_OK (fd, getpid ());
  EXPECT_OK (fd, socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_OK (fd, socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  EXPECT_OK (fd, socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  errno = 0;
  if (socket (AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0) < 0
      && errno != EAFNOSUPPORT)
    child_fail (fd, "socket(AF_INET6): errno %d", errno);
  EXPECT_OK (fd, socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
                             (int[2]){ 0, 0 }));
  EXPECT_OK (fd, syscall (SYS_personality, 0xffffffffUL));
  EXPECT_OK (fd, syscall (SYS_personality, 0UL));
  /* ioctl reaches the kernel for every request but TIOCSTI and TIOCLINUX,
   * their neighbours and high-bit forms of other requests included: a
   * pipe answers ENOTTY to a terminal request, and FIONREAD. */
  {
    int p[2], n = -1;
    EXPECT_OK (fd, pipe2 (p, O_CLOEXEC));
    EXPECT_OK (fd, syscall (SYS_ioctl, p[0], (unsigned long)FIONREAD, &n));
    EXPECT_OK (fd, syscall (SYS_ioctl, p[0], (1UL << 32) | FIONREAD, &n));
    EXPECT_ERRNO (fd, syscall (SYS_ioctl, p[0], (unsigned long)TIOCGWINSZ, &n),
                  ENOTTY);
    EXPECT_ERRNO (fd, syscall (SYS_ioctl, p[0], TIOCSTI ^ 1UL, &n), ENOTTY);
    EXPECT_ERRNO (fd, syscall (SYS_ioctl, p[0], TIOCSTI ^ (1UL << 31), &n),
                  ENOTTY);
    EXPECT_ERRNO (fd, syscall (SYS_ioctl, p[0], TIOCLINUX ^ 2UL, &n), ENOTTY);
  }
  /* fork: clone without namespace flags */
  child = fork ();
  if (child == 0)
    _exit (7);
  if (child < 0 || waitpid (child, &status, 0) != child || !WIFEXITED (status)
      || WEXITSTATUS (status) != 7)
    child_fail (fd, "fork: pid %d status %#x errno %d", child, status, errno);
  EXPECT_OK (fd, raw_clone (0));
  /* glibc tries clone3, gets ENOSYS, falls back to clone. */
  if (pthread_create (&t, NULL, thread_main, &status) != 0
      || pthread_join (t, &out) != 0 || out != &status)
    child_fail (fd, "pthread_create/join failed");
}

static void
body_builtin_denies (int fd)
{
  struct io_uring_params uring = { 0 };
  union bpf_attr bpf = { .map_type = BPF_MAP_TYPE_ARRAY,
                         .key_size = 4,
                         .value_size = 4,
                         .max_entries = 1 };
  struct perf_event_attr perf = { .size = sizeof (perf),
                                  .type = PERF_TYPE_SOFTWARE,
                                  .config = PERF_COUNT_SW_CPU_CLOCK,
                                  .disabled = 1 };

  /* unknown and new syscalls: ENOSYS */
  EXPECT_ERRNO (fd, syscall (1000), ENOSYS);
  EXPECT_ERRNO (fd, raw_clone3 (), ENOSYS);
  EXPECT_ERRNO (fd, syscall (SYS_personality, 0x0040000UL), ENOSYS);
  /* namespaces */
  EXPECT_ERRNO (fd, unshare (CLONE_NEWUSER), EPERM);
  EXPECT_ERRNO (fd, unshare (CLONE_NEWNET), EPERM);
  EXPECT_ERRNO (fd, unshare (CLONE_FILES), EPERM);
  EXPECT_ERRNO (fd, setns (0, 0), EPERM);
  EXPECT_ERRNO (fd, raw_clone (CLONE_NEWUSER), EPERM);
  EXPECT_ERRNO (fd, raw_clone (CLONE_NEWNET), EPERM);
  EXPECT_ERRNO (fd, raw_clone (CLONE_NEWNS | CLONE_NEWPID), EPERM);
  EXPECT_ERRNO (fd, raw_clone (CLONE_NEWCGROUP), EPERM);
  /* socket families */
  EXPECT_ERRNO (fd, socket (AF_VSOCK, SOCK_STREAM, 0), EPERM);
  EXPECT_ERRNO (fd, socket (AF_ALG, SOCK_SEQPACKET, 0), EPERM);
  EXPECT_ERRNO (fd, socket (AF_PACKET, SOCK_RAW, 0), EPERM);
  EXPECT_ERRNO (fd, socket (AF_NETLINK, SOCK_RAW, NETLINK_AUDIT), EPERM);
  EXPECT_ERRNO (fd, socket (AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG), EPERM);
  EXPECT_ERRNO (fd, socket (AF_CAN, SOCK_RAW, 1), EPERM);
  EXPECT_ERRNO (fd, socket (AF_UNSPEC, SOCK_STREAM, 0), EPERM);
  EXPECT_ERRNO (fd, socket (AF_KEY, SOCK_RAW, 2), EPERM);
  EXPECT_ERRNO (fd, socketpair (AF_VSOCK, SOCK_STREAM, 0, (int[2]){ 0, 0 }),
                EPERM);
  /* The kernel reads an int: junk in the upper half must not slip past. */
  EXPECT_ERRNO (
      fd, syscall (SYS_socket, (1UL << 32) | AF_VSOCK, SOCK_STREAM, 0), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_socket, (1UL << 32) | AF_INET, SOCK_STREAM, 0),
                EPERM);
  EXPECT_ERRNO (
      fd,
      syscall (SYS_socket, AF_NETLINK, SOCK_RAW, (1UL << 32) | NETLINK_ROUTE),
      EPERM);
  /* the named syscalls of G8 */
  EXPECT_ERRNO (fd, syscall (SYS_io_uring_setup, 1, &uring), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_userfaultfd, O_CLOEXEC), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_bpf, BPF_MAP_CREATE, &bpf, sizeof (bpf)),
                EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_perf_event_open, &perf, 0, -1, -1, 0), EPERM);
  EXPECT_ERRNO (
      fd,
      syscall (SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0),
      EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_add_key, "user", "moat", "x", 1, 0), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_request_key, "user", "moat", NULL, 0), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0),
                EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_process_vm_readv, getppid (), 0, 0, 0, 0, 0),
                EPERM);
  /* Arguments that would fail even unfiltered: nothing happens if the
   * filter is wrong, but then the errno is not EPERM. */
  EXPECT_ERRNO (fd, mount (NULL, "/nonexistent-moat", "tmpfs", 0, NULL), EPERM);
  EXPECT_ERRNO (fd, umount2 ("/nonexistent-moat", 0), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_fsopen, "nonexistent-moat", 0), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_open_tree, -1, "/nonexistent-moat", 0), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_move_mount, -1, "", -1, "", 0), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_pivot_root, "/nonexistent-moat", "/x"), EPERM);
  EXPECT_ERRNO (fd, chroot ("/nonexistent-moat"), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_kexec_load, 0, 0, NULL, 0xdead0000UL), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_init_module, NULL, 0, ""), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_finit_module, -1, "", 0), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_delete_module, "nonexistent_moat", 0), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_reboot, 0, 0, 0, NULL), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_swapon, NULL, 0), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_open_by_handle_at, -1, NULL, 0), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_iopl, 99), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_syslog, 99, NULL, 0), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_modify_ldt, 99, NULL, 0), EPERM);
  /* G10: on any fd, whatever the upper 32 bits of the request (the kernel
   * drops them). */
  EXPECT_ERRNO (fd, syscall (SYS_ioctl, 0, (unsigned long)TIOCSTI, "x"), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_ioctl, 0, (1UL << 32) | TIOCSTI, "x"), EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_ioctl, 0, ~0xffffffffUL | TIOCSTI, "x"),
                EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_ioctl, 0, (unsigned long)TIOCLINUX, "\7"),
                EPERM);
  EXPECT_ERRNO (fd, syscall (SYS_ioctl, 0, (1UL << 63) | TIOCLINUX, "\7"),
                EPERM);
}

static void
test_builtin_allows_ordinary_work (void **state)
{
  assert_true (builtin.n_insns > 0);
  assert_int_equal (builtin.flags, 0);
  assert_child_passes (&builtin, NULL, body_builtin_allows);
}

static void
test_builtin_denies (void **state)
{
  assert_child_passes (&builtin, NULL, body_builtin_denies);
}

#if defined(__x86_64__)
static long
int80_getpid (void)
{
  long r;
  __asm__ volatile("int $0x80"
                   : "=a"(r)
                   : "a"(20L /* i386 getpid */)
                   : "memory", "cc", "r8", "r9", "r10", "r11");
  return r;
}

static void
body_int80 (int fd)
{
  int80_getpid ();
  child_fail (fd, "an i386 syscall returned");
}

static void
body_x32 (int fd)
{
  syscall (0x40000000 /* __X32_SYSCALL_BIT */ | SYS_getpid);
  child_fail (fd, "an x32 syscall returned");
}

/* i386 and x32 syscalls from a 64-bit process: the bad-arch action kills
 * (the filter decides before the kernel looks at whether it has x32). */
static void
test_builtin_kills_other_abis (void **state)
{
  assert_child_killed (&builtin, NULL, body_x32, SIGSYS);
  if (int80_getpid () != getpid ())
    skip (); /* no IA32 emulation in this kernel */
  assert_child_killed (&builtin, NULL, body_int80, SIGSYS);
}
#endif

/* ---- no set-user-ID or set-group-ID bit (G12) ---- */

static char suid_dir[] = "/tmp/moat-test-suid-XXXXXX";

/* A path in suid_dir, in one of a few rotating buffers (no malloc in a
 * filtered child). */
static char *
in_suid_dir (const char *name)
{
  static char paths[4][128];
  static unsigned int next;
  char *p = paths[next++ % 4];
  snprintf (p, sizeof (paths[0]), "%s/%s", suid_dir, name);
  return p;
}

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

/* Whether this kernel has fchmodat2 (6.6 and later): asked before any
 * filter, so that "still works" is not asserted where the kernel itself
 * answers ENOSYS (the Debian 12 guest's 6.1). */
static bool kernel_has_fchmodat2;

/* Refused at every level, each bit alone and both, whatever junk sits in
 * the upper half of the register. */
static void
body_suid_refused (int fd)
{
  static const mode_t modes[] = { 04755, 02755, 06755, 02775 | S_IFREG };
  char f[128];
  int o;

  snprintf (f, sizeof (f), "%s/plain", suid_dir);
  o = open (f, O_RDONLY | O_CLOEXEC);
  struct stat st;

  if (o < 0)
    child_fail (fd, "open %s: errno %d", f, errno);
  for (size_t i = 0; i < sizeof (modes) / sizeof (modes[0]); i++)
    {
      mode_t m = modes[i];
      EXPECT_ERRNO (fd, syscall (SYS_chmod, f, m), EPERM);
      EXPECT_ERRNO (fd, syscall (SYS_chmod, f, (1UL << 32) | m), EPERM);
      EXPECT_ERRNO (fd, syscall (SYS_fchmodat, AT_FDCWD, f, m), EPERM);
      EXPECT_ERRNO (fd, syscall (SYS_fchmodat2, AT_FDCWD, f, m, 0), EPERM);
      EXPECT_ERRNO (fd, syscall (SYS_fchmod, o, m), EPERM);
      EXPECT_ERRNO (fd, syscall (SYS_creat, in_suid_dir ("c"), m), EPERM);
      EXPECT_ERRNO (fd,
                    syscall (SYS_open, in_suid_dir ("o"),
                             O_CREAT | O_WRONLY | O_CLOEXEC, m),
                    EPERM);
      EXPECT_ERRNO (fd,
                    syscall (SYS_openat, AT_FDCWD, in_suid_dir ("o"),
                             O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, m),
                    EPERM);
      EXPECT_ERRNO (fd,
                    syscall (SYS_openat, AT_FDCWD, suid_dir,
                             O_TMPFILE | O_RDWR | O_CLOEXEC, m),
                    EPERM);
      EXPECT_ERRNO (fd, syscall (SYS_mkdir, in_suid_dir ("d"), m), EPERM);
      EXPECT_ERRNO (fd, syscall (SYS_mkdirat, AT_FDCWD, in_suid_dir ("d"), m),
                    EPERM);
      EXPECT_ERRNO (fd, syscall (SYS_mknod, in_suid_dir ("n"), S_IFREG | m, 0),
                    EPERM);
      EXPECT_ERRNO (
          fd,
          syscall (SYS_mknodat, AT_FDCWD, in_suid_dir ("n"), S_IFIFO | m, 0),
          EPERM);
    }
  /* Its mode is in memory: ENOSYS, and libc falls back to openat. */
  EXPECT_ERRNO (fd, syscall (SYS_openat2, AT_FDCWD, f, NULL, 0), ENOSYS);
  if (stat (f, &st) < 0 || (st.st_mode & (S_ISUID | S_ISGID)) != 0)
    child_fail (fd, "%s: mode %o", f, st.st_mode);
}

/* What the bits do not touch still works (the default level). */
static void
body_suid_plain_allowed (int fd)
{
  char f[128];
  int o;

  snprintf (f, sizeof (f), "%s/plain", suid_dir);
  EXPECT_OK (fd, chmod (f, 0755));
  if (kernel_has_fchmodat2)
    EXPECT_OK (fd, syscall (SYS_fchmodat2, AT_FDCWD, f, 01777, 0));
  /* Without O_CREAT the mode is not looked at: junk passes. */
  EXPECT_OK (fd, o = (int)syscall (SYS_open, f, O_RDONLY | O_CLOEXEC, 06777));
  EXPECT_OK (fd, syscall (SYS_fchmod, o, 0644));
  close (o);
  EXPECT_OK (fd, o = (int)syscall (SYS_openat, AT_FDCWD, f,
                                   O_WRONLY | O_CLOEXEC, 04755));
  close (o);
  EXPECT_OK (
      fd, o = open (in_suid_dir ("new"), O_CREAT | O_WRONLY | O_CLOEXEC, 0755));
  close (o);
  EXPECT_OK (fd, mkdir (in_suid_dir ("dir"), 0755));
  EXPECT_OK (fd, mknod (in_suid_dir ("fifo"), S_IFIFO | 0600, 0));
}

static void
test_builtin_refuses_suid (void **state)
{
  struct seccomp_prog agent = { 0 };
  struct moat_error *err = NULL;
  int fd;

  assert_non_null (mkdtemp (suid_dir));
  fd = open (in_suid_dir ("plain"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  assert_true (fd >= 0);
  close (fd);
  kernel_has_fchmodat2
      = syscall (SYS_fchmodat2, AT_FDCWD, in_suid_dir ("plain"), 0644, 0) == 0
        || errno != ENOSYS;
  assert_child_passes (&builtin, NULL, body_suid_refused);
  assert_child_passes (&builtin, NULL, body_suid_plain_allowed);
  assert_int_equal (
      seccomp_builtin_level (SECCOMP_LEVEL_AGENT, NULL, &agent, &err), 0);
  assert_child_passes (&agent, NULL, body_suid_refused);
  seccomp_prog_clear (&agent);
}

static int
teardown_suid_dir (void **state)
{
  static const char *const names[]
      = { "plain", "new", "fifo", "c", "o", "n", NULL };
  for (size_t i = 0; names[i]; i++)
    unlink (in_suid_dir (names[i]));
  rmdir (in_suid_dir ("dir"));
  rmdir (in_suid_dir ("d"));
  rmdir (suid_dir);
  return 0;
}

/* ---- both filters ---- */

static void
body_stacked (int fd)
{
  /* the config's own denial */
  EXPECT_ERRNO (fd, mkdir ("/nonexistent-moat-test/x", 0700), EACCES);
  /* the builtin's */
  EXPECT_ERRNO (fd, syscall (1000), ENOSYS);
  EXPECT_ERRNO (fd, socket (AF_VSOCK, SOCK_STREAM, 0), EPERM);
  /* Both return ERRNO: the filter loaded last (the builtin) decides. */
  EXPECT_ERRNO (fd, unshare (CLONE_NEWUSER), EPERM);
  EXPECT_OK (fd, getpid ());
}

static void
test_stacked (void **state)
{
  struct spec_seccomp_rule rules[] = {
    { .names = (char *[]){ "mkdir", NULL },
      .action = "SCMP_ACT_ERRNO",
      .has_errno_ret = true,
      .errno_ret = EACCES },
    { .names = (char *[]){ "unshare", NULL },
      .action = "SCMP_ACT_ERRNO",
      .has_errno_ret = true,
      .errno_ret = EXDEV },
  };
  struct spec_seccomp s = { .present = true,
                            .default_action = "SCMP_ACT_ALLOW",
                            .syscalls = rules,
                            .n_syscalls = 2 };
  struct seccomp_prog config = { 0 };

  compile_ok (&s, &config);
  assert_child_passes (&config, &builtin, body_stacked);
  seccomp_prog_clear (&config);
}

static void
body_fixture (int fd)
{
  EXPECT_OK (fd, getpid ());
  EXPECT_ERRNO (fd, syscall (1000), ENOSYS);
  EXPECT_ERRNO (fd, unshare (CLONE_NEWUSER), EPERM);
  EXPECT_ERRNO (fd, socket (AF_VSOCK, SOCK_STREAM, 0), EPERM);
  /* A payload starts under both filters. */
  execve ("/bin/true", (char *[]){ "true", NULL }, (char *[]){ NULL });
  child_fail (fd, "execve /bin/true: errno %d", errno);
}

/* Every engine-written config.json with a seccomp section compiles and,
 * stacked with the builtin, runs a program. */
static void
test_fixtures (void **state)
{
  const char *dir = getenv ("MOAT_FIXTURES");
  cleanup_free char *pattern
      = xasprintf ("%s/*.config.json", dir ? dir : "tests/fixtures");
  glob_t g;
  size_t with_seccomp = 0;

  if (glob (pattern, 0, NULL, &g) != 0)
    skip ();
  for (size_t i = 0; i < g.gl_pathc; i++)
    {
      struct spec *spec = NULL;
      struct moat_error *err = NULL;
      struct seccomp_prog prog = { 0 };

      if (spec_load (g.gl_pathv[i], &spec, &err) < 0)
        fail_msg ("%s: %s", g.gl_pathv[i], err->msg);
      if (seccomp_compile_config (&spec->linux_.seccomp, &prog, &err) < 0)
        fail_msg ("%s: %s", g.gl_pathv[i], err->msg);
      if (spec->linux_.seccomp.present)
        {
          with_seccomp++;
          assert_true (prog.n_insns > 0);
          assert_child_passes (&prog, &builtin, body_fixture);
        }
      else
        assert_int_equal (prog.n_insns, 0);
      seccomp_prog_clear (&prog);
      spec_free (spec);
    }
  globfree (&g);
  assert_true (with_seccomp > 0);
}

/* ---- the builtin's cache ---- */

/* The cache file's layout, restated so that a test can forge an entry. */
struct cache_header
{
  char magic[8];
  uint64_t key, insns_hash, n_insns;
};

static char *
only_cache_file (const char *dir)
{
  cleanup_free char *pattern = xasprintf ("%s/seccomp-*.bpf", dir);
  glob_t g;
  char *path;

  assert_int_equal (glob (pattern, 0, NULL, &g), 0);
  assert_int_equal (g.gl_pathc, 1);
  path = xstrdup (g.gl_pathv[0]);
  globfree (&g);
  return path;
}

/* Replace the cached program by a one-instruction RET ALLOW, with a valid
 * header: only a read of the file can produce that. */
static void
forge_cache_entry (const char *path)
{
  cleanup_free char *data = NULL;
  struct sock_filter allow = BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct cache_header h;
  char buf[sizeof (h) + sizeof (allow)];
  size_t len = 0;

  assert_int_equal (read_file_at (AT_FDCWD, path, 1 << 20, &data, &len), 0);
  assert_true (len > sizeof (h));
  memcpy (&h, data, sizeof (h));
  h.n_insns = 1;
  h.insns_hash = fnv1a64 (&allow, sizeof (allow), FNV1A64_INIT);
  memcpy (buf, &h, sizeof (h));
  memcpy (buf + sizeof (h), &allow, sizeof (allow));
  assert_int_equal (write_file_atomic (AT_FDCWD, path, buf, sizeof (buf), 0600),
                    0);
}

static void
assert_same_prog (const struct seccomp_prog *a, const struct seccomp_prog *b)
{
  assert_int_equal (a->n_insns, b->n_insns);
  assert_memory_equal (a->insns, b->insns,
                       a->n_insns * sizeof (struct sock_filter));
}

static char cache_test_dir[] = "/tmp/moat-test-seccomp-XXXXXX";

static int
remove_entry (const char *path, const struct stat *st, int type,
              struct FTW *ftw)
{
  return remove (path) < 0 ? -1 : 0;
}

static int
teardown_cache_dir (void **state)
{
  if (strstr (cache_test_dir, "XXXXXX") == NULL)
    nftw (cache_test_dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
  return 0;
}

static void
test_builtin_cache (void **state)
{
  cleanup_free char *cache = NULL, *path = NULL;
  struct seccomp_prog first = { 0 }, second = { 0 }, prog = { 0 };
  struct moat_error *err = NULL;
  struct stat st;
  int fd;

  assert_non_null (mkdtemp (cache_test_dir));
  cache = xasprintf ("%s/cache", cache_test_dir);

  /* The first call compiles and creates the cache dir and file. */
  assert_int_equal (seccomp_builtin (cache, &first, &err), 0);
  assert_same_prog (&first, &builtin);
  path = only_cache_file (cache);
  assert_int_equal (stat (path, &st), 0);
  assert_int_equal (st.st_mode & 07777, 0600);
  assert_int_equal (st.st_size,
                    sizeof (struct cache_header)
                        + first.n_insns * sizeof (struct sock_filter));
  assert_int_equal (seccomp_builtin (cache, &second, &err), 0);
  assert_same_prog (&first, &second);

  /* The second call really reads the file. */
  forge_cache_entry (path);
  assert_int_equal (seccomp_builtin (cache, &prog, &err), 0);
  assert_int_equal (prog.n_insns, 1);
  seccomp_prog_clear (&prog);

  /* A damaged entry is recompiled and replaced. */
  fd = open (path, O_WRONLY | O_CLOEXEC);
  assert_true (fd >= 0);
  assert_int_equal (pwrite (fd, "\xff", 1, sizeof (struct cache_header)), 1);
  close (fd);
  assert_int_equal (seccomp_builtin (cache, &prog, &err), 0);
  assert_same_prog (&first, &prog);
  seccomp_prog_clear (&prog);
  assert_int_equal (seccomp_builtin (cache, &prog, &err), 0);
  assert_same_prog (&first, &prog);
  seccomp_prog_clear (&prog);

  /* An entry someone else could have written is not trusted. */
  forge_cache_entry (path);
  assert_int_equal (chmod (path, 0620), 0);
  assert_int_equal (seccomp_builtin (cache, &prog, &err), 0);
  assert_same_prog (&first, &prog);
  seccomp_prog_clear (&prog);
  forge_cache_entry (path);
  assert_int_equal (chown (path, 65534, 65534), 0);
  assert_int_equal (seccomp_builtin (cache, &prog, &err), 0);
  assert_same_prog (&first, &prog);
  seccomp_prog_clear (&prog);

  /* A cache dir that cannot be written: compiled all the same. */
  assert_int_equal (seccomp_builtin ("/dev/null/moat-cache", &prog, &err), 0);
  assert_same_prog (&first, &prog);
  seccomp_prog_clear (&prog);
  seccomp_prog_clear (&first);
  seccomp_prog_clear (&second);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_builtin_allows_ordinary_work),
    cmocka_unit_test (test_builtin_denies),
#if defined(__x86_64__)
    cmocka_unit_test (test_builtin_kills_other_abis),
#endif
    cmocka_unit_test_teardown (test_builtin_refuses_suid, teardown_suid_dir),
    cmocka_unit_test (test_stacked),
    cmocka_unit_test (test_fixtures),
    cmocka_unit_test_teardown (test_builtin_cache, teardown_cache_dir),
  };
  return cmocka_run_group_tests (tests, setup_builtin, teardown_builtin);
}
