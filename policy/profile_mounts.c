/* G5 and G6: which mounts a container may have and with which options.
 * Bind sources are judged twice: here lexically (collapsed "..", "//"), and
 * by the runtime with the realpath through profile_check_bind_source(), so
 * that a symlink to /etc is refused too. */
#include "profile.h"
#include "profile_internal.h"
#include "../lib/util.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <string.h>

/* Anything whose last component is one of these is an engine's API. */
static const char *const engine_sockets[] = {
  "docker.sock",      "containerd.sock", "containerd.sock.ttrpc",
  "crio.sock",        "podman.sock",     "dockershim.sock",
  "cri-dockerd.sock", "buildkitd.sock",  NULL,
};

/* Refused: the tree itself, anything under it, and any parent of it (a
 * bind of /var/lib holds /var/lib/docker). "/" is a parent of them all.
 * /run and /var/run hold the host's service sockets (D-Bus, systemd, user
 * sessions, every engine's API): a unix socket can be connected to even
 * through a read-only mount, so read-only would not help. The engines'
 * state dirs (their roots below) are refused the same way. */
static const char *const refused_trees[] = {
  "/proc", "/sys", "/dev",     "/boot",         "/etc",
  "/root", "/run", "/var/run", "/var/lib/etcd", NULL,
};

/* Where each engine keeps its state: the default roots, to which the
 * operator adds its own (engine_roots, for a Docker data-root elsewhere).
 * ../shared/ENGINES.md lists them. */
const char *const profile_engine_names[ENGINE__N + 1]
    = { "docker", "podman", "containerd", "kubelet", NULL };

static const char *const docker_roots[] = { "/var/lib/docker", NULL };
static const char *const podman_roots[]
    = { "/var/lib/containers/storage", "/run/containers/storage",
        "/var/run/containers/storage", NULL };
static const char *const containerd_roots[]
    = { "/var/lib/containerd", "/run/containerd", "/var/run/containerd", NULL };
/* the node's credentials, every pod's secrets */
static const char *const kubelet_roots[] = { "/var/lib/kubelet", NULL };
static const char *const *const default_engine_roots[ENGINE__N] = {
  [ENGINE_DOCKER] = docker_roots,
  [ENGINE_PODMAN] = podman_roots,
  [ENGINE_CONTAINERD] = containerd_roots,
  [ENGINE_KUBELET] = kubelet_roots,
};
/* Podman's state is refused from one level up (its other dirs). */
static const char *const podman_state_dirs[]
    = { "/var/lib/containers", "/run/containers", "/var/run/containers", NULL };

/* Inside a root of an engine, the files it binds into its own containers
 * (hosts, resolv.conf, shm, a pod's termination log) and its volumes.
 * Without these no Docker, Podman, containerd or kubelet container could
 * start. `*` never crosses a "/"; tree entries also allow what is below. */
struct engine_tree
{
  enum engine_kind kind;
  const char *pattern; /* relative to a root of the engine */
  bool tree;
  bool volume;
};

static const struct engine_tree engine_trees[] = {
  { ENGINE_DOCKER, "containers/*/hostname", false, false },
  { ENGINE_DOCKER, "containers/*/hosts", false, false },
  { ENGINE_DOCKER, "containers/*/resolv.conf", false, false },
  { ENGINE_DOCKER, "containers/*/mounts/*", true, false },
  { ENGINE_DOCKER, "volumes/*/_data", true, true },
  { ENGINE_PODMAN, "overlay-containers/*/userdata/*", true, false },
  { ENGINE_PODMAN, "volumes/*/_data", true, true },
  { ENGINE_CONTAINERD, "io.containerd.grpc.v1.cri/sandboxes/*/*", false,
    false },
  { ENGINE_CONTAINERD, "io.containerd.grpc.v1.cri/containers/*/volumes/*", true,
    true },
  { ENGINE_KUBELET, "pods/*/etc-hosts", false, false },
  { ENGINE_KUBELET, "pods/*/containers/*/*", false, false },
  { ENGINE_KUBELET, "pods/*/volumes/*/*", true, true },
  { ENGINE_KUBELET, "pods/*/volume-subpaths/*/*/*", true, true },
};

