/* The agent level of the built-in seccomp filter: the syscalls agent
 * workloads make, as traced inside moat by tests/agent/trace.sh (Python and
 * part of CPython's test suite, Node.js, gcc and make, shell pipelines,
 * pip; the traces are in tests/agent/traces/). The table is intersected
 * with the default level's allow-list (seccomp_builtin.c), so the agent
 * level can only tighten; its argument checks (clone flags, socket
 * families, ioctl requests) and EPERM answers are the default level's. A
 * workload that needs more runs under the default level: the operator's
 * config decides, an annotation can only ask for agent.
 *
 * Which level a container gets is judged by the policy at create
 * (policy/profile_verdicts.c) and recorded as the annotation
 * run.moat.seccomp on the hardened spec, which `moat state` shows and
 * `moat exec` reads back here. */
#include "seccomp_internal.h"

#include <stdlib.h>
#include <string.h>

#include "../../policy/verdicts.h"
#include "../../lib/util.h"

/* Sorted (bsearch). Regenerate: tests/agent/trace.sh, then the union of
 * the names in tests/agent/traces/ with CALLS above REFUSED. */
/* clang-format off */
static const char *const agent_syscalls[] = {
  "accept4", "access", "alarm", "arch_prctl", "bind", "brk", "capget",
  "chdir", "chmod", "clock_nanosleep", "clone", "clone3", "close",
  "close_range", "connect", "copy_file_range", "creat", "dup", "dup2",
  "epoll_create1", "epoll_ctl", "epoll_pwait", "epoll_wait", "eventfd2",
  "execve", "exit", "exit_group", "faccessat2", "fadvise64", "fchdir",
  "fchmod", "fchmodat", "fchown", "fchownat", "fcntl", "fdatasync",
  "fgetxattr", "flistxattr", "flock", "fsetxattr", "fstat", "fstatfs",
  "fsync", "ftruncate", "futex", "getcwd", "getdents64", "getegid",
  "geteuid", "getgid", "getgroups", "getpeername", "getpgid", "getpid",
  "getppid", "getpriority", "getrandom", "getrusage", "getsid",
  "getsockname", "getsockopt", "gettid", "getuid", "getxattr", "ioctl",
  "kill", "lgetxattr", "link", "listen", "llistxattr", "lseek", "madvise",
  "mkdir", "mkdirat", "mknodat", "mmap", "mprotect", "mremap", "munmap",
  "newfstatat", "openat", "pipe2", "pkey_alloc", "poll", "prctl", "pread64",
  "prlimit64", "pselect6", "pwrite64", "read", "readlink", "recvfrom",
  "recvmsg", "removexattr", "rename", "renameat2", "restart_syscall",
  "rmdir", "rseq", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn",
  "rt_sigsuspend", "sched_getaffinity", "sendmsg", "sendto",
  "set_robust_list", "set_tid_address", "setitimer", "setpgid",
  "setpriority", "setresgid", "setresuid", "setsid", "setsockopt",
  "setxattr", "shutdown", "sigaltstack", "socket", "socketpair", "stat",
  "statfs", "statx", "symlink", "symlinkat", "sysinfo", "tgkill",
  "timer_create", "timer_settime", "umask", "uname", "unlink", "unlinkat",
  "utimensat", "vfork", "wait4", "write", "writev",
};
/* clang-format on */

#define N_AGENT (sizeof (agent_syscalls) / sizeof (agent_syscalls[0]))

static int
compare_name (const void *key, const void *elem)
{
  return strcmp ((const char *)key, *(const char *const *)elem);
}

bool
seccomp_agent_allows (const char *name)
{
  return bsearch (name, agent_syscalls, N_AGENT, sizeof (agent_syscalls[0]),
                  compare_name)
         != NULL;
}

uint64_t
seccomp_agent_key (uint64_t h)
{
  for (size_t i = 0; i < N_AGENT; i++)
    h = fnv1a64 (agent_syscalls[i], strlen (agent_syscalls[i]) + 1, h);
  return h;
}

static const char *const level_names[] = { "default", "agent" };

const char *
seccomp_level_name (enum seccomp_level level)
{
  return level_names[level];
}

enum seccomp_level
seccomp_level_of (const struct spec_kv *annotations, size_t n)
{
  const char *v = spec_kv_get (annotations, n, SECCOMP_LEVEL_ANNOTATION);
  return v && strcmp (v, "agent") == 0 ? SECCOMP_LEVEL_AGENT
                                       : SECCOMP_LEVEL_DEFAULT;
}
