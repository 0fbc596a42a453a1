/* What the CLI accepts before touching anything: signal names and numbers
 * (runtime/lifecycle.c signal_parse) and container ids
 * (runtime/container.c container_id_check). */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../oci/duration.h"
#include "../../runtime/container.h"
#include "../../lib/error.h"
#include "../../runtime/audit.h"

/* ---- signal_parse ---- */

static void
assert_signal (const char *s, int want)
{
  int got = -12345;
  if (signal_parse (s, &got) != 0)
    fail_msg ("signal_parse(\"%s\") failed, wanted %d", s, want);
  if (got != want)
    fail_msg ("signal_parse(\"%s\") = %d, wanted %d", s, got, want);
}

static void
assert_not_signal (const char *s)
{
  int got = -12345;
  int r = signal_parse (s, &got);
  if (r != -EINVAL)
    fail_msg ("signal_parse(\"%s\") = %d (signal %d), wanted -EINVAL",
              s ? s : "(null)", r, got);
  /* A failed parse leaves the output alone. */
  assert_int_equal (got, -12345);
}

static void
test_signal_numbers (void **state)
{
  (void)state;
  assert_signal ("9", SIGKILL);
  assert_signal ("15", SIGTERM);
  assert_signal ("1", SIGHUP);
  assert_signal ("31", SIGSYS);
  assert_signal ("34", 34);
  char max[16];
  snprintf (max, sizeof (max), "%d", SIGRTMAX);
  assert_signal (max, SIGRTMAX);
}

static void
test_signal_bad_numbers (void **state)
{
  char past[16];
  (void)state;
  snprintf (past, sizeof (past), "%d", SIGRTMAX + 1);
  assert_not_signal ("0");
  assert_not_signal ("-9");
  assert_not_signal (past);
  assert_not_signal ("99999999999999999999");
  assert_not_signal ("9x");
  assert_not_signal ("0x9");
  assert_not_signal ("9.0");
}

static void
test_signal_names (void **state)
{
  (void)state;
  assert_signal ("KILL", SIGKILL);
  assert_signal ("SIGKILL", SIGKILL);
  assert_signal ("kill", SIGKILL);
  assert_signal ("sigkill", SIGKILL);
  assert_signal ("SigTerm", SIGTERM);
  assert_signal ("TERM", SIGTERM);
  assert_signal ("HUP", SIGHUP);
  assert_signal ("INT", SIGINT);
  assert_signal ("QUIT", SIGQUIT);
  assert_signal ("USR1", SIGUSR1);
  assert_signal ("SIGUSR2", SIGUSR2);
  assert_signal ("WINCH", SIGWINCH);
  assert_signal ("STOP", SIGSTOP);
  assert_signal ("CONT", SIGCONT);
  assert_signal ("CHLD", SIGCHLD);
  assert_signal ("PIPE", SIGPIPE);
  assert_signal ("ALRM", SIGALRM);
  /* Aliases. */
  assert_signal ("IOT", SIGABRT);
  assert_signal ("ABRT", SIGABRT);
  assert_signal ("POLL", SIGIO);
  assert_signal ("IO", SIGIO);
}

static void
test_signal_realtime (void **state)
{
  (void)state;
  assert_signal ("RTMIN", SIGRTMIN);
  assert_signal ("SIGRTMIN", SIGRTMIN);
  assert_signal ("RTMIN+1", SIGRTMIN + 1);
  assert_signal ("rtmin+3", SIGRTMIN + 3);
  assert_signal ("RTMAX", SIGRTMAX);
  assert_signal ("SIGRTMAX-1", SIGRTMAX - 1);
  assert_signal ("RTMAX-2", SIGRTMAX - 2);
  {
    char top[32];
    snprintf (top, sizeof (top), "RTMIN+%d", SIGRTMAX - SIGRTMIN);
    assert_signal (top, SIGRTMAX);
    snprintf (top, sizeof (top), "RTMIN+%d", SIGRTMAX - SIGRTMIN + 1);
    assert_not_signal (top);
    snprintf (top, sizeof (top), "RTMAX-%d", SIGRTMAX - SIGRTMIN + 1);
    assert_not_signal (top);
  }
  /* The sign must point into the range. */
  assert_not_signal ("RTMIN-1");
  assert_not_signal ("RTMAX+1");
  assert_not_signal ("RTMIN+");
  assert_not_signal ("RTMIN+x");
  assert_not_signal ("RTMAXfoo");
  assert_not_signal ("RTMIN1");
}

