/* lib/algebra/bounds.c - interval arithmetic over the IR (seed 3.4).
 *
 * vmin(u) <= value <= vmax(u) for every execution.  Sound, not tight: an i32
 * interval that might wrap is the full range; floats and shaped values get
 * the full range of their dtype (floats as INT64_MIN..INT64_MAX, standing
 * for -inf..inf).  Cached in the context, by node id (c->bounds: a table
 * of 16 bytes a node, made on the first question, so a graph no rule asks
 * about carries none); computed bottom-up without recursion.
 */
#include <stdint.h>

#include "algebra/bounds.h"
#include "core/ctx.h"
#include "uopc/algebra.h"

typedef struct iv {
  int64_t lo, hi;
} iv;


static iv full(uopc_dtype t) {
  switch (t) {
  case UOPC_DT_BOOL: return (iv){0, 1};
  case UOPC_DT_I32: return (iv){INT32_MIN, INT32_MAX};
  default: return (iv){INT64_MIN, INT64_MAX};
  }
}


static int64_t min2(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max2(int64_t a, int64_t b) { return a > b ? a : b; }

/* The cached interval of u (its flags have UOPC_NF_BOUNDS). */
static iv get(const uopc_ctx *c, const uopc_node *u) { return (iv){c->bounds[u->id][0], c->bounds[u->id][1]}; }

/* Room in c->bounds for ids up to id.  A node's sources were made before
   it and have smaller ids, so room for u is room for its whole graph. */
static int cover(uopc_ctx *c, uint32_t id) {
  if (id < c->cap_bounds) return 1;
  uint64_t ncap = c->cap_bounds ? c->cap_bounds : 256;
  while (ncap <= id) ncap *= 2;
  void *p = uopi_big_realloc(c, c->bounds, (size_t)c->cap_bounds * sizeof *c->bounds, (size_t)ncap * sizeof *c->bounds);
  if (!p) return 0;
  c->bounds = p;
  c->cap_bounds = (uint32_t)ncap;
  return 1;
}

/* The interval of u from its sources' (already computed) intervals. */
static iv compute(const uopc_ctx *c, const uopc_node *u) {
  uopc_dtype d = (uopc_dtype)u->dtype;
  if (u->op == UOPC_OP_CONST) return uopi_dtype_is_float(d) ? full(d) : (iv){u->arg.i, u->arg.i};
  if (u->op == UOPC_OP_RANGE) return (iv){0, max2(0, get(c, u->src[0]).hi - 1)};
  if (uopi_dtype_is_float(d) || u->ndim != 0 || d == UOPC_DT_VOID) return full(d);
  if (u->op == UOPC_OP_CAST && u->src[0]->dtype == UOPC_DT_BOOL) return get(c, u->src[0]);
  if (u->op == UOPC_OP_WHERE) {
    iv k = get(c, u->src[0]), a = get(c, u->src[1]), b = get(c, u->src[2]);
    if (k.lo) return a;
    if (!k.hi) return b;
    return (iv){min2(a.lo, b.lo), max2(a.hi, b.hi)};
  }
  if (!(uopi_op_flags(u->op) & UOPC_OPF_ALU) || u->nsrc != 2) return full(d);
  iv a = get(c, u->src[0]), b = get(c, u->src[1]);
  int operands_float = uopi_dtype_is_float((uopc_dtype)u->src[0]->dtype);
  if (d == UOPC_DT_BOOL && !(u->op == UOPC_OP_CMPLT || u->op == UOPC_OP_CMPNE)) {
    switch (u->op) { /* bool: add is or, mul is and, max is or */
    case UOPC_OP_ADD: case UOPC_OP_MAX: return (iv){a.lo | b.lo, a.hi | b.hi};
    case UOPC_OP_MUL: return (iv){a.lo & b.lo, a.hi & b.hi};
    default: return full(d);
    }
  }
  switch (u->op) {
  case UOPC_OP_ADD: return (iv){a.lo + b.lo, a.hi + b.hi};
  case UOPC_OP_MUL: {
    int64_t p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
    iv r = {p[0], p[0]};
    for (int i = 1; i < 4; i++) r.lo = min2(r.lo, p[i]), r.hi = max2(r.hi, p[i]);
    return r;
  }
  case UOPC_OP_MAX: return (iv){max2(a.lo, b.lo), max2(a.hi, b.hi)};
  case UOPC_OP_FLOORDIV:
    if (b.lo == b.hi && b.lo > 0) return (iv){uopi_floordiv64(a.lo, b.lo), uopi_floordiv64(a.hi, b.lo)};
    return full(d);
  case UOPC_OP_FLOORMOD:
    if (b.lo == b.hi && b.lo > 0) return (0 <= a.lo && a.hi < b.lo) ? a : (iv){0, b.lo - 1};
    return full(d);
  case UOPC_OP_CMPLT:
    if (operands_float) return full(d);
    if (a.hi < b.lo) return (iv){1, 1};
    if (a.lo >= b.hi) return (iv){0, 0};
    return (iv){0, 1};
  case UOPC_OP_CMPNE:
    if (operands_float) return full(d);
    if (a.hi < b.lo || b.hi < a.lo) return (iv){1, 1};
    if (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo) return (iv){0, 0};
    return (iv){0, 1};
  default: return full(d);
  }
}

/* Computes and caches u's interval (c->bounds covers u->id). */
static void set(uopc_ctx *c, uopc_node *u) {
  iv r = compute(c, u);
  iv f = full((uopc_dtype)u->dtype);
  if ((u->dtype == UOPC_DT_I32 || u->dtype == UOPC_DT_BOOL) && (r.lo < f.lo || r.hi > f.hi)) r = f; /* might wrap */
  c->bounds[u->id][0] = r.lo;
  c->bounds[u->id][1] = r.hi;
  u->flags |= UOPC_NF_BOUNDS;
}

/* Computes bounds for u and every source that lacks them, post-order. */
static __attribute__((noinline)) int ensure_slow(uopc_ctx *c, uopc_node *u) {
  typedef struct {
    uopc_node *u;
    uint32_t next;
  } fr;
  fr small[64], *st = small;
  uint32_t cap = 64, sp = 0;
  st[sp++] = (fr){u, 0};
  while (sp) {
    fr *f = &st[sp - 1];
    if (f->next < f->u->nsrc) {
      uopc_node *s = f->u->src[f->next++];
      if (s->flags & UOPC_NF_BOUNDS) continue;
      if (sp == cap) {
        fr *ns = uopc_mem_alloc(c, (size_t)cap * 2 * sizeof *ns);
        if (!ns) {
          if (st != small) uopc_mem_free(c, st, (size_t)cap * sizeof *st);
          return 0;
        }
        for (uint32_t i = 0; i < sp; i++) ns[i] = st[i];
        if (st != small) uopc_mem_free(c, st, (size_t)cap * sizeof *st);
        st = ns, cap *= 2;
      }
      st[sp++] = (fr){s, 0};
      continue;
    }
    if (!(f->u->flags & UOPC_NF_BOUNDS)) set(c, f->u);
    sp--;
  }
  if (st != small) uopc_mem_free(c, st, (size_t)cap * sizeof *st);
  return 1;
}

/* 0 when the table could not grow (out of memory, recorded in c): the
   caller answers with the dtype's full range, which is sound. */
static inline int ensure(uopc_ctx *c, uopc_node *u) {
  if (u->flags & UOPC_NF_BOUNDS) return 1;
  if (!cover(c, u->id)) return 0;
  /* the common case: every source has its bounds or is a leaf (a CONST, a
     PARAM: its interval needs no other) */
  for (uint32_t i = 0; i < u->nsrc; i++) {
    uopc_node *s = u->src[i];
    if (s->flags & UOPC_NF_BOUNDS) continue;
    if (s->nsrc) return ensure_slow(c, u);
    set(c, s);
  }
  set(c, u);
  return 1;
}

int64_t uopi_vmin_of(uopc_ctx *c, uopc_node *u) {
  if (!ensure(c, u)) return full((uopc_dtype)u->dtype).lo;
  return get(c, u).lo;
}

int64_t uopi_vmax_of(uopc_ctx *c, uopc_node *u) {
  if (!ensure(c, u)) return full((uopc_dtype)u->dtype).hi;
  return get(c, u).hi;
}

/* The public calls check their arguments (NULL, another context's node:
   the error recorded, INT64_MIN / INT64_MAX); the passes' uopi_bounds
   does not. */
int64_t uopc_vmin(uopc_ctx *c, uopc_node *u) {
  if (c && u && uopi_owns(c, u)) return uopi_vmin_of(c, u); /* the check inline; the call only to record why */
  (void)uopi_check_node(c, u, "vmin");
  return INT64_MIN;
}
int64_t uopc_vmax(uopc_ctx *c, uopc_node *u) {
  if (c && u && uopi_owns(c, u)) return uopi_vmax_of(c, u);
  (void)uopi_check_node(c, u, "vmax");
  return INT64_MAX;
}

uopi_iv uopi_bounds_slow(uopc_ctx *c, uopc_node *u) {
  if (!ensure(c, u)) {
    iv f = full((uopc_dtype)u->dtype);
    return (uopi_iv){f.lo, f.hi};
  }
  iv r = get(c, u);
  return (uopi_iv){r.lo, r.hi};
}
