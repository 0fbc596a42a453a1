/* start, state, kill, delete, run and list: the verbs that act on a
 * container create made. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/pidfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../hooks/hooks.h"
#include "audit.h"
#include "cgroup/cgroup.h"
#include "container_internal.h"
#include "netguard/netguard.h"
#include "../policy/profile.h"
#include "statedir.h"
#include "init/terminal.h"
#include "userns/userns.h"
#include "../lib/util.h"

int
signal_parse (const char *s, int *ret)
{
  static const struct
  {
    const char *name;
    int sig;
  } names[] = {
    { "HUP", SIGHUP },   { "INT", SIGINT },       { "QUIT", SIGQUIT },
    { "ILL", SIGILL },   { "TRAP", SIGTRAP },     { "ABRT", SIGABRT },
    { "IOT", SIGIOT },   { "BUS", SIGBUS },       { "FPE", SIGFPE },
    { "KILL", SIGKILL }, { "USR1", SIGUSR1 },     { "SEGV", SIGSEGV },
    { "USR2", SIGUSR2 }, { "PIPE", SIGPIPE },     { "ALRM", SIGALRM },
    { "TERM", SIGTERM }, { "STKFLT", SIGSTKFLT }, { "CHLD", SIGCHLD },
    { "CONT", SIGCONT }, { "STOP", SIGSTOP },     { "TSTP", SIGTSTP },
    { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },     { "URG", SIGURG },
    { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ },     { "VTALRM", SIGVTALRM },
    { "PROF", SIGPROF }, { "WINCH", SIGWINCH },   { "IO", SIGIO },
    { "POLL", SIGPOLL }, { "PWR", SIGPWR },       { "SYS", SIGSYS },
  };
  int v;

  if (s == NULL || *s == '\0')
    return -EINVAL;
  if (parse_int (s, &v) == 0)
    {
      if (v <= 0 || v > SIGRTMAX)
        return -EINVAL;
      *ret = v;
      return 0;
    }
  if (strncasecmp (s, "SIG", 3) == 0)
    s += 3;
  for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++)
    if (strcasecmp (s, names[i].name) == 0)
      {
        *ret = names[i].sig;
        return 0;
      }
  if (strncasecmp (s, "RTMIN", 5) == 0 || strncasecmp (s, "RTMAX", 5) == 0)
    {
      bool min = strncasecmp (s, "RTMIN", 5) == 0;
      int off = 0;
      if (s[5] && (s[5] != (min ? '+' : '-') || parse_int (s + 6, &off) < 0))
        return -EINVAL;
      v = min ? SIGRTMIN + off : SIGRTMAX - off;
      if (v < SIGRTMIN || v > SIGRTMAX)
        return -EINVAL;
      *ret = v;
      return 0;
    }
  return -EINVAL;
}

static void
warn_hook (const char *what, struct moat_error **err)
{
  /* poststart and poststop failures do not undo anything (runtime-spec):
   * they are reported and the verb goes on. */
  if (*err)
    {
      fprintf (stderr, "moat: warning: %s: %s\n", what, (*err)->msg);
      moat_error_free (err);
    }
}

/* The init's network namespace, checked to be the init's: otherwise a
 * process its pid went to would have its namespace's links deleted. */
static int
start_fallback_in_init_ns (const struct container_state *st,
                           const struct netguard_rules *rules,
                           struct moat_error **err)
{
  static const char *const files[] = { "ns/net" };
  cleanup_close int nsfd = -1;
  int r = container_init_proc_open (st, files, 1, &nsfd);

  if (r == -ESRCH)
    return moat_fail (err, 0, "container init is not waiting for start");
  if (r < 0)
    return moat_fail (err, -r, "opening /proc/%d/ns/net", st->pid);
  return netguard_fallback_ns (nsfd, st->pid, rules, err);
}

/* No cgroup v2 hierarchy: the guard is set up in the container's network
 * namespace before its first instruction, with the lists and the
 * nameservers create judged (saved with the decision), not with the
 * operator config or resolv.conf as they are now. */
