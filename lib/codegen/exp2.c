/* lib/codegen/exp2.c - strict exp2 on f32 without a libm call per element,
 * bit for bit what libm gives (docs/lowering.md, "Exact exp2").
 *
 * Strict exp2 of an f32 x is fptrunc(exp2((double)x)): libm's double exp2
 * rounded to f32 (uopc_exec_alu does the same).  A call per element keeps
 * the loop scalar (262,144 calls: about 1.4 ms).  Here the double y is
 * computed inline, vectorizable, and rounded to f32 only where that is
 * certainly the rounding of libm's double:
 *
 *   x clamped to [-125, 127] (NaN: -125), n = rint(x) (by the 1.5 * 2^52
 *   shifter), t = x - n (exact:
 *   x has 24 significant bits and |x| < 2^7), p = 2^t by Horner with fma on
 *   the Taylor polynomial of degree 10 (|t| <= 1/2: truncation below
 *   2^-41.5 relative, the coefficients and 10 fmas add under 2^-49), y = p
 *   * 2^n by adding n to the exponent field (exact, y normal).  So y is
 *   within 2^12 double ulps of exp2(x), and libm's exp2 (glibc: < 1 ulp) is
 *   within 1.
 *
 *   The f32 rounding of a double depends on its 29 low mantissa bits only
 *   through whether they are below, at or above 2^28 (the midpoint of two
 *   floats).  When they are more than T = 2^16 ulps away from 2^28, every
 *   double within 2^12 + 1 ulps rounds to the same float as y (a carry
 *   into the 23 upper bits moves from one float's neighbourhood to the
 *   next, never across a midpoint).  The fast result is used only then and
 *   for x in [-125, 127] (f32 results normal, no overflow); every other
 *   element -- NaN, infinities, |x| large, x < -125 (subnormal results),
 *   the ~2^-12 of inputs near a midpoint -- branches to the libm call.
 *
 * The loop vectorizer if-converts the branch (the call is scalarized under
 * its mask), so whole vectors take the inline path.  scripts/exp2-exhaustive.sh
 * checks all 2^32 inputs against libm; the suite checks a bounded subset.
 */
#include <stdio.h>
#include <string.h>

#include "codegen/cg.h"

/* 2^t = sum (t ln 2)^k / k!, k = 0..10: the coefficients (ln 2)^k / k!. */
const double uopi_exp2_taylor[UOPI_EXP2_DEGREE + 1] = {
    1.0,
    0.69314718055994530942,
    0.24022650695910071233,
    0.055504108664821579953,
    0.0096181291076284771620,
    0.0013333558146428443423,
    0.00015403530393381609955,
    1.5252733804059840280e-05,
    1.3215486790144309489e-06,
    1.0178086009239699728e-07,
    7.0549116208011233298e-09,
};

static LLVMValueRef fma_d(uopi_cg *E, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMTypeRef t = E->f64;
  unsigned id = LLVMLookupIntrinsicID("llvm.fma", 8);
  LLVMValueRef f = LLVMGetIntrinsicDeclaration(E->m, id, &t, 1);
  LLVMValueRef args[3] = {a, b, c};
  return LLVMBuildCall2(E->b, LLVMIntrinsicGetType(E->lc, id, &t, 1), f, args, 3, "");
}

static LLVMValueRef dc(uopi_cg *E, double v) { return LLVMConstReal(E->f64, v); }
static LLVMValueRef lc(uopi_cg *E, uint64_t v) { return LLVMConstInt(E->i64, v, 0); }

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

