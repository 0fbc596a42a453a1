/* moat: global flags, the verb table, and the one place that prints errors
 * and writes the audit line. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../oci/json.h"
#include "../lib/dynlib.h"
#include "../lib/procargs.h"
#include "../runtime/audit.h"
#include "../runtime/cgroup/cgroup.h"
#include "../runtime/log/log.h"
#include "../policy/profile.h"
#include "../runtime/init/selinux.h"
#include "../lib/util.h"
#include "cmd.h"

struct verb
{
  const char *name;
  int (*fn) (struct cmd_ctx *, int, char **, struct moat_error **);
  const char *usage;
  const char *help;
  bool needs_profile;
  bool audit_first; /* open the audit log before acting */
  /* A broken operator config refuses these (they start processes or set
   * limits and guards from it); the others warn and use the built-in
   * profile, so that an engine can still list, kill and delete. */
  bool needs_config;
  /* Audited only when the operator asks (audit_read_verbs): they change
   * nothing, and an engine polls them. */
  bool read_only;
  /* Judges a container or a bundle under the profile (create and the verbs
   * around it, profile show/explain); the others obey the decision create
   * saved and load only the operator configuration (audit log, pool dir). */
  bool judges;
};

static int cmd_version (struct cmd_ctx *ctx, int argc, char **argv,
                        struct moat_error **err);

/* Does this invocation need a shared library (lib/dynlib.h), which a
 * statically linked moat does not load? libselinux on a host with
 * selinuxfs mounted (any verb may label), libarchive where a sandbox or a
 * session is made from an image (its layers may need unpacking). The
 * systemd driver's calls go to moat-dl one by one (cgroup_systemd.c). */
static const char *
needs_library (const char *verb, int argc, char **argv)
{
  bool image = false;

  if (strcmp (verb, "sandbox") == 0
      || (strcmp (verb, "session") == 0 && argc > 1
          && strcmp (argv[1], "create") == 0))
    for (int i = 1; i < argc && strcmp (argv[i], "--") != 0; i++)
      if (strcmp (argv[i], "--image") == 0
          || strncmp (argv[i], "--image=", 8) == 0)
        image = true;
  if (image)
    return "--image";
  if (selinux_fs_mounted ())
    return "SELinux (selinuxfs is mounted)";
  return NULL;
}

