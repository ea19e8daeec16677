/* uopc/plan.h - tensor programs compiled to plans of loop kernels.
 *
 * A tensor program is a graph whose root is a value (not a kernel): PARAMs
 * with shapes (the caller's arrays), constants and STACK literals, ALU ops,
 * movement ops, REDUCE, STACK/INDEX of shaped values, CALLs.  Compiling it
 * (rangeify, docs/schedule.md) gives a plan: loop kernels, the temporary
 * buffers between them, their order, and which caller array each PARAM slot
 * and the result are.  Calling a plan runs its kernels on the caller's
 * arrays and computes, bit for bit, what `uopc_run` computes: every REDUCE
 * accumulates left to right from the first element, floats round as the
 * spec says, no fast-math.
 *
 * Undefined operations (division by zero, INT_MIN // -1, a float to i32
 * cast out of range, an INDEX by a value out of range) are poison: a poison
 * value that reaches the result or a temporary makes the call fail with
 * UOPC_ERR_EVAL and a message naming the op, as `run`'s ("division by zero
 * in FLOORDIV (1 // 0)"), at the op's .uir position when it was parsed.
 * WHERE takes only the poison of its condition and of the arm it selects, so
 * where(b != 0, a // b, 0) is not an error.  Where `run` gets a value only
 * because a rule dropped an undefined operand (x * 0 -> 0), the plan may
 * report the error instead (docs/semantics.md).
 *
 * Threads: a plan is immutable after compiling; any number of threads may
 * call it at once (each call has its own temporaries).  It does not depend
 * on the context it was compiled in.  A plan compiled for T > 1 threads
 * (uopc_compile_opts.threads) runs each big kernel whose outer loop is an
 * output axis as T chunks at once, on the engine's thread pool and the
 * calling thread; results, and errors, are bit for bit those of one thread
 * (docs/schedule.md, "Threads").
 */
#ifndef UOPC_PLAN_H
#define UOPC_PLAN_H

#include "uopc/jit.h"
#include "uopc/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct uopc_plan uopc_plan;

/* Compiles the tensor program rooted at root (built in c).  opts may be NULL
   (the fast tier; a tier that is not a uopc_tier: UOPC_ERR_ARG).  Returns
   the plan, or NULL with the error in *e only (e may be NULL; the context's
   recorded error is left as it was, uopc.h): a node the lowering cannot
   handle is named, with its .uir position when known; NULL c or root, or a
   root of another context: UOPC_ERR_ARG.  Free with uopc_plan_free.
   Plans are cached in memory (the plan cache, below): compiling a program
   compiled before, with the same options, returns the same plan again
   without compiling, and each plan returned must be freed once: a plan
   returned twice is freed twice. */
UOPC_API uopc_plan *uopc_plan_compile(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopc_error *e);

/* Runs the plan.  args[s] is the array of PARAM slot s (nargs > every slot
   the program uses; entries of slots it does not use are ignored), out the
   array of the result.  Each must have exactly the dtype and shape of its
   PARAM / of the root (a scalar: ndim 0), checked before anything runs
   (UOPC_ERR_ARG naming the slot).  out must not overlap any argument.
   Arrays need only their dtype's alignment.  A result of at least half
   the last level cache is written with streaming stores, at any alignment
   when its kernel is a plain loop over the result (elementwise: the loop
   is split where the stores reach a 64-byte boundary), else when out is
   64-byte aligned (aligned_alloc(64, ...)); the same bits either way
   (docs/loops.md, "Streaming stores").  Arrays at one offset from a 64-byte
   boundary (glibc's malloc of a large block: 16 bytes past a page) are as
   fast as aligned ones.
   Returns UOPC_OK, or an error in *e (e may be NULL).  NULL plan: UOPC_ERR_ARG. */
UOPC_API uopc_status uopc_plan_call(const uopc_plan *p, const uopc_tensor *args, uint32_t nargs,
                                    const uopc_tensor *out, uopc_error *e);

/* Releases the plan: one uopc_plan_free for each uopc_plan_compile that
   returned it; the last release frees its kernels and constant data (the
   plan cache keeps a reference of its own while the plan is cached).  NULL
   is a no-op. */
UOPC_API void uopc_plan_free(uopc_plan *p);

/* What the plan takes: one more than the largest PARAM slot the program
   uses (0 for a closed program); whether slot s is used, and its dtype and
   shape (*shape points into the plan).  0 for a NULL plan or an unused slot. */
