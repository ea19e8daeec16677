/* The fast-math C reference of bench_plans --fast-math: the sum of
 * bench/data/sum16M.uir as the plain loop a C programmer writes, compiled by
 * clang-19 -O3 -march=native -ffast-math (bench/CMakeLists.txt), so clang
 * may reorder it into vector accumulators as uopc's fast-math mode does
 * (docs/fast-math.md).  Kept apart from plan_ref.c, whose loops are strict. */
float ref_fast_sum(const float *restrict a, long n);

float ref_fast_sum(const float *restrict a, long n) {
  float acc = 0.0f;
  for (long i = 0; i < n; i++) acc += a[i];
  return acc;
}