static int
start_fallback_guard (const struct container_state *st,
                      const struct decision *d, struct moat_error **err)
{
  struct decision_guard saved;
  struct cidr dns[NETGUARD_MAX_DNS];
  size_t n_dns = 0;
  struct netguard_rules rules;
  int r;

  if (decision_guard_lists (d, &saved, err) < 0)
    return -1;
  rules = (struct netguard_rules){
    .egress = saved.egress,
    .allowlist = saved.allowlist,
    .deny = saved.deny,
    .n_deny = saved.n_deny,
    .allow = saved.allow,
    .n_allow = saved.n_allow,
    .private_nets = saved.private_nets,
    .n_private = saved.n_private,
  };

  for (size_t i = 0; d->nameservers[i] && n_dns < NETGUARD_MAX_DNS; i++)
    if (cidr_parse (d->nameservers[i], &dns[n_dns]) == 0)
      n_dns++;
  rules.dns = dns;
  rules.n_dns = n_dns;
  r = start_fallback_in_init_ns (st, &rules, err);
  decision_guard_free (&saved);
  if (r < 0)
    return moat_error_wrap (err, "network guard (fallback)");
  return 0;
}

/* The init's go: a byte into exec.fifo, whose write end also tells when
 * the init has exec'd (or died). The fd to poll for that is returned. */
static int
start_through_fifo (int dirfd, int *ret_fifo, struct moat_error **err)
{
  int fifo = openat (dirfd, "exec.fifo", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fifo < 0)
    return moat_fail (err, errno == ENXIO ? 0 : errno,
                      "container init is not waiting for start");
  *ret_fifo = fifo;
  if (write (fifo, "0", 1) != 1)
    return moat_fail (err, errno, "writing exec.fifo");
  unlinkat (dirfd, "exec.fifo", 0);
  return 0;
}

/* run's: the byte goes through create's socketpair instead. */
static int
start_through_socket (int start_fd, struct moat_error **err)
{
  if (send (start_fd, "0", 1, MSG_NOSIGNAL) == 1)
    return 0;
  return moat_fail (err, errno == EPIPE || errno == ECONNRESET ? 0 : errno,
                    "container init is not waiting for start");
}

/* start of a container known to be "created": s is its final spec, d its
 * saved decision where the caller read it (NULL: read here if needed);
 * start_fd: run's channel to the init (-1: exec.fifo). */
static int
start_created (const struct moat_globals *g, int dirfd,
               struct container_state *st, const struct spec *s,
               const struct decision *d, int start_fd, struct moat_error **err)
{
  cleanup_close int fifo = -1;
  cleanup_free char *json = NULL;
  cleanup_error struct moat_error *hook_err = NULL;
  cleanup_decision struct decision *loaded = NULL;
  int r;

  if (st->netguard && strcmp (st->netguard, "fallback") == 0)
    {
      r = d ? 0 : container_load_decision (g, dirfd, st, &loaded, err);
      if (r == 0)
        r = start_fallback_guard (st, d ? d : loaded, err);
      if (r < 0)
        return r;
    }
  if (g->audit && st->netguard)
    g->audit->mechanism = strcmp (st->netguard, "cgroup-bpf") == 0
                              ? "cgroup-bpf"
                          : strcmp (st->netguard, "fallback") == 0 ? "fallback"
                                                                   : "none";
  r = start_fd >= 0 ? start_through_socket (start_fd, err)
                    : start_through_fifo (dirfd, &fifo, err);
  if (r < 0)
    return r;
  st->started = true;
  r = statedir_write_state (dirfd, st, err);
  if (r < 0)
    return r;
  if (s->hooks[HOOK_POSTSTART].n > 0)
    {
      /* poststart comes after the payload is executed (runtime-spec): the
       * init holds exec.fifo (or its socket) open until its execve or its
       * death, then our end reports POLLERR (POLLHUP). */
      struct pollfd pfd
          = { .fd = start_fd >= 0 ? start_fd : fifo, .events = 0 };
      if (TEMP_FAILURE_RETRY (poll (&pfd, 1, -1)) < 0)
        return moat_fail (err, errno, "waiting for the container's exec");
      if (state_hook_json (st, "running", &json, err) < 0)
        return -1;
      hooks_run (&s->hooks[HOOK_POSTSTART], HOOK_POSTSTART, json, &hook_err);
      warn_hook ("poststart hook", &hook_err);
    }
  return 0;
}

int
container_start (const struct moat_globals *g, const char *id,
                 struct moat_error **err)
{
  cleanup_close int dirfd = -1;
  cleanup_state struct container_state *st = NULL;
  cleanup_decision struct decision *d = NULL;
  const char *status;
  int r;

