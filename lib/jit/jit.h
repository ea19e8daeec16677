/* lib/jit/jit.h - the JIT engine: LLVM modules in, callable kernels out.
 *
 * One engine per process: a linker (JITLink into a pool of code memory,
 * link.h) and pools of host TargetMachines that optimize and generate code.
 * The pipeline of a compile:
 *
 *   module ──prepare──▶ optimized module ──emit──▶ object bytes ──load──▶ code
 *   (own context)       (verify, triple/DL,       (codegen on a       (JITLink: link,
 *                        passes of the tier)        pooled host TM)     find the entry)
 *
 * The engine knows LLVM modules, object bytes and code handles; it knows
 * nothing of uopc graphs, kernels or the kernel cache (docs/design.md).
 *
 * This header includes no LLVM header: the LLVM handle types it mentions
 * are declared below exactly as llvm-c/Types.h declares them (a C11 typedef
 * may be repeated), so that lib/kcache and lib/compile.c can hold modules
 * and code without seeing LLVM.  Code that builds IR includes llvm-c/Core.h
 * itself.
 *
 * Threads: everything here may be called from any number of threads at once.
 * prepare and emit run in parallel (every module has its own LLVMContext,
 * every pass run and codegen its own TargetMachine), and so do links (each
 * object is linked on its own; the engine's mutex covers a count).  See
 * docs/jit.md.
 *
 * The kernel convention (entry.c; what the lowering emits, what
 * uopi_jit_call calls):
 *
 *   define void @NAME(ptr %args) nounwind        ; args[0 .. nargs)
 *
 * The entry block loads every pointer of the array once; every load and
 * store through pointer i carries the alias scope of i and noalias with the
 * others (uopi_jit_kernel_access), so that the vectorizer needs no runtime
 * alias checks.  uopi_jit_kernel_new makes the function, the loads and the
 * scopes; the caller adds the kernel after the loads.  NAME is unique in the
 * process (uopi_jit_unique_name).  Loops should be bottom-tested (do-while
 * with the guard hoisted): the fast tier does not rotate loops and the loop
 * vectorizer needs the latch to be the exiting block.  Keep FP ops free of
 * fast-math flags (see docs/jit.md).
 *
 * Errors: LLVM failures give UOPC_ERR_JIT with LLVM's message; misuse (an
 * unknown function name, a wrong buffer count) gives UOPC_ERR_ARG.  e may be
 * NULL.  Allocation is malloc: the engine belongs to no uopc_ctx.
 */
#ifndef UOPI_JIT_JIT_H
#define UOPI_JIT_JIT_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* LLVM's opaque handles, as llvm-c/Types.h declares them. */
typedef struct LLVMOpaqueModule *LLVMModuleRef;
typedef struct LLVMOpaqueValue *LLVMValueRef;

/* ---- tiers ---------------------------------------------------------------
 * TIER0: a short function pipeline (LICM, loop vectorizer, simplifycfg) and
 *        CodeGen None with the greedy register allocator: ~1-2.5 ms a kernel.
 * TIER1: TIER0's pipeline and CodeGen Less (SelectionDAG, loop strength
 *        reduction, machine LICM): ~3 ms more a kernel; a plan's register
 *        tiles in strict mode, whose inner loop it brings from ~37 to ~25
 *        instructions (matmul 1024: 47 -> 37 ms a call, docs/loops.md).
 *        Internal: the public tiers are FAST (TIER0) and STRONG (TIER2).
 * TIER2: default<O2> (+ SLP) and CodeGen Default: ~6-12 ms; the same speed
 *        at memory bandwidth, up to ~4x faster on loop nests whose inner loop
 *        it unrolls fully (64^3 matmul).  For hot kernels. */
typedef enum uopi_jit_tier { UOPI_JIT_TIER0 = 0, UOPI_JIT_TIER1 = 1, UOPI_JIT_TIER2 = 2 } uopi_jit_tier;

/* The LLVM pass pipeline text of a tier (for traces and cache keys); NULL for
   an unknown tier.  Static storage. */
UOPI_FUNC const char *uopi_jit_tier_pipeline(uopi_jit_tier t);

/* ---- fast math ------------------------------------------------------------
 * A module emitted in fast-math mode (UOPC_COMPILE_FAST_MATH, docs/fast-math.md)
 * carries the module flag "uopc.fast-math" (set by the emitter with
 * uopi_jit_module_set_fast); the passes then run the tier's fast pipeline:
 * at TIER0 the loop vectorizer may interleave (several vector accumulators
 * for a reassociable reduction), at TIER2 it is default<O2> as before.  The
 * flag is read from the module so that every path that prepares a module
 * (compile, asm text) sees the same mode. */
