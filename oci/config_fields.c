/* Typed, path-naming reads of JSON members for oci/config*.c. */
#include "config_fields.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../lib/util.h"

/* Paths are made for every member parsed and read only in errors: joined
 * by hand, not through printf's machinery (5 % of a session exec's
 * instructions were vasprintf's). */
char *
field_path (const char *parent, const char *key)
{
  size_t plen, klen;
  char *p;

  if (key == NULL)
    return xstrdup (parent);
  if (parent == NULL || parent[0] == '\0')
    return xstrdup (key);
  plen = strlen (parent);
  klen = strlen (key);
  p = xmalloc (plen + klen + 2);
  memcpy (p, parent, plen);
  p[plen] = '.';
  memcpy (p + plen + 1, key, klen + 1);
  return p;
}

char *
field_index_path (const char *parent, size_t i)
{
  char digits[24];
  size_t plen = strlen (parent), n = sizeof (digits);
  char *p;

  do
    digits[--n] = (char)('0' + i % 10);
  while ((i /= 10) != 0);
  p = xmalloc (plen + (sizeof (digits) - n) + 3);
  memcpy (p, parent, plen);
  p[plen] = '[';
  memcpy (p + plen + 1, digits + n, sizeof (digits) - n);
  memcpy (p + plen + 1 + (sizeof (digits) - n), "]", 2);
  return p;
}

int
field_fail (struct moat_error **err, const char *parent, const char *key,
            const char *fmt, ...)
{
  cleanup_free char *path = field_path (parent, key);
  cleanup_free char *what = NULL;
  va_list ap;

  va_start (ap, fmt);
  if (vasprintf (&what, fmt, ap) < 0)
    what = NULL;
  va_end (ap);
  return moat_fail (err, 0, "%s: %s", path, what ? what : "invalid");
}

/* Absent and null read the same: the member is not given. */
static const json_node *
member (const json_node *obj, const char *key)
{
  const json_node *n = json_get (obj, key);
  return json_is_null (n) ? NULL : n;
}

int
require_member (const json_node *obj, const char *parent, const char *key,
                struct moat_error **err)
{
  if (member (obj, key) == NULL)
    return field_fail (err, parent, key, "required");
  return 0;
}

int
get_object (const json_node *obj, const char *parent, const char *key,
            const json_node **ret, struct moat_error **err)
{
  const json_node *n = member (obj, key);
  if (n == NULL)
    return 0;
  if (!json_is_object (n))
    return field_fail (err, parent, key, "expected object");
  *ret = n;
  return 0;
}

int
get_array (const json_node *obj, const char *parent, const char *key,
           const json_node **ret, struct moat_error **err)
{
  const json_node *n = member (obj, key);
  if (n == NULL)
    return 0;
  if (!json_is_array (n))
    return field_fail (err, parent, key, "expected array");
  *ret = n;
  return 0;
}

int
get_object_array (const json_node *obj, const char *parent, const char *key,
                  size_t elem_size, void **ret_array, size_t *ret_count,
                  field_elem_fn fn, struct moat_error **err)
{
  const json_node *arr = NULL;
  cleanup_free char *path = NULL;
  size_t len;
  char *slots;
  int r;

  r = get_array (obj, parent, key, &arr, err);
  if (r < 0 || arr == NULL)
    return r;
  len = json_array_len (arr);
  slots = xcalloc (len, elem_size);
  *ret_array = slots;
  *ret_count = len;
  path = field_path (parent, key);
  for (size_t i = 0; i < len; i++)
    {
      const json_node *elem = json_array_get (arr, i);
      cleanup_free char *elem_path = field_index_path (path, i);
      if (!json_is_object (elem))
        return field_fail (err, elem_path, NULL, "expected object");
      r = fn (elem, elem_path, slots + i * elem_size, err);
      if (r < 0)
        return r;
    }
  return 0;
}

int
get_string (const json_node *obj, const char *parent, const char *key,
            char **ret, struct moat_error **err)
{
  const json_node *n = member (obj, key);
  if (n == NULL)
    return 0;
  if (!json_is_string (n))
    return field_fail (err, parent, key, "expected string");
  free (*ret);
  *ret = xstrdup (json_string (n));
  return 0;
}

int
get_required_string (const json_node *obj, const char *parent, const char *key,
                     char **ret, struct moat_error **err)
{
  int r = require_member (obj, parent, key, err);
  if (r == 0)
    r = get_string (obj, parent, key, ret, err);
  if (r == 0 && (*ret)[0] == '\0')
    r = field_fail (err, parent, key, "must not be empty");
  return r;
}

int
get_bool (const json_node *obj, const char *parent, const char *key, bool *ret,
          struct moat_error **err)
{
  const json_node *n = member (obj, key);
  if (n == NULL)
    return 0;
  if (!json_is_bool (n))
    return field_fail (err, parent, key, "expected boolean");
  *ret = json_bool (n);
  return 0;
}

