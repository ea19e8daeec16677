/* lib/jit/tm.c - host TargetMachines, pooled per tier.
 *
 * A TargetMachine is not thread safe, and making one costs about 1.3 ms
 * (TM, subtarget, TTI), more than the whole fast-tier compile budget allows.
 * So each is made once and reused: a compile takes a TM from its tier's pool
 * (or makes one when the pool is empty), uses it for passes or codegen, and
 * gives it back.  The pool grows to the peak number of threads compiling at
 * once, like a TM per thread, but without thread-exit destructors, and
 * shutdown can dispose every TM.
 *
 * Every TM is a host TM: the host CPU and its features, or the ones
 * UOPC_JIT_CPU/UOPC_JIT_FEATURES name (engine.c; the pass TM gives the
 * vectorizer its TTI; a generic TM would plan SSE-width loops), PIC and the
 * small code model (what JITLink expects on x86-64 ELF), and the tier's
 * CodeGen level.
 */
#include <llvm-c/Core.h>

#include "jit/jit_impl.h"

#define POOL_MAX 64 /* more idle TMs than this are disposed on give */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  LLVMTargetMachineRef tm[POOL_MAX];
  int n;
} pool[3]; /* by tier: [0] TIER0, [1] TIER1, [2] TIER2 */

static LLVMCodeGenOptLevel cg_level(uopi_jit_tier t) {
  return t == UOPI_JIT_TIER0 ? LLVMCodeGenLevelNone : t == UOPI_JIT_TIER1 ? LLVMCodeGenLevelLess : LLVMCodeGenLevelDefault;
}

static LLVMTargetMachineRef make(uopi_jit_engine *g, uopi_jit_tier t, uopc_error *e) {
  LLVMTargetRef target;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple(g->triple, &target, &msg)) {
    uopi_jit_fail_msg(e, msg, "no LLVM target for the host triple");
    return NULL;
  }
  if (msg) LLVMDisposeMessage(msg);
  LLVMTargetMachineOptionsRef o = LLVMCreateTargetMachineOptions();
  LLVMTargetMachineOptionsSetCPU(o, g->cpu);
  LLVMTargetMachineOptionsSetFeatures(o, g->features);
  LLVMTargetMachineOptionsSetCodeGenOptLevel(o, cg_level(t));
  LLVMTargetMachineOptionsSetRelocMode(o, LLVMRelocPIC);
  LLVMTargetMachineOptionsSetCodeModel(o, LLVMCodeModelSmall);
  LLVMTargetMachineRef tm = LLVMCreateTargetMachineWithOptions(target, g->triple, o);
  LLVMDisposeTargetMachineOptions(o);
  if (!tm) uopi_jit_fail(e, UOPC_ERR_JIT, "cannot create a TargetMachine for %s (%s)", g->triple, g->cpu);
  return tm;
}

LLVMTargetMachineRef uopi_jit_tm_take(uopi_jit_engine *g, uopi_jit_tier t, uopc_error *e) {
  int p = t == UOPI_JIT_TIER0 ? 0 : t == UOPI_JIT_TIER1 ? 1 : 2;
  LLVMTargetMachineRef tm = NULL;
  pthread_mutex_lock(&pool_lock);
  if (pool[p].n > 0) tm = pool[p].tm[--pool[p].n];
  pthread_mutex_unlock(&pool_lock);
  return tm ? tm : make(g, t, e);
}

void uopi_jit_tm_give(uopi_jit_tier t, LLVMTargetMachineRef tm) {
  int p = t == UOPI_JIT_TIER0 ? 0 : t == UOPI_JIT_TIER1 ? 1 : 2;
  pthread_mutex_lock(&pool_lock);
  if (pool[p].n < POOL_MAX) {
    pool[p].tm[pool[p].n++] = tm;
    tm = NULL;
  }
  pthread_mutex_unlock(&pool_lock);
  if (tm) LLVMDisposeTargetMachine(tm);
}

void uopi_jit_tm_dispose_all(void) {
  pthread_mutex_lock(&pool_lock);
  for (int p = 0; p < 3; p++)
    while (pool[p].n > 0) LLVMDisposeTargetMachine(pool[p].tm[--pool[p].n]);
  pthread_mutex_unlock(&pool_lock);
}
