/* runtime/sync.c: each step of create and exec has a message of its own,
 * and one that arrives out of order is an error naming the one expected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../runtime/init/sync.h"
#include "../../lib/util.h"

static void
pair (int sv[2])
{
  assert_int_equal (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
                    0);
}

static void
test_in_order (void **state)
{
  struct moat_error *err = NULL;
  cleanup_free char *json = NULL;
  int sv[2];

  (void)state;
  pair (sv);
  assert_int_equal (sync_send (sv[0], SYNC_MAPS_DONE, &err), 0);
  assert_int_equal (sync_recv (sv[1], SYNC_MAPS_DONE, &err), 0);
  assert_int_equal (
      sync_send_data (sv[0], SYNC_CREATE_STATE, "{\"a\":1}", 7, &err), 0);
  assert_int_equal (sync_recv_data (sv[1], SYNC_CREATE_STATE, &json, &err), 0);
  assert_string_equal (json, "{\"a\":1}");
  assert_null (err);
  close (sv[0]);
  close (sv[1]);
}

static void
test_out_of_order_names_expected (void **state)
{
  struct moat_error *err = NULL;
  cleanup_free char *json = NULL;
  int sv[2];

  (void)state;
  pair (sv);
  /* The start state where the create state was due. */
  assert_int_equal (sync_send_data (sv[0], SYNC_START_STATE, "{}", 2, &err), 0);
  assert_true (sync_recv_data (sv[1], SYNC_CREATE_STATE, &json, &err) < 0);
  assert_non_null (err);
  assert_string_equal (err->msg,
                       "sync: expected create-state, got start-state");
  moat_error_free (&err);
  err = NULL;
  assert_int_equal (sync_send (sv[0], SYNC_PTY, &err), 0);
  assert_true (sync_recv (sv[1], SYNC_MOUNTS_DONE, &err) < 0);
  assert_string_equal (err->msg, "sync: expected mounts-done, got pty");
  moat_error_free (&err);
  close (sv[0]);
  close (sv[1]);
}

static void
test_error_and_eof (void **state)
{
  struct moat_error *err = NULL;
  struct moat_error sent = { .errnum = 2, .msg = (char *)"no such thing" };
  int sv[2];

  (void)state;
  pair (sv);
  sync_send_error (sv[0], &sent);
  assert_int_equal (sync_recv (sv[1], SYNC_READY, &err), -2);
  assert_string_equal (err->msg, "no such thing");
  moat_error_free (&err);
  err = NULL;
  close (sv[0]);
  assert_true (sync_recv (sv[1], SYNC_READY, &err) < 0);
  assert_string_equal (err->msg, "container init exited during setup");
  moat_error_free (&err);
  close (sv[1]);
}

static void
test_every_type_has_a_name (void **state)
{
  (void)state;
  for (uint32_t t = SYNC_MAPS_DONE; t <= SYNC_EXEC_GO; t++)
    assert_string_not_equal (sync_type_name (t), "an unknown message");
  assert_string_equal (sync_type_name (0), "an unknown message");
  assert_string_equal (sync_type_name (SYNC_EXEC_GO + 1), "an unknown message");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_in_order),
    cmocka_unit_test (test_out_of_order_names_expected),
    cmocka_unit_test (test_error_and_eof),
    cmocka_unit_test (test_every_type_has_a_name),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
