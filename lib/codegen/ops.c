/* lib/codegen/ops.c - the ALU ops as LLVM IR, each computing exactly what
 * uopc_exec_alu says (docs/lowering.md, "Ops"; the bit-exact rules of
 * /work/shared/notes/llvm-orc.md section 5):
 * no fast-math flags, no fmuladd, i32 wraparound (nsw only where bounds
 * prove no overflow), floor division with a divisor guard (no SIGFPE),
 * casts that never produce poison, libm's double exp2/log2/sin marked
 * nobuiltin so that LLVM neither folds nor narrows them (f32 and f16 exp2 inline
 * where provably the same bits, exp2.c; log2 and sin likewise, log2.c and
 * sin.c), max as
 * select(fcmp ogt) in the operand order of `b if b > a else a`.
 * In fast-math mode (E->fast) the float add, mul, max, exp2, log2 and sin
 * come from fastmath.c instead; everything else is the same.
 */
#include <string.h>

#include "codegen/cg.h"
#include "uopc/algebra.h"

static LLVMValueRef iconst(uopi_cg *E, LLVMTypeRef t, int64_t v) { return LLVMConstInt(t, (unsigned long long)v, 1); }

/* nsw when the interval of the exact result fits in i32 for every input. */
static int no_wrap(uopi_cg *E, const uopc_node *u) {
  int64_t a0 = uopc_vmin(E->c, u->src[0]), a1 = uopc_vmax(E->c, u->src[0]);
  int64_t b0 = uopc_vmin(E->c, u->src[1]), b1 = uopc_vmax(E->c, u->src[1]);
  int64_t lo, hi;
  if (u->op == UOPC_OP_ADD) {
    lo = a0 + b0, hi = a1 + b1;
  } else {
    int64_t p[4] = {a0 * b0, a0 * b1, a1 * b0, a1 * b1};
    lo = hi = p[0];
    for (int i = 1; i < 4; i++) lo = p[i] < lo ? p[i] : lo, hi = p[i] > hi ? p[i] : hi;
  }
  return lo >= INT32_MIN && hi <= INT32_MAX;
}

/* nuw as well when both operands are never negative (then no signed wrap
   means no unsigned wrap): alias analysis looks through zext(a + c) only
   with it, which the register tiles of plans (docs/loops.md) need. */
static void set_wrap_flags(uopi_cg *E, const uopc_node *u, LLVMValueRef r) {
  if (!no_wrap(E, u)) return;
  LLVMSetNSW(r, 1);
  if (uopc_vmin(E->c, u->src[0]) >= 0 && uopc_vmin(E->c, u->src[1]) >= 0) LLVMSetNUW(r, 1);
}

LLVMValueRef uopi_cg_libm_call(uopi_cg *E, const char *name, LLVMValueRef xd) {
  LLVMTypeRef ft = LLVMFunctionType(E->f64, &E->f64, 1, 0);
  LLVMValueRef f = LLVMGetNamedFunction(E->m, name);
  if (!f) f = LLVMAddFunction(E->m, name, ft);
  LLVMValueRef call = LLVMBuildCall2(E->b, ft, f, &xd, 1, name);
  /* nobuiltin: never folded, narrowed or replaced; memory(none) nounwind
     willreturn: the kernels never read errno, so a call that may set it can
     be scalarized under a mask inside a vectorized loop (exp2.c) */
  static const char *const attrs[] = {"nobuiltin", "memory", "nounwind", "willreturn"};
  for (int i = 0; i < 4; i++) {
    unsigned kind = LLVMGetEnumAttributeKindForName(attrs[i], strlen(attrs[i]));
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(E->lc, kind, 0));
  }
  return call;
}

static LLVMValueRef intrinsic1(uopi_cg *E, const char *name, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef f = LLVMGetIntrinsicDeclaration(E->m, id, &t, 1);
  return LLVMBuildCall2(E->b, LLVMIntrinsicGetType(E->lc, id, &t, 1), f, &x, 1, "r");
}

