/* SHA-256 by nettle, loaded on first use (lib/dynlib.h): the digests of OCI
 * image blobs and the audit log's digest of config.json. Verbs that digest
 * nothing (state, list, kill, start) never map it. */
#ifndef MOAT_SHA256_H
#define MOAT_SHA256_H

#include <nettle/sha2.h>
#include <stddef.h>

#include "../lib/error.h"

struct sha256
{
  struct sha256_ctx ctx;
};

/* Load nettle (once) and begin a digest. */
int sha256_start (struct sha256 *c, struct moat_error **err);
void sha256_feed (struct sha256 *c, const void *data, size_t len);
/* 64 lowercase hex digits and a NUL into hex. */
void sha256_finish_hex (struct sha256 *c, char hex[65]);
/* One call for data in memory. */
int sha256_hex_of (const void *data, size_t len, char hex[65],
                   struct moat_error **err);

#endif
