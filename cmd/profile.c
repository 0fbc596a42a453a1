#include <stdio.h>
#include <string.h>

#include "../runtime/container.h"
#include "../policy/profile.h"
#include "../runtime/seccomp/seccomp.h"
#include "../lib/util.h"
#include "cmd.h"

#define PROFILE_USAGE                                                          \
  "usage: moat profile show [--profile NAME]\n"                                \
  "       moat profile explain -b BUNDLE [--profile NAME]"

VERB (profile)
{
  static const struct cmd_opt opts[] = { { NULL, 0, false, 0 } };
  cleanup_free char *json = NULL;
  const char *end;
  const char *bundle = NULL;
  bool explain;
  int idx, r;

  r = cmd_parse (argv[0], argc, argv, 1, opts, NULL, NULL, &idx, err);
  if (r < 0)
    return r;
  if (idx >= argc
      || (strcmp (argv[idx], "show") != 0 && strcmp (argv[idx], "explain")))
    return moat_fail (err, 0, PROFILE_USAGE);
  explain = strcmp (argv[idx], "explain") == 0;
  /* `moat profile show --profile egress`: flags after show too. */
  for (int i = idx + 1; i < argc; i++)
    {
      const char *a = argv[i];
      bool is_profile = strncmp (a, "--profile", 9) == 0;
      bool is_config = strncmp (a, "--config", 8) == 0;
      bool is_bundle
          = explain
            && (strcmp (a, "-b") == 0 || strncmp (a, "--bundle", 8) == 0);
      const char *val;
      struct profile *p = NULL;
      struct operator_config *config = NULL;

      if (!is_profile && !is_config && !is_bundle)
        return moat_fail (err, 0, "unexpected argument %s\n%s", a,
                          PROFILE_USAGE);
      val = strchr (a, '=') ? strchr (a, '=') + 1
            : i + 1 < argc  ? argv[++i]
                            : NULL;
      if (val == NULL)
        return moat_fail (err, 0, "%s needs a value", a);
      if (is_bundle)
        {
          bundle = val;
          continue;
        }
      if (is_profile)
        ctx->g.profile_name = val;
      else
        ctx->g.config = val;
      r = profile_load (ctx->g.config, ctx->g.profile_name, &p, &config, err);
      if (r < 0)
        return r;
      profile_free ((struct profile *)ctx->g.profile);
      operator_config_free ((struct operator_config *)ctx->g.operator_config);
      ctx->g.profile = p;
      ctx->g.operator_config = config;
    }
  if (explain)
    {
      if (bundle == NULL)
        return moat_fail (err, 0, "explain needs -b BUNDLE");
      return container_explain (&ctx->g, bundle, stdout, err);
    }
  r = profile_to_json (ctx->g.profile, ctx->g.operator_config, &json, err);
  /* How many syscalls each level of the built-in filter lets through: a
   * key of the runtime's, added to the policy's object. */
  end = r == 0 ? strrchr (json, '}') : NULL;
  while (end && end > json && (end[-1] == '\n' || end[-1] == ' '))
    end--;
  if (end)
    printf ("%.*s,\n  \"seccomp_levels\": {\"default\": %zu, \"agent\": "
            "%zu}\n}\n",
            (int)(end - json), json,
            seccomp_level_count (SECCOMP_LEVEL_DEFAULT),
            seccomp_level_count (SECCOMP_LEVEL_AGENT));
  return r;
}
