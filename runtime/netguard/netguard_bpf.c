/* The network guard's BPF programs, assembled by hand (no clang, no libbpf).
 *
 * Each program is small and fixed: it copies the address to judge (the
 * destination a connect() or sendmsg() names, or a packet's peer) to the
 * stack, looks it up in the lists trie of its family (netguard_maps.c),
 * and decides from the flags found, in one order for every topology:
 *
 *   denied (the address, or the IPv4 address an IPv6 one embeds) -> refuse
 *   loopback                                                     -> pass
 *   strict: anything else                                        -> refuse
 *   allowed; or a port entry (the ports trie) for this port      -> pass
 *   allowlist: anything else                                     -> refuse
 *   private (the address, or the IPv4 one it embeds)             -> refuse
 *   anything else                                                -> pass
 *
 * An IPv4-mapped address (::ffff:a.b.c.d, a dual-stack socket's IPv4
 * peer) is judged as the IPv4 address it is; the IPv4-compatible (::/96),
 * NAT64 (64:ff9b::/96) and 6to4 (2002::/16) forms carry the refusals of
 * the IPv4 address inside. Only the modes (strict, egress, allowlist)
 * shape a program; the lists change nothing in it.
 *
 * A tiny assembler with forward-only labels builds the programs. Words
 * loaded by the BPF machine have the byte order of the host, so the
 * immediates an address is compared with are made with memcpy from the
 * network-order bytes.
 *
 * Kernel needs: LPM tries (4.11), 32-bit jumps (5.1) and direct packet
 * access from cgroup_skb (5.2); every host with a usable cgroup v2 has
 * them. */
#include "netguard_bpf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../bpf/bpf.h"
#include "../bpf/bpf_asm.h"
#include "../../lib/util.h"

/* Registers: r6 holds the context throughout (calls clobber r1-r5); r7
 * the flags the address's own lookup found, r8 those of the IPv4 address
 * it embeds, r9 the refusals of both; r2-r5 are scratch between calls. */
enum
{
  R0 = BPF_REG_0,
  R1 = BPF_REG_1,
  R2 = BPF_REG_2,
  R_PKT = BPF_REG_2,
  R_PKT_END = BPF_REG_3,
  R_TMP = BPF_REG_4,
  R_WORD = BPF_REG_5,
  R_CTX = BPF_REG_6,
  R_FLAGS = BPF_REG_7,
  R_EMBEDDED = BPF_REG_8,
  R_REFUSE = BPF_REG_9,
  R_FP = BPF_REG_10,
  /* Counting (after the verdict, so the judging registers are free): the
   * container's counters, a kept slot, and the scan's index and end. */
  R_COUNTS = BPF_REG_7,
  R_SLOT = BPF_REG_8,
  R_INDEX = BPF_REG_3,
};

/* The stack: the lookup keys (struct netguard_lpm_key as each map's key
 * size cuts it) and, for packets, the addresses copied out first. */
enum
{
  KEY4 = -8,   /* prefixlen, IPv4 address */
  KEY6 = -32,  /* prefixlen, IPv6 address */
  PKEY4 = -48, /* prefixlen, port word, IPv4 address */
  PKEY6 = -80, /* prefixlen, port word, IPv6 address */
  SLOT_DST = -96,
  SLOT_SRC = -112,
  REFUSAL_KEY = -144,   /* struct netguard_refusal_key */
  REFUSAL_VALUE = -176, /* struct netguard_refusal_count */
};

/* lo is ifindex 1 in every network namespace (LOOPBACK_IFINDEX, 3.10). */
#define LOOPBACK_IFINDEX 1

/* Jump to MATCH if the address at BASE+OFF lies in C, else to MISS. */
static void
emit_cidr_test (struct bpf_asm *a, int base, int off, const struct cidr *c,
                int match, int miss)
{
  for (unsigned word = 0; word * 32 < c->prefix; word++)
    {
      unsigned bits = c->prefix - word * 32;
      uint8_t mask_bytes[4] = { 0 };
      uint32_t mask, net;

      for (unsigned b = 0; b < 4 && b * 8 < bits; b++)
        mask_bytes[b] = bits >= b * 8 + 8 ? 0xff : 0xff << (8 - (bits % 8));
      memcpy (&mask, mask_bytes, 4);
      memcpy (&net, c->addr + word * 4, 4);
      net &= mask;

      bpf_asm_emit (a, LDX_MEM (BPF_W, R_WORD, base, off + (int)word * 4));
      if (mask != UINT32_MAX)
        bpf_asm_emit (a, ALU32_IMM (BPF_AND, R_WORD, (int32_t)mask));
      bpf_asm_jump (a, JMP32_IMM (BPF_JNE, R_WORD, (int32_t)net), miss);
    }
  bpf_asm_jump (a, JA (), match);
}