/* Host files engines bind for name resolution and time (`ctr run
 * --net-host`): allowed read-only, as the container may otherwise rewrite
 * the host's copy. The /run ones are where /etc/resolv.conf leads on hosts
 * with systemd-resolved or resolvconf: plain files, no sockets. */
static const char *const readonly_host_files[] = {
  "/etc/hosts",
  "/etc/resolv.conf",
  "/etc/hostname",
  "/etc/localtime",
  "/etc/timezone",
  "/run/systemd/resolve/stub-resolv.conf",
  "/run/systemd/resolve/resolv.conf",
  "/run/resolvconf/resolv.conf",
  NULL,
};

/* The host's programs: a container's uid 0 owns them, so a writable bind
 * would let it replace what the host runs next. */
static const char *const readonly_trees[] = {
  "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", NULL,
};

static const char *const plain_mount_types[] = {
  "proc", "sysfs", "cgroup", "cgroup2", "mqueue", "devpts", "tmpfs", NULL,
};

/* G5: each pseudo filesystem at its own place only. A second procfs
 * elsewhere would be one the masks and read-only paths do not cover. */
static const struct
{
  const char *type, *place;
} pseudo_places[] = {
  { "proc", "/proc" },
  { "sysfs", "/sys" },
  { "cgroup", "/sys/fs/cgroup" },
  { "cgroup2", "/sys/fs/cgroup" },
  { "mqueue", "/dev/mqueue" },
  { "devpts", "/dev/pts" },
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

bool
profile_path_in_tree (const char *path, const char *tree)
{
  return strcmp (tree, "/") == 0 || path_at_or_below (path, tree);
}

/* Is path an entry of dir itself (both normalized)? */
static bool
path_in_dir (const char *path, const char *dir)
{
  size_t n = strlen (dir);
  return strncmp (path, dir, n) == 0 && path[n] == '/'
         && strchr (path + n + 1, '/') == NULL;
}

static bool
path_in_or_above_tree (const char *path, const char *tree)
{
  return profile_path_in_tree (path, tree) || profile_path_in_tree (tree, path)
         || strcmp (path, "/") == 0;
}

/* Does path lie in (or, with or_above, above) a root of an engine, a
 * default one or the operator's? With ret_rel, where below it. */
static bool
in_engine_root (const char *path, enum engine_kind kind,
                const struct operator_config *cfg, bool or_above,
                const char **ret_rel)
{
  const char *const *roots[2]
      = { default_engine_roots[kind],
          (const char *const *)cfg->engine_roots[kind] };

  for (size_t r = 0; r < 2; r++)
    for (size_t i = 0; roots[r] && roots[r][i]; i++)
      {
        const char *root = roots[r][i];
        size_t n = strlen (root);
        if (or_above ? path_in_or_above_tree (path, root)
                     : profile_path_in_tree (path, root))
          {
            if (ret_rel)
              *ret_rel = path[n] == '/' ? path + n + 1 : path + n;
            return true;
          }
      }
  return false;
}

/* BIND_VOLUME, BIND_ENGINE_FILE, or BIND_OTHER for anything else. */
static enum bind_class
engine_tree_class (const char *path, const struct operator_config *cfg)
{
  for (size_t i = 0; i < sizeof (engine_trees) / sizeof (engine_trees[0]); i++)
    {
      const struct engine_tree *t = &engine_trees[i];
      int flags = FNM_PATHNAME | (t->tree ? FNM_LEADING_DIR : 0);
      const char *rel;
      if (in_engine_root (path, t->kind, cfg, false, &rel)
          && fnmatch (t->pattern, rel, flags) == 0)
        return t->volume ? BIND_VOLUME : BIND_ENGINE_FILE;
    }
  return BIND_OTHER;
}

#define N_OF(a) (sizeof (a) / sizeof ((a)[0]))

/* path is absolute and normalized; bundle and rootfs are realpaths (NULL
 * when not known: profile_apply's lexical pass). */
enum bind_class
profile_classify_bind_source (const char *path, const char *bundle,
                              const char *rootfs,
                              const struct operator_config *cfg)
{
  const char *base = strrchr (path, '/') + 1;
  enum bind_class c;

  if (strv_has (engine_sockets, base))
    return BIND_REFUSED;
  c = engine_tree_class (path, cfg);
  if (c != BIND_OTHER)
    return c;
  if (strv_has (readonly_host_files, path))
    return BIND_HOST_FILE;
  for (size_t i = 0; refused_trees[i]; i++)
    if (path_in_or_above_tree (path, refused_trees[i]))
      return BIND_REFUSED;
  for (int k = 0; k < ENGINE__N; k++)
    if (in_engine_root (path, k, cfg, true, NULL))
      return BIND_REFUSED;
  for (size_t i = 0; podman_state_dirs[i]; i++)
    if (path_in_or_above_tree (path, podman_state_dirs[i]))
      return BIND_REFUSED;
  /* The audit log records what hostile code did: it must not edit it,
   * through its directory or above, or the log and its rotations (NAME.1,
   * NAME-DATE). Anything else in its directory cannot reach it: a
   * --workdir beside an audit log in /tmp is as good as any. */
  if (cfg->audit_log && cfg->audit_log[0] == '/')
    {
      cleanup_free char *dir = profile_path_normalize (cfg->audit_log);
      char *name = strrchr (dir, '/');
      *name++ = '\0';
      if (dir[0] != '\0'
          && (profile_path_in_tree (dir, path)
              || (path_in_dir (path, dir)
                  && strncmp (base, name, strlen (name)) == 0)))
        return BIND_REFUSED;
    }
  if (cfg->caller_volume && profile_path_in_tree (path, cfg->caller_volume))
    return BIND_VOLUME;
  for (size_t i = 0; readonly_trees[i]; i++)
    if (profile_path_in_tree (path, readonly_trees[i]))
      return BIND_HOST_PROGRAMS;
  /* A writable view of the rootfs would undo the read-only root. */
  if (rootfs && profile_path_in_tree (path, rootfs))
    return BIND_OTHER;
  if (bundle && profile_path_in_tree (path, bundle))
    return BIND_WRITABLE;
  for (size_t i = 0; cfg->writable_bind_trees && cfg->writable_bind_trees[i];
       i++)
    if (profile_path_in_tree (path, cfg->writable_bind_trees[i]))
      return BIND_WRITABLE;
  return BIND_OTHER;
}

int
profile_check_bind_source (const char *resolved_path, const struct profile *p,
                           const struct operator_config *cfg,
                           struct moat_error **err)
{
  cleanup_free char *norm = NULL;

  if (resolved_path == NULL || resolved_path[0] != '/')
    return moat_fail (err, EINVAL, "bind source %s: not an absolute path",
                      resolved_path ? resolved_path : "(none)");
  norm = profile_path_normalize (resolved_path);
  if (profile_classify_bind_source (norm, NULL, NULL,
                                    operator_config_or_builtin (cfg))
      != BIND_REFUSED)
    return 0;
  return moat_fail (err, 0,
                    "refusing to bind %s into the container (profile %s)",
                    resolved_path, p->name);
}

/* Drop every `drop` from *opts and make sure `want` is there; true if that
 * changed anything. */
static bool
force_option (char ***opts, const char *want, const char *drop)
{
  size_t kept = 0;
  bool changed = false, found = false;

  for (size_t i = 0; *opts && (*opts)[i]; i++)
    {
      if (strcmp ((*opts)[i], drop) == 0)
        {
          free ((*opts)[i]);
          changed = true;
          continue;
        }
      found |= strcmp ((*opts)[i], want) == 0;
      (*opts)[kept++] = (*opts)[i];
    }
  if (*opts)
    (*opts)[kept] = NULL;
  if (!found)
    strv_append (opts, want);
  return changed || !found;
}

int
profile_harden_bind (struct spec_mount *m, size_t index,
                     const struct bind_facts *f, const struct profile *p,
                     const struct operator_config *cfg,
                     struct override_list *ov, char **ret_warning,
                     struct moat_error **err)
{
  const char *resolved_path = f->path;
  cleanup_free char *norm = NULL, *asked = NULL, *path = NULL;
  cleanup_free char *bundle = NULL, *rootfs = NULL;
  const char *why = NULL;
  enum bind_class c;
  bool asked_rw, asked_exec, ro, noexec, changed = false;

  *ret_warning = NULL;
  if (resolved_path == NULL || resolved_path[0] != '/')
    return moat_fail (err, EINVAL, "bind source %s: not an absolute path",
                      resolved_path ? resolved_path : "(none)");
  norm = profile_path_normalize (resolved_path);
  bundle = f->bundle ? profile_path_normalize (f->bundle) : NULL;
  rootfs = f->rootfs ? profile_path_normalize (f->rootfs) : NULL;
  cfg = operator_config_or_builtin (cfg);
  c = profile_classify_bind_source (norm, bundle, rootfs, cfg);
  if (c != BIND_REFUSED && f->pseudo_fs)
    c = BIND_REFUSED, why = "it is on or holds a pseudo filesystem";
  /* A socket is reached with connect(), which no mount option stops. */
  if (c != BIND_REFUSED && f->is_socket && c != BIND_ENGINE_FILE
      && c != BIND_VOLUME)
    c = BIND_REFUSED,
    why = "a unix socket outside the engines' per-container trees";
  /* Keyed by destination: the profile's own mounts shift the indices. */
  path = xasprintf ("mounts[%s]", m->destination ? m->destination : "");
  if (c == BIND_REFUSED)
    {
      cleanup_free char *what = xasprintf ("bind %s", resolved_path);
      override_list_add (ov, OVERRIDE_REFUSED, path, what, "refused");
      if (why)
        return moat_fail (err, 0,
                          "refusing to bind %s into the container (profile "
                          "%s): %s",
                          resolved_path, p->name, why);
      return moat_fail (err, 0,
                        "refusing to bind %s into the container (profile %s)",
                        resolved_path, p->name);
    }
  ro = c == BIND_HOST_FILE || c == BIND_HOST_PROGRAMS || c == BIND_OTHER;
  /* G13: what a container can write, it cannot run; read-only binds too,
   * as another container (or the host) may write the same tree. */
  noexec
      = c != BIND_HOST_PROGRAMS && !(c == BIND_VOLUME && !cfg->noexec_volumes);
  asked = strv_join (m->options, ",");
  asked_rw = !strv_has ((const char *const *)m->options, "ro");
  asked_exec = strv_has ((const char *const *)m->options, "exec");
  /* Read-only down to every submount: "ro" alone would leave them as
   * they are on the host (runc's "ro" on an rbind is the top only). */
  if (ro)
    {
      changed |= force_option (&m->options, "ro", "rw");
      changed |= force_option (&m->options, "rro", "rrw");
    }
  if (noexec)
    changed |= force_option (&m->options, "noexec", "exec");
  if (changed)
    {
      cleanup_free char *opath = xasprintf ("%s.options", path);
      cleanup_free char *enforced = strv_join (m->options, ",");
      override_list_add (ov, OVERRIDE_CHANGED, opath, asked, enforced);
    }
  if (c == BIND_OTHER && asked_rw)
    *ret_warning = xasprintf (
        "mounts[%zu]: binding %s read-only: writable binds are only the "
        "engines' per-container and volume trees, the bundle and the trees "
        "listed in writable_bind_trees of the operator config",
        index, resolved_path);
  else if (noexec && asked_exec)
    *ret_warning = xasprintf ("mounts[%zu]: binding %s noexec (G13)", index,
                              resolved_path);
  return 0;
}

enum profile_bind_idmap
profile_bind_idmapped (const char *resolved_path,
                       const struct operator_config *cfg)
{
  cleanup_free char *norm = NULL;

  if (resolved_path == NULL || resolved_path[0] != '/')
    return PROFILE_BIND_IDMAP_NONE;
  cfg = operator_config_or_builtin (cfg);
  norm = profile_path_normalize (resolved_path);
  if (cfg->caller_volume && profile_path_in_tree (norm, cfg->caller_volume))
    return PROFILE_BIND_IDMAP_OWNER;
  return engine_tree_class (norm, cfg) != BIND_OTHER
             ? PROFILE_BIND_IDMAP_CONTAINER
             : PROFILE_BIND_IDMAP_NONE;
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
  return size && parse_byte_size (size + 5, &v) == 0 && v > 0 && v <= cap;
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
      cleanup_free char *asked = strv_join (m->options, ",");
      cleanup_free char *enforced = strv_join (hardened, ",");
      override_list_add (ov, OVERRIDE_CHANGED, path, asked, enforced);
    }
  strv_free (m->options);
  m->options = hardened;
}

