/* The sum of plan_ref.c's ref_sum (left to right from a[0]), in a file of its
 * own so that it alone is compiled with -O3 -march=native -ffast-math
 * (bench/CMakeLists.txt): the reference of uopc's fast mode, which may
 * reassociate a float reduction as -ffast-math lets clang do (refs.h). */
#include "refs.h"

float ref_sum_fastmath(const float *restrict a, long n) {
  float acc = a[0];
  for (long i = 1; i < n; i++) acc = acc + a[i];
  return acc;
}

/* The same sum from -0.0 (which adds nothing: -0.0 + x is x), so that the
   vector loop reads from a[0]: from a[1], each 64-byte load of an aligned
   array straddles two cache lines.  uopc's fast mode sums so (docs/loops.md,
   "Fast reductions"); this is the reference that does the same. */
float ref_sum_fastmath0(const float *restrict a, long n) {
  float acc = -0.0f;
  for (long i = 0; i < n; i++) acc = acc + a[i];
  return acc;
}
