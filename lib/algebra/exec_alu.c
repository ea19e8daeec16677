/* lib/algebra/exec_alu.c - the reference semantics of every ALU op (seed
 * 3.2 exec_alu).  docs/semantics.md is the table this file implements; the
 * two must change together.
 *
 * Floats: the inputs are rounded to their dtype, the op is computed once in
 * double and the result rounded once to the dtype.  For + * / sqrt that is
 * the correctly rounded f32/f16 result (double has more than 2p+2 bits for
 * p = 24 and p = 11); EXP2, LOG2 and SIN are by definition libm's double
 * functions rounded to the dtype.  No undefined behaviour: i32 arithmetic is
 * done in int64 and wrapped, division cases that trap are refused before
 * dividing, and a float is converted to int only when it fits.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "algebra/exec_alu_vec.h"
#include "algebra/fround.h"
#include "support/support.h"
#include "internal.h"
#include "uopc/algebra.h"

#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 2
#error "exec_alu needs double arithmetic rounded to double (FLT_EVAL_METHOD 0 or 1), not x87 long double"
#endif

static int is_value_dtype(uopc_dtype t) {
  return t == UOPC_DT_BOOL || t == UOPC_DT_I32 || t == UOPC_DT_F32 || t == UOPC_DT_F16;
}


/* The (op, out_t, in_t) triples exec_alu computes; everything else gives 0.
   Mirrors the opcode table of docs/uir.md. */
static int in_domain(uopc_op op, uopc_dtype out_t, uopc_dtype in_t) {
  if (!is_value_dtype(in_t) || !is_value_dtype(out_t)) return 0;
  switch (op) {
  case UOPC_OP_ADD:
  case UOPC_OP_MUL:
  case UOPC_OP_MAX:
  case UOPC_OP_WHERE: return out_t == in_t;
  case UOPC_OP_CMPLT:
  case UOPC_OP_CMPNE: return out_t == UOPC_DT_BOOL;
  case UOPC_OP_FLOORDIV:
  case UOPC_OP_FLOORMOD: return out_t == UOPC_DT_I32 && in_t == UOPC_DT_I32;
  case UOPC_OP_RECIP:
  case UOPC_OP_EXP2:
  case UOPC_OP_LOG2:
  case UOPC_OP_SQRT:
  case UOPC_OP_SIN: return out_t == in_t && uopc_dtype_is_float(in_t);
  case UOPC_OP_CAST: return 1;
  default: return 0;
  }
}

static int is_unary(uopc_op op) {
  return op == UOPC_OP_RECIP || op == UOPC_OP_EXP2 || op == UOPC_OP_LOG2 || op == UOPC_OP_SQRT || op == UOPC_OP_SIN ||
         op == UOPC_OP_CAST;
}

/* uopc_round_f16/_f32, inlined (fround.h: the same bits). */
static inline double round_to(uopc_dtype t, double x) {
  return t == UOPC_DT_F16 ? uopi_round_f16(x) : uopi_round_f32(x);
}

static int put_int(uopc_val *out, int64_t v) {
  out->i = v;
  out->f = 0.0;
  return 1;
}

/* Every NaN result is the one positive quiet NaN (x86 and ARM disagree on
   the sign of a generated NaN; the IR has a single NaN constant). */
static inline int put_float(uopc_dtype t, uopc_val *out, double x) {
  x = t == UOPC_DT_F16 ? uopi_round_f16(x) : uopi_round_f32_nan_any(x); /* round_to, but any NaN: replaced below */
  out->i = 0;
  out->f = isnan(x) ? (double)NAN : x;
  return 1;
}

