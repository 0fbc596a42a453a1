/* moat's one error type: functions return a negative errno-style value and
 * fill *err; callers add context with moat_error_wrap(). main() prints the
 * chain once. */
#ifndef MOAT_ERROR_H
#define MOAT_ERROR_H

#include <stdarg.h>

struct moat_error
{
  int errnum; /* errno value, 0 if none */
  char *msg;  /* "what failed: why", owned */
};

typedef struct moat_error *moat_error_t;

/* Fill *err (if err and *err is NULL) and return -1 (or -errnum if errnum).
 * Appends ": strerror(errnum)" when errnum != 0. */
int moat_error_set (struct moat_error **err, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* The same, but the message is kept as given (no strerror appended): for
 * texts engines match exactly. */
int moat_error_setx (struct moat_error **err, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* Prefix the message of *err with "context: ". Returns -1 or -errnum. */
int moat_error_wrap (struct moat_error **err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
void moat_error_free (struct moat_error **err);

/* Shorthand: ret = moat_fail (err, errno, "opening %s", path); */
#define moat_fail(err, errnum, ...)                                            \
  moat_error_set ((err), (errnum), __VA_ARGS__)

#endif
