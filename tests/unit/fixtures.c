/* See fixtures.h. */
#include "fixtures.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../lib/util.h"

const char *
fixtures_dir (void)
{
  const char *d = getenv ("MOAT_FIXTURES");
  return d ? d : "tests/fixtures";
}

char *
read_fixture (const char *name, size_t *len)
{
  cleanup_free char *path = xasprintf ("%s/%s", fixtures_dir (), name);
  char *text = NULL;
  int r = read_file_at (AT_FDCWD, path, 8 << 20, &text, len);
  if (r < 0)
    fail_msg ("reading %s: %s", path, strerror (-r));
  return text;
}

struct spec *
load_fixture (const char *name)
{
  cleanup_free char *path = xasprintf ("%s/%s", fixtures_dir (), name);
  struct moat_error *err = NULL;
  struct spec *s = NULL;
  if (spec_load (path, &s, &err) < 0)
    fail_msg ("%s: %s", name, err->msg);
  return s;
}
