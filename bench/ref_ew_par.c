/* o = a * b + a on several threads (refs.h): the reference of uopc's
 * multi-threaded a*b+a, the loop of plan_ref.c's ref_ew over contiguous
 * shares (compiled, as it is, with -ffp-contract=off: no FMA). */
#include "refs.h"

typedef struct {
  float *o;
  const float *a, *b;
  long n;
} ew_args;

static void ew_share(void *p, int t, int threads) {
  ew_args *x = p;
  long lo, hi;
  ref_share(x->n, t, threads, &lo, &hi);
  float *restrict o = x->o;
  const float *restrict a = x->a, *restrict b = x->b;
  for (long i = lo; i < hi; i++) o[i] = a[i] * b[i] + a[i];
}

void ref_ew_threads(float *o, const float *a, const float *b, long n, int threads) {
  ew_args x = {o, a, b, n};
  ref_par(threads, ew_share, &x);
}
