/* lib/algebra/fold.c - constant folding (seed 3.3): one rule, exec_alu on
 * scalar ALU ops whose sources are all constants.  A refusal (undefined
 * result) leaves the op alone.
 */
#include <stdlib.h>

#include "algebra/rules.h"

uopc_matcher *uopi_matcher_static(const uopc_rule *rules, size_t n, const char *what) {
  uopc_error e = {0};
  uopc_matcher *m = uopc_matcher_new(rules, n, &e);
  if (!m) {
    fprintf(stderr, "uopc: built-in rule set %s: %s\n", what, e.msg);
    uopi_die(__FILE__, __LINE__, "bad built-in pattern");
  }
  return m;
}

/* The dtype the operands of an ALU op are read in. */
static uopc_dtype operand_dtype(const uopc_node *x) {
  return (uopc_dtype)(x->op == UOPC_OP_WHERE ? x->src[1]->dtype : x->src[0]->dtype);
}

uopc_node *uopi_rule_fold(uopc_ctx *c, uopc_node *const *b, void *ctx) {
  uopc_node *x = b[0];
  if (x->ndim != 0 || x->nsrc > 3) return NULL;
  uopc_val in[3], out;
  for (uint32_t i = 0; i < x->nsrc; i++) {
    if (!IS_CONST(x->src[i])) return NULL;
    in[i] = (uopc_val){x->src[i]->arg.i, x->src[i]->arg.f};
  }
  if (!uopc_exec_alu((uopc_op)x->op, (uopc_dtype)x->dtype, operand_dtype(x), in, &out)) return NULL;
  return uopc_dtype_is_float((uopc_dtype)x->dtype) ? uopc_const_f(c, (uopc_dtype)x->dtype, out.f)
                                                     : uopc_const_i(c, (uopc_dtype)x->dtype, out.i);
}

static const uopc_rule fold_rules[] = {
    {"$x=(alu)", uopi_rule_fold, "fold"},
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static uopc_matcher *fold_m;
static void build(void) { fold_m = uopi_matcher_static(fold_rules, 1, "fold"); }

const uopc_matcher *uopc_rules_fold(void) {
  pthread_once(&once, build);
  return fold_m;
}
