/* G12's rootfs probe, remembered. The probe (a user namespace of its own,
 * a clone of the rootfs' tree idmapped with it, then dropped) was some 5 %
 * of a `run`'s CPU (bench/ROUNDS.md, round twelve). What the kernel checks
 * of each mount of a detached clone is its filesystem's type (which types
 * can be idmapped), whether it is idmapped already, and whether the caller
 * has CAP_SYS_ADMIN over its superblock's owner (host root always does).
 * So once a probe has idmapped a tree whose mounts are of types T, a tree
 * whose mounts are all of types in T, none idmapped, can be too, on the
 * same kernel. The types a probe passed are kept in ROOT/.cache/idmap,
 * with the kernel they were found on; a rootfs whose mounts (the one that
 * holds it and every one below it, from /proc/self/mountinfo) are all of
 * such types and none idmapped is not probed again (where moat runs in the
 * initial user namespace). Only passes are kept: a refusal is probed each
 * time, so nothing can be refused from the cache.
 * A wrong "can" (a file planted by root) would only make create's own
 * idmap fail, and create with it. The directory comes open from create,
 * checked as the state root is; the file is opened beside it, never
 * through a link. */
#include "idmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/util.h"

#define CACHE_FILE "idmap"
#define CACHE_MAX 4096

struct fs_types
{
  char *v[32];
  size_t n;
  bool idmapped; /* a mount of the tree is idmapped already */
  bool too_many;
};

static void
add_type (struct fs_types *t, const char *type)
{
  for (size_t i = 0; i < t->n; i++)
    if (strcmp (t->v[i], type) == 0)
      return;
  if (t->n == sizeof (t->v) / sizeof (t->v[0]))
    t->too_many = true;
  else
    t->v[t->n++] = xstrdup (type);
}

static void
clear_types (struct fs_types *t)
{
  for (size_t i = 0; i < t->n; i++)
    free (t->v[i]);
  t->n = 0;
}

static bool
has_option (const char *opts, const char *want)
{
  size_t n = strlen (want);
  for (const char *p = opts; p && *p; p = strchr (p, ','), p = p ? p + 1 : p)
    if (strncmp (p, want, n) == 0 && (p[n] == ',' || p[n] == '\0'))
      return true;
  return false;
}

/* The types of the mounts of the tree at rootfs (resolved): the mount
 * holding it (by its id) and every mount at or below it. -1 where that
 * cannot be read. */
static int
tree_types (const char *rootfs, struct fs_types *t)
{
  cleanup_free char *line = NULL;
  size_t cap = 0;
  struct statx stx;
  FILE *f;

  if (statx (AT_FDCWD, rootfs, 0, STATX_MNT_ID, &stx) < 0
      || !(stx.stx_mask & STATX_MNT_ID))
    return -1;
  f = fopen ("/proc/self/mountinfo", "re");
  if (f == NULL)
    return -1;
  while (getline (&line, &cap, f) > 0)
    {
      struct mountinfo_entry e;

      if (mountinfo_split (line, &e) < 0
          || (e.id != stx.stx_mnt_id
              && !path_at_or_below (e.mount_point, rootfs)))
        continue;
      add_type (t, e.fstype);
      if (has_option (e.options, "idmapped"))
        t->idmapped = true;
    }
  fclose (f);
  return t->n > 0 && !t->too_many ? 0 : -1;
}

/* Root of the initial user namespace may act for every superblock's
 * owner; moat run in another user namespace may not, and that is a fact
 * of each superblock, which a type does not name: there every rootfs is
 * probed. */
static bool
in_initial_userns (void)
{
  cleanup_close int fd = open ("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
  char buf[128];
  unsigned long inside, outside, count;
  ssize_t len;
  int used = 0;

  if (fd < 0 || (len = read (fd, buf, sizeof (buf) - 1)) <= 0)
    return false;
  buf[len] = '\0';
  return sscanf (buf, "%lu %lu %lu %n", &inside, &outside, &count, &used) == 3
         && inside == 0 && outside == 0 && count == 4294967295UL
         && buf[used] == '\0';
}

static const char *
kernel_line (void)
{
  static char line[512];
  if (line[0] == '\0')
    snprintf (line, sizeof (line), "kernel %s\n", kernel_identity ());
  return line;
}

/* The cache's text after its kernel line, if it is ours (root's, written
 * by nobody else) and of this kernel; else NULL. */
static char *
cache_read (int cache_fd)
{
  cleanup_free char *buf = NULL;
  const char *k = kernel_line ();
  size_t len, klen = strlen (k);

  if (read_trusted_file_at (cache_fd, CACHE_FILE, klen, CACHE_MAX, &buf, &len)
          < 0
      || memcmp (buf, k, klen) != 0)
    return NULL;
  return xasprintf ("%.*s", (int)(len - klen), buf + klen);
}

static bool
listed (const char *text, const char *type)
{
  size_t n = strlen (type);
  for (const char *p = text; p && *p; p = strchr (p, '\n'), p = p ? p + 1 : p)
    if (strncmp (p, type, n) == 0 && p[n] == '\n')
      return true;
  return false;
}

void
idmap_probe_rootfs_cached (struct idmap_probe *p, const char *rootfs,
                           int cache_fd, int *ret_direct, int *ret_rebuild)
{
  cleanup_free char *text = NULL;
  struct fs_types t = { .n = 0 };
  bool usable = false, known = false;

  if (cache_fd >= 0 && in_initial_userns () && tree_types (rootfs, &t) == 0
      && !t.idmapped)
    {
      usable = true;
      text = cache_read (cache_fd);
      known = text != NULL;
      for (size_t i = 0; known && i < t.n; i++)
        known = listed (text, t.v[i]);
    }
  if (known)
    {
      /* The probe's namespace is made later only if a bind needs it. */
      *ret_direct = *ret_rebuild = 0;
      clear_types (&t);
      return;
    }
  idmap_probe_open (p);
  idmap_probe_rootfs (p, rootfs, ret_direct, ret_rebuild);
  if (usable && *ret_direct == 0)
    {
      /* Kept: what the file had, and these types. */
      cleanup_free char *out = NULL;
      size_t len = 0;
      FILE *f = open_memstream (&out, &len);
      if (f)
        {
          fputs (kernel_line (), f);
          if (text)
            fputs (text, f);
          for (size_t i = 0; i < t.n; i++)
            if (!text || !listed (text, t.v[i]))
              fprintf (f, "%s\n", t.v[i]);
          if (fclose (f) == 0 && len <= CACHE_MAX)
            (void)write_file_atomic (cache_fd, CACHE_FILE, out, len, 0600);
        }
    }
  clear_types (&t);
}
