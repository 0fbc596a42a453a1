/* The skb programs on crafted packets (BPF_PROG_TEST_RUN): shared by
 * test_netguard.c and test_netguard_lists.c. Include after
 * netguard_harness.h. */
#ifndef MOAT_TEST_NETGUARD_SKB_H
#define MOAT_TEST_NETGUARD_SKB_H

#include <stddef.h>

/* The IPv6 next header of the packets run_skb makes (UDP unless a test
 * sets another). */
static uint8_t skb_ip6_next = 17;

/* Run the program on an Ethernet frame holding an IP header of FAMILY
 * with these addresses (4 or 16 bytes, network order), arriving on
 * ifindex. */
static int __attribute__ ((unused))
run_skb_bytes (int prog_fd, int family, const uint8_t *src, const uint8_t *dst,
               int ifindex)
{
  uint8_t pkt[ETH_HLEN + 40 + 8] = { 0 };
  struct __sk_buff ctx = { .ifindex = (uint32_t)ifindex };
  union bpf_attr attr;
  bool v6 = family == AF_INET6;
  uint8_t *ip = pkt + ETH_HLEN;
  size_t len;

  pkt[12] = v6 ? 0x86 : 0x08;
  pkt[13] = v6 ? 0xdd : 0x00;
  if (v6)
    {
      ip[0] = 0x60;
      ip[6] = skb_ip6_next;
      ip[7] = 64;
      memcpy (ip + 8, src, 16);
      memcpy (ip + 24, dst, 16);
      len = ETH_HLEN + 40 + 8;
    }
  else
    {
      ip[0] = 0x45;
      ip[3] = 28;
      ip[8] = 64;
      ip[9] = 17;
      memcpy (ip + 12, src, 4);
      memcpy (ip + 16, dst, 4);
      len = ETH_HLEN + 28;
    }
  memset (&attr, 0, sizeof (attr));
  attr.test.prog_fd = (uint32_t)prog_fd;
  attr.test.data_in = (uint64_t)(uintptr_t)pkt;
  attr.test.data_size_in = (uint32_t)len;
  attr.test.ctx_in = (uint64_t)(uintptr_t)&ctx;
  attr.test.ctx_size_in = sizeof (ctx);
  if (bpf_sys (BPF_PROG_TEST_RUN, &attr) < 0)
    fail_msg ("BPF_PROG_TEST_RUN: %m");
  return (int)attr.test.retval;
}

/* The same with addresses as text (family from the text). */
static int __attribute__ ((unused))
run_skb (int prog_fd, const char *src, const char *dst, int ifindex)
{
  uint8_t s[16], d[16];
  int family = strchr (src, ':') ? AF_INET6 : AF_INET;

  assert_int_equal (inet_pton (family, src, s), 1);
  assert_int_equal (inet_pton (family, dst, d), 1);
  return run_skb_bytes (prog_fd, family, s, d, ifindex);
}

/* Can this kernel test-run a cgroup_skb program on a packet it can read?
 * Older kernels (Debian 12's 6.1) compute the packet pointers (data,
 * data_end) in BPF_PROG_TEST_RUN only for the tc and lwt program types: a
 * cgroup_skb program sees an empty packet there, and every packet case
 * would "fail". Probed with a program of our own that passes a packet
 * iff it can read its first byte, not with the program under test. */
static bool
skb_test_run_usable (void)
{
  static int usable = -1;
  const struct bpf_insn probe[] = {
    { .code = BPF_LDX | BPF_MEM | BPF_W,
      .dst_reg = 2,
      .src_reg = 1,
      .off = offsetof (struct __sk_buff, data) },
    { .code = BPF_LDX | BPF_MEM | BPF_W,
      .dst_reg = 3,
      .src_reg = 1,
      .off = offsetof (struct __sk_buff, data_end) },
    { .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 4, .src_reg = 2 },
    { .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 4, .imm = 1 },
    { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
    { .code = BPF_JMP | BPF_JGT | BPF_X, .dst_reg = 4, .src_reg = 3, .off = 1 },
    { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 1 },
    { .code = BPF_JMP | BPF_EXIT },
  };
  static const char license[] = "GPL";
  uint8_t pkt[ETH_HLEN + 28] = { [12] = 0x08, [ETH_HLEN] = 0x45 };
  union bpf_attr attr;
  int fd;

  if (usable >= 0)
    return usable;
  memset (&attr, 0, sizeof (attr));
  attr.prog_type = BPF_PROG_TYPE_CGROUP_SKB;
  attr.insns = (uint64_t)(uintptr_t)probe;
  attr.insn_cnt = sizeof (probe) / sizeof (probe[0]);
  attr.license = (uint64_t)(uintptr_t)license;
  fd = (int)bpf_sys (BPF_PROG_LOAD, &attr);
  if (fd < 0)
    fail_msg ("loading the cgroup_skb probe: %m");
  memset (&attr, 0, sizeof (attr));
  attr.test.prog_fd = (uint32_t)fd;
  attr.test.data_in = (uint64_t)(uintptr_t)pkt;
  attr.test.data_size_in = sizeof (pkt);
  usable = bpf_sys (BPF_PROG_TEST_RUN, &attr) == 0 && attr.test.retval == 1;
  close (fd);
  if (!usable)
    fprintf (stderr,
             "SKIP: this kernel's BPF_PROG_TEST_RUN gives cgroup_skb "
             "programs no packet data (older kernels): the packet cases "
             "are not run here; real traffic through the guard is tested "
             "by test_netguard_net and tests/bats/profile/g01-network.bats\n");
  return usable;
}

/* Some device other than lo in this namespace, for "not on lo". */
static int __attribute__ ((unused)) other_ifindex (void)
{
  struct if_nameindex *ifs = if_nameindex ();
  int found = 0;
  for (size_t i = 0; ifs && ifs[i].if_index; i++)
    if (ifs[i].if_index != 1)
      found = (int)ifs[i].if_index;
  if_freenameindex (ifs);
  return found;
}

/* One packet through a program: addresses, the device (ON_OTHER: some
 * device that is not lo), and the verdict wanted. */
#define ON_OTHER (-1)
struct packet_case
{
  const char *src, *dst;
  int ifindex;
  int want;
};

static void __attribute__ ((unused))
check_packets (int fd, const struct packet_case *cases, size_t n)
{
  if (!skb_test_run_usable ())
    {
      close (fd);
      return;
    }
  int other = other_ifindex ();
  for (size_t i = 0; i < n; i++)
    {
      int ifindex = cases[i].ifindex == ON_OTHER ? other : cases[i].ifindex;
      if (ifindex <= 0)
        continue;
      if (run_skb (fd, cases[i].src, cases[i].dst, ifindex) != cases[i].want)
        fail_msg ("%s -> %s on %d: not %s", cases[i].src, cases[i].dst, ifindex,
                  cases[i].want ? "passed" : "dropped");
    }
  close (fd);
}

#define CHECK_PACKETS(fd, cases)                                               \
  check_packets (fd, cases, sizeof (cases) / sizeof (cases[0]))

#endif
