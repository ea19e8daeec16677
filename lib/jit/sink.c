/* lib/jit/sink.c - instructions moved down to their first use, for the fast
 * tier's code generation.
 *
 * The loop vectorizer lays an interleaved loop body out by kind: all the
 * loads of the parts, then all the multiplies, then all the adds.  CodeGen
 * None keeps that order (its scheduler does not reorder for register
 * pressure), so every loaded and multiplied vector is live at once: the
 * short row of attention's P V (8 accumulators, 8 loads, a broadcast) needs
 * 17 ymm registers, one accumulator is spilled and reloaded each step, and
 * the store-to-load round trip lengthens its chain (Zen 2: 1.1 ms a call).
 * Moving each pure instruction (and each load that no write separates from
 * its use) to just before its first use in its block gives load, multiply,
 * add per part: 11 registers live.
 *
 * Each block is walked from its end, so an instruction moves after its
 * users have; the search for the first use stops after SINK_REACH
 * instructions (the pass stays linear in the block) and, for a load, at
 * any instruction that may write memory.  Exact: only the order of
 * instructions without side effects changes, never a value.
 */
#include <stdio.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "jit/jit_impl.h"

#define SINK_REACH 64

/* A call of an intrinsic that neither reads nor writes memory. */
static int pure_call(LLVMValueRef i) {
  LLVMValueRef f = LLVMGetCalledValue(i);
  if (!f || !LLVMIsAFunction(f) || !LLVMGetIntrinsicID(f)) return 0;
  size_t n;
  const char *name = LLVMGetValueName2(f, &n);
  static const char *const ok[] = {"llvm.fmuladd.", "llvm.fma.", "llvm.maxnum.", "llvm.minnum.", "llvm.fabs.",
                                   "llvm.copysign.", "llvm.sqrt.", "llvm.smax.", "llvm.smin.", "llvm.umax.",
                                   "llvm.umin."};
  for (size_t k = 0; k < sizeof ok / sizeof *ok; k++)
    if (n >= strlen(ok[k]) && !strncmp(name, ok[k], strlen(ok[k]))) return 1;
  return 0;
}

/* Whether i may write memory (or otherwise must keep its place among
   memory operations). */
static int writes(LLVMValueRef i) {
  switch (LLVMGetInstructionOpcode(i)) {
  case LLVMStore:
  case LLVMFence:
  case LLVMAtomicRMW:
  case LLVMAtomicCmpXchg:
  case LLVMVAArg:
    return 1;
  case LLVMCall:
  case LLVMInvoke:
  case LLVMCallBr:
    return !pure_call(i);
  default:
    return 0;
  }
}

/* Whether i may move down within its block: 1 pure, 2 a load (moves only
   past instructions that do not write), 0 not at all. */
static int movable(LLVMValueRef i) {
  if (LLVMIsATerminatorInst(i) || LLVMIsAPHINode(i) || !LLVMGetFirstUse(i)) return 0;
  switch (LLVMGetInstructionOpcode(i)) {
  case LLVMLoad:
    return LLVMGetVolatile(i) || LLVMGetOrdering(i) != LLVMAtomicOrderingNotAtomic ? 0 : 2;
  case LLVMAlloca:
  case LLVMStore:
  case LLVMFence:
  case LLVMAtomicRMW:
  case LLVMAtomicCmpXchg:
  case LLVMVAArg:
  case LLVMLandingPad:
  case LLVMFreeze: /* keeps its place: it names one choice of a poison value */
    return 0;
  case LLVMCall:
    return pure_call(i);
  default:
    return 1;
  }
}

static int uses(LLVMValueRef user, LLVMValueRef v) {
  int n = LLVMGetNumOperands(user);
  for (int k = 0; k < n; k++)
    if (LLVMGetOperand(user, (unsigned)k) == v) return 1;
  return 0;
}

static void sink_block(LLVMBuilderRef b, LLVMBasicBlockRef bb) {
  LLVMValueRef i = LLVMGetLastInstruction(bb);
  while (i) {
    LLVMValueRef prev = LLVMGetPreviousInstruction(i);
    int kind = movable(i);
    if (kind) {
      LLVMValueRef at = LLVMGetNextInstruction(i), to = NULL;
      for (int k = 0; at && k < SINK_REACH; k++, at = LLVMGetNextInstruction(at)) {
        if (uses(at, i)) {
          to = at;
          break;
        }
        if (LLVMIsAPHINode(at) || LLVMIsATerminatorInst(at) || (kind == 2 && writes(at))) break;
      }
      if (to && to != LLVMGetNextInstruction(i)) { /* the name kept (the builder would set "") */
        size_t n;
        const char *s = LLVMGetValueName2(i, &n);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), s);
        LLVMInstructionRemoveFromParent(i);
        LLVMPositionBuilderBefore(b, to);
        LLVMInsertIntoBuilderWithName(b, i, name);
      }
    }
    i = prev;
  }
}

void uopi_jit_sink_to_uses(LLVMModuleRef m) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(m));
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb)) sink_block(b, bb);
  LLVMDisposeBuilder(b);
}
