/* The last steps of a container process before execve, in the order the
 * kernel needs: rlimits and groups while still root, uid, capabilities,
 * no_new_privs, Landlock, the seccomp filters last (they may forbid what
 * came before), then every fd not meant for the payload is marked
 * close-on-exec. */
#include "linux.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <stdint.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "landlock.h"
#include "selinux.h"
#include "../seccomp/seccomp_refusals.h"
#include "../../lib/util.h"

#define DEFAULT_PATH                                                           \
  "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static const char *
env_get (char *const *env, const char *name)
{
  size_t n = strlen (name);
  for (; env && *env; env++)
    if (strncmp (*env, name, n) == 0 && (*env)[n] == '=')
      return *env + n + 1;
  return NULL;
}

static bool
is_executable_file (const char *path, int *ret_errno)
{
  struct stat st;
  if (stat (path, &st) < 0)
    {
      *ret_errno = errno;
      return false;
    }
  if (S_ISDIR (st.st_mode))
    {
      *ret_errno = EACCES;
      return false;
    }
  if (access (path, X_OK) < 0)
    {
      *ret_errno = errno;
      return false;
    }
  return true;
}

/* Runs in the container (after pivot_root). The messages are the ones
 * engines match: podman maps "executable file not found in" and "no such
 * file or directory" to 127, "permission denied" to 126. */
int
process_resolve_exec (const struct spec_process *p, char **ret_path,
                      struct moat_error **err)
{
  const char *arg0 = p->args[0];
  const char *path;
  cleanup_free char *copy = NULL;
  char *save = NULL;
  int e = 0;

  if (strchr (arg0, '/'))
    {
      /* Relative to process.cwd, as runc: checked there now (the process
       * is not in its cwd yet) and exec'd as given after the chdir, so a
       * script's $0 is what the caller wrote. */
      cleanup_free char *in_cwd
          = arg0[0] != '/' && p->cwd ? xasprintf ("%s/%s", p->cwd, arg0) : NULL;
      const char *target = in_cwd ? in_cwd : arg0;
      if (!is_executable_file (target, &e))
        {
          if (e == ENOENT)
            return moat_error_setx (err, e,
                                    "exec: \"%s\": stat %s: no such file or "
                                    "directory",
                                    arg0, arg0);
          return moat_error_setx (err, e, "exec: \"%s\": permission denied",
                                  arg0);
        }
      *ret_path = xstrdup (arg0);
      return 0;
    }
  path = env_get (p->env, "PATH");
  copy = xstrdup (path ? path : DEFAULT_PATH);
  for (char *dir = strtok_r (copy, ":", &save); dir;
       dir = strtok_r (NULL, ":", &save))
    {
      cleanup_free char *cand = xasprintf ("%s/%s", *dir ? dir : ".", arg0);
      if (is_executable_file (cand, &e))
        {
          *ret_path = steal_pointer (&cand);
          return 0;
        }
    }
  return moat_error_setx (
      err, ENOENT, "exec: \"%s\": executable file not found in $PATH", arg0);
}

int
process_set_rlimits (const struct spec_process *p, struct moat_error **err)
{
  for (size_t i = 0; i < p->n_rlimits; i++)
    {
      struct rlimit rl
          = { .rlim_cur = p->rlimits[i].soft, .rlim_max = p->rlimits[i].hard };
      if (setrlimit (p->rlimits[i].resource, &rl) < 0)
        return moat_fail (err, errno, "setrlimit %s", p->rlimits[i].type);
    }
  return 0;
}

/* A payload in a user namespace cannot raise a hard limit (that takes
 * CAP_SYS_RESOURCE in the host's namespace): moat raises the ones the
 * config asks above the child's with prlimit before the child enters it,
 * as runc does, and the child sets the exact values. A systemd service's
 * hard RLIMIT_NPROC (from the kernel's threads-max) is often below what
 * Podman asks. The child is moat's clone: its limits are moat's own. */
int
process_raise_rlimits (pid_t pid, const struct spec_process *p,
                       struct moat_error **err)
{
  for (size_t i = 0; i < p->n_rlimits; i++)
    {
      struct rlimit cur, rl;
      if (getrlimit (p->rlimits[i].resource, &cur) < 0)
        return moat_fail (err, errno, "getrlimit %s", p->rlimits[i].type);
      if (p->rlimits[i].hard <= cur.rlim_max)
        continue;
      rl.rlim_cur = cur.rlim_cur;
      rl.rlim_max = p->rlimits[i].hard;
      if (prlimit (pid, p->rlimits[i].resource, &rl, NULL) < 0)
        return moat_fail (err, errno, "setrlimit %s", p->rlimits[i].type);
    }
  return 0;
}

