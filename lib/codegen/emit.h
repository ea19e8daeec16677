/* lib/codegen/emit.h - a linearized kernel as LLVM IR (lib/codegen/emit.c,
 * ops.c).  The emitter translates the program one instruction at a time; it
 * decides nothing about order or placement (lib/lower/linearize.h).
 */
#ifndef UOPI_CODEGEN_EMIT_H
#define UOPI_CODEGEN_EMIT_H

#include "jit/jit.h"
#include "lower/linearize.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The program p as the kernel `name` in a new module (its own LLVMContext;
   uopi_jit_module_new), in the JIT's kernel convention (lib/jit/jit.h) with
   p->nbufs buffers and the status word.  flags are the compile flags
   (UOPC_COMPILE_*): with UOPC_COMPILE_FAST_MATH the float ops are emitted
   in fast-math mode (ops.c, docs/fast-math.md) and the module carries the
   fast-math flag (uopi_jit_module_set_fast); the other bits change nothing
   here.  The caller owns *out (hand it to
   uopi_jit_compile, or free it with uopi_jit_module_free).  UOPC_OK, or the
   error in the context (UOPC_ERR_TYPE for an op that cannot be compiled,
   UOPC_ERR_NOMEM, UOPC_ERR_JIT) with *out NULL. */
UOPI_FUNC uopc_status uopi_emit(uopc_ctx *c, const uopi_prog *p, const char *name, unsigned flags, LLVMModuleRef *out);

/* An internal compile-flag bit (never a user's: uopc_compile refuses bits it
   does not know), set by the pipeline (lib/compile.c) on a kernel that
   uopi_stream_pays chose (never a user's UOPC_COMPILE_STREAM itself, which
   only asks): the emitter then emits its loops twice, the copy
   for 64-byte aligned output buffers with streaming stores
   (lib/jit/nontemporal.c).  Part of the kernel cache key, as every flag. */
#define UOPI_EMIT_STREAM 0x100u

/* 1 when the prepared kernel k, compiled with flags, gets streaming stores:
   they are asked for (UOPC_COMPILE_STREAM in flags; never with
   UOPC_STREAM=off), the host is x86-64 with 512-bit vectors, k stores to no buffer it also
   loads from (no accumulation), and it stores at least
   UOPC_STREAM_MIN_BYTES bytes (default: half the last level cache,
   sysconf's _SC_LEVEL3_CACHE_SIZE, else 16 MiB), counted as its iterations
   (the product of its constant loop sizes) times the size of the largest
   dtype it stores.  0 for any other kernel; -1 when out of memory (the
   error recorded in c). */
UOPI_FUNC int uopi_stream_pays(uopc_ctx *c, const uopi_kernel_ir *k, unsigned flags);

#ifdef __cplusplus
}
#endif
#endif