#define V4(A, B, C, D, P)                                                      \
  {                                                                            \
    .family = AF_INET, .addr = { A, B, C, D }, .prefix = P                     \
  }
#define V6_LOOPBACK                                                            \
  {                                                                            \
    .family = AF_INET6, .addr = { [15] = 1 }, .prefix = 128                    \
  }

#define N_ELEMS(x) (sizeof (x) / sizeof ((x)[0]))

/* Loopback addresses in packets: 127.0.0.0/8 and ::1. */
static const struct cidr loopback4[] = { V4 (127, 0, 0, 0, 8) };
static const struct cidr loopback6[] = { V6_LOOPBACK };

/* What connect() and sendmsg() may name as loopback. The unspecified
 * addresses are there because the kernel routes a connect to 0.0.0.0 or
 * :: to loopback (ip_route_output_key, tcp_v6_connect), and programs use
 * them for "this host"; the packets then carry 127.0.0.1 or ::1 and pass
 * the skb programs on their own merit. */
static const struct cidr loopback_or_any4[]
    = { V4 (127, 0, 0, 0, 8), V4 (0, 0, 0, 0, 32) };
static const struct cidr loopback_or_any6[]
    = { V6_LOOPBACK, { .family = AF_INET6, .prefix = 128 } };

/* What one program judges, and how. */
struct judge
{
  const struct netguard_rules *r;
  const struct netguard_maps *m;
  bool sock_addr; /* a connect()/sendmsg() (ports known), or a packet */
  int pass, drop;
};

static void
emit_ld_map_fd (struct bpf_asm *a, int reg, int fd)
{
  bpf_asm_emit (
      a, INSN (BPF_LD | BPF_DW | BPF_IMM, reg, BPF_PSEUDO_MAP_FD, 0, fd));
  bpf_asm_emit (a, INSN (0, 0, 0, 0, 0));
}

/* R_COUNTS = the counters of the cgroup this program is attached to. */
static void
emit_counts (struct bpf_asm *a, const struct judge *j)
{
  emit_ld_map_fd (a, R1, j->m->counts);
  bpf_asm_emit (a, MOV64_IMM (R2, 0));
  bpf_asm_emit (a, CALL (BPF_FUNC_get_local_storage));
  bpf_asm_emit (a, MOV64_REG (R_COUNTS, R0));
}

/* RET = the flags MAP holds for the key at KEY_OFF on the stack, or 0. */
static void
emit_lookup (struct bpf_asm *a, int map_fd, int key_off, int ret)
{
  int none = bpf_asm_label (a);
  emit_ld_map_fd (a, R1, map_fd);
  bpf_asm_emit (a, MOV64_REG (R2, R_FP));
  bpf_asm_emit (a, ALU64_IMM (BPF_ADD, R2, key_off));
  bpf_asm_emit (a, CALL (BPF_FUNC_map_lookup_elem));
  bpf_asm_emit (a, MOV64_IMM (ret, 0));
  bpf_asm_jump (a, JMP_IMM (BPF_JEQ, R0, 0), none);
  bpf_asm_emit (a, LDX_MEM (BPF_W, ret, R0, 0));
  bpf_asm_place (a, none);
}

/* Copy N 32-bit words from BASE+FROM to the stack at TO. */
static void
emit_copy_words (struct bpf_asm *a, int base, int from, int to, int n)
{
  for (int i = 0; i < n; i++)
    {
      bpf_asm_emit (a, LDX_MEM (BPF_W, R_WORD, base, from + 4 * i));
      bpf_asm_emit (a, STX_MEM (BPF_W, R_FP, R_WORD, to + 4 * i));
    }
}

/* Jump to MATCH if the address at the stack's OFF is in one of LIST. */
static void
emit_any_of (struct bpf_asm *a, int off, const struct cidr *list, size_t n,
             int match)
{
  for (size_t i = 0; i < n; i++)
    {
      int miss = bpf_asm_label (a);
      emit_cidr_test (a, R_FP, off, &list[i], match, miss);
      bpf_asm_place (a, miss);
    }
}

/* The decision for the address in the key at KEY (KEY4 or KEY6), whose
 * flags are in R_FLAGS and refusals in R_REFUSE: on to OK (loopback, or
 * an egress pass), or to j->drop. */
