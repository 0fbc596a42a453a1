/* The profile's scratch mounts a read-only rootfs cannot take: create finds
 * which mount points are missing before judging (a fact), the policy
 * leaves those tmpfs out and says so. */
#include "profile.h"
#include "profile_internal.h"
#include "verdicts.h"
#include "../lib/util.h"

#include <stdio.h>
#include <string.h>

const char *const profile_scratch_points[]
    = { "/tmp", "/var/tmp", "/dev/shm", NULL };

/* Is the mount point of spec's mount self inside another mount (made there,
 * not in the rootfs)? */
static bool
mount_inside_other (const struct spec *spec, size_t self, const char *dest)
{
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      cleanup_free char *d = profile_path_normalize (
          spec->mounts[i].destination ? spec->mounts[i].destination : "");
      if (i != self && strcmp (d, "/") != 0 && strcmp (d, dest) != 0
          && profile_path_in_tree (dest, d))
        return true;
    }
  return false;
}

static bool
scratch_unplaceable (const char *dest, unsigned unplaceable)
{
  for (unsigned k = 0; profile_scratch_points[k]; k++)
    if ((unplaceable & (1u << k))
        && strcmp (profile_scratch_points[k], dest) == 0)
      return true;
  return false;
}

/* Images built FROM scratch, distroless ones, have no /tmp or /var/tmp; a
 * read-only rootfs cannot take the directory. Without it there is nothing
 * to cover and nothing the container could write there either (its root
 * ends read-only, G5), so the profile's tmpfs is left out and told. */
void
profile_drop_unplaceable_scratch (struct spec *spec, unsigned unplaceable,
                                  struct override_list *ov)
{
  size_t kept = 0;
  cleanup_free bool *drop = xcalloc (spec->n_mounts + 1, sizeof (bool));

  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const char *dest = spec->mounts[i].destination;
      cleanup_free char *path = NULL;

      if (!spec->mounts[i].profile_added
          || !scratch_unplaceable (dest, unplaceable)
          || mount_inside_other (spec, i, dest))
        continue;
      path = xasprintf ("mounts[%s]", dest);
      override_list_add (ov, OVERRIDE_CHANGED, path, "added by the profile",
                         "not mounted: the rootfs is read-only and has no "
                         "such directory");
      fprintf (stderr,
               "moat: warning: %s: the profile's tmpfs is not mounted: the "
               "rootfs is read-only and has no %s\n",
               path, dest);
      drop[i] = true;
    }
  for (size_t i = 0; i < spec->n_mounts; i++)
    if (drop[i])
      spec_mount_clear (&spec->mounts[i]);
    else
      spec->mounts[kept++] = spec->mounts[i];
  spec->n_mounts = kept;
}
