/* lib/codegen/certain.c - what exp2.c, log2.c and sin.c share: a libm function
 * computed inline where the rounding is certainly libm's, and the libm call
 * elsewhere (docs/lowering.md, "Exact exp2", "Exact log2", "Exact sin").
 *
 * The inline double y is within a few thousand ulps of libm's double (each
 * file proves its bound); the rounding of a double to f32 (f16) depends on
 * its 29 (42) mantissa bits below the result's only through whether they are
 * below, at or above the midpoint, so where they are more than T = 2^16 from
 * it every double within the bound rounds alike: uopi_cg_far_from_midpoint.
 * uopi_cg_join_libm branches the other elements to the libm call, in a block
 * of its own carrying a masked vector variant so that the loop still
 * vectorizes (the call scalarized under the mask), and rounds an f16 result
 * once, after the join.
 */
#include <stdio.h>

#include "codegen/cg.h"

LLVMValueRef uopi_cg_fma_d(uopi_cg *E, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMTypeRef t = E->f64;
  unsigned id = LLVMLookupIntrinsicID("llvm.fma", 8);
  LLVMValueRef f = LLVMGetIntrinsicDeclaration(E->m, id, &t, 1);
  LLVMValueRef args[3] = {a, b, c};
  return LLVMBuildCall2(E->b, LLVMIntrinsicGetType(E->lc, id, &t, 1), f, args, 3, "");
}

LLVMValueRef uopi_cg_horner_d(uopi_cg *E, const double *coef, int n, LLVMValueRef z) {
  LLVMValueRef p = LLVMConstReal(E->f64, coef[n - 1]);
  for (int i = n - 2; i >= 0; i--) p = uopi_cg_fma_d(E, p, z, LLVMConstReal(E->f64, coef[i]));
  return p;
}

/* The masked two-lane variant of the libm function named in a fallback
   call's vector-function-abi-variant attribute: LLVM 19's vectorizer accepts a
   call in a predicated block only when some masked variant exists
   (LoopVectorizationLegality); it then scalarizes the call under the mask
   or, at VF 2, calls this (on both lanes: a masked-off lane's result is
   unused).  A preserve_all wrapper around the call, to keep the loop's
   vector registers across it, was tried: no faster (0.68 ms for 2^18
   elements either way, Zen 3), and LLVM 19 then returns with vzeroupper
   after restoring the ymm registers, losing their upper halves. */
static void define_variant(uopi_cg *E, const char *name, const char *variant) {
  if (LLVMGetNamedFunction(E->m, variant)) return;
  LLVMTypeRef v2d = LLVMVectorType(E->f64, 2), v2b = LLVMVectorType(E->i1, 2);
  LLVMTypeRef params[2] = {v2d, v2b};
  LLVMValueRef f = LLVMAddFunction(E->m, variant, LLVMFunctionType(v2d, params, 2, 0));
  LLVMSetLinkage(f, LLVMInternalLinkage);
  LLVMBasicBlockRef saved = LLVMGetInsertBlock(E->b);
  LLVMPositionBuilderAtEnd(E->b, LLVMAppendBasicBlockInContext(E->lc, f, "entry"));
  LLVMValueRef r = LLVMGetUndef(v2d);
  for (unsigned i = 0; i < 2; i++) {
    LLVMValueRef lane = LLVMConstInt(E->i32, i, 0);
    LLVMValueRef y = uopi_cg_libm_call(E, name, LLVMBuildExtractElement(E->b, LLVMGetParam(f, 0), lane, ""));
    r = LLVMBuildInsertElement(E->b, r, y, lane, "");
  }
  LLVMBuildRet(E->b, r);
  LLVMPositionBuilderAtEnd(E->b, saved);
}

LLVMValueRef uopi_cg_libm_call_masked(uopi_cg *E, const char *name, LLVMValueRef xd) {
  char variant[64], attr[128];
  snprintf(variant, sizeof variant, "uopc_%s_m2", name);
  int n = snprintf(attr, sizeof attr, "_ZGV_LLVM_M2v_%s(%s)", name, variant);
  define_variant(E, name, variant);
  LLVMValueRef call = uopi_cg_libm_call(E, name, xd);
  LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                           LLVMCreateStringAttribute(E->lc, "vector-function-abi-variant", 27, attr, (unsigned)n));
  return call;
}

LLVMValueRef uopi_cg_far_from_midpoint(uopi_cg *E, LLVMValueRef y, int h) {
  LLVMBuilderRef b = E->b;
  const unsigned w = h ? 42 : 29;
  /* near: (low - (2^(w-1) - T)) mod 2^64 <= 2T */
  LLVMValueRef low = LLVMBuildAnd(b, LLVMBuildBitCast(b, y, E->i64, ""), LLVMConstInt(E->i64, (UINT64_C(1) << w) - 1, 0), "");
  LLVMValueRef off = LLVMBuildSub(b, low, LLVMConstInt(E->i64, (UINT64_C(1) << (w - 1)) - UOPI_CERTAIN_T, 0), "");
  return LLVMBuildICmp(b, LLVMIntUGT, off, LLVMConstInt(E->i64, 2 * (uint64_t)UOPI_CERTAIN_T, 0), "far");
}

LLVMValueRef uopi_cg_join_libm(uopi_cg *E, LLVMValueRef ok, LLVMValueRef y, const char *name, LLVMValueRef x, int h) {
  LLVMBuilderRef b = E->b;
  /* f32: rounded here; f16: the double goes on, rounded after the join by
     uopi_cg_f64_to_f16 (exact, for both paths) */
  LLVMValueRef fast = h ? y : LLVMBuildFPTrunc(b, y, E->f32, "");
  LLVMBasicBlockRef here = LLVMGetInsertBlock(b);
  uopi_jit_module_set_tier0_ir(E->m); /* vectorized at TIER2 too (jit.h, "TIER0's IR at TIER2") */
  char bname[32];
  snprintf(bname, sizeof bname, "%s.libm", name);
  LLVMBasicBlockRef slow_bb = LLVMAppendBasicBlockInContext(E->lc, E->fn, bname);
  snprintf(bname, sizeof bname, "%s.done", name);
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(E->lc, E->fn, bname);
  LLVMBuildCondBr(b, ok, join, slow_bb);
  LLVMPositionBuilderAtEnd(b, slow_bb);
  LLVMValueRef call = uopi_cg_libm_call_masked(E, name, LLVMBuildFPExt(b, x, E->f64, "wide"));
  LLVMValueRef slow = h ? call : LLVMBuildFPTrunc(b, call, E->f32, "");
  LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(b);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, join);
  LLVMValueRef r = LLVMBuildPhi(b, h ? E->f64 : E->f32, name);
  LLVMValueRef vals[2] = {fast, slow};
  LLVMBasicBlockRef from[2] = {here, slow_end};
  LLVMAddIncoming(r, vals, from, 2);
  return h ? uopi_cg_f64_to_f16(E, r) : r;
}
