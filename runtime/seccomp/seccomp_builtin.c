/* moat's built-in seccomp filter (G8), stacked on top of config.json's.
 *
 * An allowlist: Docker's default profile for a container without extra
 * capabilities, minus what G8 denies. Anything else returns ENOSYS, so a
 * syscall newer than this list (or than libseccomp) looks absent and libc
 * falls back; the syscalls G8 names, and those Docker only grants with a
 * capability moat never gives, return EPERM.
 *
 * Architectures: only the native one. Every other ABI (i386 through int 0x80
 * or a 32-bit binary, x32) hits the bad-arch action, which kills the
 * process. Allowing i386 would bring back socketcall(2) and ipc(2), whose
 * arguments sit in memory where no filter can read them, and the compat
 * entry path has its own history of bugs; a SIGSYS makes the refusal
 * obvious to whoever runs a 32-bit binary.
 *
 * Argument checks: several conditions on one argument cannot share a rule
 * (libseccomp) and rules of different actions on one syscall must never
 * overlap, or the outcome would depend on how libseccomp orders its
 * decision tree. So every conditional syscall below is covered by disjoint
 * rules, and equality tests compare all 64 bits of the register: the kernel
 * truncates an int argument to 32 bits, so a range test such as Docker's
 * "socket domain > 40" lets 0x100000028 (AF_VSOCK to the kernel) through.
 *
 * The order of stacking matters: among filters that return ERRNO the kernel
 * uses the errno of the most recently loaded one, so the init loads this
 * filter after config.json's (runtime/process.c does). */
#include "seccomp_internal.h" /* <seccomp.h> before "seccomp.h" */
#include "../../lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bump when the way the tables become a filter changes (not the tables:
 * they are hashed), so that cached programs of the old build are unused. */
#define BUILTIN_FORMAT 2

#if defined(__s390__) || defined(__s390x__)
#define CLONE_FLAGS_ARG 1 /* s390 swaps clone's first two arguments */
#else
#define CLONE_FLAGS_ARG 0
#endif

/* Every namespace flag clone(2) takes. CLONE_NEWTIME shares its bit with
 * the exit signal there; only clone3 and unshare can ask for it. */
#define CLONE_NS_FLAGS                                                         \
  (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER \
   | CLONE_NEWPID | CLONE_NEWNET)

