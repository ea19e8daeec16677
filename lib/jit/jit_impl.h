/* lib/jit/jit_impl.h - what the JIT engine's files share (engine.c, tm.c,
 * passes.c, object.c, code.c, launch.c, ...).  Users of the engine include
 * jit.h only.
 */
#ifndef UOPI_JIT_JIT_IMPL_H
#define UOPI_JIT_JIT_IMPL_H

#include <pthread.h>

#include <llvm-c/Error.h>
#include <llvm-c/TargetMachine.h>

#include "jit/jit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- engine.c: the one engine of the process ----------------------------- */
typedef struct uopi_jit_engine {
  pthread_mutex_t lock;            /* held around the live count only */
  struct uopi_jit_linker *linker;  /* link.h: JITLink and the memory pool */
  char *triple, *dl;               /* host triple and data layout: LLVMDisposeMessage */
  char *cpu, *features;            /* host CPU: LLVMDisposeMessage */
  char *target_id;                 /* malloc'd, see uopi_jit_target_id */
  unsigned vector_bits;            /* see uopi_jit_vector_bits */
  long live;                       /* code handles not yet freed (under lock) */
} uopi_jit_engine;

/* The engine, initialized (*g = NULL when init fails). */
UOPI_FUNC uopc_status uopi_jit_get(uopi_jit_engine **g, uopc_error *e);

/* ---- error.c: LLVM failures as uopc_error --------------------------------- */
UOPI_FUNC uopc_status uopi_jit_fail(uopc_error *e, uopc_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Consumes err. */
UOPI_FUNC uopc_status uopi_jit_fail_err(uopc_error *e, LLVMErrorRef err, const char *what);
/* Disposes msg (an LLVM message; NULL allowed). */
UOPI_FUNC uopc_status uopi_jit_fail_msg(uopc_error *e, char *msg, const char *what);

/* ---- engine.c: LLVM's error diagnostics ----------------------------------
 * UOPC_ERR_JIT with LLVM's message when an error diagnostic was reported in
 * m's context (made by uopi_jit_module_new) while it was optimized or
 * compiled; UOPC_OK otherwise (also for a context made elsewhere). */
UOPI_FUNC uopc_status uopi_jit_diag_check(LLVMModuleRef m, uopc_error *e);

/* ---- tm.c: pooled host TargetMachines ------------------------------------
 * A TargetMachine is used by one thread at a time: take one for a pass run
 * or a codegen, give it back after.  TMs are made on demand (one per tier per
 * concurrently compiling thread), reused forever, disposed at shutdown. */
UOPI_FUNC LLVMTargetMachineRef uopi_jit_tm_take(uopi_jit_engine *g, uopi_jit_tier t, uopc_error *e);
UOPI_FUNC void uopi_jit_tm_give(uopi_jit_tier t, LLVMTargetMachineRef tm);
UOPI_FUNC void uopi_jit_tm_dispose_all(void);

/* ---- passes.c ----------------------------------------------------------- */
/* 0 for a valid tier, else UOPC_ERR_ARG with *e set. */
UOPI_FUNC uopc_status uopi_jit_check_tier(uopi_jit_tier t, uopc_error *e);
/* uopi_jit_prepare without the verifier (for a module just verified). */
UOPI_FUNC uopc_status uopi_jit_passes(LLVMModuleRef m, uopi_jit_tier t, uopc_error *e);
/* The uopc module flags (jit.h: "fast math", "no vectorize", "streaming
   stores"): name set to i32 1 on m (once: setting it again does nothing),
   and whether m carries it.  name is a string literal. */
UOPI_FUNC void uopi_jit_flag_set(LLVMModuleRef m, const char *name);
UOPI_FUNC int uopi_jit_flag_has(LLVMModuleRef m, const char *name);

/* ---- blocks.c ------------------------------------------------------------ */
/* The longest basic block handed to code generation (see blocks.c). */
#define UOPI_JIT_BLOCK_MAX 1000
/* Splits every block of m longer than max instructions into blocks of at
   most max, joined by unconditional branches (after the IR passes). */
UOPI_FUNC void uopi_jit_bound_blocks(LLVMModuleRef m, unsigned max);

/* ---- sink.c -------------------------------------------------------------- */
/* Moves each instruction without side effects (and each load no write
   separates from its use) down to just before its first use in its block,
   for CodeGen None's register pressure (see sink.c; after the IR passes). */
UOPI_FUNC void uopi_jit_sink_to_uses(LLVMModuleRef m);

#ifdef __cplusplus
}
#endif
#endif
