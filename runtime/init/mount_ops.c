/* The mount setup as a list: see mount_ops.h. The init executes it in
 * three steps (rootfs.c): rootfs_prepare up to the pivot (the rootfs,
 * mounts[] in order, /dev's nodes and links, the cwd), rootfs_pivot, and
 * rootfs_finish (read-only paths, masks, propagation, the root's own
 * attributes). */
#include "mount_ops.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "linux.h"
#include "../../lib/util.h"

/* The nodes every /dev gets, bound from the host's after a check that
 * each is the device its name says. */
static const struct
{
  const char *name;
  unsigned major, minor;
} default_devs[] = { { "null", 1, 3 },   { "zero", 1, 5 },    { "full", 1, 7 },
                     { "random", 1, 8 }, { "urandom", 1, 9 }, { "tty", 5, 0 } };
#define N_DEFAULT_DEVS (sizeof (default_devs) / sizeof (default_devs[0]))
static const char *const dev_links[][2] = { { "/proc/self/fd", "fd" },
                                            { "/proc/self/fd/0", "stdin" },
                                            { "/proc/self/fd/1", "stdout" },
                                            { "/proc/self/fd/2", "stderr" },
                                            { "pts/ptmx", "ptmx" } };

static struct mount_op *
add (struct mount_plan *p, enum mount_op_kind kind, const char *dest,
     const char *source, const char *type, char *options)
{
  struct mount_op *op;

  /* Doubling, not one more at a time: the init builds its plan inside its
   * cgroup, where sixty moves of a growing array spread over heap pages
   * the memory limit counts. */
  if (p->n == p->cap)
    {
      p->cap = p->cap ? 2 * p->cap : 32;
      p->v = xrealloc (p->v, p->cap * sizeof (*p->v));
    }
  op = &p->v[p->n++];
  *op = (struct mount_op){
    .kind = kind,
    .dest = xstrdup (dest),
    .source = source ? xstrdup (source) : NULL,
    .type = type ? xstrdup (type) : NULL,
    .options = options,
    .mount_index = (size_t)-1,
  };
  return op;
}

static char *
join (char *const *v)
{
  size_t len = 1;
  char *out;

  for (size_t i = 0; v && v[i]; i++)
    len += strlen (v[i]) + 1;
  out = xcalloc (len, 1);
  for (size_t i = 0; v && v[i]; i++)
    {
      if (i)
        strcat (out, ",");
      strcat (out, v[i]);
    }
  return out;
}

/* context="user:role:type:s0:c1,c2" (linux.mountLabel, selinux.c): its
 * commas are inside the quotes, which libmount keeps as one value. */
static bool
is_quoted_context (const char *o)
{
  size_t n = strlen (o);
  return strncmp (o, "context=\"", 9) == 0 && n > 10 && o[n - 1] == '"'
         && strchr (o + 9, '"') == o + n - 1;
}

/* Options moat understands but the kernel does not. */
static bool
option_is_runtime_only (const char *o)
{
  static const char *const names[]
      = { "tmpcopyup",   "idmap",        "ridmap",        "copy-symlink",
          "notmpcopyup", "rro",          "rrw",           "rnosuid",
          "rsuid",       "rnodev",       "rdev",          "rnoexec",
          "rexec",       "src-nofollow", "dest-nofollow", NULL };
  for (size_t i = 0; names[i]; i++)
    if (strcmp (o, names[i]) == 0)
      return true;
  return false;
}

/* The kernel's mount flags by option name, as mount(8) spells them (the
 * table of libmount's MNT_LINUX_MAP): an option in it sets its flags, or
 * clears them where it is the negation; any other is the filesystem's
 * (data). A table of our own, as crun's: loading libmount with libblkid,
 * libselinux and pcre2 for it cost about 0.4 ms of CPU per create. */
