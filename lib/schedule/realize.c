/* lib/schedule/realize.c - which nodes of a tensor program get a buffer.
 *
 * The rule (docs/schedule.md, "Materialization"):
 *   - every PARAM is an input buffer, every STACK literal (a STACK tree of
 *     CONSTs) a constant buffer, the root the output buffer;
 *   - every REDUCE and every STACK of computed values gets a temporary: the
 *     reduction is computed once, never re-done by a consumer;
 *   - an elementwise node gets a temporary only when fusing it would
 *     multiply work: its fused cost is at least MATERIALIZE_COST (an ALU op
 *     counts 1, RECIP 4, EXP2/LOG2/SIN/SQRT 8) and it is reused (two or
 *     more consumers, or read through an EXPAND that grows an axis);
 *   - everything else (movement ops, cheap elementwise ops, scalar
 *     constants) fuses into the kernel of its consumer.
 * Materializing never changes a value: fused or not, every element is
 * computed by the same ops in the same order.
 */
#include <stdlib.h>
#include <string.h>

#include "algebra/rules.h"
#include "core/ctx.h"
#include "schedule/schedule.h"
#include "uopc/algebra.h"
#include "uopc/eval.h"
#include "uopc/rewrite.h"

#define MATERIALIZE_COST 8
#define COST_CAP 1000

/* CALL -> its body with the arguments plugged in (scoped, seed 2.6) */
RULE(inline_call, EXACT, "$call=(call)", call) { return uopc_inline_call(c, call); }

static const uopc_matcher *inline_rules(void);
RULESET(inline_rules, "inline calls", 1, &rule_inline_call)

uopc_node *uopi_inline_calls(uopc_ctx *c, uopc_node *root) {
  if (!(root->srcops & (1ull << UOPC_OP_CALL)) && root->op != UOPC_OP_CALL) {
    /* fast path: no CALL reachable in one level is no proof; walk */
    uint32_t n = 0;
    uopc_node **all = uopc_toposort(c, root, &n);
    if (!all) return NULL;
    int any = 0;
    for (uint32_t i = 0; i < n && !any; i++) any = all[i]->op == UOPC_OP_CALL;
    uopc_mem_free(c, all, (size_t)n * sizeof *all);
    if (!any) return root;
  }
  return uopc_graph_rewrite(c, root, inline_rules(), NULL, 0);
}

static int op_cost(const uopc_node *u) {
  switch (u->op) {
  case UOPC_OP_RECIP: return 4;
  case UOPC_OP_EXP2: case UOPC_OP_LOG2: case UOPC_OP_SIN: case UOPC_OP_SQRT: return 8;
  default: return (uopi_op_flags(u->op) & UOPC_OPF_ALU) ? 1 : 0;
  }
}

static const char *not_tensor(const uopc_node *u) {
  switch (u->op) {
  case UOPC_OP_BUFFER: case UOPC_OP_RANGE: case UOPC_OP_LOAD: case UOPC_OP_STORE: case UOPC_OP_END:
  case UOPC_OP_SINK:
    return "a kernel op (compile kernels with uopc_compile / uopc exec)";
  case UOPC_OP_CALL: return "a CALL that could not be inlined";
  case UOPC_OP_INDEX: return u->src[0]->op == UOPC_OP_BUFFER ? "an address in a BUFFER (a kernel op)" : NULL;
  default: return NULL;
  }
}