  r = container_load (g, id, true, NULL, &dirfd, &st, err);
  if (r < 0)
    return r;
  status = container_status (dirfd, st);
  if (strcmp (status, "stopped") == 0)
    return moat_fail (err, 0, "cannot start a container that has stopped");
  if (strcmp (status, "created") != 0)
    return moat_fail (err, 0, "cannot start an already running container");
  r = container_load_decision (g, dirfd, st, &d, err);
  if (r < 0)
    return r;
  return start_created (g, dirfd, st, d->spec, d, -1, err);
}

/* Create has just made it, and held the lock since: it is "created" (or
 * its init has died, which the fifo tells). */
int
container_start_carried (const struct moat_globals *g,
                         struct create_carry *carry, struct moat_error **err)
{
  int r = start_created (g, carry->dirfd, carry->st, carry->spec, NULL,
                         carry->start_fd, err);
  (void)flock (carry->dirfd, LOCK_UN);
  return r;
}

int
container_state (const struct moat_globals *g, const char *id, char **ret_json,
                 struct moat_error **err)
{
  cleanup_close int dirfd = -1;
  cleanup_state struct container_state *st = NULL;
  const char *status;
  int r;

  r = container_load (g, id, false, NULL, &dirfd, &st, err);
  if (r < 0)
    return r;
  status = container_status (dirfd, st);
  if (strcmp (status, "stopped") == 0)
    st->pid = 0;
  return state_oci_json (st, status, true, ret_json, err);
}

static int
signal_init (const struct container_state *st, int sig, struct moat_error **err)
{
  cleanup_close int pidfd = container_init_pidfd (st);
  if (pidfd < 0)
    return moat_fail (err, 0, "no such process");
  if (pidfd_send_signal (pidfd, sig, NULL, 0) < 0)
    {
      if (errno == ESRCH)
        return moat_fail (err, 0, "no such process");
      return moat_fail (err, errno, "sending signal %d", sig);
    }
  return 0;
}

int
container_kill (const struct moat_globals *g, const char *id, int sig, bool all,
                struct moat_error **err)
{
  cleanup_close int dirfd = -1;
  cleanup_state struct container_state *st = NULL;
  const char *status;
  int r;

  r = container_load (g, id, false, NULL, &dirfd, &st, err);
  if (r < 0)
    return r;
  status = container_status (dirfd, st);
  if (strcmp (status, "stopped") == 0 && !all)
    return moat_fail (err, 0, "container not running");
  if (all)
    {
      struct cgroup *cg = NULL;
      r = cgroup_open (st->cgroup, &cg, err);
      if (r < 0)
        return r;
      r = cgroup_kill_all (cg, sig, err);
      cgroup_free (cg);
      return r;
    }
  return signal_init (st, sig, err);
}

/* Wait (bounded) until the init is gone. */
static void
wait_gone (const struct container_state *st)
{
  for (int i = 0; i < 500 && container_init_alive (st); i++)
    {
      struct timespec ts = { 0, 10 * 1000 * 1000 };
      nanosleep (&ts, NULL);
    }
}

/* The exit status of an init that exited and that its parent (an engine's
 * shim) has not reaped yet: /proc/PID/stat's last field (Linux 3.5), in
 * waitpid's encoding. -1 when unknown (reaped, or never ran). */
static int
zombie_exit_status (const struct container_state *st)
{
  char pstate = 0;
  uint64_t start = 0;
  int code;

  /* One read: the state, the start time and the status are of one
   * process, which a zombie keeps the pid of until it is reaped. */
  if (st->pid <= 0 || st->pid_starttime == 0
      || proc_stat_read_exit (st->pid, &pstate, &start, &code) < 0
      || pstate != 'Z' || start != st->pid_starttime)
    return -1;
  if (WIFEXITED (code))
    return WEXITSTATUS (code);
  return WIFSIGNALED (code) ? 128 + WTERMSIG (code) : -1;
}

/* Poststop hooks, from the final spec (NULL: a corrupt or old saved
 * decision, which must not keep a delete from cleaning up). */
static void
run_poststop_hooks (const struct spec *final, const struct container_state *st)
{
  cleanup_free char *json = NULL;
  cleanup_error struct moat_error *hook_err = NULL;
  struct container_state copy = *st;

  if (final == NULL || final->hooks[HOOK_POSTSTOP].n == 0)
    return;
  copy.pid = 0;
  if (state_hook_json (&copy, "stopped", &json, &hook_err) == 0)
    hooks_run (&final->hooks[HOOK_POSTSTOP], HOOK_POSTSTOP, json, &hook_err);
  warn_hook ("poststop hook", &hook_err);
}