/* clang-format off */
static const char *const allowed_syscalls[] = {
  "accept", "accept4", "access", "adjtimex", "alarm", "bind", "brk",
  "cachestat", "capget", "capset", "chdir", "chown", "chown32", "clock_adjtime",
  "clock_adjtime64", "clock_getres", "clock_getres_time64", "clock_gettime",
  "clock_gettime64", "clock_nanosleep", "clock_nanosleep_time64", "close",
  "close_range", "connect", "copy_file_range", "dup", "dup2", "dup3",
  "epoll_create", "epoll_create1", "epoll_ctl", "epoll_ctl_old", "epoll_pwait",
  "epoll_pwait2", "epoll_wait", "epoll_wait_old", "eventfd", "eventfd2",
  "execve", "execveat", "exit", "exit_group", "faccessat", "faccessat2",
  "fadvise64", "fadvise64_64", "fallocate", "fanotify_mark", "fchdir", "fchown",
  "fchown32", "fchownat", "fcntl", "fcntl64", "fdatasync", "fgetxattr",
  "flistxattr", "flock", "fork", "fremovexattr", "fsetxattr", "fstat",
  "fstat64", "fstatat64", "fstatfs", "fstatfs64", "fsync", "ftruncate",
  "ftruncate64", "futex", "futex_requeue", "futex_time64", "futex_wait",
  "futex_waitv", "futex_wake", "futimesat", "getcpu", "getcwd", "getdents",
  "getdents64", "getegid", "getegid32", "geteuid", "geteuid32", "getgid",
  "getgid32", "getgroups", "getgroups32", "getitimer", "getpeername", "getpgid",
  "getpgrp", "getpid", "getppid", "getpriority", "getrandom", "getresgid",
  "getresgid32", "getresuid", "getresuid32", "getrlimit", "get_robust_list",
  "getrusage", "getsid", "getsockname", "getsockopt", "get_thread_area",
  "gettid", "gettimeofday", "getuid", "getuid32", "getxattr", "getxattrat",
  "inotify_add_watch", "inotify_init", "inotify_init1", "inotify_rm_watch",
  "io_cancel", "io_destroy", "io_getevents", "io_pgetevents",
  "io_pgetevents_time64", "ioprio_get", "ioprio_set", "io_setup", "io_submit",
  "ipc", "kill", "landlock_add_rule", "landlock_create_ruleset",
  "landlock_restrict_self", "lchown", "lchown32", "lgetxattr", "link", "linkat",
  "listen", "listmount", "listxattr", "listxattrat", "llistxattr", "_llseek",
  "lremovexattr", "lseek", "lsetxattr", "lstat", "lstat64", "madvise",
  "map_shadow_stack", "membarrier", "memfd_create", "memfd_secret", "mincore",
  "mlock", "mlock2", "mlockall", "mmap", "mmap2", "mprotect", "mq_getsetattr",
  "mq_notify", "mq_open", "mq_timedreceive", "mq_timedreceive_time64",
  "mq_timedsend", "mq_timedsend_time64", "mq_unlink", "mremap", "mseal",
  "msgctl", "msgget", "msgrcv", "msgsnd", "msync", "munlock", "munlockall",
  "munmap", "name_to_handle_at", "nanosleep", "newfstatat", "_newselect",
  "pause", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2", "pkey_alloc",
  "pkey_free", "pkey_mprotect", "poll", "ppoll", "ppoll_time64", "prctl",
  "pread64", "preadv", "preadv2", "prlimit64", "process_mrelease", "pselect6",
  "pselect6_time64", "pwrite64", "pwritev", "pwritev2", "read", "readahead",
  "readlink", "readlinkat", "readv", "recv", "recvfrom", "recvmmsg",
  "recvmmsg_time64", "recvmsg", "remap_file_pages", "removexattr",
  "removexattrat", "rename", "renameat", "renameat2", "restart_syscall",
  "riscv_hwprobe", "rmdir", "rseq", "rt_sigaction", "rt_sigpending",
  "rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn", "rt_sigsuspend",
  "rt_sigtimedwait", "rt_sigtimedwait_time64", "rt_tgsigqueueinfo",
  "sched_getaffinity", "sched_getattr", "sched_getparam",
  "sched_get_priority_max", "sched_get_priority_min", "sched_getscheduler",
  "sched_rr_get_interval", "sched_rr_get_interval_time64", "sched_setaffinity",
  "sched_setattr", "sched_setparam", "sched_setscheduler", "sched_yield",
  "seccomp", "select", "semctl", "semget", "semop", "semtimedop",
  "semtimedop_time64", "send", "sendfile", "sendfile64", "sendmmsg", "sendmsg",
  "sendto", "setfsgid", "setfsgid32", "setfsuid", "setfsuid32", "setgid",
  "setgid32", "setgroups", "setgroups32", "setitimer", "setpgid", "setpriority",
  "setregid", "setregid32", "setresgid", "setresgid32", "setresuid",
  "setresuid32", "setreuid", "setreuid32", "setrlimit", "set_robust_list",
  "setsid", "setsockopt", "set_thread_area", "set_tid_address", "setuid",
  "setuid32", "setxattr", "setxattrat", "shmat", "shmctl", "shmdt", "shmget",
  "shutdown", "sigaltstack", "signalfd", "signalfd4", "sigprocmask",
  "sigreturn", "splice", "stat", "stat64", "statfs", "statfs64", "statmount",
  "statx", "symlink", "symlinkat", "sync", "sync_file_range", "syncfs",
  "sysinfo", "tee", "tgkill", "time", "timer_create", "timer_delete",
  "timer_getoverrun", "timer_gettime", "timer_gettime64", "timer_settime",
  "timer_settime64", "timerfd_create", "timerfd_gettime", "timerfd_gettime64",
  "timerfd_settime", "timerfd_settime64", "times", "tkill", "truncate",
  "truncate64", "ugetrlimit", "umask", "uname", "unlink", "unlinkat",
  "uretprobe", "utime", "utimensat", "utimensat_time64", "utimes", "vfork",
  "vmsplice", "wait4", "waitid", "waitpid", "write", "writev",
  /* Docker's per-architecture extras (names of other architectures are
   * skipped). modify_ldt is left out on purpose: see the EPERM list. */
  "arch_prctl", "arm_fadvise64_64", "arm_sync_file_range", "sync_file_range2",
  "breakpoint", "cacheflush", "set_tls", "swapcontext", "riscv_flush_icache",
  "s390_pci_mmio_read", "s390_pci_mmio_write", "s390_runtime_instr",
};
/* clang-format on */

