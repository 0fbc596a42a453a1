/* --workdir of `moat sandbox` and `moat session create`: the host
 * directory bound writable and executable at /work. A payload may have
 * planted links in trees it wrote before (another session's workdir), so
 * the path is walked without following any, and the directory it reaches
 * is judged by the policy (profile_workdir_refusal) on what it is: its
 * real path, its owner and mode, and whose it is to give. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox_internal.h"
#include "../runtime/container.h"
#include "../lib/hostpath.h"
#include "../lib/util.h"

/* The caller: the user sudo ran moat for (root's word, as only root runs
 * moat), else the real uid. */
static uid_t
caller_uid (void)
{
  const char *s = getenv ("SUDO_UID");
  int64_t v;

  if (getuid () == 0 && s && parse_int64 (s, &v) == 0 && v >= 0
      && v < (int64_t)UINT32_MAX)
    return (uid_t)v;
  return getuid ();
}

/* The real path of what a path names, where it exists (moat's own dirs:
 * a link on the way would hide that the workdir is in them). */
static char *
real_or_as_is (const char *path)
{
  char *real = path ? realpath (path, NULL) : NULL;
  return real ? real : (path ? xstrdup (path) : NULL);
}

int
sandbox_workdir_resolve (const struct moat_globals *g, const char *workdir,
                         char **ret, struct moat_error **err)
{
  cleanup_close int fd = -1;
  cleanup_free char *state_root = NULL, *image_cache = NULL;
  char link[64], real[PATH_MAX];
  struct workdir_facts f;
  struct stat st;
  const char *why;
  ssize_t n;

  fd = hostpath_open (workdir, O_PATH | O_DIRECTORY, 0);
  if (fd == -ELOOP)
    return moat_fail (err, 0, "--workdir %s: %s (give the directory itself)",
                      workdir, HOSTPATH_LINK_TEXT);
  if (fd < 0)
    return moat_fail (err, -fd, "--workdir %s", workdir);
  snprintf (link, sizeof (link), "/proc/self/fd/%d", fd);
  n = readlink (link, real, sizeof (real) - 1);
  if (n < 0 || fstat (fd, &st) < 0)
    return moat_fail (err, errno, "--workdir %s", workdir);
  real[n] = '\0';
  if (real[0] != '/')
    return moat_fail (err, 0, "--workdir %s: not reachable from /", workdir);
  state_root = real_or_as_is (g->root);
  image_cache = real_or_as_is (g->operator_config->image_cache);
  f = (struct workdir_facts){ .path = real,
                              .owner = st.st_uid,
                              .mode = st.st_mode,
                              .caller = caller_uid (),
                              .state_root = state_root,
                              .image_cache = image_cache };
  why = profile_workdir_refusal (&f, g->operator_config);
  if (why)
    return moat_fail (err, 0,
                      "--workdir %s: %s: a workdir is a directory of the "
                      "caller's outside the system trees, or one in "
                      "writable_bind_trees",
                      workdir, why);
  *ret = xstrdup (real);
  return 0;
}
