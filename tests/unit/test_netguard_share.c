/* The network guard's shared programs (netguard_share.c) in a pin
 * directory of the test's own under /sys/fs/bpf: one entry per set of
 * rules, reused; at most NETGUARD_SHARE_MAX entries, the oldest removed;
 * a killed builder's leftovers removed; two builders at once build once;
 * an entry whose description differs is never used. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../lib/util.h"
#include "../../runtime/bpf/bpf.h"
#include "../../runtime/netguard/netguard_share.h"

static char pin_dir[64];

/* Rules whose deny list is one address made of N: a set of its own. */
struct one_rule
{
  struct cidr deny;
  struct netguard_rules r;
};

static void
one_rule (struct one_rule *o, unsigned n)
{
  memset (o, 0, sizeof (*o));
  o->deny.family = AF_INET;
  o->deny.addr[0] = 203;
  o->deny.addr[1] = (uint8_t)(n >> 16);
  o->deny.addr[2] = (uint8_t)(n >> 8);
  o->deny.addr[3] = (uint8_t)n;
  o->deny.prefix = 32;
  o->r.egress = true;
  o->r.deny = &o->deny;
  o->r.n_deny = 1;
}

/* The id of the connect4 program of the set N, and whether it came from a
 * pin. */
static uint32_t
get_set (unsigned n, bool *ret_shared)
{
  struct one_rule o;
  struct netguard_progs p;
  struct moat_error *err = NULL;
  uint32_t id = 0;

  one_rule (&o, n);
  if (netguard_progs_get (&o.r, pin_dir, &p, ret_shared, &err) < 0)
    fail_msg ("netguard_progs_get: %s", err->msg);
  assert_int_equal (bpf_prog_id (p.fd[NETGUARD_PROG_CONNECT4], &id), 0);
  netguard_progs_close (&p);
  return id;
}

static size_t
entries (void)
{
  DIR *d = opendir (pin_dir);
  struct dirent *e;
  size_t n = 0;

  assert_non_null (d);
  while ((e = readdir (d)) != NULL)
    n += e->d_name[0] != '.';
  closedir (d);
  return n;
}

static int
setup (void **state)
{
  (void)state;
  if (geteuid () != 0)
    skip ();
  snprintf (pin_dir, sizeof (pin_dir), "/sys/fs/bpf/moat-test-%d",
            (int)getpid ());
  return 0;
}

static int
teardown (void **state)
{
  cleanup_free char *rm = xasprintf ("rm -rf %s", pin_dir);

  (void)state;
  return system (rm) == 0 ? 0 : -1;
}

/* The entry whose pinned connect4 program has this id, into NAME. */
static void
entry_of (uint32_t prog_id, char name[256])
{
  DIR *d = opendir (pin_dir);
  struct dirent *e;

  assert_non_null (d);
  name[0] = '\0';
  while ((e = readdir (d)) != NULL)
    {
      cleanup_free char *path = NULL;
      cleanup_close int fd = -1;
      uint32_t id = 0;

      if (e->d_name[0] == '.')
        continue;
      path = xasprintf ("%s/%s/connect4", pin_dir, e->d_name);
      if (bpf_obj_get (path, &fd) == 0 && bpf_prog_id (fd, &id) == 0
          && id == prog_id)
        snprintf (name, 256, "%s", e->d_name);
    }
  closedir (d);
  assert_true (name[0] != '\0');
}

static void
test_reused_and_bounded (void **state)
{
  const struct timespec old[2] = { { .tv_sec = 1 }, { .tv_sec = 1 } };
  cleanup_free char *path = NULL;
  char name[256];
  bool shared;
  uint32_t first;

  (void)state;
  first = get_set (0, &shared);
  assert_true (shared); /* built and pinned */
  assert_int_equal (get_set (0, &shared), first);
  assert_true (shared);
  assert_int_equal (entries (), 1);
  assert_int_not_equal (get_set (1, &shared), first);
  assert_int_equal (entries (), 2);

  /* bpffs stamps times from the coarse clock (a tick, 4 ms here): sets
   * built within one tick are equally old, and which of them goes first
   * is the directory's order. Set 0 is made the oldest outright. */
  entry_of (first, name);
  path = xasprintf ("%s/%s", pin_dir, name);
  assert_int_equal (utimensat (AT_FDCWD, path, old, 0), 0);

  /* Past the bound the oldest goes: set 0 then builds anew. */
  for (unsigned n = 2; n < NETGUARD_SHARE_MAX + 1; n++)
    (void)get_set (n, &shared);
  assert_int_equal (entries (), NETGUARD_SHARE_MAX);
  assert_int_not_equal (get_set (0, &shared), first);
  assert_int_equal (entries (), NETGUARD_SHARE_MAX);
}

