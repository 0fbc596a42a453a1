/* The lifecycle on the host side: create, start, state, kill, delete, run,
 * list. The data path of create reads top to bottom: parse config.json,
 * apply the profile, set up state and cgroup, clone the init, run the
 * hooks at their sync points, write state, return. */
#include "container.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../hooks/hooks.h"
#include "../oci/state.h"
#include "audit.h"
#include "cgroup.h"
#include "container_internal.h"
#include "debug.h"
#include "idmap.h"
#include "linux.h"
#include "netguard.h"
#include "../policy/profile.h"
#include "seccomp.h"
#include "seccomp_agent.h"
#include "selinux.h"
#include "statedir.h"
#include "sync.h"
#include "terminal.h"
#include "userns.h"
#include "../lib/util.h"

int
container_id_check (const char *id, struct moat_error **err)
{
  size_t n;
  if (id == NULL || *id == '\0')
    return moat_fail (err, 0, "container id is empty");
  n = strlen (id);
  if (n > 1024)
    return moat_fail (err, 0, "container id is longer than 1024 characters");
  for (size_t i = 0; i < n; i++)
    {
      char c = id[i];
      bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                   || (c >= '0' && c <= '9');
      if (alnum || (i > 0 && (c == '_' || c == '.' || c == '+' || c == '-')))
        continue;
      return moat_fail (err, 0,
                        "invalid container id: must match "
                        "[A-Za-z0-9][A-Za-z0-9_.+-]*");
    }
  return 0;
}

void
container_audit_bundle (const struct moat_globals *g, const char *bundle)
{
  /* run goes through create, start and delete: the last one wins. */
  if (g->audit == NULL || bundle == NULL)
    return;
  free (g->audit->bundle);
  g->audit->bundle = xstrdup (bundle);
}

int
proc_stat_read (pid_t pid, char *ret_state, uint64_t *ret_starttime)
{
  char path[64];
  cleanup_free char *buf = NULL;
  char *p;
  int r;

  snprintf (path, sizeof (path), "/proc/%d/stat", pid);
  r = read_file_at (AT_FDCWD, path, 4096, &buf, NULL);
  if (r < 0)
    return r;
  /* comm may hold spaces and parens: the fields start after the last ')'. */
  p = strrchr (buf, ')');
  if (p == NULL || p[1] != ' ')
    return -EINVAL;
  p += 2;
  *ret_state = *p;
  for (int field = 3; field < 22; field++)
    {
      p = strchr (p, ' ');
      if (p == NULL)
        return -EINVAL;
      p++;
    }
  {
    char *end = strchr (p, ' ');
    if (end)
      *end = '\0';
    return parse_uint64 (p, ret_starttime);
  }
}

bool
container_init_alive (const struct container_state *st)
{
  char state;
  uint64_t start;
  if (st->pid <= 0)
    return false;
  if (proc_stat_read (st->pid, &state, &start) < 0)
    return false;
  if (state == 'Z' || state == 'X')
    return false;
  return st->pid_starttime == 0 || start == st->pid_starttime;
}