/* The values of a STACK literal in C order, in buffer layout. */
static int literal_data(uopc_ctx *c, uopc_node *u, void *out) {
  size_t mark = uopi_scratch_mark(c);
  uopi_nodes st = {0};
  int64_t k = 0;
  int ok = uopi_nodes_push(c, &st, u);
  size_t es = uopc_dtype_size((uopc_dtype)u->dtype);
  while (ok && st.n) {
    uopc_node *x = st.v[--st.n];
    if (x->op == UOPC_OP_STACK) {
      for (uint32_t i = x->nsrc; i-- > 0 && ok;) ok = uopi_nodes_push(c, &st, x->src[i]);
      continue;
    }
    char *p = (char *)out + (size_t)k++ * es;
    switch (x->dtype) {
    case UOPC_DT_BOOL: *(uint8_t *)p = x->arg.i != 0; break;
    case UOPC_DT_I32: {
      int32_t v = uopc_wrap_i32(x->arg.i);
      memcpy(p, &v, 4);
      break;
    }
    case UOPC_DT_F32: {
      float v = (float)uopc_round_f32(x->arg.f);
      memcpy(p, &v, 4);
      break;
    }
    case UOPC_DT_F16: {
      uint16_t v = uopc_f16_from_double(x->arg.f);
      memcpy(p, &v, 2);
      break;
    }
    default: ok = 0;
    }
  }
  uopi_scratch_reset(c, mark);
  return ok && k == uopc_numel(u);
}

static uint32_t get_buf(const uopi_realized *r, const uopc_node *u) {
  return (uint32_t)(uintptr_t)uopi_table_get(r->buf, u->id);
}

static int set_buf(uopc_ctx *c, uopi_realized *r, const uopc_node *u, uint32_t b) {
  return uopi_table_set(c, r->buf, u->id, (void *)(uintptr_t)(b + 1));
}

