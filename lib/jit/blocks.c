/* lib/jit/blocks.c - bounding the size of basic blocks before code
 * generation.
 *
 * LLVM 19's machine scheduler (which the fast tier runs too: it is part of
 * the greedy register allocator's pipeline) tracks register pressure per
 * scheduling region, a basic block, in time that grows with the square of
 * the block: a loop body of 100,000 instructions took 1.5 s there, of 2.5 s
 * of code generation.  Splitting long blocks into blocks of at most
 * UOPI_JIT_BLOCK_MAX instructions, joined by unconditional branches to the
 * next (fall-through: no jump is emitted), makes it linear.  The split runs
 * after the IR passes (simplifycfg would merge the blocks again), so the
 * optimizers see the block whole.  Kernels of ordinary size have no block
 * that long and are not touched.
 *
 * The C API has no "split a block": the tail of a block is moved
 * instruction by instruction into a new block, and the phis of the
 * successors that named the old block are rebuilt naming the new one.
 */
#include <llvm-c/Core.h>

#include "jit/jit_impl.h"

/* Phis of s that have an incoming edge from `from` get it from `to`. */
static void retarget_phis(LLVMBuilderRef b, LLVMBasicBlockRef s, LLVMBasicBlockRef from, LLVMBasicBlockRef to) {
  for (LLVMValueRef p = LLVMGetFirstInstruction(s), next; p && LLVMIsAPHINode(p); p = next) {
    next = LLVMGetNextInstruction(p);
    unsigned n = LLVMCountIncoming(p), hit = 0;
    for (unsigned i = 0; i < n; i++) hit |= LLVMGetIncomingBlock(p, i) == from;
    if (!hit) continue;
    LLVMPositionBuilderBefore(b, p);
    LLVMValueRef q = LLVMBuildPhi(b, LLVMTypeOf(p), "");
    for (unsigned i = 0; i < n; i++) {
      LLVMValueRef v = LLVMGetIncomingValue(p, i);
      LLVMBasicBlockRef in = LLVMGetIncomingBlock(p, i);
      if (in == from) in = to;
      LLVMAddIncoming(q, &v, &in, 1);
    }
    LLVMReplaceAllUsesWith(p, q); /* a phi naming itself names q */
    LLVMInstructionEraseFromParent(p);
  }
}

/* Moves the instructions of bb from `first` to its end (its terminator
   included) into a new block placed after bb, and ends bb with a branch to
   it.  Returns the new block. */
static LLVMBasicBlockRef split_before(LLVMBuilderRef b, LLVMContextRef c, LLVMBasicBlockRef bb, LLVMValueRef first,
                                      int fix_phis) {
  LLVMBasicBlockRef next = LLVMGetNextBasicBlock(bb), nb;
  if (next) nb = LLVMInsertBasicBlockInContext(c, next, "");
  else nb = LLVMAppendBasicBlockInContext(c, LLVMGetBasicBlockParent(bb), "");
  LLVMPositionBuilderAtEnd(b, nb);
  for (LLVMValueRef i = first, nx; i; i = nx) {
    nx = LLVMGetNextInstruction(i);
    LLVMInstructionRemoveFromParent(i);
    LLVMInsertIntoBuilder(b, i);
  }
  LLVMPositionBuilderAtEnd(b, bb);
  LLVMBuildBr(b, nb);
  if (fix_phis) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(nb);
    unsigned n = t ? LLVMGetNumSuccessors(t) : 0;
    for (unsigned k = 0; k < n; k++) {
      LLVMBasicBlockRef s = LLVMGetSuccessor(t, k);
      unsigned seen = 0;
      for (unsigned j = 0; j < k; j++) seen |= LLVMGetSuccessor(t, j) == s;
      if (!seen) retarget_phis(b, s, bb, nb);
    }
  }
  return nb;
}

/* Splits bb, counted from its end, into pieces of max instructions. */
static void bound(LLVMBuilderRef b, LLVMContextRef c, LLVMBasicBlockRef bb, unsigned max) {
  int first_split = 1;
  for (;;) {
    LLVMValueRef at = LLVMGetLastInstruction(bb);
    unsigned k = 1;
    while (at && k < max) at = LLVMGetPreviousInstruction(at), k++;
    if (!at) return;                        /* max or fewer left */
    LLVMValueRef prev = LLVMGetPreviousInstruction(at);
    if (!prev || LLVMIsAPHINode(prev)) return; /* only phis (or nothing) before it */
    split_before(b, c, bb, at, first_split);
    first_split = 0;                        /* the later pieces' successor is the previous piece: no phis */
  }
}

void uopi_jit_bound_blocks(LLVMModuleRef m, unsigned max) {
  LLVMContextRef c = LLVMGetModuleContext(m);
  LLVMBuilderRef b = NULL;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    /* the blocks that exist now; the pieces made are not visited again */
    LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f);
    while (bb) {
      LLVMBasicBlockRef next = LLVMGetNextBasicBlock(bb);
      unsigned n = 0;
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && n <= max; i = LLVMGetNextInstruction(i)) n++;
      if (n > max) {
        if (!b) b = LLVMCreateBuilderInContext(c);
        bound(b, c, bb, max);
      }
      bb = next;
    }
  }
  if (b) LLVMDisposeBuilder(b);
}
