/* test/support/samples.c - two reference kernels built with the LLVM C API,
 * for the JIT engine's tests (test/test_jit_engine.cpp) and bench_jit.
 *
 * They are written the way the lowering should write kernels, in the JIT's
 * kernel convention (uopi_jit_kernel_new: a function taking an array of
 * pointers, every access tagged with its pointer's alias scope):
 * SSA values (no allocas), bottom-tested loops over i64 induction variables,
 * inbounds GEPs, fmul and fadd without fast-math flags, noalias buffers.
 */
#include <stdio.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "support/samples.h"

typedef struct builder {
  LLVMContextRef c;
  LLVMBuilderRef b;
  uopi_jit_kernel *k;
  LLVMValueRef fn;
  LLVMTypeRef i64, f32;
} builder;

typedef struct loop {
  LLVMBasicBlockRef head;
  LLVMValueRef iv;
} loop;

/* for (iv = 0; ; ) { body ...; if (++iv >= n) break; }  (n >= 1) */
static loop loop_begin(builder *B, const char *name) {
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(B->b);
  loop l = {LLVMAppendBasicBlockInContext(B->c, B->fn, name), NULL};
  LLVMBuildBr(B->b, l.head);
  LLVMPositionBuilderAtEnd(B->b, l.head);
  l.iv = LLVMBuildPhi(B->b, B->i64, name);
  LLVMValueRef zero = LLVMConstInt(B->i64, 0, 0);
  LLVMAddIncoming(l.iv, &zero, &pre, 1);
  return l;
}

static void loop_end(builder *B, loop *l, int64_t n) {
  LLVMValueRef next = LLVMBuildNUWAdd(B->b, l->iv, LLVMConstInt(B->i64, 1, 0), "next");
  LLVMSetNSW(next, 1);
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(B->b);
  LLVMAddIncoming(l->iv, &next, &latch, 1);
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(B->c, B->fn, "exit");
  LLVMValueRef more = LLVMBuildICmp(B->b, LLVMIntULT, next, LLVMConstInt(B->i64, (unsigned long long)n, 0), "more");
  LLVMBuildCondBr(B->b, more, l->head, exit);
  LLVMPositionBuilderAtEnd(B->b, exit);
}

static LLVMValueRef addr(builder *B, LLVMValueRef base, LLVMValueRef idx) {
  return LLVMBuildInBoundsGEP2(B->b, B->f32, base, &idx, 1, "p");
}

/* buf[idx], buf the kernel's pointer number `buf` */
static LLVMValueRef load(builder *B, unsigned buf, LLVMValueRef idx) {
  LLVMValueRef v = LLVMBuildLoad2(B->b, B->f32, addr(B, uopi_jit_kernel_arg(B->k, buf), idx), "v");
  LLVMSetAlignment(v, 4);
  uopi_jit_kernel_access(B->k, v, buf);
  return v;
}

static void store(builder *B, LLVMValueRef v, unsigned buf, LLVMValueRef idx) {
  LLVMValueRef s = LLVMBuildStore(B->b, v, addr(B, uopi_jit_kernel_arg(B->k, buf), idx));
  LLVMSetAlignment(s, 4);
  uopi_jit_kernel_access(B->k, s, buf);
}

static LLVMValueRef imul(builder *B, LLVMValueRef x, int64_t n) {
  LLVMValueRef r = LLVMBuildNUWMul(B->b, x, LLVMConstInt(B->i64, (unsigned long long)n, 0), "row");
  LLVMSetNSW(r, 1);
  return r;
}

static LLVMValueRef iadd(builder *B, LLVMValueRef x, LLVMValueRef y) {
  LLVMValueRef r = LLVMBuildNUWAdd(B->b, x, y, "ix");
  LLVMSetNSW(r, 1);
  return r;
}

/* o[i] = a[i]*b[i] + a[i] */
static void build_ew(builder *B, int64_t n) {
  enum { o, a, b };
  loop i = loop_begin(B, "i");
  LLVMValueRef va = load(B, a, i.iv);
  LLVMValueRef m = LLVMBuildFMul(B->b, va, load(B, b, i.iv), "m");
  store(B, LLVMBuildFAdd(B->b, m, va, "s"), o, i.iv);
  loop_end(B, &i, n);
}

/* for i: { for j: c[i,j] = 0;  for k: for j: c[i,j] = c[i,j] + a[i,k]*b[k,j] } */
static void build_mm(builder *B, int64_t n) {
  enum { c, a, b };
  loop i = loop_begin(B, "i");
  LLVMValueRef ci = imul(B, i.iv, n);
  loop z = loop_begin(B, "z");
  store(B, LLVMConstReal(B->f32, 0.0), c, iadd(B, ci, z.iv));
  loop_end(B, &z, n);
  loop k = loop_begin(B, "k");
  LLVMValueRef aik = load(B, a, iadd(B, ci, k.iv));
  LLVMValueRef bk = imul(B, k.iv, n);
  loop j = loop_begin(B, "j");
  LLVMValueRef cij = iadd(B, ci, j.iv);
  LLVMValueRef m = LLVMBuildFMul(B->b, aik, load(B, b, iadd(B, bk, j.iv)), "m");
  store(B, LLVMBuildFAdd(B->b, load(B, c, cij), m, "s"), c, cij);
  loop_end(B, &j, n);
  loop_end(B, &k, n);
  loop_end(B, &i, n);
}

uopc_status sample_module(sample_kind s, int64_t n, const char *name, LLVMModuleRef *out, uopc_error *e) {
  *out = NULL;
  if (n < 1 || (s != SAMPLE_EW && s != SAMPLE_MM)) {
    if (e) {
      memset(e, 0, sizeof *e);
      e->code = UOPC_ERR_ARG;
      snprintf(e->msg, sizeof e->msg, "bad sample kernel (%d, n=%lld)", (int)s, (long long)n);
    }
    return UOPC_ERR_ARG;
  }
  LLVMModuleRef m;
  uopc_status st = uopi_jit_module_new(name, &m, e);
  if (st) return st;
  builder B = {.c = LLVMGetModuleContext(m)};
  st = uopi_jit_kernel_new(m, name, 3, &B.k, e); /* the function and the loads of its pointers */
  if (st) {
    uopi_jit_module_free(m);
    return st;
  }
  B.fn = uopi_jit_kernel_fn(B.k);
  B.b = LLVMCreateBuilderInContext(B.c);
  B.i64 = LLVMInt64TypeInContext(B.c);
  B.f32 = LLVMFloatTypeInContext(B.c);
  LLVMPositionBuilderAtEnd(B.b, LLVMGetEntryBasicBlock(B.fn));
  if (s == SAMPLE_EW)
    build_ew(&B, n);
  else
    build_mm(&B, n);
  LLVMBuildRetVoid(B.b);
  LLVMDisposeBuilder(B.b);
  uopi_jit_kernel_free(B.k);
  *out = m;
  return UOPC_OK;
}