const char *
container_status (int dirfd, const struct container_state *st)
{
  bool alive = container_init_alive (st);
  if (st->created == NULL || *st->created == '\0')
    return alive ? "creating" : "stopped";
  if (!alive)
    return "stopped";
  if (faccessat (dirfd, "exec.fifo", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    return "created";
  if (st->cgroup)
    {
      struct cgroup *cg = NULL;
      bool frozen = false;
      if (cgroup_open (st->cgroup, &cg, NULL) == 0)
        {
          cgroup_is_frozen (cg, &frozen, NULL);
          cgroup_free (cg);
        }
      if (frozen)
        return "paused";
    }
  return "running";
}

int
container_load (const struct moat_globals *g, const char *id, bool lock,
                int *ret_rootfd, int *ret_dirfd,
                struct container_state **ret_st, struct moat_error **err)
{
  cleanup_close int rootfd = -1;
  cleanup_close int dirfd = -1;
  int r;

  r = container_id_check (id, err);
  if (r < 0)
    return r;
  rootfd = open (g->root, O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    {
      if (errno == ENOENT)
        {
          return moat_error_setx (err, ENOENT,
                                  "container \"%s\" does not exist", id);
        }
      return moat_fail (err, errno, "opening state root %s", g->root);
    }
  r = statedir_open (rootfd, id, lock, &dirfd, err);
  if (r < 0)
    return r;
  r = statedir_read_state (dirfd, ret_st, err);
  if (r < 0)
    return r;
  container_audit_bundle (g, (*ret_st)->bundle);
  container_audit_profile (g, (*ret_st)->profile);
  if (ret_rootfd)
    *ret_rootfd = steal_fd (&rootfd);
  *ret_dirfd = steal_fd (&dirfd);
  return 0;
}

static void
close_fds (int *fds, size_t n)
{
  for (size_t i = 0; fds && i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  free (fds);
}

static int
write_pid_file (const char *path, pid_t pid, struct moat_error **err)
{
  cleanup_free char *dir = NULL;
  cleanup_close int dfd = -1;
  const char *base = strrchr (path, '/');
  char buf[32];
  int r;

  dir = base ? strndup (path, base - path) : xstrdup (".");
  base = base ? base + 1 : path;
  dfd = open (*dir ? dir : "/", O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return moat_fail (err, errno, "pid file %s", path);
  snprintf (buf, sizeof (buf), "%d", pid);
  r = write_file_atomic (dfd, base, buf, strlen (buf), 0644);
  if (r < 0)
    return moat_fail (err, -r, "pid file %s", path);
  return 0;
}

int
read_config (const char *bundle, struct spec **ret, char **ret_text,
             size_t *ret_len, struct moat_error **err)
{
  cleanup_free char *path = xasprintf ("%s/config.json", bundle);
  cleanup_free char *text = NULL;
  size_t len;
  int r;

  r = read_file_at (AT_FDCWD, path, JSON_MAX_SIZE_CONFIG, &text, &len);
  if (r == -EFBIG)
    return moat_fail (err, 0, "config.json: larger than 4 MiB");
  if (r < 0)
    return moat_fail (err, -r, "reading %s", path);
  /* spec_parse's messages start with "config.json: " already. */
  r = spec_parse (text, len, ret, err);
  if (r < 0)
    return r;
  *ret_text = steal_pointer (&text);
  *ret_len = len;
  return 0;
}

int
resolve_rootfs (const struct spec *s, const char *bundle, char **ret,
                struct moat_error **err)
{
  cleanup_free char *path = NULL;
  char real[PATH_MAX];
  struct stat st;

  path = s->root_path[0] == '/' ? xstrdup (s->root_path)
                                : xasprintf ("%s/%s", bundle, s->root_path);
  if (realpath (path, real) == NULL)
    return moat_fail (err, errno, "root.path %s", path);
  if (stat (real, &st) < 0)
    return moat_fail (err, errno, "root.path %s", path);
  if (!S_ISDIR (st.st_mode))
    return moat_fail (err, ENOTDIR, "root.path %s", path);
  if (strcmp (real, "/") == 0)
    return moat_fail (err, 0, "root.path %s: the host's / cannot be a rootfs",
                      path);
  *ret = xstrdup (real);
  return 0;
}

static char *
seccomp_cache_dir (const struct moat_globals *g)
{
  return xasprintf ("%s/.cache", g->root);
}

/* Everything create sets up on the host; released in reverse on failure. */
struct create_ctx
{
  int rootfd, dirfd;
  bool statedir_made;
  struct cgroup *cg;
  pid_t pid;
  int *src_fds;
  size_t n_src;
  int ns_fds[NS__MAX];
  struct seccomp_prog sc_config, sc_builtin;
  /* G12: the block held (0: none), where its record names us, the rootfs
   * tree to idmap and which binds get idmapped. */
  const struct profile *profile;
  uint32_t userns_first;
  char *root_path;
  int rootfs_tree;
  bool *idmap;
  int *cg_self_fds;
};

static void
create_ctx_undo (struct create_ctx *c, const char *id)
{
  if (c->pid > 0)
    {
      kill (c->pid, SIGKILL);
      waitpid (c->pid, NULL, 0);
    }
  if (c->cg)
    cgroup_destroy (c->cg, NULL);
  if (c->statedir_made)
    statedir_remove (c->rootfd, id, NULL);
  if (c->userns_first)
    userns_block_release (c->profile, c->userns_first, c->root_path, id);
}

static void
create_ctx_release (struct create_ctx *c)
{
  if (c->cg_self_fds)
    cgroup_close_self_files (c->cg_self_fds, cgroup_n_hiers (c->cg));
  if (c->cg)
    cgroup_free (c->cg);
  close_fds (c->src_fds, c->n_src);
  free (c->idmap);
  free (c->root_path);
  if (c->rootfs_tree >= 0)
    close (c->rootfs_tree);
  for (int t = 0; t < NS__MAX; t++)
    if (c->ns_fds[t] >= 0)
      close (c->ns_fds[t]);
  seccomp_prog_clear (&c->sc_config);
  seccomp_prog_clear (&c->sc_builtin);
  if (c->dirfd >= 0)
    close (c->dirfd);
  if (c->rootfd >= 0)
    close (c->rootfd);
}

/* A nameserver the guard refuses anyway (a metadata address, G2, or one
 * the operator denies): DNS through it will fail, say so now. */
static void
container_warn_dns (const struct profile *p, const struct cidr *dns,
                    size_t n_dns)
{
  for (size_t i = 0; i < n_dns; i++)
    for (size_t j = 0; j < p->n_deny; j++)
      if (cidr_contains (&p->deny[j], &dns[i]))
        {
          cleanup_free char *ns = cidr_to_string (&dns[i]);
          cleanup_free char *d = cidr_to_string (&p->deny[j]);
          fprintf (stderr,
                   "moat: warning: nameserver %s of resolv.conf is in the "
                   "denied range %s: DNS through it is refused\n",
                   ns, d);
          break;
        }
}

/* The run.moat.* requests the profile ignored that concern the network
 * (a loosening run.moat.egress-allow entry): told on stderr too. */
static void
container_warn_ignored (const struct override_list *ov)
{
  for (size_t i = 0; i < ov->n; i++)
    if (ov->v[i].kind == OVERRIDE_IGNORED
        && strcmp (ov->v[i].path, "annotations.run.moat.egress-allow") == 0)
      fprintf (stderr, "moat: warning: %s: %s ignored (%s)\n", ov->v[i].path,
               ov->v[i].asked ? ov->v[i].asked : "",
               ov->v[i].enforced ? ov->v[i].enforced : "");
}

/* Back to moat's own pid and time namespaces for its later children. */
static void
restore_parent_namespaces (int pid_ns, int time_ns)
{
  if (pid_ns >= 0)
    (void)setns (pid_ns, CLONE_NEWPID);
  if (time_ns >= 0)
    (void)setns (time_ns, CLONE_NEWTIME);
}

static int
create_in_ctx (const struct moat_globals *g, const struct profile *eff,
               struct override_list *ov, const struct create_opts *o,
               struct create_ctx *c, struct spec *s, const char *config_text,
               size_t config_len, const char *bundle, const char *rootfs,
               bool for_run, int *ret_master, struct moat_error **err)
{
  struct container_state st = { 0 };
  struct init_args ia = { 0 };
  struct netguard_rules rules;
  struct cidr dns[NETGUARD_MAX_DNS];
  size_t n_dns = 0;
  enum cgroup_mode cgmode;
  cleanup_free char *rel = NULL;
  cleanup_free char *state_json = NULL;
  cleanup_free char *cache = NULL;
  cleanup_close int fifo = -1;
  cleanup_close int own_pid_ns = -1;
  cleanup_close int own_time_ns = -1;
  char created[64];
  int saved_ns[NS__MAX];
  uint32_t owner;
  int sv[2];
  int r;

  r = statedir_root_open (g->root, &c->rootfd, err);
  if (r < 0)
    return r;
  r = statedir_create (c->rootfd, o->id, &c->dirfd, err);
  if (r < 0)
    return r;
  c->statedir_made = true;
  debug_pause ("after-statedir");
  r = container_open_namespaces (s, eff, ov, c->ns_fds, err);
  if (r == 0)
    r = container_adopt_userns (s, g->profile, g->root, o->id, c->ns_fds, ov,
                                &c->userns_first, &c->root_path, err);
  if (r < 0)
    return r;
  st.userns_host_id = c->userns_first;
  if (userns_moat_maps (s))
    {
      r = userns_block_take (g->profile, g->root, o->id,
                             g->audit ? g->audit->overrides : NULL,
                             &c->root_path, &c->userns_first, err);
      if (r < 0)
        return r;
      st.userns_host_id = c->userns_first;
    }
  r = write_file_atomic (c->dirfd, "config.json", config_text, config_len,
                         0600);
  if (r < 0)
    return moat_fail (err, -r, "saving config.json");

  r = cgroup_resolve_path (s->linux_.cgroups_path, o->id, g->systemd_cgroup,
                           &rel, err);
  if (r < 0)
    return r;
  st.id = (char *)o->id;
  st.bundle = (char *)bundle;
  st.rootfs = (char *)rootfs;
  st.cgroup = rel;
  st.profile = ((const struct profile *)g->profile)->name;
  st.annotations = s->annotations;
  st.n_annotations = s->n_annotations;
  st.has_tty = s->process->terminal;
  st.netguard = "none";
  r = statedir_write_state (c->dirfd, &st, err);
  if (r < 0)
    return r;

  r = cgroup_mode (&cgmode, err);
  if (r < 0)
    return r;
  r = cgroup_create (rel, s->linux_.has_resources ? &s->linux_.resources : NULL,
                     &c->cg, err);
  if (r < 0)
    return moat_error_wrap (err, "cgroup %s", rel);
  if (eff->egress)
    {
      r = netguard_nameservers (s, bundle, rootfs, dns, &n_dns, err);
      if (r < 0)
        return r;
      container_warn_dns (eff, dns, n_dns);
    }
  profile_netguard_rules (eff, dns, n_dns, &rules);
  if (g->audit)
    {
      struct json_writer *w = json_writer_new (false);
      profile_network_json (w, eff, dns, n_dns, true);
      free (g->audit->network);
      g->audit->network = json_writer_finish (w);
    }
  if (cgroup_unified_fd (c->cg) >= 0)
    {
      r = netguard_attach (cgroup_unified_fd (c->cg), &rules, err);
      if (r < 0)
        return moat_error_wrap (err, "network guard");
      st.netguard = "cgroup-bpf";
    }
  else
    st.netguard = "fallback";
  debug_pause ("after-cgroup");
  if (g->audit)
    g->audit->mechanism = st.netguard;

  c->n_src = s->n_mounts;
  c->idmap = xcalloc (s->n_mounts + 1, sizeof (bool));
  r = container_open_bind_sources (s, bundle, rootfs, eff, ov, &c->src_fds,
                                   c->idmap, err);
  if (r < 0)
    return r;
  /* The policy is complete: later verbs obey this, not their own flags. */
  r = container_save_policy (c->dirfd, eff, ov, err);
  if (r < 0)
    return r;
  cache = seccomp_cache_dir (g);
  if (s->linux_.seccomp.present)
    {
      r = seccomp_agent_check (&s->linux_.seccomp, eff, err);
      if (r == 0)
        r = seccomp_compile_config_cached (&s->linux_.seccomp, cache,
                                           &c->sc_config, err);
      if (r < 0)
        return r;
    }
  r = seccomp_builtin (cache, &c->sc_builtin, err);
  if (r < 0)
    return moat_error_wrap (err, "built-in seccomp filter");

  if (mkfifoat (c->dirfd, "exec.fifo", 0600) < 0)
    return moat_fail (err, errno, "creating exec.fifo");
  fifo = openat (c->dirfd, "exec.fifo", O_RDWR | O_CLOEXEC);
  if (fifo < 0)
    return moat_fail (err, errno, "opening exec.fifo");
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return moat_fail (err, errno, "socketpair");

  /* The pid and time namespaces moat enters for the init apply to all its
   * children: it goes back to its own right after the clone, so that hooks,
   * the memfd_noexec writer and LeakSanitizer's tracer are not born in the
   * container's. */
  own_pid_ns = open ("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
  own_time_ns = open ("/proc/self/ns/time", O_RDONLY | O_CLOEXEC);
  r = container_enter_parent_namespaces (s, c->ns_fds, err);
  if (r < 0)
    {
      restore_parent_namespaces (own_pid_ns, own_time_ns);
      close (sv[0]);
      close (sv[1]);
      return r;
    }
  ia.spec = s;
  ia.rootfs = rootfs;
  ia.sync_fd = sv[1];
  ia.fifo_fd = fifo;
  memcpy (ia.ns_fds, c->ns_fds, sizeof (ia.ns_fds));
  ia.ns_fds[NS_PID] = ia.ns_fds[NS_TIME] = -1;
  ia.mount_src_fds = c->src_fds;
  ia.seccomp_config = c->sc_config.n_insns ? &c->sc_config : NULL;
  ia.seccomp_builtin = &c->sc_builtin;
  ia.cgroup_mode = cgmode;
  ia.no_pivot = o->no_pivot;
  ia.new_userns
      = s->linux_.ns[NS_USER].present && s->linux_.ns[NS_USER].path == NULL;
  /* G12: what the init cannot do from its own user namespace. */
  r = userns_before_clone (s, rootfs, ia.new_userns || c->ns_fds[NS_USER] >= 0,
                           c->userns_first, c->ns_fds, ia.ns_fds, c->src_fds,
                           &c->rootfs_tree, saved_ns, err);
  ia.rootfs_tree = c->rootfs_tree;
  if (r < 0)
    {
      restore_parent_namespaces (own_pid_ns, own_time_ns);
      close (sv[0]);
      close (sv[1]);
      return r;
    }
  ia.preserve_fds = o->preserve_fds;
  ia.lock_fd = c->dirfd;
  /* The init joins its cgroups itself, which spares it the kernel's global
   * lock (cgroup_add_self). */
  ia.cgroup = c->cg;

  owner = ia.new_userns ? userns_owner_for (s, c->userns_first) : 0;
  if (owner)
    r = userns_clone_prepare (c->cg, owner, &c->cg_self_fds, err);
  if (r < 0)
    {
      userns_parent_restore (saved_ns, NULL);
      restore_parent_namespaces (own_pid_ns, own_time_ns);
      close (sv[0]);
      close (sv[1]);
      return r;
    }
  ia.cgroup_self_fds = c->cg_self_fds;
  /* A new pid namespace in a user namespace joined by path: cloned from
   * there, so that it is that one's. */
  ia.born_in_userns = c->ns_fds[NS_USER] >= 0 && s->linux_.ns[NS_PID].present
                      && s->linux_.ns[NS_PID].path == NULL;
  if (ia.born_in_userns)
    c->pid = linux_clone_in_userns (
        c->ns_fds[NS_USER], c->rootfs_tree >= 0 ? rootfs : NULL,
        linux_clone_flags (s), cgroup_unified_fd (c->cg),
        &ia.in_unified_cgroup);
  else
    c->pid = linux_clone (linux_clone_flags (s), cgroup_unified_fd (c->cg),
                          &ia.in_unified_cgroup);
  if (owner && c->pid != 0 && userns_owner_leave (NULL) < 0)
    abort (); /* moat must never go on as anything but euid 0 */
  if (c->pid == 0)
    {
      close (sv[0]);
      linux_init_main (&ia);
    }
  restore_parent_namespaces (own_pid_ns, own_time_ns);
  r = c->pid < 0 ? moat_fail (err, errno,
                              ia.new_userns ? "clone (with a user namespace, "
                                              "G12: does the kernel allow "
                                              "them?)"
                                            : "clone")
                 : 0;
  if (userns_parent_restore (saved_ns, r < 0 ? NULL : err) < 0)
    r = -1;
  if (c->pid < 0 || r < 0)
    {
      if (c->pid < 0)
        c->pid = 0;
      close (sv[0]);
      close (sv[1]);
      return r;
    }
  close (sv[1]);
  debug_pause ("after-clone");
  {
    cleanup_close int sync = sv[0];
    char pstate;

    st.pid = c->pid;
    proc_stat_read (c->pid, &pstate, &st.pid_starttime);
    r = statedir_write_state (c->dirfd, &st, err);
    if (r < 0)
      return r;
    /* The init is in its cgroup: systemd may take it on as a unit now. */
    if (g->systemd_cgroup)
      {
        r = cgroup_systemd_register (
            c->cg, s->linux_.cgroups_path, c->pid,
            s->linux_.has_resources ? &s->linux_.resources : NULL, err);
        if (r < 0)
          return r;
      }
    /* The block's user namespace: the init's new one, or the one it
     * adopted (it joins it after GO). */
    r = 0;
    if (ia.new_userns)
      r = userns_write_maps (c->pid, &s->linux_, c->userns_first, err);
    if (r == 0 && c->userns_first)
      r = idmap_container_mounts (ia.new_userns ? -1 : c->ns_fds[NS_USER],
                                  c->pid, s, rootfs, &c->rootfs_tree,
                                  c->src_fds, c->idmap,
                                  g->audit ? g->audit->overrides : NULL, err);
    if (r < 0)
      return r;
    r = process_raise_rlimits (c->pid, s->process, err);
    if (r == 0)
      r = linux_refuse_exec_memfd (c->pid, err);
    if (r < 0)
      return r;
    if (s->process->has_oom_score_adj)
      {
        char path[64], val[16];
        snprintf (path, sizeof (path), "/proc/%d/oom_score_adj", c->pid);
        snprintf (val, sizeof (val), "%d", s->process->oom_score_adj);
        r = write_file_at (AT_FDCWD, path, val);
        if (r < 0)
          return moat_fail (err, -r, "writing oom_score_adj");
      }
    r = sync_send (sync, SYNC_GO, err);
    /* G12: the rootfs the init attaches, idmapped or rebuilt by now. */
    if (r == 0 && c->rootfs_tree >= 0)
      r = fd_send (sync, c->rootfs_tree, err);
    if (r == 0)
      r = sync_recv (sync, SYNC_MOUNTS_DONE, err);
    if (r < 0)
      return r;
    debug_pause ("after-mounts");

    r = state_oci_json (&st, "creating", false, &state_json, err);
    if (r < 0)
      return r;
    r = hooks_run (&s->hooks[HOOK_PRESTART], HOOK_PRESTART, state_json, err);
    if (r == 0)
      r = hooks_run (&s->hooks[HOOK_CREATE_RUNTIME], HOOK_CREATE_RUNTIME,
                     state_json, err);
    if (r < 0)
      return r;
    r = sync_send_data (sync, SYNC_GO, state_json, strlen (state_json), err);
    if (r < 0)
      return r;
    {
      /* startContainer hooks run once start is under way: they see
       * "created", as runc's do. */
      cleanup_free char *start_json = NULL;
      r = state_oci_json (&st, "created", false, &start_json, err);
      if (r == 0)
        r = sync_send_data (sync, SYNC_GO, start_json, strlen (start_json),
                            err);
      if (r < 0)
        return r;
    }
    if (s->process->terminal)
      {
        cleanup_close int master = -1;
        r = sync_recv (sync, SYNC_PTY, err);
        if (r == 0)
          r = fd_recv (sync, &master, err);
        if (r < 0)
          return r;
        if (o->console_socket)
          {
            r = terminal_send_to_console_socket (o->console_socket, master,
                                                 err);
            if (r < 0)
              return r;
          }
        else if (for_run && ret_master)
          *ret_master = steal_fd (&master);
      }
    r = seccomp_agent_relay (sync, &c->sc_config, &s->linux_.seccomp, c->pid,
                             state_json, err);
    if (r < 0)
      return r;
    debug_pause ("before-ready");
    r = sync_recv (sync, SYNC_READY, err);
    if (r < 0)
      return r;
  }
  now_rfc3339 (created, sizeof (created));
  st.created = created;
  r = statedir_write_state (c->dirfd, &st, err);
  if (r < 0)
    return r;
  if (o->pid_file)
    {
      r = write_pid_file (o->pid_file, c->pid, err);
      if (r < 0)
        return r;
    }
  return 0;
}

/* Create; on success *ret_pid is the init, waiting for start. */
int
container_create_internal (const struct moat_globals *g,
                           const struct create_opts *o, bool for_run,
                           pid_t *ret_pid, int *ret_master,
                           struct moat_error **err)
{
  struct create_ctx c
      = { .rootfd = -1, .dirfd = -1, .rootfs_tree = -1, .profile = g->profile };
  cleanup_overrides struct override_list own_ov = { 0 };
  struct override_list *ov
      = g->audit && g->audit->overrides ? g->audit->overrides : &own_ov;
  cleanup_spec struct spec *s = NULL;
  cleanup_profile struct profile *eff = NULL;
  cleanup_free char *config_text = NULL;
  cleanup_free char *bundle = NULL;
  cleanup_free char *rootfs = NULL;
  size_t config_len = 0;
  char real[PATH_MAX];
  int r;

  for (int t = 0; t < NS__MAX; t++)
    c.ns_fds[t] = -1;
  r = container_id_check (o->id, err);
  if (r < 0)
    return r;
  if (realpath (o->bundle ? o->bundle : ".", real) == NULL)
    return moat_fail (err, errno, "bundle %s", o->bundle ? o->bundle : ".");
  bundle = xstrdup (real);
  container_audit_bundle (g, bundle);
  r = read_config (bundle, &s, &config_text, &config_len, err);
  if (r < 0)
    return r;
  if (g->audit)
    g->audit->config_digest = audit_digest (config_text, config_len);
  r = profile_apply_effective (s, g->profile, &eff, ov, err);
  if (r < 0)
    return r;
  if (ov)
    container_warn_ignored (ov);
  if (s->process == NULL)
    return moat_fail (err, 0, "config.json: process: missing");
  if (s->process->terminal && o->console_socket == NULL && !for_run)
    return moat_fail (err, 0,
                      "process.terminal is set: --console-socket is required");
  r = resolve_rootfs (s, bundle, &rootfs, err);
  if (r == 0)
    r = rootfs_place_profile_mounts (s, rootfs, ov, err);
  if (r == 0)
    r = selinux_apply_mount_label (s, stderr, err);
  if (r < 0)
    return r;
  /* G13's vm.memfd_noexec (Linux 6.3): say so where the kernel lacks it. */
  if (ov && access ("/proc/sys/vm/memfd_noexec", F_OK) < 0)
    override_list_add (ov, OVERRIDE_IGNORED, "sysctl.vm.memfd_noexec", "2",
                       "not in this kernel: executable memfds not refused");
  r = create_in_ctx (g, eff, ov, o, &c, s, config_text, config_len, bundle,
                     rootfs, for_run, ret_master, err);
  if (r < 0)
    create_ctx_undo (&c, o->id);
  else
    *ret_pid = c.pid;
  create_ctx_release (&c);
  return r;
}

int
container_create (const struct moat_globals *g, const struct create_opts *o,
                  struct moat_error **err)
{
  pid_t pid;
  return container_create_internal (g, o, false, &pid, NULL, err);
}
