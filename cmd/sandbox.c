/* moat sandbox [OPTIONS] -- CMD [ARG...]: flags into sandbox_opts. Unlike
 * the engine-facing verbs, an unknown flag is an error here: a mistyped
 * --timeout must not run untrusted code without one. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "../policy/profile.h"
#include "../app/sandbox.h"
#include "../lib/util.h"
#include "cmd.h"
#include "sandbox_flags.h"

enum
{
  S_ROOTFS = 1,
  S_IMAGE,
  S_WORKDIR,
  S_RO_BIND,
  S_ENV,
  S_STDIN,
  S_TIMEOUT,
  S_OUTPUT_LIMIT,
  S_MEMORY,
  S_PIDS,
  S_CPUS,
  S_RESULT,
  S_JSON,
  S_USER,
  S_HOST_USR,
  S_STDERR_FD,
  S_LIST_CACHE,
  S_PRUNE_CACHE,
  S_ALL_OVERRIDES,
};

const struct cmd_opt sandbox_opts_table[]
    = { { "rootfs", 0, true, S_ROOTFS },
        { "image", 0, true, S_IMAGE },
        { "host-usr", 0, false, S_HOST_USR },
        { "workdir", 'w', true, S_WORKDIR },
        { "ro-bind", 0, true, S_RO_BIND },
        { "env", 'e', true, S_ENV },
        { "stdin", 0, true, S_STDIN },
        { "timeout", 't', true, S_TIMEOUT },
        { "output-limit", 0, true, S_OUTPUT_LIMIT },
        { "memory", 'm', true, S_MEMORY },
        { "pids", 0, true, S_PIDS },
        { "cpus", 0, true, S_CPUS },
        { "result", 0, true, S_RESULT },
        { "json", 0, false, S_JSON },
        { "all-overrides", 0, false, S_ALL_OVERRIDES },
        { "user", 'u', true, S_USER },
        { "stderr-fd", 0, true, S_STDERR_FD },
        { "list-cache", 0, false, S_LIST_CACHE },
        { "prune-cache", 0, false, S_PRUNE_CACHE },
        { NULL, 0, false, 0 } };

static int
parse_positive_size (const char *flag, const char *val, int64_t *ret,
                     struct moat_error **err)
{
  uint64_t v;
  if (parse_byte_size (val, &v) < 0 || v == 0 || v > INT64_MAX)
    return moat_fail (err, 0, "%s: expected a size such as 64m or 1G, got %s",
                      flag, val);
  *ret = (int64_t)v;
  return 0;
}

int
sandbox_cb (void *p, int id, const char *val, struct moat_error **err)
{
  struct sandbox_parse *sp = p;
  struct sandbox_opts *o = &sp->o;
  int64_t v;
  char *end;
  double d;

  switch (id)
    {
    case S_ROOTFS:
      o->rootfs = val;
      break;
    case S_IMAGE:
      o->image = val;
      break;
    case S_HOST_USR:
      o->host_usr = true;
      break;
    case S_WORKDIR:
      o->workdir = val;
      break;
    case S_RO_BIND:
      strv_append (&sp->ro_binds, val);
      break;
    case S_ENV:
      if (strchr (val, '=') == NULL || val[0] == '=')
        return moat_fail (err, 0, "--env: expected K=V, got %s", val);
      strv_append (&sp->env, val);
      break;
    case S_STDIN:
      o->stdin_file = val;
      break;
    case S_TIMEOUT:
      if (sandbox_parse_duration (val, &o->timeout_ms) < 0)
        return moat_fail (err, 0,
                          "--timeout: expected a duration such as 10s, "
                          "500ms or 2m, got %s",
                          val);
      break;
    case S_OUTPUT_LIMIT:
      if (parse_byte_size (val, (uint64_t *)&v) < 0 || v < 0)
        return moat_fail (err, 0,
                          "--output-limit: expected a size such as "
                          "1m, got %s",
                          val);
      o->output_limit = v;
      break;
    case S_MEMORY:
      return parse_positive_size ("--memory", val, &o->memory, err);
    case S_PIDS:
      if (parse_int64 (val, &o->pids) < 0 || o->pids <= 0)
        return moat_fail (err, 0, "--pids: expected a positive number, got %s",
                          val);
      break;
    case S_CPUS:
      errno = 0;
      d = strtod (val, &end);
      if (errno || end == val || *end || !(d >= 0.001) || d > 1e6)
        return moat_fail (err, 0,
                          "--cpus: expected a number such as 0.5, "
                          "got %s",
                          val);
      o->cpus_milli = (int64_t)(d * 1000 + 0.5);
      break;
    case S_STDERR_FD:
      return sandbox_parse_stderr_fd (val, &o->stderr_fd, err);
    case S_USER:
      return sandbox_parse_user (val, &o->uid, &o->gid, err);
    case S_RESULT:
      o->result_file = val;
      break;
    case S_JSON:
      o->json = true;
      break;
    case S_ALL_OVERRIDES:
      o->all_overrides = true;
      break;
    case S_LIST_CACHE:
    case S_PRUNE_CACHE:
      sp->cache_verb = id;
      break;
    }
  return 0;
}

int
sandbox_parse_stderr_fd (const char *val, int *ret, struct moat_error **err)
{
  int fd;

  if (parse_int (val, &fd) < 0 || fd < 3 || fcntl (fd, F_GETFL) < 0)
    return moat_fail (err, 0,
                      "--stderr-fd: expected an open fd above 2, got %s", val);
  fcntl (fd, F_SETFD, FD_CLOEXEC);
  *ret = fd;
  return 0;
}

int
sandbox_parse_user (const char *val, int64_t *ret_uid, int64_t *ret_gid,
                    struct moat_error **err)
{
  cleanup_free char *copy = xstrdup (val);
  char *colon = strchr (copy, ':');
  uint64_t uid, gid = 0;

  if (colon)
    *colon = '\0';
  if (parse_uint64 (copy, &uid) < 0 || uid > 65535
      || (colon && (parse_uint64 (colon + 1, &gid) < 0 || gid > 65535)))
    return moat_fail (err, 0,
                      "--user: expected UID[:GID] (0-65535, the container's "
                      "ids), got %s",
                      val);
  *ret_uid = (int64_t)uid;
  *ret_gid = colon ? (int64_t)gid : -1;
  return 0;
}

/* cmd_parse warns on unknown flags; a sandbox refuses them. */
int
sandbox_check_flags (const struct cmd_opt *table, const char *verb, int argc,
                     char **argv, struct moat_error **err)
{
  for (int i = 1; i < argc && strcmp (argv[i], "--") != 0; i++)
    {
      const char *a = argv[i];
      const char *name = a + (a[1] == '-' ? 2 : 1);
      size_t len = strcspn (name, "=");
      const struct cmd_opt *hit = NULL;
      if (a[0] != '-' || a[1] == '\0')
        break;
      for (const struct cmd_opt *t = table; t->name; t++)
        if ((strlen (t->name) == len && strncmp (t->name, name, len) == 0)
            || (a[1] != '-' && len == 1 && t->short_name == name[0]))
          hit = t;
      if (hit == NULL)
        return moat_fail (err, 0, "unknown flag %s (moat %s --help)", a, verb);
      if (hit->has_arg && name[len] != '=')
        i++;
    }
  return 0;
}

