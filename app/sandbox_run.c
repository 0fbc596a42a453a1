/* sandbox_run: the steps of one sandbox (see sandbox.c for the run loop,
 * the watchdog and the reap) and its result record. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../oci/json.h"
#include "../runtime/cgroup/cgroup.h"
#include "../runtime/container_internal.h"
#include "../runtime/statedir.h"
#include "image.h"
#include "sandbox_internal.h"
#include "session.h"
#include "../lib/hostpath.h"
#include "../lib/util.h"

static void
jw_seconds (struct json_writer *w, const char *key, uint64_t ns)
{
  char buf[64];
  snprintf (buf, sizeof (buf), "%" PRIu64 ".%06" PRIu64, ns / 1000000000,
            ns % 1000000000 / 1000);
  if (key)
    jw_key (w, key);
  jw_raw (w, buf);
}

/* exit_code, signal, timed_out, oom_killed: the record's and the audit
 * line's outcome. */
static void
jw_outcome (struct json_writer *w, const struct sandbox_run_state *rs)
{
  jw_key (w, "exit_code");
  if (WIFEXITED (rs->status))
    jw_int (w, WEXITSTATUS (rs->status));
  else
    jw_null (w);
  jw_key (w, "signal");
  if (WIFSIGNALED (rs->status))
    jw_int (w, WTERMSIG (rs->status));
  else
    jw_null (w);
  jw_key (w, "timed_out");
  jw_bool (w, rs->timed_out);
  jw_key (w, "oom_killed");
  jw_bool (w, rs->use.oom_kills > 0);
  jw_key (w, "pids_limit_hit");
  jw_bool (w, rs->use.pids_limit_hits > 0);
  if (rs->refusals.on)
    {
      cleanup_free char *refused = seccomp_refusals_json (&rs->refusals);
      jw_key (w, "refused_syscalls");
      jw_raw (w, refused);
    }
}

static void
jw_stream (struct json_writer *w, const char *key,
           const struct sandbox_stream *s)
{
  jw_key (w, key);
  jw_object_begin (w);
  jw_key (w, "bytes");
  jw_uint (w, s->bytes);
  jw_key (w, "dropped");
  jw_uint (w, s->dropped);
  jw_object_end (w);
}

/* Whether this request's flags caused o, rather than the profile's standing
 * hardening of moat's own template: a clamped flag, a credential dropped
 * from --env, or a change to a bind the caller asked for (--workdir at
 * /work, --ro-bind, --host-usr; pairs are SRC, DST, ...). */
static bool
override_from_request (const struct override *ov, const struct sandbox_opts *o)
{
  if (strncmp (ov->path, "--", 2) == 0 || strcmp (ov->path, "process.env") == 0)
    return true;
  if (strncmp (ov->path, "mounts[/", 8) != 0)
    return false;
  const char *dst = ov->path + 7;
  size_t n = strcspn (dst, "]");
  if (o->workdir && n == 5 && strncmp (dst, "/work", 5) == 0)
    return true;
  for (size_t i = 0; o->ro_binds && o->ro_binds[i] && o->ro_binds[i + 1];
       i += 2)
    if (strlen (o->ro_binds[i + 1]) == n
        && strncmp (dst, o->ro_binds[i + 1], n) == 0)
      return true;
  return false;
}

/* The record's overrides: this request's only, unless --all-overrides
 * (the audit line always has them all). */
static void
jw_record_overrides (struct json_writer *w, const struct sandbox_opts *o,
                     const struct override_list *ov)
{
  struct override_list mine = { 0 };

  if (o->all_overrides || ov == NULL)
    {
      jw_overrides (w, "overrides", ov);
      return;
    }
  for (size_t i = 0; i < ov->n; i++)
    if (override_from_request (&ov->v[i], o))
      override_list_add (&mine, ov->v[i].kind, ov->v[i].path, ov->v[i].asked,
                         ov->v[i].enforced);
  jw_overrides (w, "overrides", &mine);
  override_list_clear (&mine);
}

