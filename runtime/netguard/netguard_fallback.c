/* G1/G2 where no cgroup v2 hierarchy exists: plain rtnetlink (no libnl) in
 * the container's network namespace. Strict mode deletes every link but lo
 * (those the kernel will not delete are set down) and prohibits every
 * destination; every mode prohibits the denied CIDRs.
 *
 * The prohibitions are policy rules ("ip rule add to CIDR prohibit"), not
 * routes: a rule sits between the local table and main, so no route the
 * engine or a CNI plugin adds later, however specific, can lead around it,
 * while the container's own addresses (local table) stay reachable. Where
 * the kernel has no policy routing, prohibit routes in main are the
 * next best thing. */
#include "netguard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/fib_rules.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "netguard_bpf.h"
#include "../../lib/util.h"

/* Just after the local table's rule (0), before main (32766): the denied
 * ranges first, then egress mode's allowed entries and nameservers (which
 * look up main), then the private ranges or, for an allowlist, all. */
#define PROHIBIT_RULE_PRIORITY 1
#define ALLOW_RULE_PRIORITY 2
#define REST_RULE_PRIORITY 3

struct nl_request
{
  struct nlmsghdr h;
  union
  {
    struct ifinfomsg ifi;
    struct rtmsg rt;
    struct fib_rule_hdr rule;
  } body;
  char attrs[64];
};

struct link_info
{
  int index;
  unsigned flags;
  char name[IFNAMSIZ];
};

static void
nl_init (struct nl_request *req, int type, int flags, size_t body_len)
{
  memset (req, 0, sizeof (*req));
  req->h.nlmsg_len = NLMSG_LENGTH (body_len);
  req->h.nlmsg_type = (uint16_t)type;
  req->h.nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
}

static void
nl_add_attr (struct nl_request *req, int type, const void *data, size_t len)
{
  struct rtattr *rta
      = (struct rtattr *)((char *)req + NLMSG_ALIGN (req->h.nlmsg_len));
  size_t total = NLMSG_ALIGN (req->h.nlmsg_len) + RTA_SPACE (len);

  /* Requests here carry at most one address and one u32. */
  if (total > sizeof (*req))
    abort ();
  rta->rta_type = (unsigned short)type;
  rta->rta_len = (unsigned short)RTA_LENGTH (len);
  memcpy (RTA_DATA (rta), data, len);
  req->h.nlmsg_len = (uint32_t)total;
}

/* Send one request and wait for its acknowledgement: 0 or -errno. */
static int
nl_transact (int fd, struct nl_request *req)
{
  static uint32_t seq;
  char buf[4096] __attribute__ ((aligned (NLMSG_ALIGNTO)));

  req->h.nlmsg_seq = ++seq;
  req->h.nlmsg_flags |= NLM_F_ACK;
  if (send (fd, req, req->h.nlmsg_len, 0) < 0)
    return -errno;
  for (;;)
    {
      ssize_t len = recv (fd, buf, sizeof (buf), 0);
      if (len < 0)
        {
          if (errno == EINTR)
            continue;
          return -errno;
        }
      for (struct nlmsghdr *h = (struct nlmsghdr *)buf;
           NLMSG_OK (h, (size_t)len); h = NLMSG_NEXT (h, len))
        if (h->nlmsg_seq == req->h.nlmsg_seq && h->nlmsg_type == NLMSG_ERROR)
          return ((struct nlmsgerr *)NLMSG_DATA (h))->error;
    }
}

static void
parse_link (struct nlmsghdr *h, struct link_info *ret)
{
  struct ifinfomsg *ifi = NLMSG_DATA (h);
  int len = (int)IFLA_PAYLOAD (h);

  memset (ret, 0, sizeof (*ret));
  ret->index = ifi->ifi_index;
  ret->flags = ifi->ifi_flags;
  for (struct rtattr *a = IFLA_RTA (ifi); RTA_OK (a, len);
       a = RTA_NEXT (a, len))
    if (a->rta_type == IFLA_IFNAME)
      snprintf (ret->name, sizeof (ret->name), "%.*s", (int)RTA_PAYLOAD (a),
                (const char *)RTA_DATA (a));
}

