#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

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
cmd_parse (int argc, char **argv, int start, const struct cmd_opt *opts,
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
      if (name[len] == '=')
        val = name + len + 1;
      if (a[1] != '-' && len == 1)
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
          fprintf (stderr, "moat: warning: ignoring unknown flag %s\n", a);
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