char *
sandbox_record_json (const struct moat_globals *g, const char *id,
                     const struct sandbox_opts *o,
                     const struct sandbox_run_state *rs,
                     const struct sandbox_limits *lim, const char *digest,
                     const struct override_list *ov)
{
  struct json_writer *w = json_writer_new (false);

  jw_object_begin (w);
  jw_key (w, "id");
  jw_string (w, id);
  jw_key (w, "profile");
  jw_string (w, g->profile->name);
  jw_outcome (w, rs);
  jw_key (w, "interrupted");
  if (rs->interrupted)
    jw_int (w, rs->interrupted);
  else
    jw_null (w);
  jw_seconds (w, "wall_time_s",
              rs->ended_ns > rs->started_ns
                  ? (uint64_t)(rs->ended_ns - rs->started_ns)
                  : 0);
  jw_seconds (w, "cpu_time_s", rs->use.cpu_ns);
  jw_seconds (w, "cpu_user_s", rs->use.cpu_user_ns);
  jw_seconds (w, "cpu_system_s", rs->use.cpu_system_ns);
  jw_key (w, "peak_memory_bytes");
  jw_uint (w, rs->use.peak_memory);
  jw_stream (w, "stdout", &rs->out);
  jw_stream (w, "stderr", &rs->err);
  jw_key (w, "limits");
  jw_object_begin (w);
  jw_key (w, "memory_bytes");
  jw_int (w, lim->memory);
  jw_key (w, "pids");
  jw_int (w, lim->pids);
  jw_key (w, "cpus");
  if (lim->cpu_quota > 0)
    {
      char buf[32];
      snprintf (buf, sizeof (buf), "%.3f",
                (double)lim->cpu_quota / (double)lim->cpu_period);
      jw_raw (w, buf);
    }
  else
    jw_null (w);
  jw_key (w, "timeout_s");
  if (o->timeout_ms > 0)
    jw_seconds (w, NULL, (uint64_t)o->timeout_ms * 1000000);
  else
    jw_null (w);
  jw_key (w, "output_limit_bytes");
  jw_int (w, o->output_limit);
  jw_object_end (w);
  jw_key (w, "image");
  jw_string (w, digest);
  jw_record_overrides (w, o, ov);
  jw_object_end (w);
  return json_writer_finish (w);
}

/* --workdir and --ro-bind sources by realpath (what the profile's bind
 * check judges), destinations checked; pairs: src, dst, src, dst ... */
static int
resolve_binds (const struct moat_globals *g, const struct sandbox_opts *o,
               char **ret_workdir, char ***ret_pairs, struct moat_error **err)
{
  cleanup_strv char **pairs = NULL;

  if (o->workdir
      && sandbox_workdir_resolve (g, o->workdir, ret_workdir, err) < 0)
    return -1;
  for (size_t i = 0; o->ro_binds && o->ro_binds[i]; i++)
    {
      const char *spec = o->ro_binds[i];
      const char *colon = strchr (spec, ':');
      cleanup_free char *src
          = colon ? strndup (spec, (size_t)(colon - spec)) : NULL;
      cleanup_free char *real = NULL;
      cleanup_close int src_fd = -1;
      const char *dst = colon ? colon + 1 : NULL;
      if (src == NULL || *src == '\0' || dst == NULL || dst[0] != '/'
          || strstr (dst, "/../") || strcmp (dst, "/") == 0
          || (strlen (dst) >= 3 && strcmp (dst + strlen (dst) - 3, "/..") == 0))
        return moat_fail (
            err, 0, "--ro-bind %s: expected SRC:DST with DST absolute", spec);
      /* A source in a tree a payload wrote (a workdir) may hold its links:
       * none is followed, so the path names what the caller saw. */
      src_fd = hostpath_open (src, O_PATH, 0);
      if (src_fd < 0)
        return moat_fail (err, 0, "--ro-bind %s: %s", src,
                          hostpath_error_text (src_fd));
      real = realpath (src, NULL);
      if (real == NULL)
        return moat_fail (err, errno, "--ro-bind %s", src);
      strv_append (&pairs, real);
      strv_append (&pairs, dst);
    }
  *ret_pairs = steal_pointer (&pairs);
  return 0;
}

/* --host-usr: ROOT/.host-usr, an empty root (the mount points, and /bin,
 * /lib ... as links into /usr where the host has them there), to which the
 * host's /usr is bound read-only, as bwrap --ro-bind /usr /usr does. Made
 * once; concurrent makers agree. */
static int
host_usr_root (const struct moat_globals *g, char **ret,
               struct moat_error **err)
{
  static const char *const dirs[] = { "proc", "dev", "sys",     "tmp",  "work",
                                      "etc",  "var", "var/tmp", "root", "usr" };
  static const char *const links[]
      = { "bin", "sbin", "lib", "lib32", "lib64", "libx32" };
  cleanup_free char *root = xasprintf ("%s/.host-usr", g->root);
  cleanup_close int fd = -1;