/* The double d rounded to f16 (to nearest, ties to even), exactly, in
   vector-friendly operations.  LLVM lowers `fptrunc double to half` without
   AVX512-FP16 to a call of __truncdfhf2 per element (it cannot go through
   f32: two roundings), which a vectorized loop then makes for every lane.
   Here: d rounded to f32 *to odd* (truncated toward zero, the last bit set
   when inexact), then to f16 by vcvtps2ph.  Rounding to odd with at least
   two bits more than the target makes the second rounding the correct one
   (Boldo and Melquiond, "When double rounding is odd"): f32 keeps 24 bits,
   f16 11, and f32 covers f16's range, subnormals included.  NaN, the
   infinities and exact values pass unchanged; a double beyond f32's range
   becomes FLT_MAX (odd, so f16 infinity), one below its subnormals the
   smallest f32 subnormal of its sign (f16 zero). */
LLVMValueRef uopi_cg_f64_to_f16(uopi_cg *E, LLVMValueRef d) {
  LLVMBuilderRef b = E->b;
  LLVMValueRef t = LLVMBuildFPTrunc(b, d, E->f32, "rn");
  LLVMValueRef back = LLVMBuildFPExt(b, t, E->f64, "");
  LLVMValueRef inexact = LLVMBuildFCmp(b, LLVMRealONE, back, d, "inexact"); /* false for NaN */
  LLVMValueRef away = LLVMBuildFCmp(b, LLVMRealOGT, intrinsic1(E, "llvm.fabs", back), intrinsic1(E, "llvm.fabs", d), "");
  LLVMValueRef tb = LLVMBuildBitCast(b, t, E->i32, "");
  LLVMValueRef tz = LLVMBuildSub(b, tb, LLVMBuildZExt(b, away, E->i32, ""), ""); /* toward zero */
  LLVMValueRef odd = LLVMBuildOr(b, tz, iconst(E, E->i32, 1), "");
  LLVMValueRef ro = LLVMBuildBitCast(b, LLVMBuildSelect(b, inexact, odd, tb, ""), E->f32, "ro");
  return LLVMBuildFPTrunc(b, ro, E->f16, "h");
}

static LLVMValueRef libm(uopi_cg *E, const char *name, LLVMValueRef x, uopc_dtype t) {
  LLVMValueRef call = uopi_cg_libm_call(E, name, LLVMBuildFPExt(E->b, x, E->f64, "wide"));
  if (t == UOPC_DT_F16) return uopi_cg_f64_to_f16(E, call);
  return LLVMBuildFPTrunc(E->b, call, uopi_cg_vtype(E, t), "r");
}

/* Python floor division / modulo on i32, never trapping. */
static LLVMValueRef floordiv(uopi_cg *E, const uopc_node *u, LLVMValueRef a, LLVMValueRef d, int mod) {
  const uopc_node *bn = u->src[1];
  if (bn->op == UOPC_OP_CONST && bn->arg.i > 0 && uopc_vmin(E->c, u->src[0]) >= 0)
    return mod ? LLVMBuildSRem(E->b, a, d, "mod") : LLVMBuildSDiv(E->b, a, d, "div");
  LLVMBuilderRef b = E->b;
  LLVMValueRef zero = iconst(E, E->i32, 0), one = iconst(E, E->i32, 1);
  LLVMValueRef bad = LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntEQ, d, zero, ""),
                                 LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, a, iconst(E, E->i32, INT32_MIN), ""),
                                              LLVMBuildICmp(b, LLVMIntEQ, d, iconst(E, E->i32, -1), ""), ""),
                                 "undef_div");
  LLVMValueRef ds = LLVMBuildSelect(b, bad, one, d, "d");
  if (bn->op != UOPC_OP_CONST) {
    /* A divisor known only at run time: floor(a / d) in double, which is
       exact for i32 operands.  a and d convert exactly; the quotient a/d is
       rounded by at most half an ulp, |a/d| * 2^-53 <= 2^-22 / |d|, while a
       quotient that is not an integer lies at least 1/|d| from the nearest
       one: floor sees the exact quotient's integer part, and the result
       (d != 0, not INT_MIN / -1) fits in i32.  x86 has no vector integer
       division: the loop vectorizer scalarized idiv (~6 cycles an element),
       where vdivpd divides 8 lanes (docs/loops.md, "Division").  A constant
       divisor keeps sdiv/srem, which LLVM turns into a multiply. */
    LLVMValueRef qd = LLVMBuildFDiv(b, LLVMBuildSIToFP(b, a, E->f64, "ad"), LLVMBuildSIToFP(b, ds, E->f64, "dd"), "qd");
    LLVMValueRef q = LLVMBuildFPToSI(b, intrinsic1(E, "llvm.floor", qd), E->i32, "q");
    if (!mod) return q;
    /* modulo 2^32 (no nsw): q*d itself may not fit (INT_MAX % -2: q*d = 2^31),
       a - q*d, the remainder, always does */
    return LLVMBuildSub(b, a, LLVMBuildMul(b, q, ds, ""), "mod");
  }
  LLVMValueRef q = LLVMBuildSDiv(b, a, ds, "q"), r = LLVMBuildSRem(b, a, ds, "r");
  LLVMValueRef adj = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntNE, r, zero, ""),
                                  LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildXor(b, r, ds, ""), zero, ""), "adj");
  if (mod) return LLVMBuildAdd(b, r, LLVMBuildSelect(b, adj, ds, zero, ""), "mod");
  return LLVMBuildSub(b, q, LLVMBuildZExt(b, adj, E->i32, ""), "div");
}