static const struct verb verbs[] = {
  { "create", cmd_create,
    "create [--bundle DIR] [--pid-file F] [--console-socket S] [--no-pivot]\n"
    "       [--no-new-keyring] [--preserve-fds N] ID",
    "create a container from a bundle; its process waits for start", true, true,
    true, false, true },
  { "start", cmd_start, "start ID", "start the process of a created container",
    true, false, true, false, false },
  { "state", cmd_state, "state ID", "print the OCI state of a container", true,
    false, false, true, false },
  { "kill", cmd_kill, "kill [--all] ID [SIGNAL]",
    "send a signal (default SIGTERM) to the container's init or, with --all, "
    "to every process in it; signal 0 checks that the init is alive",
    true, false, false, false, false },
  { "delete", cmd_delete, "delete [--force] ID",
    "delete a stopped container (--force: kill it first; an id that does not "
    "exist is not an error)",
    true, false, false, false, false },
  { "run", cmd_run, "run [create flags] [--detach] [--keep] ID",
    "create, start and wait for a container; exits with its status", true, true,
    true, false, true },
  { "exec", cmd_exec,
    "exec [--process F] [--detach] [--pid-file F] [--tty]\n"
    "     [--console-socket S] [--cwd DIR] [--env K=V] [--user UID[:GID]]\n"
    "     [--additional-gids GID] [--preserve-fds N] [--cgroup [CTRL:]SUB]\n"
    "     ID [COMMAND [ARG...]]",
    "run a new process in a running container, under the same profile", true,
    true, true, false, false },
  { "ps", cmd_ps, "ps [--format table|json] ID [-- PS-ARGS...]",
    "list the processes of a container (with PS-ARGS: ps(1)'s output for "
    "them)",
    true, false, false, true, false },
  { "pause", cmd_pause, "pause ID", "freeze every process of a container", true,
    false, false, false, false },
  { "resume", cmd_resume, "resume ID", "thaw a paused container", true, false,
    false, false, false },
  { "update", cmd_update,
    "update [--resources FILE|-] [--memory N[kmg]] [--memory-swap N[kmg]]\n"
    "       [--pids-limit N] [--cpu-quota N] [--cpu-period N] [--cpu-shares "
    "N]\n"
    "       [--cpuset-cpus L] [--cpuset-mems L] ID",
    "change a container's limits (never above the profile's: a clamp is told "
    "on stderr)",
    true, false, true, false, false },
  { "events", cmd_events, "events [--stats] [--interval DURATION] ID",
    "print resource statistics as JSON (interval: 5s, 100ms ...)", true, false,
    false, true, false },
  { "list", cmd_list, "list [--format table|json] [--quiet]",
    "list containers, sorted by id", true, false, false, true, false },
  { "spec", cmd_spec, "spec [--bundle DIR] [--rootless]",
    "write a config.json for a rootfs in DIR/rootfs", false, false, false,
    false, false },
  { "features", cmd_features, "features",
    "print the runtime features JSON (runtime-spec features.md)", false, false,
    false, true, false },
  { "sandbox", cmd_sandbox,
    "sandbox (--rootfs DIR | --image OCI_DIR|ARCHIVE | --host-usr) [--workdir "
    "DIR]\n"
    "        [--ro-bind S:D]\n"
    "        [--env K=V] [--stdin F|-] [--timeout DUR] [--output-limit SIZE]\n"
    "        [--memory SIZE] [--pids N] [--cpus N] [--user UID[:GID]]\n"
    "        [--stderr-fd N] [--result F] [--json] [--all-overrides]\n"
    "        -- CMD [ARG...]\n"
    "       sandbox --list-cache | --prune-cache",
    "run one untrusted command in a throw-away container and report how it "
    "ended (default --timeout 10m, --output-limit 16m a stream)",
    true, true, true, false, true },
  { "session", cmd_session,
    "session create (--rootfs DIR | --image OCI_DIR|ARCHIVE | --host-usr)\n"
    "                [sandbox flags]"
    "\n"
    "                [--idle-timeout DUR] [--max-lifetime DUR] [--json]\n"
    "       session exec [--timeout DUR] [--output-limit SIZE] [--env K=V]\n"
    "                [--cwd DIR] [--user UID[:GID]] [--stdin F|-] [--stderr-fd "
    "N]\n"
    "                [--result F] [--json] [--all-overrides] ID -- CMD "
    "[ARG...]\n"
    "       session put|get [--max-entries N] [--max-bytes SIZE]\n"
    "                ID HOST_PATH DEST | ID SRC HOST_PATH\n"
    "       session list [--json] | rm ID",
    "a sandbox that stays: many commands, each with its own deadline "
    "(default 10m), output cap (16m) and record, its process tree killed "
    "with it; files in and out (at most 100000 entries and 1g of data "
    "a copy); removed after --idle-timeout (30m) or "
    "--max-lifetime (12h)",
    true, true, true, false, true },
  { "profile", cmd_profile,
    "profile show [--profile NAME] [--config F]\n"
    "       profile explain -b BUNDLE [--profile NAME] [--config F]",
    "print the effective profile, or what create would do to a bundle "
    "(every override and refusal, every mount operation) without creating "
    "anything",
    true, false, true, true, true },
  { "version", cmd_version, "version", "print the version (as --version)",
    false, false, false, true, false },
};

static void
usage (FILE *out)
{
  fprintf (out, "moat: a hardened OCI runtime. Whatever config.json asks, the "
                "container runs\nunder a strict profile (no network beyond "
                "loopback, no capabilities, read-only\nroot, seccomp, limits, "
                "masked /proc and /sys, an audit line per verb).\n\n"
                "usage: moat [global flags] VERB [flags] [ID]\n\nverbs:\n");
  for (size_t i = 0; i < sizeof (verbs) / sizeof (verbs[0]); i++)
    fprintf (out, "  %-9s %s\n", verbs[i].name, verbs[i].help);
  fprintf (out,
           "\nglobal flags:\n"
           "  --root DIR          state directory (default /run/moat)\n"
           "  --log FILE          also write errors (and --debug detail) to "
           "FILE\n"
           "  --log-format F      text or json (json: runc's one object "
           "per line)\n"
           "  --profile NAME      strict (default) or egress\n"
           "  --config FILE       operator config (default "
           "/etc/moat/config.json)\n"
           "  --systemd-cgroup    slice:prefix:name becomes a systemd unit\n"
           "  --debug             write to --log (or stderr) what moat "
           "decided and did\n"
           "                      (profile, overrides, namespaces, cgroup, "
           "BPF, timings)\n"
           "  --version, --help\n\n"
           "moat VERB --help shows a verb's flags.\n");
}

