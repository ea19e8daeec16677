/* test/support/samples.h - two reference kernels built with the LLVM C API
 * (test/support/samples.c), for the JIT engine's tests and bench_jit.
 *
 *   SAMPLE_EW:  NAME(o, a, b): o[i] = a[i]*b[i] + a[i],
 *               i < n, f32, fmul then fadd (no FMA)
 *   SAMPLE_MM:  NAME(c, a, b): c = a @ b, n x n f32,
 *               loops i, k, j (unit stride innermost), c zeroed first,
 *               c[i,j] = c[i,j] + a[i,k]*b[k,j] in k order
 *
 * In the JIT's kernel convention (lib/jit/jit.h): an argument array of three
 * buffers.  The same
 * computations as bench/cache_kernels.h builds as uopc graphs.
 */
#ifndef UOPC_TEST_SUPPORT_SAMPLES_H
#define UOPC_TEST_SUPPORT_SAMPLES_H

#include <stdint.h>

#include "jit/jit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sample_kind { SAMPLE_EW, SAMPLE_MM } sample_kind;

/* The sample s over n (>= 1) as the kernel `name` in a new module
   (uopi_jit_module_new), which the caller owns: *out, or NULL with *e
   (UOPC_ERR_ARG for a bad s or n; e may be NULL). */
uopc_status sample_module(sample_kind s, int64_t n, const char *name, LLVMModuleRef *out, uopc_error *e);

#ifdef __cplusplus
}
#endif
#endif
