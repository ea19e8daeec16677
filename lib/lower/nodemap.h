/* lib/lower/nodemap.h - the nodes of one kernel, numbered densely.
 *
 * Side tables of a pass over one kernel are indexed by these numbers, so
 * their size follows the kernel, not the context: a 10-node kernel in a
 * context of a million nodes costs tables of 10 entries (node ids are dense
 * over the whole context, so tables indexed by id would cost a million).
 * The map from node id to number is an open-addressing hash table sized by
 * the kernel.
 */
#ifndef UOPI_LOWER_NODEMAP_H
#define UOPI_LOWER_NODEMAP_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct uopi_nodemap {
  uopc_ctx *c;          /* the allocator of the arrays */
  uopc_node **node;     /* node[i]: the node numbered i, in post-order */
  uint32_t n, cap;      /* nodes numbered, capacity of node[] */
  uint32_t *slot;       /* hash table: (number + 1) per slot, 0 empty */
  uint32_t mask;        /* slots - 1 (a power of two minus one) */
} uopi_nodemap;

/* Numbers every node reachable from root, in post-order (sources left to
   right before their user, each node once; root is numbered last):
   node[i]'s sources all have numbers below i.  Iterative: any depth.
   UOPC_OK, or UOPC_ERR_NOMEM with the context's error set (m is then empty
   and needs no free). */
UOPI_FUNC uopc_status uopi_nodemap_build(uopc_ctx *c, uopc_node *root, uopi_nodemap *m);

/* The number of u, or UINT32_MAX when u is not in the map. */
UOPI_FUNC uint32_t uopi_nodemap_get(const uopi_nodemap *m, const uopc_node *u);

/* Frees the arrays (m may have failed to build or be zeroed).  NULL ok. */
UOPI_FUNC void uopi_nodemap_free(uopi_nodemap *m);

#ifdef __cplusplus
}
#endif
#endif
