/* libFuzzer target for the config.json parser (and the parsers that share
 * its code: exec's process.json, update's resources JSON, the state file),
 * and for the policy on whatever parses: profile_apply on a config,
 * profile_apply_process on a process, profile_apply_resources on an
 * update, under the built-in profile (profile_load (NULL, ...)).
 * Any crash, leak or sanitizer report is a bug: the parser must refuse bad
 * input with an error, whatever the bytes, and the policy must harden any
 * spec the parser lets through.
 *
 * Build and run (`make fuzz` does the same; the objects are the parsers,
 * the policy, and what the policy needs of netguard for its CIDRs):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=gnu11 \
 *     -D_GNU_SOURCE $(pkg-config --cflags yajl libcap) \
 *     tests/fuzz/fuzz_config.c oci/[a-z]*.c runtime/profile[a-z_]*.c \
 *     runtime/netguard.c runtime/netguard_bpf.c runtime/util.c \
 *     runtime/error.c $(pkg-config --libs yajl libcap) \
 *     -o build-fuzz/fuzz_config
 *   build-fuzz/fuzz_config -dict=tests/fuzz/config.dict -max_len=65536 \
 *     -max_total_time=600 tests/fuzz/corpus */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../oci/spec.h"
#include "../../oci/state.h"
#include "../../runtime/error.h"
#include "../../runtime/profile.h"

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static struct profile *profile;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  struct moat_error *err = NULL;

  if (profile_load (NULL, NULL, &profile, &err) < 0)
    {
      fprintf (stderr, "fuzz_config: profile_load: %s\n", err->msg);
      abort ();
    }
  return 0;
}

/* Each override must be complete: the audit log prints them all. */
static void
check_overrides (struct override_list *ov)
{
  for (size_t i = 0; i < ov->n; i++)
    if (ov->v[i].path == NULL || override_kind_name (ov->v[i].kind) == NULL)
      abort ();
  override_list_clear (ov);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *text = (const char *)data;
  struct moat_error *err = NULL;
  struct spec *s = NULL;
  struct spec_process *p = NULL;
  struct spec_resources res;
  struct container_state *st = NULL;

  struct override_list ov = { 0 };

  if (spec_parse (text, size, &s, &err) == 0)
    {
      /* A refusal is a valid answer; the spec stays freeable either way. */
      profile_apply (s, profile, &ov, NULL);
      check_overrides (&ov);
      spec_free (s);
    }
  moat_error_free (&err);

  if (spec_process_parse (text, size, &p, &err) == 0)
    {
      profile_apply_process (p, profile, &ov, NULL);
      check_overrides (&ov);
      spec_process_free (p);
    }
  moat_error_free (&err);

  if (spec_resources_parse (text, size, &res, &err) == 0)
    {
      profile_apply_resources (&res, profile, &ov, NULL);
      check_overrides (&ov);
      spec_resources_clear (&res);
    }
  moat_error_free (&err);

  if (state_from_json (text, size, &st, &err) == 0)
    state_free (st);
  moat_error_free (&err);
  return 0;
}
