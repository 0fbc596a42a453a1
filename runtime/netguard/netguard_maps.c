/* The network guard's lists as data: one LPM trie per family ("lists4",
 * "lists6") maps a CIDR to the set of lists that hold it, and one per
 * family ("ports4", "ports6") holds the entries that name a port (an
 * egress_allow "CIDR:port", a nameserver on 53), keyed by port then
 * address. The programs of netguard_bpf.c look a destination up and
 * decide; their length does not depend on the lists.
 *
 * A trie lookup yields the longest matching entry only, so each entry's
 * value is the union of the flags of every entry containing it (its own
 * included): the entries covering an address form a chain of prefixes,
 * and those of its longest match are exactly all of them (computed here,
 * one update per entry). IPv4 entries go into the IPv4 trie
 * only: the programs look up the IPv4 address an IPv6 one embeds. */
#include "netguard_bpf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../bpf/bpf.h"
#include "../../lib/util.h"

struct flagged_cidr
{
  struct cidr c; /* masked, port 0 */
  uint32_t flag; /* its own, then with those of every entry containing it */
  uint16_t port;
  bool duplicate; /* the same CIDR as the entry before: merged into it */
};

struct entry_list
{
  struct flagged_cidr *e;
  size_t n, cap;
};

static void
entry_list_free (struct entry_list *l)
{
  free (l->e);
}

static void
add_entries (struct entry_list lists[2], const struct cidr *c, size_t n,
             uint32_t flag, uint16_t port)
{
  for (size_t i = 0; i < n; i++)
    {
      struct entry_list *l = &lists[c[i].family == AF_INET6];
      struct flagged_cidr *f;
      unsigned max = c[i].family == AF_INET ? 32 : 128;

      if (l->n == l->cap)
        {
          l->cap = l->cap ? l->cap * 2 : 64;
          l->e = xrealloc (l->e, l->cap * sizeof (*l->e));
        }
      f = &l->e[l->n++];
      *f = (struct flagged_cidr){ .c = c[i], .port = port ? port : c[i].port };
      f->flag = f->port ? NETGUARD_PORTS : flag;
      f->c.port = 0;
      for (unsigned bit = f->c.prefix; bit < max; bit++)
        f->c.addr[bit / 8] &= (uint8_t) ~(0x80 >> (bit % 8));
    }
}

/* By address, then shorter prefixes first: an entry comes before every
 * entry it contains, and those follow it without a gap. */
static int
by_address (const void *x, const void *y)
{
  const struct flagged_cidr *a = x, *b = y;
  int d = memcmp (a->c.addr, b->c.addr, sizeof (a->c.addr));
  return d ? d : (int)a->c.prefix - (int)b->c.prefix;
}

/* Sort L and give each entry the flags of every entry containing it,
 * walking the sorted list with a stack of the entries still open. */
static void
inherit_flags (struct entry_list *l)
{
  cleanup_free size_t *open = xcalloc (l->n ? l->n : 1, sizeof (*open));
  size_t depth = 0;

  if (l->n > 0) /* an empty list has no array at all */
    qsort (l->e, l->n, sizeof (*l->e), by_address);
  for (size_t i = 0; i < l->n; i++)
    {
      struct flagged_cidr *e = &l->e[i], *top;
      while (depth > 0 && !cidr_contains (&l->e[open[depth - 1]].c, &e->c))
        depth--;
      if (depth == 0)
        {
          open[depth++] = i;
          continue;
        }
      top = &l->e[open[depth - 1]];
      if (top->c.prefix == e->c.prefix)
        {
          /* Equal: nothing it contains has been seen yet. */
          top->flag |= e->flag;
          e->duplicate = true;
          continue;
        }
      e->flag |= top->flag;
      open[depth++] = i;
    }
}

static void
lpm_key (struct netguard_lpm_key *k, const struct cidr *c)
{
  memset (k, 0, sizeof (*k));
  k->prefixlen = c->prefix;
  memcpy (k->data, c->addr, c->family == AF_INET ? 4 : 16);
}

static void
port_key (struct netguard_lpm_key *k, const struct cidr *c, uint16_t port)
{
  /* The word bpf_sock_addr.user_port holds: the value htons(port). */
  uint32_t word = htons (port);

  memset (k, 0, sizeof (*k));
  k->prefixlen = 32u + c->prefix;
  memcpy (k->data, &word, 4);
  memcpy (k->data + 4, c->addr, c->family == AF_INET ? 4 : 16);
}

static int
fill (const struct entry_list *l, int lists_fd, int ports_fd,
      struct moat_error **err)
{
  static const uint32_t one = 1;

