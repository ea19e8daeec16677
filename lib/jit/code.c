/* lib/jit/code.c - code handles: link an object, look up, remove.
 *
 * Each kernel gets its own ResourceTracker in the main JITDylib, so freeing
 * one releases exactly its memory: Remove, then Release, then clear the
 * symbol pool's dead entries.  The engine's lock covers add+lookup and
 * remove, nothing else (LLJIT through the C API links on the calling thread
 * and corrupts itself when two threads link at once).
 */
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "jit/jit_impl.h"

/* Removes and releases rt; under g->lock. */
static void drop_rt(uopi_jit_engine *g, LLVMOrcResourceTrackerRef rt) {
  LLVMErrorRef err = LLVMOrcResourceTrackerRemove(rt);
  if (err) LLVMConsumeError(err); /* nothing to report it to: free cannot fail */
  LLVMOrcReleaseResourceTracker(rt);
  LLVMOrcSymbolStringPoolClearDeadEntries(g->ssp);
  uopi_jit_session_clear(); /* what Remove reported belongs to no caller */
}

/* The result of one lookup, filled by its handler (on the calling thread
   with LLJIT's in-place dispatcher; waited for otherwise). */
typedef struct lookup_wait {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done;
  LLVMErrorRef err;
  LLVMOrcExecutorAddress addr;
} lookup_wait;

static void lookup_done(LLVMErrorRef err, LLVMOrcCSymbolMapPairs result, size_t n, void *ctx) {
  lookup_wait *w = ctx;
  pthread_mutex_lock(&w->mu);
  w->err = err;
  if (!err && n) w->addr = result[0].Sym.Address;
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

/* Looks name up in the main JITDylib, materializing (linking) it: what
   LLVMOrcLLJITLookup does, through the asynchronous lookup, because the
   blocking one waits on a std::promise whose completion costs a futex
   system call per link (glibc's pthread_once always wakes), about 1 us on
   this project's machines.  Under g->lock. */
static LLVMErrorRef lookup(uopi_jit_engine *g, const char *name, LLVMOrcExecutorAddress *addr) {
  lookup_wait w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL, 0};
  LLVMOrcCJITDylibSearchOrderElement order[] = {{g->jd, LLVMOrcJITDylibLookupFlagsMatchAllSymbols}};
  LLVMOrcCLookupSetElement sym[] = {{LLVMOrcLLJITMangleAndIntern(g->jit, name), LLVMOrcSymbolLookupFlagsRequiredSymbol}};
  LLVMOrcExecutionSessionLookup(LLVMOrcLLJITGetExecutionSession(g->jit), LLVMOrcLookupKindStatic, order, 1, sym, 1,
                                lookup_done, &w);
  pthread_mutex_lock(&w.mu);
  while (!w.done) pthread_cond_wait(&w.cv, &w.mu);
  pthread_mutex_unlock(&w.mu);
  pthread_cond_destroy(&w.cv);
  pthread_mutex_destroy(&w.mu);
  *addr = w.addr;
  return w.err;
}

/* Links obj (taking ownership of the malloc'd bytes) and looks up name. */
static uopc_status add_and_lookup(uint8_t *obj, size_t size, const char *name, unsigned nbufs,
                                  uopi_jit_code **out, uopc_error *e) {
  uopi_jit_engine *g;
  uopc_status st = uopi_jit_get(&g, e);
  uopi_jit_code *k = st ? NULL : calloc(1, sizeof *k);
  if (!k) {
    free(obj);
    return st ? st : uopi_jit_fail(e, UOPC_ERR_NOMEM, "out of memory");
  }
  k->nbufs = nbufs;
  k->obj = obj;
  k->obj_size = size;
  /* The JIT gets its own copy of the bytes: AddObjectFile consumes the buffer. */
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy((const char *)obj, size, name);
  LLVMOrcExecutorAddress addr = 0;

  pthread_mutex_lock(&g->lock);
  uopi_jit_session_clear();
  k->rt = LLVMOrcJITDylibCreateResourceTracker(g->jd);
  LLVMErrorRef err = LLVMOrcLLJITAddObjectFileWithRT(g->jit, k->rt, buf);
  const char *what = "cannot add the object to the JIT";
  if (!err) {
    err = lookup(g, name, &addr);
    what = "cannot link the kernel";
  }
  if (err) {
    st = uopi_jit_fail_err(e, err, what);
    drop_rt(g, k->rt);
  } else {
    g->live++;
  }
  pthread_mutex_unlock(&g->lock);

  if (st) {
    free(obj);
    free(k);
    return st;
  }
  k->fn = (void (*)(void))(uintptr_t)addr;
  *out = k;
  return UOPC_OK;
}