static void
test_leftovers_and_mismatch (void **state)
{
  cleanup_free char *stale = NULL, *from = NULL, *to = NULL;
  char seven[256], eight[256];
  uint32_t id7, id8;
  bool shared;

  (void)state;
  id7 = get_set (7, &shared);
  /* A builder killed half way: its directory goes at the next build. */
  stale = xasprintf ("%s/build-999999999", pin_dir);
  assert_int_equal (mkdir (stale, 0700), 0);
  id8 = get_set (8, &shared);
  assert_int_equal (access (stale, F_OK), -1);
  assert_int_equal (entries (), 2);

  /* Set 7's description under set 8's name (as a hash collision would
   * have it): set 8 gets programs of its own, not set 7's, and the entry
   * is left alone. */
  entry_of (id7, seven);
  entry_of (id8, eight);
  from = xasprintf ("%s/%s/desc", pin_dir, seven);
  to = xasprintf ("%s/%s/desc", pin_dir, eight);
  assert_int_equal (rename (from, to), 0);
  id8 = get_set (8, &shared);
  assert_false (shared);
  assert_int_not_equal (id8, id7);
  assert_int_equal (entries (), 2);
}

/* The set is found by the digest the policy took of its deny list; one
 * that lies (set 7's digest with set 8's list, as a stale digest would)
 * leads to set 7's entry, whose description then differs: set 8 gets
 * programs of its own, never set 7's. With the true digest, set 8 is
 * pinned and found as usual. */
static void
test_found_by_digest_compared_whole (void **state)
{
  struct one_rule seven, eight;
  struct netguard_progs p7, p8;
  struct moat_error *err = NULL;
  char digest7[CIDR_LIST_DIGEST_LEN], digest8[CIDR_LIST_DIGEST_LEN];
  uint32_t id7 = 0, id8 = 0;
  bool shared;

  (void)state;
  one_rule (&seven, 7);
  one_rule (&eight, 8);
  cidr_list_digest (&seven.deny, 1, digest7);
  cidr_list_digest (&eight.deny, 1, digest8);
  seven.r.deny_digest = digest7;
  assert_int_equal (netguard_progs_get (&seven.r, pin_dir, &p7, &shared, &err),
                    0);
  assert_true (shared);
  eight.r.deny_digest = digest7; /* lies */
  assert_int_equal (netguard_progs_get (&eight.r, pin_dir, &p8, &shared, &err),
                    0);
  assert_false (shared);
  assert_int_equal (bpf_prog_id (p7.fd[NETGUARD_PROG_CONNECT4], &id7), 0);
  assert_int_equal (bpf_prog_id (p8.fd[NETGUARD_PROG_CONNECT4], &id8), 0);
  assert_int_not_equal (id7, id8);
  netguard_progs_close (&p8);
  eight.r.deny_digest = digest8;
  assert_int_equal (netguard_progs_get (&eight.r, pin_dir, &p8, &shared, &err),
                    0);
  assert_true (shared);
  assert_int_equal (entries (), 2);
  netguard_progs_close (&p7);
  netguard_progs_close (&p8);
}

/* Two processes build the same new set at once: one builds, the other
 * waits on the lock and opens the pins; both get one program. */
static void
test_two_builders (void **state)
{
  int pipes[2];
  pid_t kids[2];
  uint32_t ids[2];

  (void)state;
  assert_int_equal (pipe (pipes), 0);
  for (int i = 0; i < 2; i++)
    {
      kids[i] = fork ();
      assert_true (kids[i] >= 0);
      if (kids[i] == 0)
        {
          bool shared;
          uint32_t id = get_set (4242, &shared);
          _exit (write (pipes[1], &id, sizeof (id)) == sizeof (id) && shared
                     ? 0
                     : 1);
        }
    }
  for (int i = 0; i < 2; i++)
    {
      int st;
      assert_int_equal (waitpid (kids[i], &st, 0), kids[i]);
      assert_true (WIFEXITED (st) && WEXITSTATUS (st) == 0);
      assert_int_equal (read (pipes[0], &ids[i], sizeof (ids[i])),
                        sizeof (ids[i]));
    }
  close (pipes[0]);
  close (pipes[1]);
  assert_int_equal (ids[0], ids[1]);
  assert_int_equal (entries (), 1);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_reused_and_bounded, setup, teardown),
    cmocka_unit_test_setup_teardown (test_leftovers_and_mismatch, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_two_builders, setup, teardown),
    cmocka_unit_test_setup_teardown (test_found_by_digest_compared_whole, setup,
                                     teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
