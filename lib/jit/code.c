/* lib/jit/code.c - code handles: link an object, free it.
 *
 * Each kernel is linked on its own (link.h: JITLink into the engine's
 * memory pool), so freeing one releases exactly its memory.  The engine's
 * lock covers the count of live handles only: links run in parallel.
 */
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "jit/jit_impl.h"
#include "jit/link.h"

/* Links obj (taking ownership of the malloc'd bytes) and finds name. */
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
  void *fn = NULL;
  st = uopi_jit_link(g->linker, obj, size, name, &fn, &k->handle, e);
  if (st) {
    free(obj);
    free(k);
    return st;
  }
  pthread_mutex_lock(&g->lock);
  g->live++;
  pthread_mutex_unlock(&g->lock);
  k->fn = (void (*)(void))(uintptr_t)fn;
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
    uopi_jit_unlink(g->linker, k->handle);
    pthread_mutex_lock(&g->lock);
    g->live--;
    pthread_mutex_unlock(&g->lock);
  }
  free((void *)k->obj);
  free(k);
}
