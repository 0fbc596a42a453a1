/* moat's one BPF instruction emitter, shared by the network guard
 * (netguard_bpf.c) and the device filter (cgroup_devices.c): the
 * instructions as macros, and a small assembler with labels that leaves
 * out what cannot be reached. bpf.h loads what it makes. */
#ifndef MOAT_BPF_ASM_H
#define MOAT_BPF_ASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/bpf.h>

#include "../../lib/error.h"

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
#define ALU64_REG(OP, DST, SRC) INSN (BPF_ALU64 | (OP) | BPF_X, DST, SRC, 0, 0)
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

#define STX_MEM(SIZE, DST, SRC, OFF)                                           \
  INSN (BPF_STX | BPF_MEM | (SIZE), DST, SRC, OFF, 0)
#define ST_MEM(SIZE, DST, OFF, IMM)                                            \
  INSN (BPF_ST | BPF_MEM | (SIZE), DST, 0, OFF, IMM)
#define CALL(FUNC) INSN (BPF_JMP | BPF_CALL, 0, 0, 0, FUNC)
/* *(DST + OFF) += SRC, atomically (BPF_XADD before 5.12, same encoding). */
#define ATOMIC_ADD(SIZE, DST, SRC, OFF)                                        \
  INSN (BPF_STX | BPF_ATOMIC | (SIZE), DST, SRC, OFF, BPF_ADD)
/* SRC = the old *(DST + OFF), which becomes old + SRC, atomically (5.12). */
#define ATOMIC_FETCH_ADD(SIZE, DST, SRC, OFF)                                  \
  INSN (BPF_STX | BPF_ATOMIC | (SIZE), DST, SRC, OFF, BPF_ADD | BPF_FETCH)

#define MOV32_REG(DST, SRC) INSN (BPF_ALU | BPF_MOV | BPF_X, DST, SRC, 0, 0)
#define MOV32_IMM(DST, IMM) INSN (BPF_ALU | BPF_MOV | BPF_K, DST, 0, 0, IMM)

struct bpf_asm_fixup
{
  size_t at;
  int label;
};

/* Jumps go forward, so when a label is placed every jump to it is
 * already known: the assembler tracks whether the next instruction can be
 * reached at all and leaves out what cannot (the verifier refuses
 * unreachable instructions, which a rule that matches everything would
 * otherwise leave behind). The one exception is a loop: a jump to a label
 * placed already goes back to it, and the code before such a label must
 * fall through to it (the verifier bounds the loop). */
struct bpf_asm
{
  struct bpf_insn *insns;
  size_t n, cap;
  bool *label_used;
  ssize_t *label_at;
  size_t n_labels;
  struct bpf_asm_fixup *fixups;
  size_t n_fixups;
  bool reachable;
};

/* Append an instruction (nothing, where it cannot be reached). */
void bpf_asm_emit (struct bpf_asm *a, struct bpf_insn insn);
/* A new label, placed later with bpf_asm_place. */
int bpf_asm_label (struct bpf_asm *a);
/* Append a jump (JMP/JMP32, offset left 0) to LABEL, placed later (or,
 * for a loop, placed before). */
void bpf_asm_jump (struct bpf_asm *a, struct bpf_insn insn, int label);
/* LABEL is the next instruction. */
void bpf_asm_place (struct bpf_asm *a, int label);
/* Patch the jump offsets in; E2BIG past 16-bit offsets. */
int bpf_asm_finish (struct bpf_asm *a, struct moat_error **err);
void bpf_asm_free (struct bpf_asm *a);

#endif
