/* lib/kernel.c - the public kernel API (include/uopc/jit.h): compile, call,
 * free, emit, on top of the pipeline (lib/compile.c).  A handle holds one
 * reference on a kernel cache entry, which owns the code. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "uopc/jit.h"
#include "uopc/tensor.h"

struct uopc_kernel {
  const uopi_jit_code *code; /* owned by entry */
  uopi_kentry *entry;        /* the cache entry this handle holds */
  const uopi_kmeta *meta;    /* the buffers: owned by entry */
  uint32_t nbufs;
};

static void arg_err(uopc_error *e, const char *msg) {
  if (!e) return;
  memset(e, 0, sizeof *e);
  e->code = UOPC_ERR_ARG;
  snprintf(e->msg, sizeof e->msg, "%s", msg);
}

/* The tier of opts (NULL: the fast one); UOPC_ERR_ARG recorded in c for a
   value that is not a uopc_tier. */
static uopc_status tier_of(uopc_ctx *c, const uopc_compile_opts *o, uopi_jit_tier *t) {
  uopc_error e;
  uopc_status st = uopi_tier_of(o, t, &e);
  if (st) uopc_fail(c, st, "%s", e.msg);
  return st;
}

/* root a node of c (NULL and another context's nodes: UOPC_ERR_ARG). */
static uopc_status root_of(uopc_ctx *c, const uopc_node *root, const char *fn) {
  return uopi_check_node(c, root, fn) ? UOPC_OK : UOPC_ERR_ARG;
}

/* A handle on entry (a held ready entry: the handle takes the hold), or
   NULL with UOPC_ERR_NOMEM in c (the hold released). */
static uopc_kernel *handle_of(uopc_ctx *c, uopi_kentry *entry) {
  uopc_kernel *out = calloc(1, sizeof *out);
  if (!out) {
    uopi_kcache_release(entry);
    return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory");
  }
  out->entry = entry;
  out->code = uopi_kentry_code(entry);
  out->meta = uopi_kentry_meta(entry);
  out->nbufs = out->meta->nbufs;
  return out;
}

/* jit.h: the call reports through *e only; the context's recorded error is
   left as the caller had it (uopi_err_begin/end). */
uopc_kernel *uopc_compile(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopc_error *e) {
  if (!c) return arg_err(e, "compile: NULL context"), NULL;
  uopi_errsave saved;
  uopi_err_begin(c, &saved);
  uopi_kentry *entry = NULL;
  uopi_jit_tier t;
  uopc_kernel *out = NULL;
  uopc_status st = root_of(c, root, "compile");
  if (!st) st = tier_of(c, opts, &t); /* the flags' check too */
  if (!st) st = uopi_compile_kernel(c, root, t, opts ? opts->flags : 0, &entry);
  if (!st && !(out = handle_of(c, entry))) st = UOPC_ERR_NOMEM;
  uopi_err_end(c, &saved, st, e);
  return out;
}

