/* The sandbox's config.json: `moat spec`'s template, re-emitted with the
 * sandbox's process (args, env, cwd, no terminal), its root (read-only),
 * its mounts (/work, --ro-bind) and its limits. The profile then hardens
 * it like any other config. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../oci/json.h"
#include "sandbox_internal.h"
#include "../policy/verdicts.h"
#include "../runtime/seccomp/seccomp.h"
#include "../lib/util.h"

static void
clamp (int64_t *v, int64_t cap, const char *flag, const char *unit,
       struct override_list *ov)
{
  char asked[32], enforced[32];

  if (cap < 0 || *v <= cap)
    return;
  snprintf (asked, sizeof (asked), "%" PRId64, *v);
  snprintf (enforced, sizeof (enforced), "%" PRId64, cap);
  fprintf (stderr,
           "moat: sandbox: %s %s%s is above the profile's %s%s: clamped\n",
           flag, asked, unit, enforced, unit);
  override_list_add (ov, OVERRIDE_CHANGED, flag, asked, enforced);
  *v = cap;
}

void
sandbox_limits (const struct profile *p, const struct sandbox_opts *o,
                struct sandbox_limits *ret, struct override_list *ov)
{
  ret->memory = p->memory_limit > 0 ? p->memory_limit : -1;
  ret->pids = p->pids_limit > 0 ? p->pids_limit : -1;
  ret->cpu_period = p->cpu_period ? p->cpu_period : 100000;
  ret->cpu_quota = p->cpu_quota > 0 ? p->cpu_quota : -1;
  if (o->memory > 0)
    {
      int64_t v = o->memory;
      clamp (&v, ret->memory, "--memory", " bytes", ov);
      ret->memory = v;
    }
  if (o->pids > 0)
    {
      int64_t v = o->pids;
      clamp (&v, ret->pids, "--pids", "", ov);
      ret->pids = v;
    }
  if (o->cpus_milli > 0)
    {
      /* In thousandths of a CPU, then in the profile's period. */
      int64_t cap = ret->cpu_quota < 0
                        ? -1
                        : ret->cpu_quota * 1000 / (int64_t)ret->cpu_period;
      int64_t v = o->cpus_milli;
      clamp (&v, cap, "--cpus", "/1000 CPU", ov);
      ret->cpu_quota = v * (int64_t)ret->cpu_period / 1000;
      if (ret->cpu_quota < 1000)
        ret->cpu_quota = 1000; /* the kernel's minimum quota is 1 ms */
    }
}

struct emit_ctx
{
  const struct sandbox_opts *o;
  const char *rootfs;
  const struct sandbox_limits *lim;
  const struct image_config *img; /* NULL without --image */
};

/* KEY=VALUE into env, in place of an earlier KEY's: a later source wins. */
static void
env_set (char ***env, const char *kv)
{
  size_t klen = strcspn (kv, "=");

  for (size_t i = 0; *env && (*env)[i]; i++)
    if (strncmp ((*env)[i], kv, klen) == 0 && (*env)[i][klen] == '=')
      {
        free ((*env)[i]);
        (*env)[i] = xstrdup (kv);
        return;
      }
  strv_append (env, kv);
}

/* The template's (TERM left out: no terminal), a HOME the code can write
 * to (the root is read-only), the image's Env, then --env. */
static void
emit_env (struct json_writer *w, const json_node *tmpl,
          const struct emit_ctx *c)
{
  cleanup_strv char **env = NULL;

  for (size_t i = 0; i < json_array_len (tmpl); i++)
    {
      const char *e = json_string (json_array_get (tmpl, i));
      if (e && strncmp (e, "TERM=", 5) != 0)
        env_set (&env, e);
    }
  env_set (&env, "HOME=/tmp");
  for (size_t i = 0; c->img && c->img->env && c->img->env[i]; i++)
    env_set (&env, c->img->env[i]);
  for (size_t i = 0; c->o->env && c->o->env[i]; i++)
    env_set (&env, c->o->env[i]);
  jw_array_begin (w);
  for (size_t i = 0; env && env[i]; i++)
    jw_string (w, env[i]);
  jw_array_end (w);
}

static void
emit_bind (struct json_writer *w, const char *src, const char *dst, bool ro)
{
  jw_object_begin (w);
  jw_key (w, "destination");
  jw_string (w, dst);
  jw_key (w, "type");
  jw_string (w, "bind");
  jw_key (w, "source");
  jw_string (w, src);
  jw_key (w, "options");
  jw_array_begin (w);
  jw_string (w, "rbind");
  jw_string (w, ro ? "ro" : "rw");
  jw_string (w, "nosuid");
  jw_string (w, "nodev");
  jw_array_end (w);
  jw_object_end (w);
}

static void emit_node (struct json_writer *w, const json_node *n,
                       const char *path, const struct emit_ctx *c);

