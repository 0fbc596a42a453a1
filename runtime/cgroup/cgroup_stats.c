/* `events --stats`: every figure the backend reads, as the JSON object
 * runc prints under "data" (cpu, memory, pids). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "cgroup_internal.h"
#include "../../lib/util.h"

struct strbuf
{
  char *s;
  size_t len;
};

static void __attribute__ ((format (printf, 2, 3)))
sb_printf (struct strbuf *sb, const char *fmt, ...)
{
  va_list ap, again;
  int n;
  va_start (ap, fmt);
  va_copy (again, ap);
  n = vsnprintf (NULL, 0, fmt, ap);
  va_end (ap);
  if (n < 0)
    n = 0;
  sb->s = xrealloc (sb->s, sb->len + (size_t)n + 1);
  vsnprintf (sb->s + sb->len, (size_t)n + 1, fmt, again);
  va_end (again);
  sb->len += (size_t)n;
}

static void
sb_memory_entry (struct strbuf *sb, const char *key, uint64_t usage,
                 uint64_t limit, uint64_t max, uint64_t failcnt)
{
  sb_printf (sb,
             "\"%s\":{\"usage\":%" PRIu64 ",\"limit\":%" PRIu64
             ",\"max\":%" PRIu64 ",\"failcnt\":%" PRIu64 "}",
             key, usage, limit, max, failcnt);
}

int
cgroup_stats_json (struct cgroup *cg, char **ret, struct moat_error **err)
{
  struct cgroup_stats st;
  struct strbuf sb = { NULL, 0 };

  memset (&st, 0, sizeof (st));
  cg->backend->stats (cg, &st);

  sb_printf (&sb, "{\"cpu\":{\"usage\":{\"total\":%" PRIu64 ",\"percpu\":[",
             st.cpu_total_ns);
  for (size_t i = 0; i < st.n_percpu; i++)
    sb_printf (&sb, "%s%" PRIu64, i ? "," : "", st.percpu_ns[i]);
  sb_printf (&sb,
             "],\"kernel\":%" PRIu64 ",\"user\":%" PRIu64
             "},\"throttling\":{\"periods\":%" PRIu64
             ",\"throttledPeriods\":%" PRIu64 ",\"throttledTime\":%" PRIu64
             "}},",
             st.cpu_kernel_ns, st.cpu_user_ns, st.periods, st.throttled_periods,
             st.throttled_ns);
  sb_printf (&sb, "\"memory\":{\"cache\":%" PRIu64 ",", st.mem_cache);
  sb_memory_entry (&sb, "usage", st.mem_usage, st.mem_limit, st.mem_max_usage,
                   st.mem_failcnt);
  sb_printf (&sb, ",");
  sb_memory_entry (&sb, "swap", st.swap_usage, st.swap_limit, st.swap_max_usage,
                   st.swap_failcnt);
  sb_printf (&sb, ",\"raw\":{");
  for (size_t i = 0; i < st.n_raw; i++)
    sb_printf (&sb, "%s\"%s\":%" PRIu64, i ? "," : "", st.raw[i].key,
               st.raw[i].value);
  sb_printf (&sb,
             "}},\"pids\":{\"current\":%" PRIu64 ",\"limit\":%" PRIu64 "}}",
             st.pids_current, st.pids_limit);
  free (st.percpu_ns);
  free (st.raw);
  *ret = sb.s;
  return 0;
}
