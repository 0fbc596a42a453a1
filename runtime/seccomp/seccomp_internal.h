/* Shared by runtime/seccomp.c (config.json's filter, loading) and
 * runtime/seccomp_builtin.c (the G8 policy). Not an interface for other
 * modules: they use seccomp.h. */
#ifndef MOAT_SECCOMP_INTERNAL_H
#define MOAT_SECCOMP_INTERNAL_H

#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* The agent level's table (seccomp_level.c). */
bool seccomp_agent_allows (const char *name);
/* h extended by the agent level's list, for the filter cache's key. */
uint64_t seccomp_agent_key (uint64_t h);

/* Read exactly len bytes from offset 0 of fd. */
int seccomp_read_fd (int fd, void *buf, size_t len, struct moat_error **err);

/* Best effort: a cache that cannot be written only costs the compile. */
void seccomp_cache_write (const char *dir, const char *path, const char *buf,
                          size_t len);

#endif
