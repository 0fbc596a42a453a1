/* The policy decision of one container, as create saves it (ROOT/ID/
 * policy.json): the effective profile (operator config, --profile and the
 * container's annotations, resolved once) and every override and refusal.
 * Later verbs read it back and obey it; they never work the profile out
 * again from config.json or from their own flags. Exact: every field of
 * struct profile is written as a number or a string, nothing is rounded
 * (the fields: profile_fields.c). */
#include "profile.h"
#include "profile_internal.h"
#include "../lib/util.h"
#include "../oci/decision.h"
#include "../oci/json.h"

#include <errno.h>
#include <string.h>

char *
profile_policy_to_json (const struct profile *eff,
                        const struct override_list *ov,
                        const struct spec *final, const struct cidr *dns,
                        size_t n_dns)
{
  struct json_writer *w = json_writer_new (false);
  struct process_bounds bounds = profile_process_bounds (eff);
  struct resource_bounds resources = profile_resource_bounds (eff);
  cleanup_strv char **nameservers = xcalloc (1, sizeof (char *));

  for (size_t i = 0; i < n_dns; i++)
    {
      cleanup_free char *text = cidr_to_string (&dns[i]);
      strv_append (&nameservers, text);
    }
  jw_object_begin (w);
  jw_key (w, "version");
  jw_int (w, DECISION_VERSION);
  jw_key (w, "profile");
  profile_write_saved (w, eff);
  jw_overrides (w, "overrides", ov);
  decision_write_parts (w, final, &bounds, &resources, nameservers,
                        eff->userns_pool_dir);
  jw_object_end (w);
  return json_writer_finish (w);
}

int
profile_policy_parse (const char *text, size_t len, struct profile **ret,
                      struct override_list *ret_ov, struct moat_error **err)
{
  cleanup_profile struct profile *p = xcalloc (1, sizeof (*p));
  struct override_list ov = { 0 };
  json_node *root = NULL;
  int64_t version;
  int r;

  r = json_parse (text, len, 1 << 22, &root, err);
  if (r < 0)
    return moat_error_wrap (err, "policy.json");
  if (!json_is_object (root) || json_get (root, "version") == NULL
      || json_int64 (json_get (root, "version"), &version) < 0
      || version != DECISION_VERSION)
    r = moat_fail (err, 0,
                   "version: expected %d (written by another moat: delete "
                   "the container and create it again)",
                   DECISION_VERSION);
  if (r == 0)
    r = profile_read_saved (json_get (root, "profile"), p, err);
  if (r == 0 && ret_ov)
    r = override_list_parse (json_get (root, "overrides"), &ov, err);
  json_free (root);
  if (r < 0)
    {
      override_list_clear (&ov);
      return moat_error_wrap (err, "policy.json");
    }
  *ret = steal_pointer (&p);
  if (ret_ov)
    *ret_ov = ov;
  return 0;
}
