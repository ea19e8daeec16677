// bench/cache_kernels.h - the two reference kernels as uopc graphs (public
// API only), for bench_cache and test/test_cache.cpp:
//
//   ew(n):  o[i] = a[i]*b[i] + a[i], i < n, f32       slots: 0 o, 1 a, 2 b
//   mm(n):  c = a @ b, n x n f32, c zeroed first, then
//           c[i,j] = c[i,j] + a[i,k]*b[k,j] in loops i, k, j
//                                                     slots: 0 c, 1 a, 2 b
//
// The same computations as test/support/samples.h's EW and MM,
// built as kernel graphs so that they go through uopc_compile and the cache.
#ifndef UOPC_BENCH_CACHE_KERNELS_H
#define UOPC_BENCH_CACHE_KERNELS_H

#include <uopc/uopc.h>

namespace uopc_kernels {

inline uopc_node *Range(uopc_ctx *c, int32_t n, int64_t idx) {
  return uopc_range(c, uopc_const_i(c, UOPC_DT_I32, n), idx);
}

inline uopc_node *At(uopc_ctx *c, uopc_node *buf, uopc_node *i) { return uopc_index(c, buf, &i, 1); }

inline uopc_node *Ew(uopc_ctx *c, int32_t n) {
  uopc_node *o = uopc_buffer(c, 0, UOPC_DT_F32, n), *a = uopc_buffer(c, 1, UOPC_DT_F32, n);
  uopc_node *b = uopc_buffer(c, 2, UOPC_DT_F32, n);
  uopc_node *i = Range(c, n, 0);
  uopc_node *va = uopc_load(c, At(c, a, i)), *vb = uopc_load(c, At(c, b, i));
  uopc_node *st = uopc_store(c, At(c, o, i), uopc_add(c, uopc_mul(c, va, vb), va));
  uopc_node *e = uopc_end(c, st, &i, 1);
  return uopc_sink(c, &e, 1);
}

inline uopc_node *Mm(uopc_ctx *c, int32_t n) {
  uopc_node *cb = uopc_buffer(c, 0, UOPC_DT_F32, n * n), *a = uopc_buffer(c, 1, UOPC_DT_F32, n * n);
  uopc_node *b = uopc_buffer(c, 2, UOPC_DT_F32, n * n);
  uopc_node *zi = Range(c, n, 0), *zj = Range(c, n, 1);
  uopc_node *zidx = uopc_add(c, uopc_mul_k(c, zi, n), zj);
  uopc_node *zero = uopc_store(c, At(c, cb, zidx), uopc_const_f(c, UOPC_DT_F32, 0.0));
  uopc_node *zr[2] = {zi, zj};
  uopc_node *zend = uopc_end(c, zero, zr, 2);
  uopc_node *i = Range(c, n, 2), *k = Range(c, n, 3), *j = Range(c, n, 4);
  uopc_node *cij = At(c, cb, uopc_add(c, uopc_mul_k(c, i, n), j));
  uopc_node *aik = uopc_load(c, At(c, a, uopc_add(c, uopc_mul_k(c, i, n), k)));
  uopc_node *bkj = uopc_load(c, At(c, b, uopc_add(c, uopc_mul_k(c, k, n), j)));
  uopc_node *acc = uopc_store(c, cij, uopc_add(c, uopc_load(c, cij), uopc_mul(c, aik, bkj)));
  uopc_node *r[3] = {i, k, j};
  uopc_node *end = uopc_end(c, acc, r, 3);
  uopc_node *effects[2] = {zend, end};
  return uopc_sink(c, effects, 2);
}

}  // namespace uopc_kernels

#endif