UOPI_FUNC const char *uopi_jit_pipeline(uopi_jit_tier t, int fast);
UOPI_FUNC void uopi_jit_module_set_fast(LLVMModuleRef m);
/* 1 when m carries the fast-math module flag, else 0. */
UOPI_FUNC int uopi_jit_module_fast(LLVMModuleRef m);

/* ---- no vectorize ----------------------------------------------------------
 * A module with a loop whose counter moves a checked index or a modulo
 * address (codegen/emit.c, unsafe_address) carries the module flag
 * "uopc.no-vectorize"; the passes then run TIER0's pipeline without the
 * loop vectorizer on it at every tier (no SLP vectorizer either; codegen
 * stays the tier's).  The per-loop hint the emitter also sets
 * (llvm.loop.vectorize.enable false) was lost before the vectorizer in
 * default<O2> for a loop with a bounds guard: IPSCCP, seeing the latch's
 * test always true once the guard has passed, replaced the latch branch by
 * one without the loop's metadata (docs/decisions.md, stops 33 and 34). */
UOPI_FUNC void uopi_jit_module_set_novec(LLVMModuleRef m);
/* 1 when m carries the no-vectorize module flag, else 0. */
UOPI_FUNC int uopi_jit_module_novec(LLVMModuleRef m);

/* ---- TIER0's IR at TIER2 ----------------------------------------------------
 * A module with loops that default<O2> makes slower than TIER0's pipeline
 * carries the module flag "uopc.tier0-ir" (set by the emitter); at TIER2 the
 * passes then run TIER0's IR pipeline on it, with TIER2's codegen.  Two
 * kinds, measured 3-5x slower at TIER2 before (Zen 5, docs/decisions.md,
 * stop 39):
 *   - an innermost loop with two or more strict float accumulators at
 *     addresses it does not move: a row reduction's chains (docs/loops.md),
 *     which default<O2>'s SLP vectorizer packed, rows apart, into gathers
 *     (256 x 65536 f32 row sum 17.3 -> 3.6-4.6 ms);
 *   - a strict exp2, log2 or sin computed inline with its libm fallback
 *     block (certain.c): default<O2> left the loop scalar, where TIER0's
 *     loop vectorizer takes the masked call.
 * Other loops with an accumulator keep default<O2> (the 64^3 matmul's,
 * whose full unroll makes it up to 4x faster). */
UOPI_FUNC void uopi_jit_module_set_tier0_ir(LLVMModuleRef m);
/* 1 when m carries the "uopc.tier0-ir" module flag, else 0. */
UOPI_FUNC int uopi_jit_module_tier0_ir(LLVMModuleRef m);

/* ---- streaming stores (nontemporal.c) --------------------------------------
 * A module whose kernel stores more than the cache holds (the emitter
 * decides: lib/codegen/emit.h, UOPI_EMIT_STREAM) carries the module flag
 * "uopc.stream"; after the IR passes, uopi_jit_passes then tags its vector
 * stores whose alignment LLVM proved at least their size as non-temporal.
 * The flag is read from the module, as the fast-math one. */
UOPI_FUNC void uopi_jit_module_set_stream(LLVMModuleRef m);
/* 1 when m carries the streaming-store module flag, else 0. */
UOPI_FUNC int uopi_jit_module_stream(LLVMModuleRef m);
/* Sets !nontemporal on every non-volatile store in m of a vector of at
   least 64 bytes (a cache line) whose alignment is at least its size;
   returns how many. */
UOPI_FUNC unsigned uopi_jit_mark_nontemporal(LLVMModuleRef m);

/* ---- the engine ----------------------------------------------------------
 * uopi_jit_init: idempotent and thread safe; every other call runs it
 * itself, so calling it is needed only to choose when the cost (~1 ms, plus
 * the process-wide LLVM setup the first time) is paid.  The process-wide part
 * (native target, LLVMParseCommandLineOptions with "-optimize-regalloc") runs
 * exactly once per process and is never undone: LLVM's cl::opts are global to
 * the process, shared with any other LLVM user in it.
 *
 * uopi_jit_shutdown: disposes the linker (and its code memory) and every
 * pooled TargetMachine.  Call
 * it explicitly before exit (never from a static destructor: LLVM aborts).
 * It refuses (UOPC_ERR_ARG, nothing freed) while code handles are live, and
 * needs no other engine call to be running.  A later call re-creates the
 * engine.  Code held by the kernel cache is live: the ordered shutdown of
 * the whole library is uopi_compile_shutdown (lib/compile.h), which empties
 * the cache first. */
