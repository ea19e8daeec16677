/* bench/refs.h - the C references of bench_throughput that are not bench_plans'
 * (plan_ref.c): the machine's limits (STREAM triad, FMA peak), the fast-math
 * sum, a*b+a on several threads, and OpenBLAS sgemm.  All but ref_openblas.c
 * are compiled by clang-19 -O3 -march=native into libbench_ref_clang.so
 * (bench/CMakeLists.txt says the flags of each file). */
#ifndef UOPC_BENCH_REFS_H
#define UOPC_BENCH_REFS_H

#ifdef __cplusplus
extern "C" {
#endif

/* ref_par.c: runs fn(arg, t, threads) for t = 0 .. threads-1, t = 0 on the
   calling thread, the others on threads started for the call (pthreads) and
   joined before it returns.  threads < 1 counts as 1; a thread that cannot
   be started runs its share on the calling thread. */
void ref_par(int threads, void (*fn)(void *arg, int t, int threads), void *arg);

/* The share [*lo, *hi) of n elements of thread t out of threads, in whole
   blocks of 64 elements (256 bytes: whole cache lines) except the last
   share, so that each share of a 64-byte aligned array starts aligned. */
void ref_share(long n, int t, int threads, long *lo, long *hi);

/* ref_stream.c: STREAM's triad a[i] = b[i] + s * c[i] over n f32 on
   `threads` threads, each its own contiguous share; ref_triad_nt stores a
   with non-temporal (streaming) vector stores, then a store fence.  a must
   be 64-byte aligned for ref_triad_nt. */
void ref_triad(float *a, const float *b, const float *c, float s, long n, int threads);
void ref_triad_nt(float *a, const float *b, const float *c, float s, long n, int threads);

/* ref_fma.c: the FMA peak: on each of `threads` threads, iters rounds of
   ref_fma_per_iter() / 2 independent fused multiply-adds (flops per round
   per thread: ref_fma_per_iter()).  Returns a value computed from every
   accumulator, so none of the work can be dropped. */
float ref_fma_peak(long iters, int threads);
long ref_fma_per_iter(void);
/* The vector width the FMA loop uses, in f32 lanes (16: AVX-512, 8: AVX2+FMA,
   1: scalar fmaf). */
int ref_fma_lanes(void);

/* ref_sum_fast.c: the strict sum loop of plan_ref.c (ref_sum: left to right
   from a[0]) compiled with -O3 -march=native -ffast-math, which lets clang
   reassociate it into vector partial sums.  ref_sum_fastmath0: the same
   from -0.0, reading from a[0] (aligned loads), as uopc's fast mode sums. */
float ref_sum_fastmath(const float *a, long n);
float ref_sum_fastmath0(const float *a, long n);

/* ref_ew_par.c: o[i] = a[i] * b[i] + a[i] (no FMA) on `threads` threads,
   each its own contiguous share. */
void ref_ew_threads(float *o, const float *a, const float *b, long n, int threads);

/* ref_openblas.c (compiled into bench_throughput, linked with OpenBLAS when
   CMake found it): ref_openblas_available() is 0 without OpenBLAS, and then
   the others do nothing (ref_openblas_corename: "OpenBLAS not installed").
   ref_sgemm: c = a * b, n x n row-major f32, on `threads` threads
   (openblas_set_num_threads before the call). */
int ref_openblas_available(void);
const char *ref_openblas_corename(void);
const char *ref_openblas_config(void);
void ref_sgemm(float *c, const float *a, const float *b, long n, int threads);

#ifdef __cplusplus
}
#endif
#endif