/* carry: what `run` knows already (the open cgroup, the final spec, the
 * digest create took); NULL for a delete of its own, which reads them. */
static int
destroy_container (const struct moat_globals *g, int rootfd, int dirfd,
                   const struct container_state *st, struct create_carry *carry,
                   struct moat_error **err)
{
  cleanup_decision struct decision *d = NULL;
  cleanup_error struct moat_error *load_err = NULL;
  struct cgroup *cg = carry ? steal_pointer (&carry->cg) : NULL;
  const struct spec *final = carry ? carry->spec : NULL;
  int r;

  if (g->audit)
    {
      if (carry == NULL)
        {
          free (g->audit->config_digest);
          /* A container of an older moat: its copy of config.json. */
          g->audit->config_digest
              = st->config_digest ? xstrdup (st->config_digest)
                                  : audit_file_digest (dirfd, "config.json");
        }
      if (g->audit->exit_status < 0)
        g->audit->exit_status = zombie_exit_status (st);
    }
  {
    cleanup_close int pidfd = container_init_pidfd (st);
    if (pidfd >= 0)
      pidfd_send_signal (pidfd, SIGKILL, NULL, 0);
  }
  if (cg == NULL && st->cgroup)
    cgroup_open (st->cgroup, &cg, NULL);
  if (cg)
    {
      /* Read (and taken out of the map containers share) before the
       * cgroup, and with it the guard, goes. */
      if (cgroup_unified_fd (cg) >= 0)
        {
          char **into = g->audit ? &g->audit->refused_connects : NULL;
          if (into)
            free (*into);
          if (netguard_refusals_take (cgroup_unified_fd (cg), into) < 0 && into)
            *into = NULL;
        }
      r = cgroup_destroy (cg, err);
      cgroup_free (cg);
      if (r < 0)
        return r;
    }
  wait_gone (st);
  if (final == NULL
      && container_load_decision (g, dirfd, st, &d, &load_err) == 0)
    final = d->spec;
  run_poststop_hooks (final, st);
  r = statedir_remove (rootfd, st->id, err);
  if (r == 0 && st->userns_host_id)
    {
      /* G12: the block is free once nothing of the container is left,
       * in the pool create took it from (the operator config may have
       * moved it since; `run` took it from g's in this process). */
      char real[PATH_MAX];
      if (realpath (g->root, real))
        userns_block_release (d ? d->userns_pool_dir
                                : g->operator_config->userns_pool_dir,
                              st->userns_host_id, real, st->id);
    }
  return r;
}

int
container_delete_carried (const struct moat_globals *g,
                          struct create_carry *carry, struct moat_error **err)
{
  struct stat sb;
  if (TEMP_FAILURE_RETRY (flock (carry->dirfd, LOCK_EX)) < 0)
    return moat_fail (err, errno, "locking the state of %s", carry->st->id);
  /* A delete of another process's removed it while it ran: as a forced
   * delete of a container that is gone, nothing to do. */
  if (fstat (carry->dirfd, &sb) < 0 || sb.st_nlink == 0)
    return 0;
  return destroy_container (g, carry->rootfd, carry->dirfd, carry->st, carry,
                            err);
}

/* delete --force of a state dir whose state.json is unreadable: the
 * cgroup (and with it every process of the container) is found from the
 * final spec in policy.json (or the copy of config.json an older moat
 * kept), or the default path when neither can be read. */
