/* lib/codegen/fastmath.c - the float ops of fast-math mode
 * (UOPC_COMPILE_FAST_MATH; docs/fast-math.md), all in one place.  Strict
 * mode (ops.c) never reaches this file.
 *
 *   add, mul  fadd/fmul with `reassoc contract`: a reduction's sum may be
 *             reordered (so the loop vectorizer turns it into vector
 *             accumulators) and a multiply may fuse with an add;
 *             add(mul(a, b), c) is llvm.fmuladd(a, b, c), which the backend
 *             makes one FMA on a host that has it (and which the vectorizer
 *             knows as a reduction, FMulAdd)
 *   max       select(fcmp ogt) as in strict mode, with `nnan nsz`: what the
 *             vectorizer needs to take it as an FMax reduction (a NaN
 *             operand gives an unspecified value)
 *   exp2, log2, sin on f32 (f16: through f32)
 *             inline polynomials (Cephes' exp2f, log2f, sinf/cosf
 *             coefficients) with the special values handled by selects:
 *             no calls, no branches, so loops of them vectorize.  The
 *             errors against strict mode (libm's double function rounded
 *             to f32), measured over all 2^32 inputs by
 *             bench/fast_math_ulp.c, are in docs/fast-math.md.
 *
 * The polynomials' own arithmetic has no fast-math flags: their results do
 * not depend on the tier or on what the optimizer does.
 */
#include <string.h>

#include "codegen/cg.h"

static LLVMValueRef fc(uopi_cg *E, double v) { return LLVMConstReal(E->f32, v); }
static LLVMValueRef ic(uopi_cg *E, int64_t v) { return LLVMConstInt(E->i32, (unsigned long long)v, 1); }

static LLVMValueRef call1(uopi_cg *E, const char *name, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef f = LLVMGetIntrinsicDeclaration(E->m, id, &t, 1);
  return LLVMBuildCall2(E->b, LLVMIntrinsicGetType(E->lc, id, &t, 1), f, &x, 1, "");
}

static LLVMValueRef add(uopi_cg *E, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(E->b, a, b, ""); }
static LLVMValueRef sub(uopi_cg *E, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub(E->b, a, b, ""); }
static LLVMValueRef mul(uopi_cg *E, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(E->b, a, b, ""); }
static LLVMValueRef sel(uopi_cg *E, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(E->b, c, a, b, "");
}
static LLVMValueRef fcmp(uopi_cg *E, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFCmp(E->b, p, a, b, "");
}

/* p[0]*x^(n-1) + ... + p[n-1], Horner. */
static LLVMValueRef horner(uopi_cg *E, LLVMValueRef x, const double *p, int n) {
  LLVMValueRef r = fc(E, p[0]);
  for (int i = 1; i < n; i++) r = add(E, mul(E, r, x), fc(E, p[i]));
  return r;
}

/* 2^x: n = rint(x) (x clamped to [-150, 128]; NaN to -150), f = x - n in
   [-0.5, 0.5] (exact), 2^f = 1 + f*P(f) (degree 6), times 2^n as two
   powers of two built from bits (2^(n>>1) * 2^(n - (n>>1)): both normal, so
   a subnormal result is rounded once).  x >= 128: +inf; x <= -150: +0 (the
   clamp gives 2^-150, which rounds to 0); NaN: x. */
static LLVMValueRef exp2f_ir(uopi_cg *E, LLVMValueRef x) {
  static const double P[] = {1.535336188319500E-004, 1.339887440266574E-003, 9.618437357674640E-003,
                             5.550332471162809E-002, 2.402264791363012E-001, 6.931472028550421E-001};
  LLVMBuilderRef b = E->b;
  LLVMValueRef xc = sel(E, fcmp(E, LLVMRealOGT, x, fc(E, -150.0)), x, fc(E, -150.0));
  xc = sel(E, fcmp(E, LLVMRealOLT, xc, fc(E, 128.0)), xc, fc(E, 128.0));
  LLVMValueRef n = call1(E, "llvm.rint", xc);
  LLVMValueRef f = sub(E, xc, n);
  LLVMValueRef p = add(E, fc(E, 1.0), mul(E, horner(E, f, P, 6), f));
  LLVMValueRef ni = LLVMBuildFPToSI(b, n, E->i32, "");
  LLVMValueRef a = LLVMBuildAShr(b, ni, ic(E, 1), "");
  LLVMValueRef c = LLVMBuildSub(b, ni, a, "");
  LLVMValueRef s1 = LLVMBuildBitCast(b, LLVMBuildShl(b, LLVMBuildAdd(b, a, ic(E, 127), ""), ic(E, 23), ""), E->f32, "");
  LLVMValueRef s2 = LLVMBuildBitCast(b, LLVMBuildShl(b, LLVMBuildAdd(b, c, ic(E, 127), ""), ic(E, 23), ""), E->f32, "");
  LLVMValueRef r = mul(E, mul(E, p, s1), s2);
  r = sel(E, fcmp(E, LLVMRealOGE, x, fc(E, 128.0)), fc(E, __builtin_inf()), r);
  return sel(E, fcmp(E, LLVMRealUNO, x, x), x, r);
}

