/* lib/algebra/exec_alu_vec.c - uopc_exec_alu_n's fast paths, four cases at a
 * time with AVX2 where the CPU has it: on f32 and f16, ADD and MUL (the
 * fuzzer's hottest triples), MAX, CMPLT, CMPNE, WHERE, SQRT and RECIP; on
 * i32, ADD, MUL, MAX, CMPLT, CMPNE, WHERE, FLOORDIV and FLOORMOD; CAST
 * between any two of f32, f16, i32 and bool.  FLOORDIV, FLOORMOD and CAST to
 * i32 refuse, lane by lane, where exec_alu does.
 *
 * The arithmetic is exec_alu's (exec_alu.c float_op): the operands rounded
 * to the dtype, the op in double, the result rounded once and every NaN
 * replaced by the one positive quiet NaN.  Only the form differs: four lanes
 * and no branch per case (the rounding of a random f16 product leaves the
 * normal range about half the time; a branch there is a mispredict at every
 * other case).  The f16 rounding is fround.h's uopi_round_f16 without its
 * branch: the normal-range and the below-2^-14 results are both computed and
 * one is selected; integer operations, exact double operations and roundpd
 * with its rounding in the instruction, so independent of the FPU rounding
 * mode.  The f32 rounding is the hardware conversion to float and back (IEEE
 * convertFormat: beyond the float range to inf, as round.c), in the current
 * rounding mode like uopi_round_f32.  Where the scalar code rounds an operand
 * with uopi_round_f32 and these lanes with the conversion, the two differ
 * only in a NaN's payload, which no result here shows: a comparison does not
 * look at it and a float result's NaN is replaced.  MAX and WHERE return one
 * of the rounded operands, which rounding again would not change: they are
 * not rounded twice.  SQRT and 1/x are correctly rounded in double, as in
 * the scalar code; 1/(+-0) is +-inf in IEEE division, float_op's copysign.
 * The i32 lanes compute in 32-bit lanes what exec_alu computes in int64
 * and wraps (uopc_wrap_i32): each operand's low 32 bits are its wrapped
 * value, and a 32-bit add or multiply keeps exactly the low 32 bits of the
 * wide result; WHERE's condition is the whole int64, as exec_alu reads it.
 * test_exec_alu.cpp checks these lanes against uopc_exec_alu and against
 * lib/support/round.c.
 *
 * Intrinsics rather than portable vector code: roundpd rounds to an integer
 * in one instruction, blendv selects in one, and an all-integer version in
 * GCC's vector extensions (variable shifts, clamps) measured 2.7x slower
 * (7.6 against 2.8 ns a case, Zen 2).  Without AVX2 (or off x86-64)
 * uopi_exec_alu_vec does nothing and exec_alu.c's scalar loop computes every
 * case.
 */
#include <stddef.h>
#include <stdint.h>

#include "algebra/exec_alu_vec.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define UOPI_AVX2 __attribute__((target("avx2"), always_inline)) static inline

UOPI_AVX2 __m256i cst(uint64_t v) { return _mm256_set1_epi64x((long long)v); }

/* x < y as signed 64-bit lanes (every value compared here is below 2^63). */
UOPI_AVX2 __m256i lt(__m256i x, __m256i y) { return _mm256_cmpgt_epi64(y, x); }

/* m ? yes : no, lane by lane (blendv takes each lane's top bit). */
UOPI_AVX2 __m256i sel(__m256i m, __m256i yes, __m256i no) {
  return _mm256_castpd_si256(
      _mm256_blendv_pd(_mm256_castsi256_pd(no), _mm256_castsi256_pd(yes), _mm256_castsi256_pd(m)));
}

