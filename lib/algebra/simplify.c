/* lib/algebra/simplify.c - graph_rewrite(u, symbolic), memoized on the node
 * (seed 3.7).  The result maps to itself: a normal form is its own
 * simplification.
 */
#include "internal.h"

uopc_node *uopc_simplify(uopc_ctx *c, uopc_node *u) {
  if (!u) return uopc_fail(c, UOPC_ERR_ARG, "simplify: NULL node");
  if (u->simplified) return u->simplified;
  uopc_node *r = uopc_graph_rewrite(c, u, uopc_rules_symbolic(), NULL, 0);
  if (!r) return NULL;
  u->simplified = r;
  r->simplified = r;
  return r;
}