UOPI_FUNC uopc_status uopi_jit_init(uopc_error *e);
UOPI_FUNC uopc_status uopi_jit_shutdown(uopc_error *e);

/* Compiles and frees one tiny kernel built here (a 64-element loop) at
   the tier, to absorb the first-compile costs (page faults, lazy LLVM
   initialization: +2-18 ms) at a chosen time. */
UOPI_FUNC uopc_status uopi_jit_warm(uopi_jit_tier t, uopc_error *e);

/* What the object code depends on besides the IR, for cache keys: LLVM
   version, triple, host CPU and features, the cl::opts set.  A static string
   after a successful init (valid until shutdown), NULL before. */
UOPI_FUNC const char *uopi_jit_target_id(void);
/* A number that changes at every successful init: a target id string seen
   at the same address in the same generation has the same contents. */
UOPI_FUNC unsigned uopi_jit_generation(void);

/* The vector width kernels are compiled for, in bits: 512 where the target
   (the host, or UOPC_JIT_CPU / UOPC_JIT_FEATURES) has AVX-512F, 256 with
   AVX, else 128; every kernel function says it ("prefer-vector-width", so
   LLVM uses 512-bit vectors on Intel CPUs too, which it otherwise avoids)
   and the plans' register tiles are shaped for it (docs/loops.md).
   Initializes the engine; 0 when that fails. */
UOPI_FUNC unsigned uopi_jit_vector_bits(void);

/* ---- building modules ----------------------------------------------------- */

/* A new module in a new LLVMContext, with the host triple and data layout.
   The caller owns both (uopi_jit_compile disposes them).  *out is NULL on
   failure. */
UOPI_FUNC uopc_status uopi_jit_module_new(const char *name, LLVMModuleRef *out, uopc_error *e);

/* Disposes a module and its LLVMContext (for modules made by
   uopi_jit_module_new that are not handed to uopi_jit_compile).  NULL is a
   no-op. */
UOPI_FUNC void uopi_jit_module_free(LLVMModuleRef m);

/* The most pointers a kernel's argument array may hold (a sanity bound: the
   convention has no limit of its own). */
#define UOPI_JIT_MAX_ARGS 65536

/* A kernel function being built (entry.c). */
typedef struct uopi_jit_kernel uopi_jit_kernel;

/* Adds to m the kernel `name` in the convention above, taking nargs
   pointers (nargs <= UOPI_JIT_MAX_ARGS): the function, its entry block with
   the loads of the pointers (the caller continues at the end of that
   block: LLVMGetEntryBasicBlock), and the alias scopes.  *out is the
   builder's state, freed with uopi_jit_kernel_free (the function stays in
   m).  Only valid when the pointers of a call never overlap.  UOPC_ERR_ARG
   (too many), or UOPC_ERR_NOMEM, with *out NULL. */
UOPI_FUNC uopc_status uopi_jit_kernel_new(LLVMModuleRef m, const char *name, unsigned nargs, uopi_jit_kernel **out,
                                          uopc_error *e);
/* The function. */
UOPI_FUNC LLVMValueRef uopi_jit_kernel_fn(const uopi_jit_kernel *k);
/* Pointer i of the argument array (loaded in the entry block); NULL when
   i >= nargs. */
UOPI_FUNC LLVMValueRef uopi_jit_kernel_arg(const uopi_jit_kernel *k, unsigned i);
/* Tags the load or store inst as touching the memory of pointer i only
   (!alias.scope and !noalias).  Every access through an argument should be
   tagged; an untagged one is only less optimized.  i >= nargs: nothing. */
UOPI_FUNC void uopi_jit_kernel_access(uopi_jit_kernel *k, LLVMValueRef inst, unsigned i);
/* Frees the builder's state (not the function).  NULL is a no-op. */
UOPI_FUNC void uopi_jit_kernel_free(uopi_jit_kernel *k);

/* Writes "<prefix>_<process nonce>_<counter>" into buf (size n >= 64 is
   always enough for a prefix up to 16 chars; a smaller buffer gets a
   truncated, NUL-terminated name): unique in this process and, with
   overwhelming probability, against names in objects loaded from other
   processes' caches. */
