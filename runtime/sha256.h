/* SHA-256 (FIPS 180-4), for the digests of OCI image blobs and the audit
 * log's digest of config.json: small enough not to link a crypto library. */
#ifndef MOAT_SHA256_H
#define MOAT_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256
{
  uint32_t h[8];
  uint64_t len;
  uint8_t buf[64];
  size_t n;
};

void sha256_init (struct sha256 *c);
void sha256_update (struct sha256 *c, const void *data, size_t len);
/* 64 lowercase hex digits and a NUL into hex. */
void sha256_final_hex (struct sha256 *c, char hex[65]);
/* One call for data in memory. */
void sha256_hex (const void *data, size_t len, char hex[65]);

#endif