int
get_strv (const json_node *obj, const char *parent, const char *key,
          char ***ret, struct moat_error **err)
{
  const json_node *arr = member (obj, key);
  size_t len;
  char **v;

  if (arr == NULL)
    return 0;
  if (!json_is_array (arr))
    return field_fail (err, parent, key, "expected array of strings");
  len = json_array_len (arr);
  for (size_t i = 0; i < len; i++)
    if (!json_is_string (json_array_get (arr, i)))
      return field_fail (err, parent, key, "expected array of strings");
  v = xcalloc (len + 1, sizeof (char *));
  for (size_t i = 0; i < len; i++)
    v[i] = xstrdup (json_string (json_array_get (arr, i)));
  strv_free (*ret);
  *ret = v;
  return 0;
}

struct indexed_kv
{
  const char *key;
  const char *value;
  size_t index;
};

static int
compare_indexed_kv (const void *a, const void *b)
{
  const struct indexed_kv *x = a, *y = b;
  int c = strcmp (x->key, y->key);
  if (c != 0)
    return c;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Sorting (not a search per key) keeps a huge hostile map from costing
 * quadratic time. */
int
get_string_map (const json_node *obj, const char *parent, const char *key,
                struct spec_kv **ret, size_t *ret_n, struct moat_error **err)
{
  const json_node *map = member (obj, key);
  cleanup_free struct indexed_kv *items = NULL;
  cleanup_free char *path = NULL;
  struct spec_kv *kv;
  size_t len, n = 0;

  if (map == NULL)
    return 0;
  if (!json_is_object (map))
    return field_fail (err, parent, key, "expected object of strings");
  len = json_object_len (map);
  path = field_path (parent, key);
  items = xcalloc (len, sizeof (*items));
  for (size_t i = 0; i < len; i++)
    {
      const json_node *v = json_object_value (map, i);
      if (!json_is_string (v))
        return field_fail (err, path, json_object_key (map, i),
                           "expected string");
      items[i]
          = (struct indexed_kv){ json_object_key (map, i), json_string (v), i };
    }
  qsort (items, len, sizeof (*items), compare_indexed_kv);
  kv = xcalloc (len, sizeof (*kv));
  for (size_t i = 0; i < len; i++)
    {
      if (i + 1 < len && strcmp (items[i].key, items[i + 1].key) == 0)
        continue; /* a later duplicate follows */
      kv[n].key = xstrdup (items[i].key);
      kv[n].value = xstrdup (items[i].value);
      n++;
    }
  spec_kv_free (*ret, *ret_n);
  *ret = kv;
  *ret_n = n;
  return 0;
}

static int
fail_out_of_range (const json_node *n, const char *parent, const char *key,
                   const char *range, struct moat_error **err)
{
  int64_t v;
  uint64_t u;
  if (json_int64 (n, &v) == 0)
    return field_fail (err, parent, key, "%" PRId64 " is out of range (%s)", v,
                       range);
  if (json_uint64 (n, &u) == 0)
    return field_fail (err, parent, key, "%" PRIu64 " is out of range (%s)", u,
                       range);
  return field_fail (err, parent, key, "out of range (%s)", range);
}

int
node_u64 (const json_node *n, const char *parent, const char *key, uint64_t max,
          uint64_t *ret, struct moat_error **err)
{
  uint64_t v;
  if (!json_is_integer (n))
    return field_fail (err, parent, key, "expected integer");
  if (json_uint64 (n, &v) < 0 || v > max)
    {
      char range[48];
      snprintf (range, sizeof (range), "0 to %" PRIu64, max);
      return fail_out_of_range (n, parent, key, range, err);
    }
  *ret = v;
  return 0;
}

int
get_u64 (const json_node *obj, const char *parent, const char *key,
         uint64_t max, bool *has, uint64_t *ret, struct moat_error **err)
{
  const json_node *n = member (obj, key);
  int r;
  if (n == NULL)
    return 0;
  r = node_u64 (n, parent, key, max, ret, err);
  if (r == 0 && has)
    *has = true;
  return r;
}

int
get_u32 (const json_node *obj, const char *parent, const char *key, bool *has,
         uint32_t *ret, struct moat_error **err)
{
  uint64_t v;
  bool present = false;
  int r = get_u64 (obj, parent, key, UINT32_MAX, &present, &v, err);
  if (r < 0 || !present)
    return r;
  *ret = (uint32_t)v;
  if (has)
    *has = true;
  return 0;
}

int
get_i64 (const json_node *obj, const char *parent, const char *key, int64_t min,
         int64_t max, bool *has, int64_t *ret, struct moat_error **err)
{
  const json_node *n = member (obj, key);
  int64_t v;

  if (n == NULL)
    return 0;
  if (!json_is_integer (n))
    return field_fail (err, parent, key, "expected integer");
  if (json_int64 (n, &v) < 0 || v < min || v > max)
    {
      char range[64];
      snprintf (range, sizeof (range), "%" PRId64 " to %" PRId64, min, max);
      return fail_out_of_range (n, parent, key, range, err);
    }
  *ret = v;
  if (has)
    *has = true;
  return 0;
}

void
spec_kv_free (struct spec_kv *kv, size_t n)
{
  for (size_t i = 0; kv && i < n; i++)
    {
      free (kv[i].key);
      free (kv[i].value);
    }
  free (kv);
}
