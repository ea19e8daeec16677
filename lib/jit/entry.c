/* lib/jit/entry.c - the kernel calling convention: an entry that takes one
 * array of pointers, around a body with one noalias pointer parameter each.
 *
 *   define void @NAME(ptr %args) nounwind {             ; what the launcher calls
 *     %a0 = load ptr, ptr %args                         ; each pointer once, at entry
 *     ...
 *     call void @NAME.body(ptr %a0, ..., ptr %aN-1)
 *     ret void
 *   }
 *   define internal void @NAME.body(ptr noalias %0, ...) alwaysinline nounwind
 *
 * One call type serves every arity (the launcher needs no switch, and there
 * is no limit of a dozen or so register arguments), while the body keeps a
 * noalias parameter per buffer: when the tier's pipeline inlines it (both
 * pipelines start with the always-inliner), LLVM turns the noalias
 * parameters into alias scopes on every load and store, so the vectorizer
 * still needs no runtime alias checks.  noalias is valid because the
 * buffers of a call never overlap (uopc_kernel_call checks it).
 */
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "jit/jit_impl.h"

static LLVMAttributeRef attr(LLVMContextRef c, const char *name) {
  return LLVMCreateEnumAttribute(c, LLVMGetEnumAttributeKindForName(name, strlen(name)), 0);
}

uopc_status uopi_jit_kernel_new(LLVMModuleRef m, const char *name, unsigned nargs, LLVMValueRef *body,
                                uopc_error *e) {
  *body = NULL;
  if (nargs > UOPI_JIT_MAX_ARGS)
    return uopi_jit_fail(e, UOPC_ERR_ARG, "kernel %s: %u pointer arguments, at most %d", name, nargs, UOPI_JIT_MAX_ARGS);
  size_t len = strlen(name);
  char *bname = malloc(len + sizeof ".body");
  LLVMTypeRef *params = malloc((nargs ? nargs : 1) * sizeof *params);
  LLVMValueRef *args = malloc((nargs ? nargs : 1) * sizeof *args);
  if (!bname || !params || !args) {
    free(bname);
    free(params);
    free(args);
    return uopi_jit_fail(e, UOPC_ERR_NOMEM, "out of memory");
  }
  memcpy(bname, name, len);
  memcpy(bname + len, ".body", sizeof ".body");
  LLVMContextRef c = LLVMGetModuleContext(m);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(c, 0), vd = LLVMVoidTypeInContext(c), i64 = LLVMInt64TypeInContext(c);
  for (unsigned i = 0; i < nargs; i++) params[i] = ptr;
  LLVMTypeRef bty = LLVMFunctionType(vd, params, nargs, 0);
  LLVMValueRef b = LLVMAddFunction(m, bname, bty);
  LLVMSetLinkage(b, LLVMInternalLinkage);
  LLVMAddAttributeAtIndex(b, LLVMAttributeFunctionIndex, attr(c, "alwaysinline"));
  LLVMAddAttributeAtIndex(b, LLVMAttributeFunctionIndex, attr(c, "nounwind"));
  for (unsigned i = 0; i < nargs; i++) LLVMAddAttributeAtIndex(b, i + 1, attr(c, "noalias"));

  LLVMValueRef fn = LLVMAddFunction(m, name, LLVMFunctionType(vd, &ptr, 1, 0));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, attr(c, "nounwind")); /* no .eh_frame to register */
  LLVMBuilderRef bld = LLVMCreateBuilderInContext(c);
  LLVMPositionBuilderAtEnd(bld, LLVMAppendBasicBlockInContext(c, fn, "entry"));
  LLVMValueRef base = LLVMGetParam(fn, 0);
  for (unsigned i = 0; i < nargs; i++) {
    LLVMValueRef at = LLVMConstInt(i64, i, 0);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(bld, ptr, base, &at, 1, "");
    args[i] = LLVMBuildLoad2(bld, ptr, p, "");
    LLVMSetAlignment(args[i], 8);
  }
  LLVMBuildCall2(bld, bty, b, args, nargs, "");
  LLVMBuildRetVoid(bld);
  LLVMDisposeBuilder(bld);
  free(bname);
  free(params);
  free(args);
  *body = b;
  return UOPC_OK;
}