/* x as f32 when t is f16 (exact), else x.  LLVM 19 lowers a compare or a
   sqrt of f16 vectors without AVX512-FP16 one lane at a time (vcvtph2ps,
   vucomiss, setcc per lane: 32 of each per iteration), where the same
   operation on the lanes widened to f32 is one instruction per vector.  A
   compare of the widened values is the compare of the values; sqrt
   rounded to f32 and then to f16 is sqrt rounded to f16 (24 bits >= 2 * 11
   + 2: the double rounding is innocuous), which is how LLVM computes a
   scalar f16 sqrt anyway. */
static LLVMValueRef widen(uopi_cg *E, LLVMValueRef x, uopc_dtype t) {
  return t == UOPC_DT_F16 ? LLVMBuildFPExt(E->b, x, E->f32, "w") : x;
}

static LLVMValueRef cast(uopi_cg *E, LLVMValueRef x, uopc_dtype from, uopc_dtype to) {
  LLVMBuilderRef b = E->b;
  if (from == to) return x;
  int ff = uopc_dtype_is_float(from), tf = uopc_dtype_is_float(to);
  if (to == UOPC_DT_BOOL)
    return ff ? LLVMBuildFCmp(b, LLVMRealUNE, widen(E, x, from), LLVMConstReal(E->f32, 0.0), "tobool")
              : LLVMBuildICmp(b, LLVMIntNE, x, iconst(E, uopi_cg_vtype(E, from), 0), "tobool");
  if (from == UOPC_DT_BOOL) return tf ? LLVMBuildUIToFP(b, x, uopi_cg_vtype(E, to), "") : LLVMBuildZExt(b, x, E->i32, "");
  if (from == UOPC_DT_I32) return LLVMBuildSIToFP(b, x, uopi_cg_vtype(E, to), "");
  if (tf) return to == UOPC_DT_F16 ? LLVMBuildFPTrunc(b, x, E->f16, "") : LLVMBuildFPExt(b, x, E->f32, "");
  /* float -> i32: defined only for finite values whose truncation fits */
  LLVMValueRef w = LLVMBuildFPExt(b, x, E->f64, "");
  LLVMValueRef ok = LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOGT, w, LLVMConstReal(E->f64, -2147483649.0), ""),
                                 LLVMBuildFCmp(b, LLVMRealOLT, w, LLVMConstReal(E->f64, 2147483648.0), ""), "fits");
  LLVMValueRef v = LLVMBuildFreeze(b, LLVMBuildFPToSI(b, w, E->i32, ""), "");
  return LLVMBuildSelect(b, ok, v, iconst(E, E->i32, INT32_MIN), "toi32");
}