static void
emit_decision (struct bpf_asm *a, const struct judge *j, int family, int ok)
{
  bool v4 = family == AF_INET;
  int addr = (v4 ? KEY4 : KEY6) + 4;

  bpf_asm_jump (a, JMP_IMM (BPF_JSET, R_REFUSE, NETGUARD_DENY), j->drop);
  if (j->sock_addr)
    {
      if (v4)
        emit_any_of (a, addr, loopback_or_any4, N_ELEMS (loopback_or_any4), ok);
      else
        emit_any_of (a, addr, loopback_or_any6, N_ELEMS (loopback_or_any6), ok);
    }
  else if (!j->r->egress)
    {
      if (v4)
        emit_any_of (a, addr, loopback4, N_ELEMS (loopback4), ok);
      else
        emit_any_of (a, addr, loopback6, N_ELEMS (loopback6), ok);
    }
  else
    {
      /* A packet: what goes over lo stays in the container's namespace
       * (its loopback, and its own addresses, which the kernel routes
       * over lo; NAT has been applied by now). */
      bpf_asm_emit (a, LDX_MEM (BPF_W, R_TMP, R_CTX,
                                offsetof (struct __sk_buff, ifindex)));
      bpf_asm_jump (a, JMP_IMM (BPF_JEQ, R_TMP, LOOPBACK_IFINDEX), ok);
    }
  if (!j->r->egress)
    {
      bpf_asm_jump (a, JA (), j->drop);
      return;
    }
  bpf_asm_jump (a, JMP_IMM (BPF_JSET, R_FLAGS, NETGUARD_ALLOW), ok);
  if (j->sock_addr)
    {
      /* A port entry covers the address: is there one for this port? */
      int pkey = v4 ? PKEY4 : PKEY6, no_port = bpf_asm_label (a);
      bpf_asm_emit (a, MOV64_REG (R_TMP, R_FLAGS));
      bpf_asm_emit (a, ALU64_IMM (BPF_AND, R_TMP, NETGUARD_PORTS));
      bpf_asm_jump (a, JMP_IMM (BPF_JEQ, R_TMP, 0), no_port);
      bpf_asm_emit (a, ST_MEM (BPF_W, R_FP, pkey, 32 + (v4 ? 32 : 128)));
      /* bpf_sock_addr.user_port: a 32-bit field whose value is the be16
       * port, htons(port), on either byte order: the key's port word as
       * netguard_maps.c writes it. */
      bpf_asm_emit (a, LDX_MEM (BPF_W, R_WORD, R_CTX,
                                offsetof (struct bpf_sock_addr, user_port)));
      bpf_asm_emit (a, STX_MEM (BPF_W, R_FP, R_WORD, pkey + 4));
      emit_copy_words (a, R_FP, addr, pkey + 8, v4 ? 1 : 4);
      emit_lookup (a, v4 ? j->m->ports4 : j->m->ports6, pkey, R_TMP);
      bpf_asm_jump (a, JMP_IMM (BPF_JNE, R_TMP, 0), ok);
      bpf_asm_place (a, no_port);
    }
  else
    /* Ports are the sock_addr programs' business: a TCP connection or
     * UDP exchange to another port was refused at connect or sendmsg. */
    bpf_asm_jump (a, JMP_IMM (BPF_JSET, R_FLAGS, NETGUARD_PORTS), ok);
  if (j->r->allowlist)
    bpf_asm_jump (a, JA (), j->drop);
  bpf_asm_jump (a, JMP_IMM (BPF_JSET, R_REFUSE, NETGUARD_PRIVATE), j->drop);
  bpf_asm_jump (a, JA (), ok);
}

/* Judge the IPv4 address in KEY4. */
static void
emit_judge4 (struct bpf_asm *a, const struct judge *j, int ok)
{
  bpf_asm_emit (a, ST_MEM (BPF_W, R_FP, KEY4, 32));
  emit_lookup (a, j->m->lists4, KEY4, R_FLAGS);
  bpf_asm_emit (a, MOV64_REG (R_REFUSE, R_FLAGS));
  emit_decision (a, j, AF_INET, ok);
}

/* Word I of an IPv6 address, as the BPF machine loads it. */
static int32_t
word_of (const uint8_t bytes[4])
{
  int32_t w;
  memcpy (&w, bytes, 4);
  return w;
}

/* The IPv4 address an IPv6 one in KEY6 embeds, if any: an IPv4-mapped
 * one goes on to be judged as IPv4 (jump to AS_V4, the address in KEY4);
 * the refusals of the others' IPv4 address are left in R_EMBEDDED. */
