#include <string.h>

#include "../lib/util.h"
#include "cmd.h"

enum
{
  O_BUNDLE = 1,
  O_PID_FILE,
  O_CONSOLE,
  O_NO_PIVOT,
  O_NO_KEYRING,
  O_PRESERVE,
  O_DETACH,
  O_KEEP
};

static const struct cmd_opt create_opts_table[]
    = { { "bundle", 'b', true, O_BUNDLE },
        { "pid-file", 0, true, O_PID_FILE },
        { "console-socket", 0, true, O_CONSOLE },
        { "no-pivot", 0, false, O_NO_PIVOT },
        { "no-new-keyring", 0, false, O_NO_KEYRING },
        { "preserve-fds", 0, true, O_PRESERVE },
        { "detach", 'd', false, O_DETACH },
        { "keep", 0, false, O_KEEP },
        { NULL, 0, false, 0 } };

static int
create_opt_cb (void *p, int id, const char *val, struct moat_error **err)
{
  struct create_opts *o = p;
  switch (id)
    {
    case O_BUNDLE:
      o->bundle = val;
      break;
    case O_PID_FILE:
      o->pid_file = val;
      break;
    case O_CONSOLE:
      o->console_socket = val;
      break;
    case O_NO_PIVOT:
      o->no_pivot = true;
      break;
    case O_NO_KEYRING:
      o->no_new_keyring = true;
      break;
    case O_PRESERVE:
      if (parse_int (val, &o->preserve_fds) < 0 || o->preserve_fds < 0
          || o->preserve_fds > 1024)
        return moat_fail (err, 0, "--preserve-fds: expected 0..1024, got %s",
                          val);
      break;
    case O_DETACH:
      o->detach = true;
      break;
    case O_KEEP:
      o->keep = true;
      break;
    }
  return 0;
}

/* ID is the one positional argument. */
int
cmd_take_id (struct cmd_ctx *ctx, int argc, char **argv, int idx,
             struct moat_error **err)
{
  if (idx >= argc)
    return moat_fail (err, 0, "missing container id (moat %s --help)",
                      ctx->verb);
  ctx->id = argv[idx];
  return container_id_check (ctx->id, err);
}

/* create and run share their flags and the ID. */
static int
parse_create (struct cmd_ctx *ctx, int argc, char **argv, struct create_opts *o,
              int *ret_idx, struct moat_error **err)
{
  int r = cmd_parse (argv[0], argc, argv, 1, create_opts_table, create_opt_cb,
                     o, ret_idx, err);
  if (r < 0)
    return r;
  r = cmd_take_id (ctx, argc, argv, *ret_idx, err);
  if (r < 0)
    return r;
  o->id = ctx->id;
  return 0;
}

VERB (create)
{
  struct create_opts o = { 0 };
  int idx;
  int r = parse_create (ctx, argc, argv, &o, &idx, err);

  if (r < 0)
    return r;
  if (idx + 1 < argc)
    return moat_fail (err, 0, "unexpected argument %s", argv[idx + 1]);
  r = container_create (&ctx->g, &o, err);
  if (r == 0)
    container_debug_report (&ctx->g, o.id);
  return r;
}

VERB (run)
{
  struct create_opts o = { 0 };
  int idx;
  int r = parse_create (ctx, argc, argv, &o, &idx, err);

  if (r < 0)
    return r;
  return container_run (&ctx->g, &o, &ctx->exit_status, err);
}
