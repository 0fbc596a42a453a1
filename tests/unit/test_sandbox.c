/* sandbox pieces without a container: SHA-256 (image digests) and the
 * --timeout parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../app/sandbox.h"
#include "../../runtime/sha256.h"

static void
hex_of (const void *data, size_t len, size_t chunk, char out[65])
{
  struct sha256 c;
  const char *p = data;
  assert_int_equal (sha256_start (&c, NULL), 0);
  for (size_t off = 0; off < len; off += chunk)
    sha256_feed (&c, p + off, len - off < chunk ? len - off : chunk);
  sha256_finish_hex (&c, out);
}

static void
test_sha256_vectors (void **state)
{
  char hex[65];
  static char million[1000000];
  (void)state;

  hex_of ("", 0, 1, hex);
  assert_string_equal (
      hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  hex_of ("abc", 3, 3, hex);
  assert_string_equal (
      hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  /* 56 bytes: the padding spills into a second block. */
  hex_of ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, 7,
          hex);
  assert_string_equal (
      hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  memset (million, 'a', sizeof (million));
  for (size_t chunk = 1; chunk <= 4096; chunk *= 64)
    {
      hex_of (million, sizeof (million), chunk == 1 ? 999999 : chunk, hex);
      assert_string_equal (hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a49"
                                "7200e046d39ccc7112cd0");
    }
}

static void
test_duration (void **state)
{
  int64_t ms;
  (void)state;

  assert_int_equal (sandbox_parse_duration ("2", &ms), 0);
  assert_int_equal (ms, 2000);
  assert_int_equal (sandbox_parse_duration ("1.5s", &ms), 0);
  assert_int_equal (ms, 1500);
  assert_int_equal (sandbox_parse_duration ("500ms", &ms), 0);
  assert_int_equal (ms, 500);
  assert_int_equal (sandbox_parse_duration ("2m", &ms), 0);
  assert_int_equal (ms, 120000);
  assert_int_equal (sandbox_parse_duration ("1h", &ms), 0);
  assert_int_equal (ms, 3600000);
  assert_true (sandbox_parse_duration ("", &ms) < 0);
  assert_true (sandbox_parse_duration ("soon", &ms) < 0);
  assert_true (sandbox_parse_duration ("-1s", &ms) < 0);
  assert_true (sandbox_parse_duration ("0", &ms) < 0);
  assert_true (sandbox_parse_duration ("5d", &ms) < 0);
  assert_true (sandbox_parse_duration ("1e20", &ms) < 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_sha256_vectors),
    cmocka_unit_test (test_duration),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
