/* moat create on the host side. The data path reads top to bottom: parse
 * config.json, gather the host's facts, judge (profile_judge), then the
 * phases of create_in_ctx (state dir, namespaces, cgroup and network guard,
 * bind sources, seccomp, clone, the init's maps and idmapped mounts, the
 * decision saved whole, mounts and hooks at their sync points, the terminal,
 * ready), each filling one struct create_ctx that one undo path takes apart
 * on failure. Every verdict is in &c->j->overrides before the save. */
#include "container.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../hooks/hooks.h"
#include "../oci/state.h"
#include "audit.h"
#include "cgroup/cgroup.h"
#include "container_internal.h"
#include "log/debug.h"
#include "userns/idmap.h"
#include "init/linux.h"
#include "netguard/netguard.h"
#include "../policy/profile.h"
#include "../policy/verdicts.h"
#include "seccomp/seccomp.h"
#include "seccomp_agent.h"
#include "seccomp/seccomp_refusals.h"
#include "init/selinux.h"
#include "init/landlock.h"
#include "statedir.h"
#include "init/sync.h"
#include "init/terminal.h"
#include "userns/userns.h"
#include "../lib/util.h"

/* Everything create sets up on the host, and what one phase hands the
 * next; released in reverse on failure (create_ctx_undo), closed and freed
 * either way (create_ctx_release). */
struct create_ctx
{
  /* What create works from (borrowed). */
  const struct moat_globals *g;
  const struct create_opts *o;
  struct judgement *j; /* the policy's, saved whole */
  struct spec *s;
  const char *bundle, *rootfs;
  bool for_run;
  int *ret_master;
  struct create_carry *carry; /* run's: start follows in this process */

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
  enum profile_bind_idmap *idmap;
  struct idmap_probe idmap_probe; /* made before judging */
  int *cg_self_fds;

  /* The state as it grows (its strings borrowed or below). */
  struct container_state st;
  char *cgroup_rel;
  char created[64];
  char *state_json;    /* "creating", for hooks and the seccomp agent */
  char *landlock_exec; /* G14: the init's exec list, in the state */
  enum cgroup_mode cgmode;
  int fifo;     /* what the init blocks on until start: its end */
  int start_fd; /* run's: moat's end of that channel (no exec.fifo) */
  int sync_fd, init_sync_fd; /* moat's end, the init's end */
  /* While moat is in the init's pid and time namespaces, or in joined
   * ones of another user namespace (saved_ns): its own, to go back to. */
  bool in_init_ns;
  int own_pid_ns, own_time_ns;
  int saved_ns[NS__MAX];
  struct init_args ia;
};

/* Back to moat's own namespaces for its later children: the pid and time
 * ones, and those it joined for the init (G12). Safe to call twice. */
static int
create_ctx_leave_namespaces (struct create_ctx *c, struct moat_error **err)
{
  if (!c->in_init_ns)
    return 0;
  c->in_init_ns = false;
  /* Only where it entered one: a new pid namespace is the clone's. */
  if (c->own_pid_ns >= 0 && c->ns_fds[NS_PID] >= 0)
    (void)setns (c->own_pid_ns, CLONE_NEWPID);
  if (c->own_time_ns >= 0)
    (void)setns (c->own_time_ns, CLONE_NEWTIME);
  return userns_parent_restore (c->saved_ns, err);
}

static void
create_ctx_init (struct create_ctx *c, const struct moat_globals *g)
{
  *c = (struct create_ctx){ .g = g,
                            .rootfd = -1,
                            .dirfd = -1,
                            .rootfs_tree = -1,
                            .profile = g->profile,
                            .fifo = -1,
                            .start_fd = -1,
                            .sync_fd = -1,
                            .init_sync_fd = -1,
                            .own_pid_ns = -1,
                            .own_time_ns = -1,
                            .idmap_probe = { .userns_fd = -1 } };
  for (int t = 0; t < NS__MAX; t++)
    c->ns_fds[t] = c->saved_ns[t] = -1;
}

