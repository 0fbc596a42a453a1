/* G12's policy (policy/profile_userns.c) and its operator keys: who gets
 * a user namespace moat maps, which config.json mappings are kept, which
 * are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../policy/profile.h"

/* The profile an operator config text gives (NULL: an error, in *msg). */
static struct profile *
profile_config_from (const char *config, char **msg,
                     struct operator_config **ret_config)
{
  char path[] = "/tmp/moat-test-userns-XXXXXX";
  int fd = mkstemp (path);
  struct profile *p = NULL;
  struct moat_error *err = NULL;

  assert_true (fd >= 0);
  assert_int_equal (write (fd, config, strlen (config)),
                    (ssize_t)strlen (config));
  close (fd);
  if (profile_load (path, "strict", &p, ret_config, &err) < 0)
    {
      *msg = strdup (err->msg);
      moat_error_free (&err);
    }
  unlink (path);
  return p;
}

static struct profile *
profile_from (const char *config, char **msg)
{
  return profile_config_from (config, msg, NULL);
}

static struct spec *
spec_with_user (const char *maps)
{
  char json[2048];
  struct spec *s = NULL;
  struct moat_error *err = NULL;

  snprintf (json, sizeof (json),
            "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"},"
            " \"process\": {\"args\": [\"true\"], \"cwd\": \"/\"},"
            " \"linux\": {\"namespaces\": [{\"type\": \"user\"}] %s}}",
            maps);
  if (spec_parse (json, strlen (json), &s, &err) < 0)
    fail_msg ("spec_parse: %s", err->msg);
  return s;
}

static void
test_defaults_and_show (void **state)
{
  char *msg = NULL;
  struct operator_config *config = NULL;
  struct profile *p = profile_config_from ("{}", &msg, &config);
  char *json = NULL;

  (void)state;
  assert_non_null (p);
  assert_true (p->userns);
  assert_int_equal (config->userns_first, 0x40000000u);
  assert_int_equal (config->userns_blocks, 16384);
  assert_string_equal (config->userns_pool_dir, "/run/moat-idpool");
  assert_int_equal (profile_to_json (p, config, &json, NULL), 0);
  operator_config_free (config);
  assert_non_null (strstr (json, "\"userns\""));
  free (json);
  profile_free (p);
}

static void
test_operator_keys (void **state)
{
  static const struct
  {
    const char *config, *error;
  } bad[] = {
    { "{\"userns\": {\"enabled\": 1}}",
      "userns.enabled: expected true or false" },
    { "{\"userns\": {\"first_id\": 100}}",
      "userns.first_id: expected a multiple of 65536, at least 65536" },
    { "{\"userns\": {\"first_id\": 4294901760, \"blocks\": 1}}",
      "userns: first_id + blocks * 65536 reaches past 4294901760 (the ids "
      "-1 and 65534 mean nobody)" },
    { "{\"userns\": {\"pool_dir\": \"run\"}}",
      "userns.pool_dir: expected an absolute path" },
    { "{\"userns\": {\"size\": 1}}", "userns.size: unknown key" },
  };
  char *msg = NULL;
  struct operator_config *config = NULL;
  struct profile *p = profile_config_from (
      "{\"userns\": {\"enabled\": false, \"first_id\": 2147483648, "
      "\"blocks\": 2, \"pool_dir\": \"/run/x\"}}",
      &msg, &config);

  (void)state;
  assert_non_null (p);
  assert_false (p->userns);
  assert_int_equal (config->userns_first, 2147483648u);
  assert_int_equal (config->userns_blocks, 2);
  assert_string_equal (config->userns_pool_dir, "/run/x");
  operator_config_free (config);
  profile_free (p);
  for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
    {
      msg = NULL;
      assert_null (profile_from (bad[i].config, &msg));
      assert_non_null (strstr (msg, bad[i].error));
      free (msg);
    }
}

static void
test_config_mappings (void **state)
{
  char *msg = NULL;
  struct profile *p = profile_from ("{}", &msg);
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;
  struct spec *s;

  (void)state;
  /* Podman's --uidmap: kept as asked. */
  s = spec_with_user (
      ", \"uidMappings\": [{\"containerID\": 0, \"hostID\": 100000, "
      "\"size\": 65536}], \"gidMappings\": [{\"containerID\": 0, "
      "\"hostID\": 100000, \"size\": 65536}]");
  assert_int_equal (profile_apply (s, p, NULL, &ov, &err), 0);
  assert_int_equal (s->linux_.n_uid_mappings, 1);
  assert_int_equal (s->linux_.uid_mappings[0].host_id, 100000);
  spec_free (s);
  override_list_clear (&ov);
  /* Host id 0 anywhere in a range: refused. */
  s = spec_with_user (", \"uidMappings\": [{\"containerID\": 0, "
                      "\"hostID\": 0, \"size\": 1}]");
  assert_int_equal (profile_apply (s, p, NULL, &ov, &err), -1);
  assert_string_equal (err->msg, "linux.uidMappings[0]: maps host id 0: "
                                 "container root would be host root "
                                 "(profile strict)");
  moat_error_free (&err);
  spec_free (s);
  override_list_clear (&ov);
  /* Into the pool, where other containers' blocks are: refused. */
  s = spec_with_user (
      ", \"uidMappings\": [{\"containerID\": 0, \"hostID\": 100000, "
      "\"size\": 65536}], \"gidMappings\": [{\"containerID\": 0, "
      "\"hostID\": 1073807360, \"size\": 10}]");
  assert_int_equal (profile_apply (s, p, NULL, &ov, &err), -1);
  assert_non_null (strstr (err->msg, "linux.gidMappings[0]: reaches moat's "
                                     "id pool"));
  moat_error_free (&err);
  spec_free (s);
  override_list_clear (&ov);
  /* Docker's ping_group_range: clamped to the gids moat maps. */
  {
    const char *json
        = "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"r\"},"
          " \"process\": {\"args\": [\"true\"], \"cwd\": \"/\"},"
          " \"linux\": {\"sysctl\": {\"net.ipv4.ping_group_range\":"
          " \"0 2147483647\"}}}";
    assert_int_equal (spec_parse (json, strlen (json), &s, &err), 0);
    assert_int_equal (profile_apply (s, p, NULL, &ov, &err), 0);
    assert_int_equal (s->linux_.n_sysctl, 1);
    assert_string_equal (s->linux_.sysctl[0].value, "0 65535");
    spec_free (s);
    override_list_clear (&ov);
  }
  /* A user namespace without mappings: moat maps it. */
  s = spec_with_user ("");
  assert_int_equal (profile_apply (s, p, NULL, &ov, &err), 0);
  assert_true (s->linux_.ns[NS_USER].present);
  assert_int_equal (s->linux_.n_uid_mappings, 0);
  spec_free (s);
  override_list_clear (&ov);
  profile_free (p);
}

static void
test_joined_maps (void **state)
{
  struct moat_error *err = NULL;

  (void)state;
  assert_int_equal (profile_check_joined_idmap (
                        "         0 1073741824      65536\n", "uid", &err),
                    0);
  assert_int_equal (
      profile_check_joined_idmap ("0 100000 10\n5 0 1\n", "gid", &err), -1);
  assert_non_null (strstr (err->msg, "maps host gid 0"));
  moat_error_free (&err);
  assert_int_equal (
      profile_check_joined_idmap ("0 0 4294967295\n", "uid", &err), -1);
  moat_error_free (&err);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_defaults_and_show),
    cmocka_unit_test (test_operator_keys),
    cmocka_unit_test (test_config_mappings),
    cmocka_unit_test (test_joined_maps),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