static void
emit_embedded (struct bpf_asm *a, const struct judge *j, int as_v4)
{
  static const uint8_t mapped_w2[4] = { 0, 0, 0xff, 0xff };
  static const uint8_t nat64_w0[4] = { 0x00, 0x64, 0xff, 0x9b };
  int addr = KEY6 + 4;
  int not_96 = bpf_asm_label (a), mapped = bpf_asm_label (a),
      in_w3 = bpf_asm_label (a);
  int found = bpf_asm_label (a), done = bpf_asm_label (a),
      six_to_four = bpf_asm_label (a);

  bpf_asm_emit (a, MOV64_IMM (R_EMBEDDED, 0));
  bpf_asm_emit (a, LDX_MEM (BPF_W, R2, R_FP, addr));
  bpf_asm_emit (a, LDX_MEM (BPF_W, BPF_REG_3, R_FP, addr + 4));
  bpf_asm_emit (a, LDX_MEM (BPF_W, R_TMP, R_FP, addr + 8));
  bpf_asm_jump (a, JMP32_IMM (BPF_JNE, BPF_REG_3, 0), not_96);
  bpf_asm_jump (a, JMP32_IMM (BPF_JEQ, R_TMP, word_of (mapped_w2)), mapped);
  bpf_asm_jump (a, JMP32_IMM (BPF_JNE, R_TMP, 0), not_96);
  bpf_asm_jump (a, JMP32_IMM (BPF_JEQ, R2, 0), in_w3); /* ::/96 */
  bpf_asm_jump (a, JMP32_IMM (BPF_JEQ, R2, word_of (nat64_w0)), in_w3);
  bpf_asm_jump (a, JA (), not_96);

  /* ::ffff:0:0/96. No IPv6 packet carries one (sockets send those as
   * IPv4, and ipv6_rcv drops a mapped source): a packet's is refused
   * with its IPv4 address, never passed as it. */
  bpf_asm_place (a, mapped);
  bpf_asm_jump (a, JMP32_IMM (BPF_JNE, R2, 0), not_96);
  emit_copy_words (a, R_FP, addr + 12, KEY4 + 4, 1);
  bpf_asm_jump (a, JA (), j->sock_addr ? as_v4 : found);

  bpf_asm_place (a, in_w3);
  emit_copy_words (a, R_FP, addr + 12, KEY4 + 4, 1);
  bpf_asm_jump (a, JA (), found);

  bpf_asm_place (a, not_96); /* 6to4: 2002:AABB:CCDD::/48 */
  bpf_asm_emit (a, LDX_MEM (BPF_H, R_WORD, R_FP, addr));
  bpf_asm_jump (a, JMP32_IMM (BPF_JEQ, R_WORD, htons (0x2002)), six_to_four);
  bpf_asm_jump (a, JA (), done);
  bpf_asm_place (a, six_to_four);
  for (int i = 0; i < 4; i++)
    {
      bpf_asm_emit (a, LDX_MEM (BPF_B, R_WORD, R_FP, addr + 2 + i));
      bpf_asm_emit (a, STX_MEM (BPF_B, R_FP, R_WORD, KEY4 + 4 + i));
    }

  bpf_asm_place (a, found);
  bpf_asm_emit (a, ST_MEM (BPF_W, R_FP, KEY4, 32));
  emit_lookup (a, j->m->lists4, KEY4, R_EMBEDDED);
  bpf_asm_emit (
      a, ALU64_IMM (BPF_AND, R_EMBEDDED, NETGUARD_DENY | NETGUARD_PRIVATE));
  bpf_asm_place (a, done);
}

/* Judge the address of FAMILY at BASE+OFF (the context or a stack
 * slot): on to OK, or to j->drop. */
static void
emit_judge (struct bpf_asm *a, const struct judge *j, int family, int base,
            int off, int ok)
{
  int as_v4 = bpf_asm_label (a);

  if (family == AF_INET)
    {
      emit_copy_words (a, base, off, KEY4 + 4, 1);
      emit_judge4 (a, j, ok);
      return;
    }
  emit_copy_words (a, base, off, KEY6 + 4, 4);
  emit_embedded (a, j, as_v4);
  bpf_asm_emit (a, ST_MEM (BPF_W, R_FP, KEY6, 128));
  emit_lookup (a, j->m->lists6, KEY6, R_FLAGS);
  bpf_asm_emit (a, MOV64_REG (R_REFUSE, R_FLAGS));
  bpf_asm_emit (a, ALU64_REG (BPF_OR, R_REFUSE, R_EMBEDDED));
  emit_decision (a, j, AF_INET6, ok);
  bpf_asm_place (a, as_v4);
  emit_judge4 (a, j, ok);
}