  if (statedir_subdir_open (g->root, ".host-usr", 0755, &fd, err) < 0)
    return moat_error_wrap (err, "--host-usr");
  for (size_t i = 0; i < sizeof (dirs) / sizeof (dirs[0]); i++)
    if (mkdirat (fd, dirs[i], strcmp (dirs[i], "tmp") == 0 ? 01777 : 0755) < 0
        && errno != EEXIST)
      return moat_fail (err, errno, "--host-usr: %s/%s", root, dirs[i]);
  for (size_t i = 0; i < sizeof (links) / sizeof (links[0]); i++)
    {
      cleanup_free char *in_usr = xasprintf ("/usr/%s", links[i]);
      cleanup_free char *target = xasprintf ("usr/%s", links[i]);
      if (access (in_usr, F_OK) == 0 && symlinkat (target, fd, links[i]) < 0
          && errno != EEXIST)
        return moat_fail (err, errno, "--host-usr: %s/%s", root, links[i]);
    }
  *ret = steal_pointer (&root);
  return 0;
}

static int
find_rootfs (const struct moat_globals *g, const struct sandbox_opts *o,
             char **ret_rootfs, char **ret_digest, int *ret_imglock,
             struct image_config *ret_img, struct moat_error **err)
{
  const struct operator_config *cfg = g->operator_config;
  const struct image_limits limits
      = { .max_bytes = cfg->image_max_bytes,
          .max_entries = cfg->image_max_entries,
          .cache_max_bytes = cfg->image_cache_max_bytes };
  struct image_unpack_notes notes = { 0 };
  struct stat st;

  if (o->host_usr)
    return host_usr_root (g, ret_rootfs, err);
  if (o->rootfs)
    {
      /* Named by the caller, maybe in a tree a payload wrote: no link
       * followed (a planted one would give the host's / as the root). */
      cleanup_close int fd = hostpath_open (o->rootfs, O_PATH | O_DIRECTORY, 0);
      if (fd < 0)
        return moat_fail (err, fd == -ELOOP ? 0 : -fd, "--rootfs %s%s%s",
                          o->rootfs, fd == -ELOOP ? ": " : "",
                          fd == -ELOOP ? HOSTPATH_LINK_TEXT : "");
      *ret_rootfs = realpath (o->rootfs, NULL);
      if (*ret_rootfs == NULL || stat (*ret_rootfs, &st) < 0
          || !S_ISDIR (st.st_mode))
        return moat_fail (err, *ret_rootfs ? ENOTDIR : errno, "--rootfs %s",
                          o->rootfs);
      return 0;
    }
  if (image_prepare (cfg->image_cache, o->image, &limits, ret_rootfs,
                     ret_digest, ret_imglock, ret_img, &notes, err)
      < 0)
    return -1;
  if (notes.evicted)
    fprintf (stderr,
             "moat: sandbox: image cache: removed %lu least recently used "
             "images (%" PRIu64 " bytes) to stay within "
             "image_cache_max_bytes\n",
             notes.evicted, notes.evicted_bytes);
  if (notes.devices_skipped || notes.setid_stripped)
    fprintf (stderr,
             "moat: sandbox: image %s: left out %lu device nodes and "
             "sockets, stripped setuid/setgid from %lu files\n",
             o->image, notes.devices_skipped, notes.setid_stripped);
  return 0;
}

int
sandbox_write_record (const struct sandbox_opts *o,
                      const struct sandbox_run_state *rs, const char *what,
                      const char *json, struct moat_error **err)
{
  if (rs->timed_out)
    fprintf (stderr, "moat: %s: timed out after %.3gs: killed\n", what,
             (double)o->timeout_ms / 1000);
  if (rs->use.oom_kills > 0)
    fprintf (stderr, "moat: %s: out of memory: %" PRIu64 " killed\n", what,
             rs->use.oom_kills);
  if (o->result_file)
    {
      cleanup_free char *line = xasprintf ("%s\n", json);
      if (sandbox_result_write (o->result_file, line, err) < 0)
        return -1;
    }
  if (o->json)
    {
      fflush (stdout);
      if (rs->out.bytes > 0 && rs->out.last_byte != '\n')
        putchar ('\n');
      printf ("%s\n", json);
      fflush (stdout);
    }
  return 0;
}

