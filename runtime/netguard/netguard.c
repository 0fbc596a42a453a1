/* G1/G2 through cgroup BPF: which programs go on which hooks, and
 * bringing lo up (CIDRs are parsed in cidr.c). The programs themselves are
 * assembled in netguard_bpf.c; the no-cgroup2 fallback lives in
 * netguard_fallback.c. */
#include "netguard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../bpf/bpf.h"
#include "netguard_share.h"
#include "../../lib/util.h"

struct attach_step
{
  enum netguard_prog prog;
  enum bpf_attach_type hook;
  const char *hook_name;
};

/* Strict mode shares one skb program between both directions. */
static const struct attach_step strict_steps[] = {
  { NETGUARD_PROG_SKB_LOOPBACK, BPF_CGROUP_INET_INGRESS, "inet ingress" },
  { NETGUARD_PROG_SKB_LOOPBACK, BPF_CGROUP_INET_EGRESS, "inet egress" },
  { NETGUARD_PROG_CONNECT4, BPF_CGROUP_INET4_CONNECT, "connect4" },
  { NETGUARD_PROG_CONNECT6, BPF_CGROUP_INET6_CONNECT, "connect6" },
  { NETGUARD_PROG_SENDMSG4, BPF_CGROUP_UDP4_SENDMSG, "sendmsg4" },
  { NETGUARD_PROG_SENDMSG6, BPF_CGROUP_UDP6_SENDMSG, "sendmsg6" },
};

static const struct attach_step egress_steps[] = {
  { NETGUARD_PROG_SKB_INGRESS, BPF_CGROUP_INET_INGRESS, "inet ingress" },
  { NETGUARD_PROG_SKB_EGRESS, BPF_CGROUP_INET_EGRESS, "inet egress" },
  { NETGUARD_PROG_CONNECT4, BPF_CGROUP_INET4_CONNECT, "connect4" },
  { NETGUARD_PROG_CONNECT6, BPF_CGROUP_INET6_CONNECT, "connect6" },
  { NETGUARD_PROG_SENDMSG4, BPF_CGROUP_UDP4_SENDMSG, "sendmsg4" },
  { NETGUARD_PROG_SENDMSG6, BPF_CGROUP_UDP6_SENDMSG, "sendmsg6" },
};

#define N_STEPS (sizeof (strict_steps) / sizeof (strict_steps[0]))
_Static_assert(sizeof (egress_steps) == sizeof (strict_steps),
               "both modes attach the same hooks");

/* The cgroup's id: its inode number in the cgroup2 filesystem. */
int
netguard_cgroup_id (int cgroup_fd, uint64_t *ret)
{
  struct stat st;
  if (fstat (cgroup_fd, &st) < 0)
    return -errno;
  *ret = (uint64_t)st.st_ino;
  return 0;
}

static int
netguard_counts_own (int cgroup_fd, int counts_fd)
{
  struct netguard_counts value = { 0 };
  uint64_t id;
  int r = netguard_cgroup_id (cgroup_fd, &id);

  if (r < 0)
    return r;
  value.cgroup_id = id;
  return bpf_map_update (counts_fd, &id, &value);
}

int
netguard_attach (int cgroup_fd, const struct netguard_rules *r,
                 const char *pin_dir, struct moat_error **err)
{
  __attribute__ ((cleanup (netguard_progs_close))) struct netguard_progs progs;
  const struct attach_step *steps = r->egress ? egress_steps : strict_steps;
  bool shared;
  size_t attached;
  int rc = 0;

  for (int i = 0; i < NETGUARD_N_PROGS; i++)
    progs.fd[i] = -1;
  progs.counts = -1;
  if (cgroup_fd < 0)
    return moat_fail (err, EINVAL, "network guard: no cgroup v2 directory");
  if (netguard_progs_get (r, pin_dir, &progs, &shared, err) < 0)
    return moat_error_wrap (err, "network guard");

  for (attached = 0; attached < N_STEPS; attached++)
    {
      const struct attach_step *s = &steps[attached];
      /* ALLOW_MULTI: the engine's or systemd's own programs on this
       * cgroup or its parents keep running, and all of them must pass a
       * packet. */
      rc = bpf_cgroup_attach (cgroup_fd, progs.fd[s->prog], s->hook);
      if (rc < 0)
        {
          moat_fail (err, -rc, "attaching the %s program to the cgroup",
                     s->hook_name);
          break;
        }
    }
  /* The counters exist now (the attachments made them): tell them whose
   * they are, before any process of the container runs. */
  if (rc == 0 && (rc = netguard_counts_own (cgroup_fd, progs.counts)) < 0)
    moat_fail (err, -rc, "naming the network guard's counters");
  if (rc < 0)
    {
      /* Half a guard is worse than a clear failure: take ours off again. */
      while (attached-- > 0)
        (void)bpf_cgroup_detach (cgroup_fd, progs.fd[steps[attached].prog],
                                 steps[attached].hook);
      return moat_error_wrap (err, "network guard");
    }
  /* The attachments hold the programs, and the programs the maps, until
   * the cgroup goes: the fds close here with the cleanup. */
  return 0;
}

int
netguard_loopback_up (struct moat_error **err)
{
  cleanup_close int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct ifreq ifr;

  if (fd < 0)
    return moat_fail (err, errno, "socket for bringing lo up");
  memset (&ifr, 0, sizeof (ifr));
  strcpy (ifr.ifr_name, "lo");
  if (ioctl (fd, SIOCGIFFLAGS, &ifr) < 0)
    return moat_fail (err, errno, "reading the flags of lo");
  if (ifr.ifr_flags & IFF_UP)
    return 0;
  ifr.ifr_flags |= IFF_UP;
  if (ioctl (fd, SIOCSIFFLAGS, &ifr) < 0)
    return moat_fail (err, errno, "bringing lo up");
  return 0;
}
