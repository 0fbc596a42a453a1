/* cgroupsPath from config.json -> the path of the container's cgroup
 * below every hierarchy's mount, refusing anything that could name a
 * directory outside it. */
#include "cgroup_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/util.h"

#define MAX_PATH_LEN 4096

static bool
has_suffix (const char *s, const char *suffix)
{
  size_t n = strlen (s), m = strlen (suffix);
  return n >= m && strcmp (s + n - m, suffix) == 0;
}

/* systemd names nested slices with dashes: "a-b.slice" lives in
 * "/a.slice/a-b.slice". "-.slice" (or "-") is the root slice. */
static int
expand_slice (const char *slice, char **ret, struct moat_error **err)
{
  cleanup_free char *path = xstrdup ("");
  cleanup_free char *base = NULL;
  size_t len;

  if (strcmp (slice, "-") == 0 || strcmp (slice, "-.slice") == 0)
    {
      *ret = steal_pointer (&path);
      return 0;
    }
  len = strlen (slice);
  if (!has_suffix (slice, ".slice") || len == strlen (".slice")
      || strchr (slice, '/'))
    return moat_fail (err, EINVAL, "cgroupsPath: invalid slice name `%s`",
                      slice);
  base = cg_strndup (slice, len - strlen (".slice"));
  if (base[0] == '-' || has_suffix (base, "-") || strstr (base, "--"))
    return moat_fail (err, EINVAL, "cgroupsPath: invalid slice name `%s`",
                      slice);
  for (char *dash = base;; dash++)
    {
      dash = strchr (dash, '-');
      char *next;
      if (dash)
        *dash = '\0';
      next = xasprintf ("%s/%s.slice", path, base);
      free (path);
      path = next;
      if (dash == NULL)
        break;
      *dash = '-';
    }
  *ret = steal_pointer (&path);
  return 0;
}

/* Split "slice:prefix:name" as runc and crun read it for their systemd
 * driver: *ret_slice is the slice ("system.slice" when empty), *ret_unit
 * the unit ("prefix-name.scope", "name.scope", or name itself when it is
 * a ".slice"). */
int
cg_systemd_unit (const char *spec, char **ret_slice, char **ret_unit,
                 struct moat_error **err)
{
  cleanup_free char *copy = xstrdup (spec);
  char *slice = copy, *prefix, *name;

  prefix = strchr (slice, ':');
  name = prefix ? strchr (prefix + 1, ':') : NULL;
  if (name == NULL || strchr (name + 1, ':'))
    return moat_fail (err, EINVAL,
                      "cgroupsPath `%s`: expected slice:prefix:name", spec);
  *prefix++ = '\0';
  *name++ = '\0';
  if (*name == '\0' || strchr (name, '/') || strchr (prefix, '/'))
    return moat_fail (err, EINVAL,
                      "cgroupsPath `%s`: expected slice:prefix:name", spec);
  *ret_slice = xstrdup (*slice ? slice : "system.slice");
  if (has_suffix (name, ".slice"))
    *ret_unit = xstrdup (name);
  else if (*prefix)
    *ret_unit = xasprintf ("%s-%s.scope", prefix, name);
  else
    *ret_unit = xasprintf ("%s.scope", name);
  return 0;
}

/* The same directory systemd would give that unit, for the cgroupfs
 * mapping where no systemd runs (and to check systemd's answer where it
 * does). */
static int
map_systemd_path (const char *spec, char **ret, struct moat_error **err)
{
  cleanup_free char *slice = NULL, *unit = NULL, *slice_path = NULL;
  int r = cg_systemd_unit (spec, &slice, &unit, err);
  if (r < 0)
    return r;
  r = expand_slice (slice, &slice_path, err);
  if (r < 0)
    return r;
  *ret = xasprintf ("%s/%s", slice_path, unit);
  return 0;
}

/* Fold "//" and a trailing "/"; refuse "." and ".." components, control
 * characters, and the root itself. */
int
cg_normalize_rel (const char *path, char **ret, struct moat_error **err)
{
  size_t len = strlen (path);
  cleanup_free char *out = xmalloc (len + 2);
  size_t n = 0;
  const char *p = path;

  if (len > MAX_PATH_LEN)
    return moat_fail (err, ENAMETOOLONG, "cgroupsPath: too long");
  while (*p)
    {
      const char *end;
      size_t clen;
      while (*p == '/')
        p++;
      if (*p == '\0')
        break;
      end = strchrnul (p, '/');
      clen = (size_t)(end - p);
      if ((clen == 1 && p[0] == '.')
          || (clen == 2 && p[0] == '.' && p[1] == '.'))
        return moat_fail (err, EINVAL,
                          "cgroupsPath `%s`: \".\" and \"..\" are not allowed",
                          path);
      for (size_t i = 0; i < clen; i++)
        if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
          return moat_fail (err, EINVAL,
                            "cgroupsPath: control characters are not allowed");
      out[n++] = '/';
      memcpy (out + n, p, clen);
      n += clen;
      p = end;
    }
  if (n == 0)
    return moat_fail (err, EINVAL,
                      "cgroupsPath `%s`: the root cgroup cannot be used", path);
  out[n] = '\0';
  *ret = steal_pointer (&out);
  return 0;
}

static bool
looks_like_systemd_path (const char *path)
{
  const char *first = strchr (path, ':');
  return path[0] != '/' && first && strchr (first + 1, ':')
         && !strchr (path, '/');
}

bool
cg_is_systemd_form (const char *cgroups_path, bool systemd)
{
  return cgroups_path && *cgroups_path
         && ((systemd && cgroups_path[0] != '/')
             || looks_like_systemd_path (cgroups_path));
}

int
cgroup_resolve_path (const char *cgroups_path, const char *id, bool systemd,
                     char **ret_rel, struct moat_error **err)
{
  cleanup_free char *joined = NULL;
  int r;

  if (cgroups_path == NULL || *cgroups_path == '\0')
    {
      if (id == NULL || *id == '\0' || strchr (id, '/'))
        return moat_fail (err, EINVAL, "cgroup path: invalid container id");
      joined = xasprintf ("/moat/%s", id);
    }
  else if (strpbrk (cgroups_path, "\n\r"))
    return moat_fail (err, EINVAL,
                      "cgroupsPath: control characters are not allowed");
  else if (cg_is_systemd_form (cgroups_path, systemd))
    {
      r = map_systemd_path (cgroups_path, &joined, err);
      if (r < 0)
        return r;
    }
  else
    joined = xasprintf ("/%s", cgroups_path);
  return cg_normalize_rel (joined, ret_rel, err);
}