/* Create with the pipes as the init's stdio; start; run to the end. */
static int
sandbox_execute (const struct moat_globals *g, const char *id,
                 const char *bundle, const char *config,
                 const struct sandbox_opts *o, int infd,
                 struct sandbox_run_state *rs, struct moat_error **err)
{
  /* The spec goes to create as built: no config.json written and reread. */
  struct create_opts co = {
    .id = id, .bundle = bundle, .config_text = config, .refusals = &rs->refusals
  };
  cleanup_close int devnull = open ("/dev/null", O_WRONLY | O_CLOEXEC);
  /* What create made, kept open: start and the loop read nothing again. */
  struct create_carry carry = CREATE_CARRY_INIT;
  struct sandbox_pipes pipes;
  int master = -1;
  int r;

  if (seccomp_refusals_open (&rs->refusals, err) < 0
      || sandbox_pipes_in (&pipes, infd, err) < 0)
    return -1;
  r = container_create_internal (g, &co, true, &rs->pid, &master, &carry, err);
  seccomp_refusals_started (&rs->refusals);
  sandbox_pipes_out (&pipes, rs, devnull, o->output_limit, o->stderr_fd);
  /* The payload's SIGPIPE was set at clone; moat's own writes to a closed
   * stdout must not kill it before the cleanup. */
  signal (SIGPIPE, SIG_IGN);
  rs->started_ms = sandbox_now_ms ();
  rs->started_ns = sandbox_now_ns ();
  if (r == 0)
    r = container_start_carried (g, &carry, err);
  if (r == 0)
    {
      sandbox_run_loop (rs, carry.cg, o->timeout_ms);
      if (carry.cg)
        cgroup_usage (carry.cg, &rs->use);
    }
  create_carry_release (&carry);
  sandbox_streams_close (rs);
  seccomp_refusals_clear (&rs->refusals);
  return r;
}

int
sandbox_exit_status (const struct sandbox_run_state *rs)
{
  if (rs->timed_out)
    return 124;
  if (WIFSIGNALED (rs->status))
    return 128 + WTERMSIG (rs->status);
  return WEXITSTATUS (rs->status);
}

void
sandbox_audit_outcome (const struct moat_globals *g, const char *arg0,
                       const struct sandbox_run_state *rs, int status)
{
  struct json_writer *w;

  if (g->audit == NULL)
    return;
  w = json_writer_new (false);
  jw_object_begin (w);
  jw_outcome (w, rs);
  jw_object_end (w);
  free (g->audit->outcome);
  free (g->audit->command);
  g->audit->outcome = json_writer_finish (w);
  g->audit->command = xstrdup (arg0);
  g->audit->exit_status = status;
}

void
sandbox_prep_clear (struct sandbox_prep *p)
{
  free (p->workdir);
  strv_free (p->pairs);
  free (p->rootfs);
  free (p->digest);
  image_config_clear (&p->img);
  free (p->config);
  if (p->imglock >= 0)
    close (p->imglock);
  operator_config_free (p->operator_config);
  memset (p, 0, sizeof (*p));
  p->imglock = -1;
}

int
sandbox_prepare (const struct moat_globals *g, const struct sandbox_opts *o,
                 const char *verb, struct override_list *ov,
                 struct sandbox_prep *ret, struct moat_error **err)
{
  struct sandbox_opts eff = *o;