UOPI_FUNC void uopi_jit_unique_name(char *buf, size_t n, const char *prefix);

/* ---- compiling -------------------------------------------------------------
 * The steps of uopi_jit_compile, callable one by one (for --emit, the cache
 * and timing).  None of them takes ownership of m. */

/* LLVM's verifier on m: UOPC_OK, or UOPC_ERR_JIT "invalid LLVM module: ..."
   with LLVM's message.  m is unchanged. */
UOPI_FUNC uopc_status uopi_jit_verify(LLVMModuleRef m, uopc_error *e);

/* Verifies m, sets the host triple and data layout, and runs the tier's
   passes with a host TargetMachine, in place. */
UOPI_FUNC uopc_status uopi_jit_prepare(LLVMModuleRef m, uopi_jit_tier t, uopc_error *e);

/* Generates code for a prepared m on a host TargetMachine of the tier's
   CodeGen level (PIC, small code model): an ELF object, or assembly text when
   asm_text (then NUL-terminated; *size excludes the NUL).  *out is malloc'd,
   the caller frees it.  Codegen rewrites m's IR (CodeGenPrepare): emit a
   module once, or clone it first. */
UOPI_FUNC uopc_status uopi_jit_emit(LLVMModuleRef m, uopi_jit_tier t, int asm_text, uint8_t **out,
                                    size_t *size, uopc_error *e);

/* The LLVM IR text of m (malloc'd, caller frees; NULL on OOM). */
UOPI_FUNC char *uopi_jit_ir_text(LLVMModuleRef m);

/* The assembly the JIT would run for m at tier t (a clone of m is prepared
   and emitted; m is unchanged).  *out malloc'd, caller frees. */
UOPI_FUNC uopc_status uopi_jit_asm_text(LLVMModuleRef m, uopi_jit_tier t, char **out, uopc_error *e);

/* ---- code handles -------------------------------------------------------- */

/* A compiled kernel.  Fields are read-only.  The handle owns its linked
   code (link.h) and a copy of the object bytes. */
typedef struct uopi_jit_code {
  void (*fn)(void);          /* the entry; call it through uopi_jit_call */
  unsigned nbufs;            /* number of pointers in its argument array */
  const uint8_t *obj;        /* the ELF object (for the kernel cache) */
  size_t obj_size;
  void *handle;              /* the linked code (uopi_jit_unlink) */
} uopi_jit_code;

/* prepare + emit + load, for the kernel `name` of m, an entry in the
   convention above (void(ptr)) whose argument array holds nargs pointers.
   The module is verified first (UOPC_ERR_JIT), then the entry's type is
   checked (UOPC_ERR_ARG).  Takes ownership of m and of its LLVMContext
   (which must hold no other module, and must not be the global context) and
   disposes both, on success and on failure. */
UOPI_FUNC uopc_status uopi_jit_compile(LLVMModuleRef m, const char *name, unsigned nargs, uopi_jit_tier t,
                                       uopi_jit_code **out, uopc_error *e);

/* Links an object (bytes copied) and finds its symbol `name`, a kernel whose
   argument array holds nbufs pointers: no optimization, no codegen.  Each
   object is linked on its own: the same object may be loaded any number of
   times, each a kernel of its own.  UOPC_ERR_JIT when the bytes are not an
   object the linker takes, an external symbol is not in the process, or
   `name` is not defined. */
UOPI_FUNC uopc_status uopi_jit_load(const void *obj, size_t size, const char *name, unsigned nbufs,
                                    uopi_jit_code **out, uopc_error *e);

/* Removes the code from the JIT, releases its memory and the handle.  NULL is
   a no-op.  The kernel must not be running. */
UOPI_FUNC void uopi_jit_free(uopi_jit_code *k);

/* ---- calling -------------------------------------------------------------
 * Calls k(bufs), bufs[0..n) its argument array, with a known floating-point
 * environment:
 * the MXCSR control bits at their defaults during the call (0x1F80: round to
 * nearest, FTZ and DAZ off, all exceptions masked), the caller's control bits
 * restored after it, so the caller's FTZ/DAZ/rounding state never changes
 * results.  Sticky exception flags accumulate as across any C call.  n must
 * equal k->nbufs (UOPC_ERR_ARG otherwise).  No lock: any number of threads
 * may call kernels at once. */
UOPI_FUNC uopc_status uopi_jit_call(const uopi_jit_code *k, void *const *bufs, unsigned n,
                                    uopc_error *e);

#ifdef __cplusplus
}
#endif
#endif