LLVMValueRef uopi_cg_exp2(uopi_cg *E, LLVMValueRef x, uopc_dtype dt) {
  LLVMBuilderRef b = E->b;
  const int h = dt == UOPC_DT_F16;
  LLVMValueRef x16 = x;
  if (h) x = LLVMBuildFPExt(b, x, E->f32, "xw"); /* exact */
  LLVMValueRef lo = LLVMConstReal(E->f32, h ? UOPI_EXP2_LO16 : UOPI_EXP2_LO);
  LLVMValueRef hi = LLVMConstReal(E->f32, h ? UOPI_EXP2_HI16 : UOPI_EXP2_HI);
  /* in range: ordered compares, false for NaN */
  LLVMValueRef ge = LLVMBuildFCmp(b, LLVMRealOGE, x, lo, "");
  LLVMValueRef le = LLVMBuildFCmp(b, LLVMRealOLE, x, hi, "");
  LLVMValueRef in = LLVMBuildAnd(b, ge, le, "in");
  /* the clamped x: every value below is defined (no poison from fptosi) */
  LLVMValueRef xc = LLVMBuildSelect(b, ge, x, lo, "");
  xc = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLE, xc, hi, ""), xc, hi, "");
  LLVMValueRef xd = LLVMBuildFPExt(b, xc, E->f64, "");
  /* n = rint(x) by the shifter 1.5 * 2^52: xd + S rounds to an integer
     (|xd| <= 127), held two's complement in the low mantissa bits, so
     bits(xd + S) << 52 is n << 52 modulo 2^64: no float-to-int conversion
     (AVX2 has none for doubles) */
  LLVMValueRef shifter = dc(E, 6755399441055744.0); /* 0x1.8p52 */
  LLVMValueRef kd = LLVMBuildFAdd(b, xd, shifter, "");
  LLVMValueRef n = LLVMBuildFSub(b, kd, shifter, "n");
  LLVMValueRef t = LLVMBuildFSub(b, xd, n, "t");
  LLVMValueRef p = dc(E, uopi_exp2_taylor[UOPI_EXP2_DEGREE]);
  for (int k = UOPI_EXP2_DEGREE - 1; k >= 0; k--) p = fma_d(E, p, t, dc(E, uopi_exp2_taylor[k]));
  LLVMValueRef pb = LLVMBuildBitCast(b, p, E->i64, "");
  LLVMValueRef kb = LLVMBuildBitCast(b, kd, E->i64, "");
  LLVMValueRef yb = LLVMBuildAdd(b, pb, LLVMBuildShl(b, kb, lc(E, 52), ""), "");
  /* near a midpoint of the result type: (low - (2^(w-1) - T)) mod 2^64 <=
     2T, w the mantissa bits below it (29 for f32, 42 for f16) */
  const unsigned w = h ? 42 : 29;
  const uint64_t margin = UOPI_EXP2_T;
  LLVMValueRef low = LLVMBuildAnd(b, yb, lc(E, (UINT64_C(1) << w) - 1), "");
  LLVMValueRef off = LLVMBuildSub(b, low, lc(E, (UINT64_C(1) << (w - 1)) - margin), "");
  LLVMValueRef far = LLVMBuildICmp(b, LLVMIntUGT, off, lc(E, 2 * margin), "far");
  LLVMValueRef ok = LLVMBuildAnd(b, in, far, "ok");
  /* f32: rounded here; f16: the double goes on, rounded after the join by
     uopi_cg_f64_to_f16 (exact, for both paths) */
  LLVMValueRef yd = LLVMBuildBitCast(b, yb, E->f64, "");
  LLVMValueRef fast = h ? yd : LLVMBuildFPTrunc(b, yd, E->f32, "");

  LLVMBasicBlockRef here = LLVMGetInsertBlock(b);
  LLVMBasicBlockRef slow_bb = LLVMAppendBasicBlockInContext(E->lc, E->fn, "exp2.libm");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(E->lc, E->fn, "exp2.done");
  LLVMBuildCondBr(b, ok, join, slow_bb);
  LLVMPositionBuilderAtEnd(b, slow_bb);
  LLVMValueRef call = uopi_cg_libm_call_masked(E, "exp2", LLVMBuildFPExt(b, h ? x16 : x, E->f64, "wide"));
  LLVMValueRef slow = h ? call : LLVMBuildFPTrunc(b, call, E->f32, "");
  LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(b);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, join);
  LLVMValueRef r = LLVMBuildPhi(b, h ? E->f64 : E->f32, "exp2");
  LLVMValueRef vals[2] = {fast, slow};
  LLVMBasicBlockRef from[2] = {here, slow_end};
  LLVMAddIncoming(r, vals, from, 2);
  return h ? uopi_cg_f64_to_f16(E, r) : r;
}
