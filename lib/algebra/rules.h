/* lib/algebra/rules.h - what the rule files share: the RULE declarations
 * (lib/rewrite/rule.h) and small helpers for rule bodies.
 */
#ifndef UOPI_ALGEBRA_RULES_H
#define UOPI_ALGEBRA_RULES_H

#include <string.h>

#include "rewrite/rule.h"

/* A growable array of nodes in scratch memory (lib/core/scratch.c): valid
   until the caller resets to a mark taken before it.  Start from {0}, or
   from a buffer of the caller's ({buf, 0, its length}): it grows into
   scratch memory when that is full. */
typedef struct uopi_nodes {
  uopc_node **v;
  uint32_t n, cap;
} uopi_nodes;

/* Appends x; 0 when out of memory (error recorded). */
static inline int uopi_nodes_push(uopc_ctx *c, uopi_nodes *a, uopc_node *x) {
  if (a->n == a->cap) {
    uint32_t cap = a->cap ? 2 * a->cap : 16;
    uopc_node **v = cap > a->cap ? uopi_scratch(c, (size_t)cap * sizeof *v) : NULL;
    if (!v) return 0;
    if (a->n) memcpy(v, a->v, (size_t)a->n * sizeof *v);
    a->v = v, a->cap = cap;
  }
  a->v[a->n++] = x;
  return 1;
}

/* The constant a scalar ALU op (op, result dtype t) gives on the n sources
   src, all CONSTs: what the fold rule of lib/algebra/symbolic.c returns, and
   what push_stack (lib/eval/evaluate.c) makes for an element of constants.
   NULL when a source is not a constant, n > 3, or the result is undefined
   (exec_alu); NULL with the error recorded when out of memory. */
UOPI_FUNC uopc_node *uopi_fold_scalar(uopc_ctx *c, uopc_op op, uopc_dtype t, uopc_node *const *src, uint32_t n);

#endif
