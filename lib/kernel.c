/* lib/kernel.c - the public kernel API (include/uopc/jit.h): compile, call,
 * free, emit, on top of the pipeline (lib/compile.c).  A handle holds one
 * reference on a kernel cache entry, which owns the code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "uopc/jit.h"

struct uopc_kernel {
  const uopi_jit_code *code; /* owned by entry */
  uopi_kentry *entry;        /* the cache entry this handle holds */
  const uopi_kmeta *meta;    /* the buffers: owned by entry */
  uint32_t nbufs;
};

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
  out->entry = entry;
  out->code = uopi_kentry_code(entry);
  out->meta = uopi_kentry_meta(entry);
  out->nbufs = out->meta->nbufs;
  return out;
}

/* Bytes of buffer slot s. */
static uintptr_t bytes_of(const uopi_kmeta *m, uint32_t s) {
  return (uintptr_t)m->len[s] * uopc_dtype_size((uopc_dtype)m->dtype[s]);
}

static uopc_status overlap(uopc_error *e, uint32_t j, uint32_t i) {
  e->code = UOPC_ERR_ARG;
  snprintf(e->msg, sizeof e->msg, "buffers %u and %u overlap (kernels need distinct memory per slot)", j, i);
  return e->code;
}

/* The buffers' checks in slot order: the first NULL buffer, or the first
   buffer that overlaps an earlier one (with the earliest such). */
static uopc_status check_each(const uopi_kmeta *m, void *const *bufs, uint32_t n, uopc_error *e) {
  for (uint32_t i = 0; i < n; i++) {
    if (!bufs[i]) {
      e->code = UOPC_ERR_ARG;
      snprintf(e->msg, sizeof e->msg, "buffer %u is NULL", i);
      return e->code;
    }
    uintptr_t a0 = (uintptr_t)bufs[i], a1 = a0 + bytes_of(m, i);
    for (uint32_t j = 0; j < i; j++) {
      uintptr_t b0 = (uintptr_t)bufs[j], b1 = b0 + bytes_of(m, j);
      if (a0 < b1 && b0 < a1) return overlap(e, j, i);
    }
  }
  return UOPC_OK;
}

typedef struct span {
  uintptr_t lo, hi;
} span;

static int span_cmp(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The same checks in O(n log n) for many buffers: sorted by address, two
   buffers overlap iff two neighbours do.  Any failure is reported by
   check_each, so the message does not depend on how it was found. */
static uopc_status check_buffers(const uopi_kmeta *m, void *const *bufs, uint32_t n, uopc_error *e) {
  if (n <= 16) return check_each(m, bufs, n, e);
  span v[UOPI_KERNEL_MAX_BUFS];
  for (uint32_t i = 0; i < n; i++) {
    if (!bufs[i]) return check_each(m, bufs, n, e);
    v[i] = (span){(uintptr_t)bufs[i], (uintptr_t)bufs[i] + bytes_of(m, i)};
  }
  qsort(v, n, sizeof *v, span_cmp);
  for (uint32_t i = 1; i < n; i++)
    if (v[i].lo < v[i - 1].hi) return check_each(m, bufs, n, e);
  return UOPC_OK;
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
  uopc_status st = check_buffers(k->meta, bufs, n, e);
  if (st) return st;
  int32_t status = 0;
  void *args[UOPI_KERNEL_MAX_BUFS + 1];
  memcpy(args, bufs, (size_t)n * sizeof *args);
  args[n] = &status;
  st = uopi_jit_call(k->code, args, n + 1, e);
  if (st != UOPC_OK) return st;
  if (status) {
    e->code = UOPC_ERR_EVAL;
    snprintf(e->msg, sizeof e->msg, "kernel index out of bounds in BUFFER slot %d (of %lld elements)", status - 1,
             (long long)k->meta->len[status - 1]);
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
uopc_dtype uopc_kernel_buf_dtype(const uopc_kernel *k, uint32_t s) {
  return s < k->nbufs ? (uopc_dtype)k->meta->dtype[s] : UOPC_DT_VOID;
}
int64_t uopc_kernel_buf_len(const uopc_kernel *k, uint32_t s) { return s < k->nbufs ? k->meta->len[s] : 0; }

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