VERB (sandbox)
{
  struct sandbox_parse sp = { .o = { .memory = -1,
                                     .pids = -1,
                                     .cpus_milli = -1,
                                     .timeout_ms = -1,
                                     .output_limit = -1,
                                     .uid = -1,
                                     .gid = -1 } };
  static char id[32];
  int idx, r;

  r = sandbox_check_flags (sandbox_opts_table, "sandbox", argc, argv, err);
  if (r == 0)
    r = cmd_parse (argv[0], argc, argv, 1, sandbox_opts_table, sandbox_cb, &sp,
                   &idx, err);
  if (r == 0 && sp.cache_verb)
    {
      if (idx < argc)
        r = moat_fail (err, 0, "unexpected argument %s", argv[idx]);
      else if (sp.cache_verb == S_LIST_CACHE)
        r = sandbox_cache_list (&ctx->g, stdout, err);
      else
        r = sandbox_cache_prune (&ctx->g, stdout, err);
    }
  else if (r == 0)
    {
      sp.o.ro_binds = sp.ro_binds;
      sp.o.env = sp.env;
      sp.o.argv = idx < argc ? argv + idx : NULL;
      sp.o.base_config = spec_template;
      sp.o.id_buf = id;
      r = sandbox_run (&ctx->g, &sp.o, &ctx->exit_status, err);
      if (id[0])
        ctx->id = id;
    }
  strv_free (sp.ro_binds);
  strv_free (sp.env);
  return r;
}