UOPC_API uint32_t uopc_plan_nargs(const uopc_plan *p);
UOPC_API int uopc_plan_arg(const uopc_plan *p, uint32_t slot, uopc_dtype *dtype, uint32_t *ndim, const int64_t **shape);
/* The result's dtype and shape. 0 for a NULL plan. */
UOPC_API int uopc_plan_result(const uopc_plan *p, uopc_dtype *dtype, uint32_t *ndim, const int64_t **shape);
/* Number of kernels (0 for NULL). */
UOPC_API uint32_t uopc_plan_nkernels(const uopc_plan *p);
/* The threads a call of the plan may use: its compile options' threads, or
   the default they resolved to (UOPC_THREADS, else the CPUs the process may
   run on), at most 64.  0 for NULL. */
UOPC_API uint32_t uopc_plan_threads(const uopc_plan *p);
/* How many of its kernels are split across the threads (each as
   uopc_plan_threads chunks; docs/schedule.md "Threads").  0 for NULL. */
UOPC_API uint32_t uopc_plan_nsplit(const uopc_plan *p);

/* The LLVM IR (emit_asm: the host assembly) of every kernel of the plan of
   root, each after a line "; kernel K of N: computes buffer B (OP), JIT
   tier T" (T: the internal tier the kernel compiles at, 0 fast, 1 fast with
   CodeGen Less, 2 strong; docs/loops.md).  A malloc'd
   string (free()), or NULL with *e, with the errors and the convention of
   uopc_plan_compile. */
UOPC_API char *uopc_plan_emit(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, int emit_asm,
                              uopc_error *e);

/* The schedule of the tensor program rooted at root, without compiling it:
   for looking at what a plan will be (uopc viz, tools).  On UOPC_OK,
   *kernels is a malloc'd array (free()) of *nkernels kernel graphs in
   execution order, nodes of c, each a SINK that uopc_compile takes (BUFFER
   slots numbered per kernel); when text is not NULL, *text is a malloc'd
   string (free()) with the buffers and kernels, one line each, as
   UOPC_DEBUG=schedule prints them.  On error: the status, the error in *e
   only (e may be NULL; the context's recorded error is left as it was),
   *kernels NULL, *nkernels 0, *text NULL.
   NULL c, root, kernels or nkernels: UOPC_ERR_ARG. */
UOPC_API uopc_status uopc_plan_schedule(uopc_ctx *c, uopc_node *root, uopc_node ***kernels, uint32_t *nkernels,
                                        char **text, uopc_error *e);

/* ---- the plan cache ------------------------------------------------------
 * One per process, shared by every context and thread (a mutex; a hit costs
 * a walk over the program's nodes to build its key, microseconds).  Threads
 * compiling in their own contexts may share plans: uopc_plan_free may be
 * called from any thread (the references are atomic).  The key
 * is the program itself, not its root pointer: every node reachable from the
 * root (op, dtype, shape, arg, sources, .uir position) and the compile
 * options, compared byte for byte.  So the same program built again, in the
 * same or another context, gets the same plan, and nothing else does.
 * What else a compile reads only decides whether it succeeds (the rewrite
 * limits; errors are not cached) or what it prints (UOPC_DEBUG=schedule
 * prints "uopc schedule: from the plan cache, N kernels" on a hit; traces
 * are not repeated).  A plan outlives the context it was compiled in.
 * At most 256 plans and 256 MiB (keys and constant data) are kept; the least
 * recently used is dropped first (its callers' references stay valid). */
typedef struct uopc_plan_cache_stats {
  uint64_t hits;     /* uopc_plan_compile answered from the cache */
  uint64_t misses;   /* uopc_plan_compile that compiled (errors included) */
  uint64_t evicted;  /* plans dropped to stay under the limits */
  uint32_t plans;    /* plans in the cache now */
  uint64_t bytes;    /* their keys and data, in bytes */
} uopc_plan_cache_stats;

UOPC_API void uopc_plan_cache_get_stats(uopc_plan_cache_stats *s);
/* Zeroes hits, misses and evicted. */
UOPC_API void uopc_plan_cache_reset_stats(void);
/* Drops every plan from the cache (plans the caller holds stay valid until
   freed). */
UOPC_API void uopc_plan_cache_clear(void);
/* Bounds the cache: at most max_plans plans and max_bytes bytes (defaults
   256 and 256 MiB); evicts least recently used plans to fit now.  0 plans:
   no caching. */
UOPC_API void uopc_plan_cache_set_limit(uint32_t max_plans, uint64_t max_bytes);

#ifdef __cplusplus
}
#endif
#endif
