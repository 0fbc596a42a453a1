/* The policy decision of one container, as create saves it (ROOT/ID/
 * policy.json): the effective profile (operator config, --profile and the
 * container's annotations, resolved once) and every override and refusal.
 * Later verbs load it as a struct decision (oci/decision.h) and obey it;
 * they never work the profile out again from config.json or from their own
 * flags, and never read the profile and the overrides back: those are the
 * record of what was judged (the fields: profile_fields.c). */
#include "profile.h"
#include "profile_internal.h"
#include "../lib/util.h"
#include "../oci/decision.h"
#include "../oci/json.h"

#include <errno.h>
#include <string.h>

void
judgement_clear (struct judgement *j)
{
  profile_free (j->values);
  override_list_clear (&j->overrides);
  *j = (struct judgement){ 0 };
}

char *
profile_policy_to_json (const struct judgement *j, const struct spec *final,
                        const struct cidr *dns, size_t n_dns,
                        const char *userns_pool_dir, bool guard_holds_lists)
{
  const struct profile *eff = j->values;
  struct json_writer *w = json_writer_new (false);
  struct process_bounds bounds = profile_process_bounds (eff);
  struct resource_bounds resources = profile_resource_bounds (eff);
  cleanup_strv char **nameservers = xcalloc (1, sizeof (char *));
  struct netguard_rules rules;
  struct decision_guard guard;

  /* The lists without the nameservers, which are saved on their own. */
  profile_netguard_rules (eff, NULL, 0, &rules);
  guard = (struct decision_guard){
    .egress = rules.egress,
    .allowlist = rules.allowlist,
    .deny = (struct cidr *)rules.deny,
    .n_deny = rules.n_deny,
    .allow = (struct cidr *)rules.allow,
    .n_allow = rules.n_allow,
    .private_nets = (struct cidr *)rules.private_nets,
    .n_private = rules.n_private,
    .held = guard_holds_lists,
  };

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
  jw_overrides (w, "overrides", &j->overrides);
  decision_write_parts (w, final, &bounds, &resources, &guard, nameservers,
                        userns_pool_dir);
  jw_object_end (w);
  return json_writer_finish (w);
}
