/* libFuzzer target for the config.json parser (and the parsers that share
 * its code: exec's process.json, update's resources JSON, the state file).
 * Any crash, leak or sanitizer report is a bug: the parser must refuse bad
 * input with an error, whatever the bytes. */
#include <stddef.h>
#include <stdint.h>

#include "../../oci/spec.h"
#include "../../oci/state.h"
#include "../../runtime/error.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *text = (const char *)data;
  struct moat_error *err = NULL;
  struct spec *s = NULL;
  struct spec_process *p = NULL;
  struct spec_resources res;
  struct container_state *st = NULL;

  if (spec_parse (text, size, &s, &err) == 0)
    spec_free (s);
  moat_error_free (&err);

  if (spec_process_parse (text, size, &p, &err) == 0)
    spec_process_free (p);
  moat_error_free (&err);

  if (spec_resources_parse (text, size, &res, &err) == 0)
    spec_resources_clear (&res);
  moat_error_free (&err);

  if (state_from_json (text, size, &st, &err) == 0)
    state_free (st);
  moat_error_free (&err);
  return 0;
}
