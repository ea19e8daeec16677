/* uopc/jit.h - compiling kernels in-process with LLVM (ORC LLJIT) and
 * calling them.
 *
 * A kernel is a SINK of STOREs in loops (docs/uir.md, "Kernels").  Compiling
 * it checks it, simplifies its index expressions, emits LLVM IR in which
 * every op computes exactly what uopc_exec_alu says, optimizes, generates
 * code for the host CPU and links it into the process.  Calling it runs it on
 * the caller's buffers with a known floating-point environment.
 *
 * A kernel never touches memory outside its buffers: an address that bounds
 * cannot prove inside its buffer is checked at run time, and a failing check
 * stops the kernel with UOPC_ERR_EVAL ("kernel index out of bounds ...")
 * before the access.  Stores made before that point stay done.
 *
 * Threads: uopc_compile may be called from any number of threads (each with
 * its own context); a compiled kernel may be called from any number of
 * threads at once.
 *
 * LLVM's process-global options (what a host that also uses LLVM sees): the
 * first compile (or uopi_jit_warm, or anything that starts the engine) calls
 * LLVMParseCommandLineOptions once per process with "-optimize-regalloc",
 * and nothing undoes it, not even an engine shutdown.  The LLVM C API has no
 * per-TargetMachine way to ask for it.  The exact effect (LLVM 19,
 * TargetPassConfig::getOptimizeRegAlloc):
 *   - every code generation in the process at CodeGenOptLevel::None (an O0
 *     TargetMachine of the host's, clang -O0 run in-process, another
 *     JIT's O0 tier) takes the optimized register-allocation pipeline
 *     (greedy allocator, register coalescer, machine scheduler, ...)
 *     instead of the fast allocator: different machine code, often fewer
 *     spills, and slower O0 compiles (about +0.5-0.9 ms for a small loop
 *     kernel here).  Optimized levels (Less, Default, Aggressive) already use
 *     that pipeline: no change;
 *   - the option's value is the process's last parse: LLVM 19 accepts the
 *     option again in a later LLVMParseCommandLineOptions call.  A host that
 *     passes -optimize-regalloc=false after uopc started turns it off for
 *     uopc too (tier-fast kernels stay correct, but spill more in loop
 *     bodies; the kernel cache's target id still names the option, and
 *     cached objects stay valid code).  A host that passed it before uopc
 *     started has its value replaced by uopc's;
 *   - through the C API a bad option does not end the process (LLVM's
 *     error stream is a null stream there: the call just returns).
 * A host that needs O0 code generation untouched compiles its own code at
 * CodeGenOptLevel::Less or later, or keeps LLVM work apart from uopc's
 * process.
 */
#ifndef UOPC_JIT_H
#define UOPC_JIT_H

#include "uopc/rewrite.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct uopc_kernel uopc_kernel;

/* Optimization tier. */
typedef enum uopc_tier {
  UOPC_TIER_FAST = 0,   /* short pipeline with loop vectorization, fast codegen (~1-3 ms) */
  UOPC_TIER_STRONG = 2, /* default<O2>, full codegen (~6-12 ms); faster code for loop nests */
} uopc_tier;

typedef struct uopc_compile_opts {
  uopc_tier tier;
} uopc_compile_opts;

/* The rules that prepare a kernel for code generation, applied bottom up
   before emitting: RANGE(end) -> RANGE(simplify(end)) and INDEX(buffer, i)
   -> INDEX(buffer, simplify(i)) where the expression loads nothing (exact:
   the `symbolic` set).  Built once per process, never freed. */
UOPC_API const uopc_matcher *uopc_rules_kernel(void);

/* Compiles the kernel rooted at root (a SINK, STORE or END) built in c.
   opts may be NULL (UOPC_TIER_FAST).  Returns a handle, or NULL with the
   error in *e (e may be NULL) and in the context.  The handle does not
   depend on c afterwards. */
UOPC_API uopc_kernel *uopc_compile(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopc_error *e);

/* Runs the kernel on bufs[0..n) (bufs[s] is the memory of BUFFER slot s,
   with at least the buffer's size in bytes; bool is one byte, f16 two).
   Buffers of different slots must not overlap (UOPC_ERR_ARG otherwise).
   Returns UOPC_OK, or an error in *e (e may be NULL). */
UOPC_API uopc_status uopc_kernel_call(const uopc_kernel *k, void *const *bufs, uint32_t n, uopc_error *e);

/* Releases the kernel's code.  NULL is a no-op. */
UOPC_API void uopc_kernel_free(uopc_kernel *k);

/* The kernel's buffers: how many, and slot s's dtype and element count. */
UOPC_API uint32_t uopc_kernel_nbufs(const uopc_kernel *k);
UOPC_API uopc_dtype uopc_kernel_buf_dtype(const uopc_kernel *k, uint32_t slot);
UOPC_API int64_t uopc_kernel_buf_len(const uopc_kernel *k, uint32_t slot);

/* The LLVM IR of the kernel as emitted (before optimization) or the host
   assembly of its optimized code.  Returns a malloc'd string (caller frees
   with free()), or NULL with *e. */
UOPC_API char *uopc_emit_llvm(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopc_error *e);
UOPC_API char *uopc_emit_asm(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopc_error *e);

#ifdef __cplusplus
}
#endif
#endif
