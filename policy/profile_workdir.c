/* G5 for `moat sandbox` and `session create --workdir`: the one host tree
 * a sandbox may write and execute in. Judged on what the directory is,
 * never on the operator config's other keys (only writable_bind_trees
 * widens it), so that one request gets one answer on every host. */
#include "profile.h"
#include "profile_internal.h"
#include "../lib/util.h"

#include <string.h>
#include <sys/stat.h>

/* Below G5's refusals and the host's program trees, which the bind rules
 * have already: trees of the system's services and state, where a
 * writable, executable bind is a way into the host (a crontab in
 * /var/spool, a unit in /var/lib/systemd, a web root in /srv). /var/tmp is
 * a scratch tree, as /tmp is. */
static const char *const service_trees[] = { "/srv", "/var", NULL };
static const char *const scratch_trees[] = { "/var/tmp", NULL };
/* The parents of other users' directories: a writable /home renames
 * theirs away. Their subtrees are anyone's. */
static const char *const shared_parents[]
    = { "/home", "/mnt", "/media", "/tmp", "/var/tmp", NULL };

static bool
in_any (const char *path, const char *const *trees)
{
  for (size_t i = 0; trees[i]; i++)
    if (profile_path_in_tree (path, trees[i]))
      return true;
  return false;
}

/* Is path tree, beneath it, or (with above) a parent of it? */
static bool
meets (const char *path, const char *tree, bool above)
{
  cleanup_free char *t = NULL;

  if (tree == NULL || tree[0] != '/')
    return false;
  t = profile_path_normalize (tree);
  return profile_path_in_tree (t, path)
         || (above && profile_path_in_tree (path, t));
}

/* moat's state and image cache, and the audit log's directory: the
 * payload would edit the records of other containers, the images they
 * run, what it did. */
static bool
holds_moat_state (const char *path, const struct workdir_facts *f,
                  const struct operator_config *cfg)
{
  cleanup_free char *log_dir = NULL;

  if (meets (path, f->state_root, true) || meets (path, f->image_cache, true)
      || meets (path, cfg->image_cache, true))
    return true;
  if (cfg->audit_log == NULL || cfg->audit_log[0] != '/')
    return false;
  log_dir = profile_path_normalize (cfg->audit_log);
  *strrchr (log_dir, '/') = '\0';
  return log_dir[0] != '\0' && meets (path, log_dir, false);
}

const char *
profile_workdir_refusal (const struct workdir_facts *f,
                         const struct operator_config *cfg)
{
  cleanup_free char *path = profile_path_normalize (f->path);
  enum bind_class c;

  cfg = operator_config_or_builtin (cfg);
  if (strcmp (path, "/") == 0)
    return "the host's root";
  if (holds_moat_state (path, f, cfg))
    return "moat's own state, audit log or image cache";
  c = profile_classify_bind_source (path, NULL, NULL, cfg);
  if (c == BIND_REFUSED)
    return "a system tree G5 refuses to bind";
  if (c == BIND_HOST_PROGRAMS)
    return "a system tree (the host's programs)";
  if (c == BIND_WRITABLE)
    return NULL; /* writable_bind_trees: the operator's word */
  if (in_any (path, service_trees) && !in_any (path, scratch_trees))
    return "a system tree (the host's services and state)";
  for (size_t i = 0; shared_parents[i]; i++)
    if (strcmp (path, shared_parents[i]) == 0)
      return "the parent of other users' directories";
  if (f->mode & S_IWOTH)
    return "writable by every user";
  if (f->owner != f->caller)
    return "not the caller's (its owner is another user)";
  return NULL;
}
