/* lib/eval/run.c - run(program) = graph_rewrite(program, symbolic + evaluate),
 * and the error of a program that does not evaluate to a value: the reason
 * (an undefined op: "division by zero in FLOORDIV"), at the node's .uir
 * position when the parser made that node.
 */
#include <math.h>

#include "algebra/rules.h"
#include "uopc/eval.h"
#include "uopc/rewrite.h"
#include "uopc/uir.h"

uopc_node *uopc_run(uopc_ctx *c, uopc_node *u) {
  if (!c) return NULL;
  if (!uopi_check_node(c, u, "run")) return NULL;
  return uopc_graph_rewrite(c, u, uopc_rules_run(), NULL, 0);
}

/* Why exec_alu refuses x (an ALU op on constants), or NULL. */
static const char *undefined_why(const uopc_node *x, char *buf, size_t n);

/* The node to report when u is not a value: an undefined ALU op on
   constants if there is one (the first in post-order), else the first node,
   in pre-order, that is not part of a CONST/STACK value.  NULL when u is a
   value, or on allocation failure (error recorded). */
static uopc_node *stuck_at(uopc_ctx *c, uopc_node *u, char *why, size_t n) {
  uint32_t cnt = 0;
  uopc_node **all = uopc_toposort(c, u, &cnt), *bad = NULL;
  why[0] = 0;
  for (uint32_t i = 0; all && i < cnt && !bad; i++) {
    uopc_node *x = all[i];
    int consts = x->ndim == 0 && (uopi_op_flags(x->op) & UOPC_OPF_ALU);
    for (uint32_t k = 0; k < x->nsrc && consts; k++) consts = x->src[k]->op == UOPC_OP_CONST;
    if ((consts || x->op == UOPC_OP_INDEX) && undefined_why(x, why, n)) bad = x;
  }
  uopc_mem_free(c, all, (size_t)cnt * sizeof *all);
  if (bad || !all) return bad;
  size_t mark = uopi_scratch_mark(c);
  uopi_nodes st = {0};
  if (uopi_nodes_push(c, &st, u))
    while (st.n && !bad) {
      uopc_node *x = st.v[--st.n];
      if (x->op == UOPC_OP_CONST) continue;
      if (x->op != UOPC_OP_STACK) bad = x;
      else
        for (uint32_t i = x->nsrc; i-- > 0 && st.n != UINT32_MAX;)
          if (!uopi_nodes_push(c, &st, x->src[i])) break;
    }
  uopi_scratch_reset(c, mark);
  return bad;
}

/* Why exec_alu refuses x (an ALU op on constants), or NULL. */
static const char *undefined_why(const uopc_node *x, char *buf, size_t n) {
  if (x->op == UOPC_OP_INDEX && x->nsrc >= 2 && x->src[0]->op == UOPC_OP_STACK && x->src[1]->op == UOPC_OP_CONST) {
    int64_t k = x->src[1]->arg.i;
    if (k >= 0 && k < (int64_t)x->src[0]->nsrc) return NULL;
    snprintf(buf, n, "index %lld out of bounds for STACK of %u", (long long)k, x->src[0]->nsrc);
    return buf;
  }
  if (x->op == UOPC_OP_FLOORDIV || x->op == UOPC_OP_FLOORMOD) {
    int64_t a = x->src[0]->arg.i, b = x->src[1]->arg.i;
    const char *sym = x->op == UOPC_OP_FLOORDIV ? "//" : "%";
    if (b == 0) snprintf(buf, n, "division by zero in %s (%lld %s 0)", uopc_op_name((uopc_op)x->op), (long long)a, sym);
    else if (a == INT32_MIN && b == -1)
      snprintf(buf, n, "overflow in %s (-2147483648 %s -1 is undefined)", uopc_op_name((uopc_op)x->op), sym);
    else return NULL;
    return buf;
  }
  if (x->op == UOPC_OP_CAST && x->dtype == UOPC_DT_I32 && uopc_dtype_is_float((uopc_dtype)x->src[0]->dtype)) {
    double v = x->src[0]->arg.f;
    char num[40];
    uopc_fmt_double(v, num);
    snprintf(buf, n, "CAST of %s to i32 is undefined (%s)", num, isfinite(v) ? "outside the i32 range" : "not finite");
    return buf;
  }
  return NULL;
}

/* Whether u is a value (a CONST, or a STACK of values), looking at no
   more than *budget nodes: a STACK whose sources are all CONSTs (srcops
   says so) is one without a look at them.  0 when it is not, or when the
   budget ran out (then stuck_at decides). */
static int is_value(const uopc_node *u, uint32_t *budget) {
  if (u->op == UOPC_OP_CONST) return 1;
  if (u->op != UOPC_OP_STACK || !*budget) return 0;
  --*budget;
  const uint64_t consts = UINT64_C(1) << UOPC_OP_CONST, stacks = UINT64_C(1) << UOPC_OP_STACK;
  if (u->srcops == consts) return 1;
  if (u->srcops & ~(consts | stacks)) return 0;
  for (uint32_t i = 0; i < u->nsrc; i++)
    if (!is_value(u->src[i], budget)) return 0;
  return 1;
}

uopc_node *uopc_run_value(uopc_ctx *c, uopc_node *u) {
  uopc_node *r = uopc_run(c, u);
  if (!r) return NULL;
  uint32_t budget = 4096; /* STACKs (of any depth: STACKs nest one per dim) */
  if (is_value(r, &budget)) return r; /* what stuck_at would find: nothing */
  uint64_t fails = uopi_fail_count(c);
  char why[200];
  uopc_node *bad = stuck_at(c, r, why, sizeof why);
  if (!bad) return uopi_fail_count(c) != fails ? NULL : r;
  if (why[0]) return uopi_fail_at(c, UOPC_ERR_EVAL, bad, "%s", why);
  return uopi_fail_at(c, UOPC_ERR_EVAL, bad, "program did not evaluate to a value, stuck at %s",
                      uopc_op_name((uopc_op)bad->op));
}