static void
emit_verdicts (struct bpf_asm *a, const struct judge *j)
{
  bpf_asm_place (a, j->drop);
  if (j->m->counts >= 0)
    {
      emit_counts (a, j);
      bpf_asm_emit (a, MOV64_IMM (R1, 1));
      bpf_asm_emit (
          a, ATOMIC_ADD (BPF_DW, R_COUNTS, R1,
                         offsetof (struct netguard_counts, dropped_packets)));
    }
  bpf_asm_emit (a, MOV64_IMM (R0, 0));
  bpf_asm_emit (a, EXIT ());
  bpf_asm_place (a, j->pass);
  bpf_asm_emit (a, MOV64_IMM (R0, 1));
  bpf_asm_emit (a, EXIT ());
}

struct ip_layout
{
  int family;
  int header_len;
  int src, dst;
};

static const struct ip_layout ipv4_layout = { AF_INET, 20, 12, 16 };
static const struct ip_layout ipv6_layout = { AF_INET6, 40, 8, 24 };

static void
emit_skb_family (struct bpf_asm *a, const struct judge *j,
                 enum netguard_prog kind, const struct ip_layout *ip)
{
  int words = ip->family == AF_INET ? 1 : 4;
  int src_ok = bpf_asm_label (a);

  /* The kernel has pulled the IP header into the linear area before
   * either hook (ip_rcv / ipv6_rcv, and on output it was built there), so
   * a short packet here is malformed and dropped. Twenty bytes were
   * checked already. */
  if (ip->header_len > 20)
    {
      bpf_asm_emit (a, MOV64_REG (R_TMP, R_PKT));
      bpf_asm_emit (a, ALU64_IMM (BPF_ADD, R_TMP, ip->header_len));
      bpf_asm_jump (a, JMP_REG (BPF_JGT, R_TMP, R_PKT_END), j->drop);
    }
  /* A routing header sends the packet on to addresses the checks below
   * never see: setsockopt(IPV6_RTHDR) takes a segment routing header
   * without any capability. Dropped in egress mode, lo included. */
  if (ip->family == AF_INET6 && kind != NETGUARD_PROG_SKB_LOOPBACK)
    {
      bpf_asm_emit (a, LDX_MEM (BPF_B, R_WORD, R_PKT, 6));
      bpf_asm_jump (a, JMP_IMM (BPF_JEQ, R_WORD, IPPROTO_ROUTING), j->drop);
    }
  /* Out of the packet before any call (calls forget packet pointers). */
  emit_copy_words (a, R_PKT, ip->src, SLOT_SRC, words);
  emit_copy_words (a, R_PKT, ip->dst, SLOT_DST, words);

  /* Egress mode checks the peer: the destination going out, the source
   * coming in; strict mode both. */
  switch (kind)
    {
    case NETGUARD_PROG_SKB_EGRESS:
      emit_judge (a, j, ip->family, R_FP, SLOT_DST, j->pass);
      break;
    case NETGUARD_PROG_SKB_INGRESS:
      emit_judge (a, j, ip->family, R_FP, SLOT_SRC, j->pass);
      break;
    default:
      emit_judge (a, j, ip->family, R_FP, SLOT_SRC, src_ok);
      bpf_asm_place (a, src_ok);
      emit_judge (a, j, ip->family, R_FP, SLOT_DST, j->pass);
      break;
    }
}

/* cgroup_skb: r1 is a struct __sk_buff whose data starts at the IP header
 * in both directions (__cgroup_bpf_run_filter_skb pushes back to it). */
