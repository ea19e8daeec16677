/* lib/algebra/fround.h - rounding to f32 and f16 inlined into exec_alu's
 * per-case path, on the bits of the double (no frexp/ldexp, no libm call).
 *
 * Each function here computes exactly what its out-of-line counterpart in
 * lib/support/round.c computes (uopc_round_f32, uopc_round_f16,
 * uopc_f16_from_double, uopc_f16_to_double), bit for bit, NaN included (the
 * same quiet NaN, the same sign): test/test_f16.cpp checks every f16 value,
 * every tie, its neighbours and many doubles against round.c.  Integer
 * arithmetic only, so independent of the FPU rounding mode.
 */
#ifndef UOPI_ALGEBRA_FROUND_H
#define UOPI_ALGEBRA_FROUND_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t uopi_f64_bits(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

static inline double uopi_f64_from_bits(uint64_t b) {
  double x;
  memcpy(&x, &b, sizeof x);
  return x;
}

#define UOPI_F64_SIGN 0x8000000000000000ull
#define UOPI_F64_INF 0x7ff0000000000000ull

/* uopc_round_f32.  With Annex F (__STDC_IEC_559__, which GCC and Clang
   define on glibc) the conversion to float is IEEE's convertFormat: a double
   beyond the float range rounds to inf (from 0x1.ffffffp127, halfway
   between FLT_MAX and 2^128) like round.c's explicit test, so only the NaN,
   which round.c returns as it is, needs a test, and it is rare (the
   overflow test was taken at every other random product).  Without Annex F,
   (float) of such a double is undefined in ISO C, and the overflow is
   decided first. */
static inline double uopi_round_f32(double x) {
#ifdef __STDC_IEC_559__
  if (__builtin_expect(isnan(x), 0)) return x;
#else
  if (__builtin_expect(!(fabs(x) < 0x1.ffffffp127), 0)) return isnan(x) ? x : copysign(INFINITY, x); /* one compare */
#endif
  return (double)(float)x;
}

/* uopi_round_f32 for a caller that replaces every NaN it returns (exec_alu's
   results): a NaN comes back as some NaN (quieted, its payload cut to
   float's), anything else as uopi_round_f32 returns it. */
static inline double uopi_round_f32_nan_any(double x) {
#ifdef __STDC_IEC_559__
  return (double)(float)x;
#else
  return uopi_round_f32(x);
#endif
}

/* The rare binades of uopi_round_f16 (NaN, >= 2^16, below the normal f16
   range), out of line so that the normal path has constant shifts and one
   branch. */
__attribute__((noinline, unused)) static double uopi_round_f16_rare(double x) {
  uint64_t b = uopi_f64_bits(x), sign = b & UOPI_F64_SIGN, a = b ^ sign;
  int e = (int)(a >> 52) - 1023;
  if (a > UOPI_F64_INF) return sign ? -(double)NAN : (double)NAN; /* round.c's NaN, round.c's sign */
  if (e >= 16) return uopi_f64_from_bits(sign | UOPI_F64_INF);    /* 65536 and up, inf */
  if (e < -25) return uopi_f64_from_bits(sign);                   /* below 2^-25, zeros, double subnormals */
  if (e == -25) return uopi_f64_from_bits(sign | (a == 0x3e60000000000000ull ? 0 : 0x3e70000000000000ull));
  unsigned s = (unsigned)(42 - 14 - e); /* 43 .. 52; at 52 the kept bit is the exponent's lowest, 1 like the unit count */
  uint64_t low = (1ull << s) - 1;
  a += (low >> 1) + ((a >> s) & 1u);
  a &= ~low;
  return uopi_f64_from_bits(sign | a); /* below 2^-14: no carry reaches 65536 */
}

/* uopc_round_f16: x rounded to the nearest f16 value (ties to even, |x| >=
   65520 to inf), returned as a double.  The double's bits are rounded in
   place: for a quantum of 2^s units of the bit pattern, adding 2^(s-1) - 1
   plus the quantum's own bit and clearing the low s bits rounds to nearest
   even, and a carry out of the mantissa moves into the exponent by itself.
   Normal f16 range (|x| >= 2^-14): s = 42 (10 of the double's 52 mantissa
   bits kept).  Subnormal range: the quantum is fixed at 2^-24, so s grows by
   one per binade below 2^-14, up to 52 for [2^-24, 2^-23); [2^-25, 2^-24)
   rounds to 2^-24 except its tie 2^-25 (to 0, even); below 2^-25, to 0. */
static inline double uopi_round_f16(double x) {
  uint64_t b = uopi_f64_bits(x), sign = b & UOPI_F64_SIGN, a = b ^ sign;
  /* |x| outside [2^-14, 2^16) (NaN included), on the bits: one subtraction, one compare */
  if (__builtin_expect(a - 0x3f10000000000000ull >= 0x40f0000000000000ull - 0x3f10000000000000ull, 0))
    return uopi_round_f16_rare(x);
  const uint64_t low = (1ull << 42) - 1; /* 10 of the double's 52 mantissa bits kept */
  a += (low >> 1) + ((a >> 42) & 1u);
  a &= ~low;
  if (a >= 0x40f0000000000000ull) a = UOPI_F64_INF; /* rounded up to 65536 */
  return uopi_f64_from_bits(sign | a);
}

/* uopc_f16_to_double. */
static inline double uopi_f16_to_double(uint16_t h) {
  uint64_t sign = (uint64_t)(h & 0x8000u) << 48;
  unsigned e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) { /* zero or subnormal: m * 2^-24, exact */
    double v = (double)m * 0x1p-24;
    return sign ? -v : v;
  }
  if (e == 31) return m ? (sign ? -(double)NAN : (double)NAN) : uopi_f64_from_bits(sign | UOPI_F64_INF);
  return uopi_f64_from_bits(sign | ((uint64_t)(e - 15 + 1023) << 52) | ((uint64_t)m << 42));
}

/* uopc_f16_from_double: the bits of uopi_round_f16(x).  NaN gives the quiet
   NaN 0x7e00 with x's sign. */
static inline uint16_t uopi_f16_from_double(double x) {
  uint64_t b = uopi_f64_bits(x);
  uint16_t sign = (uint16_t)((b >> 48) & 0x8000u);
  if ((b & ~UOPI_F64_SIGN) > UOPI_F64_INF) return (uint16_t)(sign | 0x7e00u);
  uint64_t a = uopi_f64_bits(uopi_round_f16(x)) & ~UOPI_F64_SIGN;
  if (a == UOPI_F64_INF) return (uint16_t)(sign | 0x7c00u);
  int e = (int)(a >> 52) - 1023;
  if (e < -14) return (uint16_t)(sign | (uint16_t)(uopi_f64_from_bits(a) * 0x1p24)); /* units of 2^-24, exact */
  return (uint16_t)(sign | (uint16_t)((unsigned)(e + 15) << 10) | (uint16_t)((a >> 42) & 0x3ffu));
}

#endif
