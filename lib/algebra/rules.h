/* lib/algebra/rules.h - what rule tables share. */
#ifndef UOPI_ALGEBRA_RULES_H
#define UOPI_ALGEBRA_RULES_H

#include <pthread.h>

#include "internal.h"

/* A rule function: bindings b[] in the order the pattern names them. */
#define RULE(name) static uopc_node *name(uopc_ctx *c, uopc_node *const *b, void *ctx)
/* A constant of x's dtype and shape. */
#define K(x, v) uopc_full_like(c, (x), (double)(v))
#define IS_CONST(u) ((u)->op == UOPC_OP_CONST)
#define ARG(u) ((u)->arg.i)

/* Builds a matcher from a static rule table once per process; a bad pattern
   in a built-in table is a bug and aborts. */
UOPI_FUNC uopc_matcher *uopi_matcher_static(const uopc_rule *rules, size_t n, const char *what);

/* _const_bounds as a rule usable by other tables. */
UOPI_FUNC uopc_node *uopi_rule_fold(uopc_ctx *c, uopc_node *const *b, void *ctx);

#endif
