/* lib/plan_cache.h - compiled plans kept in memory by program (plan_cache.c).
 *
 * The key is the program itself, serialized: every node reachable from the
 * root in toposort order (op, dtype, shape, arg, sources by position, .uir
 * position) and the compile options.  So a key names a program exactly,
 * in any context, and never a freed context's node that a new one happens
 * to reuse the address of.
 */
#ifndef UOPI_PLAN_CACHE_H
#define UOPI_PLAN_CACHE_H

#include "internal.h"
#include "uopc/plan.h"

typedef struct uopi_plan_key {
  unsigned char *bytes; /* malloc */
  size_t len;
  uint64_t hash;
} uopi_plan_key;

/* The key of the program rooted at root compiled with opts (NULL: the fast
   tier), opts->threads being the thread count actually used (lib/plan.c
   resolves 0 before keying) and split_min the work from which kernels are
   split across them.  0 with the context's error when out of memory. */
UOPI_FUNC int uopi_plan_key_make(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uint64_t split_min,
                                 uopi_plan_key *k);
UOPI_FUNC void uopi_plan_key_free(uopi_plan_key *k);

/* The cached plan of k with one more reference for the caller, or NULL (a
   miss).  Counts a hit or a miss. */
UOPI_FUNC uopc_plan *uopi_plan_cache_get(const uopi_plan_key *k);
/* Keeps p (one reference of its own) under k, which it takes over (k is
   emptied); evicts the least recently used past the limits.  Returns the
   plan to give the caller: p, or the plan another thread put under the same
   key first (p is then released). */
UOPI_FUNC uopc_plan *uopi_plan_cache_put(uopi_plan_key *k, uopc_plan *p);

/* References of plans (lib/plan.c): one more; one less, 1 when it was the
   last (the caller frees the plan). */
UOPI_FUNC void uopi_plan_ref(uopc_plan *p);
UOPI_FUNC int uopi_plan_unref(uopc_plan *p);
/* The bytes a plan holds (constant data, tables), for the cache's budget. */
UOPI_FUNC uint64_t uopi_plan_bytes(const uopc_plan *p);

#endif
