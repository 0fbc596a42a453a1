/* Go's time.ParseDuration, as runc's flags take it ("5s", "100ms",
 * "1h30m", "1.5s"): runc-compatible command lines. */
#ifndef MOAT_DURATION_H
#define MOAT_DURATION_H

#include <stdint.h>

/* Non-negative durations only. 0 or -EINVAL / -ERANGE; *ret_ns in ns. */
int go_duration_parse (const char *s, uint64_t *ret_ns);

#endif
