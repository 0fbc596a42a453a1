/* The network guard's BPF programs, assembled by hand (no clang, no libbpf).
 *
 * A tiny assembler with forward-only labels builds each program from one
 * pattern, "does this 16- or 4-byte address fall in this CIDR", applied to
 * a packet's IP header (cgroup_skb) or to the address a connect() or
 * sendmsg() names (cgroup_sock_addr). Addresses are compared a 32-bit word
 * at a time: a word loaded by the BPF machine has the byte order of the
 * host, so the immediates are made with memcpy from the network-order
 * bytes and no byte swapping is needed on either side.
 *
 * Kernel needs: 32-bit jumps (5.1) and direct packet access from
 * cgroup_skb (5.2); every host with a usable cgroup v2 has both. */
#include "netguard_bpf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/filter.h>

#include "bpf.h"
#include "../lib/util.h"

#define INSN(CODE, DST, SRC, OFF, IMM)                                         \
  ((struct bpf_insn){ .code = (CODE),                                          \
                      .dst_reg = (DST),                                        \
                      .src_reg = (SRC),                                        \
                      .off = (OFF),                                            \
                      .imm = (IMM) })
#define LDX_MEM(SIZE, DST, SRC, OFF)                                           \
  INSN (BPF_LDX | BPF_MEM | (SIZE), DST, SRC, OFF, 0)
#define ALU32_IMM(OP, DST, IMM) INSN (BPF_ALU | (OP) | BPF_K, DST, 0, 0, IMM)
#define ALU64_IMM(OP, DST, IMM) INSN (BPF_ALU64 | (OP) | BPF_K, DST, 0, 0, IMM)
#define MOV64_REG(DST, SRC) INSN (BPF_ALU64 | BPF_MOV | BPF_X, DST, SRC, 0, 0)
#define MOV64_IMM(DST, IMM) INSN (BPF_ALU64 | BPF_MOV | BPF_K, DST, 0, 0, IMM)
/* Jumps are emitted with a label; the offset is patched in at the end. */
#define JMP_IMM(OP, DST, IMM) INSN (BPF_JMP | (OP) | BPF_K, DST, 0, 0, IMM)
#define JMP_REG(OP, DST, SRC) INSN (BPF_JMP | (OP) | BPF_X, DST, SRC, 0, 0)
/* 32-bit compares (kernel 5.1): a 64-bit compare would sign-extend an
 * immediate such as 0xff000000 and never match the zero-extended load. */
#define JMP32_IMM(OP, DST, IMM) INSN (BPF_JMP32 | (OP) | BPF_K, DST, 0, 0, IMM)
#define JA() INSN (BPF_JMP | BPF_JA, 0, 0, 0, 0)
#define EXIT() INSN (BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* Registers: r1 holds the context throughout; r2/r3 the packet bounds;
 * r4 and r5 are scratch. */
enum
{
  R0 = BPF_REG_0,
  R_CTX = BPF_REG_1,
  R_PKT = BPF_REG_2,
  R_PKT_END = BPF_REG_3,
  R_TMP = BPF_REG_4,
  R_WORD = BPF_REG_5,
};

/* lo is ifindex 1 in every network namespace (LOOPBACK_IFINDEX, 3.10). */
#define LOOPBACK_IFINDEX 1

struct fixup
{
  size_t at;
  int label;
};

/* All jumps go forward, so when a label is placed every jump to it is
 * already known: the assembler tracks whether the next instruction can be
 * reached at all and leaves out what cannot (the verifier refuses
 * unreachable instructions, which a deny entry such as 0.0.0.0/0 would
 * otherwise create). */
struct bpf_asm
{
  struct bpf_insn *insns;
  size_t n, cap;
  bool *label_used;
  ssize_t *label_at;
  size_t n_labels;
  struct fixup *fixups;
  size_t n_fixups;
  bool reachable;
};

static void
asm_free (struct bpf_asm *a)
{
  free (a->insns);
  free (a->label_used);
  free (a->label_at);
  free (a->fixups);
}

