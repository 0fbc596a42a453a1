/* Verbs that take only an ID (and a flag or two). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/util.h"
#include "cmd.h"

static int
bool_cb (void *p, int id, const char *val, struct moat_error **err)
{
  ((bool *) p)[id] = true;
  return 0;
}

/* Parse boolean flags into flags[id] and take the ID. */
static int
parse_id_and_bools (struct cmd_ctx *ctx, int argc, char **argv,
                    const struct cmd_opt *opts, bool *flags, int *ret_idx,
                    struct moat_error **err)
{
  int idx, r;
  r = cmd_parse (argc, argv, 1, opts, bool_cb, flags, &idx, err);
  if (r < 0)
    return r;
  r = cmd_take_id (ctx, argc, argv, idx, err);
  if (r < 0)
    return r;
  if (ret_idx)
    *ret_idx = idx + 1;
  return 0;
}

VERB (start)
{
  int r = parse_id_and_bools (ctx, argc, argv, NULL, NULL, NULL, err);
  return r < 0 ? r : container_start (&ctx->g, ctx->id, err);
}

VERB (state)
{
  cleanup_free char *json = NULL;
  int r = parse_id_and_bools (ctx, argc, argv, NULL, NULL, NULL, err);
  if (r < 0)
    return r;
  r = container_state (&ctx->g, ctx->id, &json, err);
  if (r == 0)
    printf ("%s\n", json);
  return r;
}

VERB (kill)
{
  static const struct cmd_opt opts[]
      = { { "all", 'a', false, 1 }, { NULL, 0, false, 0 } };
  bool flags[2] = { false, false };
  int sig = 15, idx, r;

  r = parse_id_and_bools (ctx, argc, argv, opts, flags, &idx, err);
  if (r < 0)
    return r;
  /* Flags may also follow the id (kill ID 9 --all is not runc's form, but
   * "kill --all ID 9" and "kill ID KILL" are). */
  if (idx < argc)
    {
      if (signal_parse (argv[idx], &sig) < 0)
        return moat_fail (err, 0, "invalid signal %s", argv[idx]);
      if (idx + 1 < argc)
        return moat_fail (err, 0, "unexpected argument %s", argv[idx + 1]);
    }
  return container_kill (&ctx->g, ctx->id, sig, flags[1], err);
}

VERB (delete)
{
  static const struct cmd_opt opts[]
      = { { "force", 'f', false, 1 }, { NULL, 0, false, 0 } };
  bool flags[2] = { false, false };
  int r = parse_id_and_bools (ctx, argc, argv, opts, flags, NULL, err);
  return r < 0 ? r : container_delete (&ctx->g, ctx->id, flags[1], err);
}

VERB (pause)
{
  int r = parse_id_and_bools (ctx, argc, argv, NULL, NULL, NULL, err);
  return r < 0 ? r : container_pause (&ctx->g, ctx->id, true, err);
}

VERB (resume)
{
  int r = parse_id_and_bools (ctx, argc, argv, NULL, NULL, NULL, err);
  return r < 0 ? r : container_pause (&ctx->g, ctx->id, false, err);
}

struct format_opts
{
  bool json, quiet, stats;
  int interval;
};

static int
format_cb (void *p, int id, const char *val, struct moat_error **err)
{
  struct format_opts *f = p;
  switch (id)
    {
    case 1:
      if (strcmp (val, "json") == 0)
        f->json = true;
      else if (strcmp (val, "table") != 0)
        return moat_fail (err, 0, "--format: expected table or json");
      break;
    case 2:
      f->quiet = true;
      break;
    case 3:
      f->stats = true;
      break;
    case 4:
      if (parse_int (val, &f->interval) < 0 || f->interval <= 0)
        {
          /* runc takes a Go duration ("5s"). */
          size_t n = strlen (val);
          cleanup_free char *num = xstrdup (val);
          if (n > 1 && val[n - 1] == 's')
            num[n - 1] = '\0';
          if (parse_int (num, &f->interval) < 0 || f->interval <= 0)
            return moat_fail (err, 0, "--interval: expected seconds");
        }
      break;
    }
  return 0;
}

static const struct cmd_opt format_opts_table[]
    = { { "format", 'f', true, 1 }, { "quiet", 'q', false, 2 },
        { "stats", 0, false, 3 },   { "interval", 0, true, 4 },
        { NULL, 0, false, 0 } };

VERB (list)
{
  struct format_opts f = { 0 };
  int idx;
  int r = cmd_parse (argc, argv, 1, format_opts_table, format_cb, &f, &idx,
                     err);
  if (r < 0)
    return r;
  return container_list (&ctx->g, f.json, stdout, err);
}

VERB (ps)
{
  struct format_opts f = { 0 };
  int idx;
  int r = cmd_parse (argc, argv, 1, format_opts_table, format_cb, &f, &idx,
                     err);
  if (r < 0)
    return r;
  r = cmd_take_id (ctx, argc, argv, idx, err);
  return r < 0 ? r : container_ps (&ctx->g, ctx->id, f.json, stdout, err);
}

VERB (events)
{
  struct format_opts f = { .interval = 5 };
  int idx;
  int r = cmd_parse (argc, argv, 1, format_opts_table, format_cb, &f, &idx,
                     err);
  if (r < 0)
    return r;
  r = cmd_take_id (ctx, argc, argv, idx, err);
  return r < 0 ? r
               : container_events (&ctx->g, ctx->id, f.stats, f.interval,
                                   stdout, err);
}