/* Dump every object of TYPE (RTM_GETLINK, RTM_GETRULE: every family) and
 * hand each answer of type ANSWER to EACH. */
static int
nl_dump (int fd, int type, size_t body_len, int answer,
         void (*each) (struct nlmsghdr *, void *), void *ctx, const char *what,
         struct moat_error **err)
{
  char buf[16384] __attribute__ ((aligned (NLMSG_ALIGNTO)));
  struct nl_request req;

  nl_init (&req, type, NLM_F_DUMP, body_len);
  req.h.nlmsg_seq = 1;
  if (send (fd, &req, req.h.nlmsg_len, 0) < 0)
    return moat_fail (err, errno, "rtnetlink: listing %s", what);
  for (;;)
    {
      ssize_t len = recv (fd, buf, sizeof (buf), 0);
      if (len < 0)
        {
          if (errno == EINTR)
            continue;
          return moat_fail (err, errno, "rtnetlink: reading %s", what);
        }
      for (struct nlmsghdr *h = (struct nlmsghdr *)buf;
           NLMSG_OK (h, (size_t)len); h = NLMSG_NEXT (h, len))
        {
          if (h->nlmsg_type == NLMSG_DONE)
            return 0;
          if (h->nlmsg_type == NLMSG_ERROR)
            return moat_fail (err, -((struct nlmsgerr *)NLMSG_DATA (h))->error,
                              "rtnetlink: listing %s", what);
          if (h->nlmsg_type == answer)
            each (h, ctx);
        }
    }
}

struct link_list
{
  struct link_info *v;
  size_t n;
};

static void
link_list_add (struct nlmsghdr *h, void *ctx)
{
  struct link_list *l = ctx;
  l->v = xrealloc (l->v, (l->n + 1) * sizeof (*l->v));
  parse_link (h, &l->v[l->n++]);
}

static int
list_links (int fd, struct link_info **ret, size_t *ret_n,
            struct moat_error **err)
{
  struct link_list l = { 0 };
  int rc = nl_dump (fd, RTM_GETLINK, sizeof (struct ifinfomsg), RTM_NEWLINK,
                    link_list_add, &l, "links", err);

  if (rc < 0)
    {
      free (l.v);
      return rc;
    }
  *ret = l.v;
  *ret_n = l.n;
  return 0;
}

static int
set_link_down (int fd, int index)
{
  struct nl_request req;
  nl_init (&req, RTM_NEWLINK, 0, sizeof (struct ifinfomsg));
  req.body.ifi.ifi_family = AF_UNSPEC;
  req.body.ifi.ifi_index = index;
  req.body.ifi.ifi_change = IFF_UP;
  req.body.ifi.ifi_flags = 0;
  return nl_transact (fd, &req);
}

static int
remove_links (int fd, struct moat_error **err)
{
  cleanup_free struct link_info *links = NULL;
  size_t n = 0;
  int rc;

  rc = list_links (fd, &links, &n, err);
  if (rc < 0)
    return rc;
  for (size_t i = 0; i < n; i++)
    {
      struct nl_request req;
      if (links[i].flags & IFF_LOOPBACK)
        continue;
      nl_init (&req, RTM_DELLINK, 0, sizeof (struct ifinfomsg));
      req.body.ifi.ifi_family = AF_UNSPEC;
      req.body.ifi.ifi_index = links[i].index;
      rc = nl_transact (fd, &req);
      /* ENODEV: went with a peer deleted before it. Devices without
       * rtnl_link_ops (a physical NIC moved in) cannot be deleted: down
       * they carry nothing, and the container cannot bring them up. */
      if (rc == -EOPNOTSUPP)
        rc = set_link_down (fd, links[i].index);
      if (rc < 0 && rc != -ENODEV)
        return moat_fail (err, -rc, "removing link %s", links[i].name);
    }

  /* Check the result rather than trust it: the fallback tunnel devices
   * (sit0, tunl0 ...) "delete" successfully and stay, down. */
  free (steal_pointer (&links));
  rc = list_links (fd, &links, &n, err);
  if (rc < 0)
    return rc;
  for (size_t i = 0; i < n; i++)
    if (!(links[i].flags & IFF_LOOPBACK) && (links[i].flags & IFF_UP))
      return moat_fail (err, EBUSY, "link %s is still up", links[i].name);
  return 0;
}

