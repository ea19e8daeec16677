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

#ifdef __cplusplus
}
#endif
#endif
