/* The C reference for bench_jit's throughput test: the loop of the
 * elementwise kernel, compiled by clang-19 -O3 -march=native
 * -ffp-contract=off (no FMA, like the JIT's IR) into a shared object. */
void uopc_bench_ew_clang(float *restrict o, const float *restrict a, const float *restrict b, long n);

void uopc_bench_ew_clang(float *restrict o, const float *restrict a, const float *restrict b, long n) {
  for (long i = 0; i < n; i++) o[i] = a[i] * b[i] + a[i];
}