static void
destroy_orphan_cgroup (const struct moat_globals *g, int rootfd, const char *id)
{
  cleanup_close int dirfd
      = openat (rootfd, id, O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  cleanup_free char *text = NULL;
  cleanup_free char *rel = NULL;
  cleanup_spec struct spec *s = NULL;
  cleanup_decision struct decision *d = NULL;
  struct cgroup *cg = NULL;
  size_t len;

  if (dirfd < 0)
    return;
  if (read_file_at (dirfd, "policy.json", JSON_MAX_SIZE, &text, &len) == 0)
    decision_parse (text, len, &d, NULL);
  else if (read_file_at (dirfd, "config.json", JSON_MAX_SIZE_CONFIG, &text,
                         &len)
           == 0)
    spec_parse (text, len, &s, NULL);
  if (d)
    s = steal_pointer (&d->spec);
  if (cgroup_resolve_path (s ? s->linux_.cgroups_path : NULL, id,
                           g->systemd_cgroup, &rel, NULL)
          < 0
      || cgroup_open (rel, &cg, NULL) < 0)
    return;
  cgroup_destroy (cg, NULL);
  cgroup_free (cg);
}

int
container_delete (const struct moat_globals *g, const char *id, bool force,
                  struct moat_error **err)
{
  cleanup_close int rootfd = -1;
  cleanup_close int dirfd = -1;
  cleanup_state struct container_state *st = NULL;
  const char *status;
  int r;

  r = container_load (g, id, true, &rootfd, &dirfd, &st, err);
  if (r < 0)
    {
      /* A state dir with an unreadable state.json (a crash, a corrupt file)
       * can still be removed by force. */
      if (force && rootfd < 0)
        {
          /* Not -ENOENT alone: a missing state.json is ENOENT too. */
          cleanup_close int rfd = -1;
          bool gone
              = statedir_root_open (g->root, false, &rfd, NULL) == 0 && rfd < 0;
          if (rfd >= 0 && container_id_check (id, NULL) == 0)
            {
              if (faccessat (rfd, id, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                {
                  char real[PATH_MAX];
                  int rr;
                  moat_error_free (err);
                  destroy_orphan_cgroup (g, rfd, id);
                  rr = statedir_remove (rfd, id, err);
                  /* G12: the block its create took, if it got that far. */
                  if (rr == 0 && realpath (g->root, real))
                    userns_block_release_owner (g->operator_config, real, id);
                  return rr;
                }
              gone = errno == ENOENT;
            }
          /* runc and crun: forcing the delete of a container that does not
           * exist succeeds (an engine's cleanup may run twice). */
          if (gone && container_id_check (id, NULL) == 0)
            {
              moat_error_free (err);
              return 0;
            }
        }
      return r;
    }
  status = container_status (dirfd, st);
  if (!force && strcmp (status, "stopped") != 0
      && strcmp (status, "created") != 0)
    return moat_fail (err, 0,
                      "cannot delete container %s that is not stopped: %s", id,
                      status);
  return destroy_container (g, rootfd, dirfd, st, NULL, err);
}

int
container_wait_forwarding (pid_t pid, int master, int *ret_status,
                           struct moat_error **err)
{
  static const int forward[]
      = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH };
  sigset_t set, old;
  cleanup_close int sfd = -1;
  cleanup_close int pidfd = -1;
  int status;

  sigemptyset (&set);
  for (size_t i = 0; i < sizeof (forward) / sizeof (forward[0]); i++)
    sigaddset (&set, forward[i]);
  sigprocmask (SIG_BLOCK, &set, &old);
  sfd = signalfd (-1, &set, SFD_CLOEXEC);
  pidfd = pidfd_open (pid, 0);
  if (master >= 0)
    {
      /* The relay returns when the pty hangs up (the init exited). */
      terminal_relay (master, NULL);
    }
  for (;;)
    {
      struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN },
                             { .fd = sfd, .events = POLLIN } };
      if (poll (p, 2, -1) < 0 && errno != EINTR)
        break;
      if (p[1].revents & POLLIN)
        {
          struct signalfd_siginfo si;
          if (read (sfd, &si, sizeof (si)) == sizeof (si))
            kill (pid, (int)si.ssi_signo);
        }
      if (p[0].revents & POLLIN)
        break;
    }
  sigprocmask (SIG_SETMASK, &old, NULL);
  if (TEMP_FAILURE_RETRY (waitpid (pid, &status, 0)) < 0)
    return moat_fail (err, errno, "waiting for the process");
  if (WIFEXITED (status))
    *ret_status = WEXITSTATUS (status);
  else if (WIFSIGNALED (status))
    *ret_status = 128 + WTERMSIG (status);
  else
    *ret_status = 1;
  return 0;
}

void
create_carry_release (struct create_carry *carry)
{
  if (carry->rootfd >= 0)
    close (carry->rootfd);
  if (carry->dirfd >= 0)
    close (carry->dirfd);
  if (carry->start_fd >= 0)
    close (carry->start_fd);
  carry->rootfd = carry->dirfd = carry->start_fd = -1;
  if (carry->cg)
    cgroup_free (carry->cg);
  carry->cg = NULL;
  if (carry->st)
    state_free (carry->st);
  carry->st = NULL;
  spec_free (carry->spec);
  carry->spec = NULL;
}