uopc_status uopi_realize(uopi_schedule *s, uopi_realized *r) {
  uopc_ctx *c = s->c;
  uopc_node *root = s->program;
  uint32_t n = 0;
  uopc_node **all = uopc_toposort(c, root, &n);
  if (!all) return uopc_ctx_error(c)->code;
  uopc_status st = UOPC_OK;
  size_t mark = uopi_scratch_mark(c);
  /* per toposort position: literal?, cost, consumers, broadcast */
  uint8_t *lit = uopi_scratch(c, n), *bcast = uopi_scratch(c, n), *temp = uopi_scratch(c, n);
  int32_t *cost = uopi_scratch(c, (size_t)n * sizeof *cost), *uses = uopi_scratch(c, (size_t)n * sizeof *uses);
  uopi_table *pos = uopi_table_acquire(c);
  if (!lit || !bcast || !temp || !cost || !uses || !pos) goto fail;
  memset(uses, 0, (size_t)n * sizeof *uses);
  for (uint32_t i = 0; i < n; i++)
    if (!uopi_table_set(c, pos, all[i]->id, (void *)(uintptr_t)(i + 1))) goto fail;
#define POS(x) ((uint32_t)(uintptr_t)uopi_table_get(pos, (x)->id) - 1)
  for (uint32_t i = 0; i < n; i++) {
    uopc_node *u = all[i];
    const char *why = not_tensor(u);
    if (why) {
      st = UOPC_ERR_TYPE;
      uopi_fail_at(c, st, u, "%s is not a tensor-program op: %s", uopc_op_name((uopc_op)u->op), why);
      goto out;
    }
    lit[i] = u->op == UOPC_OP_CONST;
    if (u->op == UOPC_OP_STACK) {
      lit[i] = 1;
      for (uint32_t k = 0; k < u->nsrc; k++) lit[i] &= lit[POS(u->src[k])];
    }
    /* fused cost: stops at what always has a buffer */
    int64_t cst = op_cost(u);
    if (!(u->op == UOPC_OP_REDUCE || u->op == UOPC_OP_STACK || u->op == UOPC_OP_PARAM))
      for (uint32_t k = 0; k < u->nsrc; k++) {
        uint32_t p = POS(u->src[k]);
        if (!(all[p]->op == UOPC_OP_REDUCE || all[p]->op == UOPC_OP_STACK || all[p]->op == UOPC_OP_PARAM)) cst += cost[p];
      }
    cost[i] = (int32_t)(cst > COST_CAP ? COST_CAP : cst);
    /* distinct consumers */
    for (uint32_t k = 0; k < u->nsrc; k++) {
      int dup = 0;
      for (uint32_t j = 0; j < k; j++) dup |= u->src[j] == u->src[k];
      if (!dup) uses[POS(u->src[k])]++;
    }
  }
  /* consumers first (every consumer of node i comes after it): decide
     node i, then pass the broadcast flag to its sources through fused nodes */
  memset(bcast, 0, n);
  for (uint32_t i = n; i-- > 0;) {
    uopc_node *u = all[i];
    temp[i] = u != root && (u->op == UOPC_OP_REDUCE || (u->op == UOPC_OP_STACK && !lit[i]) ||
                            ((uopi_op_flags(u->op) & UOPC_OPF_ALU) && u->ndim && cost[i] >= MATERIALIZE_COST &&
                             (uses[i] >= 2 || bcast[i])));
    int grows = 0;
    if (u->op == UOPC_OP_EXPAND)
      for (uint32_t d = 0; d < u->ndim; d++) grows |= u->src[0]->shape[d] == 1 && u->shape[d] != 1;
    for (uint32_t k = 0; k < u->nsrc; k++)
      if (grows || (!temp[i] && bcast[i])) bcast[POS(u->src[k])] = 1;
  }
  /* the buffers, sources first (their order is the kernels' order) */
  for (uint32_t i = 0; i < n; i++) {
    uopc_node *u = all[i];
    uint32_t b = UINT32_MAX;
    if (u->op == UOPC_OP_PARAM) {
      for (uint32_t k = 0; k < s->nbufs; k++)
        if (s->bufs[k].kind == UOPI_PB_INPUT && s->bufs[k].slot == u->arg.i) {
          st = UOPC_ERR_TYPE;
          uopi_fail_at(c, st, u, "PARAM slot %lld is declared twice with different dtype or shape",
                       (long long)u->arg.i);
          goto out;
        }
      b = uopi_schedule_add_buf(s, UOPI_PB_INPUT, (uopc_dtype)u->dtype, u->shape, u->ndim, u);
      if (b != UINT32_MAX) s->bufs[b].slot = u->arg.i;
    } else if (u->op == UOPC_OP_STACK && lit[i]) {
      int used = u == root;
      for (uint32_t j = i + 1; j < n && !used; j++)
        for (uint32_t k = 0; k < all[j]->nsrc && !used; k++)
          used = all[j]->src[k] == u && !(all[j]->op == UOPC_OP_STACK && lit[j]);
      if (!used) continue; /* only inside a bigger literal */
      b = uopi_schedule_add_buf(s, UOPI_PB_CONST, (uopc_dtype)u->dtype, u->shape, u->ndim, u);
      if (b != UINT32_MAX) {
        uopi_pbuf *pb = &s->bufs[b];
        size_t bytes = (size_t)pb->numel * uopc_dtype_size(pb->dtype);
        if (!(pb->data = malloc(bytes ? bytes : 1))) goto fail;
        if (!literal_data(c, u, pb->data)) goto fail;
      }
    } else if (temp[i] && u != root) {
      b = uopi_schedule_add_buf(s, UOPI_PB_TEMP, (uopc_dtype)u->dtype, u->shape, u->ndim, u);
    } else {
      continue;
    }
    if (b == UINT32_MAX || !set_buf(c, r, u, b)) goto fail;
  }
  /* the output: the root's own buffer, unless the root reads one (a PARAM,
     a STACK literal): then a copy */
  s->out = uopi_schedule_add_buf(s, UOPI_PB_OUTPUT, (uopc_dtype)root->dtype, root->shape, root->ndim, root);
  if (s->out == UINT32_MAX) goto fail;
  if (!get_buf(r, root) && !set_buf(c, r, root, s->out)) goto fail;
  goto out;
fail:
  st = uopc_ctx_error(c) ? uopc_ctx_error(c)->code : UOPC_ERR_NOMEM;
  if (!uopc_ctx_error(c)) uopc_fail(c, UOPC_ERR_NOMEM, "out of memory");
out:
#undef POS
  uopi_table_release(c, pos);
  uopi_scratch_reset(c, mark);
  uopc_mem_free(c, all, (size_t)n * sizeof *all);
  return st;
}
