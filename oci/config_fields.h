/* Typed reads of JSON members for the config.json parser (oci/config*.c
 * only). Each getter leaves *ret untouched when the member is absent or
 * null (Go's encoding/json does the same), and on a wrong type fails with
 * the member's JSON path: "process.user.uid: expected integer". A path is
 * the parent's path ("" at the top) plus a key, or NULL for the parent
 * itself (an array element). */
#ifndef MOAT_CONFIG_FIELDS_H
#define MOAT_CONFIG_FIELDS_H

#include <stdbool.h>
#include <stdint.h>

#include "json.h"
#include "spec.h"

/* "parent.key", "key" at the top, "parent" when key is NULL. Heap-owned. */
char *field_path (const char *parent, const char *key);
char *field_index_path (const char *parent, size_t i);

/* Fail with "PATH: WHAT" (path from parent and key as above). */
int field_fail (struct moat_error **err, const char *parent, const char *key,
                const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));

int get_object (const json_node *obj, const char *parent, const char *key,
                const json_node **ret, struct moat_error **err);
int get_array (const json_node *obj, const char *parent, const char *key,
               const json_node **ret, struct moat_error **err);
/* Array of objects: allocates *ret_array (zeroed, owned by the caller even
 * on failure: *ret_count is set first) and calls fn for each element with
 * its path ("mounts[2]") and its slot. */
typedef int (*field_elem_fn) (const json_node *elem, const char *path,
                              void *slot, struct moat_error **err);
int get_object_array (const json_node *obj, const char *parent, const char *key,
                      size_t elem_size, void **ret_array, size_t *ret_count,
                      field_elem_fn fn, struct moat_error **err);

int get_string (const json_node *obj, const char *parent, const char *key,
                char **ret, struct moat_error **err);
/* A string that must be there and not be empty. */
int get_required_string (const json_node *obj, const char *parent,
                         const char *key, char **ret, struct moat_error **err);
int get_bool (const json_node *obj, const char *parent, const char *key,
              bool *ret, struct moat_error **err);
int get_strv (const json_node *obj, const char *parent, const char *key,
              char ***ret, struct moat_error **err);
/* Object of strings ("annotations", "sysctl"); duplicate keys: the last
 * wins. The result is sorted by key. */
int get_string_map (const json_node *obj, const char *parent, const char *key,
                    struct spec_kv **ret, size_t *ret_n,
                    struct moat_error **err);

/* Integers in [min, max]; has (may be NULL) is set when present. */
int get_i64 (const json_node *obj, const char *parent, const char *key,
             int64_t min, int64_t max, bool *has, int64_t *ret,
             struct moat_error **err);
int get_u64 (const json_node *obj, const char *parent, const char *key,
             uint64_t max, bool *has, uint64_t *ret, struct moat_error **err);
int get_u32 (const json_node *obj, const char *parent, const char *key,
             bool *has, uint32_t *ret, struct moat_error **err);
/* The same for a node itself (an array element); it must be present. */
int node_u64 (const json_node *n, const char *parent, const char *key,
              uint64_t max, uint64_t *ret, struct moat_error **err);

/* A member that must be present (for required integers and objects). */
int require_member (const json_node *obj, const char *parent, const char *key,
                    struct moat_error **err);

static inline bool
is_absolute (const char *path)
{
  return path != NULL && path[0] == '/';
}

void spec_kv_free (struct spec_kv *kv, size_t n);

/* oci/config_linux.c */
int parse_linux (const json_node *linux_node, struct spec_linux *ret,
                 struct moat_error **err);
int parse_resources (const json_node *node, const char *path,
                     struct spec_resources *ret, struct moat_error **err);
void spec_linux_clear (struct spec_linux *l);

#endif