/* clang-format off */
static const char *const denied_syscalls[] = {
  /* G8 by name */
  "io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd",
  "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "ptrace",
  "process_vm_readv", "process_vm_writev", "mount", "umount", "umount2",
  "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree",
  "open_tree_attr", "mount_setattr", "pivot_root", "unshare", "setns",
  "kexec_load", "kexec_file_load", "init_module", "finit_module",
  "delete_module",
  /* What Docker grants only with a capability moat never gives */
  "chroot", "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
  "lookup_dcookie", "open_by_handle_at", "iopl", "ioperm", "syslog", "kcmp",
  "pidfd_getfd", "process_madvise", "fanotify_init", "sethostname",
  "setdomainname", "settimeofday", "stime", "clock_settime", "clock_settime64",
  "vhangup", "get_mempolicy", "mbind", "set_mempolicy",
  "set_mempolicy_home_node", "lsm_get_self_attr", "lsm_set_self_attr",
  "lsm_list_modules",
  /* Docker allows it; only old 16-bit code needs it, and the LDT code has
   * a history of kernel bugs. */
  "modify_ldt",
};
/* clang-format on */

enum verdict
{
  VERDICT_ALLOW,
  VERDICT_EPERM,
};

struct arg_test
{
  unsigned int arg;
  enum scmp_compare op;
  uint64_t datum_a, datum_b; /* MASKED_EQ: mask, then value */
};

struct conditional_rule
{
  const char *syscall;
  enum verdict verdict;
  unsigned int n_tests; /* ANDed */
  struct arg_test tests[2];
};

/* clang-format off */
#define TEST(arg, op, a, b) { (arg), SCMP_CMP_##op, (a), (b) }
#define RULE1(name, v, t1) { (name), VERDICT_##v, 1, { t1 } }
#define RULE2(name, v, t1, t2) { (name), VERDICT_##v, 2, { t1, t2 } }
/* clang-format on */

/* Families: an allowlist. AF_UNIX, AF_INET, AF_INET6, and AF_NETLINK for
 * NETLINK_ROUTE only (getaddrinfo, ip). G8 names AF_VSOCK, AF_ALG,
 * AF_PACKET and other netlink protocols; the rest (RDS, TIPC, CAN, X.25 …)
 * go too: rarely used code, loaded as modules on demand, where many
 * container escapes began. The EPERM rules cover exactly the complement of
 * the allowed domains, as 64-bit values. */
