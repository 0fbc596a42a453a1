/* Refused syscalls counted by name (seccomp_refusals.h). libseccomp's
 * header first: seccomp.h defines a seccomp_load macro. */
#include <seccomp.h>

#include "seccomp_refusals.h"

#include <errno.h>
#include <linux/filter.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../lib/util.h"
#include "../../oci/json.h"
#include "../../lib/fdpass.h"

int
seccomp_refusals_open (struct seccomp_refusals *r, struct moat_error **err)
{
  int sv[2];

  memset (r, 0, sizeof (*r));
  r->sock = r->child_sock = r->listener = -1;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return moat_fail (err, errno, "seccomp refusals: socketpair");
  r->sock = sv[0];
  r->child_sock = sv[1];
  r->on = true;
  return 0;
}

void
seccomp_refusals_started (struct seccomp_refusals *r)
{
  if (r->child_sock >= 0)
    close (r->child_sock);
  r->child_sock = -1;
}

void
seccomp_refusals_clear (struct seccomp_refusals *r)
{
  int *fds[] = { &r->sock, &r->child_sock, &r->listener };

  if (!r->on)
    return;
  for (size_t i = 0; i < sizeof (fds) / sizeof (fds[0]); i++)
    if (*fds[i] >= 0)
      {
        close (*fds[i]);
        *fds[i] = -1;
      }
  seccomp_prog_clear (&r->prog);
}

void
seccomp_prog_notify_refusals (const struct seccomp_prog *p,
                              struct seccomp_prog *ret)
{
  struct sock_filter *v = xcalloc (p->n_insns ? p->n_insns : 1, sizeof (*v));