static void
verb_usage (const struct verb *v)
{
  printf ("usage: moat %s\n\n%s\n", v->usage, v->help);
}

enum
{
  G_ROOT = 1,
  G_LOG,
  G_LOG_FORMAT,
  G_PROFILE,
  G_CONFIG,
  G_SYSTEMD,
  G_DEBUG,
  G_VERSION,
  G_HELP
};

struct globals_parse
{
  struct cmd_ctx *ctx;
  const char *log;
  const char *log_format;
  bool version, help;
};

static int
global_cb (void *p, int id, const char *val, struct moat_error **err)
{
  struct globals_parse *gp = p;
  switch (id)
    {
    case G_ROOT:
      gp->ctx->g.root = val;
      break;
    case G_LOG:
      gp->log = val;
      break;
    case G_LOG_FORMAT:
      if (strcmp (val, "text") && strcmp (val, "json"))
        return moat_fail (err, 0, "--log-format: expected text or json");
      gp->log_format = val;
      break;
    case G_PROFILE:
      gp->ctx->g.profile_name = val;
      break;
    case G_CONFIG:
      gp->ctx->g.config = val;
      break;
    case G_SYSTEMD:
      gp->ctx->g.systemd_cgroup = true;
      break;
    case G_DEBUG:
      gp->ctx->g.debug = true;
      break;
    case G_VERSION:
      gp->version = true;
      break;
    case G_HELP:
      gp->help = true;
      break;
    default:
      break;
    }
  return 0;
}

/* The id as the error line shows it: an id moat refused may hold a
 * newline or be kilobytes long, and the error must stay one short line. */
static char *
printable_id (const char *id)
{
  return container_id_check (id, NULL) == 0 ? xstrdup (id)
                                            : printable_text (id, 64);
}

static void
print_version (void)
{
  printf ("moat version %s\ncommit: %s\nspec: 1.2.0\n", MOAT_VERSION,
          MOAT_COMMIT);
  printf ("features: seccomp (libseccomp %s), cgroup-bpf network guard, "
          "cgroups v1/v2/hybrid, %s, libcap%s\n",
          "2", selinux_status (), MOAT_DEBUG ? ", DEBUG fault points" : "");
}

static int
cmd_version (struct cmd_ctx *ctx, int argc, char **argv,
             struct moat_error **err)
{
  int idx;
  int r = cmd_parse (argv[0], argc, argv, 1, NULL, NULL, NULL, &idx, err);
  if (r < 0)
    return r;
  if (idx < argc)
    return moat_fail (err, 0, "unexpected argument %s", argv[idx]);
  print_version ();
  return 0;
}

/* The operator configuration for this verb, with the profile when it
 * judges (ret then non-NULL): from the operator config, or the built-in
 * ones. */
static int
load_config_or_builtin (const struct verb *v, const struct cmd_ctx *ctx,
                        bool builtin, struct profile **ret,
                        struct operator_config **ret_config,
                        const char **ret_name, struct moat_error **err)
{
  const char *name = ctx->g.profile_name;
  /* The operator config's cache, in the state root beside the seccomp
   * filters' (ROOT/.cache): create fills it, the later verbs read it.
   * `profile show` and `explain` judge but create nothing, not even the
   * state root: they parse the config whole. */
  cleanup_free char *cache_dir = xasprintf ("%s/.cache", ctx->g.root);
  const char *judge_cache = v->read_only ? NULL : cache_dir;
  int r;

  if (!v->judges)
    return builtin
               ? operator_config_load_builtin (name, ret_config, ret_name, err)
               : operator_config_load_cached (ctx->g.config, cache_dir, name,
                                              ret_config, ret_name, err);
  r = builtin ? profile_load_builtin (name, ret, ret_config, err)
              : profile_load_cached (ctx->g.config, judge_cache, name, ret,
                                     ret_config, err);
  if (r == 0)
    *ret_name = (*ret)->name;
  return r;
}

/* The operator configuration, and the profile for the verbs that judge (see
 * struct verb needs_config and judges). */
static int
load_configuration (const struct verb *v, struct cmd_ctx *ctx,
                    struct profile **ret, struct operator_config **ret_config,
                    const char **ret_name, struct moat_error **err)
{
  int r
      = load_config_or_builtin (v, ctx, false, ret, ret_config, ret_name, err);
  if (r == 0 || v->needs_config)
    return r;
  fprintf (stderr, "moat: warning: %s; %s goes on with the built-in profile\n",
           (*err)->msg, v->name);
  moat_error_free (err);
  return load_config_or_builtin (v, ctx, true, ret, ret_config, ret_name, err);
}