static int
set_user (const struct spec_user *u, struct moat_error **err)
{
  gid_t *gids = NULL;
  cleanup_free gid_t *gids_owned = NULL;

  if (u->n_additional_gids > 0)
    {
      gids = gids_owned = xcalloc (u->n_additional_gids, sizeof (gid_t));
      for (size_t i = 0; i < u->n_additional_gids; i++)
        gids[i] = u->additional_gids[i];
    }
  /* EPERM here means a user namespace with setgroups denied: keep going
   * with no supplementary groups rather than the host's. */
  if (setgroups (u->n_additional_gids, gids) < 0 && errno != EPERM)
    return moat_fail (err, errno, "setgroups");
  if (setresgid (u->gid, u->gid, u->gid) < 0)
    return moat_fail (err, errno, "setresgid %u", u->gid);
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return moat_fail (err, errno, "prctl PR_SET_KEEPCAPS");
  if (setresuid (u->uid, u->uid, u->uid) < 0)
    return moat_fail (err, errno, "setresuid %u", u->uid);
  if (prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    return moat_fail (err, errno, "prctl PR_SET_KEEPCAPS");
  /* The new ids made it dumpable where fs.suid_dumpable is 1: a process
   * of the same uid could ptrace it before its seccomp filters load. */
  return linux_undumpable (err);
}

static int
last_cap (void)
{
  static int last = -1;
  if (last < 0)
    {
      cleanup_free char *s = NULL;
      int v;
      if (read_file_at (AT_FDCWD, "/proc/sys/kernel/cap_last_cap", 32, &s, NULL)
              == 0
          && (s[strcspn (s, "\n")] = '\0', parse_int (s, &v) == 0))
        last = v;
      else
        last = CAP_LAST_CAP;
    }
  return last;
}

static int
drop_bounding (uint64_t keep, struct moat_error **err)
{
  for (int c = 0; c <= last_cap () && c < 64; c++)
    if (!(keep & (1ULL << c)) && prctl (PR_CAPBSET_DROP, c, 0, 0, 0) < 0
        && errno != EINVAL)
      return moat_fail (err, errno,
                        "dropping capability %d from the bounding "
                        "set",
                        c);
  return 0;
}

static int
set_caps (const struct spec_caps *caps, struct moat_error **err)
{
  cap_t c = cap_init ();
  int r = 0;

  if (c == NULL)
    return moat_fail (err, errno, "cap_init");
  for (int i = 0; i <= last_cap () && i < 64; i++)
    {
      cap_value_t v = i;
      if (caps->effective & (1ULL << i))
        cap_set_flag (c, CAP_EFFECTIVE, 1, &v, CAP_SET);
      if (caps->permitted & (1ULL << i))
        cap_set_flag (c, CAP_PERMITTED, 1, &v, CAP_SET);
      if (caps->inheritable & (1ULL << i))
        cap_set_flag (c, CAP_INHERITABLE, 1, &v, CAP_SET);
    }
  if (cap_set_proc (c) < 0)
    r = moat_fail (err, errno, "setting capabilities");
  cap_free (c);
  if (r < 0)
    return r;
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0
      && errno != EINVAL)
    return moat_fail (err, errno, "clearing ambient capabilities");
  for (int i = 0; i <= last_cap () && i < 64; i++)
    if ((caps->ambient & (1ULL << i))
        && prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, i, 0, 0) < 0)
      return moat_fail (err, errno, "raising ambient capability %d", i);
  return 0;
}

