/* Optional shared libraries, loaded on first use (as systemd loads its
 * optional ones): a verb that never unpacks an image or talks to systemd
 * maps neither libarchive nor sd-bus, nor the dozen libraries they pull in.
 * The caller keeps one pointer per function, named sym_<function> and typed
 * from the library's own header, so a prototype cannot drift. */
#ifndef MOAT_DYNLIB_H
#define MOAT_DYNLIB_H

#include <stddef.h>

#include "error.h"

struct dynlib
{
  const char *soname; /* "libarchive.so.13": the ABI the header describes */
  void *handle;       /* set once loaded; never closed */
};

struct dynlib_symbol
{
  const char *name;
  void **slot;
};

/* static typeof (f) *sym_f; */
#define DYNLIB_DECLARE(f) static __typeof__ (f) *sym_##f
/* { "f", &sym_f }, for the table given to dynlib_load. */
#define DYNLIB_SYMBOL(f)                                                       \
  {                                                                            \
#f, (void **)&sym_##f                                                      \
  }

/* Load lib and fill every slot, once; later calls return 0 at once. On
 * failure nothing is kept: "loading SONAME: why". */
int dynlib_load (struct dynlib *lib, const struct dynlib_symbol *syms,
                 size_t n_syms, struct moat_error **err);

/* From here on this process loads nothing more: it is entering a
 * container's namespaces, where the dynamic loader would read the
 * container's /etc/ld.so.cache and /lib, files its hostile code may have
 * written. What it needs is loaded before (libraries loaded stay). */
void dynlib_seal (void);

#endif