static void
build_skb (struct bpf_asm *a, enum netguard_prog kind, struct judge *j)
{
  int v4 = bpf_asm_label (a), v6 = bpf_asm_label (a);

  bpf_asm_emit (a, MOV64_REG (R_CTX, R1));
  /* Strict mode wants the packet on lo as well as loopback addresses:
   * an address alone would let a packet with a spoofed 127.0.0.1 source
   * in through a veth wherever route_localnet is set (kube-proxy sets it),
   * and ifindex alone would pass anything a future route sent via lo. */
  if (kind == NETGUARD_PROG_SKB_LOOPBACK)
    {
      bpf_asm_emit (a, LDX_MEM (BPF_W, R_TMP, R_CTX,
                                offsetof (struct __sk_buff, ifindex)));
      bpf_asm_jump (a, JMP_IMM (BPF_JNE, R_TMP, LOOPBACK_IFINDEX), j->drop);
    }
  bpf_asm_emit (
      a, LDX_MEM (BPF_W, R_PKT, R_CTX, offsetof (struct __sk_buff, data)));
  bpf_asm_emit (a, LDX_MEM (BPF_W, R_PKT_END, R_CTX,
                            offsetof (struct __sk_buff, data_end)));
  bpf_asm_emit (a, MOV64_REG (R_TMP, R_PKT));
  bpf_asm_emit (a, ALU64_IMM (BPF_ADD, R_TMP, 20));
  bpf_asm_jump (a, JMP_REG (BPF_JGT, R_TMP, R_PKT_END), j->drop);
  /* The version nibble rather than skb->protocol: it is what the header
   * offsets below depend on. Anything not IP is dropped. */
  bpf_asm_emit (a, LDX_MEM (BPF_B, R_WORD, R_PKT, 0));
  bpf_asm_emit (a, ALU32_IMM (BPF_RSH, R_WORD, 4));
  bpf_asm_jump (a, JMP_IMM (BPF_JEQ, R_WORD, 4), v4);
  bpf_asm_jump (a, JMP_IMM (BPF_JEQ, R_WORD, 6), v6);
  bpf_asm_jump (a, JA (), j->drop);

  bpf_asm_place (a, v4);
  emit_skb_family (a, j, kind, &ipv4_layout);
  bpf_asm_place (a, v6);
  emit_skb_family (a, j, kind, &ipv6_layout);
  emit_verdicts (a, j);
}

#define COUNTS_AT(FIELD) ((int)offsetof (struct netguard_counts, FIELD))
#define KEY_AT(FIELD)                                                          \
  (REFUSAL_KEY + (int)offsetof (struct netguard_refusal_key, FIELD))

/* Count a refusal in the refused map under the container (the cgroup id
 * its counters hold) and the destination the process named (its address
 * at CTX+OFF, port and protocol): the count, the first and the last time.
 * Once the container has NETGUARD_REFUSALS_KEPT destinations (or the map
 * is full), a new destination counts in its overflow instead. */
