/* lib/jit/warm.c - the warm-up kernel: a module built here, compiled and
 * freed, so that the first real compile does not pay LLVM's one-time costs
 * (lazy initialization, page faults of code never run before: +2-18 ms).
 *
 * The kernel is o[i] = a[i]*a[i] + a[i] over 64 floats: a bottom-tested
 * loop the vectorizer takes, so that the pass pipeline, instruction
 * selection of vector code, register allocation and the link all run once.
 */
#include <llvm-c/Core.h>

#include "jit/jit_impl.h"

#define WARM_N 64

/* Fills the kernel (o, a): for (i = 0; ; ) { o[i] = a[i]*a[i] + a[i]; if (++i == WARM_N) break; } */
static void build(LLVMContextRef c, uopi_jit_kernel *k) {
  LLVMValueRef fn = uopi_jit_kernel_fn(k);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(c), f32 = LLVMFloatTypeInContext(c);
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
  LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(c, fn, "loop");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c, fn, "done");
  LLVMPositionBuilderAtEnd(b, entry);
  LLVMBuildBr(b, loop);
  LLVMPositionBuilderAtEnd(b, loop);
  LLVMValueRef i = LLVMBuildPhi(b, i64, "i"), zero = LLVMConstInt(i64, 0, 0);
  LLVMAddIncoming(i, &zero, &entry, 1);
  LLVMValueRef pa = LLVMBuildInBoundsGEP2(b, f32, uopi_jit_kernel_arg(k, 1), &i, 1, "pa");
  LLVMValueRef a = LLVMBuildLoad2(b, f32, pa, "a");
  LLVMSetAlignment(a, 4);
  uopi_jit_kernel_access(k, a, 1);
  LLVMValueRef v = LLVMBuildFAdd(b, LLVMBuildFMul(b, a, a, "aa"), a, "v");
  LLVMValueRef po = LLVMBuildInBoundsGEP2(b, f32, uopi_jit_kernel_arg(k, 0), &i, 1, "po");
  LLVMValueRef st = LLVMBuildStore(b, v, po);
  LLVMSetAlignment(st, 4);
  uopi_jit_kernel_access(k, st, 0);
  LLVMValueRef next = LLVMBuildNUWAdd(b, i, LLVMConstInt(i64, 1, 0), "next");
  LLVMAddIncoming(i, &next, &loop, 1);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, next, LLVMConstInt(i64, WARM_N, 0), "more"), loop, done);
  LLVMPositionBuilderAtEnd(b, done);
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
}

uopc_status uopi_jit_warm(uopi_jit_tier t, uopc_error *e) {
  char name[64];
  uopi_jit_unique_name(name, sizeof name, "uopc_warm");
  LLVMModuleRef m;
  uopc_status st = uopi_jit_module_new(name, &m, e);
  if (st) return st;
  uopi_jit_kernel *kern;
  st = uopi_jit_kernel_new(m, name, 2, &kern, e);
  if (st) {
    uopi_jit_module_free(m);
    return st;
  }
  build(LLVMGetModuleContext(m), kern);
  uopi_jit_kernel_free(kern);
  uopi_jit_code *k = NULL;
  st = uopi_jit_compile(m, name, 2, t, &k, e);
  uopi_jit_free(k);
  return st;
}
