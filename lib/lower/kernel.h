/* lib/lower/kernel.h - a kernel graph made ready for code generation.
 *
 * A kernel is SINK(effects...) over BUFFER, RANGE, INDEX, LOAD, STORE, END
 * and scalar ALU ops (docs/uir.md, "Kernels").  Preparing it checks that it
 * is one, collects its buffers by slot, and simplifies every index
 * expression (those without a LOAD: their ranges are known); values stay as
 * written.
 */
#ifndef UOPI_LOWER_KERNEL_H
#define UOPI_LOWER_KERNEL_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most BUFFER slots a kernel may have: the calling convention takes an
   array of pointers (lib/jit/jit.h), so this bound only sizes the fixed
   arrays below and the kernel cache's entries. */
#define UOPI_KERNEL_MAX_BUFS 64

typedef struct uopi_kernel_ir {
  uopc_node *root;                           /* a SINK */
  uint32_t nbufs;                            /* slots 0 .. nbufs-1 */
  uopc_node *bufs[UOPI_KERNEL_MAX_BUFS];     /* the BUFFER of each slot */
} uopi_kernel_ir;

/* UOPC_OK when root can be a kernel's root (a SINK, STORE or END); else
   UOPC_ERR_ARG (NULL) or UOPC_ERR_TYPE, with the context's error set.  Cheap:
   looks at root only (uopi_kernel_prepare checks the rest). */
UOPI_FUNC uopc_status uopi_kernel_check_root(uopc_ctx *c, const uopc_node *root);

/* Checks and prepares root (a SINK, or one STORE/END).  On error returns
   NULL-equivalent status with the context's error set (UOPC_ERR_TYPE for a
   graph that is not a kernel). */
UOPI_FUNC uopc_status uopi_kernel_prepare(uopc_ctx *c, uopc_node *root, uopi_kernel_ir *out);

#ifdef __cplusplus
}
#endif
#endif
