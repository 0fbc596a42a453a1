/* The only files that know libyajl (with json_tree.c). Input is checked by a
 * linear scan before yajl sees it: yajl accepts comments and its errors are
 * terse, so depth, '/' outside strings, NUL bytes and encoding are all
 * settled here first. */
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "../lib/util.h"
#include "json_tree.h"

static inline yajl_val
Y (const json_node *n)
{
  return (yajl_val)n;
}

/* Length of the UTF-8 sequence at s (at most avail bytes), or 0 when it is
 * not well-formed (overlong forms, surrogates and values above U+10FFFF are
 * refused, as RFC 3629 says). */
static size_t
utf8_sequence_len (const unsigned char *s, size_t avail)
{
  unsigned char c = s[0];
  size_t n;
  uint32_t cp, min;

  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2, cp = c & 0x1f, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3, cp = c & 0x0f, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4, cp = c & 0x07, min = 0x10000;
  else
    return 0;
  if (n > avail)
    return 0;
  for (size_t i = 1; i < n; i++)
    {
      if ((s[i] & 0xc0) != 0x80)
        return 0;
      cp = (cp << 6) | (s[i] & 0x3f);
    }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

static bool
utf8_valid (const char *s, size_t len)
{
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < len)
    {
      size_t n = utf8_sequence_len (p + i, len - i);
      if (n == 0)
        return false;
      i += n;
    }
  return true;
}

