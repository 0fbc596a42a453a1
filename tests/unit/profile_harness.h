/* Shared by the profile unit tests (test_profile*.c): a profile loaded
 * from an empty operator config, specs written inline, and lookups in a
 * hardened spec and its override list. */
#ifndef MOAT_TEST_PROFILE_HARNESS_H
#define MOAT_TEST_PROFILE_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "../../oci/spec.h"
#include "../../policy/profile.h"

#define FIXTURES "tests/fixtures"
#define MIB (INT64_C (1) << 20)

/* The named profile (NULL: the default) over an operator config "{}". */
struct profile *load_profile (const char *name);
struct spec *parse_spec (const char *json);
/* A spec with these mounts, annotations and linux members (JSON text
 * between the brackets or braces). */
struct spec *spec_with (const char *mounts, const char *annotations,
                        const char *linux_);
const struct override *find_override (const struct override_list *ov,
                                      enum override_kind kind,
                                      const char *path);
bool has_option (const struct spec_mount *m, const char *opt);
bool strv_has (char *const *v, const char *s);
const struct spec_mount *find_mount (const struct spec *s, const char *dest);
const struct spec_rlimit *find_rlimit (const struct spec_process *p,
                                       int resource);

#endif