  for (size_t i = 0; i < l->n; i++)
    {
      const struct flagged_cidr *f = &l->e[i];
      struct netguard_lpm_key k;
      int r = 0;

      if (!f->duplicate)
        {
          lpm_key (&k, &f->c);
          r = bpf_map_update (lists_fd, &k, &f->flag);
        }
      if (r == 0 && f->port)
        {
          port_key (&k, &f->c, f->port);
          r = bpf_map_update (ports_fd, &k, &one);
        }
      if (r < 0)
        return moat_fail (err, -r, "adding a network guard list entry");
    }
  return 0;
}

static size_t
count_ports (const struct entry_list *l)
{
  size_t n = 0;
  for (size_t i = 0; i < l->n; i++)
    n += l->e[i].port != 0;
  return n;
}

void
netguard_maps_close (struct netguard_maps *m)
{
  int *fds[] = { &m->lists4, &m->lists6, &m->ports4,
                 &m->ports6, &m->counts, &m->refused };
  for (size_t i = 0; i < sizeof (fds) / sizeof (fds[0]); i++)
    if (*fds[i] >= 0)
      {
        close (*fds[i]);
        *fds[i] = -1;
      }
}

int
netguard_maps_create (const struct netguard_rules *r, struct netguard_maps *ret,
                      struct moat_error **err)
{
  __attribute__ ((cleanup (entry_list_free))) struct entry_list l4 = { 0 };
  __attribute__ ((cleanup (entry_list_free))) struct entry_list l6 = { 0 };
  struct entry_list lists[2];
  struct netguard_maps m = { -1, -1, -1, -1, -1, -1 };
  int rc;

  rc = netguard_rules_check (r, err);
  if (rc < 0)
    return rc;
  memset (lists, 0, sizeof (lists));
  add_entries (lists, r->deny, r->n_deny, NETGUARD_DENY, 0);
  add_entries (lists, r->allow, r->n_allow, NETGUARD_ALLOW, 0);
  add_entries (lists, r->dns, r->n_dns, NETGUARD_PORTS, 53);
  add_entries (lists, r->private_nets, r->n_private, NETGUARD_PRIVATE, 0);
  l4 = lists[0];
  l6 = lists[1];
  inherit_flags (&l4);
  inherit_flags (&l6);

  /* An LPM trie wants at least one entry's room. */
  rc = bpf_map_create (BPF_MAP_TYPE_LPM_TRIE, 4 + 4, 4, (uint32_t)l4.n + 1,
                       BPF_F_NO_PREALLOC, "moat_lists4", &m.lists4, err);
  if (rc == 0)
    rc = bpf_map_create (BPF_MAP_TYPE_LPM_TRIE, 4 + 16, 4, (uint32_t)l6.n + 1,
                         BPF_F_NO_PREALLOC, "moat_lists6", &m.lists6, err);
  if (rc == 0)
    rc = bpf_map_create (BPF_MAP_TYPE_LPM_TRIE, 4 + 4 + 4, 4,
                         (uint32_t)count_ports (&l4) + 1, BPF_F_NO_PREALLOC,
                         "moat_ports4", &m.ports4, err);
  if (rc == 0)
    rc = bpf_map_create (BPF_MAP_TYPE_LPM_TRIE, 4 + 4 + 16, 4,
                         (uint32_t)count_ports (&l6) + 1, BPF_F_NO_PREALLOC,
                         "moat_ports6", &m.ports6, err);
  /* Keyed by the cgroup id alone (8 bytes): one value per cgroup, shared
   * by the programs of every hook (5.9). max_entries must be 0. */
  if (rc == 0)
    rc = bpf_map_create (BPF_MAP_TYPE_CGROUP_STORAGE, sizeof (uint64_t),
                         sizeof (struct netguard_counts), 0, 0,
                         NETGUARD_COUNTS_MAP, &m.counts, err);
  if (rc == 0)
    rc = bpf_map_create (
        BPF_MAP_TYPE_HASH, sizeof (struct netguard_refusal_key),
        sizeof (struct netguard_refusal_count), NETGUARD_REFUSED_MAX,
        BPF_F_NO_PREALLOC, NETGUARD_REFUSED_MAP, &m.refused, err);
  if (rc == 0)
    rc = fill (&l4, m.lists4, m.ports4, err);
  if (rc == 0)
    rc = fill (&l6, m.lists6, m.ports6, err);
  /* The lists are final: not even root's bpf() may change them now,
   * while programs of many containers read them (5.2). */
  if (rc == 0)
    {
      const int tries[] = { m.lists4, m.lists6, m.ports4, m.ports6 };
      for (size_t i = 0; rc == 0 && i < sizeof (tries) / sizeof (*tries); i++)
        if ((rc = bpf_map_freeze (tries[i])) < 0)
          rc = moat_fail (err, -rc, "freezing a network guard list");
    }
  if (rc < 0)
    {
      netguard_maps_close (&m);
      return moat_error_wrap (err, "network guard lists");
    }
  *ret = m;
  return 0;
}