static const struct mount_flag_name
{
  const char *name;
  unsigned long flags;
  bool clear;
} mount_flag_names[] = {
  { "defaults", 0, false },
  { "ro", MS_RDONLY, false },
  { "rw", MS_RDONLY, true },
  { "exec", MS_NOEXEC, true },
  { "noexec", MS_NOEXEC, false },
  { "suid", MS_NOSUID, true },
  { "nosuid", MS_NOSUID, false },
  { "dev", MS_NODEV, true },
  { "nodev", MS_NODEV, false },
  { "sync", MS_SYNCHRONOUS, false },
  { "async", MS_SYNCHRONOUS, true },
  { "dirsync", MS_DIRSYNC, false },
  { "remount", MS_REMOUNT, false },
  { "bind", MS_BIND, false },
  { "rbind", MS_BIND | MS_REC, false },
  { "silent", MS_SILENT, false },
  { "loud", MS_SILENT, true },
  { "mand", MS_MANDLOCK, false },
  { "nomand", MS_MANDLOCK, true },
  { "atime", MS_NOATIME, true },
  { "noatime", MS_NOATIME, false },
  { "iversion", MS_I_VERSION, false },
  { "noiversion", MS_I_VERSION, true },
  { "diratime", MS_NODIRATIME, true },
  { "nodiratime", MS_NODIRATIME, false },
  { "relatime", MS_RELATIME, false },
  { "norelatime", MS_RELATIME, true },
  { "strictatime", MS_STRICTATIME, false },
  { "nostrictatime", MS_STRICTATIME, true },
  { "lazytime", MS_LAZYTIME, false },
  { "nolazytime", MS_LAZYTIME, true },
  { "nosymfollow", MS_NOSYMFOLLOW, false },
  { "symfollow", MS_NOSYMFOLLOW, true },
  { "unbindable", MS_UNBINDABLE, false },
  { "runbindable", MS_UNBINDABLE | MS_REC, false },
  { "private", MS_PRIVATE, false },
  { "rprivate", MS_PRIVATE | MS_REC, false },
  { "slave", MS_SLAVE, false },
  { "rslave", MS_SLAVE | MS_REC, false },
  { "shared", MS_SHARED, false },
  { "rshared", MS_SHARED | MS_REC, false },
  /* mount(8)'s, with the flags they imply (libmount sets them too). */
  { "user", MS_NOEXEC | MS_NOSUID | MS_NODEV, false },
  { "users", MS_NOEXEC | MS_NOSUID | MS_NODEV, false },
  { "owner", MS_NOSUID | MS_NODEV, false },
  { "group", MS_NOSUID | MS_NODEV, false },
};

static const struct mount_flag_name *
mount_flag_lookup (const char *option)
{
  for (size_t i = 0; i < sizeof (mount_flag_names) / sizeof (*mount_flag_names);
       i++)
    if (strcmp (option, mount_flag_names[i].name) == 0)
      return &mount_flag_names[i];
  return NULL;
}

/* mount(8)'s own options (libmount's MNT_USERSPACE_MAP), which neither
 * the kernel nor the filesystem sees: dropped, as libmount dropped them. */
static bool
option_is_mount8_only (const char *o)
{
  static const char *const names[]
      = { "auto",    "noauto", "nouser", "noowner", "nogroup",
          "_netdev", "nofail", "loop",   NULL };
  static const char *const prefixes[] = {
    "x-",          "X-",       "comment=", "loop=", "offset=", "sizelimit=",
    "encryption=", "uhelper=", "helper=",  "user=", NULL
  };
  for (size_t i = 0; names[i]; i++)
    if (strcmp (o, names[i]) == 0)
      return true;
  for (size_t i = 0; prefixes[i]; i++)
    if (strncmp (o, prefixes[i], strlen (prefixes[i])) == 0)
      return true;
  return false;
}

/* m's options as the executor applies them: op's flags, propagation,
 * data and recursive_ro; op->error where they cannot be. */
