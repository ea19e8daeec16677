/* lib/codegen/emit.h - kernels to LLVM IR (lib/codegen/emit.c). */
#ifndef UOPI_CODEGEN_EMIT_H
#define UOPI_CODEGEN_EMIT_H

#include "jit/jit.h"
#include "lower/kernel.h"

/* Emits the prepared kernel k as function `name` in a new module (its own
   LLVMContext; see uopi_jit_module_new).  Errors go to the context. */
UOPI_FUNC uopc_status uopi_emit_kernel(uopc_ctx *c, const uopi_kernel_ir *k, const char *name, LLVMModuleRef *out);

#endif
