/* lib/eval/evaluate.c - the evaluate rules (seed 2.6): together with
 * symbolic they reduce any closed program to a value, so rewriting is the
 * interpreter.
 *
 *   movement ops and REDUCE on fully known values: compute them
 *   INDEX(x) -> x;  INDEX(INDEX(x, i), j) -> INDEX(x, i, j)
 *   INDEX(STACK, const i, ...) -> element i (out of bounds: left undefined)
 *   f(STACK(a0, a1), STACK(b0, b1)) -> STACK(f(a0, b0), f(a1, b1))
 *   CALL -> its body with the arguments plugged in (scoped)
 *
 * Every rule here is EXACT: it computes what the program says.  Temporary
 * arrays live in the context's scratch memory (mark, use, reset).
 */
#include <string.h>

#include "algebra/rules.h"
#include "uopc/algebra.h"
#include "uopc/eval.h"

/* ---- values as flat arrays ---- */

typedef struct flat {
  uopc_val *v;
  int64_t n;
} flat;

/* A CONST/STACK tree flattened in C order into scratch memory, or 0 when
   anything is symbolic (or memory ran out: then the error is recorded). */
static int literal(uopc_ctx *c, uopc_node *u, flat *out) {
  int64_t n = uopc_numel(u);
  out->n = 0;
  if (!(out->v = uopi_scratch(c, (size_t)n * sizeof *out->v))) return 0;
  uopi_nodes st = {0};
  if (!uopi_nodes_push(c, &st, u)) return 0;
  while (st.n) {
    uopc_node *x = st.v[--st.n];
    if (x->op == UOPC_OP_CONST) {
      out->v[out->n++] = (uopc_val){x->arg.i, x->arg.f};
    } else if (x->op != UOPC_OP_STACK) {
      return 0;
    } else {
      for (uint32_t i = x->nsrc; i-- > 0;)
        if (!uopi_nodes_push(c, &st, x->src[i])) return 0;
    }
  }
  return 1;
}

/* A STACK tree of the given shape over the scalar nodes lvl[0..n) (C
   order), built level by level in place. */
static uopc_node *stack_tree(uopc_ctx *c, uopc_node **lvl, const int32_t *shape, uint32_t ndim) {
  int64_t n = 1;
  for (uint32_t i = 0; i < ndim; i++) n *= shape[i];
  for (uint32_t d = ndim; d-- > 0;) { /* group the innermost axis into STACKs */
    int64_t groups = n / shape[d];
    for (int64_t g = 0; g < groups; g++)
      if (!(lvl[g] = uopc_stack(c, lvl + g * shape[d], (uint32_t)shape[d]))) return NULL;
    n = groups;
  }
  return lvl[0];
}

/* A STACK tree of constants of the given shape. */
static uopc_node *from_flat(uopc_ctx *c, const uopc_val *v, const int32_t *shape, uint32_t ndim, uopc_dtype t) {
  int64_t n = 1;
  for (uint32_t i = 0; i < ndim; i++) n *= shape[i];
  uopc_node **lvl = uopi_scratch(c, (size_t)n * sizeof(uopc_node *));
  if (!lvl) return NULL;
  int fl = uopc_dtype_is_float(t);
  for (int64_t i = 0; i < n; i++)
    if (!(lvl[i] = fl ? uopc_const_f(c, t, v[i].f) : uopc_const_i(c, t, v[i].i))) return NULL;
  return stack_tree(c, lvl, shape, ndim);
}

/* The scalar elements of x in C order, when x is a scalar or a full STACK
   tree down to scalars (any scalar nodes, not only constants); 0 when it is
   not (or memory ran out: then the error is recorded). */
static int elements(uopc_ctx *c, uopc_node *x, uopi_nodes *out) {
  typedef struct {
    uopc_node *u;
    uint32_t depth;
  } item;
  *out = (uopi_nodes){0};
  item *st = uopi_scratch(c, (size_t)(x->ndim + 1) * 64 * sizeof *st);
  uint32_t sp = 0, cap = (x->ndim + 1) * 64;
  if (!st) return 0;
  st[sp++] = (item){x, 0};
  while (sp) {
    item it = st[--sp];
    if (it.depth == x->ndim) {
      if (!uopi_nodes_push(c, out, it.u)) return 0;
      continue;
    }
    if (it.u->op != UOPC_OP_STACK) return 0;
    if (sp + it.u->nsrc > cap) {
      uint32_t ncap = 2 * (sp + it.u->nsrc);
      item *ns = uopi_scratch(c, (size_t)ncap * sizeof *ns);
      if (!ns) return 0;
      memcpy(ns, st, sp * sizeof *st);
      st = ns, cap = ncap;
    }
    for (uint32_t i = it.u->nsrc; i-- > 0;) st[sp++] = (item){it.u->src[i], it.depth + 1};
  }
  return 1;
}

