/* Shared by runtime/seccomp.c (config.json's filter, loading) and
 * runtime/seccomp_builtin.c (the G8 policy). Not an interface for other
 * modules: they use seccomp.h. */
#ifndef MOAT_SECCOMP_INTERNAL_H
#define MOAT_SECCOMP_INTERNAL_H

#include <seccomp.h>

#include "seccomp.h"

static inline void
cleanup_scmp_ctxp (scmp_filter_ctx *ctx)
{
  if (*ctx)
    seccomp_release (*ctx);
}
#define cleanup_scmp_ctx __attribute__ ((cleanup (cleanup_scmp_ctxp)))

/* Export ctx as classic BPF into ret->insns (flags untouched). libseccomp
 * 2.5 can only export to an fd, so this goes through a memfd. */
int seccomp_ctx_export (scmp_filter_ctx ctx, struct seccomp_prog *ret,
                        struct moat_error **err);

/* Read exactly len bytes from offset 0 of fd. */
int seccomp_read_fd (int fd, void *buf, size_t len, struct moat_error **err);

#endif
