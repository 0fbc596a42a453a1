/* Internal to the network guard: the lists in BPF maps
 * (netguard_maps.c) and the hand-assembled cgroup BPF programs that look
 * a destination up in them (netguard_bpf.c), loaded through bpf.h. Split
 * out so that tests can run a program on crafted packets
 * (BPF_PROG_TEST_RUN) without any real network. */
#ifndef MOAT_NETGUARD_BPF_H
#define MOAT_NETGUARD_BPF_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

#include "../../lib/error.h"
#include "netguard.h"

enum netguard_prog
{
  /* cgroup_skb, strict: one program for both directions, since a loopback
   * packet has loopback source and destination whichever way it goes. */
  NETGUARD_PROG_SKB_LOOPBACK,
  /* cgroup_skb, egress mode: the deny list is checked against the
   * destination going out and the source coming in. */
  NETGUARD_PROG_SKB_EGRESS,
  NETGUARD_PROG_SKB_INGRESS,
  /* cgroup_sock_addr: the kernel insists that expected_attach_type match
   * the hook, so each of the four needs its own load. */
  NETGUARD_PROG_CONNECT4,
  NETGUARD_PROG_CONNECT6,
  NETGUARD_PROG_SENDMSG4,
  NETGUARD_PROG_SENDMSG6,
};

/* What a "lists" trie entry holds: the lists that contain its CIDR. */
enum netguard_flag
{
  NETGUARD_DENY = 1,    /* refused in every mode (G2, egress_deny) */
  NETGUARD_ALLOW = 2,   /* egress: passed, any port */
  NETGUARD_PORTS = 4,   /* egress: passed on the ports "ports" holds */
  NETGUARD_PRIVATE = 8, /* egress without an allowlist: refused */
};

/* A key of any of the tries: the prefix length in bits, then the data
 * (lists: the address; ports: a 32-bit word of value htons(port), as
 * bpf_sock_addr.user_port holds it, then the address). Each map's key size is
 * what its family needs. */
struct netguard_lpm_key
{
  uint32_t prefixlen;
  uint8_t data[4 + 16];
};

/* What connect()/sendmsg() refusals are counted under: the container
 * (its counters' cgroup_id) and the destination as the process named it. */
struct netguard_refusal_key
{
  uint64_t cgroup_id;
  uint8_t addr[16]; /* network order; IPv4 in the first 4 bytes */
  uint16_t port;    /* network order */
  uint8_t proto;    /* IPPROTO_TCP, IPPROTO_UDP ... */
  uint8_t family;   /* 4 or 6 */
  uint8_t pad[4];
};
struct netguard_refusal_count
{
  uint64_t count;
  uint64_t first_ns, last_ns; /* CLOCK_MONOTONIC */
};
/* Each container's first destinations refused are counted each, the rest
 * together in its overflow count. The refused map is shared by all
 * containers that share the programs: room for this many containers'
 * full lists; past it, new destinations count in the overflows. */
#define NETGUARD_REFUSALS_KEPT 256
#define NETGUARD_REFUSED_MAX (256 * NETGUARD_REFUSALS_KEPT)
#define NETGUARD_REFUSED_MAP "moat_refused"

/* A container's counters: the value of the cgroup storage map
 * NETGUARD_COUNTS_MAP, one per cgroup the programs are attached to
 * (shared by all of its programs, keyed by the cgroup's id alone), so
 * that containers sharing programs and maps still count apart, processes
 * in sub-cgroups count with their container, and the counters go with
 * the attachments. cgroup_id is written by netguard_attach (a program
 * cannot tell which cgroup it is attached to); n_kept counts the
 * destinations taken into the refused map (it may pass the bound by the
 * CPUs racing for the last one). */
struct netguard_counts
{
  uint64_t cgroup_id;
  uint32_t n_kept;
  uint32_t pad;
  uint64_t overflow;        /* refusals of destinations not kept */
  uint64_t dropped_packets; /* dropped by the cgroup_skb programs */
};
#define NETGUARD_COUNTS_MAP "moat_counts"

/* The maps the programs use, as fds (-1: none). */
struct netguard_maps
{
  int lists4, lists6; /* CIDR -> enum netguard_flag set */
  int ports4, ports6; /* port + CIDR -> 1 */
  int counts;         /* cgroup storage: cgroup id -> struct netguard_counts */
  int refused; /* struct netguard_refusal_key -> netguard_refusal_count */
};

/* Create the maps and fill them with the lists of R. */
int netguard_maps_create (const struct netguard_rules *r,
                          struct netguard_maps *ret, struct moat_error **err);
void netguard_maps_close (struct netguard_maps *m);

/* The lists are well formed and not too long. */
int netguard_rules_check (const struct netguard_rules *r,
                          struct moat_error **err);

/* Assemble the program, reading the maps M; *ret is malloc'ed, *ret_n
 * instructions. Only R's modes shape the program, not its lists. */
int netguard_bpf_build (enum netguard_prog kind, const struct netguard_rules *r,
                        const struct netguard_maps *m, struct bpf_insn **ret,
                        size_t *ret_n, struct moat_error **err);

/* Assemble and load it (bpf_prog_load); *ret_fd is an O_CLOEXEC program
 * fd. The program holds the maps from then on. */
int netguard_bpf_load (enum netguard_prog kind, const struct netguard_rules *r,
                       const struct netguard_maps *m, int *ret_fd,
                       struct moat_error **err);

#endif
