/* What a container tried and the network guard refused, for `events
 * --stats` and the audit line of `delete`: the connect()/sendmsg()
 * programs count each refused destination, and the skb programs the
 * packets they drop, in the container's value of a cgroup storage map
 * (netguard_bpf.h), found here through the programs attached to its
 * cgroup and read with the cgroup's id: one value per cgroup, whether
 * the programs are shared with other containers or not, and gone with
 * the attachments. */
#include "netguard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../bpf/bpf.h"
#include "netguard_share.h"
#include "../../lib/util.h"
#include "../../oci/json.h"

struct refusal
{
  struct netguard_refusal_key key;
  struct netguard_refusal_count count;
};

/* The counters and the refused map of the connect4 program moat attached
 * to this cgroup. */
static int
find_maps (int cgroup_fd, int *ret_counts, int *ret_refused)
{
  static const char *const names[]
      = { NETGUARD_COUNTS_MAP, NETGUARD_REFUSED_MAP };
  uint32_t ids[16], n = 16;
  int fds[2];
  int r = bpf_cgroup_query (cgroup_fd, BPF_CGROUP_INET4_CONNECT, ids, &n);

  if (r < 0)
    return r;
  for (uint32_t i = 0; i < n && i < 16; i++)
    if (bpf_prog_maps_by_name (ids[i], names, fds, 2) == 0)
      {
        *ret_counts = fds[0];
        *ret_refused = fds[1];
        return 0;
      }
  return -ENOENT;
}

/* Call FN on each entry of the refused map that is the container's. No
 * key has family 0: asked for the one after it, a hash map answers with
 * its first (as with a NULL key, which valgrind takes for a bad
 * pointer). */
static void
each_refusal (int refused, uint64_t id,
              void (*fn) (int refused, const struct netguard_refusal_key *key,
                          void *data),
              void *data)
{
  struct netguard_refusal_key key, last = { .family = 0 }, *prev = &last;

  while (bpf_map_next_key (refused, prev, &key) == 0)
    {
      if (key.cgroup_id == id)
        fn (refused, &key, data);
      last = key;
      prev = &last;
    }
}

struct refusal_list
{
  struct refusal *list;
  size_t n;
};

static void
collect (int refused, const struct netguard_refusal_key *key, void *data)
{
  struct refusal_list *l = data;
  /* An entry gone meanwhile is left out. */
  if (l->n < NETGUARD_REFUSALS_KEPT + 8
      && bpf_map_lookup (refused, key, &l->list[l->n].count) == 0)
    l->list[l->n++].key = *key;
}

static void
forget_one (int refused, const struct netguard_refusal_key *key, void *data)
{
  (void)data;
  (void)bpf_map_delete (refused, key);
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

/* The container's refusals, as JSON into *RET (RET NULL: not wanted);
 * FORGET: and their entries removed from the shared map. */
static int
refusals_read (int cgroup_fd, bool forget, char **ret)
{
  cleanup_close int counts_fd = -1, refused = -1;
  struct netguard_counts counts = { 0 };
  cleanup_free struct refusal *list = NULL;
  struct refusal_list l = { NULL, 0 };
  struct json_writer *w;
  uint64_t id;
  int r;

  if (ret)
    *ret = NULL;
  r = find_maps (cgroup_fd, &counts_fd, &refused);
  if (r == 0)
    r = netguard_cgroup_id (cgroup_fd, &id);
  if (r == 0)
    r = bpf_map_lookup (counts_fd, &id, &counts);
  if (r < 0)
    return r;
  /* Nothing kept: nothing in the shared map to walk. */
  if (counts.n_kept > 0 && ret)
    {
      list = xcalloc (NETGUARD_REFUSALS_KEPT + 8, sizeof (*list));
      l.list = list;
      each_refusal (refused, id, collect, &l);
      qsort (list, l.n, sizeof (*list), by_count);
    }
  if (counts.n_kept > 0 && forget)
    each_refusal (refused, id, forget_one, NULL);
  if (ret == NULL)
    return 0;

  w = json_writer_new (false);
  jw_object_begin (w);
  jw_key (w, "refused");
  jw_array_begin (w);
  for (size_t i = 0; i < l.n; i++)
    jw_refusal (w, &list[i]);
  jw_array_end (w);
  jw_key (w, "overflow");
  jw_uint (w, counts.overflow);
  jw_key (w, "dropped_packets");
  jw_uint (w, counts.dropped_packets);
  jw_object_end (w);
  *ret = json_writer_finish (w);
  return 0;
}

int
netguard_refusals_json (int cgroup_fd, char **ret)
{
  return refusals_read (cgroup_fd, false, ret);
}

int
netguard_refusals_take (int cgroup_fd, char **ret)
{
  return refusals_read (cgroup_fd, true, ret);
}
