/* The kernel runs cgroup-BPF programs of a hook only once a static key is
 * on, and turns that key on when the first program of the hook is attached
 * anywhere on the host and off when the last one goes: each time by
 * patching its own text on every CPU (text_poke, with IPIs to all of
 * them). Every container brings programs on seven hooks (the network
 * guard's six, and on cgroup v2 the device filter), so with no container
 * running between two, each create patched the keys on and each cgroup's
 * release off again: 3-5 % of a `run`'s CPU after a pause
 * (bench/ROUNDS.md, round eleven), and IPIs that cost every other process
 * of the host too.
 *
 * So moat keeps one program on each of those hooks, attached to an empty
 * cgroup of its own in the unified hierarchy, /moat/.bpf-keys (no
 * container id starts with "."): each allows everything, and nothing runs
 * in that cgroup, so they decide nothing; the keys stay on, as they do
 * anyway while any container runs. Made by the first create that finds it
 * missing; removing it (rmdir) is safe at any time. */
#include "cgroup_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../bpf/bpf.h"
#include "../bpf/bpf_asm.h"
#include "../../lib/util.h"

#define KEYS_PATH "moat/.bpf-keys"

static const struct
{
  enum bpf_prog_type type;
  enum bpf_attach_type hook; /* also the expected attach type */
} keys[] = {
  { BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_INGRESS },
  { BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS },
  { BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT },
  { BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET6_CONNECT },
  { BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP4_SENDMSG },
  { BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP6_SENDMSG },
  { BPF_PROG_TYPE_CGROUP_DEVICE, BPF_CGROUP_DEVICE },
};

void
cgroup_hold_bpf_keys (struct cgroup *cg)
{
  static const struct bpf_insn allow[] = { MOV64_IMM (BPF_REG_0, 1), EXIT () };
  struct cgroup_hier *h = cgroup_hier_for (cg, CG_UNIFIED);
  cleanup_close int fd = -1;

  /* The unit tests' emulated hierarchies have no BPF. */
  if (h == NULL || h->fs != &cgroup_fs_kernel)
    return;
  /* One mkdirat when held already (EEXIST), as at every create but the
   * first; EEXIST too while a create running now sets it up. */
  if (mkdirat (h->mount_fd, KEYS_PATH, 0755) < 0
      && (errno != ENOENT
          || (mkdirat (h->mount_fd, "moat", 0755) < 0 && errno != EEXIST)
          || mkdirat (h->mount_fd, KEYS_PATH, 0755) < 0))
    return;
  fd = openat (h->mount_fd, KEYS_PATH, O_DIRECTORY | O_CLOEXEC);
  for (size_t i = 0; fd >= 0 && i < sizeof (keys) / sizeof (keys[0]); i++)
    {
      cleanup_close int prog = -1;
      enum bpf_attach_type expected
          = keys[i].type == BPF_PROG_TYPE_CGROUP_SOCK_ADDR ? keys[i].hook : 0;
      if (bpf_prog_load (keys[i].type, expected, "moat_keys", allow,
                         sizeof (allow) / sizeof (allow[0]), &prog, NULL)
              < 0
          || bpf_cgroup_attach (fd, prog, keys[i].hook) < 0)
        {
          /* Gone again, so that a later create tries anew: only a cost. */
          close (fd);
          fd = -1;
        }
    }
  if (fd < 0)
    (void)unlinkat (h->mount_fd, KEYS_PATH, AT_REMOVEDIR);
}
