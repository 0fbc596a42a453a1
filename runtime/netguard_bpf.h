/* Internal to the network guard: the hand-assembled cgroup BPF programs of
 * netguard.c, one builder per program kind, loaded through bpf.h. Split
 * out so that tests can run a program on crafted packets
 * (BPF_PROG_TEST_RUN) without any real network. */
#ifndef MOAT_NETGUARD_BPF_H
#define MOAT_NETGUARD_BPF_H

#include <stddef.h>

#include <linux/bpf.h>

#include "../lib/error.h"
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

/* The deny list is well formed and not too long (the fallback's routing
 * rules take the same list). */
int netguard_rules_check (const struct netguard_rules *r,
                          struct moat_error **err);

/* Assemble the program; *ret is malloc'ed, *ret_n instructions. */
int netguard_bpf_build (enum netguard_prog kind, const struct netguard_rules *r,
                        struct bpf_insn **ret, size_t *ret_n,
                        struct moat_error **err);

/* Assemble and load it (bpf_prog_load); *ret_fd is an O_CLOEXEC program
 * fd. */
int netguard_bpf_load (enum netguard_prog kind, const struct netguard_rules *r,
                       int *ret_fd, struct moat_error **err);

#endif
