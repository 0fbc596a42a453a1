/* moat session create|exec|put|get|list|rm: flags into the runtime's
 * session structs. As for sandbox, an unknown flag is an error. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../policy/profile.h"
#include "../app/session.h"
#include "../lib/util.h"
#include "cmd.h"
#include "sandbox_flags.h"

enum
{
  X_IDLE_TIMEOUT = 64,
  X_MAX_LIFETIME,
  X_TIMEOUT,
  X_OUTPUT_LIMIT,
  X_ENV,
  X_CWD,
  X_USER,
  X_STDIN,
  X_JSON,
  X_RESULT,
  X_STDERR_FD,
  X_MAX_ENTRIES,
  X_MAX_BYTES,
  X_ALL_OVERRIDES,
};

/* sandbox's flags that make sense for a session that stays. */
static bool
create_takes (const char *name)
{
  static const char *const not_for_create[]
      = { "stdin",      "timeout",     "output-limit",  "result", "stderr-fd",
          "list-cache", "prune-cache", "all-overrides", NULL };
  for (size_t i = 0; not_for_create[i]; i++)
    if (strcmp (name, not_for_create[i]) == 0)
      return false;
  return true;
}

static const struct cmd_opt *
create_table (void)
{
  static struct cmd_opt table[40];
  size_t n = 0;

  if (table[0].name)
    return table;
  for (const struct cmd_opt *t = sandbox_opts_table; t->name; t++)
    if (create_takes (t->name))
      table[n++] = *t;
  table[n++] = (struct cmd_opt){ "idle-timeout", 0, true, X_IDLE_TIMEOUT };
  table[n++] = (struct cmd_opt){ "max-lifetime", 0, true, X_MAX_LIFETIME };
  table[n] = (struct cmd_opt){ NULL, 0, false, 0 };
  return table;
}

static const struct cmd_opt exec_table[]
    = { { "timeout", 't', true, X_TIMEOUT },
        { "output-limit", 0, true, X_OUTPUT_LIMIT },
        { "env", 'e', true, X_ENV },
        { "cwd", 0, true, X_CWD },
        { "user", 'u', true, X_USER },
        { "stdin", 0, true, X_STDIN },
        { "json", 0, false, X_JSON },
        { "all-overrides", 0, false, X_ALL_OVERRIDES },
        { "result", 0, true, X_RESULT },
        { "stderr-fd", 0, true, X_STDERR_FD },
        { NULL, 0, false, 0 } };

static const struct cmd_opt list_table[]
    = { { "json", 0, false, X_JSON }, { NULL, 0, false, 0 } };

static const struct cmd_opt copy_table[]
    = { { "max-entries", 0, true, X_MAX_ENTRIES },
        { "max-bytes", 0, true, X_MAX_BYTES },
        { NULL, 0, false, 0 } };

static const struct cmd_opt no_flags[] = { { NULL, 0, false, 0 } };

struct session_parse
{
  struct sandbox_parse sb;
  struct session_create_opts c;
  struct session_exec_opts x;
  struct session_copy_limits copy;
  char **env;
};

static int
duration_flag (const char *flag, const char *val, int64_t *ret,
               struct moat_error **err)
{
  if (sandbox_parse_duration (val, ret) < 0)
    return moat_fail (err, 0,
                      "%s: expected a duration such as 10s, 500ms or 2m, "
                      "got %s",
                      flag, val);
  return 0;
}

static int
session_cb (void *p, int id, const char *val, struct moat_error **err)
{
  struct session_parse *sp = p;
  uint64_t v;

  switch (id)
    {
    case X_IDLE_TIMEOUT:
      return duration_flag ("--idle-timeout", val, &sp->c.idle_timeout_ms, err);
    case X_MAX_LIFETIME:
      return duration_flag ("--max-lifetime", val, &sp->c.max_lifetime_ms, err);
    case X_TIMEOUT:
      return duration_flag ("--timeout", val, &sp->x.timeout_ms, err);
    case X_OUTPUT_LIMIT:
      if (parse_byte_size (val, &v) < 0 || v > INT64_MAX)
        return moat_fail (err, 0,
                          "--output-limit: expected a size such as 1m, "
                          "got %s",
                          val);
      sp->x.output_limit = (int64_t)v;
      return 0;
    case X_MAX_ENTRIES:
      if (parse_uint64 (val, &v) < 0 || v == 0)
        return moat_fail (
            err, 0, "--max-entries: expected a positive count, got %s", val);
      sp->copy.max_entries = v;
      return 0;
    case X_MAX_BYTES:
      if (parse_byte_size (val, &v) < 0 || v == 0)
        return moat_fail (
            err, 0, "--max-bytes: expected a size such as 1g, got %s", val);
      sp->copy.max_bytes = v;
      return 0;
    case X_ENV:
      if (strchr (val, '=') == NULL || val[0] == '=')
        return moat_fail (err, 0, "--env: expected K=V, got %s", val);
      strv_append (&sp->env, val);
      return 0;
    case X_CWD:
      sp->x.cwd = val;
      return 0;
    case X_USER:
      sp->x.user = val;
      return 0;
    case X_STDIN:
      sp->x.stdin_file = val;
      return 0;
    case X_JSON:
      sp->x.json = true;
      return 0;
    case X_ALL_OVERRIDES:
      sp->x.all_overrides = true;
      return 0;
    case X_STDERR_FD:
      return sandbox_parse_stderr_fd (val, &sp->x.stderr_fd, err);
    case X_RESULT:
      sp->x.result_file = val;
      return 0;
    default:
      return sandbox_cb (&sp->sb, id, val, err);
    }
}

