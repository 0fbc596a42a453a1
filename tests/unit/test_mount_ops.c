/* The mount setup as an ordered list of typed operations, built from the
 * hardened spec (runtime/mount_ops.c): what `moat profile explain` prints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "../../runtime/init/mount_ops.h"
#include "../../policy/profile.h"
#include "../../lib/util.h"
#include "profile_harness.h"

static struct spec *
hardened (const char *mounts_json, const char *extra)
{
  cleanup_free char *text = xasprintf (
      "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"},"
      " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/work\"},"
      " \"mounts\": %s, \"linux\": {%s}}",
      mounts_json, extra);
  struct spec *s = NULL;
  struct profile *p = NULL;
  struct override_list ov = { 0 };
  struct moat_error *err = NULL;

  if (spec_parse (text, strlen (text), &s, &err) < 0)
    fail_msg ("spec_parse: %s", err->msg);
  if (profile_load (NULL, "strict", &p, NULL, &err) < 0)
    fail_msg ("profile_load: %s", err->msg);
  if (profile_apply (s, p, NULL, &ov, &err) < 0)
    fail_msg ("profile_apply: %s", err->msg);
  override_list_clear (&ov);
  profile_free (p);
  return s;
}

static size_t
find (const struct mount_plan *p, enum mount_op_kind k, const char *dest)
{
  for (size_t i = 0; i < p->n; i++)
    if (p->v[i].kind == k && strcmp (p->v[i].dest, dest) == 0)
      return i;
  fail_msg ("no %s op at %s", mount_op_kind_name (k), dest);
  return 0;
}

static void
test_order (void **state)
{
  struct spec *s = hardened (
      "[{\"destination\": \"/proc\", \"type\": \"proc\", \"source\": "
      "\"proc\"},"
      " {\"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": "
      "\"tmpfs\"},"
      " {\"destination\": \"/data\", \"type\": \"bind\", \"source\": "
      "\"/srv/data\", \"options\": [\"rbind\"]}]",
      "\"rootfsPropagation\": \"rslave\"");
  struct mount_plan p = { 0 };
  size_t proc, dev, data, tmp, null, cwd, pivot, kcore, ro, prop;

  mount_plan_build (s, "/b/rootfs", CGROUP_MODE_V2, false, &p);
  assert_true (p.n > 10);
  /* The rootfs first, the root's own attributes last. */
  assert_int_equal (p.v[0].kind, MOUNT_OP_ROOTFS);
  assert_string_equal (p.v[0].source, "/b/rootfs");
  assert_int_equal (p.v[p.n - 1].kind, MOUNT_OP_ROOT_ATTRS);
  assert_string_equal (p.v[p.n - 1].options, "ro,nosuid,nodev");
  proc = find (&p, MOUNT_OP_MOUNT, "/proc");
  dev = find (&p, MOUNT_OP_MOUNT, "/dev");
  data = find (&p, MOUNT_OP_BIND, "/data");
  tmp = find (&p, MOUNT_OP_MOUNT, "/tmp"); /* the profile's scratch */
  null = find (&p, MOUNT_OP_DEV_NODE, "/dev/null");
  cwd = find (&p, MOUNT_OP_MKDIR, "/work");
  pivot = find (&p, MOUNT_OP_PIVOT, "/");
  ro = find (&p, MOUNT_OP_READONLY, "/proc/sys");
  kcore = find (&p, MOUNT_OP_MASK, "/proc/kcore");
  prop = find (&p, MOUNT_OP_PROPAGATION, "/");
  assert_true (proc < dev && dev < data && data < null);
  assert_true (tmp < null && null < cwd && cwd < pivot);
  assert_true (pivot < ro && ro < kcore && kcore < prop);
  /* Each spec mount op points back at its mounts[] entry, hardened. */
  assert_string_equal (s->mounts[p.v[data].mount_index].destination, "/data");
  assert_string_equal (p.v[data].options, "rbind,nosuid,nodev");
  assert_string_equal (p.v[data].source, "/srv/data");
  assert_string_equal (p.v[proc].type, "proc");
  assert_string_equal (p.v[prop].options, "rslave");
  assert_string_equal (p.v[pivot].options, "pivot_root");
  {
    cleanup_free char *t = mount_op_text (&p.v[data]);
    assert_string_equal (t, "bind /srv/data at /data (rbind,nosuid,nodev)");
  }
  mount_plan_clear (&p);
  assert_int_equal (p.n, 0);
  spec_free (s);
}

