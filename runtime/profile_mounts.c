/* G5 and G6: which mounts a container may have and with which options.
 * Bind sources are judged twice: here lexically (collapsed "..", "//"), and
 * by the runtime with the realpath through profile_check_bind_source(), so
 * that a symlink to /etc is refused too. */
#include "profile.h"
#include "profile_internal.h"
#include "util.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <string.h>

enum bind_verdict
{
  BIND_OK,
  BIND_READONLY,
  BIND_REFUSED,
};

/* Anything whose last component is one of these is an engine's API. */
static const char *const engine_sockets[] = {
  "docker.sock",      "containerd.sock", "containerd.sock.ttrpc",
  "crio.sock",        "podman.sock",     "dockershim.sock",
  "cri-dockerd.sock", "buildkitd.sock",  NULL,
};

/* Refused: the tree itself, anything under it, and any parent of it (a
 * bind of /var/lib holds /var/lib/docker). "/" is a parent of them all. */
static const char *const refused_trees[] = {
  "/proc",
  "/sys",
  "/dev",
  "/boot",
  "/etc",
  "/root",
  "/run/containerd",
  "/var/run/containerd",
  "/run/docker",
  "/var/run/docker",
  "/run/crio",
  "/var/run/crio",
  "/run/podman",
  "/var/run/podman",
  "/run/containers",
  "/var/run/containers",
  "/run/runc",
  "/var/run/runc",
  "/run/moat",
  "/var/run/moat",
  "/var/lib/docker",
  "/var/lib/containerd",
  "/var/lib/containers",
  "/var/lib/kubelet", /* the node's credentials, every pod's secrets */
  "/var/lib/etcd",
  NULL,
};

/* Inside the refused engine trees, the files an engine binds into its own
 * containers (hosts, resolv.conf, shm, named volumes, a pod's volumes).
 * Without these no Docker, Podman, containerd or kubelet container could
 * start. `*` never crosses a "/"; tree entries also allow what is below. */
static const struct
{
  const char *pattern;
  bool tree;
} engine_files[] = {
  { "/var/lib/docker/containers/*/hostname", false },
  { "/var/lib/docker/containers/*/hosts", false },
  { "/var/lib/docker/containers/*/resolv.conf", false },
  { "/var/lib/docker/containers/*/mounts/*", true },
  { "/var/lib/docker/volumes/*/_data", true },
  { "/var/lib/containers/storage/overlay-containers/*/userdata/*", true },
  { "/run/containers/storage/overlay-containers/*/userdata/*", true },
  { "/var/run/containers/storage/overlay-containers/*/userdata/*", true },
  { "/var/lib/containers/storage/volumes/*/_data", true },
  { "/var/lib/containerd/io.containerd.grpc.v1.cri/sandboxes/*/*", false },
  { "/run/containerd/io.containerd.grpc.v1.cri/sandboxes/*/shm", false },
  { "/var/lib/containerd/io.containerd.grpc.v1.cri/containers/*/volumes/*",
    true },
  { "/var/lib/kubelet/pods/*/volumes/*/*", true },
  { "/var/lib/kubelet/pods/*/volume-subpaths/*/*/*", true },
  { "/var/lib/kubelet/pods/*/etc-hosts", false },
  { "/var/lib/kubelet/pods/*/containers/*/*", false },
};

/* Host files engines bind for name resolution and time (`ctr run
 * --net-host`): allowed read-only, as the container may otherwise rewrite
 * the host's copy. */
static const char *const readonly_host_files[] = {
  "/etc/hosts",     "/etc/resolv.conf", "/etc/hostname",
  "/etc/localtime", "/etc/timezone",    NULL,
};

/* The host's programs: a container's uid 0 owns them, so a writable bind
 * would let it replace what the host runs next. */
static const char *const readonly_trees[] = {
  "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", NULL,
};

static const char *const plain_mount_types[] = {
  "proc", "sysfs", "cgroup", "cgroup2", "mqueue", "devpts", "tmpfs", NULL,
};

static const char *const scratch_dirs[] = { "/tmp", "/var/tmp", NULL };

static bool
strv_has (const char *const *v, const char *s)
{
  for (size_t i = 0; v && v[i]; i++)
    if (strcmp (v[i], s) == 0)
      return true;
  return false;
}

