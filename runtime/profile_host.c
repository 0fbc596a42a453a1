/* The second step of the policy: what only the host's filesystem can tell.
 * profile_apply judges config.json as written; the runtime then resolves
 * each bind source (every symlink followed) and each namespace to join, and
 * hands the facts here. The verdicts land in the same override list, before
 * the audit line is written and the policy saved: a bind that reaches /usr
 * through a symlink is recorded as made read-only, a refusal as refused. */
#include "profile.h"
#include "profile_internal.h"
#include "util.h"

#include <string.h>

static bool
has_option (char *const *opts, const char *o)
{
  for (size_t i = 0; opts && opts[i]; i++)
    if (strcmp (opts[i], o) == 0)
      return true;
  return false;
}

int
profile_apply_bind_source (struct spec_mount *m, const char *resolved,
                           const struct profile *p, struct override_list *ov,
                           struct moat_error **err)
{
  cleanup_free char *path
      = xasprintf ("mounts[%s]", m->destination ? m->destination : "");

  if (profile_check_bind_source (resolved, p, err) < 0)
    {
      cleanup_free char *asked = xasprintf ("bind %s", resolved);
      override_list_add (ov, OVERRIDE_REFUSED, path, asked, "refused");
      return -1;
    }
  if (profile_bind_needs_readonly (resolved, p)
      && !has_option (m->options, "ro"))
    {
      /* A host file the profile lets in read-only (resolv.conf, /usr),
       * however the source path reached it. */
      cleanup_free char *opts_path = xasprintf ("%s.options", path);
      cleanup_free char *asked = profile_strv_join (m->options, ",");
      cleanup_free char *enforced = NULL;
      strv_append (&m->options, "ro");
      enforced = profile_strv_join (m->options, ",");
      override_list_add (ov, OVERRIDE_CHANGED, opts_path, asked, enforced);
    }
  return 0;
}

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
