/* moat: global flags, the verb table, and the one place that prints errors
 * and writes the audit line. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../oci/json.h"
#include "../runtime/audit.h"
#include "../runtime/profile.h"
#include "../runtime/util.h"
#include "cmd.h"

struct verb
{
  const char *name;
  int (*fn) (struct cmd_ctx *, int, char **, struct moat_error **);
  const char *usage;
  const char *help;
  bool needs_profile;
  bool audit_first; /* open the audit log before acting */
};

static const struct verb verbs[] = {
  { "create", cmd_create,
    "create [--bundle DIR] [--pid-file F] [--console-socket S] [--no-pivot]\n"
    "       [--no-new-keyring] [--preserve-fds N] ID",
    "create a container from a bundle; its process waits for start", true, true },
  { "start", cmd_start, "start ID", "start the process of a created container",
    true, false },
  { "state", cmd_state, "state ID", "print the OCI state of a container",
    true, false },
  { "kill", cmd_kill, "kill [--all] ID [SIGNAL]",
    "send a signal (default SIGTERM) to the container's init or, with --all, "
    "to every process in it",
    true, false },
  { "delete", cmd_delete, "delete [--force] ID",
    "delete a stopped container (--force: kill it first)", true, false },
  { "run", cmd_run,
    "run [create flags] [--detach] [--keep] ID",
    "create, start and wait for a container; exits with its status", true, true },
  { "exec", cmd_exec,
    "exec [--process F | COMMAND...] [--detach] [--pid-file F] [--tty]\n"
    "     [--console-socket S] [--cwd DIR] [--env K=V] [--user UID[:GID]]\n"
    "     [--preserve-fds N] ID",
    "run a new process in a running container, under the same profile",
    true, true },
  { "ps", cmd_ps, "ps [--format table|json] ID",
    "list the processes of a container", true, false },
  { "pause", cmd_pause, "pause ID", "freeze every process of a container",
    true, false },
  { "resume", cmd_resume, "resume ID", "thaw a paused container", true, false },
  { "update", cmd_update,
    "update [--resources FILE|-] [--memory N] [--pids-limit N]\n"
    "       [--cpu-quota N] [--cpu-period N] [--cpu-shares N] ID",
    "change a container's limits (never above the profile's)", true, false },
  { "events", cmd_events, "events [--stats] [--interval S] ID",
    "print resource statistics as JSON", true, false },
  { "list", cmd_list, "list [--format table|json] [--quiet]",
    "list containers", true, false },
  { "spec", cmd_spec, "spec [--bundle DIR] [--rootless]",
    "write a config.json for a rootfs in DIR/rootfs", false, false },
  { "features", cmd_features, "features",
    "print the runtime features JSON (runtime-spec features.md)", false, false },
  { "profile", cmd_profile, "profile show [--profile NAME] [--config F]",
    "print the effective profile", true, false },
};