static int
parse (const char *sub, const struct cmd_opt *table, int argc, char **argv,
       struct session_parse *sp, int *ret_idx, struct moat_error **err)
{
  cleanup_free char *verb = xasprintf ("session %s", sub);
  int r = sandbox_check_flags (table, verb, argc - 1, argv + 1, err);
  if (r == 0)
    r = cmd_parse ("session", argc, argv, 2, table, session_cb, sp, ret_idx,
                   err);
  return r;
}

/* Exactly n positional arguments from idx; the first is the session's id. */
static int
take_args (struct cmd_ctx *ctx, int argc, char **argv, int idx, int n,
           const char *usage, struct moat_error **err)
{
  if (argc - idx != n)
    return moat_fail (err, 0, "expected %s", usage);
  if (n > 0)
    ctx->id = argv[idx];
  return 0;
}

static int
do_create (struct cmd_ctx *ctx, int argc, char **argv, struct session_parse *sp,
           struct moat_error **err)
{
  int idx;
  int r = parse ("create", create_table (), argc, argv, sp, &idx, err);

  if (r == 0 && idx < argc)
    r = moat_fail (err, 0, "unexpected argument %s", argv[idx]);
  if (r < 0)
    return r;
  sp->c.sb = sp->sb.o;
  sp->c.sb.ro_binds = sp->sb.ro_binds;
  sp->c.sb.env = sp->sb.env;
  sp->c.sb.base_config = spec_template;
  sp->c.json = sp->sb.o.json;
  r = session_create (&ctx->g, &sp->c, stdout, err);
  if (sp->c.id_buf[0])
    ctx->id = sp->c.id_buf;
  return r;
}

static int
do_exec (struct cmd_ctx *ctx, int argc, char **argv, struct session_parse *sp,
         struct moat_error **err)
{
  int idx;
  int r = parse ("exec", exec_table, argc, argv, sp, &idx, err);

  if (r < 0)
    return r;
  if (idx >= argc)
    return moat_fail (err, 0, "expected ID -- CMD [ARG...]");
  ctx->id = argv[idx++];
  if (idx < argc && strcmp (argv[idx], "--") == 0)
    idx++;
  sp->x.id = ctx->id;
  sp->x.argv = idx < argc ? argv + idx : NULL;
  sp->x.env = sp->env;
  return session_exec (&ctx->g, &sp->x, &ctx->exit_status, err);
}

VERB (session)
{
  struct session_parse sp = {
    .sb = { .o = { .memory = -1,
                   .pids = -1,
                   .cpus_milli = -1,
                   .timeout_ms = -1,
                   .output_limit = -1,
                   .uid = -1,
                   .gid = -1 } },
    .c = { .idle_timeout_ms = -1, .max_lifetime_ms = -1 },
    .x = { .timeout_ms = -1, .output_limit = -1 },
    .copy = { .max_entries = SESSION_COPY_MAX_ENTRIES,
              .max_bytes = SESSION_COPY_MAX_BYTES },
  };
  /* "session exec" in errors and in the audit line. */
  static const char *const verbs[]
      = { "session create", "session exec", "session put", "session get",
          "session list",   "session rm",   NULL };
  const char *sub = argc > 1 ? argv[1] : "";
  static char id[32];
  int idx = 0, r;

  for (size_t i = 0; verbs[i]; i++)
    if (strcmp (sub, verbs[i] + strlen ("session ")) == 0)
      ctx->verb = verbs[i];
  sp.c.id_buf = id;

  if (strcmp (sub, "create") == 0)
    r = do_create (ctx, argc, argv, &sp, err);
  else if (strcmp (sub, "exec") == 0)
    r = do_exec (ctx, argc, argv, &sp, err);
  else if (strcmp (sub, "list") == 0)
    {
      r = parse ("list", list_table, argc, argv, &sp, &idx, err);
      if (r == 0)
        r = take_args (ctx, argc, argv, idx, 0, "no argument", err);
      if (r == 0)
        r = session_list (&ctx->g, sp.x.json, stdout, err);
    }
  else if (strcmp (sub, "rm") == 0)
    {
      r = parse ("rm", no_flags, argc, argv, &sp, &idx, err);
      if (r == 0)
        r = take_args (ctx, argc, argv, idx, 1, "ID", err);
      if (r == 0)
        r = session_rm (&ctx->g, ctx->id, err);
    }
  else if (strcmp (sub, "put") == 0 || strcmp (sub, "get") == 0)
    {
      bool put = sub[0] == 'p';
      r = parse (sub, copy_table, argc, argv, &sp, &idx, err);
      if (r == 0)
        r = take_args (ctx, argc, argv, idx, 3,
                       put ? "ID HOST_PATH DEST" : "ID SRC HOST_PATH", err);
      if (r == 0 && put)
        r = session_put (&ctx->g, ctx->id, argv[idx + 1], argv[idx + 2],
                         &sp.copy, err);
      else if (r == 0)
        r = session_get (&ctx->g, ctx->id, argv[idx + 1], argv[idx + 2],
                         &sp.copy, err);
    }
  else
    r = moat_fail (
        err, 0, "expected create, exec, put, get, list or rm, got '%s'", sub);
  strv_free (sp.sb.ro_binds);
  strv_free (sp.sb.env);
  strv_free (sp.env);
  return r;
}
