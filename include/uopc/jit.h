/* uopc/jit.h - compiling kernels in-process with LLVM (JITLink) and
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
#include "uopc/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct uopc_kernel uopc_kernel;

/* Optimization tier. */
typedef enum uopc_tier {
  UOPC_TIER_FAST = 0,   /* short pipeline with loop vectorization, fast codegen (~1-3 ms) */
  UOPC_TIER_STRONG = 2, /* default<O2>, full codegen (~6-12 ms); faster code for loop nests */
} uopc_tier;

/* Bits of uopc_compile_opts.flags.  0 is the default: exact (strict) code,
   every optimization pass that keeps results bit-identical to `run` on. */
#define UOPC_COMPILE_FAST_MATH 1u  /* opt-in, changes the last bits: float
                                      reductions may be reassociated, a*b+c
                                      contracted to an FMA, exp2/log2/sin
                                      computed by vectorized approximations
                                      within the error docs/fast-math.md states */
#define UOPC_COMPILE_NO_REORDER 2u /* plans: keep the reduce loop innermost
                                      (no loop interchange) */
#define UOPC_COMPILE_NO_UPCAST 4u  /* plans: no register tiles / unrolling */
#define UOPC_COMPILE_HOT 8u        /* plans: the plan will be called many
                                      times: register tiles and row chains at
                                      every size where they apply, also where
                                      their compile time does not pay back
                                      within one call (docs/loops.md); results
                                      unchanged (bit for bit what the plan
                                      computes without it) */
#define UOPC_COMPILE_STREAM 16u    /* kernels (uopc_compile): streaming
                                      stores where they pay: a kernel that
                                      stores at least UOPC_STREAM_MIN_BYTES
                                      (default: half the last level cache)
                                      and reads none of what it writes, on
                                      an x86-64 host with 512-bit vectors,
                                      writes whole cache lines with
                                      non-temporal stores whenever its
                                      output buffers are 64-byte aligned
                                      (aligned_alloc(64, ...)), and at any
                                      alignment when its stores are one
                                      loop's, at one index; results
                                      unchanged (docs/loops.md).  Plans ask
                                      for it themselves on the kernel that
                                      writes their result, and on no other */
#define UOPC_COMPILE_NO_STREAM 32u /* plans: no streaming stores at all */
#define UOPC_COMPILE_GUARD_PAGES 64u /* plans, a check for tests: every
                                      temporary and constant array of the
                                      plan gets pages of its own that end
                                      where it ends, between inaccessible
                                      pages, so that a kernel reading or
                                      writing outside one ends the process
                                      with SIGSEGV instead of passing
                                      unseen; each call maps and unmaps
                                      its temporaries (slower calls), and
                                      their start is aligned only as their
                                      size allows (only the peel streams:
                                      docs/loops.md).  The
                                      kernels and results are unchanged;
                                      the caller's arguments and result
                                      stay where the caller put them (the
                                      CLI's --guard-pages guards those
                                      too).  POSIX hosts (mmap); elsewhere
                                      the flag is accepted and changes
                                      nothing */

typedef struct uopc_compile_opts {
  uopc_tier tier;
  unsigned flags;   /* UOPC_COMPILE_* bits; unknown bits are UOPC_ERR_ARG */
  uint32_t threads; /* plans: threads a call may use (outer loops split,
                       results bit-identical to one thread), and the
                       threads the plan's kernels are compiled on (the
                       same code as one at a time); 0: the engine's
                       default (UOPC_THREADS, else the machine's CPUs);
                       1: the calling thread only.  Kernels ignore it */
} uopc_compile_opts;

/* The rules that prepare a kernel for code generation, applied bottom up
   before emitting: RANGE(end) -> RANGE(simplify(end)) and INDEX(buffer, i)
   -> INDEX(buffer, simplify(i)) where the expression loads nothing (exact:
   the `symbolic` set).  Built once per process, never freed. */
UOPC_API const uopc_matcher *uopc_rules_kernel(void);