static void
emit (struct bpf_asm *a, struct bpf_insn insn)
{
  if (!a->reachable)
    return;
  if (a->n == a->cap)
    {
      a->cap = a->cap ? a->cap * 2 : 64;
      a->insns = xrealloc (a->insns, a->cap * sizeof (*a->insns));
    }
  a->insns[a->n++] = insn;
  if (insn.code == (BPF_JMP | BPF_JA) || insn.code == (BPF_JMP | BPF_EXIT))
    a->reachable = false;
}

static int
label_new (struct bpf_asm *a)
{
  size_t n = a->n_labels + 1;
  a->label_used = xrealloc (a->label_used, n * sizeof (*a->label_used));
  a->label_at = xrealloc (a->label_at, n * sizeof (*a->label_at));
  a->label_used[a->n_labels] = false;
  a->label_at[a->n_labels] = -1;
  return (int)a->n_labels++;
}

static void
emit_jump (struct bpf_asm *a, struct bpf_insn insn, int label)
{
  if (!a->reachable)
    return;
  a->fixups = xrealloc (a->fixups, (a->n_fixups + 1) * sizeof (*a->fixups));
  a->fixups[a->n_fixups++] = (struct fixup){ .at = a->n, .label = label };
  a->label_used[label] = true;
  emit (a, insn);
}

static void
label_place (struct bpf_asm *a, int label)
{
  /* A jump to the very next instruction is dropped: the tests below
   * produce one at the end of every "require" list. */
  if (a->n_fixups > 0 && a->fixups[a->n_fixups - 1].at == a->n - 1
      && a->fixups[a->n_fixups - 1].label == label
      && a->insns[a->n - 1].code == (BPF_JMP | BPF_JA))
    {
      a->n--;
      a->n_fixups--;
      a->reachable = true;
    }
  a->label_at[label] = (ssize_t)a->n;
  if (a->label_used[label])
    a->reachable = true;
}

static int
asm_finish (struct bpf_asm *a, struct moat_error **err)
{
  for (size_t i = 0; i < a->n_fixups; i++)
    {
      const struct fixup *f = &a->fixups[i];
      ssize_t off = a->label_at[f->label] - (ssize_t)f->at - 1;
      if (a->label_at[f->label] < 0 || off < 0)
        return moat_fail (err, EINVAL, "bpf assembler: label %d not placed",
                          f->label);
      if (off > INT16_MAX)
        return moat_fail (err, E2BIG, "bpf program too large (%zu insns)",
                          a->n);
      a->insns[f->at].off = (int16_t)off;
    }
  return 0;
}

/* Jump to MATCH if the address at BASE+OFF lies in C (and, with PORT_OFF
 * >= 0 and a port in C, the port at BASE+PORT_OFF is C's), else to MISS. */
static void
emit_cidr_test (struct bpf_asm *a, int base, int off, int port_off,
                const struct cidr *c, int match, int miss)
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

      emit (a, LDX_MEM (BPF_W, R_WORD, base, off + (int)word * 4));
      if (mask != UINT32_MAX)
        emit (a, ALU32_IMM (BPF_AND, R_WORD, (int32_t)mask));
      emit_jump (a, JMP32_IMM (BPF_JNE, R_WORD, (int32_t)net), miss);
    }
  if (port_off >= 0 && c->port != 0)
    {
      /* bpf_sock_addr.user_port: a 32-bit field holding the be16 port,
       * so its value is htons(port) on either byte order. */
      emit (a, LDX_MEM (BPF_W, R_WORD, base, port_off));
      emit_jump (a, JMP32_IMM (BPF_JNE, R_WORD, (int32_t)htons (c->port)),
                 miss);
    }
  emit_jump (a, JA (), match);
}

/* How IPv4 entries of a list apply to IPv6 addresses. */
enum v6_forms
{
  V6_NONE,     /* not at all */
  V6_MAPPED,   /* as ::ffff:a.b.c.d (a dual-stack socket's IPv4 peer) */
  V6_EMBEDDED, /* in every IPv6 form that carries them (refusals) */
};