#define MASK_LOW(bits) (~(uint64_t)((1u << (bits)) - 1))
#define SOCKET_FAMILY_RULES(name)                                              \
  RULE1 (name, ALLOW, TEST (0, EQ, AF_UNIX, 0)),                               \
      RULE1 (name, ALLOW, TEST (0, EQ, AF_INET, 0)),                           \
      RULE1 (name, ALLOW, TEST (0, EQ, AF_INET6, 0)),                          \
      RULE2 (name, ALLOW, TEST (0, EQ, AF_NETLINK, 0),                         \
             TEST (2, EQ, NETLINK_ROUTE, 0)),                                  \
      RULE2 (name, EPERM, TEST (0, EQ, AF_NETLINK, 0),                         \
             TEST (2, NE, NETLINK_ROUTE, 0)),                                  \
      RULE1 (name, EPERM, TEST (0, EQ, 0, 0)),                                 \
      RULE1 (name, EPERM, TEST (0, EQ, 3, 0)),                                 \
      RULE1 (name, EPERM, TEST (0, MASKED_EQ, MASK_LOW (2), 4)), /* 4-7 */     \
      RULE1 (name, EPERM, TEST (0, MASKED_EQ, MASK_LOW (1), 8)), /* 8-9 */     \
      RULE1 (name, EPERM, TEST (0, EQ, 11, 0)),                                \
      RULE1 (name, EPERM, TEST (0, MASKED_EQ, MASK_LOW (2), 12)), /* 12-15 */  \
      RULE1 (name, EPERM, TEST (0, GT, AF_NETLINK, 0))

/* G12: no set-user-ID or set-group-ID bit is ever set inside a container,
 * as systemd's RestrictSUIDSGID: a workdir or volume is a host tree, and
 * a setuid file the payload left there would run with its owner's ids on
 * the host. A mode argument with S_ISUID or S_ISGID is refused with EPERM
 * for every call that sets a mode: chmod and its kin always, and the calls
 * that create, where they do (open and openat only with O_CREAT or
 * O_TMPFILE: otherwise the kernel ignores the mode, which may be junk).
 * A setgid directory is refused too (mkdir -m 2775, chmod g+s): systemd
 * does the same. chown already clears both bits, and the kernel strips
 * S_ISGID from a file created in a setgid directory by a non-member.
 * openat2 keeps its mode in memory where no filter can read it: it is left
 * out of the allowlist and gets ENOSYS, on which libc and the callers that
 * use it fall back to openat (it is new in Linux 5.6), as systemd does.
 * Disjoint rules: on the mode, neither bit, S_ISUID, S_ISGID alone; for
 * open, first whether the flags create (O_CREAT, else O_TMPFILE, else
 * neither: allowed whatever the mode). MASKED_EQ drops the upper bits the
 * kernel ignores too. The cost: about 40 ns on an openat, nothing on
 * syscalls without arguments checked. */
#define SUID_BITS ((uint64_t)(S_ISUID | S_ISGID))
#define MODE_PLAIN(m) TEST (m, MASKED_EQ, SUID_BITS, 0)
#define MODE_SUID(m) TEST (m, MASKED_EQ, S_ISUID, S_ISUID)
#define MODE_SGID(m) TEST (m, MASKED_EQ, SUID_BITS, S_ISGID)
#define MODE_RULES(name, m)                                                    \
  RULE1 (name, ALLOW, MODE_PLAIN (m)), RULE1 (name, EPERM, MODE_SUID (m)),     \
      RULE1 (name, EPERM, MODE_SGID (m))
/* The flags that make open create: O_CREAT, or O_TMPFILE's own bit (the
 * kernel refuses that bit without O_DIRECTORY). */
#define TMPFILE_BIT ((uint64_t)(O_TMPFILE & ~O_DIRECTORY))
#define CREATE_BITS ((uint64_t)O_CREAT | TMPFILE_BIT)
#define FLAGS_NO_CREATE(f) TEST (f, MASKED_EQ, CREATE_BITS, 0)
#define FLAGS_CREAT(f) TEST (f, MASKED_EQ, O_CREAT, O_CREAT)
#define FLAGS_TMPFILE(f) TEST (f, MASKED_EQ, CREATE_BITS, TMPFILE_BIT)
#define OPEN_RULES(name, f, m)                                                 \
  RULE1 (name, ALLOW, FLAGS_NO_CREATE (f)),                                    \
      RULE2 (name, ALLOW, FLAGS_CREAT (f), MODE_PLAIN (m)),                    \
      RULE2 (name, ALLOW, FLAGS_TMPFILE (f), MODE_PLAIN (m)),                  \
      RULE2 (name, EPERM, FLAGS_CREAT (f), MODE_SUID (m)),                     \
      RULE2 (name, EPERM, FLAGS_CREAT (f), MODE_SGID (m)),                     \
      RULE2 (name, EPERM, FLAGS_TMPFILE (f), MODE_SUID (m)),                   \
      RULE2 (name, EPERM, FLAGS_TMPFILE (f), MODE_SGID (m))

