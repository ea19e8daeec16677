/* lib/internal.h - what the library's files share and users do not see.
 *
 * Prefixes: uopc_ is public (include/uopc/), uopi_ is internal (hidden
 * visibility), static functions have no prefix.
 */
#ifndef UOPI_INTERNAL_H
#define UOPI_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "uopc/uopc.h"

#define UOPI_FUNC __attribute__((visibility("hidden"))) extern

#ifdef __cplusplus
extern "C" {
#endif

/* Bugs are not errors: an internal invariant that fails aborts with a
   location.  User input never reaches these. */
UOPI_FUNC void uopi_die(const char *file, int line, const char *what) __attribute__((noreturn));
#define UOPI_ASSERT(x) ((x) ? (void)0 : uopi_die(__FILE__, __LINE__, #x))
#define uopi_unreachable() uopi_die(__FILE__, __LINE__, "unreachable")

/* ---- side tables keyed by node id --------------------------------------
 * A table maps node ids to pointers.  Acquiring one is O(1) (a generation
 * counter clears it); tables come from a per-context pool, so nested passes
 * (a rule calling simplify inside graph_rewrite) each get their own.  A table
 * grows (by doubling) to any id on set: its size follows the largest id set,
 * not the number of nodes in the context. */
typedef struct uopi_slot {
  void *val;
  uint32_t gen;
} uopi_slot;

typedef struct uopi_table {
  uopi_slot *e;
  uint32_t cap;
  uint32_t cur;
  struct uopi_table *next_free;
} uopi_table;

UOPI_FUNC uopi_table *uopi_table_acquire(uopc_ctx *c);   /* NULL on OOM (error set) */
UOPI_FUNC void uopi_table_release(uopc_ctx *c, uopi_table *t);
static inline void *uopi_table_get(const uopi_table *t, uint32_t id) {
  return (id < t->cap && t->e[id].gen == t->cur) ? t->e[id].val : NULL;
}
UOPI_FUNC int uopi_table_set(uopc_ctx *c, uopi_table *t, uint32_t id, void *v); /* 0 on OOM */

/* root with every node rebuilt bottom-up from its sources' entries in map;
   a node that already has an entry is replaced by it, not rebuilt.  map ends
   holding the result of every node walked.  When scoped, the body (src[0])
   of a CALL is neither entered nor replaced: it is another scope (CALL
   inlining).  NULL with the context's error on failure. */
UOPI_FUNC uopc_node *uopi_rebuild(uopc_ctx *c, uopc_node *root, uopi_table *map, int scoped);

/* ---- debug switches ------------------------------------------------------
 * Read from the context (set from UOPC_DEBUG when the context is made). */
UOPI_FUNC FILE *uopi_trace(const uopc_ctx *c);     /* NULL: off */
UOPI_FUNC int uopi_check(const uopc_ctx *c);       /* dtype/shape check of rules */
/* How many failures were reported (uopc_fail calls, recorded or not): a
   pass compares counts to tell a rule's failure from a decline even when an
   older error is still recorded. */
UOPI_FUNC uint64_t uopi_fail_count(const uopc_ctx *c);

/* ---- growable arrays (through the context's allocator) ------------------ */
/* Makes room for at least need elements of size elem in *p (capacity *cap).
   Returns 0 on OOM (error set). */
UOPI_FUNC int uopi_grow(uopc_ctx *c, void **p, uint32_t *cap, uint32_t need, size_t elem);

#ifdef __cplusplus
}
#endif
#endif
