/* lib/algebra/simplify.c - graph_rewrite(u, rules), memoized (seed 3.7).
 * The result maps to itself: a normal form is its own simplification.
 *
 * The exact symbolic set keeps its memo in the node (u->simplified, the
 * common case, one load).  Any other rule set has a memo of its own in the
 * context, so a result of the seed's mode never answers an exact-mode call.
 */
#include "core/ctx.h"
#include "uopc/algebra.h"
#include "uopc/rewrite.h"

/* The memo of m in c (acquired the first time), or NULL when the context
   already keeps memos for many rule sets (then nothing is memoized). */
static uopi_table *memo_of(uopc_ctx *c, const uopc_matcher *m) {
  for (uint32_t i = 0; i < c->n_memo; i++)
    if (c->memo[i].m == m) return c->memo[i].t;
  if (c->n_memo == sizeof c->memo / sizeof c->memo[0]) return NULL;
  uopi_table *t = uopi_table_acquire(c);
  if (t) c->memo[c->n_memo++] = (__typeof__(c->memo[0])){m, t};
  return t;
}

uopc_node *uopc_simplify_with(uopc_ctx *c, uopc_node *u, const uopc_matcher *m) {
  if (!c) return NULL;
  if (!u || !uopi_owns(c, u)) { /* the check inline; the call only to record why */
    (void)uopi_check_node(c, u, "simplify");
    return NULL;
  }
  if (!m) return uopc_fail(c, UOPC_ERR_ARG, "simplify: NULL rule set");
  if (m == uopc_rules_symbolic()) {
    if (u->simplified) return u->simplified;
    uopc_node *r = uopc_graph_rewrite(c, u, m, NULL, 0);
    if (!r) return NULL;
    u->simplified = r;
    r->simplified = r;
    return r;
  }
  uopi_table *t = memo_of(c, m);
  if (!t && c->n_memo < sizeof c->memo / sizeof c->memo[0]) return NULL; /* out of memory */
  uopc_node *r = t ? uopi_table_get(t, u->id) : NULL;
  if (r) return r;
  if (!(r = uopc_graph_rewrite(c, u, m, NULL, 0))) return NULL;
  if (t && (!uopi_table_set(c, t, u->id, r) || !uopi_table_set(c, t, r->id, r))) return NULL;
  return r;
}

/* The memo hit first: u->simplified is written only above, for the exact
   symbolic set, so a node that has one needs neither the rule set (a
   pthread_once) nor the general path.  The ownership check stays on the hit
   (inline: two loads): a node of another context, simplified there, must
   still be refused, not answered with that context's node. */
uopc_node *uopc_simplify(uopc_ctx *c, uopc_node *u) {
  if (c && u && u->simplified && uopi_owns(c, u)) return u->simplified;
  return uopc_simplify_with(c, u, uopc_rules_symbolic());
}
