/* libFuzzer target for the config.json parser (and the parsers that share
 * its code: exec's process.json, update's resources JSON, the state file,
 * the saved policy.json), and for the policy on whatever parses:
 * profile_apply on a config, profile_apply_process on a process,
 * profile_apply_resources on an update, under the built-in profile
 * (profile_load (NULL, ...)).
 * Any crash, leak or sanitizer report is a bug: the parser must refuse bad
 * input with an error, whatever the bytes, and the policy must harden any
 * spec the parser lets through.
 *
 * Build and run: `make fuzz` builds the library for libFuzzer
 * (build-fuzz/libmoat.a) and links this file against it; the linker takes
 * the objects it needs (the parsers, the policy, netguard's CIDR parser).
 * Then:
 *   build-fuzz/fuzz_config -dict=tests/fuzz/config.dict -max_len=65536 \
 *     -max_total_time=600 tests/fuzz/corpus */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../oci/decision.h"
#include "../../oci/spec.h"
#include "../../oci/state.h"
#include "../../lib/error.h"
#include "../../policy/profile.h"

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

  /* policy.json (moat's own, but a verb must not crash on a damaged one):
   * what parses is written back and parsed again to the same text. */
  {
    struct profile *saved = NULL;
    struct decision *d = NULL;
    if (profile_policy_parse (text, size, &saved, &ov, &err) == 0
        && decision_parse (text, size, &d, NULL) == 0)
      {
        char *a = profile_policy_to_json (saved, &ov, d->spec, NULL, 0), *b;
        struct profile *again = NULL;
        struct decision *d2 = NULL;
        struct override_list ov2 = { 0 };
        if (profile_policy_parse (a, strlen (a), &again, &ov2, NULL) < 0
            || decision_parse (a, strlen (a), &d2, NULL) < 0)
          abort ();
        b = profile_policy_to_json (again, &ov2, d2->spec, NULL, 0);
        if (strcmp (a, b) != 0)
          abort ();
        free (a);
        free (b);
        profile_free (again);
        decision_free (d2);
        check_overrides (&ov2);
      }
    decision_free (d);
    check_overrides (&ov);
    if (saved)
      profile_free (saved);
    moat_error_free (&err);
  }
  return 0;
}
