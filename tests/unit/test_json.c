/* oci/json.c: input caps, strict text checks, exact integers, the writer. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../oci/json.h"
#include "../../lib/util.h"

/* Parse s; on failure return the error message (caller frees), else NULL
 * with *ret set. */
static char *
parse_error (const char *s, size_t len, json_node **ret)
{
  struct moat_error *err = NULL;
  json_node *n = NULL;
  char *msg;

  if (json_parse (s, len, JSON_MAX_SIZE, &n, &err) == 0)
    {
      assert_null (err);
      if (ret)
        *ret = n;
      else
        json_free (n);
      return NULL;
    }
  assert_non_null (err);
  assert_null (strchr (err->msg, '\n'));
  msg = xstrdup (err->msg);
  moat_error_free (&err);
  return msg;
}

static void
assert_refused (const char *s, size_t len, const char *expected_part)
{
  cleanup_free char *msg = parse_error (s, len, NULL);
  if (msg == NULL)
    fail_msg ("accepted: %.*s", (int)(len > 60 ? 60 : len), s);
  if (strstr (msg, expected_part) == NULL)
    fail_msg ("message \"%s\" lacks \"%s\"", msg, expected_part);
}

static void
assert_accepted (const char *s)
{
  cleanup_free char *msg = parse_error (s, strlen (s), NULL);
  if (msg != NULL)
    fail_msg ("refused %s: %s", s, msg);
}

static char *
nested (size_t depth, char open, char close)
{
  char *s = xmalloc (2 * depth + 1);
  memset (s, open, depth);
  memset (s + depth, close, depth);
  s[2 * depth] = '\0';
  return s;
}

static void
test_size_cap (void **state)
{
  size_t n = JSON_MAX_SIZE;
  cleanup_free char *s = xmalloc (n + 2);
  json_node *root = NULL;
  cleanup_free char *msg = NULL;

  /* A string that fills the cap exactly is fine; one byte more is not. */
  memset (s, 'a', n + 1);
  s[0] = '"';
  s[n - 1] = '"';
  msg = parse_error (s, n, &root);
  assert_null (msg);
  assert_true (json_is_string (root));
  assert_int_equal (strlen (json_string (root)), n - 2);
  json_free (root);

  s[n - 1] = 'a';
  s[n] = '"';
  assert_refused (s, n + 1, "too large: 4194305 bytes");
}

static void
test_size_cap_argument (void **state)
{
  struct moat_error *err = NULL;
  json_node *n = NULL;
  assert_int_equal (json_parse ("[1, 2]", 6, 5, &n, &err) < 0, 1);
  assert_string_equal (err->msg, "too large: 6 bytes, the limit is 5");
  moat_error_free (&err);
}

static void
test_depth (void **state)
{
  cleanup_free char *ok = nested (JSON_MAX_DEPTH, '[', ']');
  cleanup_free char *deep = nested (JSON_MAX_DEPTH + 1, '[', ']');
  cleanup_free char *objs = NULL;
  cleanup_free char *msg = NULL;

  assert_accepted (ok);
  msg = parse_error (deep, strlen (deep), NULL);
  assert_string_equal (msg, "nesting deeper than 64 levels");

  /* Objects count the same as arrays. */
  objs = xstrdup ("");
  for (int i = 0; i < JSON_MAX_DEPTH + 1; i++)
    {
      char *next = xasprintf ("{\"a\":%s}", objs[0] ? objs : "1");
      free (objs);
      objs = next;
    }
  assert_refused (objs, strlen (objs), "nesting deeper than 64 levels");
}

static void
test_depth_million (void **state)
{
  size_t depth = 1000000;
  cleanup_free char *s = nested (depth, '[', ']');
  assert_refused (s, 2 * depth, "nesting deeper than 64 levels");
  /* Unbalanced: only openers. */
  s[depth] = '\0';
  assert_refused (s, depth, "nesting deeper than 64 levels");
}

static void
test_brackets_in_strings_do_not_count (void **state)
{
  cleanup_free char *inner = nested (200, '[', ']');
  cleanup_free char *s = xasprintf ("{\"a\":\"%s\\\"%s\"}", inner, inner);
  assert_accepted (s);
}

/* A comment holding a quote must not hide deep nesting from the scan (yajl's
 * tree parser accepts comments). */