static void
usage (FILE *out)
{
  fprintf (out,
           "moat: a hardened OCI runtime. Whatever config.json asks, the "
           "container runs\nunder a strict profile (no network beyond "
           "loopback, no capabilities, read-only\nroot, seccomp, limits, "
           "masked /proc and /sys, an audit line per verb).\n\n"
           "usage: moat [global flags] VERB [flags] [ID]\n\nverbs:\n");
  for (size_t i = 0; i < sizeof (verbs) / sizeof (verbs[0]); i++)
    fprintf (out, "  %-9s %s\n", verbs[i].name, verbs[i].help);
  fprintf (out,
           "\nglobal flags:\n"
           "  --root DIR          state directory (default /run/moat)\n"
           "  --log FILE          also write errors to FILE\n"
           "  --log-format F      text or json (json: runc's one object "
           "per line)\n"
           "  --profile NAME      strict (default) or egress\n"
           "  --config FILE       operator config (default "
           "/etc/moat/config.json)\n"
           "  --systemd-cgroup    slice:prefix:name becomes a systemd unit\n"
           "  --debug             more detail in the log\n"
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
  G_ROOTLESS,
  G_CRIU,
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

static void
log_error (const char *log, const char *format, const char *msg)
{
  cleanup_close int fd = -1;
  cleanup_free char *line = NULL;
  char now[64];

  if (log == NULL)
    return;
  fd = open (log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  now_rfc3339 (now, sizeof (now));
  if (format && strcmp (format, "json") == 0)
    {
      struct json_writer *w = json_writer_new (false);
      jw_object_begin (w);
      jw_key (w, "level");
      jw_string (w, "error");
      jw_key (w, "msg");
      jw_string (w, msg);
      jw_key (w, "time");
      jw_string (w, now);
      jw_object_end (w);
      char *j = json_writer_finish (w);
      line = xasprintf ("%s\n", j);
      free (j);
    }
  else
    line = xasprintf ("time=\"%s\" level=error msg=\"%s\"\n", now, msg);
  write_all (fd, line, strlen (line));
}

/* The id as the error line shows it: an id moat refused may hold a
 * newline or be kilobytes long, and the error must stay one short line. */
static char *
printable_id (const char *id)
{
  char *out;
  size_t n = 0;

  if (container_id_check (id, NULL) == 0)
    return xstrdup (id);
  out = xmalloc (64 * 4 + 4);
  for (size_t i = 0; id[i] && i < 64; i++)
    {
      unsigned char c = (unsigned char) id[i];
      if (c < 0x20 || c == 0x7f)
        n += sprintf (out + n, "\\x%02x", c);
      else
        out[n++] = (char) c;
    }
  strcpy (out + n, strlen (id) > 64 ? "..." : "");
  return out;
}

static void
print_version (void)
{
  printf ("moat version %s\ncommit: %s\nspec: 1.2.0\n", MOAT_VERSION,
          MOAT_COMMIT);
  printf ("features: seccomp (libseccomp %s), cgroup-bpf network guard, "
          "cgroups v1/v2/hybrid, selinux, libmount, libcap%s\n",
          "2", MOAT_DEBUG ? ", DEBUG fault points" : "");
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
          { "rootless", 0, true, G_ROOTLESS },
          { "criu", 0, true, G_CRIU },
          { "version", 'v', false, G_VERSION },
          { "help", 'h', false, G_HELP },
          { NULL, 0, false, 0 } };
  struct cmd_ctx ctx = { .g = { .root = "/run/moat" } };
  struct globals_parse gp = { .ctx = &ctx };
  struct override_list overrides = { 0 };
  struct verb_audit audit = { .overrides = &overrides };
  struct profile *profile = NULL;
  struct moat_error *err = NULL;
  const struct verb *v = NULL;
  int audit_fd = -1;
  int idx, r;

  r = cmd_parse (argc, argv, 1, gopts, global_cb, &gp, &idx, &err);
  if (r < 0)
    {
      fprintf (stderr, "moat: %s\n", err->msg);
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
  for (size_t i = 0; i < sizeof (verbs) / sizeof (verbs[0]); i++)
    if (strcmp (argv[idx], verbs[i].name) == 0)
      v = &verbs[i];
  if (v == NULL)
    {
      fprintf (stderr, "moat: unknown verb %s (moat --help lists them)\n",
               argv[idx]);
      log_error (gp.log, gp.log_format, "unknown verb");
      return 1;
    }
  ctx.verb = v->name;
  if (cmd_wants_help (argc - idx, argv + idx))
    {
      verb_usage (v);
      return 0;
    }
  if (v->needs_profile)
    {
      r = profile_load (ctx.g.config, ctx.g.profile_name, &profile, &err);
      ctx.g.profile = profile;
      ctx.g.audit = &audit;
      /* Verbs that start processes fail closed: no audit log, no container. */
      if (r == 0 && v->audit_first)
        r = audit_open (profile->audit_log, &audit_fd, &err);
    }
  if (r == 0)
    r = v->fn (&ctx, argc - idx, argv + idx, &err);
  /* `profile show --profile X` may have swapped the profile. */
  profile = (struct profile *) ctx.g.profile;

  if (r < 0)
    {
      const char *msg = err && err->msg ? err->msg : "failed";
      cleanup_free char *id = ctx.id ? printable_id (ctx.id) : NULL;
      cleanup_free char *full = id ? xasprintf ("%s %s: %s", ctx.verb, id, msg)
                                   : xasprintf ("%s: %s", ctx.verb, msg);
      fprintf (stderr, "moat: %s\n", full);
      log_error (gp.log, gp.log_format, msg);
    }
  if (profile)
    {
      struct audit_record rec = {
        .verb = ctx.verb,
        .id = ctx.id,
        .bundle = audit.bundle,
        .profile = profile->name,
        .mechanism = audit.mechanism,
        .overrides = &overrides,
        .result = r < 0 ? 1 : 0,
        .error = r < 0 && err ? err->msg : NULL,
      };
      struct moat_error *aerr = NULL;
      if ((audit_fd >= 0 ? audit_write_fd (audit_fd, &rec, &aerr)
                         : audit_write (profile->audit_log, &rec, &aerr))
          < 0)
        {
          fprintf (stderr, "moat: warning: audit log: %s\n", aerr->msg);
          moat_error_free (&aerr);
        }
      if (audit_fd >= 0)
        close (audit_fd);
    }
  override_list_clear (&overrides);
  free (audit.bundle);
  profile_free (profile);
  moat_error_free (&err);
  return r < 0 ? (ctx.exit_status > 1 ? ctx.exit_status : 1)
               : ctx.exit_status;
}