#define CLONE_NS_DENIED(flag)                                                  \
  RULE1 ("clone", EPERM, TEST (CLONE_FLAGS_ARG, MASKED_EQ, (flag), (flag)))

static const struct conditional_rule conditional_rules[] = {
  SOCKET_FAMILY_RULES ("socket"),
  SOCKET_FAMILY_RULES ("socketpair"),
  /* clone: a plain fork or thread only; clone3 (whose flags sit in memory)
   * gets the default ENOSYS, so libc falls back to clone. */
  RULE1 ("clone", ALLOW, TEST (CLONE_FLAGS_ARG, MASKED_EQ, CLONE_NS_FLAGS, 0)),
  CLONE_NS_DENIED (CLONE_NEWNS),
  CLONE_NS_DENIED (CLONE_NEWCGROUP),
  CLONE_NS_DENIED (CLONE_NEWUTS),
  CLONE_NS_DENIED (CLONE_NEWIPC),
  CLONE_NS_DENIED (CLONE_NEWUSER),
  CLONE_NS_DENIED (CLONE_NEWPID),
  CLONE_NS_DENIED (CLONE_NEWNET),
  /* personality: Docker's values (PER_LINUX, PER_LINUX32, with UNAME26, and
   * the 0xffffffff query). Others (ADDR_NO_RANDOMIZE …) get ENOSYS: their
   * complement cannot be written as disjoint single-test rules. */
  RULE1 ("personality", ALLOW, TEST (0, EQ, 0x0, 0)),
  RULE1 ("personality", ALLOW, TEST (0, EQ, 0x8, 0)),
  RULE1 ("personality", ALLOW, TEST (0, EQ, 0x20000, 0)),
  RULE1 ("personality", ALLOW, TEST (0, EQ, 0x20008, 0)),
  RULE1 ("personality", ALLOW, TEST (0, EQ, 0xffffffff, 0)),
  /* No S_ISUID or S_ISGID: the mode's argument, and open's flags. */
  MODE_RULES ("chmod", 1),
  MODE_RULES ("fchmod", 1),
  MODE_RULES ("fchmodat", 2),
  MODE_RULES ("fchmodat2", 2),
  MODE_RULES ("creat", 1),
  MODE_RULES ("mkdir", 1),
  MODE_RULES ("mkdirat", 2),
  MODE_RULES ("mknod", 1),
  MODE_RULES ("mknodat", 2),
  OPEN_RULES ("open", 1, 2),
  OPEN_RULES ("openat", 2, 3),
};

#define N_ELEMENTS(a) (sizeof (a) / sizeof ((a)[0]))

/* ioctl requests refused with EPERM (G10): TIOCSTI pushes bytes into a
 * terminal's input as if typed (Docker allows it; with
 * dev.tty.legacy_tiocsti=1 a terminal shared with a host shell runs them
 * there), TIOCLINUX does the same through the virtual console's selection
 * buffer. */
static const uint32_t denied_ioctls[] = { TIOCSTI, TIOCLINUX };

static int
add_named_rule (scmp_filter_ctx ctx, const char *name, uint32_t action,
                unsigned int n, const struct scmp_arg_cmp *cmps,
                struct moat_error **err)
{
  int nr = seccomp_syscall_resolve_name (name);
  int r;

