/* moat-dl: where a statically linked moat finds the dynamically linked one
 * (dynlib.h), and hands an invocation over to it. */
#include "dynlib.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

#ifndef MOAT_LIBEXECDIR
#define MOAT_LIBEXECDIR "/usr/local/libexec"
#endif

int
dynlib_helper_path (char **ret, struct moat_error **err)
{
  char self[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof (self) - 1);
  char *slash;
  char *tries[3] = { NULL, NULL, NULL };
  int r;

  if (n > 0)
    {
      self[n] = '\0';
      slash = strrchr (self, '/');
      if (slash)
        {
          *slash = '\0';
          tries[0] = xasprintf ("%s/moat-dl", self);
          tries[1] = xasprintf ("%s/../libexec/moat/moat-dl", self);
        }
    }
  tries[2] = xstrdup (MOAT_LIBEXECDIR "/moat/moat-dl");
  for (size_t i = 0; i < 3; i++)
    if (tries[i] && access (tries[i], X_OK) == 0)
      {
        *ret = tries[i];
        tries[i] = NULL;
        for (size_t j = 0; j < 3; j++)
          free (tries[j]);
        return 0;
      }
  r = moat_error_setx (
      err, ENOENT, "moat-dl: not found (looked for %s%s%s%s%s)",
      tries[0] ? tries[0] : "", tries[0] ? ", " : "", tries[1] ? tries[1] : "",
      tries[1] ? ", " : "", tries[2]);
  for (size_t j = 0; j < 3; j++)
    free (tries[j]);
  return r;
}

int
dynlib_reexec (char *const *argv, const char *why, struct moat_error **err)
{
  cleanup_free char *path = NULL;

  if (!dynlib_static ())
    return 0;
  if (dynlib_helper_path (&path, err) < 0)
    return moat_error_wrap (err, "%s needs moat-dl", why);
  execv (path, argv);
  return moat_fail (err, errno, "%s needs moat-dl: running %s", why, path);
}
