/* What a container tried and the network guard refused, for `events
 * --stats` and the audit line of `delete`: the connect()/sendmsg()
 * programs count each refused destination in a map of the container's
 * (netguard_bpf.c), found again here through the programs attached to
 * its cgroup, so nothing is pinned and nothing outlives the cgroup. */
#include "netguard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../bpf/bpf.h"
#include "netguard_bpf.h"
#include "../../lib/util.h"
#include "../../oci/json.h"

struct refusal
{
  struct netguard_refusal_key key;
  struct netguard_refusal_count count;
};

/* The maps of the connect4 program moat attached to this cgroup. */
static int
find_maps (int cgroup_fd, int *ret_refused, int *ret_overflow)
{
  uint32_t ids[16], n = 16;
  int r = bpf_cgroup_query (cgroup_fd, BPF_CGROUP_INET4_CONNECT, ids, &n);

  if (r < 0)
    return r;
  for (uint32_t i = 0; i < n && i < 16; i++)
    if (bpf_prog_map_by_name (ids[i], NETGUARD_REFUSED_MAP, ret_refused) == 0)
      {
        if (bpf_prog_map_by_name (ids[i], NETGUARD_OVERFLOW_MAP, ret_overflow)
            == 0)
          return 0;
        close (*ret_refused);
      }
  return -ENOENT;
}

static int
by_count (const void *x, const void *y)
{
  const struct refusal *a = x, *b = y;
  if (a->count.count != b->count.count)
    return a->count.count > b->count.count ? -1 : 1;
  return a->count.first_ns < b->count.first_ns   ? -1
         : a->count.first_ns > b->count.first_ns ? 1
                                                 : 0;
}

/* A CLOCK_MONOTONIC time as RFC 3339 UTC with milliseconds. */
static void
jw_monotonic_time (struct json_writer *w, uint64_t ns)
{
  struct timespec mono, real;
  char text[64];
  struct tm tm;
  int64_t at_ms;
  time_t sec;

  clock_gettime (CLOCK_MONOTONIC, &mono);
  clock_gettime (CLOCK_REALTIME, &real);
  at_ms = ((int64_t)real.tv_sec * 1000 + real.tv_nsec / 1000000)
          - ((int64_t)mono.tv_sec * 1000 + mono.tv_nsec / 1000000)
          + (int64_t)(ns / 1000000);
  sec = (time_t)(at_ms / 1000);
  gmtime_r (&sec, &tm);
  strftime (text, sizeof (text), "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (text + strlen (text), sizeof (text) - strlen (text), ".%03dZ",
            (int)(at_ms % 1000));
  jw_string (w, text);
}

static void
jw_refusal (struct json_writer *w, const struct refusal *f)
{
  char addr[INET6_ADDRSTRLEN] = "?";
  char proto[16];

  inet_ntop (f->key.family == 4 ? AF_INET : AF_INET6, f->key.addr, addr,
             sizeof (addr));
  if (f->key.proto == IPPROTO_TCP)
    strcpy (proto, "tcp");
  else if (f->key.proto == IPPROTO_UDP)
    strcpy (proto, "udp");
  else
    snprintf (proto, sizeof (proto), "%u", f->key.proto);
  jw_object_begin (w);
  jw_key (w, "addr");
  jw_string (w, addr);
  jw_key (w, "port");
  jw_uint (w, ntohs (f->key.port));
  jw_key (w, "proto");
  jw_string (w, proto);
  jw_key (w, "count");
  jw_uint (w, f->count.count);
  jw_key (w, "first");
  jw_monotonic_time (w, f->count.first_ns);
  jw_key (w, "last");
  jw_monotonic_time (w, f->count.last_ns);
  jw_object_end (w);
}

int
netguard_refusals_json (int cgroup_fd, char **ret)
{
  cleanup_close int refused = -1, overflow = -1;
  cleanup_free struct refusal *list = NULL;
  /* No key has family 0: asked for the one after it, a hash map answers
   * with its first (as with a NULL key, which valgrind takes for a bad
   * pointer). */
  struct netguard_refusal_key key, last = { .family = 0 }, *prev = &last;
  struct json_writer *w;
  uint64_t more = 0;
  uint32_t zero = 0;
  size_t n = 0;
  int r;

  *ret = NULL;
  r = find_maps (cgroup_fd, &refused, &overflow);
  if (r < 0)
    return r;
  list = xcalloc (NETGUARD_REFUSALS_KEPT + 1, sizeof (*list));
  while (n <= NETGUARD_REFUSALS_KEPT
         && bpf_map_next_key (refused, prev, &key) == 0)
    {
      last = key;
      prev = &last;
      list[n].key = key;
      /* An entry gone meanwhile is left out. */
      if (bpf_map_lookup (refused, &key, &list[n].count) == 0)
        n++;
    }
  (void)bpf_map_lookup (overflow, &zero, &more);
  qsort (list, n, sizeof (*list), by_count);

  w = json_writer_new (false);
  jw_object_begin (w);
  jw_key (w, "refused");
  jw_array_begin (w);
  for (size_t i = 0; i < n; i++)
    jw_refusal (w, &list[i]);
  jw_array_end (w);
  jw_key (w, "overflow");
  jw_uint (w, more);
  jw_object_end (w);
  *ret = json_writer_finish (w);
  return 0;
}
