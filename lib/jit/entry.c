/* lib/jit/entry.c - the kernel calling convention: one function that takes
 * an array of pointers, loads each once, and says with alias scopes that
 * they never overlap.
 *
 *   define void @NAME(ptr %args) nounwind {           ; what the launcher calls
 *   entry:
 *     %a0 = load ptr, ptr %args                       ; each pointer once, at entry
 *     %a1 = load ptr, ptr (getelementptr ptr, %args, 1)
 *     ...                                             ; the kernel, from here on
 *     %v = load float, ptr %p, !alias.scope !S1, !noalias !N1   ; %p derived from %a1
 *
 * One call type serves every arity (the launcher needs no switch, and there
 * is no limit of a dozen or so register arguments).  A pointer loaded from
 * memory carries no `noalias`, so every load and store through argument i
 * is tagged (uopi_jit_kernel_access): scope i of the kernel's own domain,
 * and noalias with every other argument's scope.  That is the metadata the
 * inliner would make of noalias parameters, made directly: the vectorizer
 * needs no runtime alias checks, and no inlining pass runs (an entry calling
 * an alwaysinline body with noalias parameters cost 5-7 % more instructions
 * per compile, in the inliner and the analyses it runs on both functions).
 * The tags are valid because the buffers of a call never overlap
 * (uopc_kernel_call checks it).
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h> /* temporary metadata nodes */

#include "jit/jit_impl.h"

struct uopi_jit_kernel {
  LLVMContextRef c;
  LLVMValueRef fn;
  unsigned n;
  LLVMValueRef *arg;         /* the loaded pointers */
  LLVMMetadataRef *scope;    /* per argument: its scope */
  LLVMMetadataRef *in;       /* per argument: !{scope}, made on first use */
  LLVMMetadataRef *others;   /* per argument: !{every other scope}, made on first use */
  LLVMMetadataRef *tmp;      /* room for building a list */
  unsigned kind_scope, kind_noalias;
};

/* A distinct node whose first operand is itself: !{!self, ops...} (the form
   of a scope and of a domain). */
static LLVMMetadataRef self_node(LLVMContextRef c, LLVMMetadataRef *ops, unsigned n) {
  LLVMMetadataRef all[3], tmp = LLVMTemporaryMDNode(c, NULL, 0);
  all[0] = tmp;
  for (unsigned i = 0; i < n; i++) all[i + 1] = ops[i];
  LLVMMetadataRef node = LLVMMDNodeInContext2(c, all, n + 1);
  LLVMMetadataReplaceAllUsesWith(tmp, node); /* the self-reference makes it distinct */
  return node;
}

uopc_status uopi_jit_kernel_new(LLVMModuleRef m, const char *name, unsigned nargs, uopi_jit_kernel **out,
                                uopc_error *e) {
  *out = NULL;
  if (nargs > UOPI_JIT_MAX_ARGS)
    return uopi_jit_fail(e, UOPC_ERR_ARG, "kernel %s: %u pointer arguments, at most %d", name, nargs,
                         UOPI_JIT_MAX_ARGS);
  size_t n1 = nargs ? nargs : 1;
  uopi_jit_kernel *k = calloc(1, sizeof *k);
  if (k) {
    k->arg = calloc(n1, sizeof *k->arg);
    k->scope = calloc(n1, sizeof *k->scope);
    k->in = calloc(n1, sizeof *k->in);
    k->others = calloc(n1, sizeof *k->others);
    k->tmp = calloc(n1, sizeof *k->tmp);
  }
  if (!k || !k->arg || !k->scope || !k->in || !k->others || !k->tmp) {
    uopi_jit_kernel_free(k);
    return uopi_jit_fail(e, UOPC_ERR_NOMEM, "out of memory");
  }
  LLVMContextRef c = LLVMGetModuleContext(m);
  k->c = c;
  k->n = nargs;
  k->kind_scope = LLVMGetMDKindIDInContext(c, "alias.scope", 11);
  k->kind_noalias = LLVMGetMDKindIDInContext(c, "noalias", 7);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(c, 0), i64 = LLVMInt64TypeInContext(c);
  k->fn = LLVMAddFunction(m, name, LLVMFunctionType(LLVMVoidTypeInContext(c), &ptr, 1, 0));
  unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
  LLVMAddAttributeAtIndex(k->fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c, nounwind, 0)); /* no .eh_frame */
  unsigned bits = uopi_jit_vector_bits(); /* the width the plans' tiles are shaped for (jit.h) */
  if (bits >= 256) {
    char w[12];
    snprintf(w, sizeof w, "%u", bits);
    LLVMAddAttributeAtIndex(k->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(c, "prefer-vector-width", 19, w, (unsigned)strlen(w)));
  }
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c, k->fn, "entry"));
  LLVMValueRef base = LLVMGetParam(k->fn, 0);
  for (unsigned i = 0; i < nargs; i++) {
    LLVMValueRef at = LLVMConstInt(i64, i, 0);
    k->arg[i] = LLVMBuildLoad2(b, ptr, LLVMBuildInBoundsGEP2(b, ptr, base, &at, 1, ""), "");
    LLVMSetAlignment(k->arg[i], 8);
  }
  LLVMDisposeBuilder(b);
  LLVMMetadataRef dname = LLVMMDStringInContext2(c, name, strlen(name));
  LLVMMetadataRef domain = self_node(c, &dname, 1);
  for (unsigned i = 0; i < nargs; i++) k->scope[i] = self_node(c, &domain, 1);
  *out = k;
  return UOPC_OK;
}

LLVMValueRef uopi_jit_kernel_fn(const uopi_jit_kernel *k) { return k->fn; }

LLVMValueRef uopi_jit_kernel_arg(const uopi_jit_kernel *k, unsigned i) { return i < k->n ? k->arg[i] : NULL; }

void uopi_jit_kernel_access(uopi_jit_kernel *k, LLVMValueRef inst, unsigned i) {
  if (i >= k->n) return;
  if (!k->in[i]) {
    k->in[i] = LLVMMDNodeInContext2(k->c, &k->scope[i], 1);
    unsigned m = 0;
    for (unsigned j = 0; j < k->n; j++)
      if (j != i) k->tmp[m++] = k->scope[j];
    k->others[i] = LLVMMDNodeInContext2(k->c, k->tmp, m);
  }
  LLVMSetMetadata(inst, k->kind_scope, LLVMMetadataAsValue(k->c, k->in[i]));
  LLVMSetMetadata(inst, k->kind_noalias, LLVMMetadataAsValue(k->c, k->others[i]));
}

void uopi_jit_kernel_free(uopi_jit_kernel *k) {
  if (!k) return;
  free(k->arg);
  free(k->scope);
  free(k->in);
  free(k->others);
  free(k->tmp);
  free(k);
}
