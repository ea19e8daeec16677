/* lib/eval/evaluate.c - the evaluate rules (seed 2.6): together with
 * symbolic they reduce any closed program to a value, so rewriting is the
 * interpreter.
 *
 *   movement ops and REDUCE on fully known values: compute them
 *   INDEX(x) -> x;  INDEX(INDEX(x, i), j) -> INDEX(x, i, j)
 *   INDEX(STACK, const i, ...) -> element i (an error when out of bounds)
 *   f(STACK(a0, a1), STACK(b0, b1)) -> STACK(f(a0, b0), f(a1, b1))
 *   CALL -> its body with the arguments plugged in (scoped)
 */
#include <string.h>

#include "algebra/rules.h"

/* ---- values as flat arrays ---- */

typedef struct flat {
  uopc_val *v;
  int64_t n;
} flat;

/* A CONST/STACK tree flattened in C order, or 0 when anything is symbolic. */
static int literal(uopc_ctx *c, uopc_node *u, flat *out) {
  int64_t n = uopc_numel(u);
  out->n = 0;
  out->v = uopc_mem_alloc(c, (size_t)n * sizeof *out->v);
  if (!out->v) return 0;
  uopc_node **st = NULL;
  uint32_t cap = 0, sp = 0;
  int ok = uopi_grow(c, (void **)&st, &cap, 16, sizeof *st);
  if (ok) st[sp++] = u;
  while (ok && sp) {
    uopc_node *x = st[--sp];
    if (x->op == UOPC_OP_CONST) {
      out->v[out->n++] = (uopc_val){x->arg.i, x->arg.f};
    } else if (x->op == UOPC_OP_STACK && uopi_grow(c, (void **)&st, &cap, sp + x->nsrc, sizeof *st)) {
      for (uint32_t i = x->nsrc; i-- > 0;) st[sp++] = x->src[i];
    } else {
      ok = 0;
    }
  }
  uopc_mem_free(c, st, (size_t)cap * sizeof *st);
  if (!ok) uopc_mem_free(c, out->v, (size_t)n * sizeof *out->v);
  return ok;
}