  /* Unknown to this libseccomp, or a syscall of another architecture. */
  if (nr < 0)
    return 0;
  r = seccomp_rule_add_exact_array (ctx, action, nr, n, cmps);
  if (r < 0)
    return moat_fail (err, -r, "builtin seccomp filter: adding rule for %s",
                      name);
  return 0;
}

/* The kernel truncates ioctl's request to an unsigned int, so only the low
 * 32 bits may decide: 0x100005412 is TIOCSTI to the kernel. libseccomp
 * cannot say "the low word is neither A nor B" in one rule, so the
 * 32-bit space is cut along the binary trie of the denied values, from bit
 * 31 down: a subtree without a denied value is one ALLOW rule (MASKED_EQ
 * on its prefix), each denied value one EPERM rule. The rules are disjoint
 * and cover every value (about 34 for two values that share their top
 * 28 bits). */
static int
add_ioctl_subtree (scmp_filter_ctx ctx, uint32_t prefix, unsigned int depth,
                   struct moat_error **err)
{
  uint64_t mask = depth == 0 ? 0 : (uint32_t)(0xffffffffu << (32 - depth));
  bool denied_below = false;
  struct scmp_arg_cmp cmp = {
    .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = mask, .datum_b = prefix
  };
  int r;

  for (size_t i = 0; i < N_ELEMENTS (denied_ioctls); i++)
    if ((denied_ioctls[i] & mask) == prefix)
      denied_below = true;
  if (!denied_below)
    return add_named_rule (ctx, "ioctl", SCMP_ACT_ALLOW, 1, &cmp, err);
  if (depth == 32)
    return add_named_rule (ctx, "ioctl", SCMP_ACT_ERRNO (EPERM), 1, &cmp, err);
  r = add_ioctl_subtree (ctx, prefix, depth + 1, err);
  if (r == 0)
    r = add_ioctl_subtree (ctx, prefix | (1u << (31 - depth)), depth + 1, err);
  return r;
}

static uint32_t
verdict_action (enum verdict v)
{
  return v == VERDICT_ALLOW ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO (EPERM);
}

static int
set_attrs (scmp_filter_ctx ctx, struct moat_error **err)
{
  const struct
  {
    enum scmp_filter_attr attr;
    uint32_t value;
  } attrs[] = {
    { SCMP_FLTATR_CTL_NNP, 0 },
    { SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS },
    /* A binary tree: ~400 syscalls scanned linearly cost every call. */
    { SCMP_FLTATR_CTL_OPTIMIZE, 2 },
  };

  for (size_t i = 0; i < N_ELEMENTS (attrs); i++)
    {
      int r = seccomp_attr_set (ctx, attrs[i].attr, attrs[i].value);
      if (r < 0)
        return moat_fail (err, -r, "builtin seccomp filter: attribute %d",
                          (int)attrs[i].attr);
    }
  return 0;
}

/* Is allowed_syscalls[i]'s name allowed at level? The agent level is a
 * subset of the default one by construction: it can only tighten. */
static bool
level_allows (enum seccomp_level level, const char *name)
{
  return level == SECCOMP_LEVEL_DEFAULT || seccomp_agent_allows (name);
}