static bool
is_json_space (char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* "\u0000" would become an embedded NUL that silently cuts a C string. */
static bool
is_escaped_nul (const char *text, size_t len, size_t i)
{
  return i + 5 < len && text[i + 1] == 'u'
         && strncmp (text + i + 2, "0000", 4) == 0;
}

static int
json_prescan (const char *text, size_t len, struct moat_error **err)
{
  bool in_string = false, escaped = false, only_space = true;
  size_t depth = 0;

  for (size_t i = 0; i < len; i++)
    {
      unsigned char c = (unsigned char)text[i];

      /* Inside a string, a run of plain ASCII says nothing to this scan:
       * skip it in a tight loop (an operator config with 10,000 CIDRs is
       * mostly that). */
      if (in_string && !escaped)
        {
          while (c != '"' && c != '\\' && c != '\0' && c < 0x80 && i + 1 < len)
            c = (unsigned char)text[++i];
        }
      if (c == '\0')
        return moat_fail (err, 0, "invalid JSON: NUL byte at offset %zu", i);
      if (c >= 0x80)
        {
          size_t n
              = utf8_sequence_len ((const unsigned char *)text + i, len - i);
          if (n == 0)
            return moat_fail (err, 0,
                              "invalid JSON: invalid UTF-8 at offset %zu", i);
          i += n - 1;
          only_space = false;
          escaped = false;
          continue;
        }
      if (!is_json_space (c))
        only_space = false;
      if (escaped)
        escaped = false; /* the escaped character cannot end the string */
      else if (in_string && c == '\\')
        {
          if (is_escaped_nul (text, len, i))
            return moat_fail (
                err, 0, "invalid JSON: \\u0000 in a string at offset %zu", i);
          escaped = true;
        }
      else if (in_string)
        in_string = c != '"';
      else if (c == '"')
        in_string = true;
      else if (c == '[' || c == '{')
        {
          if (++depth > JSON_MAX_DEPTH)
            return moat_fail (err, 0, "nesting deeper than %d levels",
                              JSON_MAX_DEPTH);
        }
      else if ((c == ']' || c == '}') && depth > 0)
        depth--;
      else if (c == '/')
        return moat_fail (
            err, 0, "invalid JSON: comments are not allowed (offset %zu)", i);
    }
  if (only_space)
    return moat_fail (err, 0, "empty input");
  return 0;
}

/* yajl's tree parser reports a verbose, multi-line message; its first line
 * is the short one ("parse error: trailing garbage"). */
static void
first_line (char *s)
{
  size_t n = strcspn (s, "\n");
  s[n] = '\0';
  while (n > 0 && s[n - 1] == ' ')
    s[--n] = '\0';
}

int
json_parse (const char *text, size_t len, size_t max_size, json_node **ret,
            struct moat_error **err)
{
  char errbuf[256] = "";
  yajl_val root;
  int r;

  if (max_size == 0) /* callers without a cap of their own get config.json's */
    max_size = JSON_MAX_SIZE;
  if (len > max_size)
    return moat_fail (err, 0, "too large: %zu bytes, the limit is %zu", len,
                      max_size);
  if (text == NULL)
    return moat_fail (err, 0, "empty input");
  r = json_prescan (text, len, err);
  if (r < 0)
    return r;

  root = json_tree_parse (text, len, errbuf, sizeof (errbuf));
  if (root == NULL)
    {
      first_line (errbuf);
      return moat_fail (err, 0, "invalid JSON: %s",
                        errbuf[0] ? errbuf : "parse error");
    }
  *ret = (json_node *)root;
  return 0;
}

void
json_free (json_node *n)
{
  if (n)
    json_tree_free (Y (n));
}

bool
json_is_object (const json_node *n)
{
  return YAJL_IS_OBJECT (Y (n));
}

bool
json_is_array (const json_node *n)
{
  return YAJL_IS_ARRAY (Y (n));
}

bool
json_is_string (const json_node *n)
{
  return YAJL_IS_STRING (Y (n));
}

bool
json_is_number (const json_node *n)
{
  return YAJL_IS_NUMBER (Y (n));
}

/* Only the plain form counts: "1.0" and "1e3" are not integers, as for Go's
 * encoding/json into an integer field. */
bool
json_is_integer (const json_node *n)
{
  const char *s;
  if (!YAJL_IS_NUMBER (Y (n)) || YAJL_GET_NUMBER (Y (n)) == NULL)
    return false;
  s = YAJL_GET_NUMBER (Y (n));
  if (*s == '-')
    s++;
  return *s != '\0' && strspn (s, "0123456789") == strlen (s);
}

bool
json_is_bool (const json_node *n)
{
  return YAJL_IS_TRUE (Y (n)) || YAJL_IS_FALSE (Y (n));
}

bool
json_is_null (const json_node *n)
{
  return YAJL_IS_NULL (Y (n));
}

/* The last of duplicate keys wins, as with Go's encoding/json, which wrote
 * (or will read) the same file on the engine's side. */
json_node *
json_get (const json_node *obj, const char *key)
{
  yajl_val o = Y (obj);
  if (!YAJL_IS_OBJECT (o) || key == NULL)
    return NULL;
  for (size_t i = o->u.object.len; i > 0; i--)
    if (strcmp (o->u.object.keys[i - 1], key) == 0)
      return (json_node *)o->u.object.values[i - 1];
  return NULL;
}

size_t
json_object_len (const json_node *obj)
{
  return YAJL_IS_OBJECT (Y (obj)) ? Y (obj)->u.object.len : 0;
}

const char *
json_object_key (const json_node *obj, size_t i)
{
  if (i >= json_object_len (obj))
    return NULL;
  return Y (obj)->u.object.keys[i];
}

json_node *
json_object_value (const json_node *obj, size_t i)
{
  if (i >= json_object_len (obj))
    return NULL;
  return (json_node *)Y (obj)->u.object.values[i];
}

size_t
json_array_len (const json_node *arr)
{
  return YAJL_IS_ARRAY (Y (arr)) ? Y (arr)->u.array.len : 0;
}

json_node *
json_array_get (const json_node *arr, size_t i)
{
  if (i >= json_array_len (arr))
    return NULL;
  return (json_node *)Y (arr)->u.array.values[i];
}

const char *
json_string (const json_node *n)
{
  return YAJL_GET_STRING (Y (n));
}

bool
json_bool (const json_node *n)
{
  return YAJL_IS_TRUE (Y (n));
}

/* The number's own text, not yajl's long long or double, so that every
 * 64-bit value comes through exactly. */
int
json_int64 (const json_node *n, int64_t *ret)
{
  if (!json_is_integer (n))
    return -EINVAL;
  return parse_int64 (YAJL_GET_NUMBER (Y (n)), ret);
}

int
json_uint64 (const json_node *n, uint64_t *ret)
{
  const char *s;
  if (!json_is_integer (n))
    return -EINVAL;
  s = YAJL_GET_NUMBER (Y (n));
  if (*s == '-')
    {
      if (strspn (s + 1, "0") != strlen (s + 1))
        return -ERANGE;
      *ret = 0;
      return 0;
    }
  return parse_uint64 (s, ret);
}

/* Writer. Misuse (unbalanced begin/end, a key outside an object) is a bug in
 * the caller; it makes json_writer_finish() return NULL rather than broken
 * text. */
struct json_writer
{
  yajl_gen g;
  int depth;
  bool failed;
};

struct json_writer *
json_writer_new (bool pretty)
{
  struct json_writer *w = xcalloc (1, sizeof (*w));
  w->g = yajl_gen_alloc (NULL);
  if (w->g == NULL)
    {
      /* yajl allocates with malloc: out of memory, fatal as in xmalloc */
      static const char msg[] = "moat: out of memory\n";
      ssize_t r = write (2, msg, sizeof (msg) - 1);
      (void)r;
      _exit (1);
    }
  yajl_gen_config (w->g, yajl_gen_validate_utf8, 1);
  if (pretty)
    {
      yajl_gen_config (w->g, yajl_gen_beautify, 1);
      yajl_gen_config (w->g, yajl_gen_indent_string, "  ");
    }
  return w;
}

void
json_writer_free (struct json_writer *w)
{
  if (w == NULL)
    return;
  yajl_gen_free (w->g);
  free (w);
}

static void
jw_check (struct json_writer *w, yajl_gen_status st)
{
  if (st != yajl_gen_status_ok)
    w->failed = true;
}

void
jw_object_begin (struct json_writer *w)
{
  w->depth++;
  jw_check (w, yajl_gen_map_open (w->g));
}

void
jw_object_end (struct json_writer *w)
{
  w->depth--;
  jw_check (w, yajl_gen_map_close (w->g));
}

void
jw_array_begin (struct json_writer *w)
{
  w->depth++;
  jw_check (w, yajl_gen_array_open (w->g));
}

void
jw_array_end (struct json_writer *w)
{
  w->depth--;
  jw_check (w, yajl_gen_array_close (w->g));
}

/* Output must stay valid UTF-8 whatever a caller hands in (a process name
 * read from the host, say): ill-formed bytes become U+FFFD. */
static void
gen_string (struct json_writer *w, const char *s)
{
  size_t len = strlen (s);
  cleanup_free char *fixed = NULL;
  const unsigned char *p = (const unsigned char *)s;
  size_t o = 0;

  if (utf8_valid (s, len))
    {
      jw_check (w, yajl_gen_string (w->g, p, len));
      return;
    }
  fixed = xmalloc (len * 3 + 1);
  for (size_t i = 0; i < len;)
    {
      size_t n = utf8_sequence_len (p + i, len - i);
      if (n == 0)
        {
          memcpy (fixed + o, "\xef\xbf\xbd", 3);
          o += 3;
          i++;
          continue;
        }
      memcpy (fixed + o, s + i, n);
      o += n;
      i += n;
    }
  jw_check (w, yajl_gen_string (w->g, (const unsigned char *)fixed, o));
}

void
jw_key (struct json_writer *w, const char *key)
{
  gen_string (w, key ? key : "");
}

void
jw_string (struct json_writer *w, const char *s)
{
  if (s == NULL)
    jw_null (w);
  else
    gen_string (w, s);
}

void
jw_int (struct json_writer *w, int64_t v)
{
  jw_check (w, yajl_gen_integer (w->g, (long long)v));
}

void
jw_uint (struct json_writer *w, uint64_t v)
{
  char buf[24];
  int n = snprintf (buf, sizeof (buf), "%" PRIu64, v);
  jw_check (w, yajl_gen_number (w->g, buf, (size_t)n));
}

void
jw_bool (struct json_writer *w, bool v)
{
  jw_check (w, yajl_gen_bool (w->g, v));
}

void
jw_null (struct json_writer *w)
{
  jw_check (w, yajl_gen_null (w->g));
}

/* yajl_gen_number() emits its argument verbatim with the right separators,
 * which is exactly what inserting a finished JSON value needs. */
void
jw_raw (struct json_writer *w, const char *json)
{
  if (json == NULL)
    {
      jw_null (w);
      return;
    }
  jw_check (w, yajl_gen_number (w->g, json, strlen (json)));
}

void
jw_node (struct json_writer *w, const json_node *n)
{
  yajl_val v = Y (n);

  switch (v->type)
    {
    case yajl_t_string:
      gen_string (w, v->u.string);
      return;
    case yajl_t_number: /* its text, as written */
      jw_check (w,
                yajl_gen_number (w->g, v->u.number.r, strlen (v->u.number.r)));
      return;
    case yajl_t_object:
      jw_object_begin (w);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          jw_key (w, v->u.object.keys[i]);
          jw_node (w, (const json_node *)v->u.object.values[i]);
        }
      jw_object_end (w);
      return;
    case yajl_t_array:
      jw_array_begin (w);
      for (size_t i = 0; i < v->u.array.len; i++)
        jw_node (w, (const json_node *)v->u.array.values[i]);
      jw_array_end (w);
      return;
    case yajl_t_true:
    case yajl_t_false:
      jw_bool (w, v->type == yajl_t_true);
      return;
    default:
      jw_null (w);
      return;
    }
}

char *
json_writer_finish (struct json_writer *w)
{
  const unsigned char *buf;
  size_t len;
  char *out = NULL;

  if (w == NULL)
    return NULL;
  if (!w->failed && w->depth == 0
      && yajl_gen_get_buf (w->g, &buf, &len) == yajl_gen_status_ok)
    {
      out = xmalloc (len + 1);
      memcpy (out, buf, len);
      out[len] = '\0';
    }
  json_writer_free (w);
  return out;
}

const char *
json_member_string (const json_node *obj, const char *key, bool nullable)
{
  const json_node *v = json_get (obj, key);
  if (v && json_is_string (v))
    return json_string (v);
  if (nullable && (v == NULL || json_is_null (v)))
    return "";
  return NULL;
}

void
jw_strv_member (struct json_writer *w, const char *key, char *const *v)
{
  jw_key (w, key);
  jw_array_begin (w);
  for (size_t i = 0; v && v[i]; i++)
    jw_string (w, v[i]);
  jw_array_end (w);
}
