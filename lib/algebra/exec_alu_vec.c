/* lib/algebra/exec_alu_vec.c - uopc_exec_alu_n's fast paths (f32 and f16
 * ADD and MUL, the fuzzer's hottest triples) four cases at a time, with
 * AVX2 where the CPU has it.
 *
 * The arithmetic is exec_alu's (exec_alu.c float_op): both operands rounded
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
 * rounding mode like uopi_round_f32.
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

/* Cases i .. i+3: a case is two uopc_val {i, f} (32 bytes); the f fields
   into a and b.  The results as four uopc_val {0, y}. */
#define LANES(EXPR)                                                                                      \
  for (; i + 4 <= n; i += 4) {                                                                           \
    const double *p = (const double *)(in + 2 * i);                                                      \
    __m256d c0 = _mm256_loadu_pd(p), c1 = _mm256_loadu_pd(p + 4);                                       \
    __m256d c2 = _mm256_loadu_pd(p + 8), c3 = _mm256_loadu_pd(p + 12);                                  \
    __m256d x01 = _mm256_unpackhi_pd(c0, c1), x23 = _mm256_unpackhi_pd(c2, c3); /* a0 a1 b0 b1 */      \
    __m256d a = _mm256_permute2f128_pd(x01, x23, 0x20), b = _mm256_permute2f128_pd(x01, x23, 0x31);     \
    __m256d y = canon(EXPR), z = _mm256_setzero_pd();                                                    \
    __m256d lo = _mm256_unpacklo_pd(z, y), hi = _mm256_unpackhi_pd(z, y); /* 0 y0 | 0 y2, 0 y1 | 0 y3 */ \
    double *o = (double *)(out + i);                                                                     \
    _mm256_storeu_pd(o, _mm256_permute2f128_pd(lo, hi, 0x20));                                           \
    _mm256_storeu_pd(o + 4, _mm256_permute2f128_pd(lo, hi, 0x31));                                       \
    __builtin_memset(ok + i, 1, 4);                                                                      \
  }

__attribute__((target("avx2"))) static size_t lanes_avx2(uopc_op op, uopc_dtype t, const uopc_val *in, size_t n,
                                                         uopc_val *out, unsigned char *ok) {
  size_t i = 0;
  if (t == UOPC_DT_F32 && op == UOPC_OP_ADD) LANES(round_f32(_mm256_add_pd(round_f32(a), round_f32(b))))
  else if (t == UOPC_DT_F32 && op == UOPC_OP_MUL) LANES(round_f32(_mm256_mul_pd(round_f32(a), round_f32(b))))
  else if (t == UOPC_DT_F16 && op == UOPC_OP_ADD) LANES(round_f16(_mm256_add_pd(round_f16(a), round_f16(b))))
  else if (t == UOPC_DT_F16 && op == UOPC_OP_MUL) LANES(round_f16(_mm256_mul_pd(round_f16(a), round_f16(b))))
  return i;
}
#undef LANES

size_t uopi_exec_alu_vec(uopc_op op, uopc_dtype t, const uopc_val *in, size_t n, uopc_val *out, unsigned char *ok) {
  static int avx2 = -1; /* -1 until the first call asks the CPU; racing first calls store the same value */
  int has = __atomic_load_n(&avx2, __ATOMIC_RELAXED);
  if (has < 0) {
    __builtin_cpu_init();
    has = __builtin_cpu_supports("avx2") ? 1 : 0;
    __atomic_store_n(&avx2, has, __ATOMIC_RELAXED);
  }
  return has ? lanes_avx2(op, t, in, n, out, ok) : 0;
}

#else

size_t uopi_exec_alu_vec(uopc_op op, uopc_dtype t, const uopc_val *in, size_t n, uopc_val *out, unsigned char *ok) {
  (void)op, (void)t, (void)in, (void)n, (void)out, (void)ok;
  return 0;
}

#endif