static void unravel(int64_t i, const int32_t *shape, uint32_t nd, int64_t *idx) {
  for (uint32_t k = nd; k-- > 0;) {
    idx[k] = i % shape[k];
    i /= shape[k];
  }
}

static int64_t ravel(const int64_t *idx, const int32_t *shape, uint32_t nd) {
  int64_t i = 0;
  for (uint32_t k = 0; k < nd; k++) i = i * shape[k] + idx[k];
  return i;
}

/* a movement op or REDUCE of a known value -> its value */
RULE(eval_movement, EXACT, "$u=(reshape|expand|permute|shrink|reduce)", u) {
  uopc_node *x = u->src[0];
  size_t mark = uopi_scratch_mark(c);
  flat in;
  uopc_node *r = NULL;
  if (!literal(c, x, &in)) goto done;
  int64_t nin = in.n, nout = uopc_numel(u);
  uopc_val *out = uopi_scratch(c, (size_t)nout * sizeof *out);
  if (!out) goto done;
  const int32_t *ish = x->shape, *osh = u->shape;
  uint32_t ind = x->ndim, ond = u->ndim;
  int64_t oi[UOPC_LIMIT_DIMS], ii[UOPC_LIMIT_DIMS];
  switch (u->op) {
  case UOPC_OP_RESHAPE: memcpy(out, in.v, (size_t)nout * sizeof *out); break;
  case UOPC_OP_EXPAND:
  case UOPC_OP_PERMUTE:
  case UOPC_OP_SHRINK:
    for (int64_t i = 0; i < nout; i++) {
      unravel(i, osh, ond, oi);
      for (uint32_t k = 0; k < ind; k++) {
        if (u->op == UOPC_OP_EXPAND) ii[k] = ish[k] == 1 ? 0 : oi[k];
        else if (u->op == UOPC_OP_SHRINK) ii[k] = oi[k] + u->arg.v[2 * k];
        else ii[u->arg.v[k]] = oi[k]; /* output axis k is input axis perm[k] */
      }
      out[i] = in.v[ravel(ii, ish, ind)];
    }
    break;
  case UOPC_OP_REDUCE: {
    int64_t inner = nin / nout;
    for (int64_t i = 0; i < nout; i++) {
      uopc_val acc = in.v[i * inner];
      for (int64_t j = 1; j < inner; j++) {
        uopc_val ab[2] = {acc, in.v[i * inner + j]};
        if (!uopc_exec_alu((uopc_op)u->arg.rop, (uopc_dtype)u->dtype, (uopc_dtype)u->dtype, ab, &acc)) goto done;
      }
      out[i] = acc;
    }
    break;
  }
  default: uopi_unreachable();
  }
  r = from_flat(c, out, osh, ond, (uopc_dtype)u->dtype);
done:
  uopi_scratch_reset(c, mark);
  return r;
}

/* the same on the elements of a STACK tree that are not all known values:
   movement ops pick and place elements without evaluating them (an unused
   element, undefined or not, is dropped, as a plan drops it); REDUCE
   becomes op(op(e0, e1), e2)... in order, which the rules then fold */
RULE(eval_movement_nodes, EXACT, "$u=(reshape|expand|permute|shrink|reduce)", u) {
  uopc_node *x = u->src[0];
  size_t mark = uopi_scratch_mark(c);
  uopc_node *r = NULL;
  uopi_nodes in;
  if (!elements(c, x, &in)) goto done;
  int64_t nout = uopc_numel(u);
  uopc_node **out = uopi_scratch(c, (size_t)nout * sizeof *out);
  if (!out) goto done;
  const int32_t *ish = x->shape, *osh = u->shape;
  uint32_t ind = x->ndim, ond = u->ndim;
  int64_t oi[UOPC_LIMIT_DIMS], ii[UOPC_LIMIT_DIMS];
  if (u->op == UOPC_OP_REDUCE) {
    int64_t inner = (int64_t)in.n / nout;
    for (int64_t i = 0; i < nout; i++) {
      uopc_node *acc = in.v[i * inner];
      for (int64_t j = 1; j < inner && acc; j++) acc = uopc_alu2(c, (uopc_op)u->arg.rop, acc, in.v[i * inner + j]);
      if (!(out[i] = acc)) goto done;
    }
  } else {
    for (int64_t i = 0; i < nout; i++) {
      unravel(i, osh, ond, oi);
      for (uint32_t k = 0; k < ind; k++) {
        if (u->op == UOPC_OP_RESHAPE) break;
        if (u->op == UOPC_OP_EXPAND) ii[k] = ish[k] == 1 ? 0 : oi[k];
        else if (u->op == UOPC_OP_SHRINK) ii[k] = oi[k] + u->arg.v[2 * k];
        else ii[u->arg.v[k]] = oi[k];
      }
      out[i] = in.v[u->op == UOPC_OP_RESHAPE ? i : ravel(ii, ish, ind)];
    }
  }
  r = stack_tree(c, out, osh, ond);
done:
  uopi_scratch_reset(c, mark);
  return r;
}