/* No /dev mount: no device nodes or links; --no-pivot: chroot. */
static void
test_no_dev_no_pivot (void **state)
{
  struct spec *s = hardened ("[]", "\"maskedPaths\": []");
  struct mount_plan p = { 0 };

  mount_plan_build (s, "/b/rootfs", CGROUP_MODE_V2, true, &p);
  for (size_t i = 0; i < p.n; i++)
    {
      assert_int_not_equal (p.v[i].kind, MOUNT_OP_DEV_NODE);
      assert_int_not_equal (p.v[i].kind, MOUNT_OP_DEV_LINK);
      assert_int_not_equal (p.v[i].kind, MOUNT_OP_PROPAGATION);
    }
  assert_string_equal (p.v[find (&p, MOUNT_OP_PIVOT, "/")].options, "chroot");
  /* The profile's masks hold even when config.json asks for none. */
  find (&p, MOUNT_OP_MASK, "/proc/kcore");
  mount_plan_clear (&p);
  spec_free (s);
}

/* cgroup mounts: the container's own cgroup2 (v2), else an empty
 * read-only tmpfs; read-only either way, "ro" said once. */
static void
test_cgroup (void **state)
{
  struct spec *s = hardened ("[{\"destination\": \"/sys/fs/cgroup\", "
                             "\"type\": \"cgroup\", \"source\": \"cgroup\", "
                             "\"options\": [\"ro\"]}]",
                             "\"maskedPaths\": []");
  struct mount_plan p = { 0 };
  size_t i;

  mount_plan_build (s, "/r", CGROUP_MODE_V2, false, &p);
  i = find (&p, MOUNT_OP_MOUNT, "/sys/fs/cgroup");
  assert_string_equal (p.v[i].type, "cgroup2");
  assert_string_equal (p.v[i].options, "ro,nosuid,nodev,noexec");
  assert_null (p.v[i].data);
  assert_true (p.v[i].flags & MS_RDONLY);
  assert_true (p.v[i].sysfs_ok);
  mount_plan_clear (&p);
  mount_plan_build (s, "/r", CGROUP_MODE_HYBRID, false, &p);
  i = find (&p, MOUNT_OP_MOUNT, "/sys/fs/cgroup");
  assert_string_equal (p.v[i].type, "tmpfs");
  assert_non_null (strstr (p.v[i].options, "size=0,mode=555"));
  assert_null (strstr (p.v[i].options, "ro,ro"));
  assert_string_equal (p.v[i].data, "size=0,mode=555");
  assert_true (p.v[i].flags & MS_RDONLY);
  assert_true (p.v[i].sysfs_ok);
  mount_plan_clear (&p);
  spec_free (s);
}

/* What the executor applies is worked out in the plan: a bind's flags,
 * propagation and rro; a filesystem's own options; the root's and /dev's
 * attributes; the read-only paths' bind. */
