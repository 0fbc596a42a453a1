/* See cidr.h. */
#include "cidr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "util.h"

/* The value of a string of 1 to max_len decimal digits (nothing else:
 * strtol would also take " 8", "+8" or "-0"), or -1. */
static int
small_number (const char *s, size_t max_len)
{
  int v = 0;
  size_t len = 0;

  for (; *s; s++, len++)
    {
      if (*s < '0' || *s > '9' || len == max_len)
        return -1;
      v = v * 10 + (*s - '0');
    }
  return len ? v : -1;
}

/* Dotted-quad IPv4 as inet_pton reads it (four decimal parts of 0-255, no
 * leading zero), without its cost: an operator's list of 10,000 entries is
 * read at every create. */
static bool
ipv4_parse (const char *s, uint8_t addr[4])
{
  for (int part = 0; part < 4; part++)
    {
      unsigned v = 0;
      int digits = 0;

      if (part && *s++ != '.')
        return false;
      for (; *s >= '0' && *s <= '9'; s++, digits++)
        {
          if (digits == 3 || (digits == 1 && v == 0))
            return false;
          v = v * 10 + (unsigned)(*s - '0');
        }
      if (digits == 0 || v > 255)
        return false;
      addr[part] = (uint8_t)v;
    }
  return *s == '\0';
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
  if (c.family == AF_INET ? !ipv4_parse (buf, c.addr)
                          : inet_pton (AF_INET6, buf, c.addr) != 1)
    return -EINVAL;

  c.prefix = max;
  if (slash)
    {
      int prefix = small_number (slash + 1, 3);
      if (prefix < 0 || prefix > (int)max)
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
      n = small_number (port, 5);
      if (n < 1 || n > 65535)
        return -EINVAL;
      c.port = (uint16_t)n;
    }
  *ret = c;
  return 0;
}

/* Decimal digits of v at p; returns the end. */
static char *
put_uint (char *p, unsigned v)
{
  char digits[10];
  int n = 0;

  do
    digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  while (n)
    *p++ = digits[--n];
  return p;
}

size_t
cidr_format (const struct cidr *c, char buf[CIDR_TEXT_MAX])
{
  char *p = buf;
  bool bracket = c->port && c->family == AF_INET6;

  if (bracket)
    *p++ = '[';
  if (c->family == AF_INET)
    /* By hand: inet_ntop's IPv4 path goes through sprintf, and a list of
     * 10,000 entries is written at every create. */
    for (int i = 0; i < 4; i++)
      {
        if (i)
          *p++ = '.';
        p = put_uint (p, c->addr[i]);
      }
  else if (inet_ntop (AF_INET6, c->addr, p, INET6_ADDRSTRLEN))
    p += strlen (p);
  else
    *p++ = '?';
  *p++ = '/';
  p = put_uint (p, c->prefix);
  if (bracket)
    *p++ = ']';
  if (c->port)
    {
      *p++ = ':';
      p = put_uint (p, c->port);
    }
  *p = '\0';
  return (size_t)(p - buf);
}

char *
cidr_to_string (const struct cidr *c)
{
  char buf[CIDR_TEXT_MAX];

  cidr_format (c, buf);
  return xstrdup (buf);
}

char *
cidr_list_join (const struct cidr *list, size_t n)
{
  char *text = xmalloc (n * CIDR_TEXT_MAX + 1);
  size_t len = 0;

  for (size_t i = 0; i < n; i++)
    {
      if (i)
        text[len++] = ',';
      len += cidr_format (&list[i], text + len);
    }
  text[len] = '\0';
  return text;
}

int
cidr_list_split (const char *text, bool with_port, struct cidr **ret,
                 size_t *ret_n)
{
  cleanup_free struct cidr *list = NULL;
  size_t n = 0, cap = 1;

  for (const char *p = text; *p; p++)
    cap += *p == ',';
  list = xcalloc (cap, sizeof (*list));
  for (const char *p = text; *p;)
    {
      const char *end = strchrnul (p, ',');
      char entry[CIDR_TEXT_MAX];
      size_t len = (size_t)(end - p);

      *ret_n = n; /* the entry at fault, if it is one */
      if (len == 0 || len >= sizeof (entry))
        return -EINVAL;
      memcpy (entry, p, len);
      entry[len] = '\0';
      if ((with_port ? cidr_port_parse (entry, &list[n])
                     : cidr_parse (entry, &list[n]))
          < 0)
        return -EINVAL;
      n++;
      if (*end == '\0')
        break;
      p = end + 1;
      if (*p == '\0')
        {
          *ret_n = n;
          return -EINVAL; /* a trailing comma */
        }
    }
  *ret = steal_pointer (&list);
  *ret_n = n;
  return 0;
}

void
cidr_pack (const struct cidr *c, uint8_t out[CIDR_PACKED_LEN])
{
  out[0] = c->family == AF_INET6 ? 6 : 4;
  out[1] = c->prefix;
  out[2] = (uint8_t)(c->port >> 8);
  out[3] = (uint8_t)c->port;
  memcpy (out + 4, c->addr, 16);
}

void
cidr_lists_digest (const struct cidr *const *lists, const size_t *counts,
                   size_t n_lists, char ret[CIDR_LIST_DIGEST_LEN])
{
  /* The entries packed a few hundred at a time (a multiple of eight
   * bytes), each piece hashed eight bytes at a time: a byte-wise hash cost
   * 1.6 ms a list of 10,000, and a buffer for the whole list 100 pages
   * faulted in for each digest. */
  uint8_t packed[256 * CIDR_PACKED_LEN];
  size_t total = 0, in_piece = 0;
  uint64_t h;

  for (size_t l = 0; l < n_lists; l++)
    total += counts[l];
  h = FNV1A64_INIT ^ (uint64_t)(total * CIDR_PACKED_LEN);
  for (size_t l = 0; l < n_lists; l++)
    for (size_t i = 0; i < counts[l]; i++)
      {
        cidr_pack (&lists[l][i], packed + in_piece * CIDR_PACKED_LEN);
        if (++in_piece == 256)
          {
            h = hash64_words_more (h, packed, sizeof (packed));
            in_piece = 0;
          }
      }
  h = hash64_words_more (h, packed, in_piece * CIDR_PACKED_LEN);
  snprintf (ret, CIDR_LIST_DIGEST_LEN, "words64:%016" PRIx64, h);
}

void
cidr_list_digest (const struct cidr *list, size_t n,
                  char ret[CIDR_LIST_DIGEST_LEN])
{
  cidr_lists_digest (&list, &n, 1, ret);
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

bool
cidr_v6_embedded_v4 (const struct cidr *v6, struct cidr *ret_v4)
{
  struct cidr forms[CIDR_V6_EMBEDDINGS];
  struct cidr any = { .family = AF_INET, .prefix = 0 };

  if (v6->family != AF_INET6 || v6->prefix != 128)
    return false;
  /* The forms of 0.0.0.0/0: each prefix says where the address sits. */
  cidr_v6_embeddings (&any, forms);
  for (int i = 0; i < CIDR_V6_EMBEDDINGS; i++)
    if (prefix_equal (forms[i].addr, v6->addr, forms[i].prefix))
      {
        /* 6to4 carries it at bits 16-47, the others in the last 32. */
        const uint8_t *at = v6->addr + (i == 3 ? 2 : 12);
        *ret_v4 = (struct cidr){ .family = AF_INET,
                                 .prefix = 32,
                                 .port = v6->port };
        memcpy (ret_v4->addr, at, 4);
        return true;
      }
  return false;
}
