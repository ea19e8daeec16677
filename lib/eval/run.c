/* lib/eval/run.c - run(program) = graph_rewrite(program, symbolic + evaluate). */
#include "internal.h"

uopc_node *uopc_run(uopc_ctx *c, uopc_node *u) {
  if (!u) return uopc_fail(c, UOPC_ERR_ARG, "run: NULL program");
  return uopc_graph_rewrite(c, u, uopc_rules_run(), NULL, 0);
}

/* The first node, in pre-order, that is not part of a CONST/STACK value. */
static uopc_node *stuck_at(uopc_ctx *c, uopc_node *u, int *oom) {
  uopc_node **st = NULL, *bad = NULL;
  uint32_t cap = 0, sp = 0;
  *oom = !uopi_grow(c, (void **)&st, &cap, 16, sizeof *st);
  if (*oom) return NULL;
  st[sp++] = u;
  while (sp && !bad && !*oom) {
    uopc_node *x = st[--sp];
    if (x->op == UOPC_OP_CONST) continue;
    if (x->op != UOPC_OP_STACK) {
      bad = x;
    } else if (!uopi_grow(c, (void **)&st, &cap, sp + x->nsrc, sizeof *st)) {
      *oom = 1;
    } else {
      for (uint32_t i = x->nsrc; i-- > 0;) st[sp++] = x->src[i];
    }
  }
  uopc_mem_free(c, st, (size_t)cap * sizeof *st);
  return bad;
}

uopc_node *uopc_run_value(uopc_ctx *c, uopc_node *u) {
  uopc_node *r = uopc_run(c, u);
  if (!r) return NULL;
  int oom = 0;
  uopc_node *bad = stuck_at(c, r, &oom);
  if (oom) return NULL;
  if (bad) return uopc_fail(c, UOPC_ERR_EVAL, "program did not evaluate to a value, stuck at %s", uopc_op_name((uopc_op)bad->op));
  return r;
}
