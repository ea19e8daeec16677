/* lib/core/ctx.h - the context: allocator, arena, node table, hash-cons
 * table, error slot, debug switches, pool of side tables.
 */
#ifndef UOPI_CORE_CTX_H
#define UOPI_CORE_CTX_H

#include "internal.h"
#include "uopc/rewrite.h"

typedef struct uopi_chunk {
  struct uopi_chunk *next;
  size_t size;
  char data[];
} uopi_chunk;

struct uopc_ctx {
  uopc_alloc alloc;
  /* arena: nodes, shapes, args; freed with the context */
  uopi_chunk *chunks;
  char *cur;
  size_t left;
  /* nodes by id */
  uopc_node **nodes;
  uint32_t n_nodes, cap_nodes;
  /* hash-cons table: open addressing, linear probing; a slot is
     (hash << 32) | (id + 1), 0 when empty, so probing rarely touches nodes */
  uint64_t *slots;
  uint32_t mask;
  /* the first error since the last clear */
  uopc_error err;
  int has_err;
  uint64_t n_fail; /* calls of uopc_fail, recorded or not */
  /* debug switches */
  FILE *trace;
  int check;
  uopc_trace_fn trace_fn;   /* the trace callback (uopc_ctx_set_trace_fn) */
  void *trace_ud;
  uint32_t trace_depth;     /* graph_rewrite calls open */
  /* graph_rewrite's limits */
  uopc_rewrite_limits limits;
  /* scratch memory of passes (uopi_scratch): newest chunk first, and one
     spare kept for the next pass */
  struct uopi_scratch_chunk *scratch, *scratch_spare;
  /* the intervals of lib/algebra/bounds.c by node id, {vmin, vmax} (valid
     where the node's flags have UOPC_NF_BOUNDS); cap_bounds is 0 or a
     power of two, grown to the ids asked about */
  int64_t (*bounds)[2];
  uint32_t cap_bounds;
  /* where nodes were written (lib/core/pos.c) */
  uint64_t *pos;
  uint32_t cap_pos;
  char **pos_files;
  uint32_t n_pos_files, cap_pos_files;
  /* memos of uopc_simplify_with, one per rule set (the exact symbolic set
     memoizes in the node itself) */
  struct {
    const uopc_matcher *m;
    uopi_table *t;
  } memo[8];
  uint32_t n_memo;
  /* a memo another layer keeps per context, freed with it (the kernel
     cache's raw keys, lib/kcache/key.c): its data and its destructor */
  void *ext_memo;
  void (*ext_memo_free)(void *memo);
  /* side tables */
  uopi_table *tables_free;
  uopi_table *tables_all[64];
  uint32_t n_tables;
};

/* 1 when u is a node of c: O(1), from the node table (a node of another
   context has a different pointer at its id, or an id beyond c's count). */
static inline int uopi_owns(const uopc_ctx *c, const uopc_node *u) {
  return u->id < c->n_nodes && c->nodes[u->id] == u;
}

/* Raw allocation through the context's allocator (no error recorded). */
UOPI_FUNC void *uopi_raw_realloc(uopc_ctx *c, void *p, size_t old_n, size_t new_n);
/* Realloc/free for the context's own large arrays (node table, hash table,
   side tables): large blocks come from the chunk cache.  n must be exact. */
UOPI_FUNC void *uopi_big_realloc(uopc_ctx *c, void *p, size_t old_n, size_t new_n);
UOPI_FUNC void uopi_big_free(uopc_ctx *c, void *p, size_t n);
/* Arena memory, 16-byte aligned, lives as long as the context; NULL + error on OOM. */
UOPI_FUNC void *uopi_arena(uopc_ctx *c, size_t n);

#endif