int
container_run (const struct moat_globals *g, const struct create_opts *o,
               int *ret_status, struct moat_error **err)
{
  cleanup_close int master = -1;
  cleanup_error struct moat_error *del_err = NULL;
  struct create_carry carry = CREATE_CARRY_INIT;
  pid_t pid;
  int r;

  r = container_create_internal (g, o, true, &pid, &master, &carry, err);
  if (r < 0)
    return r;
  /* Told before the container's own output, not after it exits. */
  if (g->audit)
    audit_tell_clamps (g->audit->overrides, &g->audit->told, "run", o->id);
  container_debug_report (g, o->id);
  r = container_start_carried (g, &carry, err);
  if (r < 0 || o->detach)
    {
      create_carry_release (&carry);
      if (r < 0)
        container_delete (g, o->id, true, &del_err);
      *ret_status = r < 0 ? 1 : 0;
      return r;
    }
  r = container_wait_forwarding (pid, master, ret_status, err);
  if (r == 0 && g->audit)
    g->audit->exit_status = *ret_status;
  if (!o->keep)
    container_delete_carried (g, &carry, r < 0 ? &del_err : err);
  create_carry_release (&carry);
  return r;
}

static int
by_name (const struct dirent **a, const struct dirent **b)
{
  return strcmp ((*a)->d_name, (*b)->d_name);
}

static int
is_id (const struct dirent *de)
{
  return de->d_name[0] != '.' && container_id_check (de->d_name, NULL) == 0;
}

/* runc's "owner": the user name of the state dir's owner, from
 * /etc/passwd as runc reads it (not NSS: a static glibc would have to load
 * its modules), "#UID" where it has none. */
static char *
owner_name (int dirfd)
{
  struct stat sb;
  struct passwd pw, *res = NULL;
  char buf[1024];
  FILE *f;

  if (fstat (dirfd, &sb) < 0)
    return xstrdup ("");
  f = fopen ("/etc/passwd", "re");
  while (f && fgetpwent_r (f, &pw, buf, sizeof (buf), &res) == 0 && res)
    if (pw.pw_uid == sb.st_uid)
      {
        fclose (f);
        return xstrdup (pw.pw_name);
      }
  if (f)
    fclose (f);
  return xasprintf ("#%u", (unsigned)sb.st_uid);
}

static void
list_one (int rootfd, const char *name, enum list_format format,
          struct json_writer *w, FILE *out)
{
  cleanup_close int dirfd = openat (rootfd, name, O_DIRECTORY | O_CLOEXEC);
  cleanup_state struct container_state *st = NULL;
  cleanup_free char *owner = NULL;
  const char *status;

  if (dirfd < 0 || statedir_read_state (dirfd, &st, NULL) < 0)
    return;
  if (format == LIST_QUIET)
    {
      fprintf (out, "%s\n", st->id);
      return;
    }
  status = container_status (dirfd, st);
  if (strcmp (status, "stopped") == 0)
    st->pid = 0;
  owner = owner_name (dirfd);
  st->owner = owner;
  if (format == LIST_JSON)
    {
      cleanup_free char *one = NULL;
      if (state_oci_json (st, status, false, &one, NULL) == 0)
        jw_raw (w, one);
    }
  else
    fprintf (out, "%-12s %-8d %-10s %-40s %-30s %s\n", st->id, st->pid, status,
             st->bundle ? st->bundle : "", st->created ? st->created : "",
             owner);
  st->owner = NULL;
}

int
container_list (const struct moat_globals *g, enum list_format format,
                FILE *out, struct moat_error **err)
{
  cleanup_close int rootfd = -1;
  struct json_writer *w = NULL;
  struct dirent **names = NULL;
  int n = 0;
  int r = statedir_root_open (g->root, false, &rootfd, err);

  if (r < 0)
    return r;
  if (format == LIST_JSON)
    {
      w = json_writer_new (false);
      jw_array_begin (w);
    }
  else if (format == LIST_TABLE)
    fprintf (out, "%-12s %-8s %-10s %-40s %-30s %s\n", "ID", "PID", "STATUS",
             "BUNDLE", "CREATED", "OWNER");
  /* Sorted by id, as runc's (a directory's order is the filesystem's). */
  if (rootfd >= 0)
    n = scandirat (rootfd, ".", &names, is_id, by_name);
  for (int i = 0; i < n; i++)
    {
      list_one (rootfd, names[i]->d_name, format, w, out);
      free (names[i]);
    }
  free (names);
  if (format == LIST_JSON)
    {
      cleanup_free char *text = NULL;
      jw_array_end (w);
      text = json_writer_finish (w);
      fprintf (out, "%s\n", text);
    }
  return 0;
}
