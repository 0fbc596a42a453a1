/* The mount setup as a list: see mount_ops.h. The order is rootfs.c's:
 * rootfs_prepare (the rootfs, mounts[] in order, /dev's nodes and links,
 * the cwd), rootfs_pivot, rootfs_finish (read-only paths, masks,
 * propagation, the root's own attributes). */
#include "mount_ops.h"

#include <stdlib.h>
#include <string.h>

#include "linux.h"
#include "../lib/util.h"

/* The nodes every /dev gets (rootfs.c's default_devs). */
static const char *const default_dev_nodes[]
    = { "null", "zero", "full", "random", "urandom", "tty", NULL };
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

  p->v = xrealloc (p->v, (p->n + 1) * sizeof (*p->v));
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

static void
add_spec_mount (struct mount_plan *p, const struct spec_mount *m, size_t i,
                enum cgroup_mode cgmode)
{
  struct mount_op *op;

  if (mount_is_bind (m))
    op = add (p, MOUNT_OP_BIND, m->destination, m->source, NULL,
              join (m->options));
  else if (m->type && strcmp (m->type, "cgroup") == 0)
    {
      /* Always read-only. v2: the container's own subtree (its cgroup
       * namespace); v1 and hybrid: an empty tmpfs, no controller exposed. */
      bool v2 = cgmode == CGROUP_MODE_V2;
      cleanup_free char *opts = join (m->options);
      bool ro = false;
      for (char **o = m->options; o && *o; o++)
        ro |= strcmp (*o, "ro") == 0;
      op = add (p, MOUNT_OP_MOUNT, m->destination, v2 ? "cgroup2" : "tmpfs",
                v2 ? "cgroup2" : "tmpfs",
                xasprintf ("%s%s%s%s", opts, *opts && !ro ? "," : "",
                           ro ? "" : "ro", v2 ? "" : ",size=0,mode=555"));
    }
  else
    op = add (p, MOUNT_OP_MOUNT, m->destination, m->source ? m->source : "none",
              m->type, join (m->options));
  op->mount_index = i;
}

static void
add_dev (struct mount_plan *p, const struct spec *s)
{
  for (size_t i = 0; default_dev_nodes[i]; i++)
    {
      cleanup_free char *d = xasprintf ("/dev/%s", default_dev_nodes[i]);
      add (p, MOUNT_OP_DEV_NODE, d, d, NULL, xstrdup ("nosuid,noexec"));
    }
  for (size_t i = 0; i < s->linux_.n_devices; i++)
    {
      const char *name = s->linux_.devices[i].path;
      bool dup = false;
      if (strncmp (name, "/dev/", 5) != 0 || strchr (name + 5, '/'))
        continue;
      for (size_t j = 0; default_dev_nodes[j]; j++)
        dup |= strcmp (name + 5, default_dev_nodes[j]) == 0;
      if (!dup)
        add (p, MOUNT_OP_DEV_NODE, name, name, NULL, xstrdup ("nosuid,noexec"));
    }
  for (size_t i = 0; i < sizeof (dev_links) / sizeof (dev_links[0]); i++)
    {
      cleanup_free char *d = xasprintf ("/dev/%s", dev_links[i][1]);
      add (p, MOUNT_OP_DEV_LINK, d, dev_links[i][0], NULL, NULL);
    }
}

void
mount_plan_build (const struct spec *s, const char *rootfs,
                  enum cgroup_mode cgmode, bool no_pivot,
                  struct mount_plan *ret)
{
  struct mount_plan p = { 0 };
  bool dev = false;

  add (&p, MOUNT_OP_ROOTFS, "/", rootfs, NULL, xstrdup ("rbind"));
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      add_spec_mount (&p, &s->mounts[i], i, cgmode);
      dev |= strcmp (s->mounts[i].destination, "/dev") == 0;
    }
  if (dev)
    add_dev (&p, s);
  if (s->process && s->process->cwd)
    add (&p, MOUNT_OP_MKDIR, s->process->cwd, NULL, NULL, NULL);
  add (&p, MOUNT_OP_PIVOT, "/", rootfs, NULL,
       xstrdup (no_pivot ? "chroot" : "pivot_root"));
  for (char **r = s->linux_.readonly_paths; r && *r; r++)
    add (&p, MOUNT_OP_READONLY, *r, NULL, NULL,
         xstrdup ("rbind,ro,nosuid,nodev"));
  for (char **m = s->linux_.masked_paths; m && *m; m++)
    add (&p, MOUNT_OP_MASK, *m, NULL, NULL, NULL);
  if (s->linux_.rootfs_propagation && *s->linux_.rootfs_propagation)
    add (&p, MOUNT_OP_PROPAGATION, "/", NULL, NULL,
         xstrdup (s->linux_.rootfs_propagation));
  /* G6/G13: once its nodes are in place, /dev is read-only and noexec. */
  if (dev)
    add (&p, MOUNT_OP_ATTRS, "/dev", NULL, NULL, xstrdup ("ro,noexec"));
  add (&p, MOUNT_OP_ROOT_ATTRS, "/", NULL, NULL,
       xstrdup (s->root_readonly ? "ro,nosuid,nodev" : "nosuid,nodev"));
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
    }
  free (plan->v);
  plan->v = NULL;
  plan->n = 0;
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