/* fround.h uopi_round_f16, lane by lane, without a branch. */
UOPI_AVX2 __m256d round_f16(__m256d x) {
  __m256i b = _mm256_castpd_si256(x), sign = _mm256_and_si256(b, cst(0x8000000000000000ull));
  __m256i a = _mm256_xor_si256(b, sign), one = cst(1);
  /* |x| >= 2^-14: the bits rounded in place (10 mantissa bits kept: add
     2^41 - 1 and the kept last bit, clear the low 42 bits); 65536 and up is inf */
  __m256i nrm = _mm256_add_epi64(_mm256_add_epi64(a, cst((1ull << 41) - 1)),
                                 _mm256_and_si256(_mm256_srli_epi64(a, 42), one));
  nrm = _mm256_andnot_si256(cst((1ull << 42) - 1), nrm);
  nrm = sel(lt(nrm, cst(0x40f0000000000000ull)), nrm, cst(0x7ff0000000000000ull));
  /* |x| < 2^-14: a multiple of 2^-24, |x| * 2^24 (exact) rounded to an
     integer, to even, by roundpd with the rounding in its immediate (not the
     MXCSR mode), times 2^-24 (exact) */
  __m256d q = _mm256_round_pd(_mm256_mul_pd(_mm256_castsi256_pd(a), _mm256_set1_pd(0x1p24)),
                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256i sub = _mm256_castpd_si256(_mm256_mul_pd(q, _mm256_set1_pd(0x1p-24)));
  __m256i v = sel(lt(a, cst(0x3f10000000000000ull)), sub, nrm);
  v = sel(lt(cst(0x7ff0000000000000ull), a), cst(0x7ff8000000000000ull), v); /* round.c's NaN, x's sign */
  return _mm256_castsi256_pd(_mm256_or_si256(v, sign));
}

/* uopi_round_f32_nan_any, lane by lane. */
UOPI_AVX2 __m256d round_f32(__m256d x) { return _mm256_cvtps_pd(_mm256_cvtpd_ps(x)); }

/* put_float's NaN rule: every NaN is the positive quiet NaN. */
UOPI_AVX2 __m256d canon(__m256d x) {
  return _mm256_blendv_pd(x, _mm256_set1_pd(__builtin_nan("")), _mm256_cmp_pd(x, x, _CMP_UNORD_Q));
}

/* The f fields of p[0], p[k], p[2k], p[3k]: one operand of four cases, a
   case being k uopc_val {i, f} of 16 bytes (1: unary, 3: WHERE). */
UOPI_AVX2 __m256d field_f(const uopc_val *p, size_t k) {
  return _mm256_setr_pd(p[0].f, p[k].f, p[2 * k].f, p[3 * k].f);
}
/* Both operands of four binary cases (in[0..7]): four loads, four
   shuffles. */
UOPI_AVX2 void pair_f(const uopc_val *in, __m256d *a, __m256d *b) {
  const double *p = (const double *)in;
  __m256d c0 = _mm256_loadu_pd(p), c1 = _mm256_loadu_pd(p + 4);
  __m256d c2 = _mm256_loadu_pd(p + 8), c3 = _mm256_loadu_pd(p + 12);
  __m256d x01 = _mm256_unpackhi_pd(c0, c1), x23 = _mm256_unpackhi_pd(c2, c3); /* a0 a1 b0 b1 */
  *a = _mm256_permute2f128_pd(x01, x23, 0x20), *b = _mm256_permute2f128_pd(x01, x23, 0x31);
}

/* Four float results as uopc_val {0, y} (put_float's layout), ok[0..3] = 1. */
UOPI_AVX2 void store_f(uopc_val *out, unsigned char *ok, __m256d y) {
  __m256d z = _mm256_setzero_pd();
  __m256d lo = _mm256_unpacklo_pd(z, y), hi = _mm256_unpackhi_pd(z, y); /* 0 y0 | 0 y2, 0 y1 | 0 y3 */
  double *o = (double *)out;
  _mm256_storeu_pd(o, _mm256_permute2f128_pd(lo, hi, 0x20));
  _mm256_storeu_pd(o + 4, _mm256_permute2f128_pd(lo, hi, 0x31));
  __builtin_memset(ok, 1, 4);
}

/* The wrapped i32 values of p[0].i, p[k].i, p[2k].i, p[3k].i (the low 32
   bits: GCC converts an out-of-range unsigned to int modulo 2^32). */
UOPI_AVX2 __m128i field_i(const uopc_val *p, size_t k) {
  return _mm_setr_epi32((int)(uint32_t)p[0].i, (int)(uint32_t)p[k].i, (int)(uint32_t)p[2 * k].i,
                        (int)(uint32_t)p[3 * k].i);
}
/* All-ones lanes where p[0].i, p[k].i, p[2k].i, p[3k].i are 0 (the whole
   int64: WHERE's condition, a bool operand), zero lanes elsewhere. */
UOPI_AVX2 __m256d zero_i(const uopc_val *p, size_t k) {
  __m256i c = _mm256_setr_epi64x(p[0].i, p[k].i, p[2 * k].i, p[3 * k].i);
  return _mm256_castsi256_pd(_mm256_cmpeq_epi64(c, _mm256_setzero_si256()));
}
/* The low 32 bits of four doubles' 64-bit lanes (an all-ones or zero
   comparison mask, say) as a 32-bit mask. */
UOPI_AVX2 __m128i mask32(__m256d m) {
  return _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(_mm256_castpd_si256(m), _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
}

/* The 64-bit lanes x and y interleaved as four {x_j, y_j} pairs (uopc_val's
   two fields): h[0] holds cases 0 and 1, h[1] cases 2 and 3.  (store_f does
   the same with doubles, staying in the float domain.) */
UOPI_AVX2 void interleave(__m256i x, __m256i y, __m256i h[2]) {
  __m256i lo = _mm256_unpacklo_epi64(x, y), hi = _mm256_unpackhi_epi64(x, y); /* x0 y0 | x2 y2, x1 y1 | x3 y3 */
  h[0] = _mm256_permute2x128_si256(lo, hi, 0x20), h[1] = _mm256_permute2x128_si256(lo, hi, 0x31);
}

/* Four integer results, 64-bit lanes w, as uopc_val {w, 0.0} (put_int's
   layout), ok[0..3] = 1. */
UOPI_AVX2 void store_w(uopc_val *out, unsigned char *ok, __m256i w) {
  __m256i h[2];
  interleave(w, _mm256_setzero_si256(), h);
  _mm256_storeu_si256((__m256i *)out, h[0]);
  _mm256_storeu_si256((__m256i *)(out + 2), h[1]);
  __builtin_memset(ok, 1, 4);
}
/* Four i32 (or 0/1) results, 32-bit lanes r, as store_w. */
UOPI_AVX2 void store_i(uopc_val *out, unsigned char *ok, __m128i r) { store_w(out, ok, _mm256_cvtepi32_epi64(r)); }
/* Four bool results: 1 where the lane of the comparison mask r is set, 0
   where it is not, as store_w. */
UOPI_AVX2 void store_b(uopc_val *out, unsigned char *ok, __m256d r) {
  store_w(out, ok, _mm256_and_si256(_mm256_castpd_si256(r), cst(1)));
}

/* The loops over four cases at a time from i on: R is the dtype's rounding
   (round_f32 or round_f16), EXPR the result from the rounded operands a
   (and b), STORE store_f or store_b.  WHERE's condition is the i field of
   its first operand, != 0. */
#define BINARY(R, STORE, EXPR)                   \
  for (; i + 4 <= n; i += 4) {                   \
    __m256d a, b;                                \
    pair_f(in + 2 * i, &a, &b);                  \
    a = R(a), b = R(b);                          \
    STORE(out + i, ok + i, EXPR);                \
  }
#define UNARY(R, EXPR)                           \
  for (; i + 4 <= n; i += 4) {                   \
    __m256d a = R(field_f(in + i, 1));           \
    store_f(out + i, ok + i, canon(EXPR));       \
  }
#define WHERE3(R)                                                                                     \
  for (; i + 4 <= n; i += 4) {                                                                        \
    const uopc_val *p = in + 3 * i;                                                                   \
    __m256d m = zero_i(p, 3); /* cond false */                                                        \
    __m256d a = R(field_f(p + 1, 3)), b = R(field_f(p + 2, 3));                                       \
    store_f(out + i, ok + i, canon(_mm256_blendv_pd(a, b, m)));                                       \
  }
/* Python's max: b if b > a else a (a NaN b gives a; a NaN a stays) */
#define MAX_AB _mm256_blendv_pd(a, b, _mm256_cmp_pd(b, a, _CMP_GT_OQ))

/* Every (op, dtype) of one rounding R. */
#define ALL_OPS(R)                                                                                    \
  switch (op) {                                                                                      \
  case UOPC_OP_ADD: BINARY(R, store_f, canon(R(_mm256_add_pd(a, b)))) break;                       \
  case UOPC_OP_MUL: BINARY(R, store_f, canon(R(_mm256_mul_pd(a, b)))) break;                       \
  case UOPC_OP_MAX: BINARY(R, store_f, canon(MAX_AB)) break;                                        \
  case UOPC_OP_CMPLT: BINARY(R, store_b, _mm256_cmp_pd(a, b, _CMP_LT_OQ)) break;                    \
  case UOPC_OP_CMPNE: BINARY(R, store_b, _mm256_cmp_pd(a, b, _CMP_NEQ_UQ)) break;                   \
  case UOPC_OP_WHERE: WHERE3(R) break;                                                              \
  case UOPC_OP_SQRT: UNARY(R, R(_mm256_sqrt_pd(a))) break;                                          \
  case UOPC_OP_RECIP: UNARY(R, R(_mm256_div_pd(_mm256_set1_pd(1.0), a))) break;                     \
  default: break;                                                                                   \
  }

__attribute__((target("avx2"))) static size_t lanes_avx2(uopc_op op, uopc_dtype t, const uopc_val *in, size_t n,
                                                         uopc_val *out, unsigned char *ok) {
  size_t i = 0;
  if (t == UOPC_DT_F32) ALL_OPS(round_f32)
  else if (t == UOPC_DT_F16) ALL_OPS(round_f16)
  return i;
}
#undef ALL_OPS
#undef MAX_AB
#undef WHERE3
#undef UNARY
#undef BINARY

/* ---- i32: the low 32 bits of four operands, four results ---- */

/* store_i for the lanes set in the 32-bit mask good: ok 1 and {r, 0.0}
   there, ok 0 and the result left as it was elsewhere (a refusal). */
UOPI_AVX2 void store_i_ok(uopc_val *out, unsigned char *ok, __m128i r, __m128i good) {
  __m256i v[2], mk[2], g = _mm256_cvtepi32_epi64(good);
  interleave(_mm256_cvtepi32_epi64(r), _mm256_setzero_si256(), v);
  interleave(g, g, mk); /* both 64-bit halves of a case under its lane's mask */
  _mm256_maskstore_epi64((long long *)out, mk[0], v[0]);
  _mm256_maskstore_epi64((long long *)(out + 2), mk[1], v[1]);
  int m = _mm_movemask_ps(_mm_castsi128_ps(good));
  for (int j = 0; j < 4; j++) ok[j] = (unsigned char)((m >> j) & 1);
}

/* FLOORDIV (mod = 0) or FLOORMOD (mod = 1) of four cases: refused (ok 0,
   the result left as it was) where exec_alu refuses, b = 0 or INT32_MIN
   by -1.  The quotient is floor(a / b) in double: both operands are exact
   doubles, and a quotient that is not an integer lies at least 1/|b| from
   the nearest one while the division's error is below |a/b| * 2^-53 <
   2^-22 / |b|, so the floor of the rounded quotient is the exact floor.
   The remainder a - b*q is computed in 32-bit lanes: it fits in i32 (|r| <
   |b|), so the wrapped products and differences give it exactly. */
UOPI_AVX2 void divmod_i32(const uopc_val *in, uopc_val *out, unsigned char *ok, int mod) {
  __m128i a = field_i(in, 2), b = field_i(in + 1, 2), zero = _mm_setzero_si128();
  __m128i bad = _mm_or_si128(_mm_cmpeq_epi32(b, zero),
                             _mm_and_si128(_mm_cmpeq_epi32(a, _mm_set1_epi32(INT32_MIN)),
                                           _mm_cmpeq_epi32(b, _mm_set1_epi32(-1))));
  __m128i bs = _mm_blendv_epi8(b, _mm_set1_epi32(1), bad); /* refused lanes divide by 1 */
  __m256d q = _mm256_round_pd(_mm256_div_pd(_mm256_cvtepi32_pd(a), _mm256_cvtepi32_pd(bs)),
                              _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m128i qi = _mm256_cvttpd_epi32(q); /* an integer in i32's range (INT32_MIN / -1 refused) */
  __m128i r = mod ? _mm_sub_epi32(a, _mm_mullo_epi32(bs, qi)) : qi;
  store_i_ok(out, ok, r, _mm_andnot_si128(bad, _mm_set1_epi32(-1)));
}

#define BINARY_I(EXPR)                                                         \
  for (; i + 4 <= n; i += 4) {                                                 \
    __m128i a = field_i(in + 2 * i, 2), b = field_i(in + 2 * i + 1, 2);        \
    store_i(out + i, ok + i, EXPR);                                            \
  }
#define ONE _mm_set1_epi32(1)

__attribute__((target("avx2"))) static size_t lanes_i32(uopc_op op, const uopc_val *in, size_t n, uopc_val *out,
                                                        unsigned char *ok) {
  size_t i = 0;
  switch (op) {
  case UOPC_OP_ADD: BINARY_I(_mm_add_epi32(a, b)) break;
  case UOPC_OP_MUL: BINARY_I(_mm_mullo_epi32(a, b)) break;
  case UOPC_OP_MAX: BINARY_I(_mm_max_epi32(a, b)) break;
  case UOPC_OP_CMPLT: BINARY_I(_mm_and_si128(_mm_cmpgt_epi32(b, a), ONE)) break;
  case UOPC_OP_CMPNE: BINARY_I(_mm_andnot_si128(_mm_cmpeq_epi32(a, b), ONE)) break;
  case UOPC_OP_FLOORDIV:
  case UOPC_OP_FLOORMOD:
    for (; i + 4 <= n; i += 4) divmod_i32(in + 2 * i, out + i, ok + i, op == UOPC_OP_FLOORMOD);
    break;
  case UOPC_OP_WHERE:
    for (; i + 4 <= n; i += 4) {
      const uopc_val *p = in + 3 * i;
      __m128i m = mask32(zero_i(p, 3)); /* cond false */
      __m128i a = field_i(p + 1, 3), b = field_i(p + 2, 3);
      store_i(out + i, ok + i, _mm_blendv_epi8(a, b, m));
    }
    break;
  default: break;
  }
  return i;
}
#undef ONE
#undef BINARY_I

/* ---- CAST: every pair of f32, f16, i32 and bool ---- */

/* Four values as doubles a, to dtype out_t, as exec_alu's CAST does from a
   float (a already rounded to its dtype): != 0 for bool (a NaN is true),
   the truncation for i32 (refused when not finite or out of range), the
   rounding for a float. */
UOPI_AVX2 void cast_from_f(uopc_dtype out_t, __m256d a, uopc_val *out, unsigned char *ok) {
  switch (out_t) {
  case UOPC_DT_BOOL: store_b(out, ok, _mm256_cmp_pd(a, _mm256_setzero_pd(), _CMP_NEQ_UQ)); break;
  case UOPC_DT_I32: {
    __m256d t = _mm256_round_pd(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m256d good = _mm256_and_pd(_mm256_cmp_pd(t, _mm256_set1_pd(-2147483648.0), _CMP_GE_OQ),
                                 _mm256_cmp_pd(t, _mm256_set1_pd(2147483647.0), _CMP_LE_OQ)); /* NaN, inf: no */
    store_i_ok(out, ok, _mm256_cvttpd_epi32(_mm256_and_pd(t, good)), mask32(good));
    break;
  }
  case UOPC_DT_F32: store_f(out, ok, canon(round_f32(a))); break;
  default: store_f(out, ok, canon(round_f16(a))); break;
  }
}

/* Four i32 or bool values (their 32-bit lanes) to out_t: != 0, themselves,
   or the rounding of the exact double. */
UOPI_AVX2 void cast_from_i(uopc_dtype out_t, __m128i a, uopc_val *out, unsigned char *ok) {
  switch (out_t) {
  case UOPC_DT_BOOL: store_i(out, ok, _mm_andnot_si128(_mm_cmpeq_epi32(a, _mm_setzero_si128()), _mm_set1_epi32(1))); break;
  case UOPC_DT_I32: store_i(out, ok, a); break;
  case UOPC_DT_F32: store_f(out, ok, round_f32(_mm256_cvtepi32_pd(a))); break;
  default: store_f(out, ok, round_f16(_mm256_cvtepi32_pd(a))); break;
  }
}

__attribute__((target("avx2"))) static size_t lanes_cast(uopc_dtype out_t, uopc_dtype in_t, const uopc_val *in,
                                                         size_t n, uopc_val *out, unsigned char *ok) {
  size_t i = 0;
  switch (in_t) {
  case UOPC_DT_F32:
    for (; i + 4 <= n; i += 4) cast_from_f(out_t, round_f32(field_f(in + i, 1)), out + i, ok + i);
    break;
  case UOPC_DT_F16:
    for (; i + 4 <= n; i += 4) cast_from_f(out_t, round_f16(field_f(in + i, 1)), out + i, ok + i);
    break;
  case UOPC_DT_I32:
    for (; i + 4 <= n; i += 4) cast_from_i(out_t, field_i(in + i, 1), out + i, ok + i);
    break;
  default: /* bool: the whole int64 != 0, as 0 or 1 */
    for (; i + 4 <= n; i += 4) {
      __m128i z = mask32(zero_i(in + i, 1));
      cast_from_i(out_t, _mm_andnot_si128(z, _mm_set1_epi32(1)), out + i, ok + i);
    }
    break;
  }
  return i;
}

size_t uopi_exec_alu_vec(uopc_op op, uopc_dtype out_t, uopc_dtype in_t, const uopc_val *in, size_t n, uopc_val *out,
                         unsigned char *ok) {
  if (in_t != UOPC_DT_F32 && in_t != UOPC_DT_F16 && in_t != UOPC_DT_I32 && !(in_t == UOPC_DT_BOOL && op == UOPC_OP_CAST))
    return 0;
  static int avx2 = -1; /* -1 until the first call asks the CPU; racing first calls store the same value */
  int has = __atomic_load_n(&avx2, __ATOMIC_RELAXED);
  if (has < 0) {
    __builtin_cpu_init();
    has = __builtin_cpu_supports("avx2") ? 1 : 0;
    __atomic_store_n(&avx2, has, __ATOMIC_RELAXED);
  }
  if (!has) return 0;
  if (op == UOPC_OP_CAST) return lanes_cast(out_t, in_t, in, n, out, ok);
  return in_t == UOPC_DT_I32 ? lanes_i32(op, in, n, out, ok) : lanes_avx2(op, in_t, in, n, out, ok);
}

#else

size_t uopi_exec_alu_vec(uopc_op op, uopc_dtype out_t, uopc_dtype in_t, const uopc_val *in, size_t n, uopc_val *out,
                         unsigned char *ok) {
  (void)op, (void)out_t, (void)in_t, (void)in, (void)n, (void)out, (void)ok;
  return 0;
}

#endif
