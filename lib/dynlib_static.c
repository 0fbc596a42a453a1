/* dynlib.h for the statically linked moat (make's STATIC=1, the default),
 * linked in place of dynlib.c: a static glibc cannot load shared libraries
 * safely (the library would bring a second libc), so this moat loads none.
 * What needs libselinux, libarchive or libsystemd runs in moat-dl, the same
 * program linked dynamically (dynlib_helper.c finds it): the whole
 * invocation (dynlib_reexec) or one call (the systemd driver's). */
#include "dynlib.h"

#include <errno.h>

bool
dynlib_static (void)
{
  return true;
}

void
dynlib_seal (void)
{
}

/* Every caller is reached only through moat-dl: one that is not is a bug,
 * told as such rather than a crash. */
int
dynlib_load (struct dynlib *lib, const struct dynlib_symbol *syms,
             size_t n_syms, struct moat_error **err)
{
  (void)syms;
  (void)n_syms;
  return moat_error_setx (err, ENOEXEC,
                          "loading %s: this moat is linked statically and "
                          "loads no library (moat-dl should have done this)",
                          lib->soname);
}