/* Values the sandbox sets; false: emit the template's. */
static bool
emit_edit (struct json_writer *w, const json_node *n, const char *path,
           const struct emit_ctx *c)
{
  const struct sandbox_opts *o = c->o;

  if (strcmp (path, ".process.terminal") == 0)
    jw_bool (w, false);
  else if (strcmp (path, ".process.args") == 0)
    {
      jw_array_begin (w);
      for (size_t i = 0; o->argv[i]; i++)
        jw_string (w, o->argv[i]);
      jw_array_end (w);
    }
  else if (strcmp (path, ".process.env") == 0)
    emit_env (w, n, c);
  else if (strcmp (path, ".process.user") == 0 && o->uid >= 0)
    {
      jw_object_begin (w);
      jw_key (w, "uid");
      jw_int (w, o->uid);
      jw_key (w, "gid");
      jw_int (w, o->gid >= 0 ? o->gid : o->uid);
      jw_object_end (w);
    }
  else if (strcmp (path, ".process.cwd") == 0)
    jw_string (w, o->workdir                  ? "/work"
                  : c->img && c->img->workdir ? c->img->workdir
                                              : "/");
  else if (strcmp (path, ".root.path") == 0)
    jw_string (w, c->rootfs);
  else if (strcmp (path, ".root.readonly") == 0)
    jw_bool (w, true);
  else if (strcmp (path, ".hostname") == 0)
    jw_string (w, "sandbox");
  else
    return false;
  return true;
}

/* Keys and elements the template lacks. */
static void
emit_extra (struct json_writer *w, const char *path, const struct emit_ctx *c)
{
  const struct sandbox_limits *lim = c->lim;

  /* The agent level of the built-in seccomp filter (an annotation only
   * tightens: the operator's config cannot make it looser). */
  if (strcmp (path, "") == 0)
    {
      jw_key (w, "annotations");
      jw_object_begin (w);
      jw_key (w, SECCOMP_LEVEL_ANNOTATION);
      jw_string (w, "agent");
      jw_object_end (w);
    }
  else if (strcmp (path, ".mounts") == 0)
    {
      if (c->o->workdir)
        emit_bind (w, c->o->workdir, "/work", false);
      for (size_t i = 0; c->o->ro_binds && c->o->ro_binds[i]; i += 2)
        emit_bind (w, c->o->ro_binds[i], c->o->ro_binds[i + 1], true);
    }
  else if (strcmp (path, ".linux.resources") == 0)
    {
      if (lim->memory > 0)
        {
          jw_key (w, "memory");
          jw_object_begin (w);
          jw_key (w, "limit");
          jw_int (w, lim->memory);
          jw_key (w, "swap");
          jw_int (w, lim->memory);
          jw_object_end (w);
        }
      if (lim->pids > 0)
        {
          jw_key (w, "pids");
          jw_object_begin (w);
          jw_key (w, "limit");
          jw_int (w, lim->pids);
          jw_object_end (w);
        }
      if (lim->cpu_quota > 0)
        {
          jw_key (w, "cpu");
          jw_object_begin (w);
          jw_key (w, "quota");
          jw_int (w, lim->cpu_quota);
          jw_key (w, "period");
          jw_uint (w, lim->cpu_period);
          jw_object_end (w);
        }
    }
}

static void
emit_node (struct json_writer *w, const json_node *n, const char *path,
           const struct emit_ctx *c)
{
  int64_t v;

  if (json_is_object (n))
    {
      jw_object_begin (w);
      for (size_t i = 0; i < json_object_len (n); i++)
        {
          const char *key = json_object_key (n, i);
          cleanup_free char *sub = xasprintf ("%s.%s", path, key);
          jw_key (w, key);
          if (!emit_edit (w, json_object_value (n, i), sub, c))
            emit_node (w, json_object_value (n, i), sub, c);
        }
      emit_extra (w, path, c);
      jw_object_end (w);
    }
  else if (json_is_array (n))
    {
      jw_array_begin (w);
      for (size_t i = 0; i < json_array_len (n); i++)
        emit_node (w, json_array_get (n, i), "[]", c);
      emit_extra (w, path, c);
      jw_array_end (w);
    }
  else if (json_is_string (n))
    jw_string (w, json_string (n));
  else if (json_is_bool (n))
    jw_bool (w, json_bool (n));
  else if (json_is_integer (n) && json_int64 (n, &v) == 0)
    jw_int (w, v);
  else
    jw_null (w);
}

int
sandbox_config (const struct sandbox_opts *o, const char *rootfs,
                const struct sandbox_limits *lim,
                const struct image_config *img, char **ret_json,
                struct moat_error **err)
{
  json_node *tmpl = NULL;
  struct emit_ctx c = { o, rootfs, lim, img };
  struct json_writer *w;

  if (json_parse (o->base_config, strlen (o->base_config), 1 << 20, &tmpl, err)
      < 0)
    return moat_error_wrap (err, "the spec template");
  w = json_writer_new (false);
  emit_node (w, tmpl, "", &c);
  json_free (tmpl);
  *ret_json = json_writer_finish (w);
  return 0;
}