/* A list of CIDRs as they apply to addresses of one family. */
struct cidr_set
{
  struct cidr *c;
  size_t n;
};

static void
cidr_set_free (struct cidr_set *s)
{
  free (s->c);
}

/* Leave out the entries another one of S covers (an earlier one, if
 * equal): ::/96 covers the IPv4-compatible form of every IPv4 range,
 * fc00::/7 covers fd00:ec2::254. Shorter programs verify faster. */
static void
cidr_set_prune (struct cidr_set *s)
{
  size_t kept = 0;
  for (size_t i = 0; i < s->n; i++)
    {
      bool covered = false;
      for (size_t j = 0; j < s->n && !covered; j++)
        covered = j != i && cidr_contains (&s->c[j], &s->c[i])
                  && (j < i || !cidr_contains (&s->c[i], &s->c[j]));
      if (!covered)
        s->c[kept++] = s->c[i];
    }
  s->n = kept;
}

/* The entries of LIST for FAMILY, with the IPv6 forms FORMS of its IPv4
 * entries; PORT, if not 0, is set on every entry. */
static struct cidr_set
cidr_set_for (int family, const struct cidr *list, size_t n,
              enum v6_forms forms, uint16_t port)
{
  struct cidr_set s
      = { .c = xcalloc (n ? n * CIDR_V6_EMBEDDINGS : 1, sizeof (struct cidr)) };
  for (size_t i = 0; i < n; i++)
    if (list[i].family == family)
      s.c[s.n++] = list[i];
    else if (forms != V6_NONE && family == AF_INET6
             && list[i].family == AF_INET)
      {
        struct cidr e[CIDR_V6_EMBEDDINGS];
        cidr_v6_embeddings (&list[i], e);
        for (int k = 0; k < (forms == V6_MAPPED ? 1 : CIDR_V6_EMBEDDINGS); k++)
          s.c[s.n++] = e[k];
      }
  if (port)
    for (size_t i = 0; i < s.n; i++)
      s.c[i].port = port;
  cidr_set_prune (&s);
  return s;
}

/* In strict mode only what ALLOW lists can pass; a denied entry outside
 * it is already refused and would only make the program (and its
 * verification, the main cost of attaching) longer. */
static void
cidr_set_keep_overlapping (struct cidr_set *deny, const struct cidr_set *allow)
{
  size_t kept = 0;
  for (size_t i = 0; i < deny->n; i++)
    for (size_t j = 0; j < allow->n; j++)
      if (cidr_overlaps (&deny->c[i], &allow->c[j]))
        {
          deny->c[kept++] = deny->c[i];
          break;
        }
  deny->n = kept;
}

/* Jump to MATCH if the address is in any entry of S, else fall through. */
static void
emit_any (struct bpf_asm *a, int base, int off, int port_off,
          const struct cidr_set *s, int match)
{
  for (size_t i = 0; i < s->n; i++)
    {
      int miss = label_new (a);
      emit_cidr_test (a, base, off, port_off, &s->c[i], match, miss);
      label_place (a, miss);
    }
}

/* Fall through if the address is in an entry of S, else jump to FAIL. */
static void
emit_require (struct bpf_asm *a, int base, int off, const struct cidr_set *s,
              int fail)
{
  int ok = label_new (a);
  if (s->n == 0)
    emit_jump (a, JA (), fail);
  for (size_t i = 0; i < s->n; i++)
    {
      int miss = i + 1 < s->n ? label_new (a) : fail;
      emit_cidr_test (a, base, off, -1, &s->c[i], ok, miss);
      if (miss != fail)
        label_place (a, miss);
    }
  label_place (a, ok);
}

#define V4(A, B, C, D, P)                                                      \
  {                                                                            \
    .family = AF_INET, .addr = { A, B, C, D }, .prefix = P                     \
  }
#define V6_LOOPBACK                                                            \
  {                                                                            \
    .family = AF_INET6, .addr = { [15] = 1 }, .prefix = 128                    \
  }

