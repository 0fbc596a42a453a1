/* SELinux plumbing (runtime/selinux.c) with libselinux's calls replaced by
 * a stand-in: the exec label reaches setexeccon only where SELinux is on,
 * the mount label lands on the tmpfs mounts as context="...", a label that
 * could inject mount options is refused, and where SELinux is off the
 * labels are ignored with a warning and the status says so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/init/selinux.h"
#include "../../lib/util.h"

static int fake_enabled;
static char *fake_exec_label;
static int fake_calls;
static int fake_fail;

static int
fake_is_enabled (void)
{
  return fake_enabled;
}

static int
fake_set_exec_label (const char *label)
{
  fake_calls++;
  if (fake_fail)
    {
      errno = EINVAL;
      return -1;
    }
  free (fake_exec_label);
  fake_exec_label = xstrdup (label);
  return 0;
}

static const struct selinux_backend fake
    = { .is_enabled = fake_is_enabled, .set_exec_label = fake_set_exec_label };

static int
setup (void **state)
{
  selinux_backend = &fake;
  fake_enabled = 0;
  fake_calls = 0;
  fake_fail = 0;
  free (fake_exec_label);
  fake_exec_label = NULL;
  return 0;
}

static void
test_exec_label (void **state)
{
  struct moat_error *err = NULL;

  /* Off: nothing is called. */
  assert_int_equal (selinux_set_exec_label ("system_u:system_r:t:s0", &err), 0);
  assert_int_equal (fake_calls, 0);
  assert_string_equal (selinux_status (), "selinux: not enabled on this host");

  fake_enabled = 1;
  assert_string_equal (selinux_status (), "selinux");
  assert_int_equal (selinux_set_exec_label (NULL, &err), 0);
  assert_int_equal (selinux_set_exec_label ("", &err), 0);
  assert_int_equal (fake_calls, 0);
  assert_int_equal (
      selinux_set_exec_label ("system_u:system_r:container_t:s0:c1,c2", &err),
      0);
  assert_int_equal (fake_calls, 1);
  assert_string_equal (fake_exec_label,
                       "system_u:system_r:container_t:s0:c1,c2");
  fake_fail = 1;
  assert_true (selinux_set_exec_label ("bad", &err) < 0);
  assert_non_null (strstr (err->msg, "SELinux exec label bad"));
  moat_error_free (&err);
  /* is_selinux_enabled's -1 (error) is not "on". */
  fake_enabled = -1;
  assert_false (selinux_enabled ());
}

static struct spec *
spec_with_mounts (const char *mount_label, const char *proc_label)
{
  struct spec *s = xcalloc (1, sizeof (*s));
  const char *types[] = { "tmpfs", "proc", "tmpfs", "bind" };
  const char *dests[] = { "/tmp", "/proc", "/dev", "/data" };

  s->n_mounts = 4;
  s->mounts = xcalloc (4, sizeof (*s->mounts));
  for (size_t i = 0; i < 4; i++)
    {
      s->mounts[i].type = xstrdup (types[i]);
      s->mounts[i].destination = xstrdup (dests[i]);
      strv_append (&s->mounts[i].options, "nosuid");
    }
  s->linux_.mount_label = mount_label ? xstrdup (mount_label) : NULL;
  s->process = xcalloc (1, sizeof (*s->process));
  s->process->selinux_label = proc_label ? xstrdup (proc_label) : NULL;
  return s;
}

static size_t
n_opts (char **o)
{
  size_t n = 0;
  while (o && o[n])
    n++;
  return n;
}

static void
test_mount_label (void **state)
{
  const char *label = "system_u:object_r:container_file_t:s0:c1,c2";
  struct spec *s = spec_with_mounts (label, NULL);
  struct moat_error *err = NULL;

  fake_enabled = 1;
  assert_int_equal (selinux_apply_mount_label (s, NULL, &err), 0);
  /* Both tmpfs mounts, quoted (the label holds a comma); nothing else. */
  assert_string_equal (
      s->mounts[0].options[1],
      "context=\"system_u:object_r:container_file_t:s0:c1,c2\"");
  assert_string_equal (s->mounts[2].options[1], s->mounts[0].options[1]);
  assert_int_equal (n_opts (s->mounts[1].options), 1);
  assert_int_equal (n_opts (s->mounts[3].options), 1);
  /* Once only. */
  assert_int_equal (selinux_apply_mount_label (s, NULL, &err), 0);
  assert_int_equal (n_opts (s->mounts[0].options), 2);
  spec_free (s);
}

static void
test_label_injection_refused (void **state)
{
  struct moat_error *err = NULL;
  struct spec *s = spec_with_mounts ("x\",suid,dev,\"", NULL);

  fake_enabled = 1;
  assert_true (selinux_apply_mount_label (s, NULL, &err) < 0);
  assert_string_equal (err->msg, "linux.mountLabel: not an SELinux context");
  moat_error_free (&err);
  assert_int_equal (n_opts (s->mounts[0].options), 1);
  spec_free (s);
  s = spec_with_mounts (NULL, "a b");
  assert_true (selinux_apply_mount_label (s, NULL, &err) < 0);
  assert_string_equal (err->msg,
                       "process.selinuxLabel: not an SELinux context");
  moat_error_free (&err);
  spec_free (s);
  /* Refused where SELinux is off too: it is bad input either way. */
  fake_enabled = 0;
  s = spec_with_mounts ("a\"b", NULL);
  assert_true (selinux_apply_mount_label (s, NULL, &err) < 0);
  moat_error_free (&err);
  spec_free (s);
}

static void
test_off_warns (void **state)
{
  struct spec *s = spec_with_mounts ("system_u:object_r:t:s0", "u:r:t:s0");
  struct moat_error *err = NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *w = open_memstream (&buf, &len);

  assert_int_equal (selinux_apply_mount_label (s, w, &err), 0);
  fclose (w);
  assert_int_equal (n_opts (s->mounts[0].options), 1);
  assert_int_equal (fake_calls, 0);
  assert_string_equal (buf,
                       "moat: warning: linux.mountLabel ignored: selinux: not "
                       "enabled on this host\n"
                       "moat: warning: process.selinuxLabel ignored: "
                       "selinux: not enabled on this host\n");
  free (buf);
  spec_free (s);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup (test_exec_label, setup),
    cmocka_unit_test_setup (test_mount_label, setup),
    cmocka_unit_test_setup (test_label_injection_refused, setup),
    cmocka_unit_test_setup (test_off_warns, setup),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