static bool
path_in_tree (const char *path, const char *tree)
{
  size_t n = strlen (tree);
  return strncmp (path, tree, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool
path_in_or_above_tree (const char *path, const char *tree)
{
  return path_in_tree (path, tree) || path_in_tree (tree, path)
         || strcmp (path, "/") == 0;
}

static bool
is_engine_file (const char *path)
{
  for (size_t i = 0; i < sizeof (engine_files) / sizeof (engine_files[0]); i++)
    {
      int flags = FNM_PATHNAME | (engine_files[i].tree ? FNM_LEADING_DIR : 0);
      if (fnmatch (engine_files[i].pattern, path, flags) == 0)
        return true;
    }
  return false;
}

/* path is absolute and normalized. */
static enum bind_verdict
classify_bind_source (const char *path, const struct profile *p)
{
  const char *base = strrchr (path, '/') + 1;

  if (strv_has (engine_sockets, base))
    return BIND_REFUSED;
  if (is_engine_file (path))
    return BIND_OK;
  if (strv_has (readonly_host_files, path))
    return BIND_READONLY;
  for (size_t i = 0; refused_trees[i]; i++)
    if (path_in_or_above_tree (path, refused_trees[i]))
      return BIND_REFUSED;
  /* The audit log records what hostile code did: it must not edit it. */
  if (p->audit_log && p->audit_log[0] == '/')
    {
      cleanup_free char *dir = profile_path_normalize (p->audit_log);
      *strrchr (dir, '/') = '\0';
      if (dir[0] != '\0' && path_in_or_above_tree (path, dir))
        return BIND_REFUSED;
    }
  for (size_t i = 0; readonly_trees[i]; i++)
    if (path_in_tree (path, readonly_trees[i]))
      return BIND_READONLY;
  return BIND_OK;
}

int
profile_check_bind_source (const char *resolved_path, const struct profile *p,
                           struct moat_error **err)
{
  cleanup_free char *norm = NULL;

  if (resolved_path == NULL || resolved_path[0] != '/')
    return moat_fail (err, EINVAL, "bind source %s: not an absolute path",
                      resolved_path ? resolved_path : "(none)");
  norm = profile_path_normalize (resolved_path);
  if (classify_bind_source (norm, p) != BIND_REFUSED)
    return 0;
  return moat_fail (err, 0,
                    "refusing to bind %s into the container (profile %s)",
                    resolved_path, p->name);
}

bool
profile_bind_needs_readonly (const char *resolved_path, const struct profile *p)
{
  cleanup_free char *norm = NULL;

  if (resolved_path == NULL || resolved_path[0] != '/')
    return false;
  norm = profile_path_normalize (resolved_path);
  return classify_bind_source (norm, p) == BIND_READONLY;
}

bool
profile_bind_idmapped (const char *resolved_path)
{
  cleanup_free char *norm = NULL;

  if (resolved_path == NULL || resolved_path[0] != '/')
    return false;
  norm = profile_path_normalize (resolved_path);
  return is_engine_file (norm);
}

/* ---- options ---- */

static bool
is_bind_mount (const struct spec_mount *m)
{
  return (m->type && strcmp (m->type, "bind") == 0)
         || strv_has ((const char *const *)m->options, "bind")
         || strv_has ((const char *const *)m->options, "rbind");
}

/* tmpfs's own syntax: bytes with k/m/g/t suffixes, or a % of RAM (never
 * under the cap we can prove, so it gets the cap). */
static bool
tmpfs_size_within (char *const *opts, uint64_t cap, const char **ret_opt)
{
  const char *size = NULL;
  uint64_t v;

  for (size_t i = 0; opts && opts[i]; i++)
    if (strncmp (opts[i], "size=", 5) == 0)
      size = opts[i];
  *ret_opt = size;
  return size && profile_parse_size (size + 5, &v) == 0 && v > 0 && v <= cap;
}

struct option_policy
{
  bool allow_dev;     /* /dev's tmpfs and devpts hold device nodes */
  bool force_ro;      /* sysfs, cgroup, read-only host files */
  bool force_noexec;  /* scratch tmpfs */
  uint64_t tmpfs_cap; /* 0: not a tmpfs */
};

static char **
harden_options (char *const *opts, const struct option_policy *pol)
{
  char **out = xcalloc (1, sizeof (char *));
  const char *size_opt = NULL;
  bool size_ok
      = pol->tmpfs_cap && tmpfs_size_within (opts, pol->tmpfs_cap, &size_opt);

  for (size_t i = 0; opts && opts[i]; i++)
    {
      const char *o = opts[i];
      if (strcmp (o, "suid") == 0 || (!pol->allow_dev && strcmp (o, "dev") == 0)
          || (pol->force_ro && strcmp (o, "rw") == 0)
          || (pol->force_noexec && strcmp (o, "exec") == 0))
        continue;
      if (pol->tmpfs_cap
          && (strncmp (o, "nr_blocks=", 10) == 0
              || (strncmp (o, "size=", 5) == 0 && (!size_ok || o != size_opt))))
        continue;
      strv_append (&out, o);
    }
  if (!strv_has ((const char *const *)out, "nosuid"))
    strv_append (&out, "nosuid");
  if (!pol->allow_dev && !strv_has ((const char *const *)out, "nodev"))
    strv_append (&out, "nodev");
  if (pol->force_noexec && !strv_has ((const char *const *)out, "noexec"))
    strv_append (&out, "noexec");
  if (pol->force_ro && !strv_has ((const char *const *)out, "ro"))
    strv_append (&out, "ro");
  if (pol->tmpfs_cap && !size_ok)
    {
      cleanup_free char *size = xasprintf ("size=%" PRIu64, pol->tmpfs_cap);
      strv_append (&out, size);
    }
  return out;
}

static bool
strv_equal (char *const *a, char *const *b)
{
  size_t n = strv_len (a);
  if (n != strv_len (b))
    return false;
  for (size_t i = 0; i < n; i++)
    if (strcmp (a[i], b[i]) != 0)
      return false;
  return true;
}

static void
replace_options (struct spec_mount *m, size_t index,
                 const struct option_policy *pol, struct override_list *ov)
{
  char **hardened = harden_options (m->options, pol);

  if (!strv_equal (m->options, hardened))
    {
      cleanup_free char *path = xasprintf ("mounts[%zu].options", index);
      cleanup_free char *asked = profile_strv_join (m->options, ",");
      cleanup_free char *enforced = profile_strv_join (hardened, ",");
      override_list_add (ov, OVERRIDE_CHANGED, path, asked, enforced);
    }
  strv_free (m->options);
  m->options = hardened;
}

/* ---- G6: /tmp and /var/tmp ---- */

static char *
mount_text (const struct spec_mount *m)
{
  cleanup_free char *opts = profile_strv_join (m->options, ",");
  return xasprintf ("%s %s %s", m->type ? m->type : "bind",
                    m->source ? m->source : "none", opts);
}

/* A config's smaller size is kept; anything else becomes the profile's. */
static void
make_scratch_tmpfs (struct spec_mount *m, const struct profile *p)
{
  const char *size_opt = NULL;
  bool keep = m->type && strcmp (m->type, "tmpfs") == 0 && !is_bind_mount (m)
              && tmpfs_size_within (m->options, p->tmpfs_size, &size_opt);
  cleanup_free char *size
      = keep ? xstrdup (size_opt) : xasprintf ("size=%" PRIu64, p->tmpfs_size);
  char **opts = NULL;

  strv_append (&opts, "nosuid");
  strv_append (&opts, "nodev");
  strv_append (&opts, "noexec");
  strv_append (&opts, "mode=1777");
  strv_append (&opts, size);
  free (m->type);
  free (m->source);
  strv_free (m->options);
  m->type = xstrdup ("tmpfs");
  m->source = xstrdup ("tmpfs");
  m->options = opts;
}

/* Before the first mount below dest (so /tmp/.X11-unix stays visible),
 * else at the end (after a mount of /var, for /var/tmp). */
static void
insert_scratch (struct spec *spec, const char *dest, const struct profile *p,
                struct override_list *ov)
{
  size_t at = spec->n_mounts;
  struct spec_mount m = { .destination = xstrdup (dest) };
  cleanup_free char *text = NULL, *path = NULL;

  for (size_t i = 0; i < spec->n_mounts && at == spec->n_mounts; i++)
    {
      cleanup_free char *d
          = profile_path_normalize (spec->mounts[i].destination);
      if (path_in_tree (d, dest))
        at = i;
    }
  make_scratch_tmpfs (&m, p);
  spec->mounts
      = xrealloc (spec->mounts, (spec->n_mounts + 1) * sizeof (*spec->mounts));
  memmove (spec->mounts + at + 1, spec->mounts + at,
           (spec->n_mounts - at) * sizeof (*spec->mounts));
  spec->mounts[at] = m;
  spec->n_mounts++;
  text = mount_text (&m);
  path = xasprintf ("mounts[%s]", dest);
  override_list_add (ov, OVERRIDE_ADDED, path, NULL, text);
}

/* ---- one mount ---- */

/* asked names the mount in the audit log, what completes the error. */
static void
refuse (size_t index, const char *asked, const char *what,
        const struct profile *p, struct override_list *ov, int *refused,
        struct moat_error **err)
{
  cleanup_free char *path = xasprintf ("mounts[%zu]", index);
  override_list_add (ov, OVERRIDE_REFUSED, path, asked, "refused");
  if (*refused == 0)
    moat_fail (err, 0, "mounts[%zu]: refusing %s (profile %s)", index, what,
               p->name);
  *refused = -1;
}

static void
harden_mount (struct spec_mount *m, size_t index, const struct profile *p,
              struct override_list *ov, int *refused, struct moat_error **err)
{
  cleanup_free char *dest
      = profile_path_normalize (m->destination ? m->destination : "");
  struct option_policy pol = { 0 };
  bool bind = is_bind_mount (m);

  if (strv_has (scratch_dirs, dest))
    {
      cleanup_free char *asked = mount_text (m);
      cleanup_free char *enforced = NULL;
      cleanup_free char *path = xasprintf ("mounts[%zu]", index);
      make_scratch_tmpfs (m, p);
      enforced = mount_text (m);
      if (strcmp (asked, enforced) != 0)
        override_list_add (ov, OVERRIDE_CHANGED, path, asked, enforced);
      return;
    }
  if (bind)
    {
      if (m->source && m->source[0] == '/')
        {
          cleanup_free char *src = profile_path_normalize (m->source);
          enum bind_verdict v = classify_bind_source (src, p);
          if (v == BIND_REFUSED)
            {
              cleanup_free char *asked = xasprintf ("bind %s", m->source);
              cleanup_free char *what
                  = xasprintf ("to bind %s into the container", m->source);
              refuse (index, asked, what, p, ov, refused, err);
              return;
            }
          pol.force_ro = v == BIND_READONLY;
        }
    }
  else if (m->type == NULL || !strv_has (plain_mount_types, m->type))
    {
      cleanup_free char *what = xasprintf ("mount type %s at %s",
                                           m->type ? m->type : "(none)", dest);
      refuse (index, what, what, p, ov, refused, err);
      return;
    }
  else
    {
      pol.allow_dev
          = strcmp (m->type, "devpts") == 0
            || (strcmp (m->type, "tmpfs") == 0 && strcmp (dest, "/dev") == 0);
      pol.force_ro = strcmp (m->type, "sysfs") == 0
                     || strncmp (m->type, "cgroup", 6) == 0;
      if (strcmp (m->type, "tmpfs") == 0)
        pol.tmpfs_cap = p->tmpfs_size;
    }
  replace_options (m, index, &pol, ov);
}

int
profile_harden_mounts (struct spec *spec, const struct profile *p,
                       struct override_list *ov, struct moat_error **err)
{
  int refused = 0;
  size_t n = spec->n_mounts;

  for (size_t i = 0; i < n; i++)
    harden_mount (&spec->mounts[i], i, p, ov, &refused, err);
  for (size_t s = 0; scratch_dirs[s]; s++)
    {
      bool found = false;
      for (size_t i = 0; i < spec->n_mounts && !found; i++)
        {
          cleanup_free char *d = profile_path_normalize (
              spec->mounts[i].destination ? spec->mounts[i].destination : "");
          found = strcmp (d, scratch_dirs[s]) == 0;
        }
      if (!found)
        insert_scratch (spec, scratch_dirs[s], p, ov);
    }
  return refused;
}