  memcpy (v, p->insns, p->n_insns * sizeof (*v));
  for (size_t i = 0; i < p->n_insns; i++)
    if (v[i].code == (BPF_RET | BPF_K)
        && (v[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO)
      v[i].k = SECCOMP_RET_USER_NOTIF | (v[i].k & SECCOMP_RET_DATA);
  *ret = (struct seccomp_prog){ .insns = v,
                                .n_insns = p->n_insns,
                                .flags
                                = p->flags | SECCOMP_FILTER_FLAG_NEW_LISTENER };
}

/* One ALU operation; false where it cannot be done (division by 0). */
static bool
alu (uint16_t op, uint32_t *a, uint32_t v)
{
  switch (op)
    {
    case BPF_ADD:
      *a += v;
      return true;
    case BPF_SUB:
      *a -= v;
      return true;
    case BPF_MUL:
      *a *= v;
      return true;
    case BPF_DIV:
      if (v == 0)
        return false;
      *a /= v;
      return true;
    case BPF_MOD:
      if (v == 0)
        return false;
      *a %= v;
      return true;
    case BPF_OR:
      *a |= v;
      return true;
    case BPF_AND:
      *a &= v;
      return true;
    case BPF_XOR:
      *a ^= v;
      return true;
    case BPF_LSH:
      *a = v < 32 ? *a << v : 0;
      return true;
    case BPF_RSH:
      *a = v < 32 ? *a >> v : 0;
      return true;
    case BPF_NEG:
      *a = -*a;
      return true;
    default:
      return false;
    }
}

static bool
jump_taken (uint16_t op, uint32_t a, uint32_t v)
{
  switch (op)
    {
    case BPF_JEQ:
      return a == v;
    case BPF_JGT:
      return a > v;
    case BPF_JGE:
      return a >= v;
    case BPF_JSET:
      return (a & v) != 0;
    default:
      return false;
    }
}

/* The subset of classic BPF the kernel accepts for seccomp: loads from
 * seccomp_data and the scratch memory, ALU, forward jumps, returns. */
uint32_t
seccomp_prog_run (const struct seccomp_prog *p, const struct seccomp_data *d)
{
  const struct sock_filter *v = p->insns;
  uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
  uint32_t word;

  for (size_t pc = 0; pc < p->n_insns; pc++)
    {
      const struct sock_filter *i = &v[pc];
      uint32_t src = BPF_SRC (i->code) == BPF_X ? x : i->k;
      switch (BPF_CLASS (i->code))
        {
        case BPF_LD:
          if (i->code == (BPF_LD | BPF_W | BPF_ABS) && i->k % 4 == 0
              && i->k + 4 <= sizeof (*d))
            memcpy (&word, (const char *)d + i->k, 4), a = word;
          else if (i->code == (BPF_LD | BPF_IMM))
            a = i->k;
          else if (i->code == (BPF_LD | BPF_MEM) && i->k < BPF_MEMWORDS)
            a = mem[i->k];
          else if (i->code == (BPF_LD | BPF_W | BPF_LEN))
            a = sizeof (*d);
          else
            return SECCOMP_RET_KILL_PROCESS;
          break;
        case BPF_LDX:
          if (i->code == (BPF_LDX | BPF_IMM))
            x = i->k;
          else if (i->code == (BPF_LDX | BPF_MEM) && i->k < BPF_MEMWORDS)
            x = mem[i->k];
          else if (i->code == (BPF_LDX | BPF_W | BPF_LEN))
            x = sizeof (*d);
          else
            return SECCOMP_RET_KILL_PROCESS;
          break;
        case BPF_ST:
        case BPF_STX:
          if (i->k >= BPF_MEMWORDS)
            return SECCOMP_RET_KILL_PROCESS;
          mem[i->k] = BPF_CLASS (i->code) == BPF_ST ? a : x;
          break;
        case BPF_ALU:
          if (!alu (BPF_OP (i->code), &a, src))
            return SECCOMP_RET_KILL_PROCESS;
          break;
        case BPF_JMP:
          if (BPF_OP (i->code) == BPF_JA)
            pc += i->k;
          else
            pc += jump_taken (BPF_OP (i->code), a, src) ? i->jt : i->jf;
          break;
        case BPF_RET:
          return BPF_RVAL (i->code) == BPF_A ? a : i->k;
        case BPF_MISC:
          if (BPF_MISCOP (i->code) == BPF_TAX)
            x = a;
          else
            a = x;
          break;
        default:
          return SECCOMP_RET_KILL_PROCESS;
        }
    }
  return SECCOMP_RET_KILL_PROCESS;
}

const struct seccomp_prog *
seccomp_supervised (struct seccomp_refusals *r,
                    const struct seccomp_prog *config,
                    const struct seccomp_prog *builtin, int *ret_sock)
{
  *ret_sock = -1;
  if (r == NULL || !r->on || builtin->n_insns == 0
      || (config->flags & SECCOMP_FILTER_FLAG_NEW_LISTENER))
    return builtin;
  seccomp_prog_clear (&r->prog);
  seccomp_prog_notify_refusals (builtin, &r->prog);
  *ret_sock = r->child_sock;
  return &r->prog;
}

int
seccomp_refusals_load (const struct seccomp_prog *p, int sock,
                       struct moat_error **err)
{
  int listener = -1;
  int r = seccomp_prog_load_listener (p, &listener, err);

  if (r == 0 && listener >= 0)
    r = fd_send (sock, listener, err);
  if (listener >= 0)
    close (listener);
  close (sock);
  return r;
}

int
seccomp_refusals_fd (const struct seccomp_refusals *r)
{
  if (!r->on)
    return -1;
  return r->listener >= 0 ? r->listener : r->sock;
}

static void
count (struct seccomp_refusals *r, uint32_t arch, uint32_t nr)
{
  for (size_t i = 0; i < r->n; i++)
    if (r->v[i].arch == arch && r->v[i].nr == nr)
      {
        r->v[i].n++;
        return;
      }
  if (r->n == SECCOMP_REFUSALS_MAX)
    {
      r->others++;
      return;
    }
  r->v[r->n++]
      = (struct seccomp_refusal_count){ .arch = arch, .nr = nr, .n = 1 };
}

/* Answer one notification as the filter would have, and count it. */
static void
answer (struct seccomp_refusals *r)
{
  struct seccomp_notif n;
  struct seccomp_notif_resp resp = { 0 };
  uint32_t action;

  memset (&n, 0, sizeof (n));
  if (ioctl (r->listener, SECCOMP_IOCTL_NOTIF_RECV, &n) < 0)
    return; /* the caller went (a signal, or killed) */
  action = seccomp_prog_run (&r->prog, &n.data);
  resp.id = n.id;
  resp.error = (action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF
                   ? -(int32_t)(action & SECCOMP_RET_DATA)
                   : -ENOSYS;
  if (resp.error == 0)
    resp.error = -ENOSYS; /* never "allowed" from here */
  count (r, n.data.arch, (uint32_t)n.data.nr);
  (void)ioctl (r->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

void
seccomp_refusals_handle (struct seccomp_refusals *r, short revents)
{
  if (r->listener >= 0)
    {
      if (revents & POLLIN)
        answer (r);
      else if (revents & (POLLHUP | POLLERR | POLLNVAL))
        {
          /* Every process under the filter is gone. */
          close (r->listener);
          r->listener = -1;
        }
      return;
    }
  if (r->sock < 0)
    return;
  if (fd_recv (r->sock, &r->listener, NULL) < 0)
    r->listener = -1; /* EOF: the process went before its execve */
  close (r->sock);
  r->sock = -1;
}

char *
seccomp_refusals_json (const struct seccomp_refusals *r)
{
  struct json_writer *w;

  if (!r->on)
    return NULL;
  w = json_writer_new (false);
  jw_object_begin (w);
  for (size_t i = 0; i < r->n; i++)
    {
      cleanup_free char *name
          = seccomp_syscall_resolve_num_arch (r->v[i].arch, (int)r->v[i].nr);
      cleanup_free char *num = NULL;
      if (name == NULL)
        num = xasprintf ("%u", r->v[i].nr);
      jw_key (w, name ? name : num);
      jw_uint (w, r->v[i].n);
    }
  if (r->others)
    {
      jw_key (w, "(others)");
      jw_uint (w, r->others);
    }
  jw_object_end (w);
  return json_writer_finish (w);
}