/* Loopback packets: 127.0.0.0/8 and ::1. An IPv6 packet never carries an
 * IPv4-mapped address (sockets send those as IPv4, and ipv6_rcv drops a
 * mapped source), so the mapped forms need not pass here. */
static const struct cidr loopback_nets[]
    = { V4 (127, 0, 0, 0, 8), V6_LOOPBACK };

/* What connect() and sendmsg() may name in strict mode, mapped forms
 * included (a dual-stack socket may name ::ffff:127.0.0.1). The
 * unspecified addresses are there because the kernel routes a connect to
 * 0.0.0.0 or :: to loopback (ip_route_output_key, tcp_v6_connect), and
 * programs use them for "this host"; the packets then carry 127.0.0.1 or
 * ::1 and pass the skb programs on their own merit. */
static const struct cidr loopback_or_any[] = {
  V4 (127, 0, 0, 0, 8),
  V6_LOOPBACK,
  V4 (0, 0, 0, 0, 32),
  { .family = AF_INET6, .prefix = 128 },
};

#define N_ELEMS(x) (sizeof (x) / sizeof ((x)[0]))

struct ip_layout
{
  int family;
  int header_len;
  int src, dst;
};

static const struct ip_layout ipv4_layout = { AF_INET, 20, 12, 16 };
static const struct ip_layout ipv6_layout = { AF_INET6, 40, 8, 24 };

/* Egress mode, for the address at BASE+OFF (and the port at
 * BASE+PORT_OFF, if >= 0): deny, then loopback (the LOOPBACK addresses
 * of a sock_addr program, or for a packet (LOOPBACK NULL) the lo link),
 * then the allowed entries and the
 * nameservers' port 53, then the allowlist's "nothing else" or the
 * private ranges. */
static void
emit_egress_decision (struct bpf_asm *a, int family, int base, int off,
                      int port_off, const struct netguard_rules *r,
                      const struct cidr_set *loopback, int pass, int drop)
{
  __attribute__ ((cleanup (cidr_set_free))) struct cidr_set deny
      = cidr_set_for (family, r->deny, r->n_deny, V6_EMBEDDED, 0);
  __attribute__ ((cleanup (cidr_set_free))) struct cidr_set allow
      = cidr_set_for (family, r->allow, r->n_allow, V6_MAPPED, 0);
  __attribute__ ((cleanup (cidr_set_free))) struct cidr_set dns
      = cidr_set_for (family, r->dns, r->n_dns, V6_MAPPED, 53);
  __attribute__ ((cleanup (cidr_set_free))) struct cidr_set private_nets
      = cidr_set_for (family, r->private_nets, r->n_private, V6_EMBEDDED, 0);

  emit_any (a, base, off, -1, &deny, drop);
  if (loopback)
    emit_any (a, base, off, -1, loopback, pass);
  else
    {
      /* A packet: what goes over lo stays in the container's namespace
       * (its loopback, and its own addresses, which the kernel routes
       * over lo; NAT has been applied by now). */
      emit (a, LDX_MEM (BPF_W, R_TMP, R_CTX,
                        offsetof (struct __sk_buff, ifindex)));
      emit_jump (a, JMP_IMM (BPF_JEQ, R_TMP, LOOPBACK_IFINDEX), pass);
    }
  emit_any (a, base, off, port_off, &allow, pass);
  emit_any (a, base, off, port_off, &dns, pass);
  if (r->allowlist)
    emit_jump (a, JA (), drop);
  emit_any (a, base, off, -1, &private_nets, drop);
  emit_jump (a, JA (), pass);
}

