/* See cidr.h. */
#include "cidr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "../lib/util.h"

static bool
all_digits (const char *s)
{
  if (*s == '\0')
    return false;
  for (; *s; s++)
    if (*s < '0' || *s > '9')
      return false;
  return true;
}

int
cidr_parse (const char *s, struct cidr *ret)
{
  char buf[INET6_ADDRSTRLEN + 8];
  struct cidr c = { 0 };
  unsigned max;
  char *slash;

  if (s == NULL || strlen (s) >= sizeof (buf))
    return -EINVAL;
  strcpy (buf, s);
  slash = strchr (buf, '/');
  if (slash)
    *slash = '\0';

  c.family = strchr (buf, ':') ? AF_INET6 : AF_INET;
  max = c.family == AF_INET ? 32 : 128;
  if (inet_pton (c.family, buf, c.addr) != 1)
    return -EINVAL;

  c.prefix = max;
  if (slash)
    {
      int prefix;
      /* Digits only: strtol would also take " 8", "+8" or "-0". */
      if (!all_digits (slash + 1) || strlen (slash + 1) > 3
          || parse_int (slash + 1, &prefix) < 0 || prefix > (int)max)
        return -EINVAL;
      c.prefix = (uint8_t)prefix;
    }

  /* "10.1.2.3/8" means 10.0.0.0/8: the programs compare masked words and
   * the routes of the fallback want a clean network address. */
  for (unsigned bit = c.prefix; bit < max; bit++)
    c.addr[bit / 8] &= (uint8_t) ~(0x80 >> (bit % 8));

  *ret = c;
  return 0;
}

int
cidr_port_parse (const char *s, struct cidr *ret)
{
  char buf[INET6_ADDRSTRLEN + 16];
  const char *addr = buf, *port = NULL;
  struct cidr c;
  char *colon;
  int n;

  if (s == NULL || strlen (s) >= sizeof (buf))
    return -EINVAL;
  strcpy (buf, s);
  if (buf[0] == '[')
    {
      char *close = strchr (buf, ']');
      /* "[v6]" alone or "[v6]:port"; an IPv4 CIDR needs no brackets. */
      if (close == NULL || (close[1] && close[1] != ':'))
        return -EINVAL;
      *close = '\0';
      if (!strchr (buf, ':'))
        return -EINVAL;
      addr = buf + 1;
      if (close[1] == ':')
        port = close + 2;
    }
  else if ((colon = strchr (buf, ':')) && strchr (colon + 1, ':') == NULL)
    {
      /* One colon: an IPv4 CIDR and a port (IPv6 has at least two). */
      *colon = '\0';
      port = colon + 1;
    }
  if (cidr_parse (addr, &c) < 0)
    return -EINVAL;
  if (port)
    {
      if (!all_digits (port) || strlen (port) > 5 || parse_int (port, &n) < 0
          || n < 1 || n > 65535)
        return -EINVAL;
      c.port = (uint16_t)n;
    }
  *ret = c;
  return 0;
}

char *
cidr_to_string (const struct cidr *c)
{
  char addr[INET6_ADDRSTRLEN] = "?";

  inet_ntop (c->family, c->addr, addr, sizeof (addr));
  if (c->port == 0)
    return xasprintf ("%s/%u", addr, c->prefix);
  if (c->family == AF_INET6)
    return xasprintf ("[%s/%u]:%u", addr, c->prefix, c->port);
  return xasprintf ("%s/%u:%u", addr, c->prefix, c->port);
}

static bool
prefix_equal (const uint8_t *a, const uint8_t *b, unsigned bits)
{
  for (unsigned bit = 0; bit < bits; bit++)
    if ((a[bit / 8] ^ b[bit / 8]) & (0x80 >> (bit % 8)))
      return false;
  return true;
}

bool
cidr_overlaps (const struct cidr *x, const struct cidr *y)
{
  unsigned bits = x->prefix < y->prefix ? x->prefix : y->prefix;
  return x->family == y->family && prefix_equal (x->addr, y->addr, bits);
}

bool
cidr_contains (const struct cidr *outer, const struct cidr *inner)
{
  return outer->family == inner->family && outer->prefix <= inner->prefix
         && prefix_equal (outer->addr, inner->addr, outer->prefix)
         && (outer->port == 0 || outer->port == inner->port);
}

void
cidr_v6_embeddings (const struct cidr *v4, struct cidr out[CIDR_V6_EMBEDDINGS])
{
  static const uint8_t nat64[] = { 0x00, 0x64, 0xff, 0x9b };

  for (int i = 0; i < CIDR_V6_EMBEDDINGS; i++)
    out[i] = (struct cidr){ .family = AF_INET6,
                            .prefix = (uint8_t)(96 + v4->prefix),
                            .port = v4->port };
  /* IPv4-mapped ::ffff:a.b.c.d */
  out[0].addr[10] = out[0].addr[11] = 0xff;
  memcpy (out[0].addr + 12, v4->addr, 4);
  /* IPv4-compatible ::a.b.c.d (deprecated, RFC 4291) */
  memcpy (out[1].addr + 12, v4->addr, 4);
  /* NAT64 well-known prefix 64:ff9b::a.b.c.d (RFC 6052) */
  memcpy (out[2].addr, nat64, 4);
  memcpy (out[2].addr + 12, v4->addr, 4);
  /* 6to4 2002:AABB:CCDD::/48 (RFC 3056) */
  out[3].addr[0] = 0x20;
  out[3].addr[1] = 0x02;
  memcpy (out[3].addr + 2, v4->addr, 4);
  out[3].prefix = (uint8_t)(16 + v4->prefix);
}
