#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../runtime/log/log.h"
#include "cmd.h"

/* Flags runc 1.1 and crun 1.8 know that moat does not implement: an engine
 * may pass them, so they are accepted and ignored (named in the --debug
 * log). Anything else is a typo and refused. verbs: space-separated, with
 * spaces around each name; "global" for flags before the verb. */
static const struct
{
  const char *verbs;
  const char *name;
  char short_name;
  bool has_arg;
  /* Told on stderr when given: a request about the process that moat
   * does not carry out (NULL: an engine's flag with nothing to tell). */
  const char *ignored_because;
} foreign_flags[] = {
  /* global: runc's --criu, --rootless; crun's cgroup manager and log level */
  { " global ", "criu", 0, true, NULL },
  { " global ", "rootless", 0, true, NULL },
  { " global ", "cgroup-manager", 0, true, NULL },
  { " global ", "log-level", 0, true, NULL },
  /* create and run: runc's --no-subreaper, crun's --config/-f */
  { " create run ", "no-subreaper", 0, false, NULL },
  { " create run ", "config", 'f', true, NULL },
  /* exec: runc 1.1 and 1.2, crun 1.8 */
  { " exec ", "process-label", 0, true,
    "give it as selinuxLabel in --process" },
  { " exec ", "apparmor", 0, true, "moat sets no AppArmor profile" },
  { " exec ", "no-new-privs", 0, false, NULL },
  { " exec ", "cap", 'c', true,
    "the profile decides a process's capabilities" },
  { " exec ", "ignore-paused", 0, false, NULL },
  { " exec ", "pidfd-socket", 0, true, NULL },
  { " exec ", "no-subreaper", 0, false, NULL },
  /* kill and delete: crun's --regex */
  { " kill delete ", "regex", 'r', true, NULL },
  /* update: runc's knobs moat has no cgroup file for, or ignores */
  { " update ", "blkio-weight", 0, true, NULL },
  { " update ", "kernel-memory", 0, true, NULL },
  { " update ", "kernel-memory-tcp", 0, true, NULL },
  { " update ", "memory-reservation", 0, true, NULL },
  { " update ", "cpu-rt-period", 0, true, NULL },
  { " update ", "cpu-rt-runtime", 0, true, NULL },
  { " update ", "cpu-idle", 0, true, NULL },
  { " update ", "l3-cache-schema", 0, true, NULL },
  { " update ", "mem-bw-schema", 0, true, NULL },
  /* runc's restore/checkpoint live elsewhere; ps and list have nothing */
};

static bool
foreign_for (const char *verbs, const char *verb)
{
  char key[32];
  snprintf (key, sizeof (key), " %s ", verb ? verb : "global");
  return strstr (verbs, key) != NULL;
}

/* A flag runc or crun knows for this verb: *ret_has_arg says whether it
 * takes a value. */
static bool
foreign_flag (const char *verb, const char *name, size_t len, bool is_short,
              bool *ret_has_arg, const char **ret_ignored_because)
{
  for (size_t i = 0; i < sizeof (foreign_flags) / sizeof (foreign_flags[0]);
       i++)
    {
      bool match = is_short
                       ? len == 1 && foreign_flags[i].short_name == name[0]
                       : strlen (foreign_flags[i].name) == len
                             && strncmp (foreign_flags[i].name, name, len) == 0;
      if (match && foreign_for (foreign_flags[i].verbs, verb))
        {
          *ret_has_arg = foreign_flags[i].has_arg;
          *ret_ignored_because = foreign_flags[i].ignored_because;
          return true;
        }
    }
  return false;
}

static const struct cmd_opt *
find_long (const struct cmd_opt *opts, const char *name, size_t len)
{
  for (; opts && opts->name; opts++)
    if (strlen (opts->name) == len && strncmp (opts->name, name, len) == 0)
      return opts;
  return NULL;
}

static const struct cmd_opt *
find_short (const struct cmd_opt *opts, char c)
{
  for (; opts && opts->name; opts++)
    if (opts->short_name == c)
      return opts;
  return NULL;
}

bool
cmd_wants_help (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--") == 0)
        return false;
      if (strcmp (argv[i], "--help") == 0 || strcmp (argv[i], "-h") == 0)
        return true;
    }
  return false;
}

int
cmd_parse (const char *verb, int argc, char **argv, int start,
           const struct cmd_opt *opts,
           int (*cb) (void *ctx, int id, const char *val,
                      struct moat_error **err),
           void *ctx, int *ret_index, struct moat_error **err)
{
  int i;
  for (i = start; i < argc; i++)
    {
      const char *a = argv[i];
      const struct cmd_opt *o = NULL;
      const char *val = NULL;
      const char *name;
      bool is_short, has_arg;
      size_t len;
      int r;

      if (strcmp (a, "--") == 0)
        {
          i++;
          break;
        }
      if (a[0] != '-' || a[1] == '\0')
        break;
      /* Go's flag packages accept -name as well as --name. */
      name = a[1] == '-' ? a + 2 : a + 1;
      len = strcspn (name, "=");
      is_short = a[1] != '-' && len == 1;
      if (name[len] == '=')
        val = name + len + 1;
      if (is_short)
        o = find_short (opts, name[0]);
      else
        o = find_long (opts, name, len);
      if (o == NULL && a[1] != '-' && len > 1 && val == NULL
          && find_short (opts, name[0]) && find_short (opts, name[0])->has_arg)
        {
          /* -bDIR */
          o = find_short (opts, name[0]);
          val = name + 1;
        }
      if (o == NULL)
        {
          const char *because = NULL;
          if (!foreign_flag (verb, name, len, is_short, &has_arg, &because))
            return moat_fail (err, 0,
                              "unknown flag %s (moat %s%s--help lists the "
                              "flags)",
                              a, verb ? verb : "", verb ? " " : "");
          if (has_arg && val == NULL && i + 1 < argc)
            val = argv[++i];
          if (because)
            fprintf (stderr, "moat: %s: warning: --%.*s%s%s ignored (%s)\n",
                     verb ? verb : "", (int)len, name, val ? " " : "",
                     val ? val : "", because);
          log_debug ("ignoring %s, a runc/crun flag moat does not use", a);
          continue;
        }
      if (o->has_arg && val == NULL)
        {
          if (i + 1 >= argc)
            return moat_fail (err, 0, "flag %s needs a value", a);
          val = argv[++i];
        }
      else if (!o->has_arg && val != NULL)
        {
          /* --detach=true / --force=false */
          if (strcmp (val, "false") == 0)
            continue;
          val = NULL;
        }
      r = cb (ctx, o->id, val, err);
      if (r < 0)
        return r;
    }
  *ret_index = i;
  return 0;
}