static void
emit_skb_family (struct bpf_asm *a, enum netguard_prog kind,
                 const struct ip_layout *ip, const struct netguard_rules *r,
                 int pass, int drop)
{
  __attribute__ ((cleanup (cidr_set_free))) struct cidr_set deny
      = cidr_set_for (ip->family, r->deny, r->n_deny, V6_EMBEDDED, 0);
  __attribute__ ((cleanup (cidr_set_free))) struct cidr_set loopback
      = cidr_set_for (ip->family, loopback_nets, N_ELEMS (loopback_nets),
                      V6_NONE, 0);

  /* The kernel has pulled the IP header into the linear area before
   * either hook (ip_rcv / ipv6_rcv, and on output it was built there), so
   * a short packet here is malformed and dropped. Twenty bytes were
   * checked already. */
  if (ip->header_len > 20)
    {
      emit (a, MOV64_REG (R_TMP, R_PKT));
      emit (a, ALU64_IMM (BPF_ADD, R_TMP, ip->header_len));
      emit_jump (a, JMP_REG (BPF_JGT, R_TMP, R_PKT_END), drop);
    }

  /* Egress mode checks the peer: the destination going out, the source
   * coming in. Ports are the sock_addr programs' business: here an
   * allowed entry or a nameserver passes whatever the port (a TCP
   * connection or UDP exchange to another port was refused at connect or
   * sendmsg already). */
  /* A routing header sends the packet on to addresses the checks below
   * never see: setsockopt(IPV6_RTHDR) takes a segment routing header
   * without any capability. Dropped in egress mode, lo included. */
  if (ip->family == AF_INET6 && kind != NETGUARD_PROG_SKB_LOOPBACK)
    {
      emit (a, LDX_MEM (BPF_B, R_WORD, R_PKT, 6));
      emit_jump (a, JMP_IMM (BPF_JEQ, R_WORD, IPPROTO_ROUTING), drop);
    }
  switch (kind)
    {
    case NETGUARD_PROG_SKB_EGRESS:
      emit_egress_decision (a, ip->family, R_PKT, ip->dst, -1, r, NULL, pass,
                            drop);
      return;
    case NETGUARD_PROG_SKB_INGRESS:
      emit_egress_decision (a, ip->family, R_PKT, ip->src, -1, r, NULL, pass,
                            drop);
      return;
    default:
      cidr_set_keep_overlapping (&deny, &loopback);
      emit_any (a, R_PKT, ip->src, -1, &deny, drop);
      emit_any (a, R_PKT, ip->dst, -1, &deny, drop);
      emit_require (a, R_PKT, ip->src, &loopback, drop);
      emit_require (a, R_PKT, ip->dst, &loopback, drop);
      break;
    }
  emit_jump (a, JA (), pass);
}

static void
emit_verdicts (struct bpf_asm *a, int pass, int drop)
{
  label_place (a, drop);
  emit (a, MOV64_IMM (R0, 0));
  emit (a, EXIT ());
  label_place (a, pass);
  emit (a, MOV64_IMM (R0, 1));
  emit (a, EXIT ());
}

/* cgroup_skb: r1 is a struct __sk_buff whose data starts at the IP header
 * in both directions (__cgroup_bpf_run_filter_skb pushes back to it). */
static void
build_skb (struct bpf_asm *a, enum netguard_prog kind,
           const struct netguard_rules *r)
{
  int pass = label_new (a), drop = label_new (a);
  int v4 = label_new (a), v6 = label_new (a);

  /* Strict mode wants the packet on lo as well as loopback addresses:
   * an address alone would let a packet with a spoofed 127.0.0.1 source
   * in through a veth wherever route_localnet is set (kube-proxy sets it),
   * and ifindex alone would pass anything a future route sent via lo. */
  if (kind == NETGUARD_PROG_SKB_LOOPBACK)
    {
      emit (a, LDX_MEM (BPF_W, R_TMP, R_CTX,
                        offsetof (struct __sk_buff, ifindex)));
      emit_jump (a, JMP_IMM (BPF_JNE, R_TMP, LOOPBACK_IFINDEX), drop);
    }

  emit (a, LDX_MEM (BPF_W, R_PKT, R_CTX, offsetof (struct __sk_buff, data)));
  emit (a, LDX_MEM (BPF_W, R_PKT_END, R_CTX,
                    offsetof (struct __sk_buff, data_end)));
  emit (a, MOV64_REG (R_TMP, R_PKT));
  emit (a, ALU64_IMM (BPF_ADD, R_TMP, 20));
  emit_jump (a, JMP_REG (BPF_JGT, R_TMP, R_PKT_END), drop);
  /* The version nibble rather than skb->protocol: it is what the header
   * offsets below depend on. Anything not IP is dropped. */
  emit (a, LDX_MEM (BPF_B, R_WORD, R_PKT, 0));
  emit (a, ALU32_IMM (BPF_RSH, R_WORD, 4));
  emit_jump (a, JMP_IMM (BPF_JEQ, R_WORD, 4), v4);
  emit_jump (a, JMP_IMM (BPF_JEQ, R_WORD, 6), v6);
  emit_jump (a, JA (), drop);

  label_place (a, v4);
  emit_skb_family (a, kind, &ipv4_layout, r, pass, drop);
  label_place (a, v6);
  emit_skb_family (a, kind, &ipv6_layout, r, pass, drop);
  emit_verdicts (a, pass, drop);
}

