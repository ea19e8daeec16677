/* lib/schedule/split.h - a scheduled kernel as chunks for threads (split.c).
 *
 * A kernel graph whose outermost loop is an output axis (the first RANGE of
 * the outermost END, the only child of its SINK) of size N >= T, and whose
 * work (the product of its loop sizes) is at least min_work, becomes T
 * chunk graphs: chunk t is the same graph with that RANGE r replaced by
 * RANGE(len_t) + lo_t (a fresh RANGE id, lo_t = t*N/T rounded down, so the
 * lengths differ by at most one), the chunks in loop order.  Running them
 * all, in any order or at once, computes every element exactly as the
 * whole kernel does: each element is computed by exactly one chunk, with
 * the same operations in the same order.
 *
 * What is checked, not assumed (a kernel failing any check stays whole):
 *   - every loop has a constant size;
 *   - every store outside the shared slots (the status words, which each
 *     chunk gets its own of: lib/plan.c) writes, in chunk t, a range of
 *     addresses (bounds of the simplified index) that lies wholly before
 *     chunk t+1's range in the same buffer: chunks never write the same
 *     element;
 *   - every load from a buffer the kernel stores to (outside the shared
 *     slots) reads an address a store of the kernel writes (the same index
 *     node): an accumulation reads only its own element.
 * A full reduction (sum to a scalar) has no output axis: it stays whole.
 */
#ifndef UOPI_SCHEDULE_SPLIT_H
#define UOPI_SCHEDULE_SPLIT_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The iterations of kernel root's loop nests: the product of the sizes of
   the RANGEs it has (constant sizes only), saturating; UINT64_MAX when a
   size is not a constant. */
UOPI_FUNC uint64_t uopi_kernel_work(uopc_ctx *c, uopc_node *root);

/* Splits kernel root (slots renumbered, a SINK) into T >= 2 chunks in
   chunks[0..T) (context memory) when it qualifies (above); shared[0..nshared)
   are the kernel slots every chunk gets its own buffer for.  Returns T, or 0
   when the kernel stays whole (then chunks is untouched), or UINT32_MAX out
   of memory (the context's error set).  *axis: the size N of the split axis. */
UOPI_FUNC uint32_t uopi_split_kernel(uopc_ctx *c, uopc_node *root, uint32_t T, uint64_t min_work, const uint32_t *shared,
                                     uint32_t nshared, uopc_node **chunks, int64_t *axis);

#ifdef __cplusplus
}
#endif
#endif