/* Compiles the kernel rooted at root (a SINK, STORE or END) built in c.
   opts may be NULL (UOPC_TIER_FAST); a tier that is not a uopc_tier is
   UOPC_ERR_ARG.  Returns a handle (free it with uopc_kernel_free), or NULL
   with the error in *e (e may be NULL): UOPC_ERR_ARG for a NULL c or root
   or a root of another context, UOPC_ERR_TYPE for a graph that is not a
   kernel ("a kernel's root must be a SINK ..."), UOPC_ERR_JIT, NOMEM.  As
   every call that takes a uopc_error * (uopc.h), it never reports an
   earlier call's error and leaves the context's recorded error as it was.
   The handle does not depend on c afterwards. */
UOPC_API uopc_kernel *uopc_compile(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopc_error *e);

/* Calling a kernel.  bufs[s] is the memory of BUFFER slot s (n must be
 * uopc_kernel_nbufs(k)); the kernel reads and writes the first
 * uopc_kernel_buf_len(k, s) elements of slot s, of uopc_kernel_buf_dtype(k,
 * s) (bool one byte, i32 and f32 four, f16 two; tensor.h).
 *
 * Aliasing.  The kernel's code assumes that the memory of different slots
 * never overlaps: every access through slot s is tagged with an alias scope
 * of its own and "noalias" with every other slot's (lib/jit/entry.c), so
 * the optimizer reorders and vectorizes across slots.  Both calls therefore
 * refuse, with UOPC_ERR_ARG and before running anything, two slots whose
 * byte ranges (the buffers' lengths) overlap, e.g. the same array given as
 * input slot 0 and output slot 1: that is never run.  In-place work is
 * one slot that the kernel both loads and stores (out[i] = out[i] * 2, or
 * C += A * B reading C): accesses through one slot keep the program's
 * order, as in uopc_run.
 *
 * uopc_kernel_call, for hot loops, checks only what is O(n log n) in the
 * number of buffers: k not NULL, n, no NULL pointer, no overlap.  It
 * trusts, without any check, that each bufs[s] points to at least
 * buf_len(k, s) elements of the slot's dtype, readable and writable: a
 * shorter array or another dtype is undefined behaviour (out-of-bounds
 * reads and writes, garbage values), never reported.
 * uopc_kernel_call_checked checks all of it from the descriptors.
 *
 * Both return UOPC_OK, or an error in *e (e may be NULL; *e is zeroed on
 * success): UOPC_ERR_ARG naming the slot for the checks above,
 * UOPC_ERR_EVAL when an index that bounds could not prove inside its
 * buffer was out of bounds at run time (stores made before it stay done). */
UOPC_API uopc_status uopc_kernel_call(const uopc_kernel *k, void *const *bufs, uint32_t n, uopc_error *e);

/* The checked call: bufs[s] describes the array of slot s (tensor.h, the
   descriptors uopc_plan_call takes).  Before running anything it refuses
   with UOPC_ERR_ARG and a message naming the slot ("buffer 1: ..."): a NULL
   k or bufs, n other than uopc_kernel_nbufs(k), a dtype other than the
   slot's, a bad shape (more than UOPC_LIMIT_DIMS dims, NULL shape, a
   negative dim), fewer elements than uopc_kernel_buf_len(k, s) (more are
   fine: the kernel uses the first ones, in C order, whatever the shape), a
   NULL data pointer, and overlapping slots (as above). */
UOPC_API uopc_status uopc_kernel_call_checked(const uopc_kernel *k, const uopc_tensor *bufs, uint32_t n,
                                              uopc_error *e);

/* Releases the kernel's code.  NULL is a no-op. */
UOPC_API void uopc_kernel_free(uopc_kernel *k);

/* The kernel's buffers: how many, and slot s's dtype and element count.
   0, UOPC_DT_VOID and 0 for a NULL k or a slot out of range. */
UOPC_API uint32_t uopc_kernel_nbufs(const uopc_kernel *k);
UOPC_API uopc_dtype uopc_kernel_buf_dtype(const uopc_kernel *k, uint32_t slot);
UOPC_API int64_t uopc_kernel_buf_len(const uopc_kernel *k, uint32_t slot);

/* The LLVM IR of the kernel as emitted (before optimization) or the host
   assembly of its optimized code.  Returns a malloc'd string (caller frees
   with free()), or NULL with *e, with the errors and the convention of
   uopc_compile. */
UOPC_API char *uopc_emit_llvm(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopc_error *e);
UOPC_API char *uopc_emit_asm(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopc_error *e);

#ifdef __cplusplus
}
#endif
#endif