static void
set_mount_flags (struct mount_op *op, const struct spec_mount *m)
{
  cleanup_free char *fs = NULL;
  unsigned long flags = 0;
  size_t len = 0;
  const unsigned long prop_mask
      = MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE;

  for (char **o = m->options; o && *o; o++)
    len += strlen (*o) + 1;
  fs = xcalloc (len + 1, 1);
  for (char **o = m->options; o && *o; o++)
    {
      const struct mount_flag_name *f;
      if (strcmp (*o, "rro") == 0)
        op->recursive_ro = true;
      if (option_is_runtime_only (*o) || option_is_mount8_only (*o))
        continue;
      if (**o == '\0' || (strchr (*o, ',') && !is_quoted_context (*o)))
        {
          op->error
              = xasprintf ("mount %s: bad option \"%s\"", m->destination, *o);
          return;
        }
      f = mount_flag_lookup (*o);
      if (f && f->clear)
        flags &= ~f->flags;
      else if (f)
        flags |= f->flags;
      else
        {
          if (*fs)
            strcat (fs, ",");
          strcat (fs, *o);
        }
    }
  if (flags & prop_mask)
    op->propagation = flags & (prop_mask | MS_REC);
  op->flags = flags & ~(prop_mask);
  if (!(flags & MS_BIND))
    op->flags &= ~MS_REC;
  if (op->recursive_ro)
    op->flags |= MS_RDONLY;
  op->data = *fs ? steal_pointer (&fs) : NULL;
}

static void
add_spec_mount (struct mount_plan *p, const struct spec_mount *m, size_t i,
                enum cgroup_mode cgmode)
{
  struct mount_op *op;
  bool cgroup = false, v2 = cgmode == CGROUP_MODE_V2;

  if (mount_is_bind (m))
    op = add (p, MOUNT_OP_BIND, m->destination, m->source, NULL,
              join (m->options));
  else if (m->type && strcmp (m->type, "cgroup") == 0)
    {
      /* Always read-only. v2: the container's own subtree (its cgroup
       * namespace); v1 and hybrid: an empty tmpfs, no controller exposed. */
      cleanup_free char *opts = join (m->options);
      bool ro = false;
      for (char **o = m->options; o && *o; o++)
        ro |= strcmp (*o, "ro") == 0;
      op = add (p, MOUNT_OP_MOUNT, m->destination, v2 ? "cgroup2" : "tmpfs",
                v2 ? "cgroup2" : "tmpfs",
                xasprintf ("%s%s%s%s", opts, *opts && !ro ? "," : "",
                           ro ? "" : "ro", v2 ? "" : ",size=0,mode=555"));
      cgroup = true;
    }
  else
    op = add (p, MOUNT_OP_MOUNT, m->destination, m->source ? m->source : "none",
              m->type, join (m->options));
  op->mount_index = i;
  op->sysfs_ok = m->type && strncmp (m->type, "cgroup", 6) == 0;
  set_mount_flags (op, m);
  if (cgroup && op->error == NULL)
    {
      free (op->data);
      op->data = v2 ? NULL : xstrdup ("size=0,mode=555");
      op->flags |= MS_RDONLY;
    }
}

static void
add_dev_node (struct mount_plan *p, const char *dest, const char *host,
              unsigned major, unsigned minor)
{
  struct mount_op *op
      = add (p, MOUNT_OP_DEV_NODE, dest, host, NULL, xstrdup ("nosuid,noexec"));
  op->flags = MS_NOSUID | MS_NOEXEC;
  op->major = major;
  op->minor = minor;
}

