/* lib/codegen/log2.c - strict log2 on f32 and f16 without a libm call per
 * element, bit for bit what libm gives (docs/lowering.md, "Exact log2").
 *
 * Strict log2 of x is libm's double log2 of (double)x rounded to the
 * result's dtype (uopc_exec_alu does the same).  Here, for positive finite
 * x, the double y is computed inline, vectorizable:
 *
 *   (double)x = m * 2^e read from the bits (exact; f32 subnormals are
 *   normal doubles), m in [1, 2) taken to [sqrt(1/2), sqrt(2)] by halving
 *   (exact) when above sqrt(2); f = m - 1 (exact, Sterbenz), s = f / (2 +
 *   f), |s| <= 0.1716; ln(m) = 2s * P(s^2), P the atanh series 1 + z/3 +
 *   z^2/5 + ... to z^11 (truncation below 2^-56 relative), by Horner with
 *   fma; y = e + ln(m) / ln 2 (the product by the double 1/ln 2, then the
 *   sum).  Over every positive finite f32 (2^31 - 2^23 - 1 of them, a C
 *   mirror of these operations against glibc's log2) y is within 3 double
 *   ulps of libm's double.
 *
 * As in exp2.c, y is rounded inline only where that is certainly libm's
 * rounding: its bits below the result's mantissa (29 for f32, 42 for f16)
 * more than T = 2^16 from the midpoint; every other element (0.025 % of
 * the f32 inputs) branches to the libm call.  The special inputs are
 * answered inline too: +-0 gives -inf, +inf +inf, a negative number or a
 * NaN the quiet NaN.  Results are never subnormal (|y| >= 1.7e-7 or y = 0
 * for f32 inputs, >= 7e-4 or 0 for f16), so the midpoint test is the whole
 * story.  test/test_exp2.cpp (StrictLog2.*) checks the mirror's bound and
 * the kernel against libm; scripts/exp2-exhaustive.sh runs both on all
 * inputs.
 */
#include <math.h>

#include "codegen/cg.h"

static LLVMValueRef dc(uopi_cg *E, double v) { return LLVMConstReal(E->f64, v); }
static LLVMValueRef lc(uopi_cg *E, uint64_t v) { return LLVMConstInt(E->i64, v, 0); }

LLVMValueRef uopi_cg_log2(uopi_cg *E, LLVMValueRef x, uopc_dtype dt) {
  LLVMBuilderRef b = E->b;
  const int h = dt == UOPC_DT_F16;
  LLVMValueRef xw = h ? LLVMBuildFPExt(b, x, E->f32, "xw") : x; /* exact */
  /* positive and finite: ordered compares, false for NaN */
  LLVMValueRef in = LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOGT, xw, LLVMConstReal(E->f32, 0.0), ""),
                                 LLVMBuildFCmp(b, LLVMRealOLT, xw, LLVMConstReal(E->f32, INFINITY), ""), "in");
  LLVMValueRef xd = LLVMBuildFPExt(b, LLVMBuildSelect(b, in, xw, LLVMConstReal(E->f32, 1.0), ""), E->f64, "");
  LLVMValueRef bits = LLVMBuildBitCast(b, xd, E->i64, "");
  LLVMValueRef e = LLVMBuildSub(b, LLVMBuildAnd(b, LLVMBuildLShr(b, bits, lc(E, 52), ""), lc(E, 0x7ff), ""),
                                lc(E, 1023), "e");
  LLVMValueRef m = LLVMBuildBitCast(
      b, LLVMBuildOr(b, LLVMBuildAnd(b, bits, lc(E, UINT64_C(0xFFFFFFFFFFFFF)), ""), lc(E, UINT64_C(0x3FF0000000000000)), ""),
      E->f64, "m");
  LLVMValueRef big = LLVMBuildFCmp(b, LLVMRealOGT, m, dc(E, UOPI_LOG2_SQRT2), "");
  m = LLVMBuildSelect(b, big, LLVMBuildFMul(b, m, dc(E, 0.5), ""), m, "");
  e = LLVMBuildAdd(b, e, LLVMBuildZExt(b, big, E->i64, ""), "");
  LLVMValueRef f = LLVMBuildFSub(b, m, dc(E, 1.0), "f");
  LLVMValueRef s = LLVMBuildFDiv(b, f, LLVMBuildFAdd(b, dc(E, 2.0), f, ""), "s");
  LLVMValueRef z = LLVMBuildFMul(b, s, s, "z");
  double atanh[UOPI_LOG2_DEGREE + 1]; /* 1/(2k+1): atanh(s)/s in z = s^2 */
  for (int k = 0; k <= UOPI_LOG2_DEGREE; k++) atanh[k] = 1.0 / (2 * k + 1);
  LLVMValueRef p = uopi_cg_horner_d(E, atanh, UOPI_LOG2_DEGREE + 1, z);
  LLVMValueRef l = LLVMBuildFMul(b, LLVMBuildFMul(b, dc(E, 2.0), s, ""), p, "ln");
  LLVMValueRef y = LLVMBuildFAdd(b, LLVMBuildSIToFP(b, e, E->f64, ""), LLVMBuildFMul(b, l, dc(E, UOPI_LOG2_INVLN2), ""), "y");
  LLVMValueRef far = uopi_cg_far_from_midpoint(E, y, h);
  /* the rest needs no libm either: log2 of +-0 is -inf, of +inf +inf, of
     a negative number or a NaN a NaN (exec_alu's: its one quiet NaN) */
  LLVMValueRef sv = LLVMBuildSelect(
      b, LLVMBuildFCmp(b, LLVMRealOEQ, xw, LLVMConstReal(E->f32, 0.0), ""), dc(E, -INFINITY),
      LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, xw, LLVMConstReal(E->f32, INFINITY), ""), dc(E, INFINITY),
                      dc(E, NAN), ""),
      "special");
  y = LLVMBuildSelect(b, in, y, sv, "");
  LLVMValueRef ok = LLVMBuildOr(b, LLVMBuildNot(b, in, ""), far, "ok");
  return uopi_cg_join_libm(E, ok, y, "log2", x, h);
}
