/* uopc/tensor.h - a caller's array, described: the descriptor plans take
 * (and print), checked before anything runs.
 */
#ifndef UOPC_TENSOR_H
#define UOPC_TENSOR_H

#include <stdint.h>

#include "uopc/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An array in C order (row-major), with its dtype and shape.  Elements are
   bool: 1 byte (0 or 1; any non-zero byte reads as True), i32: int32_t,
   f32: float, f16: 2 bytes (IEEE half).  The memory is the caller's; uopc
   never keeps the pointer past the call it is given to. */
typedef struct uopc_tensor {
  void *data;            /* numel elements; may be NULL only when numel is 0 */
  uopc_dtype dtype;
  uint32_t ndim;         /* 0 for a scalar (one element) */
  const int64_t *shape;  /* ndim sizes, each >= 1; NULL when ndim is 0 */
} uopc_tensor;

#ifdef __cplusplus
}
#endif
#endif