static void
test_signal_bad_names (void **state)
{
  (void)state;
  assert_not_signal (NULL);
  assert_not_signal ("");
  assert_not_signal ("SIG");
  assert_not_signal ("SIGSIGKILL");
  assert_not_signal ("KILLX");
  assert_not_signal ("NOTASIGNAL");
  assert_not_signal ("SIG KILL");
  assert_not_signal ("KILL\n");
  assert_not_signal ("-KILL");
}

/* ---- container_id_check ---- */

static void
assert_id_ok (const char *id)
{
  struct moat_error *err = NULL;
  if (container_id_check (id, &err) != 0)
    fail_msg ("id \"%s\" refused: %s", id, err ? err->msg : "(no error)");
  assert_null (err);
}

/* Refused, with an error whose message holds want. */
static void
assert_id_refused (const char *id, const char *want)
{
  struct moat_error *err = NULL;
  int r = container_id_check (id, &err);
  if (r >= 0)
    fail_msg ("id \"%s\" accepted", id ? id : "(null)");
  assert_non_null (err);
  assert_non_null (err->msg);
  if (strstr (err->msg, want) == NULL)
    fail_msg ("id \"%s\": error \"%s\" does not say \"%s\"", id ? id : "",
              err->msg, want);
  moat_error_free (&err);
  assert_null (err);
  /* Callers that only ask (list) pass no error. */
  assert_true (container_id_check (id, NULL) < 0);
}

static char *
repeat (char c, size_t n)
{
  char *s = malloc (n + 1);
  assert_non_null (s);
  memset (s, c, n);
  s[n] = '\0';
  return s;
}

static void
test_id_valid (void **state)
{
  char *longest = repeat ('a', 1024);
  (void)state;
  assert_id_ok ("a");
  assert_id_ok ("c1");
  assert_id_ok ("0");
  assert_id_ok ("9abc");
  assert_id_ok ("A-b_c.d+e");
  /* A Docker id, a Kubernetes one, a podman one. */
  assert_id_ok (
      "6a40a462837df565b32b2284e69b9c2d313b4eeec57e18279e2d0cecd2b85a4f");
  assert_id_ok ("k8s_POD_web-0_default_1234-5678_0");
  assert_id_ok ("libpod-ae0017ba550325fc");
  /* Dots inside are only dots: no "/" can follow them. */
  assert_id_ok ("a..b");
  assert_id_ok ("a.");
  assert_id_ok (longest);
  free (longest);
}

static void
test_id_empty_and_long (void **state)
{
  char *too_long = repeat ('a', 1025);
  char *much_too_long = repeat ('b', 70000);
  (void)state;
  assert_id_refused (NULL, "empty");
  assert_id_refused ("", "empty");
  assert_id_refused (too_long, "longer than 1024");
  assert_id_refused (much_too_long, "longer than 1024");
  free (too_long);
  free (much_too_long);
}

static void
test_id_path_like (void **state)
{
  (void)state;
  assert_id_refused ("/", "invalid container id");
  assert_id_refused ("a/b", "invalid container id");
  assert_id_refused ("/abs", "invalid container id");
  assert_id_refused ("trailing/", "invalid container id");
  assert_id_refused ("..", "invalid container id");
  assert_id_refused (".", "invalid container id");
  assert_id_refused ("../etc", "invalid container id");
  assert_id_refused ("a/../../b", "invalid container id");
  assert_id_refused (".hidden", "invalid container id");
}

