/* lib/kernel.c - the public kernel API (include/uopc/jit.h): compile, call,
 * free, emit, on top of the pipeline (lib/compile.c).  A handle holds one
 * reference on a kernel cache entry, which owns the code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"

struct uopc_kernel {
  const uopi_jit_code *code; /* owned by entry */
  uopi_kentry *entry;        /* the cache entry this handle holds */
  uint32_t nbufs;
  uopc_dtype dtype[UOPI_KERNEL_MAX_BUFS];
  int64_t len[UOPI_KERNEL_MAX_BUFS];
};

size_t uopc_dtype_size(uopc_dtype t) {
  switch (t) {
  case UOPC_DT_BOOL: return 1;
  case UOPC_DT_F16: return 2;
  case UOPC_DT_I32: case UOPC_DT_F32: return 4;
  default: return 0;
  }
}

static uopi_jit_tier tier_of(const uopc_compile_opts *o) {
  return o && o->tier == UOPC_TIER_STRONG ? UOPI_JIT_TIER2 : UOPI_JIT_TIER0;
}

static void copy_err(uopc_ctx *c, uopc_error *e) {
  if (e && uopc_ctx_error(c)) *e = *uopc_ctx_error(c);
}

uopc_kernel *uopc_compile(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopc_error *e) {
  uopi_kentry *entry;
  if (uopi_compile_kernel(c, root, tier_of(opts), &entry) != UOPC_OK) {
    copy_err(c, e);
    return NULL;
  }
  uopc_kernel *out = calloc(1, sizeof *out);
  if (!out) {
    uopi_kcache_release(entry);
    uopc_fail(c, UOPC_ERR_NOMEM, "out of memory");
    copy_err(c, e);
    return NULL;
  }
  const uopi_kmeta *m = uopi_kentry_meta(entry);
  out->entry = entry;
  out->code = uopi_kentry_code(entry);
  out->nbufs = m->nbufs;
  for (uint32_t i = 0; i < m->nbufs; i++) {
    out->dtype[i] = (uopc_dtype)m->dtype[i];
    out->len[i] = m->len[i];
  }
  return out;
}

uopc_status uopc_kernel_call(const uopc_kernel *k, void *const *bufs, uint32_t n, uopc_error *e) {
  uopc_error tmp;
  if (!e) e = &tmp;
  memset(e, 0, sizeof *e);
  if (!k || (n && !bufs)) {
    e->code = UOPC_ERR_ARG;
    snprintf(e->msg, sizeof e->msg, "kernel call: NULL kernel or buffers");
    return e->code;
  }
  if (n != k->nbufs) {
    e->code = UOPC_ERR_ARG;
    snprintf(e->msg, sizeof e->msg, "the kernel takes %u buffers, got %u", k->nbufs, n);
    return e->code;
  }
  for (uint32_t i = 0; i < n; i++) {
    if (!bufs[i]) {
      e->code = UOPC_ERR_ARG;
      snprintf(e->msg, sizeof e->msg, "buffer %u is NULL", i);
      return e->code;
    }
    uintptr_t a0 = (uintptr_t)bufs[i], a1 = a0 + (uintptr_t)k->len[i] * uopc_dtype_size(k->dtype[i]);
    for (uint32_t j = 0; j < i; j++) {
      uintptr_t b0 = (uintptr_t)bufs[j], b1 = b0 + (uintptr_t)k->len[j] * uopc_dtype_size(k->dtype[j]);
      if (a0 < b1 && b0 < a1) {
        e->code = UOPC_ERR_ARG;
        snprintf(e->msg, sizeof e->msg, "buffers %u and %u overlap (kernels need distinct memory per slot)", j, i);
        return e->code;
      }
    }
  }
  int32_t status = 0;
  void *args[UOPI_KERNEL_MAX_BUFS + 1];
  memcpy(args, bufs, (size_t)n * sizeof *args);
  args[n] = &status;
  uopc_status st = uopi_jit_call(k->code, args, n + 1, e);
  if (st != UOPC_OK) return st;
  if (status) {
    e->code = UOPC_ERR_EVAL;
    snprintf(e->msg, sizeof e->msg, "kernel index out of bounds in BUFFER slot %d (of %lld elements)", status - 1,
             (long long)k->len[status - 1]);
    return e->code;
  }
  return UOPC_OK;
}

void uopc_kernel_free(uopc_kernel *k) {
  if (!k) return;
  uopi_kcache_release(k->entry);
  free(k);
}

uint32_t uopc_kernel_nbufs(const uopc_kernel *k) { return k->nbufs; }
uopc_dtype uopc_kernel_buf_dtype(const uopc_kernel *k, uint32_t s) { return s < k->nbufs ? k->dtype[s] : UOPC_DT_VOID; }
int64_t uopc_kernel_buf_len(const uopc_kernel *k, uint32_t s) { return s < k->nbufs ? k->len[s] : 0; }

char *uopc_emit_llvm(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopc_error *e) {
  char *s = uopi_compile_text(c, root, tier_of(opts), 0);
  if (!s) copy_err(c, e);
  return s;
}

char *uopc_emit_asm(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopc_error *e) {
  char *s = uopi_compile_text(c, root, tier_of(opts), 1);
  if (!s) copy_err(c, e);
  return s;
}
