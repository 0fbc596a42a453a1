#include "dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>

static bool sealed;

bool
dynlib_static (void)
{
  return false;
}

void
dynlib_seal (void)
{
  sealed = true;
}

int
dynlib_load (struct dynlib *lib, const struct dynlib_symbol *syms,
             size_t n_syms, struct moat_error **err)
{
  void *handle;

  if (lib->handle)
    return 0;
  if (sealed)
    return moat_error_setx (err, EPERM,
                            "loading %s: refused inside a container's "
                            "namespaces (its files are not moat's)",
                            lib->soname);
  handle = dlopen (lib->soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL)
    return moat_error_setx (err, ENOENT, "loading %s: %s", lib->soname,
                            dlerror ());
  for (size_t i = 0; i < n_syms; i++)
    {
      *syms[i].slot = dlsym (handle, syms[i].name);
      if (*syms[i].slot == NULL)
        {
          int r = moat_error_setx (err, ENOENT, "loading %s: no symbol %s",
                                   lib->soname, syms[i].name);
          for (size_t j = 0; j <= i; j++)
            *syms[j].slot = NULL;
          dlclose (handle);
          return r;
        }
    }
  lib->handle = handle;
  return 0;
}
