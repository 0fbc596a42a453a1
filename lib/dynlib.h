/* Optional shared libraries, loaded on first use (as systemd loads its
 * optional ones): a verb that never unpacks an image or talks to systemd
 * maps neither libarchive nor sd-bus, nor the dozen libraries they pull in.
 * The caller keeps one pointer per function, named sym_<function> and typed
 * from the library's own header, so a prototype cannot drift. */
#ifndef MOAT_DYNLIB_H
#define MOAT_DYNLIB_H

#include <stdbool.h>
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

/* Is this moat linked statically (make's STATIC=1, the default; see
 * dynlib_static.c)? Then dynlib_load always fails, and what needs a library
 * runs in moat-dl, the same program linked dynamically, installed with it. */
bool dynlib_static (void);

/* moat-dl's path: beside this program (the build tree), in
 * ../libexec/moat/ from it (an install), or in the LIBEXECDIR it was built
 * for. "moat-dl: not found (looked in ...)" if none is executable. */
int dynlib_helper_path (char **ret, struct moat_error **err);

/* In a static moat: become moat-dl with the same arguments (returns only
 * on failure, "WHY needs moat-dl: ..."). In moat-dl and in a dynamically
 * linked moat: 0 at once. */
int dynlib_reexec (char *const *argv, const char *why, struct moat_error **err);

#endif
