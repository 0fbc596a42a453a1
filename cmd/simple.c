/* Verbs that take only an ID (and a flag or two). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../oci/duration.h"
#include "../lib/util.h"
#include "cmd.h"

static int
bool_cb (void *p, int id, const char *val, struct moat_error **err)
{
  ((bool *)p)[id] = true;
  return 0;
}

/* Parse boolean flags into flags[id] and take the ID. */
static int
parse_id_and_bools (struct cmd_ctx *ctx, int argc, char **argv,
                    const struct cmd_opt *opts, bool *flags, int *ret_idx,
                    struct moat_error **err)
{
  int idx, r;
  r = cmd_parse (argv[0], argc, argv, 1, opts, bool_cb, flags, &idx, err);
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
      /* Signal 0, as runc's: only whether the init is alive. */
      if (strcmp (argv[idx], "0") == 0)
        sig = 0;
      else if (signal_parse (argv[idx], &sig) < 0)
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
  uint64_t interval_ms;
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
      {
        /* runc takes a Go duration ("5s", "100ms"); a bare number is
         * seconds, as moat took before. */
        uint64_t ns, secs;
        if (parse_uint64 (val, &secs) == 0 && secs > 0 && secs < 1000000)
          ns = secs * 1000000000ULL;
        else if (go_duration_parse (val, &ns) < 0)
          return moat_fail (err, 0,
                            "--interval: expected a duration (5s, "
                            "100ms), got %s",
                            val);
        if (ns < 1000000)
          return moat_fail (err, 0, "--interval: at least 1ms, got %s", val);
        f->interval_ms = ns / 1000000;
      }
      break;
    }
  return 0;
}

static const struct cmd_opt format_opts_table[] = { { "format", 'f', true, 1 },
                                                    { "quiet", 'q', false, 2 },
                                                    { "stats", 0, false, 3 },
                                                    { "interval", 0, true, 4 },
                                                    { NULL, 0, false, 0 } };

VERB (list)
{
  struct format_opts f = { 0 };
  int idx;
  int r = cmd_parse (argv[0], argc, argv, 1, format_opts_table, format_cb, &f,
                     &idx, err);
  if (r < 0)
    return r;
  if (idx < argc)
    return moat_fail (err, 0, "unexpected argument %s", argv[idx]);
  return container_list (&ctx->g,
                         f.quiet  ? LIST_QUIET
                         : f.json ? LIST_JSON
                                  : LIST_TABLE,
                         stdout, err);
}

/* ps [--format F] ID [--] [PS-ARGS...]: runc passes what follows the id to
 * ps(1) and keeps the container's lines. */
VERB (ps)
{
  struct format_opts f = { 0 };
  char **ps_args;
  int idx;
  int r = cmd_parse (argv[0], argc, argv, 1, format_opts_table, format_cb, &f,
                     &idx, err);
  if (r < 0)
    return r;
  r = cmd_take_id (ctx, argc, argv, idx, err);
  if (r < 0)
    return r;
  ps_args = argv + idx + 1;
  if (*ps_args && strcmp (*ps_args, "--") == 0)
    ps_args++;
  if (*ps_args && f.json)
    return moat_fail (err, 0, "ps arguments do not go with --format json");
  return container_ps (&ctx->g, ctx->id, f.json, ps_args, stdout, err);
}

VERB (events)
{
  struct format_opts f = { .interval_ms = 5000 };
  int idx;
  int r = cmd_parse (argv[0], argc, argv, 1, format_opts_table, format_cb, &f,
                     &idx, err);
  if (r < 0)
    return r;
  r = cmd_take_id (ctx, argc, argv, idx, err);
  return r < 0 ? r
               : container_events (&ctx->g, ctx->id, f.stats, f.interval_ms,
                                   stdout, err);
}
