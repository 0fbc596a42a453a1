/* See profile_harness.h. */
#include "profile_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/util.h"

struct profile *
load_profile (const char *name)
{
  char path[] = "/tmp/moat-test-profile-XXXXXX";
  int fd = mkstemp (path);
  struct profile *p = NULL;
  struct moat_error *err = NULL;

  assert_true (fd >= 0);
  assert_int_equal (write (fd, "{}", 2), 2);
  close (fd);
  if (profile_load (path, name, &p, NULL, &err) < 0)
    fail_msg ("profile_load: %s", err->msg);
  unlink (path);
  return p;
}

struct spec *
parse_spec (const char *json)
{
  struct spec *s = NULL;
  struct moat_error *err = NULL;
  if (spec_parse (json, strlen (json), &s, &err) < 0)
    fail_msg ("spec_parse: %s", err->msg);
  return s;
}

struct spec *
spec_with (const char *mounts, const char *annotations, const char *linux_)
{
  char *json
      = xasprintf ("{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
                   "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
                   "\"mounts\":[%s],\"annotations\":{%s},\"linux\":{%s}}",
                   mounts, annotations, linux_);
  struct spec *s = parse_spec (json);
  free (json);
  return s;
}

const struct override *
find_override (const struct override_list *ov, enum override_kind kind,
               const char *path)
{
  for (size_t i = 0; i < ov->n; i++)
    if (ov->v[i].kind == kind && strcmp (ov->v[i].path, path) == 0)
      return &ov->v[i];
  return NULL;
}

bool
has_option (const struct spec_mount *m, const char *opt)
{
  for (size_t i = 0; m->options && m->options[i]; i++)
    if (strcmp (m->options[i], opt) == 0)
      return true;
  return false;
}

bool
strv_has (char *const *v, const char *s)
{
  for (size_t i = 0; v && v[i]; i++)
    if (strcmp (v[i], s) == 0)
      return true;
  return false;
}

const struct spec_mount *
find_mount (const struct spec *s, const char *dest)
{
  for (size_t i = 0; i < s->n_mounts; i++)
    if (strcmp (s->mounts[i].destination, dest) == 0)
      return &s->mounts[i];
  return NULL;
}

const struct spec_rlimit *
find_rlimit (const struct spec_process *p, int resource)
{
  for (size_t i = 0; i < p->n_rlimits; i++)
    if (p->rlimits[i].resource == resource)
      return &p->rlimits[i];
  return NULL;
}