static void
emit_count_refusal (struct bpf_asm *a, const struct judge *j, int family,
                    int off)
{
  const int key = REFUSAL_KEY, value = REFUSAL_VALUE;
  int fresh = bpf_asm_label (a), overflow = bpf_asm_label (a),
      done = bpf_asm_label (a);

  emit_counts (a, j);
  for (int i = 0; i < (int)sizeof (struct netguard_refusal_key); i += 8)
    bpf_asm_emit (a, ST_MEM (BPF_DW, R_FP, key + i, 0));
  bpf_asm_emit (a, LDX_MEM (BPF_DW, R_WORD, R_COUNTS, COUNTS_AT (cgroup_id)));
  bpf_asm_emit (a, STX_MEM (BPF_DW, R_FP, R_WORD, KEY_AT (cgroup_id)));
  emit_copy_words (a, R_CTX, off, KEY_AT (addr), family == AF_INET ? 1 : 4);
  bpf_asm_emit (a, LDX_MEM (BPF_W, R_WORD, R_CTX,
                            offsetof (struct bpf_sock_addr, user_port)));
  bpf_asm_emit (a, STX_MEM (BPF_H, R_FP, R_WORD, KEY_AT (port)));
  bpf_asm_emit (a, LDX_MEM (BPF_W, R_WORD, R_CTX,
                            offsetof (struct bpf_sock_addr, protocol)));
  bpf_asm_emit (a, STX_MEM (BPF_B, R_FP, R_WORD, KEY_AT (proto)));
  bpf_asm_emit (
      a, ST_MEM (BPF_B, R_FP, KEY_AT (family), family == AF_INET ? 4 : 6));

  emit_ld_map_fd (a, R1, j->m->refused);
  bpf_asm_emit (a, MOV64_REG (R2, R_FP));
  bpf_asm_emit (a, ALU64_IMM (BPF_ADD, R2, key));
  bpf_asm_emit (a, CALL (BPF_FUNC_map_lookup_elem));
  bpf_asm_jump (a, JMP_IMM (BPF_JEQ, R0, 0), fresh);
  bpf_asm_emit (a, MOV64_REG (R_SLOT, R0));
  bpf_asm_emit (a, MOV64_IMM (R1, 1));
  bpf_asm_emit (a,
                ATOMIC_ADD (BPF_DW, R_SLOT, R1,
                            offsetof (struct netguard_refusal_count, count)));
  bpf_asm_emit (a, CALL (BPF_FUNC_ktime_get_ns));
  bpf_asm_emit (a, STX_MEM (BPF_DW, R_SLOT, R0,
                            offsetof (struct netguard_refusal_count, last_ns)));
  bpf_asm_jump (a, JA (), done);

  /* A new destination: take one of the container's slots, if any is
   * left (checked first, so that n_kept stops near the bound). */
  bpf_asm_place (a, fresh);
  bpf_asm_emit (a, LDX_MEM (BPF_W, R_INDEX, R_COUNTS, COUNTS_AT (n_kept)));
  bpf_asm_jump (a, JMP_IMM (BPF_JGE, R_INDEX, NETGUARD_REFUSALS_KEPT),
                overflow);
  bpf_asm_emit (a, MOV64_IMM (R_INDEX, 1));
  bpf_asm_emit (
      a, ATOMIC_FETCH_ADD (BPF_W, R_COUNTS, R_INDEX, COUNTS_AT (n_kept)));
  bpf_asm_jump (a, JMP_IMM (BPF_JGE, R_INDEX, NETGUARD_REFUSALS_KEPT),
                overflow);
  bpf_asm_emit (a, CALL (BPF_FUNC_ktime_get_ns));
  bpf_asm_emit (a, ST_MEM (BPF_DW, R_FP, value, 1));
  bpf_asm_emit (a, STX_MEM (BPF_DW, R_FP, R0, value + 8));
  bpf_asm_emit (a, STX_MEM (BPF_DW, R_FP, R0, value + 16));
  emit_ld_map_fd (a, R1, j->m->refused);
  bpf_asm_emit (a, MOV64_REG (R2, R_FP));
  bpf_asm_emit (a, ALU64_IMM (BPF_ADD, R2, key));
  bpf_asm_emit (a, MOV64_REG (BPF_REG_3, R_FP));
  bpf_asm_emit (a, ALU64_IMM (BPF_ADD, BPF_REG_3, value));
  bpf_asm_emit (a, MOV64_IMM (R_TMP, BPF_NOEXIST));
  bpf_asm_emit (a, CALL (BPF_FUNC_map_update_elem));
  /* 0: kept; EEXIST: another socket added it meanwhile (not counted
   * twice); E2BIG: the map, shared by every container, is full. */
  bpf_asm_jump (a, JMP_IMM (BPF_JNE, R0, -E2BIG), done);
  bpf_asm_place (a, overflow);
  bpf_asm_emit (a, MOV64_IMM (R1, 1));
  bpf_asm_emit (a, ATOMIC_ADD (BPF_DW, R_COUNTS, R1, COUNTS_AT (overflow)));
  bpf_asm_place (a, done);
}

/* cgroup_sock_addr: r1 is a struct bpf_sock_addr; returning 0 makes the
 * connect() or sendmsg() fail with EPERM before any packet exists. */
static void
build_sock_addr (struct bpf_asm *a, int family, struct judge *j)
{
  int off = family == AF_INET ? (int)offsetof (struct bpf_sock_addr, user_ip4)
                              : (int)offsetof (struct bpf_sock_addr, user_ip6);
  bpf_asm_emit (a, MOV64_REG (R_CTX, R1));
  emit_judge (a, j, family, R_CTX, off, j->pass);
  bpf_asm_place (a, j->drop);
  if (j->m->counts >= 0 && j->m->refused >= 0)
    emit_count_refusal (a, j, family, off);
  bpf_asm_emit (a, MOV64_IMM (R0, 0));
  bpf_asm_emit (a, EXIT ());
  bpf_asm_place (a, j->pass);
  bpf_asm_emit (a, MOV64_IMM (R0, 1));
  bpf_asm_emit (a, EXIT ());
}

static int
check_list (const struct cidr *list, size_t n, size_t max, const char *what,
            struct moat_error **err)
{
  if (n > 0 && list == NULL)
    return moat_fail (err, EINVAL, "no %s list", what);
  if (n > max)
    return moat_fail (err, E2BIG, "too many %s CIDRs (%zu, at most %zu)", what,
                      n, max);
  for (size_t i = 0; i < n; i++)
    {
      const struct cidr *c = &list[i];
      unsigned max_prefix = c->family == AF_INET ? 32 : 128;
      if ((c->family != AF_INET && c->family != AF_INET6)
          || c->prefix > max_prefix)
        return moat_fail (err, EINVAL, "%s CIDR %zu is not valid", what, i);
    }
  return 0;
}

