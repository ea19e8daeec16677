/* lib/jit/object.c - code generation to bytes, and the text dumps.
 *
 * The engine generates code itself (LLVMTargetMachineEmitToMemoryBuffer on a
 * pooled TM): compiles run in parallel without the engine's lock, and the
 * object bytes come out for the kernel cache (and the linker) at no cost.
 */
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "jit/jit_impl.h"

uopc_status uopi_jit_emit(LLVMModuleRef m, uopi_jit_tier t, int asm_text, uint8_t **out,
                          size_t *size, uopc_error *e) {
  uopi_jit_engine *g;
  *out = NULL;
  *size = 0;
  uopc_status st = uopi_jit_check_tier(t, e);
  if (st == UOPC_OK) st = uopi_jit_get(&g, e);
  if (st) return st;
  LLVMTargetMachineRef tm = uopi_jit_tm_take(g, t, e);
  if (!tm) return UOPC_ERR_JIT;
  char *msg = NULL;
  LLVMMemoryBufferRef buf = NULL;
  LLVMBool bad = LLVMTargetMachineEmitToMemoryBuffer(
      tm, m, asm_text ? LLVMAssemblyFile : LLVMObjectFile, &msg, &buf);
  uopi_jit_tm_give(t, tm);
  if (bad) return uopi_jit_fail_msg(e, msg, "LLVM code generation failed");
  if (msg) LLVMDisposeMessage(msg);
  if ((st = uopi_jit_diag_check(m, e)) != UOPC_OK) {
    LLVMDisposeMemoryBuffer(buf);
    return st;
  }
  size_t n = LLVMGetBufferSize(buf);
  uint8_t *p = malloc(n + 1);
  if (p) {
    memcpy(p, LLVMGetBufferStart(buf), n);
    p[n] = 0;
  }
  LLVMDisposeMemoryBuffer(buf);
  if (!p) return uopi_jit_fail(e, UOPC_ERR_NOMEM, "out of memory");
  *out = p;
  *size = n;
  return UOPC_OK;
}

char *uopi_jit_ir_text(LLVMModuleRef m) {
  char *s = LLVMPrintModuleToString(m);
  char *copy = strdup(s);
  LLVMDisposeMessage(s);
  return copy;
}

uopc_status uopi_jit_asm_text(LLVMModuleRef m, uopi_jit_tier t, char **out, uopc_error *e) {
  LLVMModuleRef clone = LLVMCloneModule(m);
  size_t n;
  uopc_status st = uopi_jit_prepare(clone, t, e);
  *out = NULL;
  if (st == UOPC_OK) st = uopi_jit_emit(clone, t, 1, (uint8_t **)out, &n, e);
  LLVMDisposeModule(clone);
  return st;
}
