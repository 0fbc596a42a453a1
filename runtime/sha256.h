/* SHA-256 (FIPS 180-4), for the audit log's digest of config.json: small
 * enough not to link a crypto library into every verb. */
#ifndef MOAT_SHA256_H
#define MOAT_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* hex: 65 bytes, the lower-case hex digest and a NUL. */
void sha256_hex (const void *data, size_t len, char hex[65]);

#endif