static int
build_filter (enum seccomp_level level, struct seccomp_prog *ret,
              struct moat_error **err)
{
  cleanup_scmp_ctx scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ERRNO (ENOSYS));
  int r;

  if (ctx == NULL)
    return moat_fail (err, ENOMEM, "builtin seccomp filter: seccomp_init");
  r = set_attrs (ctx, err);
  for (size_t i = 0; r == 0 && i < N_ELEMENTS (allowed_syscalls); i++)
    if (level_allows (level, allowed_syscalls[i]))
      r = add_named_rule (ctx, allowed_syscalls[i], SCMP_ACT_ALLOW, 0, NULL,
                          err);
  for (size_t i = 0; r == 0 && i < N_ELEMENTS (denied_syscalls); i++)
    r = add_named_rule (ctx, denied_syscalls[i], SCMP_ACT_ERRNO (EPERM), 0,
                        NULL, err);
  if (r == 0)
    r = add_ioctl_subtree (ctx, 0, 0, err);
  for (size_t i = 0; r == 0 && i < N_ELEMENTS (conditional_rules); i++)
    {
      const struct conditional_rule *c = &conditional_rules[i];
      struct scmp_arg_cmp cmps[2];
      if (c->verdict == VERDICT_ALLOW && !level_allows (level, c->syscall))
        continue;
      for (unsigned int t = 0; t < c->n_tests; t++)
        cmps[t] = (struct scmp_arg_cmp){ .arg = c->tests[t].arg,
                                         .op = c->tests[t].op,
                                         .datum_a = c->tests[t].datum_a,
                                         .datum_b = c->tests[t].datum_b };
      r = add_named_rule (ctx, c->syscall, verdict_action (c->verdict),
                          c->n_tests, cmps, err);
    }
  if (r < 0)
    return r;
  r = seccomp_ctx_export (ctx, ret, err);
  if (r < 0)
    return moat_error_wrap (err, "builtin seccomp filter");
  ret->flags = 0;
  return 0;
}

/* ---- the cache ---- */

/* A word of the key, with its end marked so that "ab"+"c" and "a"+"bc"
 * differ. */
static uint64_t
key_word (uint64_t h, const char *word)
{
  return fnv1a64 (word, strlen (word) + 1, h);
}

/* What the compiled program depends on: the tables, the code that
 * compiles them (this build, another's program is not ours), this file's
 * format, libseccomp's version and the kernel (libseccomp picks actions by what
 * it supports), and the native architecture. */
static uint64_t
builtin_key (enum seccomp_level level)
{
  const struct scmp_version *v = seccomp_version ();
  /* The values themselves, hashed as they are: formatting each into text
   * took more instructions than the rest of an exec's filter load. */
  const unsigned int header[] = { BUILTIN_FORMAT, v->major, v->minor, v->micro,
                                  seccomp_arch_native () };
  uint64_t h = fnv1a64 (header, sizeof (header), FNV1A64_INIT);

  /* The running kernel (uname's release and build) in place of
   * libseccomp's API level: the level is a function of the kernel, and
   * seccomp_api_get () finds it with 9 probing syscalls, where a cache hit
   * needs none of libseccomp. */
  h = key_word (h, kernel_identity ());
  h = key_word (h, program_identity ());

  h = key_word (h, seccomp_level_name (level));
  /* Both tables whole rather than their intersection: a bsearch of the
   * agent list for each name cost more than the rest of the key. */
  for (size_t i = 0; i < N_ELEMENTS (allowed_syscalls); i++)
    h = key_word (h, allowed_syscalls[i]);
  if (level == SECCOMP_LEVEL_AGENT)
    h = seccomp_agent_key (h);
  h = key_word (h, "eperm");
  for (size_t i = 0; i < N_ELEMENTS (denied_syscalls); i++)
    h = key_word (h, denied_syscalls[i]);
  h = fnv1a64 (denied_ioctls, sizeof (denied_ioctls), h);
  for (size_t i = 0; i < N_ELEMENTS (conditional_rules); i++)
    {
      const struct conditional_rule *c = &conditional_rules[i];
      h = key_word (h, c->syscall);
      h = fnv1a64 (&c->verdict, sizeof (c->verdict), h);
      for (unsigned int t = 0; t < c->n_tests; t++)
        h = fnv1a64 (&c->tests[t], sizeof (c->tests[t]), h);
    }
  return h;
}

/* The file: this header, then the instructions. The checksum catches a
 * damaged file (write_file_atomic never shows a half-written one); the
 * key, a hash collision of names. */
struct cache_header
{
  char magic[8]; /* CACHE_MAGIC, without its NUL */
  uint64_t key;
  uint64_t insns_hash;
  uint64_t n_insns;
};
#define CACHE_MAGIC "MOATBPF1"

_Static_assert(sizeof (struct cache_header) % sizeof (struct sock_filter) == 0,
               "the cache file stays a multiple of an instruction");

