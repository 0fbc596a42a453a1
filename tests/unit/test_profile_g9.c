/* policy/profile.c, G9: a cgroup namespace always (added when absent,
 * the host's replaced, joining the host's refused) and the masks against
 * kernel exploits, whatever config.json lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../oci/spec.h"
#include "../../policy/profile.h"
#include "../../lib/util.h"

static const char *const exploit_helpers[] = {
  "/proc/slabinfo",
  "/proc/vmallocinfo",
  "/proc/kpageflags",
  "/proc/kpagecount",
  "/proc/kpagecgroup",
  "/proc/pagetypeinfo",
  "/proc/zoneinfo",
  "/proc/buddyinfo",
  "/proc/iomem",
  "/proc/ioports",
  "/proc/key-users",
  "/proc/config.gz",
  "/sys/kernel/vmcoreinfo",
  "/sys/kernel/notes",
  "/sys/kernel/btf",
  "/sys/kernel/debug",
  "/sys/kernel/tracing",
  "/sys/kernel/slab",
  "/sys/module",
};

/* The strict profile from an empty operator config (never the host's
 * /etc/moat/config.json). */
static struct profile *
strict_profile (void)
{
  char config[] = "/tmp/moat-test-g9-XXXXXX";
  int fd = mkstemp (config);
  struct profile *p = NULL;
  struct moat_error *err = NULL;

  assert_true (fd >= 0);
  assert_int_equal (write (fd, "{}\n", 3), 3);
  close (fd);
  assert_int_equal (profile_load (config, "strict", &p, NULL, &err), 0);
  unlink (config);
  return p;
}

/* A config.json with LINUX as its "linux" object, through the profile. */
static struct spec *
hardened (const struct profile *p, const char *linux_, struct override_list *ov)
{
  cleanup_free char *json = xasprintf (
      "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
      "\"process\":{\"args\":[\"true\"],\"cwd\":\"/\"},\"linux\":{%s}}",
      linux_);
  struct spec *s = NULL;
  struct moat_error *err = NULL;

  assert_int_equal (spec_parse (json, strlen (json), &s, &err), 0);
  assert_int_equal (profile_apply (s, p, NULL, ov, &err), 0);
  return s;
}

static bool
listed (char *const *v, const char *path)
{
  for (size_t i = 0; v && v[i]; i++)
    if (strcmp (v[i], path) == 0)
      return true;
  return false;
}

static void
test_cgroup_namespace_always (void **state)
{
  struct profile *p = strict_profile ();
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  struct spec *absent
      = hardened (p, "\"namespaces\":[{\"type\":\"pid\"}]", &ov);
  struct spec *host = hardened (p,
                                "\"namespaces\":[{\"type\":\"cgroup\",\"path\":"
                                "\"/proc/self/ns/cgroup\"}]",
                                &ov);

  (void)state;
  assert_true (absent->linux_.ns[NS_CGROUP].present);
  assert_null (absent->linux_.ns[NS_CGROUP].path);
  assert_true (host->linux_.ns[NS_CGROUP].present);
  assert_null (host->linux_.ns[NS_CGROUP].path);
  /* A path that turns out to be the host's namespace at create. */
  assert_true (profile_check_ns_join (NS_CGROUP, 1, 2, 1, 2, p, &err) < 0);
  assert_string_equal (err->msg, "refusing to join the host's cgroup "
                                 "namespace (profile strict)");
  moat_error_free (&err);
  override_list_clear (&ov);
  spec_free (absent);
  spec_free (host);
  profile_free (p);
}

static void
test_exploit_helpers_masked (void **state)
{
  struct profile *p = strict_profile ();
  struct spec *s = hardened (p, "\"maskedPaths\":[]", NULL);

  (void)state;
  for (size_t i = 0; i < sizeof (exploit_helpers) / sizeof (*exploit_helpers);
       i++)
    if (!listed (s->linux_.masked_paths, exploit_helpers[i]))
      fail_msg ("%s is not masked", exploit_helpers[i]);
  spec_free (s);
  profile_free (p);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_cgroup_namespace_always),
    cmocka_unit_test (test_exploit_helpers_masked),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
