/* A container's policy after create: every verb that acts on an existing
 * container reads what create decided (policy.json) instead of working it
 * out again from config.json or from its own --profile/--config. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container_internal.h"
#include "../policy/profile.h"
#include "../lib/util.h"

#define POLICY_MAX_SIZE (4u * 1024 * 1024)

void
container_audit_profile (const struct moat_globals *g, const char *name)
{
  if (g->audit == NULL || name == NULL)
    return;
  free (g->audit->profile);
  g->audit->profile = xstrdup (name);
}

int
container_save_policy (int dirfd, const struct profile *eff,
                       const struct override_list *ov, struct moat_error **err)
{
  cleanup_free char *json = profile_policy_to_json (eff, ov);
  int r = write_file_atomic (dirfd, "policy.json", json, strlen (json), 0600);
  if (r < 0)
    return moat_fail (err, -r, "saving policy.json");
  return 0;
}

int
container_load_policy (const struct moat_globals *g, int dirfd,
                       const struct container_state *st, struct profile **ret,
                       struct moat_error **err)
{
  cleanup_free char *text = NULL;
  cleanup_profile struct profile *base = NULL;
  size_t len;
  int r;

  r = read_file_at (dirfd, "policy.json", POLICY_MAX_SIZE, &text, &len);
  if (r == 0)
    {
      r = profile_policy_parse (text, len, ret, NULL, err);
      /* An ignored request is told, not only obeyed silently. state.json
       * names the profile create was given (before annotations): an
       * engine passing the same --profile to every verb is not told. */
      if (r == 0 && g->profile_name && st->profile
          && strcmp (g->profile_name, st->profile) != 0)
        fprintf (stderr,
                 "moat: warning: --profile %s ignored: container %s runs "
                 "under profile %s, saved at create\n",
                 g->profile_name, st->id, (*ret)->name);
      return r;
    }
  if (r != -ENOENT)
    return moat_fail (err, -r, "reading the saved policy.json");
  /* Created by a moat without policy.json: the profile it was created
   * under, by name, with today's operator config. */
  if (st->profile == NULL || strcmp (st->profile, g->profile->name) == 0)
    return profile_effective (g->profile, st->annotations, st->n_annotations,
                              ret, NULL, err);
  r = profile_load (g->config, st->profile, &base, err);
  if (r < 0)
    return moat_error_wrap (err, "the container's profile");
  return profile_effective (base, st->annotations, st->n_annotations, ret, NULL,
                            err);
}

int
container_load_spec (int dirfd, const struct profile *eff, struct spec **ret,
                     struct moat_error **err)
{
  cleanup_free char *text = NULL;
  cleanup_spec struct spec *s = NULL;
  cleanup_overrides struct override_list ov = { 0 };
  size_t len;
  int r;

  r = read_file_at (dirfd, "config.json", JSON_MAX_SIZE_CONFIG, &text, &len);
  if (r < 0)
    return moat_fail (err, -r, "reading the saved config.json");
  r = spec_parse (text, len, &s, err);
  if (r < 0)
    return r;
  /* The same pure function create ran, with the profile create saved:
   * the same hardened spec (its overrides were recorded at create). */
  r = profile_apply (s, eff, &ov, err);
  if (r < 0)
    return r;
  *ret = steal_pointer (&s);
  return 0;
}