/* cgroup_sock_addr: r1 is a struct bpf_sock_addr; returning 0 makes the
 * connect() or sendmsg() fail with EPERM before any packet exists. */
static void
build_sock_addr (struct bpf_asm *a, int family, const struct netguard_rules *r)
{
  __attribute__ ((cleanup (cidr_set_free))) struct cidr_set deny
      = cidr_set_for (family, r->deny, r->n_deny, V6_EMBEDDED, 0);
  __attribute__ ((cleanup (cidr_set_free))) struct cidr_set allow
      = cidr_set_for (family, loopback_or_any, N_ELEMS (loopback_or_any),
                      V6_MAPPED, 0);
  int pass = label_new (a), drop = label_new (a);
  int off = family == AF_INET ? (int)offsetof (struct bpf_sock_addr, user_ip4)
                              : (int)offsetof (struct bpf_sock_addr, user_ip6);
  int port_off = (int)offsetof (struct bpf_sock_addr, user_port);

  if (r->egress)
    emit_egress_decision (a, family, R_CTX, off, port_off, r, &allow, pass,
                          drop);
  else
    {
      cidr_set_keep_overlapping (&deny, &allow);
      emit_any (a, R_CTX, off, -1, &deny, drop);
      emit_require (a, R_CTX, off, &allow, drop);
      emit_jump (a, JA (), pass);
    }
  emit_verdicts (a, pass, drop);
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
                    struct bpf_insn **ret, size_t *ret_n,
                    struct moat_error **err)
{
  struct bpf_asm a = { .reachable = true };
  int rc = netguard_rules_check (r, err);

  if (rc < 0)
    return rc;
  switch (kind)
    {
    case NETGUARD_PROG_SKB_LOOPBACK:
    case NETGUARD_PROG_SKB_EGRESS:
    case NETGUARD_PROG_SKB_INGRESS:
      build_skb (&a, kind, r);
      break;
    case NETGUARD_PROG_CONNECT4:
    case NETGUARD_PROG_SENDMSG4:
      build_sock_addr (&a, AF_INET, r);
      break;
    case NETGUARD_PROG_CONNECT6:
    case NETGUARD_PROG_SENDMSG6:
      build_sock_addr (&a, AF_INET6, r);
      break;
    default:
      return moat_fail (err, EINVAL, "unknown netguard program %d", kind);
    }
  rc = asm_finish (&a, err);
  if (rc < 0)
    {
      asm_free (&a);
      return rc;
    }
  *ret = steal_pointer (&a.insns);
  *ret_n = a.n;
  asm_free (&a);
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
                   int *ret_fd, struct moat_error **err)
{
  const struct prog_kind_info *info;
  cleanup_free struct bpf_insn *insns = NULL;
  size_t n;
  int rc;

  if ((unsigned)kind >= N_ELEMS (kind_info))
    return moat_fail (err, EINVAL, "unknown netguard program %d", kind);
  info = &kind_info[kind];
  rc = netguard_bpf_build (kind, r, &insns, &n, err);
  if (rc < 0)
    return rc;
  return bpf_prog_load (info->type, info->expected, info->name, insns, n,
                        ret_fd, err);
}