static void
create_ctx_undo (struct create_ctx *c, const char *id)
{
  create_ctx_leave_namespaces (c, NULL);
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
    userns_block_release (c->g->operator_config->userns_pool_dir,
                          c->userns_first, c->root_path, id);
}

static void
create_ctx_release (struct create_ctx *c)
{
  close_if_open (&c->sync_fd);
  close_if_open (&c->init_sync_fd);
  close_if_open (&c->fifo);
  close_if_open (&c->start_fd);
  close_if_open (&c->own_pid_ns);
  close_if_open (&c->own_time_ns);
  free (c->state_json);
  free (c->landlock_exec);
  free (c->cgroup_rel);
  if (c->cg_self_fds)
    cgroup_close_self_files (c->cg_self_fds, cgroup_n_hiers (c->cg));
  if (c->cg)
    cgroup_free (c->cg);
  close_fd_array (c->src_fds, c->n_src);
  free (c->idmap);
  idmap_probe_close (&c->idmap_probe);
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

/* ROOT/ID, locked: from here on the id is taken. */
static int
phase_statedir (struct create_ctx *c, struct moat_error **err)
{
  int r = statedir_root_open (c->g->root, true, &c->rootfd, err);
  if (r < 0)
    return r;
  r = statedir_create (c->rootfd, c->o->id, &c->dirfd, err);
  if (r < 0)
    return r;
  c->statedir_made = true;
  debug_pause ("after-statedir");
  return 0;
}

/* Namespaces joined by path, judged; G12's user namespace: adopted from a
 * live container, or a block of the pool taken for a new one. */
static int
phase_namespaces (struct create_ctx *c, struct moat_error **err)
{
  const struct moat_globals *g = c->g;
  char **joined = g->audit ? &g->audit->userns_joined : NULL;
  int r;

  r = container_open_namespaces (c->s, c->j->values, &c->j->overrides,
                                 c->ns_fds, err);
  if (r == 0)
    r = container_adopt_userns (c->s, g->operator_config, g->root, c->o->id,
                                c->ns_fds, joined, &c->userns_first,
                                &c->root_path, err);
  if (r == 0 && userns_moat_maps (c->s))
    r = userns_block_take (g->operator_config, g->root, c->o->id, &c->root_path,
                           &c->userns_first, err);
  if (r < 0)
    return r;
  c->st.userns_host_id = c->userns_first;
  if (c->userns_first && g->audit)
    g->audit->userns
        = xasprintf ("0 %" PRIu32 " %u", c->userns_first, PROFILE_USERNS_BLOCK);
  return 0;
}

/* A first state.json (no pid yet) in the state dir. config.json is not
 * copied there: the final spec goes into policy.json, its digest (for
 * delete's audit line) into the state; one inode fewer per container. */
static int
phase_first_state (struct create_ctx *c, struct moat_error **err)
{
  const struct spec *s = c->s;
  int r;

  r = cgroup_resolve_path (s->linux_.cgroups_path, c->o->id,
                           c->g->systemd_cgroup, &c->cgroup_rel, err);
  if (r < 0)
    return r;
  c->st.id = (char *)c->o->id;
  c->st.bundle = (char *)c->bundle;
  c->st.rootfs = (char *)c->rootfs;
  c->st.cgroup = c->cgroup_rel;
  c->st.profile = ((const struct profile *)c->g->profile)->name;
  c->st.annotations = s->annotations;
  c->st.n_annotations = s->n_annotations;
  c->st.has_tty = s->process->terminal;
  c->st.netguard = "none";
  c->st.config_digest = c->g->audit ? c->g->audit->config_digest : NULL;
  return statedir_write_state (c->dirfd, &c->st, err);
}

/* The cgroup, and the network guard on it (cgroup-bpf, or the fallback
 * where there is no unified hierarchy). */
static int
phase_cgroup_and_netguard (struct create_ctx *c, struct moat_error **err)
{
  const struct moat_globals *g = c->g;
  struct spec *s = c->s;
  struct netguard_rules rules;
  int r;

  r = cgroup_mode (&c->cgmode, err);
  if (r < 0)
    return r;
  r = cgroup_create (c->cgroup_rel,
                     s->linux_.has_resources ? &s->linux_.resources : NULL,
                     &c->cg, err);
  if (r < 0)
    return moat_error_wrap (err, "cgroup %s", c->cgroup_rel);
  /* What this host has no file for: told with the verb's clamps. */
  cgroup_take_ignored (c->cg, &c->j->overrides);
  /* The nameservers the guard lets through (egress) are the judgement's,
   * saved with the decision: start's fallback guard uses these, not
   * resolv.conf again. */
  profile_netguard_rules (c->j->values, c->j->dns, c->j->n_dns, &rules);
  if (g->audit)
    {
      free (g->audit->effective);
      g->audit->effective = profile_audit_json (
          c->j->values, g->operator_config, c->j->dns, c->j->n_dns);
    }
  if (cgroup_unified_fd (c->cg) >= 0)
    {
      cgroup_hold_bpf_keys (c->cg);
      r = netguard_attach (cgroup_unified_fd (c->cg), &rules, NETGUARD_PIN_DIR,
                           err);
      if (r < 0)
        return moat_error_wrap (err, "network guard");
      c->st.netguard = "cgroup-bpf";
    }
  else
    {
      r = netguard_fallback_check (&rules, err);
      if (r < 0)
        return moat_error_wrap (err, "network guard");
      c->st.netguard = "fallback";
    }
  debug_pause ("after-cgroup");
  if (g->audit)
    g->audit->mechanism = c->st.netguard;
  return 0;
}

/* Bind sources opened and judged (G5, G13). */
static int
phase_bind_sources (struct create_ctx *c, struct moat_error **err)
{
  c->n_src = c->s->n_mounts;
  c->idmap = xcalloc (c->s->n_mounts + 1, sizeof (*c->idmap));
  return container_open_bind_sources (
      c->s, c->bundle, c->rootfs, c->j->values, c->g->operator_config,
      &c->j->overrides, &c->src_fds, c->idmap,
      c->userns_first ? &c->idmap_probe : NULL, err);
}

/* config.json's filter (if any) and the built-in one, compiled. */
static int
phase_seccomp (struct create_ctx *c, struct moat_error **err)
{
  cleanup_free char *cache = container_cache_dir (c->g);
  struct spec *s = c->s;
  int r;

  if (s->linux_.seccomp.present)
    {
      r = seccomp_compile_config_cached (&s->linux_.seccomp, cache,
                                         &c->sc_config, err);
      if (r < 0)
        return r;
    }
  r = seccomp_builtin_level (
      seccomp_level_of (s->annotations, s->n_annotations), cache,
      &c->sc_builtin, err);
  if (r < 0)
    return moat_error_wrap (err, "built-in seccomp filter");
  return 0;
}

/* What the init blocks on until start, and the sync socket. create's
 * start comes from another process: exec.fifo in the state dir. run's
 * comes from this one, which holds the state dir locked until then: a
 * socketpair, no file (one inode fewer made and freed on the state
 * root's filesystem). */
static int
phase_channels (struct create_ctx *c, struct moat_error **err)
{
  int sv[2];

  if (c->carry)
    {
      if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return moat_fail (err, errno, "socketpair");
      c->start_fd = sv[0];
      c->fifo = sv[1];
    }
  else if (mkfifoat (c->dirfd, "exec.fifo", 0600) < 0)
    return moat_fail (err, errno, "creating exec.fifo");
  else
    c->fifo = openat (c->dirfd, "exec.fifo", O_RDWR | O_CLOEXEC);
  if (c->fifo < 0)
    return moat_fail (err, errno, "opening exec.fifo");
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return moat_fail (err, errno, "socketpair");
  c->sync_fd = sv[0];
  c->init_sync_fd = sv[1];
  return 0;
}

/* The init, cloned in the namespaces it must be born in; moat goes back to
 * its own right after. */
static int
phase_clone (struct create_ctx *c, struct moat_error **err)
{
  const struct spec *s = c->s;
  struct init_args *ia = &c->ia;
  uint32_t owner;
  int r;

  /* The pid and time namespaces moat enters for the init apply to all its
   * children: it goes back to its own right after the clone, so that hooks,
   * the memfd_noexec writer and LeakSanitizer's tracer are not born in the
   * container's. */
  c->own_pid_ns = open ("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
  if (c->ns_fds[NS_TIME] >= 0 || s->linux_.ns[NS_TIME].present)
    c->own_time_ns = open ("/proc/self/ns/time", O_RDONLY | O_CLOEXEC);
  c->in_init_ns = true;
  r = container_enter_parent_namespaces (s, c->ns_fds, err);
  if (r < 0)
    return r;
  ia->spec = s;
  ia->rootfs = c->rootfs;
  ia->sync_fd = c->init_sync_fd;
  ia->fifo_fd = c->fifo;
  memcpy (ia->ns_fds, c->ns_fds, sizeof (ia->ns_fds));
  ia->ns_fds[NS_PID] = ia->ns_fds[NS_TIME] = -1;
  ia->mount_src_fds = c->src_fds;
  ia->seccomp_config = c->sc_config.n_insns ? &c->sc_config : NULL;
  ia->seccomp_builtin = seccomp_supervised (c->o->refusals, &c->sc_config,
                                            &c->sc_builtin, &ia->refusal_sock);
  ia->cgroup_mode = c->cgmode;
  ia->no_pivot = c->o->no_pivot;
  ia->new_userns
      = s->linux_.ns[NS_USER].present && s->linux_.ns[NS_USER].path == NULL;
  /* G12: what the init cannot do from its own user namespace. */
  r = userns_before_clone (
      s, c->rootfs, ia->new_userns || c->ns_fds[NS_USER] >= 0, c->userns_first,
      c->ns_fds, ia->ns_fds, c->src_fds, &c->rootfs_tree, c->saved_ns, err);
  ia->rootfs_tree = c->rootfs_tree;
  if (r < 0)
    return r;
  ia->preserve_fds = c->o->preserve_fds;
  ia->lock_fd = c->dirfd;
  /* The init joins its cgroups itself, which spares it the kernel's global
   * lock (cgroup_add_self). */
  ia->cgroup = c->cg;
  ia->reaper = c->o->init_reaps;

  owner = ia->new_userns ? userns_owner_for (s, c->userns_first) : 0;
  if (owner)
    {
      r = userns_clone_prepare (c->cg, owner, &c->cg_self_fds, err);
      if (r < 0)
        return r;
    }
  ia->cgroup_self_fds = c->cg_self_fds;
  /* A new pid namespace in a user namespace joined by path: cloned from
   * there, so that it is that one's. */
  ia->born_in_userns = c->ns_fds[NS_USER] >= 0 && s->linux_.ns[NS_PID].present
                       && s->linux_.ns[NS_PID].path == NULL;
  if (ia->born_in_userns)
    c->pid = linux_clone_in_userns (
        c->ns_fds[NS_USER], c->rootfs_tree >= 0 ? c->rootfs : NULL,
        linux_clone_flags (s), cgroup_unified_fd (c->cg),
        &ia->in_unified_cgroup);
  else
    c->pid = linux_clone (linux_clone_flags (s), cgroup_unified_fd (c->cg),
                          &ia->in_unified_cgroup);
  if (owner && c->pid != 0 && userns_owner_leave (NULL) < 0)
    abort (); /* moat must never go on as anything but euid 0 */
  if (c->pid == 0)
    {
      close (c->sync_fd);
      linux_init_main (ia);
    }
  if (c->pid < 0)
    {
      c->pid = 0;
      return moat_fail (err, errno,
                        ia->new_userns ? "clone (with a user namespace, "
                                         "G12: does the kernel allow "
                                         "them?)"
                                       : "clone");
    }
  r = create_ctx_leave_namespaces (c, err);
  if (r < 0)
    return r;
  close_if_open (&c->init_sync_fd);
  debug_pause ("after-clone");
  return 0;
}

/* The init, paused at its first sync point: its pid in the state, its user
 * namespace's maps and idmapped mounts (G12), its rlimits, G13's
 * vm.memfd_noexec, its oom_score_adj. */
static int
phase_after_clone (struct create_ctx *c, struct moat_error **err)
{
  const struct moat_globals *g = c->g;
  const struct spec *s = c->s;
  char pstate;
  int r;

  c->st.pid = c->pid;
  /* Later verbs know the init by it (0 would name no process). */
  r = proc_stat_read (c->pid, &pstate, &c->st.pid_starttime);
  if (r < 0)
    return moat_fail (err, -r, "reading the init's start time");
  r = statedir_write_state (c->dirfd, &c->st, err);
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
   * adopted (it joins it after MAPS_DONE). */
  r = 0;
  if (c->ia.new_userns)
    r = userns_write_maps (c->pid, &s->linux_, c->userns_first, err);
  if (r == 0 && c->userns_first)
    r = idmap_container_mounts (c->ia.new_userns ? -1 : c->ns_fds[NS_USER],
                                c->pid, c->userns_first, s, c->rootfs,
                                c->j->rootfs_idmap, &c->rootfs_tree, c->src_fds,
                                c->idmap, err);
  if (r < 0)
    return r;
  r = process_raise_rlimits (c->pid, s->process, err);
  if (r == 0)
    r = linux_refuse_exec_memfd (c->pid, c->own_pid_ns, err);
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
  return 0;
}

/* Every fact is in (the host's, the bind sources', what the kernel can
 * idmap) and every verdict given: the decision, with the
 * final spec, saved whole before the container's first mount. Later verbs
 * obey it, not their own flags or today's operator config. */
static int
phase_save_decision (struct create_ctx *c, struct moat_error **err)
{
  return container_save_policy (c->dirfd, c->j, c->s, c->j->dns, c->j->n_dns,
                                c->g->operator_config->userns_pool_dir,
                                strcmp (c->st.netguard, "cgroup-bpf") == 0,
                                err);
}

/* The init goes on and mounts; prestart and createRuntime hooks run
 * meanwhile on the host, then the init gets the states for its own. */
static int
phase_mounts_and_hooks (struct create_ctx *c, struct moat_error **err)
{
  const struct spec *s = c->s;
  int sync = c->sync_fd;
  cleanup_free char *start_json = NULL;
  int r;

  r = sync_send (sync, SYNC_MAPS_DONE, err);
  /* G12: the rootfs the init attaches, idmapped or rebuilt by now. */
  if (r == 0 && c->rootfs_tree >= 0)
    r = fd_send (sync, c->rootfs_tree, err);
  if (r == 0)
    r = sync_recv (sync, SYNC_MOUNTS_DONE, err);
  if (r < 0)
    return r;
  debug_pause ("after-mounts");

  r = state_hook_json (&c->st, "creating", &c->state_json, err);
  if (r < 0)
    return r;
  r = hooks_run (&s->hooks[HOOK_PRESTART], HOOK_PRESTART, c->state_json, err);
  if (r == 0)
    r = hooks_run (&s->hooks[HOOK_CREATE_RUNTIME], HOOK_CREATE_RUNTIME,
                   c->state_json, err);
  if (r < 0)
    return r;
  r = sync_send_data (sync, SYNC_CREATE_STATE, c->state_json,
                      strlen (c->state_json), err);
  if (r < 0)
    return r;
  /* startContainer hooks run once start is under way: they see
   * "created", as runc's do. */
  r = state_hook_json (&c->st, "created", &start_json, err);
  if (r == 0)
    r = sync_send_data (sync, SYNC_START_STATE, start_json, strlen (start_json),
                        err);
  return r;
}

/* process.terminal: the pty master, to --console-socket (or to run). */
static int
phase_terminal (struct create_ctx *c, struct moat_error **err)
{
  cleanup_close int master = -1;
  int r;

  if (!c->s->process->terminal)
    return 0;
  r = sync_recv (c->sync_fd, SYNC_PTY, err);
  if (r == 0)
    r = fd_recv (c->sync_fd, &master, err);
  if (r < 0)
    return r;
  if (c->o->console_socket)
    return terminal_send_to_console_socket (c->o->console_socket, master, err);
  if (c->for_run && c->ret_master)
    *c->ret_master = steal_fd (&master);
  return 0;
}

/* A seccomp agent's listener relayed; the init ready, waiting for start:
 * the state says "created", the pid file names it. */
static int
phase_ready (struct create_ctx *c, struct moat_error **err)
{
  int r;

  /* G14: kept for `moat exec` (landlock.c) in the state written below (or
   * by start, carried); none: exec reads the directories itself. A field
   * of state.json, not a file of its own: one inode fewer per container
   * on the state root's filesystem. */
  r = sync_recv_data (c->sync_fd, SYNC_LANDLOCK_EXEC, &c->landlock_exec, err);
  if (r == 0 && c->landlock_exec[0])
    c->st.landlock_exec = c->landlock_exec;
  if (r == 0)
    r = seccomp_agent_relay (c->sync_fd, &c->sc_config, &c->s->linux_.seccomp,
                             c->pid, c->state_json, err);
  if (r < 0)
    return r;
  debug_pause ("before-ready");
  r = sync_recv (c->sync_fd, SYNC_READY, err);
  if (r < 0)
    return r;
  close_if_open (&c->sync_fd);
  now_rfc3339 (c->created, sizeof (c->created));
  c->st.created = c->created;
  /* Carried on, the state is written once more by start in a moment,
   * under the lock create still holds. */
  r = c->carry ? 0 : statedir_write_state (c->dirfd, &c->st, err);
  if (r < 0)
    return r;
  if (c->o->pid_file)
    return write_pid_file (c->o->pid_file, c->pid, err);
  return 0;
}

static int
create_in_ctx (struct create_ctx *c, struct moat_error **err)
{
  int r = phase_statedir (c, err);
  if (r == 0)
    r = phase_namespaces (c, err);
  if (r == 0)
    r = phase_first_state (c, err);
  if (r == 0)
    r = phase_cgroup_and_netguard (c, err);
  if (r == 0)
    r = phase_bind_sources (c, err);
  if (r == 0)
    r = phase_seccomp (c, err);
  if (r == 0)
    r = phase_channels (c, err);
  if (r == 0)
    r = phase_clone (c, err);
  if (r == 0)
    r = phase_after_clone (c, err);
  if (r == 0)
    r = phase_save_decision (c, err);
  if (r == 0)
    r = phase_mounts_and_hooks (c, err);
  if (r == 0)
    r = phase_terminal (c, err);
  if (r == 0)
    r = phase_ready (c, err);
  return r;
}

/* The state dir (locked), a copy of the state and the final spec, handed
 * on. The copy goes through the saved form: what start sees is what a
 * start in another process would read. */
static int
create_carry_fill (struct create_ctx *c, struct spec **s,
                   struct moat_error **err)
{
  cleanup_free char *json = NULL;
  struct create_carry *carry = c->carry;
  int r = state_to_json (&c->st, &json, err);
  if (r == 0)
    r = state_from_json (json, strlen (json), &carry->st, err);
  if (r < 0)
    return r;
  carry->rootfd = steal_fd (&c->rootfd);
  carry->dirfd = steal_fd (&c->dirfd);
  carry->start_fd = steal_fd (&c->start_fd);
  carry->spec = steal_pointer (s);
  if (c->cg_self_fds) /* sized by the cgroup, which goes on */
    cgroup_close_self_files (c->cg_self_fds, cgroup_n_hiers (c->cg));
  c->cg_self_fds = NULL;
  carry->cg = steal_pointer (&c->cg);
  return 0;
}

/* Create under judgement j (filled here); on success *ret_pid is the init,
 * waiting for start. */
static int
create_judged (const struct moat_globals *g, const struct create_opts *o,
               bool for_run, struct judgement *j, pid_t *ret_pid,
               int *ret_master, struct create_carry *ret_carry,
               struct moat_error **err)
{
  struct create_ctx c;
  cleanup_spec struct spec *s = NULL;
  cleanup_free char *config_text = NULL;
  cleanup_free char *bundle = NULL;
  cleanup_free char *rootfs = NULL;
  cleanup_free char *landlock_text = NULL;
  struct host_facts facts;
  size_t config_len = 0;
  char real[PATH_MAX];
  int r;

  create_ctx_init (&c, g);
  r = container_id_check (o->id, err);
  if (r < 0)
    return r;
  if (realpath (o->bundle ? o->bundle : ".", real) == NULL)
    return moat_fail (err, errno, "bundle %s", o->bundle ? o->bundle : ".");
  bundle = xstrdup (real);
  container_audit_bundle (g, bundle);
  if (o->config_text)
    r = parse_config (o->config_text, strlen (o->config_text), &s, &config_text,
                      &config_len, err);
  else
    r = read_config (bundle, &s, &config_text, &config_len, err);
  if (r == 0)
    r = resolve_rootfs (s, bundle, &rootfs, err);
  if (r < 0)
    return r;
  if (g->audit)
    g->audit->config_digest = audit_digest (config_text, config_len);
  r = container_gather_facts (s, g->profile, bundle, rootfs, g->root, &facts,
                              &c.idmap_probe, err);
  if (r == 0)
    r = profile_judge (s, g->profile, g->operator_config, &facts, j, err);
  if (r < 0)
    return r;
  container_warn_ignored (&j->overrides);
  r = profile_decide_landlock (s, g->operator_config, &facts, &landlock_text,
                               err);
  if (r < 0)
    return r;
  if (g->audit)
    {
      free (g->audit->landlock);
      g->audit->landlock = steal_pointer (&landlock_text);
    }
  if (s->process == NULL)
    return moat_fail (err, 0, "config.json: process: missing");
  if (s->process->terminal && o->console_socket == NULL && !for_run)
    return moat_fail (err, 0,
                      "process.terminal is set: --console-socket is required");
  r = rootfs_place_profile_mounts (s, rootfs, err);
  if (r == 0)
    r = selinux_apply_mount_label (s, stderr, err);
  if (r < 0)
    return r;
  c.o = o;
  c.j = j;
  c.s = s;
  c.bundle = bundle;
  c.rootfs = rootfs;
  c.for_run = for_run;
  c.ret_master = ret_master;
  c.carry = ret_carry;
  r = create_in_ctx (&c, err);
  if (r == 0 && ret_carry)
    r = create_carry_fill (&c, &s, err);
  if (r < 0)
    create_ctx_undo (&c, o->id);
  else
    *ret_pid = c.pid;
  create_ctx_release (&c);
  return r;
}

/* The judgement's overrides go to the verb's audit line, on failure too. */
int
container_create_internal (const struct moat_globals *g,
                           const struct create_opts *o, bool for_run,
                           pid_t *ret_pid, int *ret_master,
                           struct create_carry *ret_carry,
                           struct moat_error **err)
{
  struct judgement j = { 0 };
  int r
      = create_judged (g, o, for_run, &j, ret_pid, ret_master, ret_carry, err);

  if (g->audit && g->audit->overrides)
    override_list_move (g->audit->overrides, &j.overrides);
  judgement_clear (&j);
  return r;
}

int
container_create (const struct moat_globals *g, const struct create_opts *o,
                  struct moat_error **err)
{
  pid_t pid;
  return container_create_internal (g, o, false, &pid, NULL, NULL, err);
}