/* A STACK tree of constants of the given shape, built level by level. */
static uopc_node *from_flat(uopc_ctx *c, const uopc_val *v, const int32_t *shape, uint32_t ndim, uopc_dtype t) {
  int64_t n = 1;
  for (uint32_t i = 0; i < ndim; i++) n *= shape[i];
  const size_t size = (size_t)n * sizeof(uopc_node *);
  uopc_node **lvl = uopc_mem_alloc(c, size);
  if (!lvl) return NULL;
  int fl = uopc_dtype_is_float(t);
  for (int64_t i = 0; i < n; i++) {
    lvl[i] = fl ? uopc_const_f(c, t, v[i].f) : uopc_const_i(c, t, v[i].i);
    if (!lvl[i]) goto fail;
  }
  for (uint32_t d = ndim; d-- > 0;) { /* group the innermost axis into STACKs */
    int64_t groups = n / shape[d];
    for (int64_t g = 0; g < groups; g++) {
      lvl[g] = uopc_stack(c, lvl + g * shape[d], (uint32_t)shape[d]);
      if (!lvl[g]) goto fail;
    }
    n = groups;
  }
  uopc_node *r = lvl[0];
  uopc_mem_free(c, lvl, size);
  return r;
fail:
  uopc_mem_free(c, lvl, size);
  return NULL;
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

RULE(r_movement) {
  uopc_node *u = b[0], *x = u->src[0];
  flat in;
  if (!literal(c, x, &in)) return NULL;
  int64_t nin = in.n, nout = uopc_numel(u);
  uopc_val *out = uopc_mem_alloc(c, (size_t)nout * sizeof *out);
  uopc_node *r = NULL;
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
  uopc_mem_free(c, out, (size_t)nout * sizeof *out);
  uopc_mem_free(c, in.v, (size_t)nin * sizeof *in.v);
  return r;
}

RULE(r_index_none) { return b[0]; }

RULE(r_index_index) { /* INDEX(INDEX(x, i...), j...) -> INDEX(x, i..., j...); b: outer, inner */
  uopc_node *o = b[0], *a = b[1];
  uint32_t n = a->nsrc - 1 + o->nsrc - 1;
  uopc_node **idx = uopc_mem_alloc(c, ((size_t)n + 1) * sizeof *idx);
  if (!idx) return NULL;
  uint32_t k = 0;
  for (uint32_t i = 1; i < a->nsrc; i++) idx[k++] = a->src[i];
  for (uint32_t i = 1; i < o->nsrc; i++) idx[k++] = o->src[i];
  uopc_node *r = uopc_index(c, a->src[0], idx, n);
  uopc_mem_free(c, idx, ((size_t)n + 1) * sizeof *idx);
  return r;
}

RULE(r_index_stack) { /* b: u, s, i */
  uopc_node *u = b[0], *s = b[1];
  int64_t i = ARG(b[2]);
  if (i < 0 || i >= (int64_t)s->nsrc)
    return uopc_fail(c, UOPC_ERR_EVAL, "index %lld out of bounds for STACK of %u", (long long)i, s->nsrc);
  if (u->nsrc == 2) return s->src[i];
  return uopc_index(c, s->src[i], u->src + 2, u->nsrc - 2);
}

RULE(r_push_stack) { /* f(STACK(a0, a1), STACK(b0, b1)) -> STACK(f(a0, b0), f(a1, b1)) */
  uopc_node *x = b[0];
  if (x->ndim == 0 || !(x->srcops & (1ull << UOPC_OP_STACK))) return NULL;
  uint32_t n = (uint32_t)x->shape[0];
  uopc_node **elems = uopc_mem_alloc(c, (size_t)n * sizeof *elems);
  if (!elems) return NULL;
  uopc_node *r = NULL;
  for (uint32_t i = 0; i < n; i++) {
    uopc_node *s[3];
    uopc_node *k = NULL;
    for (uint32_t j = 0; j < x->nsrc; j++) {
      uopc_node *src = x->src[j];
      if (src->op == UOPC_OP_STACK) {
        s[j] = src->src[i];
      } else {
        if (!k && !(k = uopc_const_i(c, UOPC_DT_I32, i))) goto done;
        s[j] = uopc_index(c, src, &k, 1);
      }
    }
    if (!(elems[i] = uopc_replace(c, x, s, x->nsrc))) goto done;
  }
  r = uopc_stack(c, elems, n);
done:
  uopc_mem_free(c, elems, (size_t)n * sizeof *elems);
  return r;
}

RULE(r_inline) { return uopc_inline_call(c, b[0]); }

static const uopc_rule evaluate_rules[] = {
    {"$u=(reshape|expand|permute|shrink|reduce)", r_movement, "eval_movement"},
    {"(index $x)", r_index_none, "index_none"},
    {"$b=(index $a=(index) ...)", r_index_index, "index_index"},
    {"$u=(index $s=(stack) #i ...)", r_index_stack, "index_stack"},
    {"$x=(alu)", r_push_stack, "push_stack"},
    {"$call=(call)", r_inline, "inline_call"},
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static uopc_matcher *evaluate_m, *run_m;
static void build(void) {
  evaluate_m = uopi_matcher_static(evaluate_rules, sizeof evaluate_rules / sizeof evaluate_rules[0], "evaluate");
  run_m = uopc_matcher_cat(uopc_rules_symbolic(), evaluate_m);
  if (!run_m) uopi_die(__FILE__, __LINE__, "out of memory building the run rules");
}

const uopc_matcher *uopc_rules_evaluate(void) {
  pthread_once(&once, build);
  return evaluate_m;
}

const uopc_matcher *uopc_rules_run(void) {
  pthread_once(&once, build);
  return run_m;
}
