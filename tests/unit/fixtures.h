/* The sample configs in tests/fixtures, for the unit tests: found in
 * $MOAT_FIXTURES, else tests/fixtures (make runs tests from the top). */
#ifndef MOAT_TEST_FIXTURES_H
#define MOAT_TEST_FIXTURES_H

#include <stddef.h>

#include "../../oci/spec.h"

const char *fixtures_dir (void);
/* The file's text (the test fails if it cannot be read). */
char *read_fixture (const char *name, size_t *len);
/* The fixture through spec_load (the test fails if it does not parse). */
struct spec *load_fixture (const char *name);

#endif
