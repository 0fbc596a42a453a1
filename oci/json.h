/* The only place that knows libyajl. A parsed tree with capped input, plus a
 * small writer. */
#ifndef MOAT_JSON_H
#define MOAT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/error.h"

#define JSON_MAX_SIZE (4u * 1024 * 1024)
#define JSON_MAX_DEPTH 64

typedef struct json_node json_node; /* opaque (yajl_val underneath) */

/* Parse text: refuses > max_size bytes or nesting > JSON_MAX_DEPTH before the
 * parser sees it, invalid UTF-8, and trailing garbage. */
int json_parse (const char *text, size_t len, size_t max_size, json_node **ret,
                struct moat_error **err);
void json_free (json_node *n);

bool json_is_object (const json_node *n);
bool json_is_array (const json_node *n);
bool json_is_string (const json_node *n);
bool json_is_number (const json_node *n);
bool json_is_integer (const json_node *n); /* a number without fraction */
bool json_is_bool (const json_node *n);
bool json_is_null (const json_node *n);

/* Object member by key (NULL if absent). */
json_node *json_get (const json_node *obj, const char *key);
size_t json_object_len (const json_node *obj);
const char *json_object_key (const json_node *obj, size_t i);
json_node *json_object_value (const json_node *obj, size_t i);
size_t json_array_len (const json_node *arr);
json_node *json_array_get (const json_node *arr, size_t i);
const char *json_string (const json_node *n);
bool json_bool (const json_node *n);
/* A member's string; with nullable, null or absent reads as "" (else
 * NULL: absent or not a string). */
const char *json_member_string (const json_node *obj, const char *key,
                                bool nullable);
/* Integer value; -ERANGE if it does not fit. */
int json_int64 (const json_node *n, int64_t *ret);
int json_uint64 (const json_node *n, uint64_t *ret);

/* Writer: builds compact JSON text in memory. */
struct json_writer; /* opaque */
struct json_writer *json_writer_new (bool pretty);
void json_writer_free (struct json_writer *w);
void jw_object_begin (struct json_writer *w);
void jw_object_end (struct json_writer *w);
void jw_array_begin (struct json_writer *w);
void jw_array_end (struct json_writer *w);
void jw_key (struct json_writer *w, const char *key);
void jw_string (struct json_writer *w, const char *s); /* NULL -> null */
void jw_int (struct json_writer *w, int64_t v);
void jw_uint (struct json_writer *w, uint64_t v);
void jw_bool (struct json_writer *w, bool v);
void jw_null (struct json_writer *w);
/* KEY: [STRING, ...] (v NULL-terminated, NULL: []). */
void jw_strv_member (struct json_writer *w, const char *key, char *const *v);
/* Insert already-valid JSON text as a value. */
void jw_raw (struct json_writer *w, const char *json);
/* A parsed value again (numbers as their text). */
void jw_node (struct json_writer *w, const json_node *n);
/* Finish: returns the text (malloc'ed, NUL-terminated) and frees w. */
char *json_writer_finish (struct json_writer *w);

#endif
