/* linux.resources.devices on a cgroup2 hierarchy, which has no devices
 * controller: a BPF_PROG_TYPE_CGROUP_DEVICE program, assembled from the
 * rules with bpf_asm.h (no clang, no libbpf), loaded and attached to the
 * container's cgroup through bpf.h.
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

#include "../bpf/bpf.h"
#include "../bpf/bpf_asm.h"
#include "../../lib/util.h"

/* Enough for any engine's list (Docker sends a dozen); keeps jump offsets
 * far from the 16-bit limit. */
#define MAX_DEVICE_RULES 1024

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

static bool
rule_valid (const struct spec_device_rule *d)
{
  int mask;
  return access_mask (d->access, &mask) == 0 && strchr ("acb", d->type)
         && d->major <= UINT32_MAX && d->minor <= UINT32_MAX;
}

/* One rule: its verdict if the device matches, else on to the next rule.
 * A rule that matches everything ("a *:* rwm") decides alone: the
 * assembler leaves out the rules after it, which could not be reached. */
static void
emit_rule (struct bpf_asm *a, const struct spec_device_rule *d)
{
  const int all_access
      = BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD;
  int next = bpf_asm_label (a);
  int mask = 0;

  (void)access_mask (d->access, &mask);
  /* 32-bit compares: a minor above 2^31 must not be sign-extended. */
  if (d->type != 'a')
    bpf_asm_jump (
        a,
        JMP32_IMM (BPF_JNE, R2,
                   d->type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK),
        next);
  if (mask != all_access)
    {
      /* Matches only if every access asked for is in the rule's set. */
      bpf_asm_emit (a, MOV32_REG (R1, R3));
      bpf_asm_emit (a, ALU32_IMM (BPF_AND, R1, ~mask));
      bpf_asm_jump (a, JMP32_IMM (BPF_JNE, R1, 0), next);
    }
  if (d->type != 'a' && d->major >= 0)
    bpf_asm_jump (a, JMP32_IMM (BPF_JNE, R4, (int32_t)(uint32_t)d->major),
                  next);
  if (d->type != 'a' && d->minor >= 0)
    bpf_asm_jump (a, JMP32_IMM (BPF_JNE, R5, (int32_t)(uint32_t)d->minor),
                  next);
  bpf_asm_emit (a, MOV32_IMM (R0, d->allow ? 1 : 0));
  bpf_asm_emit (a, EXIT ());
  bpf_asm_place (a, next);
}

int
cg_devices_build (const struct spec_device_rule *rules, size_t n_rules,
                  struct bpf_insn **ret, size_t *ret_n, struct moat_error **err)
{
  struct bpf_asm a = { .reachable = true };
  int r;

  if (n_rules > MAX_DEVICE_RULES)
    return moat_fail (err, E2BIG, "devices: more than %d rules",
                      MAX_DEVICE_RULES);
  for (size_t i = 0; i < n_rules; i++)
    if (!rule_valid (&rules[i]))
      return moat_fail (err, EINVAL, "devices[%zu]: invalid rule", i);

  bpf_asm_emit (&a,
                LDX_MEM (BPF_W, R2, R1,
                         offsetof (struct bpf_cgroup_dev_ctx, access_type)));
  bpf_asm_emit (&a, ALU32_IMM (BPF_AND, R2, 0xffff));
  bpf_asm_emit (&a,
                LDX_MEM (BPF_W, R3, R1,
                         offsetof (struct bpf_cgroup_dev_ctx, access_type)));
  bpf_asm_emit (&a, ALU32_IMM (BPF_RSH, R3, 16));
  bpf_asm_emit (
      &a, LDX_MEM (BPF_W, R4, R1, offsetof (struct bpf_cgroup_dev_ctx, major)));
  bpf_asm_emit (
      &a, LDX_MEM (BPF_W, R5, R1, offsetof (struct bpf_cgroup_dev_ctx, minor)));
  /* A later rule overrides an earlier one: the last is tested first. */
  for (size_t i = n_rules; i-- > 0;)
    emit_rule (&a, &rules[i]);
  bpf_asm_emit (&a, MOV32_IMM (R0, 0)); /* none matched: denied */
  bpf_asm_emit (&a, EXIT ());
  r = bpf_asm_finish (&a, err);
  if (r < 0)
    {
      bpf_asm_free (&a);
      return moat_error_wrap (err, "devices");
    }
  *ret = steal_pointer (&a.insns);
  *ret_n = a.n;
  bpf_asm_free (&a);
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