/* Float operands a, b already rounded to in_t. */
static int float_op(uopc_op op, uopc_dtype out_t, double a, double b, int cond, uopc_val *out) {
  switch (op) {
  case UOPC_OP_ADD: return put_float(out_t, out, a + b);
  case UOPC_OP_MUL: return put_float(out_t, out, a * b);
  case UOPC_OP_MAX: return put_float(out_t, out, b > a ? b : a);
  case UOPC_OP_CMPLT: return put_int(out, a < b);
  case UOPC_OP_CMPNE: return put_int(out, a != b);
  case UOPC_OP_WHERE: return put_float(out_t, out, cond ? a : b);
  /* 1/0 is decided here: ISO C leaves float division by zero undefined. */
  case UOPC_OP_RECIP: return put_float(out_t, out, a == 0.0 ? copysign(INFINITY, a) : 1.0 / a);
  case UOPC_OP_SQRT: return put_float(out_t, out, sqrt(a));
  case UOPC_OP_EXP2: return put_float(out_t, out, exp2(a));
  case UOPC_OP_LOG2: return put_float(out_t, out, log2(a));
  case UOPC_OP_SIN: return put_float(out_t, out, sin(a));
  case UOPC_OP_CAST:
    switch (out_t) {
    case UOPC_DT_BOOL: return put_int(out, a != 0.0);   /* NaN != 0 */
    case UOPC_DT_I32: {
      if (!isfinite(a)) return 0;
      double t = trunc(a);
      if (t < -2147483648.0 || t > 2147483647.0) return 0;
      return put_int(out, (int32_t)t);
    }
    default: return put_float(out_t, out, a);
    }
  default: return 0;
  }
}

/* i32 operands a, b (already wrapped); also used for bool casts' sources. */
static int i32_op(uopc_op op, uopc_dtype out_t, int64_t a, int64_t b, int cond, uopc_val *out) {
  switch (op) {
  case UOPC_OP_ADD: return put_int(out, uopc_wrap_i32(a + b));
  case UOPC_OP_MUL: return put_int(out, uopc_wrap_i32(a * b));   /* |a*b| <= 2^62 */
  case UOPC_OP_MAX: return put_int(out, b > a ? b : a);
  case UOPC_OP_CMPLT: return put_int(out, a < b);
  case UOPC_OP_CMPNE: return put_int(out, a != b);
  case UOPC_OP_WHERE: return put_int(out, cond ? a : b);
  case UOPC_OP_FLOORDIV:
  case UOPC_OP_FLOORMOD: {
    if (b == 0 || (a == INT32_MIN && b == -1)) return 0;   /* C traps (SIGFPE on x86) */
    return put_int(out, op == UOPC_OP_FLOORDIV ? uopi_floordiv64(a, b) : uopi_floormod64(a, b));
  }
  case UOPC_OP_CAST:
    switch (out_t) {
    case UOPC_DT_BOOL: return put_int(out, a != 0);
    case UOPC_DT_I32: return put_int(out, a);
    default: return put_float(out_t, out, (double)a);   /* exact in double; one rounding */
    }
  default: return 0;
  }
}

static int bool_op(uopc_op op, uopc_dtype out_t, int64_t a, int64_t b, int cond, uopc_val *out) {
  switch (op) {
  case UOPC_OP_ADD:
  case UOPC_OP_MAX: return put_int(out, a | b);
  case UOPC_OP_MUL: return put_int(out, a & b);
  case UOPC_OP_CMPLT: return put_int(out, a < b);
  case UOPC_OP_CMPNE: return put_int(out, a != b);
  case UOPC_OP_WHERE: return put_int(out, cond ? a : b);
  case UOPC_OP_CAST: return i32_op(op, out_t, a, 0, 0, out);   /* 0/1 as an integer */
  default: return 0;
  }
}

/* Everything but the fast path below, out of line so that the fast path
   stays a leaf that saves no registers. */
__attribute__((noinline)) static int exec_general(uopc_op op, uopc_dtype out_t, uopc_dtype in_t, const uopc_val *in,
                                                  uopc_val *out) {
  if (in == NULL || out == NULL || !in_domain(op, out_t, in_t)) return 0;
  /* Value operands: in[0], in[1] (binary), or in[1], in[2] after WHERE's
     condition in[0]. */
  int nval = is_unary(op) ? 1 : 2;
  const uopc_val *v = op == UOPC_OP_WHERE ? in + 1 : in;
  int cond = op == UOPC_OP_WHERE ? in[0].i != 0 : 0;
  switch (in_t) {
  case UOPC_DT_F32:
  case UOPC_DT_F16: {
    double a = round_to(in_t, v[0].f), b = nval == 2 ? round_to(in_t, v[1].f) : 0.0;
    return float_op(op, out_t, a, b, cond, out);
  }
  case UOPC_DT_I32: {
    int64_t a = uopc_wrap_i32(v[0].i), b = nval == 2 ? uopc_wrap_i32(v[1].i) : 0;
    return i32_op(op, out_t, a, b, cond, out);
  }
  case UOPC_DT_BOOL: {
    int64_t a = v[0].i != 0, b = nval == 2 ? v[1].i != 0 : 0;
    return bool_op(op, out_t, a, b, cond, out);
  }
  default: return 0;
  }
}