static void
test_comments_refused (void **state)
{
  cleanup_free char *deep = nested (100000, '[', ']');
  cleanup_free char *s = xasprintf ("// \"\n%s", deep);
  assert_refused (s, strlen (s), "comments are not allowed");
  assert_refused ("{/* x */}", 9, "comments are not allowed");
  assert_accepted ("{\"url\":\"http://x/y\"}");
}

static void
test_invalid_utf8 (void **state)
{
  static const char *bad[] = {
    "\"\x80\"",             /* lone continuation byte */
    "\"\xc0\xaf\"",         /* overlong '/' */
    "\"\xe0\x80\xaf\"",     /* overlong, 3 bytes */
    "\"\xed\xa0\x80\"",     /* UTF-16 surrogate */
    "\"\xf4\x90\x80\x80\"", /* above U+10FFFF */
    "\"\xf5\x80\x80\x80\"", /* invalid lead byte */
    "\"\xc3\"",             /* truncated */
    "\"\xe2\x82\"",         /* truncated */
  };
  for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
    assert_refused (bad[i], strlen (bad[i]), "invalid UTF-8");
  assert_accepted ("[\"\xc3\xa9\", \"\xe2\x82\xac\", \"\xf0\x9f\x90\xb3\"]");
}

static void
test_nul_refused (void **state)
{
  assert_refused ("{\"a\":\"b\0c\"}", 11, "NUL byte at offset 7");
  assert_refused ("{} \0", 4, "NUL byte");
  assert_refused ("[\"a\\u0000b\"]", 12, "\\u0000 in a string");
  assert_accepted ("[\"a\\u0001b\", \"\\\\u0000\"]");
}

static void
test_bad_text (void **state)
{
  cleanup_free char *msg = NULL;
  assert_refused ("", 0, "empty input");
  assert_refused (" \n\t ", 4, "empty input");
  assert_refused (NULL, 0, "empty input");
  msg = parse_error ("{} x", 4, NULL);
  assert_non_null (msg);
  assert_true (strncmp (msg, "invalid JSON: ", 14) == 0);
  assert_refused ("{}{}", 4, "invalid JSON");
  assert_refused ("{\"a\":1,}", 8, "invalid JSON");
  assert_refused ("{a:1}", 5, "invalid JSON");
  assert_refused ("[1", 2, "invalid JSON");
  assert_refused ("[\"\x01\"]", 5, "invalid JSON");
  assert_refused ("[\"a\\x\"]", 7, "invalid JSON");
  assert_refused ("[01]", 4, "invalid JSON");
  assert_refused ("\"abc", 4, "invalid JSON");
}

static void
test_scalars_at_top (void **state)
{
  json_node *n = NULL;
  assert_null (parse_error ("null", 4, &n));
  assert_true (json_is_null (n));
  assert_false (json_is_object (n));
  assert_null (json_get (n, "a"));
  assert_int_equal (json_object_len (n), 0);
  assert_int_equal (json_array_len (n), 0);
  assert_null (json_string (n));
  json_free (n);

  assert_null (parse_error (" true ", 6, &n));
  assert_true (json_is_bool (n));
  assert_true (json_bool (n));
  json_free (n);
}

static void
test_accessors (void **state)
{
  static const char text[]
      = "{\"s\":\"x\",\"a\":[1,\"two\",null,false],\"o\":{\"k\":\"v\"},"
        "\"dup\":1,\"dup\":2}";
  json_node *n = NULL, *a, *o;
  int64_t v;

  assert_null (parse_error (text, strlen (text), &n));
  assert_true (json_is_object (n));
  assert_int_equal (json_object_len (n), 5);
  assert_string_equal (json_object_key (n, 0), "s");
  assert_null (json_object_key (n, 5));
  assert_null (json_object_value (n, 5));
  assert_string_equal (json_string (json_get (n, "s")), "x");
  assert_null (json_get (n, "missing"));

  a = json_get (n, "a");
  assert_true (json_is_array (a));
  assert_int_equal (json_array_len (a), 4);
  assert_true (json_is_integer (json_array_get (a, 0)));
  assert_true (json_is_string (json_array_get (a, 1)));
  assert_true (json_is_null (json_array_get (a, 2)));
  assert_true (json_is_bool (json_array_get (a, 3)));
  assert_false (json_bool (json_array_get (a, 3)));
  assert_null (json_array_get (a, 4));

  o = json_get (n, "o");
  assert_string_equal (json_string (json_get (o, "k")), "v");

  /* The last duplicate wins, as with Go's encoding/json. */
  assert_int_equal (json_int64 (json_get (n, "dup"), &v), 0);
  assert_int_equal (v, 2);
  json_free (n);
}

