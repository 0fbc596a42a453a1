/* config.json into struct spec: the top level, process, mounts, hooks and
 * annotations (linux.* is in config_linux.c). Types are strict and every
 * error names the JSON path; unknown members are ignored, as the runtime
 * spec asks. */
#include "spec.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/resource.h>

#include "../lib/util.h"
#include "config_fields.h"
#include "json.h"

static void
spec_freep (struct spec **s)
{
  spec_free (*s);
}
#define cleanup_spec __attribute__ ((cleanup (spec_freep)))

static void
spec_process_freep (struct spec_process **p)
{
  spec_process_free (*p);
}
#define cleanup_spec_process __attribute__ ((cleanup (spec_process_freep)))

static void
json_freep (json_node **n)
{
  json_free (*n);
}
#define cleanup_json __attribute__ ((cleanup (json_freep)))

const struct ns_info ns_table[NS__MAX] = {
  [NS_MOUNT] = { "mount", "mnt", CLONE_NEWNS },
  [NS_PID] = { "pid", "pid", CLONE_NEWPID },
  [NS_NET] = { "network", "net", CLONE_NEWNET },
  [NS_IPC] = { "ipc", "ipc", CLONE_NEWIPC },
  [NS_UTS] = { "uts", "uts", CLONE_NEWUTS },
  [NS_USER] = { "user", "user", CLONE_NEWUSER },
  [NS_CGROUP] = { "cgroup", "cgroup", CLONE_NEWCGROUP },
  [NS_TIME] = { "time", "time", CLONE_NEWTIME },
};

const char *
ns_type_name (enum ns_type t)
{
  if ((unsigned)t >= NS__MAX)
    return NULL;
  return ns_table[t].config_name;
}

int
ns_type_from_name (const char *name)
{
  for (int t = 0; name && t < NS__MAX; t++)
    if (strcmp (ns_table[t].config_name, name) == 0)
      return t;
  return -1;
}

static const char *const hook_names[HOOK__MAX] = {
  [HOOK_PRESTART] = "prestart",
  [HOOK_CREATE_RUNTIME] = "createRuntime",
  [HOOK_CREATE_CONTAINER] = "createContainer",
  [HOOK_START_CONTAINER] = "startContainer",
  [HOOK_POSTSTART] = "poststart",
  [HOOK_POSTSTOP] = "poststop",
};

const char *
hook_kind_name (enum hook_kind k)
{
  if ((unsigned)k >= HOOK__MAX)
    return NULL;
  return hook_names[k];
}