  memset (ret, 0, sizeof (*ret));
  ret->imglock = -1;
  if ((o->rootfs != NULL) + (o->image != NULL) + o->host_usr != 1)
    return moat_fail (err, 0,
                      "give one of --rootfs DIR and --image DIR (or "
                      "--host-usr)");
  if (o->argv == NULL || o->argv[0] == NULL)
    return moat_fail (
        err, 0, "missing command (moat %s [OPTIONS] -- CMD [ARG...])", verb);
  if (resolve_binds (g, o, &ret->workdir, &ret->pairs, err) < 0
      || find_rootfs (g, o, &ret->rootfs, &ret->digest, &ret->imglock,
                      &ret->img, err)
             < 0)
    return -1;
  /* The image's User unless --user. */
  if (o->uid < 0 && ret->img.user
      && image_user_resolve (ret->rootfs, ret->img.user, &eff.uid, &eff.gid,
                             err)
             < 0)
    return -1;
  ret->uid = eff.uid >= 0 ? eff.uid : 0;
  ret->gid = eff.gid >= 0 ? eff.gid : ret->uid;
  if (o->host_usr)
    {
      strv_append (&ret->pairs, "/usr");
      strv_append (&ret->pairs, "/usr");
    }
  eff.workdir = ret->workdir;
  eff.ro_binds = ret->pairs;
  sandbox_limits (g->profile, o, &ret->lim, ov);
  if (sandbox_config (&eff, ret->rootfs, &ret->lim, &ret->img, &ret->config,
                      err)
      < 0)
    return -1;
  /* The caller's --workdir is a volume (writable, executable) for this
   * sandbox only. */
  ret->operator_config = operator_config_dup (g->operator_config);
  free (ret->operator_config->caller_volume);
  ret->operator_config->caller_volume
      = ret->workdir ? xstrdup (ret->workdir) : NULL;
  return 0;
}

int
sandbox_run (const struct moat_globals *g, const struct sandbox_opts *o,
             int *ret_status, struct moat_error **err)
{
  cleanup_free char *bundle = NULL;
  cleanup_free char *record = NULL;
  cleanup_free char *what = NULL;
  cleanup_close int infd = -1;
  cleanup_close int sbfd = -1;
  cleanup_close int lockfd = -1;
  cleanup_close int bfd = -1;
  cleanup_close int wd = -1;
  struct override_list local_ov = { 0 };
  struct override_list *ov = g->audit ? g->audit->overrides : &local_ov;
  struct sandbox_run_state rs;
  struct sandbox_prep prep;
  struct sandbox_opts eff = *o;
  struct moat_globals sg = *g;
  char id[32];
  int r;

  memset (&rs, 0, sizeof (rs));
  if (eff.timeout_ms < 0)
    eff.timeout_ms = SANDBOX_DEFAULT_TIMEOUT_MS;
  if (eff.output_limit < 0)
    eff.output_limit = SANDBOX_DEFAULT_OUTPUT_LIMIT;
  sandbox_reap_stale (g);
  session_reap_expired (g);
  r = sandbox_prepare (g, o, "sandbox", ov, &prep, err);
  if (r == 0)
    r = sandbox_stdin_open (o->stdin_file, &infd, err);
  if (r == 0
      && (sandbox_dir_open (g, ".sandbox", &sbfd, err) < 0
          || sandbox_bundle_make (sbfd, "sandbox", id, &lockfd, &bfd, err) < 0))
    r = -1;
  if (r < 0)
    {
      sandbox_prep_clear (&prep);
      override_list_clear (&local_ov);
      return r;
    }
  eff.workdir = prep.workdir;
  eff.ro_binds = prep.pairs;
  sg.operator_config = prep.operator_config;
  if (o->id_buf)
    snprintf (o->id_buf, 32, "%s", id);
  bundle = xasprintf ("%s/.sandbox/%s", g->root, id);
  r = wd = sandbox_watchdog_start (g, sbfd, id, err);
  if (r >= 0)
    r = sandbox_execute (&sg, id, bundle, prep.config, &eff, infd, &rs, err);
  sandbox_remove (g, sbfd, id);
  if (wd >= 0 && write (wd, "d", 1) != 1)
    r = r < 0 ? r : moat_fail (err, errno, "stopping the watchdog");
  override_list_clear (&local_ov);
  if (r < 0)
    {
      sandbox_prep_clear (&prep);
      return r;
    }
  record = sandbox_record_json (g, id, &eff, &rs, &prep.lim, prep.digest, ov);
  sandbox_prep_clear (&prep);
  what = xasprintf ("sandbox %s", id);
  *ret_status = sandbox_exit_status (&rs);
  sandbox_audit_outcome (g, o->argv[0], &rs, *ret_status);
  return sandbox_write_record (&eff, &rs, what, record, err);
}

int
sandbox_cache_list (const struct moat_globals *g, FILE *out,
                    struct moat_error **err)
{
  sandbox_reap_stale (g);
  return image_cache_list (g->operator_config->image_cache, out, err);
}

int
sandbox_cache_prune (const struct moat_globals *g, FILE *out,
                     struct moat_error **err)
{
  sandbox_reap_stale (g);
  return image_cache_prune (g->operator_config->image_cache, out, err);
}