uopc_status uopi_kernels_compile(uopc_ctx *c, uopc_node *const *roots, const uopi_jit_tier *tiers, const unsigned *kflags,
                                 uint32_t n, const uopc_compile_opts *opts, uint32_t threads, uopc_kernel **out,
                                 uopc_error *e) {
  uopi_errsave saved;
  uopi_err_begin(c, &saved);
  uopi_kentry **entries = calloc(n ? n : 1, sizeof *entries);
  uopc_status st = entries ? UOPC_OK : UOPC_ERR_NOMEM;
  if (st) uopc_fail(c, st, "out of memory");
  for (uint32_t i = 0; i < n; i++) out[i] = NULL;
  if (!st) st = uopi_compile_kernels(c, roots, tiers, kflags, n, opts ? opts->flags : 0, threads, entries);
  for (uint32_t i = 0; !st && i < n; i++)
    if (!(out[i] = handle_of(c, entries[i]))) {
      st = UOPC_ERR_NOMEM;
      for (uint32_t k = i + 1; k < n; k++) uopi_kcache_release(entries[k]);
      for (uint32_t k = 0; k < i; k++) uopc_kernel_free(out[k]), out[k] = NULL;
    }
  free(entries);
  return uopi_err_end(c, &saved, st, e);
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

static uopc_status slot_err(uopc_error *e, uint32_t s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static uopc_status slot_err(uopc_error *e, uint32_t s, const char *fmt, ...) {
  e->code = UOPC_ERR_ARG;
  int w = snprintf(e->msg, sizeof e->msg, "buffer %u: ", s);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg + w, sizeof e->msg - (size_t)w, fmt, ap);
  va_end(ap);
  return UOPC_ERR_ARG;
}

/* Descriptor t against BUFFER slot s of m: its dtype, a readable shape, at
   least the buffer's elements, a data pointer. */
static uopc_status check_desc(const uopi_kmeta *m, uint32_t s, const uopc_tensor *t, uopc_error *e) {
  uopc_dtype want = (uopc_dtype)m->dtype[s];
  if ((unsigned)t->dtype >= UOPC_DT_COUNT) return slot_err(e, s, "unknown dtype %d", (int)t->dtype);
  if (t->dtype != want)
    return slot_err(e, s, "the kernel's BUFFER is %s, the array is %s", uopc_dtype_name(want), uopc_dtype_name(t->dtype));
  if (t->ndim > UOPC_LIMIT_DIMS) return slot_err(e, s, "%u dims, at most %d", t->ndim, UOPC_LIMIT_DIMS);
  if (t->ndim && !t->shape) return slot_err(e, s, "a shape of %u dims given as NULL", t->ndim);
  int64_t numel = 1;
  for (uint32_t d = 0; d < t->ndim; d++) {
    if (t->shape[d] < 0) return slot_err(e, s, "dim %u is %lld", d, (long long)t->shape[d]);
    if (t->shape[d] && numel > INT64_MAX / t->shape[d]) return slot_err(e, s, "the shape has too many elements");
    numel *= t->shape[d];
  }
  if (numel < m->len[s])
    return slot_err(e, s, "the array has %lld elements, the kernel's BUFFER %lld", (long long)numel, (long long)m->len[s]);
  if (!t->data) return slot_err(e, s, "NULL data");
  return UOPC_OK;
}

uopc_status uopc_kernel_call_checked(const uopc_kernel *k, const uopc_tensor *bufs, uint32_t n, uopc_error *e) {
  uopc_error tmp;
  if (!e) e = &tmp;
  memset(e, 0, sizeof *e);
  if (!k) return arg_err(e, "kernel call: NULL kernel"), UOPC_ERR_ARG;
  if (n != k->nbufs) {
    e->code = UOPC_ERR_ARG;
    snprintf(e->msg, sizeof e->msg, "the kernel takes %u buffers, got %u", k->nbufs, n);
    return e->code;
  }
  if (n && !bufs) return arg_err(e, "kernel call: NULL buffers"), UOPC_ERR_ARG;
  void *ptrs[UOPI_KERNEL_MAX_BUFS];
  for (uint32_t s = 0; s < n; s++) {
    uopc_status st = check_desc(k->meta, s, &bufs[s], e);
    if (st) return st;
    ptrs[s] = bufs[s].data;
  }
  return uopc_kernel_call(k, ptrs, n, e); /* overlaps: refused there, before running */
}

void uopc_kernel_free(uopc_kernel *k) {
  if (!k) return;
  uopi_kcache_release(k->entry);
  free(k);
}

uint32_t uopc_kernel_nbufs(const uopc_kernel *k) { return k ? k->nbufs : 0; }
uopc_dtype uopc_kernel_buf_dtype(const uopc_kernel *k, uint32_t s) {
  return k && s < k->nbufs ? (uopc_dtype)k->meta->dtype[s] : UOPC_DT_VOID;
}
int64_t uopc_kernel_buf_len(const uopc_kernel *k, uint32_t s) { return k && s < k->nbufs ? k->meta->len[s] : 0; }

/* The text path, under the same convention as uopc_compile. */
static char *emit(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, const uopi_jit_tier *at, int asm_text,
                  uopc_error *e) {
  if (!c) return arg_err(e, asm_text ? "emit_asm: NULL context" : "emit_llvm: NULL context"), NULL;
  uopi_errsave saved;
  uopi_err_begin(c, &saved);
  uopi_jit_tier t;
  char *s = NULL;
  uopc_status st = root_of(c, root, asm_text ? "emit_asm" : "emit_llvm");
  if (!st) st = tier_of(c, opts, &t);
  if (!st && at) t = *at;
  if (!st && !(s = uopi_compile_text(c, root, t, opts ? opts->flags : 0, asm_text)))
    st = uopc_ctx_error(c) ? uopc_ctx_error(c)->code : UOPC_ERR_NOMEM;
  uopi_err_end(c, &saved, st, e);
  return s;
}

char *uopc_emit_llvm(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopc_error *e) {
  return emit(c, root, opts, NULL, 0, e);
}

char *uopc_emit_asm(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopc_error *e) {
  return emit(c, root, opts, NULL, 1, e);
}

char *uopi_kernel_emit(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopi_jit_tier t, int asm_text,
                       uopc_error *e) {
  return emit(c, root, opts, &t, asm_text, e);
}