/* INDEX(x) -> x */
RULE(index_none, EXACT, "(index $x)", x) { return x; }

/* INDEX(INDEX(x, i...), j...) -> INDEX(x, i..., j...) */
RULE(index_index, EXACT, "$o=(index $a=(index) ...)", o, a) {
  size_t mark = uopi_scratch_mark(c);
  uopi_nodes idx = {0};
  int ok = 1;
  for (uint32_t i = 1; i < a->nsrc && ok; i++) ok = uopi_nodes_push(c, &idx, a->src[i]);
  for (uint32_t i = 1; i < o->nsrc && ok; i++) ok = uopi_nodes_push(c, &idx, o->src[i]);
  uopc_node *r = ok ? uopc_index(c, a->src[0], idx.v, idx.n) : NULL;
  uopi_scratch_reset(c, mark);
  return r;
}

/* INDEX(STACK(a0, a1, ...), const i, ...) -> ai.  Out of bounds it stays: an
   undefined value, an error only if it reaches the result (run_value says
   "index 5 out of bounds for STACK of 3"), so an unused one is dropped */
RULE(index_stack, EXACT, "$u=(index $s=(stack) #i ...)", u, s, i) {
  int64_t k = ARG(i);
  if (k < 0 || k >= (int64_t)s->nsrc) return NULL;
  if (u->nsrc == 2) return s->src[k];
  return uopc_index(c, s->src[k], u->src + 2, u->nsrc - 2);
}

/* f(STACK(a0, a1), STACK(b0, b1)) -> STACK(f(a0, b0), f(a1, b1)) */
RULE(push_stack, EXACT, "$x=(alu)", x) {
  if (x->ndim == 0 || !(x->srcops & (1ull << UOPC_OP_STACK))) return NULL;
  uint32_t n = (uint32_t)x->shape[0];
  size_t mark = uopi_scratch_mark(c);
  uopc_node **elems = uopi_scratch(c, (size_t)n * sizeof *elems), *r = NULL, *k = NULL;
  /* elements of a 1-D x are scalars: one of constants is made as the
     constant the fold rule (symbolic.c, the first rule of the run set) turns
     it into, without the ALU node in between; an undefined one is built as
     before.  Not while a trace is on: it shows every fold as its own step. */
  int fold = x->ndim == 1 && !uopi_tracing(c);
  if (!elems) goto done;
  for (uint32_t i = 0; i < n; i++) {
    uopc_node *s[3];
    for (uint32_t j = 0; j < x->nsrc; j++) {
      uopc_node *src = x->src[j];
      if (src->op == UOPC_OP_STACK) {
        s[j] = src->src[i];
      } else {
        if (!k && !(k = uopc_const_i(c, UOPC_DT_I32, i))) goto done;
        s[j] = uopc_index(c, src, &k, 1);
      }
    }
    k = NULL;
    if (fold && (elems[i] = uopi_fold_scalar(c, (uopc_op)x->op, (uopc_dtype)x->dtype, s, x->nsrc))) continue;
    if (!(elems[i] = uopc_replace(c, x, s, x->nsrc))) goto done;
  }
  r = uopc_stack(c, elems, n);
done:
  uopi_scratch_reset(c, mark);
  return r;
}

/* CALL -> its body with the arguments plugged in, scoped (beta reduction) */
RULE(inline_call, EXACT, "$call=(call)", call) { return uopc_inline_call(c, call); }

RULESET(uopc_rules_evaluate, "evaluate", 1, &rule_eval_movement, &rule_eval_movement_nodes, &rule_index_none, &rule_index_index,
        &rule_index_stack, &rule_push_stack, &rule_inline_call)
RULESET_CAT(uopc_rules_run, "run", uopc_rules_symbolic, uopc_rules_evaluate)