static int
mark_fds (int preserve_fds, struct moat_error **err)
{
  /* Everything above the preserved range closes at execve; the preserved
   * ones stay open across it. */
  for (int fd = 3; fd < 3 + preserve_fds; fd++)
    {
      int fl = fcntl (fd, F_GETFD);
      if (fl >= 0)
        fcntl (fd, F_SETFD, fl & ~FD_CLOEXEC);
    }
  if (close_range (3 + preserve_fds, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
    return moat_fail (err, errno, "close_range");
  return 0;
}

/* The payload's pty belongs to its user, as with runc, or a non-root user
 * cannot reopen its own terminal. Only a pty slave of the container's own
 * devpts (majors 136-143) is touched: never a host file passed as stdio. */
static int
give_terminal_to_user (const struct spec_process *p, struct moat_error **err)
{
  struct stat st;

  if (!p->terminal || fstat (0, &st) < 0 || !S_ISCHR (st.st_mode)
      || major (st.st_rdev) < 136 || major (st.st_rdev) > 143
      || st.st_uid == p->user.uid)
    return 0;
  if (fchown (0, p->user.uid, (gid_t)-1) < 0 && errno != EINVAL)
    return moat_fail (err, errno, "handing the terminal to uid %u",
                      p->user.uid);
  return 0;
}

static int
change_to_cwd (const struct spec_process *p, int cwd_fd)
{
  return cwd_fd >= 0 ? fchdir (cwd_fd) : chdir (p->cwd);
}

/* runc's words, which tools match. */
static int
cwd_error (const struct spec_process *p, struct moat_error **err)
{
  return moat_fail (err, errno,
                    "chdir to cwd (\"%s\") set in config.json failed", p->cwd);
}

int
process_exec (const struct spec_process *p, const char *exec_path, int cwd_fd,
              int preserve_fds, int landlock_fd,
              const struct seccomp_prog *seccomp_config,
              const struct seccomp_prog *seccomp_builtin, int refusal_sock,
              struct moat_error **err)
{
  struct spec_caps none = { 0 };
  const struct spec_caps *caps = p->caps.present ? &p->caps : &none;
  bool chdir_done;
  int r;

  r = process_set_rlimits (p, err);
  if (r < 0)
    return r;
  /* Without process.capabilities the payload gets no capability at all. */
  r = drop_bounding (caps->bounding, err);
  if (r == 0)
    r = give_terminal_to_user (p, err);
  if (r < 0)
    return r;
  /* The cwd is entered as the runtime first, as runc does: a directory
   * only root can search still works for another user; if root may not,
   * the user may (a directory of its own, root_squash-like owners). */
  chdir_done = change_to_cwd (p, cwd_fd) == 0;
  if (!chdir_done && errno != EACCES && errno != EPERM)
    return cwd_error (p, err);
  r = set_user (&p->user, err);
  if (r < 0)
    return r;
  r = set_caps (caps, err);
  if (r < 0)
    return r;
  umask (p->user.has_umask ? p->user.umask : 022);
  if (!chdir_done && change_to_cwd (p, cwd_fd) < 0)
    return cwd_error (p, err);
  /* The exec label before no_new_privs, as runc: a transition NNP would
   * bound. A no-op where SELinux is off. */
  r = selinux_set_exec_label (p->selinux_label, err);
  if (r < 0)
    return r;
  if (p->no_new_privileges && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return moat_fail (err, errno, "setting no_new_privs");
  r = mark_fds (preserve_fds, err);
  if (r < 0)
    return r;
  /* The payload starts with every signal at its default and none blocked,
   * whatever moat's caller left behind (nohup, a Python or Go parent). */
  reset_signal_state ();
  /* G14: after no_new_privs, which Landlock needs, and before the filters,
   * which may refuse its syscalls. */
  r = landlock_enforce (landlock_fd, err);
  if (r < 0)
    return r;
  /* The config's filter, then the built-in one: where both deny, the
   * kernel answers with the last loaded (G8's EPERM and ENOSYS). */
  if (seccomp_config && seccomp_config->n_insns > 0)
    {
      struct seccomp_prog stacked = { 0 };
      if (seccomp_builtin && seccomp_builtin->n_insns > 0)
        seccomp_prog_let_filter_stack (seccomp_config, &stacked);
      r = seccomp_load (stacked.n_insns ? &stacked : seccomp_config, err);
      seccomp_prog_clear (&stacked);
      if (r < 0)
        return r;
    }
  if (seccomp_builtin && seccomp_builtin->n_insns > 0)
    {
      r = refusal_sock >= 0
              ? seccomp_refusals_load (seccomp_builtin, refusal_sock, err)
              : seccomp_load (seccomp_builtin, err);
      if (r < 0)
        return r;
    }
  if (exec_path == NULL)
    return 0;
  execve (exec_path, p->args, p->env ? p->env : (char *[]){ NULL });
  if (errno == ENOENT)
    return moat_error_setx (
        err, errno, "exec: \"%s\": no such file or directory", p->args[0]);
  if (errno == EACCES)
    return moat_error_setx (err, errno, "exec: \"%s\": permission denied",
                            p->args[0]);
  return moat_fail (err, errno, "exec %s", p->args[0]);
}