/* The first --debug line of every verb: what was asked, as runc's. */
static void
debug_command_line (int argc, char **argv)
{
  cleanup_free char *line = NULL;
  size_t len = 0;
  FILE *f;

  if (!log_debug_enabled ())
    return;
  f = open_memstream (&line, &len);
  if (f == NULL)
    return;
  for (int i = 0; i < argc; i++)
    fprintf (f, "%s%s", i ? " " : "", argv[i]);
  fclose (f);
  log_debug ("%s: command line: %s (moat pid %d)", argv[0], line,
             (int)getpid ());
}

static void
debug_profile (const struct profile *p, const struct operator_config *cfg,
               const char *profile_name, const struct cmd_ctx *ctx)
{
  const char *config_path
      = ctx->g.config ? ctx->g.config : "/etc/moat/config.json";

  if (!log_debug_enabled ())
    return;
  if (p == NULL)
    {
      log_debug ("%s: operator config %s (profile %s): audit log %s%s",
                 ctx->verb, config_path, profile_name, cfg->audit_log,
                 cfg->audit_read_verbs ? " (read-only verbs too)" : "");
      return;
    }
  log_debug ("%s: profile %s (operator config %s): network %s, pids %lld, "
             "memory %lld, cpu %lld/%llu us, tmpfs %llu, nofile %llu, "
             "%zu denied CIDRs, audit log %s%s",
             ctx->verb, p->name, config_path,
             p->egress ? "egress" : "loopback only", (long long)p->pids_limit,
             (long long)p->memory_limit, (long long)p->cpu_quota,
             (unsigned long long)p->cpu_period,
             (unsigned long long)p->tmpfs_size, (unsigned long long)p->nofile,
             p->n_deny, cfg->audit_log,
             cfg->audit_read_verbs ? " (read-only verbs too)" : "");
}

/* The verb's one audit line (G11), to the log create opened first or
 * appended now. */
static void
write_verb_audit (const struct cmd_ctx *ctx, const char *profile_name,
                  const struct operator_config *cfg,
                  const struct verb_audit *audit, int r,
                  const struct moat_error *err, int audit_fd)
{
  struct audit_record rec = {
    .verb = ctx->verb,
    .id = ctx->id,
    .bundle = audit->bundle,
    .profile = audit->profile ? audit->profile : profile_name,
    .mechanism = audit->mechanism,
    .effective = audit->effective,
    .refused_connects = audit->refused_connects,
    .landlock = audit->landlock,
    .userns = audit->userns,
    .userns_joined = audit->userns_joined,
    .overrides = audit->overrides,
    .result = r < 0 ? 1 : 0,
    .error = r < 0 && err ? err->msg : NULL,
    .exit_status = audit->exit_status,
    .config_digest = audit->config_digest,
    .command = audit->command,
    .outcome = audit->outcome,
  };
  struct moat_error *aerr = NULL;

  if ((audit_fd >= 0 ? audit_write_fd (audit_fd, &rec, &aerr)
                     : audit_write (cfg->audit_log, &rec, &aerr))
      < 0)
    {
      fprintf (stderr, "moat: warning: audit log: %s\n", aerr->msg);
      moat_error_free (&aerr);
    }
  if (audit_fd >= 0)
    close (audit_fd);
}

static void
verb_audit_release (struct verb_audit *audit)
{
  free (audit->bundle);
  free (audit->profile);
  free (audit->config_digest);
  free (audit->command);
  free (audit->outcome);
  free (audit->effective);
  free (audit->refused_connects);
  free (audit->landlock);
  free (audit->userns);
  free (audit->userns_joined);
}

