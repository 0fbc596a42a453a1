#include "sha256.h"

#include "../lib/dynlib.h"

#if MOAT_NETTLE_LINKED
/* Linked in from nettle's archive (Makefile): nothing to load. */
#define NETTLE(f) f
static int
nettle_ready (struct moat_error **err)
{
  (void)err;
  return 0;
}
#else
static struct dynlib libnettle = { .soname = "libnettle.so.8" };
DYNLIB_DECLARE (nettle_sha256_init);
DYNLIB_DECLARE (nettle_sha256_update);
DYNLIB_DECLARE (nettle_sha256_digest);
static const struct dynlib_symbol libnettle_symbols[] = {
  DYNLIB_SYMBOL (nettle_sha256_init),
  DYNLIB_SYMBOL (nettle_sha256_update),
  DYNLIB_SYMBOL (nettle_sha256_digest),
};
#define NETTLE(f) sym_##f
static int
nettle_ready (struct moat_error **err)
{
  return dynlib_load (&libnettle, libnettle_symbols,
                      sizeof (libnettle_symbols) / sizeof (*libnettle_symbols),
                      err);
}
#endif

int
sha256_start (struct sha256 *c, struct moat_error **err)
{
  if (nettle_ready (err) < 0)
    return moat_error_wrap (err, "sha256");
  NETTLE (nettle_sha256_init) (&c->ctx);
  return 0;
}

void
sha256_feed (struct sha256 *c, const void *data, size_t len)
{
  NETTLE (nettle_sha256_update) (&c->ctx, len, data);
}

void
sha256_finish_hex (struct sha256 *c, char hex[65])
{
  static const char digits[] = "0123456789abcdef";
  uint8_t d[SHA256_DIGEST_SIZE];

  NETTLE (nettle_sha256_digest) (&c->ctx, sizeof (d), d);
  for (size_t i = 0; i < sizeof (d); i++)
    {
      hex[2 * i] = digits[d[i] >> 4];
      hex[2 * i + 1] = digits[d[i] & 0xf];
    }
  hex[64] = '\0';
}

int
sha256_hex_of (const void *data, size_t len, char hex[65],
               struct moat_error **err)
{
  struct sha256 c;

  if (sha256_start (&c, err) < 0)
    return -1;
  sha256_feed (&c, data, len);
  sha256_finish_hex (&c, hex);
  return 0;
}
