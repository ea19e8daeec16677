/* lib/codegen/sin.c - strict sin on f32 and f16 without a libm call per
 * element, bit for bit what libm gives (docs/lowering.md, "Exact sin").
 *
 * Strict sin of x is libm's double sin of (double)x rounded to the result's
 * dtype (uopc_exec_alu does the same).  Here, for |x| <= UOPI_SIN_XMAX, the
 * double y is computed inline, vectorizable:
 *
 *   k = rint(x * 2/pi) (by the 1.5 * 2^52 shifter, whose low mantissa bits
 *   then hold k modulo 4: the quadrant), r = x - k * pi/2 in three steps
 *   (Cody and Waite): pi/2 = P1 + P2 + P3 with P1 and P2 of 33 significant
 *   bits, so k * P1 and k * P2 are exact for |k| < 2^20 and x - k * P1 is
 *   exact (Sterbenz: x and k * P1 within a factor 2); |r| <= pi/4 (a little
 *   more where k rounds up at a tie).  sin r = r + r^3 * S(r^2) and cos r =
 *   1 + r^2 * C(r^2), the Taylor polynomials to r^17 and r^18 (truncation
 *   below 2^-59 relative on |r| <= 0.8), by Horner with fma; y = +-sin r or
 *   +-cos r by the quadrant.  Over every f32 with 2^-26 <= |x| <= 2^20 (a C
 *   mirror of these operations, test/test_exp2.cpp, against glibc's sin) y
 *   is within 2 double ulps of libm's double.
 *
 * As in exp2.c and log2.c, y is rounded inline only where that is certainly
 * libm's rounding: its bits below the result's mantissa more than T = 2^16
 * from the midpoint (certain.c); the other elements (0.018 % of the f32
 * inputs), and |x| > XMAX, infinities and NaN, branch to the libm call.  A
 * tiny x (|x| < 2^-26 for f32, < 2^-13 for f16, zeros and subnormals
 * included) is its own sine: libm's double sin(x) is x there (the next term,
 * x^3/6, is below half an ulp of x; glibc returns x), and so is its rounding.
 * Every other result is at least sin(2^-26) (2^-13 for f16) in magnitude:
 * normal in the result's dtype, as the midpoint test assumes.
 */
#include "codegen/cg.h"

/* sin r = r + r^3 * sum S[i] r^(2i): (-1)^(i+1) / (2i + 3)! */
const double uopi_sin_taylor[UOPI_SIN_DEGREE] = {
    -0.16666666666666666,    0.008333333333333333,   -0.0001984126984126984,  2.7557319223985893e-06,
    -2.505210838544172e-08,  1.6059043836821613e-10, -7.647163731819816e-13,  2.8114572543455206e-15,
};
/* cos r = 1 + r^2 * sum C[i] r^(2i): (-1)^(i+1) / (2i + 2)! */
const double uopi_cos_taylor[UOPI_COS_DEGREE] = {
    -0.5,                    0.041666666666666664,   -0.001388888888888889,   2.48015873015873e-05,
    -2.755731922398589e-07,  2.08767569878681e-09,   -1.1470745597729725e-11, 4.779477332387385e-14,
    -1.5619206968586225e-16,
};

static LLVMValueRef dc(uopi_cg *E, double v) { return LLVMConstReal(E->f64, v); }

LLVMValueRef uopi_cg_sin(uopi_cg *E, LLVMValueRef x, uopc_dtype dt) {
  LLVMBuilderRef b = E->b;
  const int h = dt == UOPC_DT_F16;
  LLVMValueRef xw = h ? LLVMBuildFPExt(b, x, E->f32, "xw") : x; /* exact */
  /* |x| <= XMAX and |x| < TINY by ordered compares: false for NaN */
  LLVMValueRef xmax = LLVMConstReal(E->f32, UOPI_SIN_XMAX), tmax = LLVMConstReal(E->f32, h ? UOPI_SIN_TINY16 : UOPI_SIN_TINY);
  LLVMValueRef in = LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOLE, xw, xmax, ""),
                                 LLVMBuildFCmp(b, LLVMRealOGE, xw, LLVMBuildFNeg(b, xmax, ""), ""), "in");
  LLVMValueRef tiny = LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOLT, xw, tmax, ""),
                                   LLVMBuildFCmp(b, LLVMRealOGT, xw, LLVMBuildFNeg(b, tmax, ""), ""), "tiny");
  /* every value below is defined (no poison) whatever x is */
  LLVMValueRef xd = LLVMBuildFPExt(b, LLVMBuildSelect(b, in, xw, LLVMConstReal(E->f32, 0.0), ""), E->f64, "xd");
  LLVMValueRef shifter = dc(E, 6755399441055744.0); /* 0x1.8p52 */
  LLVMValueRef kd = LLVMBuildFAdd(b, LLVMBuildFMul(b, xd, dc(E, UOPI_SIN_2_PI), ""), shifter, "");
  LLVMValueRef k = LLVMBuildFSub(b, kd, shifter, "k");
  LLVMValueRef q = LLVMBuildAnd(b, LLVMBuildBitCast(b, kd, E->i64, ""), LLVMConstInt(E->i64, 3, 0), "q");
  LLVMValueRef r = LLVMBuildFSub(b, xd, LLVMBuildFMul(b, k, dc(E, UOPI_SIN_P1), ""), "");
  r = LLVMBuildFSub(b, r, LLVMBuildFMul(b, k, dc(E, UOPI_SIN_P2), ""), "");
  r = LLVMBuildFSub(b, r, LLVMBuildFMul(b, k, dc(E, UOPI_SIN_P3), ""), "r");
  LLVMValueRef z = LLVMBuildFMul(b, r, r, "z");
  LLVMValueRef s = uopi_cg_fma_d(E, LLVMBuildFMul(b, r, z, ""), uopi_cg_horner_d(E, uopi_sin_taylor, UOPI_SIN_DEGREE, z), r);
  LLVMValueRef co = uopi_cg_fma_d(E, z, uopi_cg_horner_d(E, uopi_cos_taylor, UOPI_COS_DEGREE, z), dc(E, 1.0));
  LLVMValueRef odd = LLVMBuildTrunc(b, q, E->i1, "");
  LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, q, LLVMConstInt(E->i64, 2, 0), ""),
                                   LLVMConstInt(E->i64, 0, 0), "");
  LLVMValueRef y = LLVMBuildSelect(b, odd, co, s, "");
  y = LLVMBuildSelect(b, neg, LLVMBuildFNeg(b, y, ""), y, "");
  y = LLVMBuildSelect(b, tiny, LLVMBuildFPExt(b, xw, E->f64, ""), y, "y");
  LLVMValueRef ok = LLVMBuildAnd(b, in, LLVMBuildOr(b, tiny, uopi_cg_far_from_midpoint(E, y, h), ""), "ok");
  return uopi_cg_join_libm(E, ok, y, "sin", x, h);
}
