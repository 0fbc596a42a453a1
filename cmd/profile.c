#include <stdio.h>
#include <string.h>

#include "../runtime/profile.h"
#include "../runtime/util.h"
#include "cmd.h"

VERB (profile)
{
  static const struct cmd_opt opts[] = { { NULL, 0, false, 0 } };
  cleanup_free char *json = NULL;
  int idx, r;

  r = cmd_parse (argv[0], argc, argv, 1, opts, NULL, NULL, &idx, err);
  if (r < 0)
    return r;
  if (idx >= argc || strcmp (argv[idx], "show") != 0)
    return moat_fail (err, 0, "usage: moat profile show [--profile NAME]");
  /* `moat profile show --profile egress`: flags after show too. */
  for (int i = idx + 1; i < argc; i++)
    {
      const char *a = argv[i];
      if (strncmp (a, "--profile", 9) == 0 || strncmp (a, "--config", 8) == 0)
        {
          bool is_profile = strncmp (a, "--profile", 9) == 0;
          const char *val = strchr (a, '=') ? strchr (a, '=') + 1
                            : i + 1 < argc  ? argv[++i]
                                            : NULL;
          struct profile *p = NULL;
          if (val == NULL)
            return moat_fail (err, 0, "%s needs a value", a);
          if (is_profile)
            ctx->g.profile_name = val;
          else
            ctx->g.config = val;
          r = profile_load (ctx->g.config, ctx->g.profile_name, &p, err);
          if (r < 0)
            return r;
          profile_free ((struct profile *)ctx->g.profile);
          ctx->g.profile = p;
        }
    }
  r = profile_to_json (ctx->g.profile, &json, err);
  if (r == 0)
    printf ("%s\n", json);
  return r;
}