/* log2(x): a subnormal x is scaled by 2^23 first; x = 2^e * m with m in
   [sqrt(1/2), sqrt(2)) from the bits, t = m - 1 (exact), log(m) = t - t^2/2
   + t^3 P(t) (degree 8), log2(x) = e + log(m) * log2(e) summed as Cephes
   does (log2(e) - 1 split off).  +-0: -inf; x < 0: NaN; +inf: +inf; NaN: x. */
static LLVMValueRef log2f_ir(uopi_cg *E, LLVMValueRef x) {
  static const double P[] = {7.0376836292E-2,  -1.1514610310E-1, 1.1676998740E-1,
                             -1.2420140846E-1, 1.4249322787E-1,  -1.6668057665E-1,
                             2.0000714765E-1,  -2.4999993993E-1, 3.3333331174E-1};
  const double LOG2EA = 0.44269504088896340735992; /* log2(e) - 1 */
  LLVMBuilderRef b = E->b;
  LLVMValueRef den = fcmp(E, LLVMRealOLT, x, fc(E, 0x1p-126));
  LLVMValueRef xs = sel(E, den, mul(E, x, fc(E, 0x1p23)), x);
  LLVMValueRef eadj = sel(E, den, ic(E, -23), ic(E, 0));
  LLVMValueRef ix = LLVMBuildSub(b, LLVMBuildBitCast(b, xs, E->i32, ""), ic(E, 0x3f3504f3), "");
  LLVMValueRef e = LLVMBuildAdd(b, LLVMBuildAShr(b, ix, ic(E, 23), ""), eadj, "");
  LLVMValueRef mb = LLVMBuildAdd(b, LLVMBuildAnd(b, ix, ic(E, 0x7fffff), ""), ic(E, 0x3f3504f3), "");
  LLVMValueRef t = sub(E, LLVMBuildBitCast(b, mb, E->f32, ""), fc(E, 1.0));
  LLVMValueRef z = mul(E, t, t);
  LLVMValueRef y = mul(E, t, mul(E, z, horner(E, t, P, 9)));
  y = add(E, y, mul(E, fc(E, -0.5), z));
  LLVMValueRef r = mul(E, y, fc(E, LOG2EA));
  r = add(E, r, mul(E, t, fc(E, LOG2EA)));
  r = add(E, r, y);
  r = add(E, r, t);
  r = add(E, r, LLVMBuildSIToFP(b, e, E->f32, ""));
  r = sel(E, fcmp(E, LLVMRealOEQ, x, fc(E, 0.0)), fc(E, -__builtin_inf()), r);
  r = sel(E, fcmp(E, LLVMRealOLT, x, fc(E, 0.0)), fc(E, __builtin_nan("")), r);
  r = sel(E, fcmp(E, LLVMRealOEQ, x, fc(E, __builtin_inf())), x, r);
  return sel(E, fcmp(E, LLVMRealUNO, x, x), x, r);
}

/* sin(x): k = rint(x * 2/pi) and r = x - k*pi/2 in double (FreeBSD's
   __rem_pio2f medium case: pi/2 as 33 + 53 bits), r rounded to f32, then
   sin or cos of r (Cephes' degree 7 and 8 polynomials on [-pi/4, pi/4]) by
   k's low bit, negated when bit 1 is set; |x| < 2^-12: x itself (sin x
   rounds to x there, and -0 stays -0).  |x| >= SIN_MAX (where the
   reduction loses its accuracy), +-inf and NaN: NaN. */