/* "ip rule add to C [ipproto P dport N] prohibit|lookup main priority". */
static int
add_rule (int fd, const struct cidr *c, uint8_t action, uint32_t priority,
          uint8_t proto)
{
  struct nl_request req;

  nl_init (&req, RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL,
           sizeof (struct fib_rule_hdr));
  req.body.rule.family = (uint8_t)c->family;
  req.body.rule.dst_len = c->prefix;
  req.body.rule.action = action;
  if (action == FR_ACT_TO_TBL)
    req.body.rule.table = RT_TABLE_MAIN;
  if (c->prefix > 0)
    nl_add_attr (&req, FRA_DST, c->addr, c->family == AF_INET ? 4 : 16);
  nl_add_attr (&req, FRA_PRIORITY, &priority, sizeof (priority));
  if (proto)
    {
      /* Rule port matches are 4.17's, as are cgroup v2 everywhere. */
      struct fib_rule_port_range port = { c->port, c->port };
      nl_add_attr (&req, FRA_IP_PROTO, &proto, sizeof (proto));
      nl_add_attr (&req, FRA_DPORT_RANGE, &port, sizeof (port));
    }
  return nl_transact (fd, &req);
}

static int
add_prohibit_rule (int fd, const struct cidr *c, uint32_t priority)
{
  return add_rule (fd, c, FR_ACT_PROHIBIT, priority, 0);
}

static int
add_prohibit_route (int fd, const struct cidr *c)
{
  struct nl_request req;

  /* REPLACE: a route to exactly this prefix must not survive. */
  nl_init (&req, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE,
           sizeof (struct rtmsg));
  req.body.rt.rtm_family = (uint8_t)c->family;
  req.body.rt.rtm_dst_len = c->prefix;
  req.body.rt.rtm_table = RT_TABLE_MAIN;
  req.body.rt.rtm_protocol = RTPROT_STATIC;
  req.body.rt.rtm_scope = RT_SCOPE_UNIVERSE;
  req.body.rt.rtm_type = RTN_PROHIBIT;
  if (c->prefix > 0)
    nl_add_attr (&req, RTA_DST, c->addr, c->family == AF_INET ? 4 : 16);
  return nl_transact (fd, &req);
}

static int
prohibit_at (int fd, const struct cidr *c, uint32_t priority,
             struct moat_error **err)
{
  int rc = add_prohibit_rule (fd, c, priority);

  if (rc == -EEXIST)
    return 0;
  if (rc == -EAFNOSUPPORT || rc == -EOPNOTSUPP)
    rc = add_prohibit_route (fd, c);
  /* No IPv6 in this kernel at all: nothing to reach over it either. */
  if (rc == -EAFNOSUPPORT && c->family == AF_INET6)
    return 0;
  if (rc < 0)
    {
      char addr[INET6_ADDRSTRLEN] = "?";
      inet_ntop (c->family, c->addr, addr, sizeof (addr));
      return moat_fail (err, -rc, "prohibiting %s/%u", addr, c->prefix);
    }
  return 0;
}

static int
prohibit (int fd, const struct cidr *c, struct moat_error **err)
{
  return prohibit_at (fd, c, PROHIBIT_RULE_PRIORITY, err);
}

/* An IPv4 entry and its IPv6 embeddings. */
static int
prohibit_all_forms (int fd, const struct cidr *c, uint32_t priority,
                    struct moat_error **err)
{
  struct cidr e[CIDR_V6_EMBEDDINGS];
  int rc = prohibit_at (fd, c, priority, err);

