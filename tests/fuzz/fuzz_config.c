/* libFuzzer target for the config.json parser (and the parsers that share
 * its code: exec's process.json, update's resources JSON, the state file,
 * the decision saved in policy.json), and for the policy on whatever parses:
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
#include "../../oci/json.h"
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

  if (profile_load (NULL, NULL, &profile, NULL, &err) < 0)
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

/* The decision d written back by decision_write_parts, as create writes
 * it, with the judged values and overrides (a record no verb reads). */
static char *
decision_to_json (const struct decision *d, const struct decision_guard *g)
{
  struct json_writer *w = json_writer_new (false);

  jw_object_begin (w);
  jw_key (w, "version");
  jw_int (w, DECISION_VERSION);
  jw_key (w, "profile");
  jw_object_begin (w);
  jw_key (w, "name");
  jw_string (w, d->profile_name);
  jw_object_end (w);
  decision_write_parts (w, d->spec, &d->process, &d->resources, g,
                        d->nameservers, d->userns_pool_dir);
  jw_object_end (w);
  return json_writer_finish (w);
}

/* G2: every metadata range is in the loaded guard's deny list, whatever
 * the saved one said. */
static void
check_metadata_denied (const struct decision_guard *g)
{
  for (size_t i = 0; decision_metadata_ranges[i]; i++)
    {
      struct cidr m;
      bool denied = false;
      if (cidr_parse (decision_metadata_ranges[i], &m) < 0)
        abort ();
      for (size_t k = 0; k < g->n_deny; k++)
        denied |= cidr_contains (&g->deny[k], &m);
      if (!denied)
        abort ();
    }
}

/* A loaded decision saves and loads again to the same text, guard lists
 * included (when they parse). */
static void
check_decision_round_trip (const struct decision *d)
{
  struct decision_guard g, g2;
  struct decision *again = NULL;
  char *a, *b;

  if (decision_guard_lists (d, &g, NULL) < 0)
    return;
  check_metadata_denied (&g);
  a = decision_to_json (d, &g);
  if (decision_parse (a, strlen (a), &again, NULL) < 0
      || decision_guard_lists (again, &g2, NULL) < 0)
    abort ();
  b = decision_to_json (again, &g2);
  if (strcmp (a, b) != 0)
    abort ();
  free (a);
  free (b);
  decision_free (again);
  decision_guard_free (&g);
  decision_guard_free (&g2);
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
      profile_apply (s, profile, NULL, &ov, NULL);
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
   * what loads as a decision, with its guard lists, is written back and
   * loaded again to the same text. */
  {
    struct decision *d = NULL;
    if (decision_parse (text, size, &d, NULL) == 0)
      check_decision_round_trip (d);
    decision_free (d);
  }
  return 0;
}