uopc_status uopi_jit_load(const void *obj, size_t size, const char *name, unsigned nbufs,
                          uopi_jit_code **out, uopc_error *e) {
  *out = NULL;
  if (nbufs > UOPI_JIT_MAX_ARGS)
    return uopi_jit_fail(e, UOPC_ERR_ARG, "kernel %s: %u pointer arguments, at most %d", name, nbufs,
                         UOPI_JIT_MAX_ARGS);
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return uopi_jit_fail(e, UOPC_ERR_NOMEM, "out of memory");
  memcpy(copy, obj, size);
  return add_and_lookup(copy, size, name, nbufs, out, e);
}

/* UOPC_OK when m defines the entry `name` in the kernel convention:
   void(ptr), not varargs. */
static uopc_status check_entry(LLVMModuleRef m, const char *name, unsigned nargs, uopc_error *e) {
  LLVMValueRef fn = LLVMGetNamedFunction(m, name);
  if (!fn || LLVMIsDeclaration(fn)) return uopi_jit_fail(e, UOPC_ERR_ARG, "the module defines no function %s", name);
  LLVMTypeRef ty = LLVMGlobalGetValueType(fn);
  int ok = LLVMGetTypeKind(LLVMGetReturnType(ty)) == LLVMVoidTypeKind && !LLVMIsFunctionVarArg(ty) &&
           LLVMCountParamTypes(ty) == 1 && LLVMGetTypeKind(LLVMTypeOf(LLVMGetParam(fn, 0))) == LLVMPointerTypeKind &&
           nargs <= UOPI_JIT_MAX_ARGS;
  if (!ok) return uopi_jit_fail(e, UOPC_ERR_ARG, "kernel %s: want void(ptr) and at most %d arguments", name, UOPI_JIT_MAX_ARGS);
  return UOPC_OK;
}

uopc_status uopi_jit_compile(LLVMModuleRef m, const char *name, unsigned nargs, uopi_jit_tier t,
                             uopi_jit_code **out, uopc_error *e) {
  LLVMContextRef c = LLVMGetModuleContext(m);
  *out = NULL;
  if (c == LLVMGetGlobalContext()) {
    LLVMDisposeModule(m); /* ours, but never the global context */
    return uopi_jit_fail(e, UOPC_ERR_ARG, "kernel %s: module in the global LLVMContext", name);
  }
  uopc_status st = uopi_jit_verify(m, e); /* a broken module first: its functions are not worth a look */
  if (st == UOPC_OK) st = check_entry(m, name, nargs, e);
  if (st == UOPC_OK) st = uopi_jit_passes(m, t, e);
  uint8_t *obj = NULL;
  size_t size = 0;
  if (st == UOPC_OK) st = uopi_jit_emit(m, t, 0, &obj, &size, e);
  uopi_jit_module_free(m); /* before linking: peak memory */
  if (st) return st;
  return add_and_lookup(obj, size, name, nargs, out, e);
}

void uopi_jit_free(uopi_jit_code *k) {
  if (!k) return;
  uopi_jit_engine *g;
  if (uopi_jit_get(&g, NULL) == UOPC_OK) { /* always: a live kernel keeps the engine */
    pthread_mutex_lock(&g->lock);
    drop_rt(g, k->rt);
    g->live--;
    pthread_mutex_unlock(&g->lock);
  }
  free((void *)k->obj);
  free(k);
}