LLVMValueRef uopi_cg_alu(uopi_cg *E, const uopc_node *u, LLVMValueRef *s) {
  LLVMBuilderRef b = E->b;
  uopc_dtype t = (uopc_dtype)u->src[u->op == UOPC_OP_WHERE ? 1 : 0]->dtype;
  int fl = uopc_dtype_is_float(t);
  LLVMValueRef r;
  switch (u->op) {
  case UOPC_OP_ADD:
    if (t == UOPC_DT_BOOL) return LLVMBuildOr(b, s[0], s[1], "or");
    if (fl) return E->fast ? uopi_cg_fast_add(E, s[0], s[1]) : LLVMBuildFAdd(b, s[0], s[1], "add");
    r = LLVMBuildAdd(b, s[0], s[1], "add");
    set_wrap_flags(E, u, r);
    return r;
  case UOPC_OP_MUL:
    if (t == UOPC_DT_BOOL) return LLVMBuildAnd(b, s[0], s[1], "and");
    if (fl) return E->fast ? uopi_cg_fast_mul(E, s[0], s[1]) : LLVMBuildFMul(b, s[0], s[1], "mul");
    r = LLVMBuildMul(b, s[0], s[1], "mul");
    set_wrap_flags(E, u, r);
    return r;
  case UOPC_OP_MAX: /* b if b > a else a */
    if (t == UOPC_DT_BOOL) return LLVMBuildOr(b, s[0], s[1], "max");
    /* f16 in fast mode as in strict: the fast select on half vectors runs one
       lane at a time, and widened with fast flags the vectorizer no longer
       sees a max reduction (a 256 x 65536 max: 27 -> 133 ms); strict's
       widened compare vectorizes elementwise (141 -> 3.8 us at 64K) and runs a
       reduction as strict mode does (19 ms) */
    if (fl && E->fast && t != UOPC_DT_F16) return uopi_cg_fast_max(E, s[0], s[1]);
    r = fl ? LLVMBuildFCmp(b, LLVMRealOGT, widen(E, s[1], t), widen(E, s[0], t), "")
           : LLVMBuildICmp(b, LLVMIntSGT, s[1], s[0], "");
    return LLVMBuildSelect(b, r, s[1], s[0], "max");
  case UOPC_OP_CMPLT:
    if (fl) return LLVMBuildFCmp(b, LLVMRealOLT, widen(E, s[0], t), widen(E, s[1], t), "lt");
    return LLVMBuildICmp(b, t == UOPC_DT_BOOL ? LLVMIntULT : LLVMIntSLT, s[0], s[1], "lt");
  case UOPC_OP_CMPNE:
    return fl ? LLVMBuildFCmp(b, LLVMRealUNE, widen(E, s[0], t), widen(E, s[1], t), "ne")
              : LLVMBuildICmp(b, LLVMIntNE, s[0], s[1], "ne");
  case UOPC_OP_FLOORDIV: return floordiv(E, u, s[0], s[1], 0);
  case UOPC_OP_FLOORMOD: return floordiv(E, u, s[0], s[1], 1);
  case UOPC_OP_WHERE: return LLVMBuildSelect(b, s[0], s[1], s[2], "where");
  case UOPC_OP_RECIP: return LLVMBuildFDiv(b, LLVMConstReal(uopi_cg_vtype(E, t), 1.0), s[0], "recip");
  case UOPC_OP_SQRT:
    if (t == UOPC_DT_F16) return LLVMBuildFPTrunc(b, intrinsic1(E, "llvm.sqrt", widen(E, s[0], t)), E->f16, "sqrt");
    return intrinsic1(E, "llvm.sqrt", s[0]);
  case UOPC_OP_EXP2:
  case UOPC_OP_LOG2:
  case UOPC_OP_SIN:
    if (E->fast) return uopi_cg_fast_unary(E, (uopc_op)u->op, s[0], t);
    if (u->op == UOPC_OP_EXP2 && (t == UOPC_DT_F32 || t == UOPC_DT_F16)) return uopi_cg_exp2(E, s[0], t);
    if (u->op == UOPC_OP_LOG2 && (t == UOPC_DT_F32 || t == UOPC_DT_F16)) return uopi_cg_log2(E, s[0], t);
    if (u->op == UOPC_OP_SIN && (t == UOPC_DT_F32 || t == UOPC_DT_F16)) return uopi_cg_sin(E, s[0], t);
    return libm(E, u->op == UOPC_OP_EXP2 ? "exp2" : u->op == UOPC_OP_LOG2 ? "log2" : "sin", s[0], t);
  case UOPC_OP_CAST: return cast(E, s[0], t, (uopc_dtype)u->dtype);
  default: uopi_cg_fail(E, "%s cannot be compiled", uopc_op_name((uopc_op)u->op)); return NULL;
  }
}

LLVMValueRef uopi_cg_const(uopi_cg *E, const uopc_node *u) {
  uopc_dtype t = (uopc_dtype)u->dtype;
  if (uopc_dtype_is_float(t)) return LLVMConstReal(uopi_cg_vtype(E, t), u->arg.f);
  return iconst(E, uopi_cg_vtype(E, t), u->arg.i);
}
