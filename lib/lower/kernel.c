/* lib/lower/kernel.c - check a kernel graph and simplify its indices. */
#include <string.h>

#include "algebra/rules.h"
#include "lower/kernel.h"
#include "uopc/jit.h" /* uopc_rules_kernel */
#include "uopc/algebra.h"
#include "uopc/rewrite.h"

static int has_load(uopc_ctx *c, uopc_node *u, int *oom) {
  if (!(u->srcops & (1ull << UOPC_OP_LOAD)) && u->op != UOPC_OP_LOAD && u->nsrc == 0) return 0;
  uint32_t n;
  uopc_node **all = uopc_toposort(c, u, &n);
  if (!all) {
    *oom = 1;
    return 0;
  }
  int r = 0;
  for (uint32_t i = 0; i < n && !r; i++) r = all[i]->op == UOPC_OP_LOAD;
  uopc_mem_free(c, all, (size_t)n * sizeof *all);
  return r;
}

/* INDEX(buffer, i) -> INDEX(buffer, simplify(i)) when i loads nothing:
   exact, as simplify is */
RULE(simplify_index, EXACT, "$u=(index $b=(buffer) $i)", u, b, i) {
  int oom = 0;
  if (has_load(c, i, &oom) || oom) return NULL;
  uopc_node *s = uopc_simplify(c, i);
  return s ? uopc_index(c, b, &s, 1) : NULL;
}

/* RANGE(end) -> RANGE(simplify(end)) when end loads nothing.  The rewrite is
   bottom up, so every use of the RANGE (ENDs, indices, values) sees the
   same simplified node. */
RULE(simplify_range, EXACT, "$r=(range $e)", r, e) {
  int oom = 0;
  if (IS_CONST(e) || has_load(c, e, &oom) || oom) return NULL;
  uopc_node *s = uopc_simplify(c, e);
  return s ? uopc_range(c, s, r->arg.i) : NULL;
}

RULESET(uopc_rules_kernel, "kernel", 1, &rule_simplify_range, &rule_simplify_index)

static const char *not_kernel(uopc_node *u) {
  switch (u->op) {
  case UOPC_OP_PARAM: return "a kernel takes BUFFERs, not PARAMs";
  case UOPC_OP_CALL: return "CALL must be inlined before a kernel is compiled";
  case UOPC_OP_STACK: case UOPC_OP_RESHAPE: case UOPC_OP_EXPAND: case UOPC_OP_PERMUTE: case UOPC_OP_SHRINK: case UOPC_OP_REDUCE:
    return "shaped values must be lowered to loops before a kernel is compiled";
  case UOPC_OP_INDEX: return u->src[0]->op == UOPC_OP_BUFFER ? NULL : "INDEX of a value is not a kernel op";
  case UOPC_OP_BUFFER: return NULL;
  default: return u->ndim ? "shaped values must be lowered to loops before a kernel is compiled" : NULL;
  }
}

uopc_status uopi_kernel_check_root(uopc_ctx *c, const uopc_node *root) {
  if (!root) return uopc_fail(c, UOPC_ERR_ARG, "compile: NULL kernel"), UOPC_ERR_ARG;
  if (root->op != UOPC_OP_SINK && root->op != UOPC_OP_STORE && root->op != UOPC_OP_END) {
    uopc_fail(c, UOPC_ERR_TYPE, "a kernel's root must be a SINK (or a STORE or END), not %s", uopc_op_name((uopc_op)root->op));
    return UOPC_ERR_TYPE;
  }
  return UOPC_OK;
}

uopc_status uopi_kernel_prepare(uopc_ctx *c, uopc_node *root, uopi_kernel_ir *out) {
  memset(out, 0, sizeof *out);
  uopc_status st0 = uopi_kernel_check_root(c, root);
  if (st0) return st0;
  if (root->op == UOPC_OP_STORE || root->op == UOPC_OP_END) root = uopc_sink(c, &root, 1);
  uopc_node *r = root ? uopc_graph_rewrite(c, root, uopc_rules_kernel(), NULL, 0) : NULL;
  uint32_t n = 0;
  uopc_node **all = r ? uopc_toposort(c, r, &n) : NULL;
  if (!all) return uopc_ctx_error(c) ? uopc_ctx_error(c)->code : UOPC_ERR_NOMEM;
  uopc_status st = UOPC_OK;
  int64_t max_slot = -1;
  for (uint32_t i = 0; i < n && !st; i++) {
    uopc_node *u = all[i];
    const char *why = not_kernel(u);
    if (why) {
      uopc_fail(c, UOPC_ERR_TYPE, "%s is not a kernel op: %s", uopc_op_name((uopc_op)u->op), why);
      st = UOPC_ERR_TYPE;
    } else if (u->op == UOPC_OP_BUFFER) {
      int64_t s = u->arg.i;
      if (s >= UOPI_KERNEL_MAX_BUFS) {
        uopc_fail(c, UOPC_ERR_TYPE, "BUFFER slot %lld: a kernel takes at most %d buffers", (long long)s, UOPI_KERNEL_MAX_BUFS);
        st = UOPC_ERR_TYPE;
      } else if (out->bufs[s] && out->bufs[s] != u) {
        uopc_fail(c, UOPC_ERR_TYPE, "BUFFER slot %lld is declared twice with different dtype or shape", (long long)s);
        st = UOPC_ERR_TYPE;
      } else {
        out->bufs[s] = u;
        if (s > max_slot) max_slot = s;
      }
    }
  }
  for (int64_t s = 0; s <= max_slot && !st; s++)
    if (!out->bufs[s]) {
      uopc_fail(c, UOPC_ERR_TYPE, "BUFFER slots must be 0..%lld; slot %lld is missing", (long long)max_slot, (long long)s);
      st = UOPC_ERR_TYPE;
    }
  uopc_mem_free(c, all, (size_t)n * sizeof *all);
  out->root = r;
  out->nbufs = (uint32_t)(max_slot + 1);
  return st;
}