/* ---- G6: /tmp and /var/tmp ---- */

static char *
mount_text (const struct spec_mount *m)
{
  cleanup_free char *opts = strv_join (m->options, ",");
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
  struct spec_mount m
      = { .destination = xstrdup (dest), .profile_added = true };
  cleanup_free char *text = NULL, *path = NULL;

  for (size_t i = 0; i < spec->n_mounts && at == spec->n_mounts; i++)
    {
      cleanup_free char *d
          = profile_path_normalize (spec->mounts[i].destination);
      if (profile_path_in_tree (d, dest))
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

/* asked names the mount in the audit log; what and why (may be NULL)
 * complete the error. */
static void
refuse (size_t index, const char *asked, const char *what, const char *why,
        const struct profile *p, struct override_list *ov, int *refused,
        struct moat_error **err)
{
  cleanup_free char *path = xasprintf ("mounts[%zu]", index);
  override_list_add (ov, OVERRIDE_REFUSED, path, asked, "refused");
  if (*refused == 0)
    moat_fail (err, 0, "mounts[%zu]: refusing %s (profile %s)%s%s", index, what,
               p->name, why ? ": " : "", why ? why : "");
  *refused = -1;
}

static const char *
pseudo_place (const char *type)
{
  for (size_t i = 0; type && i < N_OF (pseudo_places); i++)
    if (strcmp (pseudo_places[i].type, type) == 0)
      return pseudo_places[i].place;
  return NULL;
}

/* G5: where a mount may land. NULL if it may, else why not. */
static const char *
destination_refusal (const struct spec_mount *m, const char *dest, bool bind)
{
  const char *place = bind ? NULL : pseudo_place (m->type);

  if (strcmp (dest, "/") == 0)
    return "a mount on / would replace the root filesystem";
  if (place)
    return strcmp (dest, place) == 0
               ? NULL
               : "pseudo filesystems only at their own place (proc at /proc, "
                 "sysfs at /sys, cgroup at /sys/fs/cgroup, mqueue at "
                 "/dev/mqueue, devpts at /dev/pts)";
  /* Over or inside /proc and /sys: it would hide what the masks and
   * read-only paths hold, or put something else in their place. */
  if (profile_path_in_tree (dest, "/proc")
      || profile_path_in_tree (dest, "/sys"))
    return "nothing but proc at /proc, sysfs at /sys and cgroup at "
           "/sys/fs/cgroup may be mounted in /proc or /sys";
  return NULL;
}

/* Options the kernel would act on beyond a plain mount. */
static const char *
bad_option (char *const *opts)
{
  static const char *const bad[] = { "remount", "move", NULL };
  for (size_t i = 0; opts && opts[i]; i++)
    if (strv_has (bad, opts[i]))
      return opts[i];
  return NULL;
}

static void
harden_mount (struct spec_mount *m, size_t index, const struct profile *p,
              const struct operator_config *cfg, struct override_list *ov,
              int *refused, struct moat_error **err)
{
  cleanup_free char *dest
      = profile_path_normalize (m->destination ? m->destination : "");
  struct option_policy pol = { .force_noexec = true };
  bool bind = is_bind_mount (m);
  const char *why;

  /* The mount lands where the decision was made: "//dev/" is /dev (and
   * goes read-only as /dev does). Symlinks are the runtime's to judge. */
  if (m->destination == NULL || strcmp (m->destination, dest) != 0)
    {
      free (m->destination);
      m->destination = xstrdup (dest);
    }
  if (strv_has (scratch_dirs, dest)
      || (strcmp (dest, "/dev/shm") == 0 && !bind))
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
  if (!bind && (m->type == NULL || !strv_has (plain_mount_types, m->type)))
    {
      cleanup_free char *what = xasprintf ("mount type %s at %s",
                                           m->type ? m->type : "(none)", dest);
      refuse (index, what, what, NULL, p, ov, refused, err);
      return;
    }
  if ((why = destination_refusal (m, dest, bind)))
    {
      cleanup_free char *asked = mount_text (m);
      cleanup_free char *what = xasprintf ("a %s mount at %s",
                                           bind      ? "bind"
                                           : m->type ? m->type
                                                     : "(none)",
                                           dest);
      refuse (index, asked, what, why, p, ov, refused, err);
      return;
    }
  if ((why = bad_option (m->options)))
    {
      cleanup_free char *what = xasprintf ("mount option %s at %s", why, dest);
      refuse (index, what, what, NULL, p, ov, refused, err);
      return;
    }
  if (bind)
    {
      /* noexec and read-only outside the writable trees are decided by
       * profile_harden_bind on the realpath. */
      pol.force_noexec = false;
      if (m->source && m->source[0] == '/')
        {
          cleanup_free char *src = profile_path_normalize (m->source);
          enum bind_class c
              = profile_classify_bind_source (src, NULL, NULL, cfg);
          if (c == BIND_REFUSED)
            {
              cleanup_free char *asked = xasprintf ("bind %s", m->source);
              cleanup_free char *what
                  = xasprintf ("to bind %s into the container", m->source);
              refuse (index, asked, what, NULL, p, ov, refused, err);
              return;
            }
          pol.force_ro = c == BIND_HOST_FILE || c == BIND_HOST_PROGRAMS;
        }
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

static bool
has_mount_at (const struct spec *spec, const char *dest)
{
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      cleanup_free char *d = profile_path_normalize (
          spec->mounts[i].destination ? spec->mounts[i].destination : "");
      if (strcmp (d, dest) == 0)
        return true;
    }
  return false;
}

int
profile_harden_mounts (struct spec *spec, const struct profile *p,
                       const struct operator_config *cfg,
                       struct override_list *ov, struct moat_error **err)
{
  int refused = 0;
  size_t n = spec->n_mounts;

  cfg = operator_config_or_builtin (cfg);
  for (size_t i = 0; i < n; i++)
    harden_mount (&spec->mounts[i], i, p, cfg, ov, &refused, err);
  for (size_t s = 0; scratch_dirs[s]; s++)
    if (!has_mount_at (spec, scratch_dirs[s]))
      insert_scratch (spec, scratch_dirs[s], p, ov);
  /* /dev is read-only once its nodes are in place: shared memory needs a
   * place of its own (POSIX semaphores, Python's multiprocessing). */
  if (has_mount_at (spec, "/dev") && !has_mount_at (spec, "/dev/shm"))
    insert_scratch (spec, "/dev/shm", p, ov);
  return refused;
}
