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

static LLVMValueRef dc(uopi_cg *E, double v) { return LLVMConstReal(E->f64, v); }
static LLVMValueRef lc(uopi_cg *E, uint64_t v) { return LLVMConstInt(E->i64, v, 0); }

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
  LLVMValueRef p = uopi_cg_horner_d(E, uopi_exp2_taylor, UOPI_EXP2_DEGREE + 1, t);
  LLVMValueRef pb = LLVMBuildBitCast(b, p, E->i64, "");
  LLVMValueRef kb = LLVMBuildBitCast(b, kd, E->i64, "");
  LLVMValueRef yb = LLVMBuildAdd(b, pb, LLVMBuildShl(b, kb, lc(E, 52), ""), "");
  LLVMValueRef yd = LLVMBuildBitCast(b, yb, E->f64, "");
  LLVMValueRef ok = LLVMBuildAnd(b, in, uopi_cg_far_from_midpoint(E, yd, h), "ok");
  return uopi_cg_join_libm(E, ok, yd, "exp2", h ? x16 : x, h);
}
