/* lib/jit/error.c - LLVM's errors and messages as uopc_error.
 *
 * Every LLVMErrorRef that reaches here is consumed and every LLVM message
 * disposed, whether or not the caller wants the error (e may be NULL).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "jit/jit_impl.h"

static void set(uopc_error *e, uopc_status code, const char *what, const char *detail) {
  if (!e) return;
  memset(e, 0, sizeof *e);
  e->code = code;
  if (detail && *detail)
    snprintf(e->msg, sizeof e->msg, "%s: %s", what, detail);
  else
    snprintf(e->msg, sizeof e->msg, "%s", what);
  size_t n = strlen(e->msg); /* one line: LLVM's messages often span several */
  while (n && (e->msg[n - 1] == '\n' || e->msg[n - 1] == ' ')) e->msg[--n] = 0;
  for (char *p = e->msg; (p = strchr(p, '\n')); p++) *p = ' ';
}

uopc_status uopi_jit_fail(uopc_error *e, uopc_status code, const char *fmt, ...) {
  char buf[sizeof e->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  set(e, code, buf, NULL);
  return code;
}

uopc_status uopi_jit_fail_err(uopc_error *e, LLVMErrorRef err, const char *what) {
  char *msg = LLVMGetErrorMessage(err); /* consumes err */
  set(e, UOPC_ERR_JIT, what, msg);
  LLVMDisposeErrorMessage(msg);
  return UOPC_ERR_JIT;
}

uopc_status uopi_jit_fail_msg(uopc_error *e, char *msg, const char *what) {
  set(e, UOPC_ERR_JIT, what, msg);
  if (msg) LLVMDisposeMessage(msg);
  return UOPC_ERR_JIT;
}