static void
test_flags (void **state)
{
  struct spec *s = hardened (
      "[{\"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": "
      "\"tmpfs\", \"options\": [\"mode=755\", \"size=65536k\"]},"
      " {\"destination\": \"/data\", \"type\": \"bind\", \"source\": "
      "\"/srv/data\", \"options\": [\"rbind\", \"rshared\", \"rro\"]},"
      " {\"destination\": \"/one\", \"type\": \"bind\", \"source\": "
      "\"/srv/one\", \"options\": [\"bind\", \"ro\"]}]",
      "\"rootfsPropagation\": \"rslave\"");
  struct mount_plan p = { 0 };
  const struct mount_op *op;

  mount_plan_build (s, "/b/rootfs", CGROUP_MODE_V2, false, &p);
  op = &p.v[0];
  assert_int_equal (op->flags, MS_BIND | MS_REC);
  assert_int_equal (op->propagation, MS_SLAVE | MS_REC);

  op = &p.v[find (&p, MOUNT_OP_MOUNT, "/dev")];
  assert_null (op->error);
  assert_string_equal (op->type, "tmpfs");
  assert_non_null (strstr (op->data, "mode=755"));
  assert_non_null (strstr (op->data, "size=65536k"));
  assert_true (op->flags & MS_NOSUID);
  assert_false (op->flags & (MS_BIND | MS_REC));
  assert_false (op->sysfs_ok);

  op = &p.v[find (&p, MOUNT_OP_BIND, "/data")];
  assert_null (op->error);
  assert_true (op->recursive_ro);
  assert_int_equal (op->flags & (MS_BIND | MS_REC | MS_RDONLY),
                    MS_BIND | MS_REC | MS_RDONLY);
  assert_true (op->flags & MS_NOSUID);
  assert_true (op->flags & MS_NODEV);
  assert_int_equal (op->propagation, MS_SHARED | MS_REC);
  assert_false (op->flags & MS_SHARED);
  assert_int_equal (op->mount_index, 1);

  /* "ro" on a bind: the top mount read-only, not rro. */
  op = &p.v[find (&p, MOUNT_OP_BIND, "/one")];
  assert_false (op->recursive_ro);
  assert_true (op->flags & MS_RDONLY);
  assert_false (op->flags & MS_REC);
  assert_int_equal (op->propagation, 0);

  op = &p.v[find (&p, MOUNT_OP_DEV_NODE, "/dev/null")];
  assert_string_equal (op->source, "/dev/null");
  assert_int_equal (op->major, 1);
  assert_int_equal (op->minor, 3);
  assert_int_equal (op->flags, MS_NOSUID | MS_NOEXEC);
  op = &p.v[find (&p, MOUNT_OP_DEV_NODE, "/dev/tty")];
  assert_int_equal (op->major, 5);
  assert_int_equal (op->minor, 0);
  op = &p.v[find (&p, MOUNT_OP_DEV_LINK, "/dev/ptmx")];
  assert_string_equal (op->source, "pts/ptmx");

  op = &p.v[find (&p, MOUNT_OP_PIVOT, "/")];
  assert_false (op->chroot);
  op = &p.v[find (&p, MOUNT_OP_READONLY, "/proc/sys")];
  assert_int_equal (op->flags,
                    MS_BIND | MS_REC | MS_RDONLY | MS_NOSUID | MS_NODEV);
  op = &p.v[find (&p, MOUNT_OP_PROPAGATION, "/")];
  assert_null (op->error);
  assert_int_equal (op->propagation, MS_SLAVE | MS_REC);
  op = &p.v[find (&p, MOUNT_OP_ATTRS, "/dev")];
  assert_int_equal (op->attrs, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC);
  op = &p.v[p.n - 1];
  assert_int_equal (op->attrs,
                    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  for (size_t i = 0; i < p.n; i++)
    assert_null (p.v[i].error);
  mount_plan_clear (&p);
  mount_plan_build (s, "/b/rootfs", CGROUP_MODE_V2, true, &p);
  assert_true (p.v[find (&p, MOUNT_OP_PIVOT, "/")].chroot);
  mount_plan_clear (&p);
  spec_free (s);
}

/* A device of config.json is bound from the host's node of its number
 * (c 1:3 is /dev/null whatever its name); others from their own name. */
static void
test_dev_by_number (void **state)
{
  struct spec *s = hardened (
      "[{\"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": "
      "\"tmpfs\"}]",
      "\"devices\": [{\"path\": \"/dev/test1\", \"type\": \"c\", "
      "\"major\": 1, \"minor\": 3}, {\"path\": \"/dev/null\", \"type\": "
      "\"c\", \"major\": 1, \"minor\": 3}]");
  struct mount_plan p = { 0 };
  size_t n = 0;
  const struct mount_op *op;

  mount_plan_build (s, "/r", CGROUP_MODE_V2, false, &p);
  if (s->linux_.n_devices == 0)
    skip (); /* the profile dropped them: nothing to check here */
  op = &p.v[find (&p, MOUNT_OP_DEV_NODE, "/dev/test1")];
  assert_string_equal (op->source, "/dev/null");
  assert_int_equal (op->major, 1);
  assert_int_equal (op->minor, 3);
  {
    cleanup_free char *t = mount_op_text (op);
    assert_string_equal (t, "dev-node /dev/null at /dev/test1 (nosuid,noexec)");
  }
  /* /dev/null is among the defaults: once. */
  for (size_t i = 0; i < p.n; i++)
    n += p.v[i].kind == MOUNT_OP_DEV_NODE
         && strcmp (p.v[i].dest, "/dev/null") == 0;
  assert_int_equal (n, 1);
  mount_plan_clear (&p);
  spec_free (s);
}

/* Options that cannot be applied, and an unknown rootfsPropagation, are
 * kept as the op's error: the plan is still whole (explain prints it),
 * and the op fails with the message create has always given. The spec
 * is parsed only: the profile would have rewritten these options. */
static void
test_errors (void **state)
{
  const char *text
      = "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"},"
        " \"mounts\": [{\"destination\": \"/x\", \"type\": \"tmpfs\","
        " \"source\": \"tmpfs\", \"options\": [\"size=1k,mode=700\"]},"
        " {\"destination\": \"/y\", \"type\": \"tmpfs\", \"source\": "
        "\"tmpfs\", \"options\": [\"\"]},"
        " {\"destination\": \"/z\", \"type\": \"proc\", \"options\": "
        "[\"context=\\\"u:r:t:s0:c1,c2\\\"\"]}],"
        " \"linux\": {\"rootfsPropagation\": \"sideways\"}}";
  struct spec *s = parse_spec (text);
  struct mount_plan p = { 0 };
  const struct mount_op *op;

  mount_plan_build (s, "/r", CGROUP_MODE_V2, false, &p);
  op = &p.v[find (&p, MOUNT_OP_MOUNT, "/x")];
  assert_string_equal (op->error, "mount /x: bad option \"size=1k,mode=700\"");
  op = &p.v[find (&p, MOUNT_OP_MOUNT, "/y")];
  assert_string_equal (op->error, "mount /y: bad option \"\"");
  /* A quoted SELinux context keeps its commas. */
  op = &p.v[find (&p, MOUNT_OP_MOUNT, "/z")];
  assert_null (op->error);
  assert_string_equal (op->data, "context=\"u:r:t:s0:c1,c2\"");
  assert_string_equal (op->source, "none");
  op = &p.v[find (&p, MOUNT_OP_PROPAGATION, "/")];
  assert_string_equal (op->error,
                       "linux.rootfsPropagation: unknown value sideways");
  assert_int_equal (p.v[p.n - 1].kind, MOUNT_OP_ROOT_ATTRS);
  assert_null (p.v[p.n - 1].error);
  mount_plan_clear (&p);
  spec_free (s);
}