static void
add_dev (struct mount_plan *p, const struct spec *s)
{
  for (size_t i = 0; i < N_DEFAULT_DEVS; i++)
    {
      cleanup_free char *d = xasprintf ("/dev/%s", default_devs[i].name);
      add_dev_node (p, d, d, default_devs[i].major, default_devs[i].minor);
    }
  for (size_t i = 0; i < s->linux_.n_devices; i++)
    {
      const struct spec_device *d = &s->linux_.devices[i];
      const char *name = d->path;
      /* The host node is found by number: /dev/test1 c 1:3 is /dev/null. */
      const char *host_name = name + 5;
      cleanup_free char *host = NULL;
      bool dup = false;
      if (strncmp (name, "/dev/", 5) != 0 || strchr (name + 5, '/'))
        continue; /* the profile only lets plain /dev/NAME through */
      for (size_t j = 0; j < N_DEFAULT_DEVS; j++)
        dup |= strcmp (name + 5, default_devs[j].name) == 0;
      if (dup)
        continue;
      for (size_t j = 0; j < N_DEFAULT_DEVS; j++)
        if (d->type == 'c' && default_devs[j].major == d->major
            && default_devs[j].minor == d->minor)
          host_name = default_devs[j].name;
      host = xasprintf ("/dev/%s", host_name);
      add_dev_node (p, name, host, (unsigned)d->major, (unsigned)d->minor);
    }
  for (size_t i = 0; i < sizeof (dev_links) / sizeof (dev_links[0]); i++)
    {
      cleanup_free char *d = xasprintf ("/dev/%s", dev_links[i][1]);
      add (p, MOUNT_OP_DEV_LINK, d, dev_links[i][0], NULL, NULL);
    }
}

static void
add_propagation (struct mount_plan *p, const char *name)
{
  static const struct
  {
    const char *name;
    unsigned long flags;
  } props[] = {
    { "private", MS_PRIVATE },       { "rprivate", MS_PRIVATE | MS_REC },
    { "slave", MS_SLAVE },           { "rslave", MS_SLAVE | MS_REC },
    { "shared", MS_SHARED },         { "rshared", MS_SHARED | MS_REC },
    { "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC }
  };
  struct mount_op *op
      = add (p, MOUNT_OP_PROPAGATION, "/", NULL, NULL, xstrdup (name));

  for (size_t i = 0; i < sizeof (props) / sizeof (props[0]); i++)
    if (strcmp (props[i].name, name) == 0)
      op->propagation = props[i].flags;
  if (op->propagation == 0)
    op->error = xasprintf ("linux.rootfsPropagation: unknown value %s", name);
}

void
mount_plan_build (const struct spec *s, const char *rootfs,
                  enum cgroup_mode cgmode, bool no_pivot,
                  struct mount_plan *ret)
{
  struct mount_plan p = { 0 };
  struct mount_op *op;
  bool dev = false;

  /* Nothing done in the container's mount namespace may propagate back
   * to the host: / is made a slave before the rootfs is bound. */
  op = add (&p, MOUNT_OP_ROOTFS, "/", rootfs, NULL, xstrdup ("rbind"));
  op->flags = MS_BIND | MS_REC;
  op->propagation = MS_SLAVE | MS_REC;
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      add_spec_mount (&p, &s->mounts[i], i, cgmode);
      dev |= strcmp (s->mounts[i].destination, "/dev") == 0;
    }
  if (dev)
    add_dev (&p, s);
  /* The cwd is created if missing, as runc does, while the root is still
   * writable. */
  if (s->process && s->process->cwd)
    add (&p, MOUNT_OP_MKDIR, s->process->cwd, NULL, NULL, NULL);
  op = add (&p, MOUNT_OP_PIVOT, "/", rootfs, NULL,
            xstrdup (no_pivot ? "chroot" : "pivot_root"));
  op->chroot = no_pivot;
  for (char **r = s->linux_.readonly_paths; r && *r; r++)
    {
      op = add (&p, MOUNT_OP_READONLY, *r, NULL, NULL,
                xstrdup ("rbind,ro,nosuid,nodev"));
      op->flags = MS_BIND | MS_REC | MS_RDONLY | MS_NOSUID | MS_NODEV;
    }
  for (char **m = s->linux_.masked_paths; m && *m; m++)
    add (&p, MOUNT_OP_MASK, *m, NULL, NULL, NULL);
  if (s->linux_.rootfs_propagation && *s->linux_.rootfs_propagation)
    add_propagation (&p, s->linux_.rootfs_propagation);
  /* G6/G13: once its nodes are in place (and the console), nothing more
   * may be written or run in /dev. /dev/shm, /dev/pts and /dev/mqueue are
   * mounts of their own and stay as they are. */
  if (dev)
    {
      op = add (&p, MOUNT_OP_ATTRS, "/dev", NULL, NULL, xstrdup ("ro,noexec"));
      op->attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC;
    }
  /* G5: the root is nosuid,nodev like every other mount; an image's
   * setuid files and device nodes mean nothing in the container. */
  op = add (&p, MOUNT_OP_ROOT_ATTRS, "/", NULL, NULL,
            xstrdup (s->root_readonly ? "ro,nosuid,nodev" : "nosuid,nodev"));
  op->attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
              | (s->root_readonly ? MOUNT_ATTR_RDONLY : 0);
  *ret = p;
}

