/* runtime/landlock.c, G14's decision at create: what each kernel and
 * operator mode gives, recorded on the hardened spec whatever config.json
 * said, and the one error: Landlock required on a kernel without it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../policy/verdicts.h"
#include "../../runtime/init/landlock.h"
#include "../../lib/util.h"

/* A spec whose config.json asked for Landlock off itself. */
static struct spec *
spec_asking_off (void)
{
  struct spec *s = xcalloc (1, sizeof (*s));
  s->annotations = xcalloc (1, sizeof (*s->annotations));
  s->annotations[0].key = xstrdup (LANDLOCK_ANNOTATION);
  s->annotations[0].value = xstrdup ("off (operator config)");
  s->n_annotations = 1;
  return s;
}

static void
decide (enum profile_landlock mode, int abi, const char *want)
{
  struct spec *s = spec_asking_off ();
  const struct operator_config cfg = { .landlock = mode };
  const struct host_facts facts = { .landlock_abi = abi };
  char *text = NULL;
  struct moat_error *err = NULL;

  assert_int_equal (profile_decide_landlock (s, &cfg, &facts, &text, &err), 0);
  assert_null (err);
  assert_int_equal (s->n_annotations, 1);
  assert_string_equal (s->annotations[0].value, want);
  assert_string_equal (text, want);
  free (text);
  spec_free (s);
}

static void
test_auto_uses_what_the_kernel_has (void **state)
{
  (void)state;
  decide (PROFILE_LANDLOCK_AUTO, 7,
          "abi 7: writes beneath the writable mounts, exec outside the "
          "noexec ones; abstract unix sockets and signals scoped");
  decide (PROFILE_LANDLOCK_AUTO, 3,
          "abi 3: writes beneath the writable mounts, exec outside the "
          "noexec ones");
  decide (PROFILE_LANDLOCK_AUTO, 2,
          "abi 2: writes beneath the writable mounts, exec outside the "
          "noexec ones; truncate not covered");
  decide (PROFILE_LANDLOCK_AUTO, 1,
          "unused: abi 1 refuses renames across directories");
  decide (PROFILE_LANDLOCK_AUTO, 0, "unavailable (kernel)");
  decide (PROFILE_LANDLOCK_OFF, 7, "off (operator config)");
  decide (PROFILE_LANDLOCK_REQUIRE, 2,
          "abi 2: writes beneath the writable mounts, exec outside the "
          "noexec ones; truncate not covered");
}

static void
test_required_on_a_kernel_without_it_fails (void **state)
{
  (void)state;
  for (int abi = 0; abi < 2; abi++)
    {
      struct spec *s = spec_asking_off ();
      const struct operator_config cfg
          = { .landlock = PROFILE_LANDLOCK_REQUIRE };
      const struct host_facts facts = { .landlock_abi = abi };
      struct moat_error *err = NULL;
      assert_int_equal (profile_decide_landlock (s, &cfg, &facts, NULL, &err),
                        -1);
      assert_non_null (err);
      assert_string_equal (
          err->msg, abi == 0
                        ? "landlock: required by the operator config: "
                          "unavailable (kernel) (needs ABI 2)"
                        : "landlock: required by the operator config: "
                          "unused: abi 1 refuses renames across directories "
                          "(needs ABI 2)");
      moat_error_free (&err);
      spec_free (s);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_auto_uses_what_the_kernel_has),
    cmocka_unit_test (test_required_on_a_kernel_without_it_fails),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
