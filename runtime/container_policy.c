/* A container's decision after create: every verb that acts on an existing
 * container reads what create decided (policy.json: the effective profile,
 * the overrides, the process bounds, the final spec) instead of working it
 * out again from config.json or from its own --profile/--config. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container_internal.h"
#include "../oci/decision.h"
#include "../policy/profile.h"
#include "../lib/util.h"

void
container_audit_profile (const struct moat_globals *g, const char *name)
{
  if (g->audit == NULL || name == NULL)
    return;
  free (g->audit->profile);
  g->audit->profile = xstrdup (name);
}

int
container_save_policy (int dirfd, const struct judgement *j,
                       const struct spec *final, const struct cidr *dns,
                       size_t n_dns, const char *userns_pool_dir,
                       bool guard_holds_lists, struct moat_error **err)
{
  cleanup_free char *json = profile_policy_to_json (
      j, final, dns, n_dns, userns_pool_dir, guard_holds_lists);
  int r = write_file_atomic (dirfd, "policy.json", json, strlen (json), 0600);
  if (r < 0)
    return moat_fail (err, -r, "saving policy.json");
  return 0;
}

/* policy.json's text. A state dir without one was made by a moat from
 * before the decision was saved: refused, not worked out again. */
static int
read_policy_text (int dirfd, char **ret, size_t *ret_len,
                  struct moat_error **err)
{
  int r = read_file_at (dirfd, "policy.json", JSON_MAX_SIZE, ret, ret_len);
  if (r == -ENOENT)
    return moat_fail (err, 0,
                      "no policy.json in its state dir (made by an older "
                      "moat): delete the container and create it again");
  if (r < 0)
    return moat_fail (err, -r, "reading the saved policy.json");
  return 0;
}

/* An ignored request is told, not only obeyed silently. state.json names
 * the profile create was given (before annotations): an engine passing the
 * same --profile to every verb is not told. */
static void
warn_profile_ignored (const struct moat_globals *g,
                      const struct container_state *st, const char *saved)
{
  if (g->profile_name && st->profile
      && strcmp (g->profile_name, st->profile) != 0)
    fprintf (stderr,
             "moat: warning: --profile %s ignored: container %s runs "
             "under profile %s, saved at create\n",
             g->profile_name, st->id, saved);
}

int
container_load_decision (const struct moat_globals *g, int dirfd,
                         const struct container_state *st,
                         struct decision **ret, struct moat_error **err)
{
  cleanup_free char *text = NULL;
  size_t len;
  int r;

  r = read_policy_text (dirfd, &text, &len, err);
  if (r == 0)
    r = decision_parse (text, len, ret, err);
  if (r == 0)
    warn_profile_ignored (g, st, (*ret)->profile_name);
  return r;
}