/* The option table: the later of an option and its negation wins, the
 * filesystem's own options are its data, mount(8)'s own go nowhere. */
static void
test_option_table (void **state)
{
  const char *text
      = "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"},"
        " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}, \"mounts\":"
        " [{\"destination\": \"/data\", \"type\": \"bind\", \"source\":"
        " \"/srv\", \"options\": [\"rbind\", \"rw\", \"ro\", \"noatime\","
        " \"atime\", \"nofail\", \"x-systemd.automount\", \"rprivate\"]},"
        " {\"destination\": \"/t\", \"type\": \"tmpfs\", \"source\":"
        " \"tmpfs\", \"options\": [\"defaults\", \"nosuid\", \"uid=5\","
        " \"_netdev\", \"mode=700\", \"strictatime\", \"nostrictatime\"]}]}";
  struct spec *s = parse_spec (text);
  struct mount_plan p = { 0 };
  const struct mount_op *op;

  mount_plan_build (s, "/b/rootfs", CGROUP_MODE_V2, false, &p);
  op = &p.v[find (&p, MOUNT_OP_BIND, "/data")];
  assert_null (op->error);
  assert_int_equal (op->flags, MS_BIND | MS_REC | MS_RDONLY);
  assert_int_equal (op->propagation, MS_PRIVATE | MS_REC);
  assert_null (op->data);
  op = &p.v[find (&p, MOUNT_OP_MOUNT, "/t")];
  assert_null (op->error);
  assert_int_equal (op->flags, MS_NOSUID);
  assert_string_equal (op->data, "uid=5,mode=700");
  mount_plan_clear (&p);
  spec_free (s);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_order),
    cmocka_unit_test (test_no_dev_no_pivot),
    cmocka_unit_test (test_cgroup),
    cmocka_unit_test (test_flags),
    cmocka_unit_test (test_dev_by_number),
    cmocka_unit_test (test_errors),
    cmocka_unit_test (test_option_table),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
