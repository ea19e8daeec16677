/* The FMA peak of bench_throughput (refs.h): CHAINS independent accumulator
 * chains of fused multiply-adds per thread, enough to cover the FMA latency
 * (4 cycles) on two pipes.  acc = acc * m + k with m just below 1 stays
 * bounded and normal, so no denormal or overflow slows the loop. */
#include <immintrin.h>
#include <math.h>

#include "refs.h"

enum { CHAINS = 12 };

#if defined(__AVX512F__)
typedef __m512 vec;
#define LANES 16
#define VSET(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VADD(a, b) _mm512_add_ps(a, b)
#define VSUM(a) _mm512_reduce_add_ps(a)
#elif defined(__FMA__)
typedef __m256 vec;
#define LANES 8
#define VSET(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VADD(a, b) _mm256_add_ps(a, b)
static float VSUM(__m256 a) {
  float t[8], s = 0;
  _mm256_storeu_ps(t, a);
  for (int i = 0; i < 8; i++) s += t[i];
  return s;
}
#else
typedef float vec;
#define LANES 1
#define VSET(x) (x)
#define VFMA(a, b, c) fmaf(a, b, c)
#define VADD(a, b) ((a) + (b))
#define VSUM(a) (a)
#endif

typedef struct {
  long iters;
  float out[64];
} fma_args;

static void fma_share(void *p, int t, int threads) {
  (void)threads;
  fma_args *x = p;
  vec acc[CHAINS];
  for (int j = 0; j < CHAINS; j++) acc[j] = VSET(1.0f + (float)j / 64 + (float)t / 1024);
  vec m = VSET(0.9999999f), k = VSET(1e-7f);
  for (long i = 0; i < x->iters; i++)
    for (int j = 0; j < CHAINS; j++) acc[j] = VFMA(acc[j], m, k);
  vec s = acc[0];
  for (int j = 1; j < CHAINS; j++) s = VADD(s, acc[j]);
  x->out[t & 63] = VSUM(s);
}

float ref_fma_peak(long iters, int threads) {
  fma_args x = {iters, {0}};
  ref_par(threads, fma_share, &x);
  float s = 0;
  for (int t = 0; t < 64; t++) s += x.out[t];
  return s;
}

long ref_fma_per_iter(void) { return 2L * CHAINS * LANES; }

int ref_fma_lanes(void) { return LANES; }