#define SIN_MAX 0x1p24
static LLVMValueRef sinf_ir(uopi_cg *E, LLVMValueRef x) {
  static const double S[] = {-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1};
  static const double C[] = {2.443315711809948E-005, -1.388731625493765E-003, 4.166664568298827E-002};
  LLVMBuilderRef b = E->b;
  LLVMValueRef xd = LLVMBuildFPExt(b, x, E->f64, "");
  LLVMValueRef k = call1(E, "llvm.rint", mul(E, xd, LLVMConstReal(E->f64, 6.36619772367581382433e-01)));
  LLVMValueRef ki = LLVMBuildFreeze(b, LLVMBuildFPToSI(b, k, E->i32, ""), ""); /* out of range: any, see big */
  LLVMValueRef rd = sub(E, xd, mul(E, k, LLVMConstReal(E->f64, 1.57079632673412561417e+00)));
  rd = sub(E, rd, mul(E, k, LLVMConstReal(E->f64, 6.07710050650619224932e-11)));
  LLVMValueRef r = LLVMBuildFPTrunc(b, rd, E->f32, "");
  LLVMValueRef big = fcmp(E, LLVMRealUGE, call1(E, "llvm.fabs", x), fc(E, SIN_MAX));
  LLVMValueRef z = mul(E, r, r);
  LLVMValueRef s = add(E, mul(E, mul(E, horner(E, z, S, 3), z), r), r);
  LLVMValueRef c = mul(E, mul(E, horner(E, z, C, 3), z), z);
  c = add(E, sub(E, c, mul(E, fc(E, 0.5), z)), fc(E, 1.0));
  LLVMValueRef odd = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, ki, ic(E, 1), ""), ic(E, 0), "");
  LLVMValueRef v = LLVMBuildBitCast(b, sel(E, odd, c, s), E->i32, "");
  LLVMValueRef sign = LLVMBuildShl(b, LLVMBuildAnd(b, ki, ic(E, 2), ""), ic(E, 30), "");
  LLVMValueRef res = LLVMBuildBitCast(b, LLVMBuildXor(b, v, sign, ""), E->f32, "");
  res = sel(E, fcmp(E, LLVMRealOLT, call1(E, "llvm.fabs", x), fc(E, 0x1p-12)), x, res); /* sin x rounds to x: keeps -0 */
  return sel(E, big, fc(E, __builtin_nan("")), res);
}

LLVMValueRef uopi_cg_fast_unary(uopi_cg *E, uopc_op op, LLVMValueRef x, uopc_dtype t) {
  LLVMValueRef w = t == UOPC_DT_F16 ? LLVMBuildFPExt(E->b, x, E->f32, "wide") : x;
  LLVMValueRef r = op == UOPC_OP_EXP2 ? exp2f_ir(E, w) : op == UOPC_OP_LOG2 ? log2f_ir(E, w) : sinf_ir(E, w);
  return t == UOPC_DT_F16 ? LLVMBuildFPTrunc(E->b, r, E->f16, "r") : r;
}

static void flags(LLVMValueRef v, LLVMFastMathFlags f) {
  if (LLVMCanValueUseFastMathFlags(v)) LLVMSetFastMathFlags(v, f);
}

LLVMValueRef uopi_cg_fast_add(uopi_cg *E, LLVMValueRef a, LLVMValueRef b) {
  const LLVMFastMathFlags f = LLVMFastMathAllowReassoc | LLVMFastMathAllowContract;
  for (int i = 0; i < 2; i++) { /* add(mul(x, y), c) or add(c, mul(x, y)): fmuladd(x, y, c) */
    LLVMValueRef m = i ? b : a, other = i ? a : b;
    if (!LLVMIsAInstruction(m) || LLVMGetInstructionOpcode(m) != LLVMFMul) continue;
    LLVMValueRef ops[3] = {LLVMGetOperand(m, 0), LLVMGetOperand(m, 1), other};
    LLVMTypeRef t = LLVMTypeOf(other);
    unsigned id = LLVMLookupIntrinsicID("llvm.fmuladd", 12);
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(E->m, id, &t, 1);
    LLVMValueRef r = LLVMBuildCall2(E->b, LLVMIntrinsicGetType(E->lc, id, &t, 1), fn, ops, 3, "fma");
    flags(r, f);
    return r;
  }
  LLVMValueRef r = LLVMBuildFAdd(E->b, a, b, "add");
  flags(r, f);
  return r;
}

LLVMValueRef uopi_cg_fast_mul(uopi_cg *E, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef r = LLVMBuildFMul(E->b, a, b, "mul");
  flags(r, LLVMFastMathAllowReassoc | LLVMFastMathAllowContract);
  return r;
}

LLVMValueRef uopi_cg_fast_max(uopi_cg *E, LLVMValueRef a, LLVMValueRef b) {
  const LLVMFastMathFlags f = LLVMFastMathNoNaNs | LLVMFastMathNoSignedZeros;
  LLVMValueRef c = LLVMBuildFCmp(E->b, LLVMRealOGT, b, a, "");
  flags(c, f);
  LLVMValueRef r = LLVMBuildSelect(E->b, c, b, a, "max");
  flags(r, f);
  return r;
}