void
mount_plan_clear (struct mount_plan *plan)
{
  for (size_t i = 0; i < plan->n; i++)
    {
      free (plan->v[i].dest);
      free (plan->v[i].source);
      free (plan->v[i].type);
      free (plan->v[i].options);
      free (plan->v[i].data);
      free (plan->v[i].error);
    }
  free (plan->v);
  plan->v = NULL;
  plan->n = plan->cap = 0;
}

const char *
mount_op_kind_name (enum mount_op_kind k)
{
  static const char *const names[] = {
    [MOUNT_OP_ROOTFS] = "rootfs",     [MOUNT_OP_BIND] = "bind",
    [MOUNT_OP_MOUNT] = "mount",       [MOUNT_OP_DEV_NODE] = "dev-node",
    [MOUNT_OP_DEV_LINK] = "dev-link", [MOUNT_OP_MKDIR] = "mkdir",
    [MOUNT_OP_PIVOT] = "pivot",       [MOUNT_OP_READONLY] = "read-only",
    [MOUNT_OP_MASK] = "mask",         [MOUNT_OP_PROPAGATION] = "propagation",
    [MOUNT_OP_ATTRS] = "attrs",       [MOUNT_OP_ROOT_ATTRS] = "root-attrs",
  };
  return names[k];
}

char *
mount_op_text (const struct mount_op *op)
{
  const char *o = op->options ? op->options : "";
  const char *k = mount_op_kind_name (op->kind);

  switch (op->kind)
    {
    case MOUNT_OP_ROOTFS:
      return xasprintf ("%s %s: / made slave, the rootfs bound on itself "
                        "(%s)",
                        k, op->source, o);
    case MOUNT_OP_BIND:
    case MOUNT_OP_DEV_NODE:
      return xasprintf ("%s %s at %s (%s)", k, op->source, op->dest, o);
    case MOUNT_OP_MOUNT:
      return xasprintf ("%s %s %s at %s (%s)", k, op->type, op->source,
                        op->dest, o);
    case MOUNT_OP_DEV_LINK:
      return xasprintf ("%s %s -> %s", k, op->dest, op->source);
    case MOUNT_OP_PIVOT:
      return xasprintf ("%s into %s (%s)", k, op->source, o);
    case MOUNT_OP_READONLY:
      return xasprintf ("%s %s (%s)", k, op->dest, o);
    case MOUNT_OP_MASK:
      return xasprintf ("%s %s", k, op->dest);
    case MOUNT_OP_MKDIR:
    case MOUNT_OP_PROPAGATION:
    case MOUNT_OP_ATTRS:
    case MOUNT_OP_ROOT_ATTRS:
      return op->options ? xasprintf ("%s %s (%s)", k, op->dest, o)
                         : xasprintf ("%s %s", k, op->dest);
    }
  return xstrdup (k);
}
