/* STREAM's triad, a[i] = b[i] + s * c[i] over f32 (refs.h): the memory
 * bandwidth reference of bench_throughput, counted as STREAM counts it, 3
 * arrays x 4 bytes per element (the write-allocate read of a with plain
 * stores is not counted).  ref_triad_nt writes a with non-temporal vector
 * stores, which skip that read: LLVM 19's loop vectorizer will not vectorize
 * a loop with non-temporal stores, so they are intrinsics here. */
#include <immintrin.h>

#include "refs.h"

typedef struct {
  float *a;
  const float *b, *c;
  float s;
  long n;
} triad_args;

static void triad_share(void *p, int t, int threads) {
  triad_args *x = p;
  long lo, hi;
  ref_share(x->n, t, threads, &lo, &hi);
  float *restrict a = x->a;
  const float *restrict b = x->b, *restrict c = x->c;
  float s = x->s;
  for (long i = lo; i < hi; i++) a[i] = b[i] + s * c[i];
}

static void triad_nt_share(void *p, int t, int threads) {
  triad_args *x = p;
  long lo, hi, i;
  ref_share(x->n, t, threads, &lo, &hi);
  float *restrict a = x->a;
  const float *restrict b = x->b, *restrict c = x->c;
  float s = x->s;
  i = lo; /* lo is a multiple of 64 elements: 64-byte aligned when a is */
#if defined(__AVX512F__)
  __m512 vs = _mm512_set1_ps(s);
  for (; i + 16 <= hi; i += 16)
    _mm512_stream_ps(a + i, _mm512_add_ps(_mm512_loadu_ps(b + i), _mm512_mul_ps(vs, _mm512_loadu_ps(c + i))));
#elif defined(__AVX__)
  __m256 vs = _mm256_set1_ps(s);
  for (; i + 8 <= hi; i += 8)
    _mm256_stream_ps(a + i, _mm256_add_ps(_mm256_loadu_ps(b + i), _mm256_mul_ps(vs, _mm256_loadu_ps(c + i))));
#else
  __m128 vs = _mm_set1_ps(s);
  for (; i + 4 <= hi; i += 4)
    _mm_stream_ps(a + i, _mm_add_ps(_mm_loadu_ps(b + i), _mm_mul_ps(vs, _mm_loadu_ps(c + i))));
#endif
  for (; i < hi; i++) a[i] = b[i] + s * c[i];
  _mm_sfence();
}

void ref_triad(float *a, const float *b, const float *c, float s, long n, int threads) {
  triad_args x = {a, b, c, s, n};
  ref_par(threads, triad_share, &x);
}

void ref_triad_nt(float *a, const float *b, const float *c, float s, long n, int threads) {
  triad_args x = {a, b, c, s, n};
  ref_par(threads, triad_nt_share, &x);
}
