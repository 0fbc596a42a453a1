/* See bpf_asm.h. */
#include "bpf_asm.h"

#include <errno.h>
#include <stdlib.h>

#include "../../lib/util.h"

void
bpf_asm_free (struct bpf_asm *a)
{
  free (a->insns);
  free (a->label_used);
  free (a->label_at);
  free (a->fixups);
}

void
bpf_asm_emit (struct bpf_asm *a, struct bpf_insn insn)
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

int
bpf_asm_label (struct bpf_asm *a)
{
  size_t n = a->n_labels + 1;
  a->label_used = xrealloc (a->label_used, n * sizeof (*a->label_used));
  a->label_at = xrealloc (a->label_at, n * sizeof (*a->label_at));
  a->label_used[a->n_labels] = false;
  a->label_at[a->n_labels] = -1;
  return (int)a->n_labels++;
}

void
bpf_asm_jump (struct bpf_asm *a, struct bpf_insn insn, int label)
{
  if (!a->reachable)
    return;
  a->fixups = xrealloc (a->fixups, (a->n_fixups + 1) * sizeof (*a->fixups));
  a->fixups[a->n_fixups++]
      = (struct bpf_asm_fixup){ .at = a->n, .label = label };
  a->label_used[label] = true;
  bpf_asm_emit (a, insn);
}

void
bpf_asm_place (struct bpf_asm *a, int label)
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

int
bpf_asm_finish (struct bpf_asm *a, struct moat_error **err)
{
  for (size_t i = 0; i < a->n_fixups; i++)
    {
      const struct bpf_asm_fixup *f = &a->fixups[i];
      ssize_t off = a->label_at[f->label] - (ssize_t)f->at - 1;
      if (a->label_at[f->label] < 0)
        return moat_fail (err, EINVAL, "bpf assembler: label %d not placed",
                          f->label);
      if (off > INT16_MAX || off < INT16_MIN)
        return moat_fail (err, E2BIG, "bpf program too large (%zu insns)",
                          a->n);
      a->insns[f->at].off = (int16_t)off;
    }
  return 0;
}
