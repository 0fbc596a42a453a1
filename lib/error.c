#include "error.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
error_return (int errnum)
{
  return errnum > 0 ? -errnum : -1;
}

/* Both setters: fill *err (once) with the formatted text, and with
 * strerror(errnum) appended when with_strerror. */
static int
error_vset (struct moat_error **err, int errnum, bool with_strerror,
            const char *fmt, va_list ap)
{
  char *msg = NULL;

  if (err == NULL || *err != NULL)
    return error_return (errnum);
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  if (msg != NULL && with_strerror && errnum > 0)
    {
      char *full = NULL;
      if (asprintf (&full, "%s: %s", msg, strerror (errnum)) >= 0)
        {
          free (msg);
          msg = full;
        }
    }
  *err = calloc (1, sizeof (**err));
  if (*err == NULL)
    {
      free (msg);
      return error_return (errnum);
    }
  (*err)->errnum = errnum;
  (*err)->msg = msg ? msg : strdup ("out of memory");
  return error_return (errnum);
}

int
moat_error_set (struct moat_error **err, int errnum, const char *fmt, ...)
{
  va_list ap;
  int r;
  va_start (ap, fmt);
  r = error_vset (err, errnum, true, fmt, ap);
  va_end (ap);
  return r;
}

int
moat_error_setx (struct moat_error **err, int errnum, const char *fmt, ...)
{
  va_list ap;
  int r;
  va_start (ap, fmt);
  r = error_vset (err, errnum, false, fmt, ap);
  va_end (ap);
  return r;
}

int
moat_error_wrap (struct moat_error **err, const char *fmt, ...)
{
  va_list ap;
  char *prefix = NULL, *full = NULL;

  if (err == NULL || *err == NULL)
    return -1;

  va_start (ap, fmt);
  if (vasprintf (&prefix, fmt, ap) < 0)
    prefix = NULL;
  va_end (ap);

  if (prefix != NULL && asprintf (&full, "%s: %s", prefix, (*err)->msg) >= 0)
    {
      free ((*err)->msg);
      (*err)->msg = full;
    }
  free (prefix);
  return error_return ((*err)->errnum);
}

void
moat_error_free (struct moat_error **err)
{
  if (err == NULL || *err == NULL)
    return;
  free ((*err)->msg);
  free (*err);
  *err = NULL;
}
