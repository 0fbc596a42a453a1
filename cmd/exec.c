#include <string.h>

#include "../lib/util.h"
#include "cmd.h"

enum
{
  E_PROCESS = 1,
  E_DETACH,
  E_PID_FILE,
  E_CONSOLE,
  E_TTY,
  E_CWD,
  E_ENV,
  E_USER,
  E_PRESERVE,
  E_GIDS,
  E_CGROUP
};

struct exec_parse
{
  struct exec_opts o;
  char **env;
  uint32_t *gids;
  char **cgroup_subs;
};

static int
exec_cb (void *p, int id, const char *val, struct moat_error **err)
{
  struct exec_parse *e = p;
  switch (id)
    {
    case E_PROCESS:
      e->o.process_file = val;
      break;
    case E_DETACH:
      e->o.detach = true;
      break;
    case E_PID_FILE:
      e->o.pid_file = val;
      break;
    case E_CONSOLE:
      e->o.console_socket = val;
      break;
    case E_TTY:
      e->o.tty = true;
      break;
    case E_CWD:
      e->o.cwd = val;
      break;
    case E_ENV:
      if (strchr (val, '=') == NULL)
        return moat_fail (err, 0, "--env: expected KEY=VALUE, got %s", val);
      strv_append (&e->env, val);
      break;
    case E_USER:
      e->o.user = val;
      break;
    case E_CGROUP:
      strv_append (&e->cgroup_subs, val);
      break;
    case E_PRESERVE:
      if (parse_int (val, &e->o.preserve_fds) < 0 || e->o.preserve_fds < 0
          || e->o.preserve_fds > 1024)
        return moat_fail (err, 0, "--preserve-fds: expected 0..1024");
      break;
    case E_GIDS:
      {
        /* -g 10 -g 20, or -g 10,20 */
        cleanup_free char *copy = xstrdup (val);
        char *save = NULL;
        for (char *t = strtok_r (copy, ",", &save); t;
             t = strtok_r (NULL, ",", &save))
          {
            uint64_t gid;
            if (parse_uint64 (t, &gid) < 0 || gid >= UINT32_MAX
                || e->o.n_additional_gids >= 64)
              return moat_fail (err, 0,
                                "--additional-gids: expected group ids, "
                                "got %s",
                                val);
            e->gids = xrealloc (e->gids, (e->o.n_additional_gids + 1)
                                             * sizeof (*e->gids));
            e->gids[e->o.n_additional_gids++] = (uint32_t)gid;
          }
      }
      break;
    }
  return 0;
}

VERB (exec)
{
  static const struct cmd_opt opts[]
      = { { "process", 'p', true, E_PROCESS },
          { "detach", 'd', false, E_DETACH },
          { "pid-file", 0, true, E_PID_FILE },
          { "console-socket", 0, true, E_CONSOLE },
          { "tty", 't', false, E_TTY },
          { "cwd", 0, true, E_CWD },
          { "env", 'e', true, E_ENV },
          { "user", 'u', true, E_USER },
          { "preserve-fds", 0, true, E_PRESERVE },
          { "additional-gids", 'g', true, E_GIDS },
          { "cgroup", 0, true, E_CGROUP },
          { NULL, 0, false, 0 } };
  cleanup_strv char **env = NULL;
  cleanup_strv char **cgroup_subs = NULL;
  cleanup_free uint32_t *gids = NULL;
  struct exec_parse e = { 0 };
  int idx, r;

  r = cmd_parse (argv[0], argc, argv, 1, opts, exec_cb, &e, &idx, err);
  env = e.env;
  gids = e.gids;
  cgroup_subs = e.cgroup_subs;
  if (r < 0)
    return r;
  r = cmd_take_id (ctx, argc, argv, idx, err);
  if (r < 0)
    return r;
  e.o.id = ctx->id;
  e.o.env = env;
  e.o.additional_gids = gids;
  e.o.cgroup_subs = cgroup_subs;
  e.o.argv = argv + idx + 1;
  if (e.o.process_file == NULL && idx + 1 >= argc)
    return moat_fail (err, 0, "no command given (and no --process)");
  r = container_exec (&ctx->g, &e.o, &ctx->exit_status, err);
  if (r < 0)
    ctx->exit_status = 255;
  return r;
}
