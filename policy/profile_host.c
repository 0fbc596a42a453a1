/* The second step of the policy: what only the host's filesystem can tell.
 * profile_apply judges config.json as written; the runtime then resolves
 * each namespace to join (here) and each bind source (every symlink
 * followed: profile_harden_bind in profile_mounts.c), and the verdicts land
 * in the same override list, before the audit line is written and the
 * policy saved: a bind that reaches /usr through a symlink is recorded as
 * made read-only, a refusal as refused. */
#include "profile.h"
#include "profile_internal.h"
#include "../lib/util.h"

#include <string.h>

int
profile_apply_ns_join (enum ns_type type, const char *ns_path, dev_t dev,
                       ino_t ino, dev_t host_dev, ino_t host_ino,
                       const struct profile *p, struct override_list *ov,
                       struct moat_error **err)
{
  cleanup_free char *path = NULL;
  cleanup_free char *asked = NULL;

  if (profile_check_ns_join (type, dev, ino, host_dev, host_ino, p, err) == 0)
    return 0;
  path = xasprintf ("linux.namespaces.%s", ns_type_name (type));
  asked = xasprintf ("join %s (the host's)", ns_path);
  override_list_add (ov, OVERRIDE_REFUSED, path, asked, "refused");
  return -1;
}