  if (rc < 0 || c->family != AF_INET)
    return rc;
  cidr_v6_embeddings (c, e);
  for (int k = 0; k < CIDR_V6_EMBEDDINGS && rc == 0; k++)
    rc = prohibit_at (fd, &e[k], priority, err);
  return rc;
}

/* A policy rule at one of the guard's priorities: "to C [ipproto PROTO
 * dport C.port]". */
struct guard_rule
{
  struct cidr c;
  uint8_t proto;
  uint32_t priority;
};

struct rule_list
{
  struct guard_rule *v;
  size_t n;
  bool ipv6; /* the namespace has IPv6 policy rules at all */
};

static void
rule_list_free (struct rule_list *l)
{
  free (l->v);
}

static void
rule_list_add (struct rule_list *l, const struct cidr *c, uint8_t proto,
               uint32_t priority)
{
  l->v = xrealloc (l->v, (l->n + 1) * sizeof (*l->v));
  l->v[l->n++]
      = (struct guard_rule){ .c = *c, .proto = proto, .priority = priority };
}

static bool
rule_list_has (const struct rule_list *l, const struct guard_rule *r)
{
  for (size_t i = 0; i < l->n; i++)
    {
      const struct guard_rule *x = &l->v[i];
      if (x->priority == r->priority && x->proto == r->proto
          && x->c.port == r->c.port && cidr_contains (&x->c, &r->c)
          && cidr_contains (&r->c, &x->c))
        return true;
    }
  return false;
}

/* Keep the rules of a dump at the guard's priorities. */
static void
rule_list_add_dumped (struct nlmsghdr *h, void *ctx)
{
  struct rule_list *l = ctx;
  struct fib_rule_hdr *frh = NLMSG_DATA (h);
  int len = (int)(h->nlmsg_len - NLMSG_LENGTH (sizeof (*frh)));
  struct cidr c = { .family = frh->family, .prefix = frh->dst_len };
  uint32_t priority = 0;
  uint8_t proto = 0;

  l->ipv6 |= frh->family == AF_INET6;
  for (struct rtattr *a
       = (struct rtattr *)((char *)frh + NLMSG_ALIGN (sizeof (*frh)));
       RTA_OK (a, len); a = RTA_NEXT (a, len))
    if (a->rta_type == FRA_DST && RTA_PAYLOAD (a) <= sizeof (c.addr))
      memcpy (c.addr, RTA_DATA (a), RTA_PAYLOAD (a));
    else if (a->rta_type == FRA_PRIORITY && RTA_PAYLOAD (a) == 4)
      memcpy (&priority, RTA_DATA (a), 4);
    else if (a->rta_type == FRA_IP_PROTO && RTA_PAYLOAD (a) == 1)
      proto = *(uint8_t *)RTA_DATA (a);
    else if (a->rta_type == FRA_DPORT_RANGE
             && RTA_PAYLOAD (a) == sizeof (struct fib_rule_port_range))
      c.port = ((struct fib_rule_port_range *)RTA_DATA (a))->start;
  if (priority >= PROHIBIT_RULE_PRIORITY && priority <= REST_RULE_PRIORITY)
    rule_list_add (l, &c, proto, priority);
}

/* Egress mode's "lookup main" rules: the allowed entries and the
 * nameservers on 53. Routing sees no ports: an entry with one gets a rule
 * per protocol that matches it (TCP and UDP). */
static void
allow_rules (const struct netguard_rules *r, struct rule_list *ret)
{
  for (size_t i = 0; i < r->n_allow + r->n_dns; i++)
    {
      struct cidr c = i < r->n_allow ? r->allow[i] : r->dns[i - r->n_allow];
      if (i >= r->n_allow)
        c.port = 53;
      if (c.port == 0)
        rule_list_add (ret, &c, 0, ALLOW_RULE_PRIORITY);
      else
        {
          rule_list_add (ret, &c, IPPROTO_TCP, ALLOW_RULE_PRIORITY);
          rule_list_add (ret, &c, IPPROTO_UDP, ALLOW_RULE_PRIORITY);
        }
    }
}

