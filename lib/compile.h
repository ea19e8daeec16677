/* lib/compile.h - the kernel compile pipeline (lib/compile.c), for the
 * public kernel API (lib/kernel.c), the benchmarks and the tests.
 *
 * Threads: any number of threads may compile at once, each with its own
 * context.  Errors go to the context (uopc_ctx_error), as everywhere in the
 * library.
 */
#ifndef UOPI_COMPILE_H
#define UOPI_COMPILE_H

#include "kcache/kcache.h"
#include "uopc/jit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The JIT tier the options ask for (o NULL: the fast one) in *t.  A value
   that is not a uopc_tier: UOPC_ERR_ARG, with the message in *e (e may be
   NULL), *t the fast tier. */
UOPI_FUNC uopc_status uopi_tier_of(const uopc_compile_opts *o, uopi_jit_tier *t, uopc_error *e);

/* The compiled kernel rooted at root (a SINK, STORE or END) at tier t with
   compile flags `flags` (uopc_compile_opts.flags: UOPC_COMPILE_FAST_MATH
   emits the fast-math code, docs/fast-math.md; the flags are part of the
   cache keys), as a cache entry held once for the caller (release it with
   uopi_kcache_release): from memory, else from disk, else compiled (and
   then written to disk).  root NULL is UOPC_ERR_ARG; a graph that is not a
   kernel is UOPC_ERR_TYPE.  *out is NULL on failure. */
UOPI_FUNC uopc_status uopi_compile_kernel(uopc_ctx *c, uopc_node *root, uopi_jit_tier t, unsigned flags,
                                          uopi_kentry **out);

/* n kernels at once, for a plan: out[i] as uopi_compile_kernel(roots[i],
   tiers[i]) gives it, but the misses' JIT halves (passes, codegen, link,
   nearly all of a compile) run on up to `threads` threads of the pool
   (support/pool.h) while the rest runs on the calling thread, in order
   (in windows: at most 8 emitted modules per thread wait for their JIT
   half, so a plan of many kernels does not hold all their modules).
   The code is the same as one at a time: each kernel is compiled alone,
   from its own LLVM module.  A kernel equal to an earlier one of the batch,
   or being compiled by another thread, is taken from the cache after the
   batch.  On failure: the first error in c (an error of a front half, else
   the first JIT failure in order), every out[i] NULL, nothing held.
   kflags (NULL: flags for every root) gives each root its own compile
   flags (a plan streams only its result's stores: UOPC_COMPILE_STREAM). */
UOPI_FUNC uopc_status uopi_compile_kernels(uopc_ctx *c, uopc_node *const *roots, const uopi_jit_tier *tiers,
                                           const unsigned *kflags, uint32_t n, unsigned flags, uint32_t threads,
                                           uopi_kentry **out);

/* uopi_compile_kernels as handles (out[i], each freed with uopc_kernel_free),
   root i compiled as uopc_compile (jit.h) would, at tier tiers[i] in place
   of opts->tier and with flags kflags[i] in place of opts->flags when kflags
   is not NULL (opts may be NULL): for plans, which compile their
   register-tiled kernels at TIER1 or TIER2 and stream only the result's
   stores (plan.c).  UOPC_OK,
   or the error in *e only (e may be NULL; the context's recorded error is
   left as it was, as uopc_compile) with every out[i] NULL. */
UOPI_FUNC uopc_status uopi_kernels_compile(uopc_ctx *c, uopc_node *const *roots, const uopi_jit_tier *tiers,
                                           const unsigned *kflags, uint32_t n, const uopc_compile_opts *opts,
                                           uint32_t threads, uopc_kernel **out, uopc_error *e);

/* uopc_emit_llvm (asm_text 0) or uopc_emit_asm (1) at tier t in place of
   opts->tier, with the error in *e only, as uopi_kernels_compile. */
UOPI_FUNC char *uopi_kernel_emit(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopi_jit_tier t,
                                 int asm_text, uopc_error *e);

/* The kernel's LLVM IR as emitted (asm_text 0) or the host assembly of its
   optimized code at tier t (asm_text 1), with compile flags `flags`, without
   the cache: a malloc'd
   string (the caller frees it with free()), or NULL with the error in c. */
UOPI_FUNC char *uopi_compile_text(uopc_ctx *c, uopc_node *root, uopi_jit_tier t, unsigned flags, int asm_text);

/* The ordered shutdown of the library's process-wide state: the plans'
   thread pool (support/pool.h; no plan call may be running), the kernel
   cache's code that no uopc_kernel holds first, then the JIT engine
   (uopi_jit_shutdown: refuses with UOPC_ERR_ARG while kernels are live).
   Call it before exit, never from a static destructor, and after
   uopc_plan_cache_clear (cached plans hold kernels).  e may be NULL. */
UOPI_FUNC uopc_status uopi_compile_shutdown(uopc_error *e);

#ifdef __cplusplus
}
#endif
#endif
