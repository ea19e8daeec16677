/* lib/support/round.c - bring a value into a dtype's value set (the seed's
 * truncate): uopc_round_f32, uopc_round_f16 and the f16 bit conversions,
 * uopc_wrap_i32.  Every function is exact (one rounding, to nearest even),
 * independent of the FPU rounding mode for f16, and free of undefined
 * behaviour: no out-of-range float->float or float->int conversion happens.
 */
#include <math.h>
#include <stdint.h>

#include "support/support.h"
#include "uopc/algebra.h"

/* Halfway between FLT_MAX and 2^128: this and everything above rounds to inf
   (the tie goes to the even neighbour, 2^128, which is inf). */
#define F32_OVERFLOW 0x1.ffffffp127
/* Halfway between 65504 (the largest f16) and 65536. */
#define F16_OVERFLOW 65520.0

double uopc_round_f32(double x) {
  if (isnan(x)) return x;
  /* (float) of a finite double beyond the float range is undefined in ISO C
     (IEEE makes it inf): decide it here. */
  if (fabs(x) >= F32_OVERFLOW) return copysign(INFINITY, x);
  return (double)(float)x;
}

/* Round y (0 <= y < 2^31) to the nearest integer, ties to even.  y - floor(y)
   is exact for such y, so this does not depend on the rounding mode. */
static uint32_t round_even(double y) {
  double k = floor(y);
  double frac = y - k;
  uint32_t n = (uint32_t)k;
  if (frac > 0.5 || (frac == 0.5 && (n & 1u))) n++;
  return n;
}

/* Directly from the double (never through float, which would round twice:
   1 + 2^-11 + 2^-40 is 1.0009765625 in f16, but 1.0 via float). */
uint16_t uopc_f16_from_double(double x) {
  uint16_t sign = signbit(x) ? 0x8000u : 0u;
  double a = fabs(x);
  if (isnan(x)) return (uint16_t)(sign | 0x7e00u);             /* quiet NaN */
  if (a >= F16_OVERFLOW) return (uint16_t)(sign | 0x7c00u);    /* inf */
  if (a < 0x1p-14) {
    /* Subnormal range: count units of 2^-24 (the scaling is exact).  A
       result of 1024 units is 0x0400, the smallest normal: the encoding
       carries into the exponent by itself. */
    return (uint16_t)(sign | round_even(a * 0x1p24));
  }
  int e;
  (void)frexp(a, &e);             /* a in [2^(e-1), 2^e) */
  int E = e - 1;                  /* -14 <= E <= 15 */
  uint32_t m = round_even(ldexp(a, 10 - E));   /* 1024 <= m <= 2048 */
  /* m == 2048 carries into the exponent (2048 - 1024 == 1 << 10); with
     a < 65520 it never carries into the inf encoding. */
  return (uint16_t)(sign | ((((uint32_t)(E + 15)) << 10) + (m - 1024u)));
}

double uopc_f16_to_double(uint16_t h) {
  unsigned e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  double v;
  if (e == 0) v = ldexp((double)m, -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = ldexp((double)(m + 1024u), (int)e - 25);
  return (h & 0x8000u) ? -v : v;
}

double uopc_round_f16(double x) { return uopc_f16_to_double(uopc_f16_from_double(x)); }

int32_t uopc_wrap_i32(int64_t x) { return uopi_wrap_i32(x); }