/* The rules hold for the whole network namespace and outlive the
 * container (a namespace joined by path is the engine's or the pod's):
 * another container's allowances there would let this one through, and
 * this one's would open the others. So where a guard's rules are there
 * already, they must allow exactly what this container's would. */
static int
check_shared_allowances (int fd, const struct rule_list *want,
                         struct moat_error **err)
{
  __attribute__ ((cleanup (rule_list_free))) struct rule_list have = { 0 };
  const char *why = "the fallback's policy rules hold for the whole "
                    "namespace: containers of other egress settings need "
                    "cgroup v2 to share one";
  int rc = nl_dump (fd, RTM_GETRULE, sizeof (struct fib_rule_hdr), RTM_NEWRULE,
                    rule_list_add_dumped, &have, "policy rules", err);

  if (rc < 0 || have.n == 0)
    return rc;
  for (size_t i = 0; i < have.n; i++)
    if (have.v[i].priority == ALLOW_RULE_PRIORITY
        && !rule_list_has (want, &have.v[i]))
      {
        cleanup_free char *text = cidr_to_string (&have.v[i].c);
        return moat_fail (err, 0,
                          "the network namespace already lets %s through, "
                          "which this container may not reach (%s)",
                          text, why);
      }
  for (size_t i = 0; i < want->n; i++)
    if ((want->v[i].c.family == AF_INET || have.ipv6)
        && !rule_list_has (&have, &want->v[i]))
      {
        cleanup_free char *text = cidr_to_string (&want->v[i].c);
        return moat_fail (err, 0,
                          "allowing %s would open it to the other "
                          "containers of this network namespace, whose "
                          "guard does not allow it (%s)",
                          text, why);
      }
  return 0;
}

static int
guard_egress (int fd, const struct netguard_rules *r,
              const struct rule_list *allow, struct moat_error **err)
{
  static const struct cidr everything[]
      = { { .family = AF_INET }, { .family = AF_INET6 } };
  int rc = 0;

  for (size_t i = 0; i < allow->n && rc == 0; i++)
    {
      const struct guard_rule *a = &allow->v[i];
      rc = add_rule (fd, &a->c, FR_ACT_TO_TBL, a->priority, a->proto);
      if (rc == -EEXIST || (rc == -EAFNOSUPPORT && a->c.family == AF_INET6))
        rc = 0;
      else if (rc < 0)
        {
          cleanup_free char *text = cidr_to_string (&a->c);
          return moat_fail (err, -rc, "allowing %s", text);
        }
    }
  if (r->allowlist)
    for (size_t i = 0; i < 2 && rc == 0; i++)
      rc = prohibit_at (fd, &everything[i], REST_RULE_PRIORITY, err);
  for (size_t i = 0; i < r->n_private && rc == 0; i++)
    rc = prohibit_all_forms (fd, &r->private_nets[i], REST_RULE_PRIORITY, err);
  return rc;
}

static int
guard_this_netns (const struct netguard_rules *r, struct moat_error **err)
{
  static const struct cidr everything[]
      = { { .family = AF_INET }, { .family = AF_INET6 } };
  cleanup_close int fd
      = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  __attribute__ ((cleanup (rule_list_free))) struct rule_list allow = { 0 };
  int rc;

  if (fd < 0)
    return moat_fail (err, errno, "rtnetlink socket");
  if (r->egress)
    {
      /* Before anything changes: a refusal leaves the namespace as it was. */
      allow_rules (r, &allow);
      rc = check_shared_allowances (fd, &allow, err);
      if (rc < 0)
        return rc;
    }
  else
    {
      rc = remove_links (fd, err);
      if (rc < 0)
        return rc;
      for (size_t i = 0; i < 2; i++)
        if ((rc = prohibit (fd, &everything[i], err)) < 0)
          return rc;
    }
  for (size_t i = 0; i < r->n_deny; i++)
    if ((rc = prohibit_all_forms (fd, &r->deny[i], PROHIBIT_RULE_PRIORITY, err))
        < 0)
      return rc;
  return r->egress ? guard_egress (fd, r, &allow, err) : 0;
}

