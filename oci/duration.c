/* Go durations: a sequence of decimal numbers, each with an optional
 * fraction and a unit (ns, us, µs, ms, s, m, h); "0" alone is allowed. */
#include "duration.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static const struct
{
  const char *name;
  uint64_t ns;
} units[] = {
  { "ns", 1ULL },
  { "us", 1000ULL },
  { "\xc2\xb5s", 1000ULL }, /* µs, U+00B5 */
  { "\xce\xbcs", 1000ULL }, /* μs, U+03BC */
  { "ms", 1000000ULL },
  { "s", 1000000000ULL },
  { "m", 60ULL * 1000000000ULL },
  { "h", 3600ULL * 1000000000ULL },
};

/* The longest unit name at s (so "ms" is not read as "m"). */
static int
unit_at (const char *s, uint64_t *ret_ns, size_t *ret_len)
{
  size_t best = 0;
  for (size_t i = 0; i < sizeof (units) / sizeof (units[0]); i++)
    {
      size_t n = strlen (units[i].name);
      if (n > best && strncmp (s, units[i].name, n) == 0)
        {
          best = n;
          *ret_ns = units[i].ns;
        }
    }
  *ret_len = best;
  return best ? 0 : -EINVAL;
}

int
go_duration_parse (const char *s, uint64_t *ret_ns)
{
  unsigned __int128 total = 0;

  if (s == NULL || *s == '\0')
    return -EINVAL;
  if (*s == '+')
    s++;
  if (strcmp (s, "0") == 0)
    {
      *ret_ns = 0;
      return 0;
    }
  while (*s)
    {
      unsigned __int128 whole = 0, frac = 0, scale = 1;
      bool digits = false;
      uint64_t unit;
      size_t ulen;

      for (; *s >= '0' && *s <= '9'; s++, digits = true)
        {
          whole = whole * 10 + (unsigned)(*s - '0');
          if (whole > UINT64_MAX)
            return -ERANGE;
        }
      if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++, digits = true)
          if (scale < 1000000000000000000ULL)
            {
              frac = frac * 10 + (unsigned)(*s - '0');
              scale *= 10;
            }
      if (!digits || unit_at (s, &unit, &ulen) < 0)
        return -EINVAL;
      s += ulen;
      total += whole * unit + frac * unit / scale;
      if (total > UINT64_MAX)
        return -ERANGE;
    }
  *ret_ns = (uint64_t)total;
  return 0;
}