int
main (int argc, char **argv)
{
  static const struct cmd_opt gopts[]
      = { { "root", 0, true, G_ROOT },
          { "log", 0, true, G_LOG },
          { "log-format", 0, true, G_LOG_FORMAT },
          { "profile", 0, true, G_PROFILE },
          { "config", 0, true, G_CONFIG },
          { "systemd-cgroup", 0, false, G_SYSTEMD },
          { "debug", 0, false, G_DEBUG },
          { "version", 'v', false, G_VERSION },
          { "help", 'h', false, G_HELP },
          { NULL, 0, false, 0 } };
  struct cmd_ctx ctx = { .g = { .root = "/run/moat" } };
  struct globals_parse gp = { .ctx = &ctx };
  struct override_list overrides = { 0 };
  struct verb_audit audit = { .overrides = &overrides, .exit_status = -1 };
  struct profile *profile = NULL;
  struct operator_config *config = NULL;
  const char *profile_name = NULL;
  struct moat_error *err = NULL;
  const struct verb *v = NULL;
  int audit_fd = -1;
  int idx, r;

  procargs_take (argc, argv);
  r = cmd_parse (NULL, argc, argv, 1, gopts, global_cb, &gp, &idx, &err);
  log_setup (gp.log, gp.log_format && strcmp (gp.log_format, "json") == 0,
             ctx.g.debug);
  if (r < 0)
    {
      fprintf (stderr, "moat: %s\n", err->msg);
      log_error (err->msg);
      moat_error_free (&err);
      return 1;
    }
  if (gp.version)
    {
      print_version ();
      return 0;
    }
  if (gp.help || idx >= argc || strcmp (argv[idx], "help") == 0)
    {
      usage (gp.help || idx < argc ? stdout : stderr);
      return gp.help || idx < argc ? 0 : 1;
    }
  /* Not a verb: a statically linked moat's call into moat-dl. */
  if (strcmp (argv[idx], CGROUP_SYSTEMD_HELPER_VERB) == 0)
    {
      r = cgroup_systemd_helper (argc - idx, argv + idx, &err);
      if (r < 0)
        {
          fprintf (stderr, "%s\n", err->msg);
          moat_error_free (&err);
          return 1;
        }
      return r;
    }
  for (size_t i = 0; i < sizeof (verbs) / sizeof (verbs[0]); i++)
    if (strcmp (argv[idx], verbs[i].name) == 0)
      v = &verbs[i];
  if (v == NULL)
    {
      fprintf (stderr, "moat: unknown verb %s (moat --help lists them)\n",
               argv[idx]);
      log_error ("unknown verb");
      return 1;
    }
  ctx.verb = v->name;
  if (dynlib_static ())
    {
      const char *why = needs_library (v->name, argc - idx, argv + idx);
      if (why && dynlib_reexec (argv, why, &err) < 0)
        {
          fprintf (stderr, "moat: %s: %s\n", v->name, err->msg);
          log_error (err->msg);
          moat_error_free (&err);
          return 1;
        }
    }
  debug_command_line (argc - idx, argv + idx);
  if (cmd_wants_help (argc - idx, argv + idx))
    {
      verb_usage (v);
      return 0;
    }
  if (v->needs_profile)
    {
      r = load_configuration (v, &ctx, v->judges ? &profile : NULL, &config,
                              &profile_name, &err);
      ctx.g.profile = profile;
      ctx.g.operator_config = config;
      ctx.g.audit = &audit;
      if (r == 0)
        debug_profile (profile, config, profile_name, &ctx);
      /* Verbs that start processes fail closed: no audit log, no container. */
      if (r == 0 && v->audit_first)
        r = audit_open (config->audit_log, &audit_fd, &err);
    }
  if (r == 0)
    r = v->fn (&ctx, argc - idx, argv + idx, &err);
  /* `profile show --profile X` may have swapped the profile and its
   * configuration. */
  profile = (struct profile *)ctx.g.profile;
  config = (struct operator_config *)ctx.g.operator_config;
  if (profile)
    profile_name = profile->name;

  if (r < 0)
    {
      const char *msg = err && err->msg ? err->msg : "failed";
      cleanup_free char *id = ctx.id ? printable_id (ctx.id) : NULL;
      cleanup_free char *shown = printable_text (msg, SIZE_MAX);
      cleanup_free char *full
          = id ? xasprintf ("%s %s: %s", ctx.verb, id, shown)
               : xasprintf ("%s: %s", ctx.verb, shown);
      fprintf (stderr, "moat: %s\n", full);
      log_error (msg);
    }
  /* A failed verb's error says enough; a clamp it made holds nowhere. */
  if (r == 0)
    audit_tell_clamps (&overrides, &audit.told, ctx.verb, ctx.id);
  audit_debug_overrides (&overrides, ctx.verb);
  log_phase (r < 0 ? "failed" : "done");
  if (config && (!v->read_only || config->audit_read_verbs))
    write_verb_audit (&ctx, profile_name, config, &audit, r, err, audit_fd);
  else if (audit_fd >= 0)
    close (audit_fd);
  override_list_clear (&overrides);
  verb_audit_release (&audit);
  profile_free (profile);
  operator_config_free (config);
  moat_error_free (&err);
  return r < 0 ? (ctx.exit_status > 1 ? ctx.exit_status : 1) : ctx.exit_status;
}
