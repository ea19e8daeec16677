/* lib/algebra/bounds.h - intervals for the rules' no-overflow guards.
 *
 * uopc_vmin/uopc_vmax are the sound bounds of a node (an i32 interval that
 * might wrap is the full range).  A NOWRAP rule needs more: that an i32 ADD
 * or MUL, of the matched subexpression or of the one the rule builds, does
 * not wrap for any values its operands can take.  These helpers compute the
 * exact (unwrapped) interval of such an op from its operands' bounds, in
 * int64, so a rule can check its premise before building anything.
 */
#ifndef UOPI_ALGEBRA_BOUNDS_H
#define UOPI_ALGEBRA_BOUNDS_H

#include "core/ctx.h"
#include "uopc/algebra.h"

typedef struct uopi_iv {
  int64_t lo, hi;
} uopi_iv;

/* The bounds of u as an interval (u a node of c; computed when not cached). */
UOPI_FUNC uopi_iv uopi_bounds_slow(uopc_ctx *c, uopc_node *u);
static inline uopi_iv uopi_bounds(uopc_ctx *c, uopc_node *u) {
  if (u->flags & UOPC_NF_BOUNDS) return (uopi_iv){c->bounds[u->id][0], c->bounds[u->id][1]};
  return uopi_bounds_slow(c, u);
}

/* Exact intervals of a + b and a * b (operands within i32, so no int64
   overflow). */
static inline uopi_iv uopi_iv_add(uopi_iv a, uopi_iv b) { return (uopi_iv){a.lo + b.lo, a.hi + b.hi}; }
static inline uopi_iv uopi_iv_mul(uopi_iv a, uopi_iv b) {
  int64_t p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  uopi_iv r = {p[0], p[0]};
  for (int i = 1; i < 4; i++) {
    if (p[i] < r.lo) r.lo = p[i];
    if (p[i] > r.hi) r.hi = p[i];
  }
  return r;
}
static inline uopi_iv uopi_iv_k(int64_t v) { return (uopi_iv){v, v}; }
static inline int uopi_iv_fits_i32(uopi_iv a) { return a.lo >= INT32_MIN && a.hi <= INT32_MAX; }

/* uopc_vmin / uopc_vmax (the same values, and for a NULL node or another
   context's node the same error), with the common case inline: u is c's
   and its interval is cached.  For rule bodies, which ask about every node
   they see.  c must not be NULL. */
UOPI_FUNC int64_t uopi_vmin_of(uopc_ctx *c, uopc_node *u); /* u a node of c: computed when not cached */
UOPI_FUNC int64_t uopi_vmax_of(uopc_ctx *c, uopc_node *u);
static inline int64_t uopi_vmin(uopc_ctx *c, uopc_node *u) {
  if (!u || !uopi_owns(c, u)) return uopc_vmin(c, u); /* the error */
  return (u->flags & UOPC_NF_BOUNDS) ? c->bounds[u->id][0] : uopi_vmin_of(c, u);
}
static inline int64_t uopi_vmax(uopc_ctx *c, uopc_node *u) {
  if (!u || !uopi_owns(c, u)) return uopc_vmax(c, u);
  return (u->flags & UOPC_NF_BOUNDS) ? c->bounds[u->id][1] : uopi_vmax_of(c, u);
}

/* 1 when u cannot wrap: an i32 ADD or MUL whose exact interval (from its
   sources' bounds) fits in i32; every other node: 1.  u a node of c. */
static inline int uopi_nowrap(uopc_ctx *c, uopc_node *u) {
  if (u->dtype != UOPC_DT_I32 || u->ndim != 0 || (u->op != UOPC_OP_ADD && u->op != UOPC_OP_MUL)) return 1;
  uopi_iv a = uopi_bounds(c, u->src[0]), b = uopi_bounds(c, u->src[1]);
  return uopi_iv_fits_i32(u->op == UOPC_OP_ADD ? uopi_iv_add(a, b) : uopi_iv_mul(a, b));
}

#endif
