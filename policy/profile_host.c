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

int
profile_apply_joined_userns (const char *ns_path, const char *uid_map,
                             const char *gid_map, struct override_list *ov,
                             struct moat_error **err)
{
  cleanup_free char *asked = NULL;

  if (profile_check_joined_idmap (uid_map, "uid", err) == 0
      && profile_check_joined_idmap (gid_map, "gid", err) == 0)
    return 0;
  asked = xasprintf ("join %s", ns_path);
  override_list_add (ov, OVERRIDE_REFUSED, "linux.namespaces.user", asked,
                     "refused");
  return -1;
}

/* listenerPath comes from config.json, which moat does not trust: moat
 * writes, as host root, to whatever socket it names, and the listener's
 * holder answers the container's notified syscalls in the kernel's place
 * and can put fds of its own into the container. So the path must be one
 * the operator config lists (seccomp_agents). */
int
profile_check_seccomp_agent (const struct spec_seccomp *s,
                             const struct operator_config *cfg,
                             struct moat_error **err)
{
  cleanup_free char *norm = NULL;

  if (s->listener_path == NULL)
    return 0;
  if (s->listener_path[0] != '/')
    return moat_fail (err, 0,
                      "linux.seccomp.listenerPath %s: not an absolute path",
                      s->listener_path);
  norm = profile_path_normalize (s->listener_path);
  cfg = operator_config_or_builtin (cfg);
  for (size_t i = 0; cfg->seccomp_agents && cfg->seccomp_agents[i]; i++)
    if (strcmp (norm, cfg->seccomp_agents[i]) == 0)
      return 0;
  return moat_fail (err, 0,
                    "linux.seccomp.listenerPath %s: not a seccomp agent the "
                    "operator config lists (seccomp_agents): moat will not "
                    "hand a container's seccomp listener to a host socket "
                    "that config.json names",
                    s->listener_path);
}