static bool
same_ns (const struct stat *a, const char *path)
{
  struct stat b;
  return stat (path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/* In a child, so that the caller never leaves its own namespace. */
static void __attribute__ ((noreturn))
fallback_child (int nsfd, int report_fd, const struct netguard_rules *r)
{
  cleanup_error struct moat_error *err = NULL;
  int rc;

  if (setns (nsfd, CLONE_NEWNET) < 0)
    rc = moat_fail (&err, errno, "entering the network namespace");
  else
    rc = guard_this_netns (r, &err);
  if (rc < 0)
    {
      cleanup_free char *msg
          = xasprintf ("%d\n%s", err ? err->errnum : 0,
                       err && err->msg ? err->msg : "failed");
      (void)write_all (report_fd, msg, strlen (msg));
      _exit (1);
    }
  _exit (0);
}

static int
child_result (pid_t pid, int report_fd, struct moat_error **err)
{
  char buf[1024];
  size_t len = 0;
  int status, errnum = 0;
  char *msg;

  for (;;)
    {
      ssize_t n = read (report_fd, buf + len, sizeof (buf) - 1 - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      len += (size_t)n;
      if (len == sizeof (buf) - 1)
        break;
    }
  buf[len] = '\0';
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return moat_fail (err, errno, "waiting for the network guard child");
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;

  msg = strchr (buf, '\n');
  if (msg == NULL
      || parse_int (strndupa (buf, (size_t)(msg - buf)), &errnum) < 0)
    return moat_fail (err, EIO, "network guard child failed");
  /* The child's message already ends in strerror(errnum). */
  moat_fail (err, 0, "%s", msg + 1);
  if (err && *err)
    (*err)->errnum = errnum;
  return errnum > 0 ? -errnum : -1;
}

int
netguard_fallback_check (const struct netguard_rules *r,
                         struct moat_error **err)
{
  if (netguard_rules_check (r, err) < 0)
    return -1;
  if (r->n_deny + r->n_allow > NETGUARD_FALLBACK_MAX_ENTRIES)
    return moat_fail (err, E2BIG,
                      "the fallback without cgroup BPF takes at most %d "
                      "denied and allowed CIDRs (one policy rule each), "
                      "not %zu",
                      NETGUARD_FALLBACK_MAX_ENTRIES, r->n_deny + r->n_allow);
  return 0;
}

int
netguard_fallback_ns (int nsfd, pid_t pid, const struct netguard_rules *r,
                      struct moat_error **err)
{
  cleanup_close int report_read = -1, report_write = -1;
  struct stat st;
  int pipefd[2];
  pid_t child;

  /* Checked before anything changes: a bad entry must not leave a
   * namespace with its links gone but its prohibitions half made. */
  if (netguard_fallback_check (r, err) < 0)
    return moat_error_wrap (err, "network guard");
  if (fstat (nsfd, &st) < 0)
    return moat_fail (err, errno, "the network namespace of pid %d", (int)pid);
  /* Deleting links in the wrong namespace would take the host off the
   * network: refuse ours and init's outright. */
  if (same_ns (&st, "/proc/self/ns/net") || same_ns (&st, "/proc/1/ns/net"))
    return moat_fail (err, EINVAL,
                      "network guard: pid %d shares the host's network "
                      "namespace",
                      (int)pid);

  /* Two starts in one joined namespace must not both find it unguarded
   * (or guarded alike) and then both add rules: one at a time, from the
   * check to the last rule. The lock is on the namespace's own inode, so
   * it needs no file of ours and goes with the last fd. */
  while (flock (nsfd, LOCK_EX) < 0)
    if (errno != EINTR)
      return moat_fail (err, errno, "locking the network namespace");
  if (pipe2 (pipefd, O_CLOEXEC) < 0)
    return moat_fail (err, errno, "pipe");
  report_read = pipefd[0];
  report_write = pipefd[1];
  child = fork ();
  if (child < 0)
    return moat_fail (err, errno, "fork");
  if (child == 0)
    fallback_child (nsfd, report_write, r);
  close (steal_fd (&report_write));
  return child_result (child, report_read, err);
}