/* Objects and arrays past their first arrays, in a document past the
 * parser's first block: every member is kept, in order, with its value. */
static void
test_large_containers (void **state)
{
  enum
  {
    N = 1000
  };
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&text, &len);
  json_node *n = NULL, *arr, *obj;
  int64_t v;

  (void)state;
  assert_non_null (f);
  fputs ("{\"arr\":[", f);
  for (int i = 0; i < N; i++)
    fprintf (f, "%s{\"i\":%d,\"s\":\"v%d\"}", i ? "," : "", i, i);
  fputs ("],\"obj\":{", f);
  for (int i = 0; i < N; i++)
    fprintf (f, "%s\"k%d\":[%d]", i ? "," : "", i, i);
  fputs ("}}", f);
  assert_int_equal (fclose (f), 0);

  assert_null (parse_error (text, len, &n));
  arr = json_get (n, "arr");
  obj = json_get (n, "obj");
  assert_int_equal (json_array_len (arr), N);
  assert_int_equal (json_object_len (obj), N);
  for (int i = 0; i < N; i++)
    {
      char key[16], str[16];
      json_node *e = json_array_get (arr, i);
      snprintf (key, sizeof (key), "k%d", i);
      snprintf (str, sizeof (str), "v%d", i);
      assert_int_equal (json_int64 (json_get (e, "i"), &v), 0);
      assert_int_equal (v, i);
      assert_string_equal (json_string (json_get (e, "s")), str);
      assert_string_equal (json_object_key (obj, i), key);
      assert_int_equal (
          json_int64 (json_array_get (json_object_value (obj, i), 0), &v), 0);
      assert_int_equal (v, i);
    }
  json_free (n);
  free (text);
}

static json_node *
parse_ok (const char *s)
{
  json_node *n = NULL;
  cleanup_free char *msg = parse_error (s, strlen (s), &n);
  if (msg)
    fail_msg ("refused %s: %s", s, msg);
  return n;
}

static void
test_integers (void **state)
{
  json_node *n = parse_ok ("[18446744073709551615, 9223372036854775807, "
                           "-9223372036854775808, 18446744073709551616, "
                           "-1, 1.5, 1e3, 2.0, -0, 0]");
  uint64_t u;
  int64_t i;

  assert_int_equal (json_uint64 (json_array_get (n, 0), &u), 0);
  assert_true (u == UINT64_MAX);
  assert_int_equal (json_int64 (json_array_get (n, 0), &i), -ERANGE);
  assert_int_equal (json_int64 (json_array_get (n, 1), &i), 0);
  assert_true (i == INT64_MAX);
  assert_int_equal (json_int64 (json_array_get (n, 2), &i), 0);
  assert_true (i == INT64_MIN);
  assert_int_equal (json_uint64 (json_array_get (n, 2), &u), -ERANGE);
  assert_int_equal (json_uint64 (json_array_get (n, 3), &u), -ERANGE);
  assert_int_equal (json_uint64 (json_array_get (n, 4), &u), -ERANGE);
  assert_int_equal (json_int64 (json_array_get (n, 4), &i), 0);
  assert_int_equal (i, -1);
  for (size_t k = 5; k <= 7; k++)
    {
      assert_true (json_is_number (json_array_get (n, k)));
      assert_false (json_is_integer (json_array_get (n, k)));
      assert_int_equal (json_int64 (json_array_get (n, k), &i), -EINVAL);
      assert_int_equal (json_uint64 (json_array_get (n, k), &u), -EINVAL);
    }
  assert_int_equal (json_uint64 (json_array_get (n, 8), &u), 0);
  assert_int_equal (u, 0);
  assert_int_equal (json_uint64 (json_array_get (n, 9), &u), 0);
  assert_int_equal (json_int64 (json_get (n, "x"), &i), -EINVAL);
  json_free (n);
}