static int
cache_read (const char *path, uint64_t key, struct seccomp_prog *ret)
{
  cleanup_free char *buf = NULL;
  struct cache_header h;
  size_t len, insns_len;

  /* A forged program would weaken the sandbox: anything untrusted is a
   * miss. */
  if (read_trusted_file_at (
          AT_FDCWD, path, sizeof (h) + 1,
          sizeof (h) + BPF_MAXINSNS * sizeof (struct sock_filter), &buf, &len)
          < 0
      || len % sizeof (struct sock_filter) != 0)
    return -1;
  memcpy (&h, buf, sizeof (h));
  insns_len = len - sizeof (h);
  if (memcmp (h.magic, CACHE_MAGIC, sizeof (h.magic)) != 0 || h.key != key
      || h.n_insns != insns_len / sizeof (struct sock_filter)
      || h.insns_hash != fnv1a64 (buf + sizeof (h), insns_len, FNV1A64_INIT))
    return -1;
  memmove (buf, buf + sizeof (h), insns_len);
  ret->insns = steal_pointer (&buf);
  ret->n_insns = (size_t)h.n_insns;
  ret->flags = 0;
  return 0;
}

static void
cache_write (const char *dir, const char *path, uint64_t key,
             const struct seccomp_prog *p)
{
  size_t insns_len = p->n_insns * sizeof (struct sock_filter);
  cleanup_free char *buf = xmalloc (sizeof (struct cache_header) + insns_len);
  struct cache_header h
      = { .key = key,
          .insns_hash = fnv1a64 (p->insns, insns_len, FNV1A64_INIT),
          .n_insns = p->n_insns };

  memcpy (h.magic, CACHE_MAGIC, sizeof (h.magic));
  memcpy (buf, &h, sizeof (h));
  memcpy (buf + sizeof (h), p->insns, insns_len);
  seccomp_cache_write (dir, path, buf, sizeof (h) + insns_len);
}

int
seccomp_builtin (const char *cache_dir, struct seccomp_prog *ret,
                 struct moat_error **err)
{
  return seccomp_builtin_level (SECCOMP_LEVEL_DEFAULT, cache_dir, ret, err);
}

size_t
seccomp_level_count (enum seccomp_level level)
{
  int seen[1024] = { 0 };
  size_t n = 0;

  for (size_t i = 0; i < N_ELEMENTS (allowed_syscalls); i++)
    {
      int nr = seccomp_syscall_resolve_name (allowed_syscalls[i]);
      if (nr >= 0 && nr < 1024 && !seen[nr]
          && level_allows (level, allowed_syscalls[i]))
        seen[nr] = 1, n++;
    }
  for (size_t i = 0; i < N_ELEMENTS (conditional_rules); i++)
    {
      const struct conditional_rule *c = &conditional_rules[i];
      int nr = seccomp_syscall_resolve_name (c->syscall);
      if (c->verdict == VERDICT_ALLOW && nr >= 0 && nr < 1024 && !seen[nr]
          && level_allows (level, c->syscall))
        seen[nr] = 1, n++;
    }
  return n + 1; /* ioctl, every request but the denied ones */
}

int
seccomp_builtin_level (enum seccomp_level level, const char *cache_dir,
                       struct seccomp_prog *ret, struct moat_error **err)
{
  struct seccomp_prog prog = { 0 };
  cleanup_free char *path = NULL;
  uint64_t key = 0;
  int r;

  if (cache_dir != NULL)
    {
      key = builtin_key (level);
      if (key != 0)
        path = xasprintf ("%s/seccomp-%016" PRIx64 ".bpf", cache_dir, key);
    }
  if (path != NULL && cache_read (path, key, &prog) == 0)
    {
      *ret = prog;
      return 0;
    }
  r = build_filter (level, &prog, err);
  if (r < 0)
    return r;
  if (path != NULL)
    cache_write (cache_dir, path, key, &prog);
  *ret = prog;
  return 0;
}
