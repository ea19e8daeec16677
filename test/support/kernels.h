// Kernels built with the sugar of uop.h that several tests share.
#ifndef UOPC_TEST_SUPPORT_KERNELS_H
#define UOPC_TEST_SUPPORT_KERNELS_H

extern "C" {
#include "uopc/uopc.h"
}

// n x n f32 matmul C += A @ B (slots A 0, B 1, C 2), row-major, k innermost
// and in order: it reads the buffer it stores to.
inline uopc_node *MatmulKernel(uopc_ctx *c, int n) {
  uopc_node *A = uopc_buffer(c, 0, UOPC_DT_F32, n * n), *B = uopc_buffer(c, 1, UOPC_DT_F32, n * n),
            *C = uopc_buffer(c, 2, UOPC_DT_F32, n * n);
  uopc_node *i = uopc_range_k(c, n, 0), *j = uopc_range_k(c, n, 1), *k = uopc_range_k(c, n, 2);
  uopc_node *ij = uopc_mad_k(c, i, n, j);
  uopc_node *ab = uopc_mul(c, uopc_load1(c, A, uopc_mad_k(c, i, n, k)), uopc_load1(c, B, uopc_mad_k(c, k, n, j)));
  uopc_node *loops[] = {i, j, k};
  return uopc_sink1(c, uopc_end(c, uopc_store1(c, C, ij, uopc_add(c, uopc_load1(c, C, ij), ab)), loops, 3));
}

#endif
