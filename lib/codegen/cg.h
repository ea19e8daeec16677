/* lib/codegen/cg.h - what the emitter's files share (emit.c: the program's
 * instructions, loops and memory; ops.c: the ALU ops, bit-exact; fastmath.c:
 * the float ops of fast-math mode).
 */
#ifndef UOPI_CODEGEN_CG_H
#define UOPI_CODEGEN_CG_H

#include <llvm-c/Core.h>

#include "codegen/emit.h"

typedef struct uopi_cg {
  uopc_ctx *c;                /* errors and the allocator */
  LLVMContextRef lc;
  LLVMModuleRef m;
  LLVMBuilderRef b;
  uopi_jit_kernel *k;         /* the kernel function being built (lib/jit/entry.c) */
  LLVMValueRef fn;            /* the kernel function */
  LLVMValueRef status;        /* the pointer to its i32 status word (argument nbufs) */
  uint32_t nbufs;
  int fast;                   /* fast-math mode (UOPC_COMPILE_FAST_MATH; docs/fast-math.md) */
  int sfence;                 /* in the streaming copy: every return fences (emit.c) */
  LLVMTypeRef i1, i8, i16, i32, i64, f16, f32, f64, ptr;
  int failed;
} uopi_cg;

/* Records the first error (UOPC_ERR_TYPE) in the context; returns 0. */
UOPI_FUNC int uopi_cg_fail(uopi_cg *E, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The LLVM type of a value of dtype t (bool is i1) and of its memory (bool
   is one byte). */
UOPI_FUNC LLVMTypeRef uopi_cg_vtype(uopi_cg *E, uopc_dtype t);
UOPI_FUNC LLVMTypeRef uopi_cg_mtype(uopi_cg *E, uopc_dtype t);

/* ops.c: the CONST node u as an LLVM constant. */
UOPI_FUNC LLVMValueRef uopi_cg_const(uopi_cg *E, const uopc_node *u);
/* ops.c: the ALU node u applied to its operands' values s[0..nsrc), at the
   builder's position, computing exactly what uopc_exec_alu says; NULL (with
   the error recorded) for an op that cannot be compiled. */
UOPI_FUNC LLVMValueRef uopi_cg_alu(uopi_cg *E, const uopc_node *u, LLVMValueRef *s);

/* fastmath.c (fast-math mode only, E->fast): add (fmuladd when an operand
   is an fmul), mul, max with the fast-math flags of docs/fast-math.md, and
   exp2/log2/sin (op) of x of dtype t (f32 or f16) as inline polynomials. */
UOPI_FUNC LLVMValueRef uopi_cg_fast_add(uopi_cg *E, LLVMValueRef a, LLVMValueRef b);
UOPI_FUNC LLVMValueRef uopi_cg_fast_mul(uopi_cg *E, LLVMValueRef a, LLVMValueRef b);
UOPI_FUNC LLVMValueRef uopi_cg_fast_max(uopi_cg *E, LLVMValueRef a, LLVMValueRef b);
UOPI_FUNC LLVMValueRef uopi_cg_fast_unary(uopi_cg *E, uopc_op op, LLVMValueRef x, uopc_dtype t);

/* ops.c: a call of libm's double function `name` (exp2, log2, sin) on the
   double xd, marked so that LLVM never folds, narrows or replaces it. */
UOPI_FUNC LLVMValueRef uopi_cg_libm_call(uopi_cg *E, const char *name, LLVMValueRef xd);

/* certain.c: what exp2.c, log2.c and sin.c share.  uopi_cg_libm_call marked with
   a masked two-lane vector variant (uopc_NAME_m2), so that a loop with the
   call in a conditional block can still be vectorized (the call scalarized
   under the mask). */
UOPI_FUNC LLVMValueRef uopi_cg_libm_call_masked(uopi_cg *E, const char *name, LLVMValueRef xd);
/* llvm.fma on doubles. */
UOPI_FUNC LLVMValueRef uopi_cg_fma_d(uopi_cg *E, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c);
/* The double polynomial coef[0] + z * (coef[1] + z * (... + z * coef[n-1]))
   by Horner's rule with uopi_cg_fma_d (n >= 1). */
UOPI_FUNC LLVMValueRef uopi_cg_horner_d(uopi_cg *E, const double *coef, int n, LLVMValueRef z);
/* The margin from a midpoint (in double ulps) beyond which the rounding of
   an inline double is certainly libm's: each inline function's double is
   within 2^12 ulps of libm's (exp2.c, log2.c, sin.c). */
#define UOPI_CERTAIN_T (1u << 16)
/* i1: the double y is more than UOPI_CERTAIN_T ulps from a midpoint of f32
   (h = 0) or of f16 (h = 1, y's f16 rounding normal). */
UOPI_FUNC LLVMValueRef uopi_cg_far_from_midpoint(uopi_cg *E, LLVMValueRef y, int h);
/* The result: where ok, the double y rounded to f32 (f16 when h); elsewhere
   libm's double `name` of x (the f32 or f16 operand) rounded alike, through
   a block of its own.  Leaves the builder after the join. */
UOPI_FUNC LLVMValueRef uopi_cg_join_libm(uopi_cg *E, LLVMValueRef ok, LLVMValueRef y, const char *name, LLVMValueRef x,
                                         int h);

/* ops.c: the double d rounded to f16 exactly (to nearest even), without
   the per-element __truncdfhf2 call LLVM makes of `fptrunc double to half`. */
UOPI_FUNC LLVMValueRef uopi_cg_f64_to_f16(uopi_cg *E, LLVMValueRef d);

/* exp2.c (strict mode): exp2 of x, an f32 or f16 (dt), bit for bit libm's
   double exp2 of it rounded to dt, inline where that is provably the same
   and through the libm call elsewhere (a branch to a block of its own). */
UOPI_FUNC LLVMValueRef uopi_cg_exp2(uopi_cg *E, LLVMValueRef x, uopc_dtype dt);
/* Its constants (test/test_exp2.cpp checks the error bound they imply):
   the inline path serves an f32 x in [LO, HI] whose double is more than T
   ulps from an f32 midpoint, an f16 x in [LO16, HI16] (normal f16 results)
   more than T ulps from an f16 midpoint; 2^t on |t| <= 1/2 is the Taylor
   polynomial of degree DEGREE with the coefficients
   uopi_exp2_taylor[0..DEGREE]. */
#define UOPI_EXP2_LO (-125.0)
#define UOPI_EXP2_HI 127.0
#define UOPI_EXP2_LO16 (-14.0)
#define UOPI_EXP2_HI16 15.9921875 /* the largest f16 below 16: exp2 of it is 65,174 < 65,504 */
#define UOPI_EXP2_DEGREE 10
extern __attribute__((visibility("hidden"))) const double uopi_exp2_taylor[UOPI_EXP2_DEGREE + 1];

/* log2.c (strict mode): log2 of x, an f32 or f16 (dt), bit for bit libm's
   double log2 of it rounded to dt, inline for positive finite x whose
   double is more than UOPI_CERTAIN_T ulps from a midpoint of dt, through the
   libm call elsewhere.  The inline double: x = m * 2^e with m in
   [sqrt(1/2), sqrt(2)], s = (m - 1) / (m + 1), log2(x) = e + (2s * P(s^2)) /
   ln 2 with P the atanh series to degree UOPI_LOG2_DEGREE in s^2. */
UOPI_FUNC LLVMValueRef uopi_cg_log2(uopi_cg *E, LLVMValueRef x, uopc_dtype dt);
#define UOPI_LOG2_DEGREE 11
#define UOPI_LOG2_SQRT2 1.4142135623730951
#define UOPI_LOG2_INVLN2 1.4426950408889634

/* sin.c (strict mode): sin of x, an f32 or f16 (dt), bit for bit libm's
   double sin of it rounded to dt, inline for |x| <= UOPI_SIN_XMAX whose
   double is more than UOPI_CERTAIN_T ulps from a midpoint of dt (or |x| <
   TINY: x itself), through the libm call elsewhere.  The inline double: k =
   rint(x * 2/pi), r = x - k * (P1 + P2 + P3) (Cody and Waite), +-sin r or
   +-cos r by k mod 4, Taylor polynomials in r^2 of DEGREE terms. */
UOPI_FUNC LLVMValueRef uopi_cg_sin(uopi_cg *E, LLVMValueRef x, uopc_dtype dt);
#define UOPI_SIN_XMAX 1048576.0          /* 2^20: |k| < 2^20, k * P1 and k * P2 exact */
#define UOPI_SIN_TINY 0x1p-26            /* f32: below, libm's sin(x) is x */
#define UOPI_SIN_TINY16 0x1p-13          /* f16: below, sin(x) rounds to x */
#define UOPI_SIN_2_PI 0x1.45f306dc9c883p-1
#define UOPI_SIN_P1 0x1.921fb54400000p+0 /* pi/2 to 33 bits */
#define UOPI_SIN_P2 0x1.0b4611a600000p-34 /* the next 33 bits */
#define UOPI_SIN_P3 0x1.3198a2e037073p-69 /* the rest, to a double */
#define UOPI_SIN_DEGREE 8
#define UOPI_COS_DEGREE 9
extern __attribute__((visibility("hidden"))) const double uopi_sin_taylor[UOPI_SIN_DEGREE];
extern __attribute__((visibility("hidden"))) const double uopi_cos_taylor[UOPI_COS_DEGREE];

#endif
