/* OpenBLAS sgemm for bench_throughput (refs.h), when CMake found Debian's
 * libopenblas-dev (UOPC_HAVE_OPENBLAS): the matmul reference.  Without it
 * every function here says so and does nothing, so the benchmark builds and
 * runs without OpenBLAS.  Only the benchmark links OpenBLAS. */
#include "refs.h"

#ifdef UOPC_HAVE_OPENBLAS
#include <cblas.h>

int ref_openblas_available(void) { return 1; }
const char *ref_openblas_corename(void) { return openblas_get_corename(); }
const char *ref_openblas_config(void) { return openblas_get_config(); }

void ref_sgemm(float *c, const float *a, const float *b, long n, int threads) {
  openblas_set_num_threads(threads);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f, a, (int)n, b, (int)n, 0.0f, c,
              (int)n);
}
#else
int ref_openblas_available(void) { return 0; }
const char *ref_openblas_corename(void) { return "OpenBLAS not installed"; }
const char *ref_openblas_config(void) { return "OpenBLAS not installed"; }
void ref_sgemm(float *c, const float *a, const float *b, long n, int threads) {
  (void)c, (void)a, (void)b, (void)n, (void)threads;
}
#endif