static void
test_id_bad_characters (void **state)
{
  (void)state;
  /* A leading "-" would read as a flag. */
  assert_id_refused ("-rf", "invalid container id");
  assert_id_refused ("-", "invalid container id");
  assert_id_refused ("_x", "invalid container id");
  assert_id_refused ("+x", "invalid container id");
  /* A NUL cannot reach us through argv; a newline can, and would split a
   * log line or a state listing. */
  assert_id_refused ("a\nb", "invalid container id");
  assert_id_refused ("abc\n", "invalid container id");
  assert_id_refused ("\n", "invalid container id");
  assert_id_refused ("a\rb", "invalid container id");
  assert_id_refused ("a b", "invalid container id");
  assert_id_refused ("a\tb", "invalid container id");
  assert_id_refused ("a:b", "invalid container id");
  assert_id_refused ("a\\b", "invalid container id");
  assert_id_refused ("a*", "invalid container id");
  assert_id_refused ("a\x7f", "invalid container id");
  assert_id_refused ("caf\xc3\xa9", "invalid container id");
  assert_id_refused ("a\x01", "invalid container id");
}

static void
test_id_error_says_the_rule (void **state)
{
  struct moat_error *err = NULL;
  (void)state;
  assert_true (container_id_check ("bad/id", &err) < 0);
  assert_non_null (err);
  assert_non_null (strstr (err->msg, "[A-Za-z0-9][A-Za-z0-9_.+-]*"));
  moat_error_free (&err);
}

/* ---- Go durations (events --interval) ---- */

static void
assert_duration (const char *s, uint64_t want_ns)
{
  uint64_t got = 12345;
  if (go_duration_parse (s, &got) != 0)
    fail_msg ("go_duration_parse(\"%s\") failed", s);
  if (got != want_ns)
    fail_msg ("go_duration_parse(\"%s\") = %llu, wanted %llu", s,
              (unsigned long long)got, (unsigned long long)want_ns);
}

static void
test_go_durations (void **state)
{
  (void)state;
  assert_duration ("100ms", 100000000ULL);
  assert_duration ("5s", 5000000000ULL);
  assert_duration ("1.5s", 1500000000ULL);
  assert_duration ("1h30m", 5400000000000ULL);
  assert_duration ("2m3s", 123000000000ULL);
  assert_duration ("250us", 250000ULL);
  assert_duration ("250\xc2\xb5s", 250000ULL);
  assert_duration ("7ns", 7ULL);
  assert_duration (".5s", 500000000ULL);
  assert_duration ("0", 0);
}

static void
test_go_duration_errors (void **state)
{
  uint64_t v = 7;
  (void)state;
  /* A bare number other than 0 has no unit: Go refuses it. */
  assert_int_equal (go_duration_parse ("5", &v), -EINVAL);
  assert_int_equal (go_duration_parse ("", &v), -EINVAL);
  assert_int_equal (go_duration_parse ("ms", &v), -EINVAL);
  assert_int_equal (go_duration_parse ("5x", &v), -EINVAL);
  assert_int_equal (go_duration_parse ("-5s", &v), -EINVAL);
  assert_int_equal (go_duration_parse ("5s ", &v), -EINVAL);
  assert_int_equal (go_duration_parse ("99999999999999999999h", &v), -ERANGE);
  assert_int_equal (go_duration_parse ("9999999999h", &v), -ERANGE);
  assert_int_equal (v, 7);
}

/* ---- The audit log's config digest: SHA-256 by nettle (FIPS 180-4
 * vectors; the block-by-block ones are in test_sandbox.c) ---- */

static void
test_sha256_vectors (void **state)
{
  char *d;
  (void)state;
  d = audit_digest ("", 0);
  assert_string_equal (d, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b"
                          "934ca495991b7852b855");
  free (d);
  d = audit_digest ("abc", 3);
  assert_string_equal (d, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a39617"
                          "7a9cb410ff61f20015ad");
  free (d);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_signal_numbers),
    cmocka_unit_test (test_signal_bad_numbers),
    cmocka_unit_test (test_signal_names),
    cmocka_unit_test (test_signal_realtime),
    cmocka_unit_test (test_signal_bad_names),
    cmocka_unit_test (test_id_valid),
    cmocka_unit_test (test_id_empty_and_long),
    cmocka_unit_test (test_id_path_like),
    cmocka_unit_test (test_id_bad_characters),
    cmocka_unit_test (test_id_error_says_the_rule),
    cmocka_unit_test (test_go_durations),
    cmocka_unit_test (test_go_duration_errors),
    cmocka_unit_test (test_sha256_vectors),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
