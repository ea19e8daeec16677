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