static const struct
{
  const char *name;
  int resource;
} rlimits[] = {
  { "RLIMIT_AS", RLIMIT_AS },
  { "RLIMIT_CORE", RLIMIT_CORE },
  { "RLIMIT_CPU", RLIMIT_CPU },
  { "RLIMIT_DATA", RLIMIT_DATA },
  { "RLIMIT_FSIZE", RLIMIT_FSIZE },
  { "RLIMIT_LOCKS", RLIMIT_LOCKS },
  { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
  { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
  { "RLIMIT_NICE", RLIMIT_NICE },
  { "RLIMIT_NOFILE", RLIMIT_NOFILE },
  { "RLIMIT_NPROC", RLIMIT_NPROC },
  { "RLIMIT_RSS", RLIMIT_RSS },
  { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
  { "RLIMIT_RTTIME", RLIMIT_RTTIME },
  { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
  { "RLIMIT_STACK", RLIMIT_STACK },
};

int
rlimit_from_name (const char *name)
{
  for (size_t i = 0; name && i < sizeof (rlimits) / sizeof (rlimits[0]); i++)
    if (strcmp (rlimits[i].name, name) == 0)
      return rlimits[i].resource;
  return -1;
}

const char *
spec_kv_get (const struct spec_kv *kv, size_t n, const char *key)
{
  for (size_t i = 0; kv && key && i < n; i++)
    if (strcmp (kv[i].key, key) == 0)
      return kv[i].value;
  return NULL;
}

const char *
spec_annotation (const struct spec *s, const char *key)
{
  return s ? spec_kv_get (s->annotations, s->n_annotations, key) : NULL;
}

void
spec_set_annotation (struct spec *s, const char *key, const char *value)
{
  struct spec_kv *kv = NULL;

  for (size_t i = 0; i < s->n_annotations && kv == NULL; i++)
    if (strcmp (s->annotations[i].key, key) == 0)
      kv = &s->annotations[i];
  if (kv == NULL)
    {
      s->annotations = xrealloc (
          s->annotations, (s->n_annotations + 1) * sizeof (*s->annotations));
      kv = &s->annotations[s->n_annotations++];
      kv->key = xstrdup (key);
      kv->value = NULL;
    }
  free (kv->value);
  kv->value = xstrdup (value);
}

static int
parse_user (const json_node *proc, const char *parent, struct spec_user *user,
            struct moat_error **err)
{
  const json_node *u = NULL, *gids = NULL;
  cleanup_free char *path = field_path (parent, "user");
  cleanup_free char *gids_path = NULL;
  int r;

  r = get_object (proc, parent, "user", &u, err);
  if (r < 0 || u == NULL)
    return r;
  if ((r = get_u32 (u, path, "uid", NULL, &user->uid, err)) < 0
      || (r = get_u32 (u, path, "gid", NULL, &user->gid, err)) < 0
      || (r = get_u32 (u, path, "umask", &user->has_umask, &user->umask, err))
             < 0
      || (r = get_array (u, path, "additionalGids", &gids, err)) < 0)
    return r;
  if (user->has_umask && user->umask > 0777)
    return field_fail (err, path, "umask", "%#o is not a file mode mask",
                       user->umask);
  if (gids == NULL)
    return 0;
  gids_path = field_path (path, "additionalGids");
  user->n_additional_gids = json_array_len (gids);
  user->additional_gids
      = xcalloc (user->n_additional_gids, sizeof (*user->additional_gids));
  for (size_t i = 0; i < user->n_additional_gids; i++)
    {
      cleanup_free char *elem = field_index_path (gids_path, i);
      uint64_t v;
      r = node_u64 (json_array_get (gids, i), elem, NULL, UINT32_MAX, &v, err);
      if (r < 0)
        return r;
      user->additional_gids[i] = (uint32_t)v;
    }
  return 0;
}

/* OCI spells capabilities "CAP_CHOWN". libcap would also take "chown", a
 * number or trailing blanks; those are not OCI names. They and names that
 * are no capability at all are bad input (as crun's "unknown cap"), though
 * the profile drops every capability anyway. */
static int
capability_from_name (const char *name)
{
  cap_value_t v;
  if (strncmp (name, "CAP_", 4) != 0 || name[4] == '\0'
      || strspn (name + 4, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != strlen (name + 4))
    return -1;
  if (cap_from_name (name, &v) < 0 || v < 0 || v >= 64)
    return -1;
  return v;
}

static int
get_capability_set (const json_node *caps, const char *parent, const char *key,
                    uint64_t *ret, struct moat_error **err)
{
  cleanup_strv char **names = NULL;
  int r = get_strv (caps, parent, key, &names, err);
  if (r < 0)
    return r;
  for (size_t i = 0; names && names[i]; i++)
    {
      int cap = capability_from_name (names[i]);
      if (cap < 0)
        return moat_fail (err, 0, "%s.%s[%zu]: unknown capability %s", parent,
                          key, i, names[i]);
      *ret |= UINT64_C (1) << cap;
    }
  return 0;
}

static int
parse_capabilities (const json_node *proc, const char *parent,
                    struct spec_caps *caps, struct moat_error **err)
{
  const json_node *c = NULL;
  cleanup_free char *path = field_path (parent, "capabilities");
  int r;

  r = get_object (proc, parent, "capabilities", &c, err);
  if (r < 0 || c == NULL)
    return r;
  caps->present = true;
  if ((r = get_capability_set (c, path, "bounding", &caps->bounding, err)) < 0
      || (r = get_capability_set (c, path, "effective", &caps->effective, err))
             < 0
      || (r = get_capability_set (c, path, "inheritable", &caps->inheritable,
                                  err))
             < 0
      || (r = get_capability_set (c, path, "permitted", &caps->permitted, err))
             < 0)
    return r;
  return get_capability_set (c, path, "ambient", &caps->ambient, err);
}

static int
parse_rlimit (const json_node *n, const char *path, void *slot,
              struct moat_error **err)
{
  struct spec_rlimit *rl = slot;
  int r;

  if ((r = get_required_string (n, path, "type", &rl->type, err)) < 0)
    return r;
  rl->resource = rlimit_from_name (rl->type);
  if (rl->resource < 0)
    return field_fail (err, path, "type", "unknown rlimit %s", rl->type);
  if ((r = require_member (n, path, "soft", err)) < 0
      || (r = require_member (n, path, "hard", err)) < 0
      || (r = get_u64 (n, path, "soft", UINT64_MAX, NULL, &rl->soft, err)) < 0
      || (r = get_u64 (n, path, "hard", UINT64_MAX, NULL, &rl->hard, err)) < 0)
    return r;
  if (rl->soft > rl->hard)
    return field_fail (err, path, NULL, "soft limit above the hard limit");
  return 0;
}

static int
parse_rlimits (const json_node *proc, const char *parent,
               struct spec_process *p, struct moat_error **err)
{
  cleanup_free char *path = field_path (parent, "rlimits");
  void *v = NULL;
  int r;

  r = get_object_array (proc, parent, "rlimits", sizeof (*p->rlimits), &v,
                        &p->n_rlimits, parse_rlimit, err);
  p->rlimits = v;
  if (r < 0)
    return r;
  /* At most one entry per resource (there are 16 resources, so the
   * quadratic check stops early). */
  for (size_t i = 1; i < p->n_rlimits; i++)
    for (size_t j = 0; j < i; j++)
      if (p->rlimits[i].resource == p->rlimits[j].resource)
        {
          cleanup_free char *elem = field_index_path (path, i);
          return field_fail (err, elem, "type", "duplicate %s",
                             p->rlimits[i].type);
        }
  return 0;
}

/* The process object at path parent ("process" in config.json, "" in
 * exec's process.json). */
static int
parse_process (const json_node *proc, const char *parent,
               struct spec_process *p, struct moat_error **err)
{
  const json_node *console = NULL;
  cleanup_free char *console_path = field_path (parent, "consoleSize");
  int64_t oom = 0;
  int r;

  if ((r = get_bool (proc, parent, "terminal", &p->terminal, err)) < 0
      || (r = get_object (proc, parent, "consoleSize", &console, err)) < 0)
    return r;
  if (console)
    {
      p->has_console_size = true;
      if ((r = get_u32 (console, console_path, "height", NULL,
                        &p->console_height, err))
              < 0
          || (r = get_u32 (console, console_path, "width", NULL,
                           &p->console_width, err))
                 < 0)
        return r;
    }
  if ((r = parse_user (proc, parent, &p->user, err)) < 0
      || (r = require_member (proc, parent, "args", err)) < 0
      || (r = get_strv (proc, parent, "args", &p->args, err)) < 0)
    return r;
  if (p->args[0] == NULL)
    return field_fail (err, parent, "args", "must not be empty");
  if ((r = get_strv (proc, parent, "env", &p->env, err)) < 0
      || (r = get_required_string (proc, parent, "cwd", &p->cwd, err)) < 0)
    return r;
  if (!is_absolute (p->cwd))
    return field_fail (err, parent, "cwd", "must be an absolute path");
  if ((r = parse_capabilities (proc, parent, &p->caps, err)) < 0
      || (r = parse_rlimits (proc, parent, p, err)) < 0
      || (r = get_bool (proc, parent, "noNewPrivileges", &p->no_new_privileges,
                        err))
             < 0
      || (r = get_i64 (proc, parent, "oomScoreAdj", -1000, 1000,
                       &p->has_oom_score_adj, &oom, err))
             < 0
      || (r = get_string (proc, parent, "apparmorProfile", &p->apparmor_profile,
                          err))
             < 0
      || (r = get_string (proc, parent, "selinuxLabel", &p->selinux_label, err))
             < 0)
    return r;
  p->oom_score_adj = (int)oom;
  return 0;
}

/* The runtime spec says a destination should be absolute; runc takes a
 * relative one as relative to "/", and so does moat. */
static int
parse_mount (const json_node *n, const char *path, void *slot,
             struct moat_error **err)
{
  struct spec_mount *m = slot;
  int r;

  if ((r = get_required_string (n, path, "destination", &m->destination, err))
          < 0
      || (r = get_string (n, path, "type", &m->type, err)) < 0
      || (r = get_string (n, path, "source", &m->source, err)) < 0
      || (r = get_strv (n, path, "options", &m->options, err)) < 0)
    return r;
  if (!is_absolute (m->destination))
    {
      char *abs = xasprintf ("/%s", m->destination);
      free (m->destination);
      m->destination = abs;
    }
  return 0;
}

static int
parse_hook (const json_node *n, const char *path, void *slot,
            struct moat_error **err)
{
  struct spec_hook *h = slot;
  int64_t timeout = 0;
  int r;

  if ((r = get_required_string (n, path, "path", &h->path, err)) < 0)
    return r;
  if (!is_absolute (h->path))
    return field_fail (err, path, "path", "must be an absolute path");
  if ((r = get_strv (n, path, "args", &h->args, err)) < 0
      || (r = get_strv (n, path, "env", &h->env, err)) < 0
      || (r = get_i64 (n, path, "timeout", 0, INT32_MAX, NULL, &timeout, err))
             < 0)
    return r;
  h->timeout = (int)timeout;
  return 0;
}

static int
parse_hooks (const json_node *root, struct spec *s, struct moat_error **err)
{
  const json_node *hooks = NULL;
  int r = get_object (root, "", "hooks", &hooks, err);

  for (int k = 0; r == 0 && hooks && k < HOOK__MAX; k++)
    {
      void *v = NULL;
      r = get_object_array (hooks, "hooks", hook_names[k],
                            sizeof (struct spec_hook), &v, &s->hooks[k].n,
                            parse_hook, err);
      s->hooks[k].v = v;
    }
  return r;
}

static int
parse_root (const json_node *root, struct spec *s, struct moat_error **err)
{
  const json_node *r_node = NULL;
  int r;

  if ((r = require_member (root, "", "root", err)) < 0
      || (r = get_object (root, "", "root", &r_node, err)) < 0
      || (r = get_required_string (r_node, "root", "path", &s->root_path, err))
             < 0)
    return r;
  return get_bool (r_node, "root", "readonly", &s->root_readonly, err);
}

static int
parse_spec_tree (const json_node *root, struct spec *s, struct moat_error **err)
{
  const json_node *proc = NULL, *linux_node = NULL;
  void *mounts = NULL;
  int r;

  if (!json_is_object (root))
    return moat_fail (err, 0, "expected a JSON object at the top level");
  if ((r = get_required_string (root, "", "ociVersion", &s->oci_version, err))
          < 0
      || (r = parse_root (root, s, err)) < 0
      || (r = get_object (root, "", "process", &proc, err)) < 0)
    return r;
  if (proc)
    {
      s->process = xcalloc (1, sizeof (*s->process));
      if ((r = parse_process (proc, "process", s->process, err)) < 0)
        return r;
    }
  if ((r = get_string (root, "", "hostname", &s->hostname, err)) < 0
      || (r = get_string (root, "", "domainname", &s->domainname, err)) < 0)
    return r;
  r = get_object_array (root, "", "mounts", sizeof (struct spec_mount), &mounts,
                        &s->n_mounts, parse_mount, err);
  s->mounts = mounts;
  if (r < 0 || (r = parse_hooks (root, s, err)) < 0
      || (r = get_string_map (root, "", "annotations", &s->annotations,
                              &s->n_annotations, err))
             < 0
      || (r = get_object (root, "", "linux", &linux_node, err)) < 0)
    return r;
  if (linux_node)
    return parse_linux (linux_node, &s->linux_, err);
  return 0;
}

int
spec_parse (const char *text, size_t len, struct spec **ret,
            struct moat_error **err)
{
  cleanup_json json_node *root = NULL;
  cleanup_spec struct spec *s = xcalloc (1, sizeof (*s));

  if (json_parse (text, len, JSON_MAX_SIZE, &root, err) < 0
      || parse_spec_tree (root, s, err) < 0)
    return moat_error_wrap (err, "config.json");
  *ret = steal_pointer (&s);
  return 0;
}

int
spec_parse_node (const json_node *root, struct spec **ret,
                 struct moat_error **err)
{
  cleanup_spec struct spec *s = xcalloc (1, sizeof (*s));

  if (parse_spec_tree (root, s, err) < 0)
    return -1;
  *ret = steal_pointer (&s);
  return 0;
}

int
spec_load (const char *path, struct spec **ret, struct moat_error **err)
{
  cleanup_free char *text = NULL;
  size_t len = 0;
  int r = read_file_at (AT_FDCWD, path, JSON_MAX_SIZE, &text, &len);

  if (r == -EFBIG)
    return moat_fail (err, EFBIG,
                      "reading config.json: %s: larger than %u bytes", path,
                      JSON_MAX_SIZE);
  if (r < 0)
    return moat_fail (err, -r, "reading config.json: %s", path);
  return spec_parse (text, len, ret, err);
}

int
spec_process_parse (const char *text, size_t len, struct spec_process **ret,
                    struct moat_error **err)
{
  cleanup_json json_node *root = NULL;
  cleanup_spec_process struct spec_process *p = xcalloc (1, sizeof (*p));

  if (json_parse (text, len, JSON_MAX_SIZE, &root, err) < 0)
    return moat_error_wrap (err, "process.json");
  if (!json_is_object (root))
    return moat_fail (err, 0,
                      "process.json: expected a JSON object at the top level");
  if (parse_process (root, "", p, err) < 0)
    return moat_error_wrap (err, "process.json");
  *ret = steal_pointer (&p);
  return 0;
}

int
spec_resources_parse (const char *text, size_t len, struct spec_resources *ret,
                      struct moat_error **err)
{
  cleanup_json json_node *root = NULL;

  memset (ret, 0, sizeof (*ret));
  if (json_parse (text, len, JSON_MAX_SIZE, &root, err) < 0)
    return moat_error_wrap (err, "resources JSON");
  if (!json_is_object (root))
    return moat_fail (
        err, 0, "resources JSON: expected a JSON object at the top level");
  if (parse_resources (root, "", ret, err) < 0)
    {
      spec_resources_clear (ret);
      return moat_error_wrap (err, "resources JSON");
    }
  return 0;
}

void
spec_mount_clear (struct spec_mount *m)
{
  if (m == NULL)
    return;
  free (m->destination);
  free (m->type);
  free (m->source);
  strv_free (m->options);
  memset (m, 0, sizeof (*m));
}

void
spec_process_free (struct spec_process *p)
{
  if (p == NULL)
    return;
  free (p->user.additional_gids);
  strv_free (p->args);
  strv_free (p->env);
  free (p->cwd);
  for (size_t i = 0; p->rlimits && i < p->n_rlimits; i++)
    free (p->rlimits[i].type);
  free (p->rlimits);
  free (p->apparmor_profile);
  free (p->selinux_label);
  free (p);
}

static void
hook_list_clear (struct spec_hook_list *l)
{
  for (size_t i = 0; l->v && i < l->n; i++)
    {
      free (l->v[i].path);
      strv_free (l->v[i].args);
      strv_free (l->v[i].env);
    }
  free (l->v);
  l->v = NULL;
  l->n = 0;
}

void
spec_free (struct spec *s)
{
  if (s == NULL)
    return;
  free (s->oci_version);
  free (s->root_path);
  spec_process_free (s->process);
  free (s->hostname);
  free (s->domainname);
  for (size_t i = 0; s->mounts && i < s->n_mounts; i++)
    spec_mount_clear (&s->mounts[i]);
  free (s->mounts);
  for (int k = 0; k < HOOK__MAX; k++)
    hook_list_clear (&s->hooks[k]);
  spec_kv_free (s->annotations, s->n_annotations);
  spec_linux_clear (&s->linux_);
  free (s);
}
