/* linux.resources.devices on a cgroup2 hierarchy, which has no devices
 * controller: a BPF_PROG_TYPE_CGROUP_DEVICE program, hand-assembled from
 * the rules (no clang, no libbpf), loaded and attached to the container's
 * cgroup through bpf.h.
 *
 * It keeps v1's meaning: everything is denied first, then the rules apply
 * in order and a later rule overrides an earlier one. So the program tests
 * the rules from last to first and the first that matches decides; none
 * matching is a denial. */
#include "cgroup_internal.h"

#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <unistd.h>

#include "bpf.h"
#include "../lib/util.h"

/* Enough for any engine's list (Docker sends a dozen); keeps jump offsets
 * far from the 16-bit limit. */
#define MAX_DEVICE_RULES 1024
/* Longest block: type, access (3), major, minor, result (2). */
#define MAX_BLOCK 8

#define INSN(c, d, s, o, i)                                                    \
  ((struct bpf_insn){                                                          \
      .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define LDX_W(dst, src, off) INSN (BPF_LDX | BPF_MEM | BPF_W, dst, src, off, 0)
#define ALU32_IMM(op, dst, imm) INSN (BPF_ALU | (op) | BPF_K, dst, 0, 0, imm)
#define MOV32_REG(dst, src) INSN (BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0)
/* 32-bit compare: a minor above 2^31 must not be sign-extended. */
#define JNE32_IMM(dst, imm, off)                                               \
  INSN (BPF_JMP32 | BPF_JNE | BPF_K, dst, 0, off, imm)
#define EXIT_INSN() INSN (BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

enum
{
  R0,
  R1, /* the context, struct bpf_cgroup_dev_ctx */
  R2, /* device type */
  R3, /* access requested */
  R4, /* major */
  R5, /* minor */
};

static int
access_mask (const char *access, int *ret)
{
  int mask = 0;
  if (access[0] == '\0')
    access = "rwm";
  for (const char *p = access; *p; p++)
    switch (*p)
      {
      case 'r':
        mask |= BPF_DEVCG_ACC_READ;
        break;
      case 'w':
        mask |= BPF_DEVCG_ACC_WRITE;
        break;
      case 'm':
        mask |= BPF_DEVCG_ACC_MKNOD;
        break;
      default:
        return -EINVAL;
      }
  *ret = mask;
  return 0;
}

/* One rule; every jump leaves the block, to the next rule's test. */
static int
rule_block (const struct spec_device_rule *d, struct bpf_insn *b, size_t *ret_n)
{
  const int all_access
      = BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD;
  size_t n = 0;
  int mask;

  if (access_mask (d->access, &mask) < 0 || !strchr ("acb", d->type)
      || d->major > UINT32_MAX || d->minor > UINT32_MAX)
    return -EINVAL;
  if (d->type != 'a')
    b[n++] = JNE32_IMM (
        R2, d->type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK, 0);
  if (mask != all_access)
    {
      /* Matches only if every access asked for is in the rule's set. */
      b[n++] = MOV32_REG (R1, R3);
      b[n++] = ALU32_IMM (BPF_AND, R1, ~mask);
      b[n++] = JNE32_IMM (R1, 0, 0);
    }
  if (d->type != 'a' && d->major >= 0)
    b[n++] = JNE32_IMM (R4, (int32_t)(uint32_t)d->major, 0);
  if (d->type != 'a' && d->minor >= 0)
    b[n++] = JNE32_IMM (R5, (int32_t)(uint32_t)d->minor, 0);
  b[n++] = INSN (BPF_ALU | BPF_MOV | BPF_K, R0, 0, 0, d->allow ? 1 : 0);
  b[n++] = EXIT_INSN ();
  for (size_t i = 0; i < n; i++)
    if (BPF_CLASS (b[i].code) == BPF_JMP32)
      b[i].off = (int16_t)(n - i - 1);
  *ret_n = n;
  return 0;
}

int
cg_devices_build (const struct spec_device_rule *rules, size_t n_rules,
                  struct bpf_insn **ret, size_t *ret_n, struct moat_error **err)
{
  static const struct bpf_insn prologue[] = {
    LDX_W (R2, R1, offsetof (struct bpf_cgroup_dev_ctx, access_type)),
    ALU32_IMM (BPF_AND, R2, 0xffff),
    LDX_W (R3, R1, offsetof (struct bpf_cgroup_dev_ctx, access_type)),
    ALU32_IMM (BPF_RSH, R3, 16),
    LDX_W (R4, R1, offsetof (struct bpf_cgroup_dev_ctx, major)),
    LDX_W (R5, R1, offsetof (struct bpf_cgroup_dev_ctx, minor)),
  };
  size_t n_prologue = sizeof (prologue) / sizeof (prologue[0]);
  cleanup_free struct bpf_insn *prog = NULL;
  size_t n = n_prologue;
  bool decided = false;

  if (n_rules > MAX_DEVICE_RULES)
    return moat_fail (err, E2BIG, "devices: more than %d rules",
                      MAX_DEVICE_RULES);
  prog = xcalloc (n_prologue + n_rules * MAX_BLOCK + 2, sizeof (*prog));
  memcpy (prog, prologue, sizeof (prologue));
  for (size_t i = 0; i < n_rules; i++)
    {
      struct bpf_insn scratch[MAX_BLOCK];
      size_t len;
      if (rule_block (&rules[i], scratch, &len) < 0)
        return moat_fail (err, EINVAL, "devices[%zu]: invalid rule", i);
    }
  for (size_t i = n_rules; i-- > 0 && !decided;)
    {
      size_t len;
      rule_block (&rules[i], prog + n, &len);
      n += len;
      /* A rule that matches everything ("a *:* rwm") decides alone: what
       * would follow is unreachable, and the verifier refuses that. */
      decided = len == 2;
    }
  if (!decided)
    {
      prog[n++] = INSN (BPF_ALU | BPF_MOV | BPF_K, R0, 0, 0, 0);
      prog[n++] = EXIT_INSN ();
    }
  *ret = steal_pointer (&prog);
  *ret_n = n;
  return 0;
}

int
cg_devices_attach (int cgroup_fd, const struct spec_device_rule *rules,
                   size_t n_rules, struct moat_error **err)
{
  cleanup_free struct bpf_insn *prog = NULL;
  cleanup_close int prog_fd = -1;
  uint32_t old[64];
  uint32_t n_old = sizeof (old) / sizeof (old[0]);
  size_t n = 0;
  int r;

  r = cg_devices_build (rules, n_rules, &prog, &n, err);
  if (r < 0)
    return r;
  /* The programs attached to the cgroup itself, so that an update can drop
   * them once its own is in place. */
  r = bpf_cgroup_query (cgroup_fd, BPF_CGROUP_DEVICE, old, &n_old);
  if (r < 0)
    return moat_fail (err, -r, "devices: querying the cgroup's programs");
  r = bpf_prog_load (BPF_PROG_TYPE_CGROUP_DEVICE, 0, "moat_devices", prog, n,
                     &prog_fd, err);
  if (r < 0)
    return moat_error_wrap (err, "devices");
  r = bpf_cgroup_attach (cgroup_fd, prog_fd, BPF_CGROUP_DEVICE);
  if (r < 0)
    return moat_fail (err, -r, "devices: attaching the BPF program");
  /* The new program is in place before the old ones go: no moment without
   * a filter. */
  for (uint32_t i = 0; i < n_old && i < sizeof (old) / sizeof (old[0]); i++)
    (void)bpf_cgroup_detach_id (cgroup_fd, old[i], BPF_CGROUP_DEVICE);
  return 0;
}