int
netguard_rules_check (const struct netguard_rules *r, struct moat_error **err)
{
  int rc = check_list (r->deny, r->n_deny, NETGUARD_MAX_DENY, "denied", err);

  if (rc == 0)
    rc = check_list (r->allow, r->n_allow, NETGUARD_MAX_ALLOW, "allowed", err);
  if (rc == 0)
    rc = check_list (r->dns, r->n_dns, NETGUARD_MAX_DNS, "nameserver", err);
  if (rc == 0)
    rc = check_list (r->private_nets, r->n_private, NETGUARD_MAX_PRIVATE,
                     "private", err);
  return rc;
}

int
netguard_bpf_build (enum netguard_prog kind, const struct netguard_rules *r,
                    const struct netguard_maps *m, struct bpf_insn **ret,
                    size_t *ret_n, struct moat_error **err)
{
  struct bpf_asm a = { .reachable = true };
  struct judge j = { .r = r, .m = m };
  int rc = netguard_rules_check (r, err);

  if (rc < 0)
    return rc;
  j.pass = bpf_asm_label (&a);
  j.drop = bpf_asm_label (&a);
  switch (kind)
    {
    case NETGUARD_PROG_SKB_LOOPBACK:
    case NETGUARD_PROG_SKB_EGRESS:
    case NETGUARD_PROG_SKB_INGRESS:
      build_skb (&a, kind, &j);
      break;
    case NETGUARD_PROG_CONNECT4:
    case NETGUARD_PROG_SENDMSG4:
      j.sock_addr = true;
      build_sock_addr (&a, AF_INET, &j);
      break;
    case NETGUARD_PROG_CONNECT6:
    case NETGUARD_PROG_SENDMSG6:
      j.sock_addr = true;
      build_sock_addr (&a, AF_INET6, &j);
      break;
    default:
      bpf_asm_free (&a);
      return moat_fail (err, EINVAL, "unknown netguard program %d", kind);
    }
  rc = bpf_asm_finish (&a, err);
  if (rc < 0)
    {
      bpf_asm_free (&a);
      return rc;
    }
  *ret = steal_pointer (&a.insns);
  *ret_n = a.n;
  bpf_asm_free (&a);
  return 0;
}

struct prog_kind_info
{
  enum bpf_prog_type type;
  enum bpf_attach_type expected;
  const char *name; /* shows in bpftool; at most 15 chars */
};

static const struct prog_kind_info kind_info[] = {
  [NETGUARD_PROG_SKB_LOOPBACK] = { BPF_PROG_TYPE_CGROUP_SKB, 0, "moat_skb_lo" },
  [NETGUARD_PROG_SKB_EGRESS] = { BPF_PROG_TYPE_CGROUP_SKB, 0, "moat_skb_out" },
  [NETGUARD_PROG_SKB_INGRESS] = { BPF_PROG_TYPE_CGROUP_SKB, 0, "moat_skb_in" },
  [NETGUARD_PROG_CONNECT4] = { BPF_PROG_TYPE_CGROUP_SOCK_ADDR,
                               BPF_CGROUP_INET4_CONNECT, "moat_connect4" },
  [NETGUARD_PROG_CONNECT6] = { BPF_PROG_TYPE_CGROUP_SOCK_ADDR,
                               BPF_CGROUP_INET6_CONNECT, "moat_connect6" },
  [NETGUARD_PROG_SENDMSG4] = { BPF_PROG_TYPE_CGROUP_SOCK_ADDR,
                               BPF_CGROUP_UDP4_SENDMSG, "moat_sendmsg4" },
  [NETGUARD_PROG_SENDMSG6] = { BPF_PROG_TYPE_CGROUP_SOCK_ADDR,
                               BPF_CGROUP_UDP6_SENDMSG, "moat_sendmsg6" },
};

int
netguard_bpf_load (enum netguard_prog kind, const struct netguard_rules *r,
                   const struct netguard_maps *m, int *ret_fd,
                   struct moat_error **err)
{
  const struct prog_kind_info *info;
  cleanup_free struct bpf_insn *insns = NULL;
  size_t n;
  int rc;

  if ((unsigned)kind >= N_ELEMS (kind_info))
    return moat_fail (err, EINVAL, "unknown netguard program %d", kind);
  info = &kind_info[kind];
  rc = netguard_bpf_build (kind, r, m, &insns, &n, err);
  if (rc < 0)
    return rc;
  return bpf_prog_load (info->type, info->expected, info->name, insns, n,
                        ret_fd, err);
}