static void
test_writer_escaping_round_trip (void **state)
{
  static const char tricky[]
      = "q\"b\\s/ \x01\x1f\t\n\r\b\f \xc3\xa9\xf0\x9f\x90\xb3";
  struct json_writer *w = json_writer_new (false);
  cleanup_free char *text = NULL;
  json_node *n;
  uint64_t u;
  int64_t i;

  jw_object_begin (w);
  jw_key (w, tricky);
  jw_string (w, tricky);
  jw_key (w, "n");
  jw_null (w);
  jw_key (w, "null_string");
  jw_string (w, NULL);
  jw_key (w, "u");
  jw_uint (w, UINT64_MAX);
  jw_key (w, "i");
  jw_int (w, INT64_MIN);
  jw_key (w, "b");
  jw_bool (w, true);
  jw_key (w, "raw");
  jw_raw (w, "{\"x\":[1,2]}");
  jw_key (w, "arr");
  jw_array_begin (w);
  jw_string (w, "");
  jw_array_end (w);
  jw_object_end (w);
  text = json_writer_finish (w);
  assert_non_null (text);
  /* Control characters never appear raw in the output. */
  for (const char *p = text; *p; p++)
    assert_true ((unsigned char)*p >= 0x20);

  n = parse_ok (text);
  assert_string_equal (json_object_key (n, 0), tricky);
  assert_string_equal (json_string (json_get (n, tricky)), tricky);
  assert_true (json_is_null (json_get (n, "n")));
  assert_true (json_is_null (json_get (n, "null_string")));
  assert_int_equal (json_uint64 (json_get (n, "u"), &u), 0);
  assert_true (u == UINT64_MAX);
  assert_int_equal (json_int64 (json_get (n, "i"), &i), 0);
  assert_true (i == INT64_MIN);
  assert_true (json_bool (json_get (n, "b")));
  assert_int_equal (json_array_len (json_get (json_get (n, "raw"), "x")), 2);
  assert_string_equal (json_string (json_array_get (json_get (n, "arr"), 0)),
                       "");
  json_free (n);
}

static void
test_writer_invalid_utf8_replaced (void **state)
{
  struct json_writer *w = json_writer_new (false);
  cleanup_free char *text = NULL;

  jw_array_begin (w);
  jw_string (w, "a\xff"
                "b\xed\xa0\x80"
                "c");
  jw_array_end (w);
  text = json_writer_finish (w);
  assert_non_null (text);
  assert_string_equal (text, "[\"a\xef\xbf\xbd"
                             "b\xef\xbf\xbd\xef\xbf\xbd"
                             "\xef\xbf\xbd"
                             "c\"]");
}

static void
test_writer_pretty (void **state)
{
  struct json_writer *w = json_writer_new (true);
  cleanup_free char *text = NULL;
  json_node *n;

  jw_object_begin (w);
  jw_key (w, "a");
  jw_int (w, 1);
  jw_object_end (w);
  text = json_writer_finish (w);
  assert_string_equal (text, "{\n  \"a\": 1\n}\n");
  n = parse_ok (text);
  json_free (n);
}

static void
test_writer_misuse (void **state)
{
  struct json_writer *w = json_writer_new (false);
  jw_object_begin (w);
  assert_null (json_writer_finish (w));

  w = json_writer_new (false);
  jw_array_end (w);
  assert_null (json_writer_finish (w));

  w = json_writer_new (false);
  jw_int (w, 1);
  jw_int (w, 2); /* two top-level values */
  assert_null (json_writer_finish (w));

  assert_null (json_writer_finish (NULL));
  json_writer_free (NULL);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_size_cap),
    cmocka_unit_test (test_size_cap_argument),
    cmocka_unit_test (test_depth),
    cmocka_unit_test (test_depth_million),
    cmocka_unit_test (test_brackets_in_strings_do_not_count),
    cmocka_unit_test (test_comments_refused),
    cmocka_unit_test (test_invalid_utf8),
    cmocka_unit_test (test_nul_refused),
    cmocka_unit_test (test_bad_text),
    cmocka_unit_test (test_scalars_at_top),
    cmocka_unit_test (test_accessors),
    cmocka_unit_test (test_integers),
    cmocka_unit_test (test_writer_escaping_round_trip),
    cmocka_unit_test (test_writer_invalid_utf8_replaced),
    cmocka_unit_test (test_writer_pretty),
    cmocka_unit_test (test_writer_misuse),
    cmocka_unit_test (test_large_containers),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