int uopc_exec_alu(uopc_op op, uopc_dtype out_t, uopc_dtype in_t, const uopc_val *in, uopc_val *out) {
  /* The common float binary ops first, without the general dispatch (the
     fuzzer calls this once per case): the same arithmetic as float_op. */
  if (in != NULL && out != NULL && out_t == in_t) {
    if (in_t == UOPC_DT_F32) {
      if (op == UOPC_OP_ADD) return put_float(UOPC_DT_F32, out, uopi_round_f32_nan_any(in[0].f) + uopi_round_f32_nan_any(in[1].f));
      if (op == UOPC_OP_MUL) return put_float(UOPC_DT_F32, out, uopi_round_f32_nan_any(in[0].f) * uopi_round_f32_nan_any(in[1].f));
    } else if (in_t == UOPC_DT_F16) {
      if (op == UOPC_OP_ADD) return put_float(UOPC_DT_F16, out, uopi_round_f16(in[0].f) + uopi_round_f16(in[1].f));
      if (op == UOPC_OP_MUL) return put_float(UOPC_DT_F16, out, uopi_round_f16(in[0].f) * uopi_round_f16(in[1].f));
    } else if (in_t == UOPC_DT_I32) {
      /* i32_op's wrap(wrap(a) op wrap(b)), modulo 2^32 in uint32_t (`run`
         folds two of these per element of a*b+a) */
      if (op == UOPC_OP_ADD) return put_int(out, uopi_wrap_i32((uint32_t)in[0].i + (uint32_t)in[1].i));
      if (op == UOPC_OP_MUL) return put_int(out, uopi_wrap_i32((uint32_t)in[0].i * (uint32_t)in[1].i));
    }
  }
  return exec_general(op, out_t, in_t, in, out);
}

/* One loop per fast path (the same expressions as uopc_exec_alu's) from
   case i on, after the cases exec_alu_vec.c computed four at a time; the
   general path per case otherwise.  The fast paths never refuse. */
#define UOPI_ALU_LOOP(EXPR)                                                 \
  do {                                                                      \
    for (size_t i = uopi_exec_alu_vec(op, in_t, in_t, in, n, out, ok); i < n; i++) { \
      const uopc_val *v = in + 2 * i;                                       \
      (void)put_float(in_t, out + i, EXPR);                                 \
      ok[i] = 1;                                                            \
    }                                                                       \
    return n;                                                               \
  } while (0)

size_t uopc_exec_alu_n(uopc_op op, uopc_dtype out_t, uopc_dtype in_t, const uopc_val *in, size_t n, uopc_val *out,
                       unsigned char *ok) {
  if (in == NULL || out == NULL || ok == NULL) return 0;
  if (out_t == in_t && in_t == UOPC_DT_F32) {
    if (op == UOPC_OP_ADD) UOPI_ALU_LOOP(uopi_round_f32_nan_any(v[0].f) + uopi_round_f32_nan_any(v[1].f));
    if (op == UOPC_OP_MUL) UOPI_ALU_LOOP(uopi_round_f32_nan_any(v[0].f) * uopi_round_f32_nan_any(v[1].f));
  } else if (out_t == in_t && in_t == UOPC_DT_F16) {
    if (op == UOPC_OP_ADD) UOPI_ALU_LOOP(uopi_round_f16(v[0].f) + uopi_round_f16(v[1].f));
    if (op == UOPC_OP_MUL) UOPI_ALU_LOOP(uopi_round_f16(v[0].f) * uopi_round_f16(v[1].f));
  }
  size_t k = op == UOPC_OP_WHERE ? 3 : is_unary(op) ? 1 : 2;
  size_t done = in_domain(op, out_t, in_t) ? uopi_exec_alu_vec(op, out_t, in_t, in, n, out, ok) : 0, good = 0;
  for (size_t i = 0; i < done; i++) good += ok[i];
  for (size_t i = done; i < n; i++) {
    ok[i] = (unsigned char)exec_general(op, out_t, in_t, in + k * i, out + i);
    good += ok[i];
  }
  return good;
}
#undef UOPI_ALU_LOOP
