/* uopc/algebra.h - what every op computes (exec_alu), bounds, constant
 * folding, the symbolic rule set and simplify.  docs/semantics.md has the
 * table of every op/dtype pair.
 */
#ifndef UOPC_ALGEBRA_H
#define UOPC_ALGEBRA_H

#include "uopc/rewrite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A scalar value: bool and i32 in i, f32 and f16 in f (already rounded to
   the dtype when it is a result of exec_alu). */
typedef struct uopc_val {
  int64_t i;
  double f;
} uopc_val;

/* The reference semantics.  op is an ALU op; out_t the result dtype; in_t
   the dtype of the operands (of the value operands for WHERE; the source
   dtype for CAST; the compared dtype for CMPLT/CMPNE).  Inputs are rounded
   to in_t first.  Returns 1 and writes *out, or 0 where the result is
   undefined (division by zero, INT_MIN // -1, INT_MIN % -1, casting a
   non-finite or out-of-range float to i32), and 0 without writing *out for
   NULL in or out or an op or dtype it does not define. */
UOPC_API int uopc_exec_alu(uopc_op op, uopc_dtype out_t, uopc_dtype in_t, const uopc_val *in, uopc_val *out);

/* uopc_exec_alu over n cases at once, for callers that evaluate many
   operand tuples of one (op, out_t, in_t) (the fuzzer): for i < n,
   ok[i] = uopc_exec_alu(op, out_t, in_t, in + k*i, out + i), where k is the
   op's operand count (1 for RECIP, EXP2, LOG2, SQRT, SIN and CAST; 3 for
   WHERE, condition first; 2 otherwise), so in holds n*k values.  The same
   result bit for bit, out[i] left untouched where ok[i] is 0; only the
   dispatch on (op, out_t, in_t) is done once instead of per case.  Returns
   the number of ok[i] that are 1.  NULL in, out or ok: returns 0 and writes
   nothing; n = 0: returns 0. */
UOPC_API size_t uopc_exec_alu_n(uopc_op op, uopc_dtype out_t, uopc_dtype in_t, const uopc_val *in, size_t n,
                                uopc_val *out, unsigned char *ok);

/* Round a double to f32 / f16 (nearest even, overflow to +-inf). */
UOPC_API double uopc_round_f32(double x);
UOPC_API double uopc_round_f16(double x);
/* IEEE half <-> float bit conversions. */
UOPC_API uint16_t uopc_f16_from_double(double x);
UOPC_API double uopc_f16_to_double(uint16_t h);
/* Wrap an integer to i32 (two's complement). */
UOPC_API int32_t uopc_wrap_i32(int64_t x);

/* Bounds (seed 3.4): vmin <= value <= vmax for every execution; an i32
   interval that might wrap is the full range; floats and shaped values get
   the full range of their dtype (bool: 0..1; f32/f16: +-inf is not
   representable in int64 and reports INT64_MIN/INT64_MAX).  Cached on the
   node; computed without recursion.  NULL c or u, or u of another context:
   INT64_MIN / INT64_MAX (nothing known) with UOPC_ERR_ARG recorded in c. */
UOPC_API int64_t uopc_vmin(uopc_ctx *c, uopc_node *u);
UOPC_API int64_t uopc_vmax(uopc_ctx *c, uopc_node *u);

/* The built-in rule sets (built once per process, shared by every context
   and thread, never freed by the caller).  List their rules with
   uopc_matcher_rule; docs/rewrite.md has the table of every rule and what
   it assumes.
     fold             constant folding (exec_alu on constants);
     symbolic         fold + the algebra of seed 3.5, in the seed's order, in
                      exact mode: a rule that holds only without i32 overflow
                      fires only where bounds prove that nothing of the
                      matched subexpression, before or after, wraps; the
                      seed's x + 0.0 -> x is left out.  The default of
                      uopc_simplify, run and the lowering;
     symbolic_seed    the seed's own mode: the same rules trusting, as the
                      seed says, that i32 arithmetic never overflows, plus
                      x + 0.0 -> x (wrong for x = -0.0).  Reproduces the
                      chapter 3 tables as printed; nothing uses it unless
                      asked (`uopc simplify --seed-rules`);
     symbolic_strong  symbolic (exact) plus gcd division ((x*2)//4 -> x//2
                      where it cannot wrap, (x*6+4)%8 -> ((x*3+2)%4)*2) and
                      max(x, c) decided by bounds, before the bounds
                      catch-all. */
UOPC_API const uopc_matcher *uopc_rules_fold(void);
UOPC_API const uopc_matcher *uopc_rules_symbolic(void);
UOPC_API const uopc_matcher *uopc_rules_symbolic_seed(void);
UOPC_API const uopc_matcher *uopc_rules_symbolic_strong(void);

/* graph_rewrite(u, symbolic), memoized on the node: the same node gives the
   same result pointer, and a result is its own simplification.  NULL on
   error (recorded in c; NULL u: UOPC_ERR_ARG, unless an error is already
   recorded; a node of another context: UOPC_ERR_ARG).  NULL c: NULL. */
UOPC_API uopc_node *uopc_simplify(uopc_ctx *c, uopc_node *u);
/* graph_rewrite(u, m), memoized per matcher in the context (so a result of
   one rule set never answers for another).  uopc_simplify_with(c, u,
   uopc_rules_symbolic()) is uopc_simplify(c, u). */
UOPC_API uopc_node *uopc_simplify_with(uopc_ctx *c, uopc_node *u, const uopc_matcher *m);

#ifdef __cplusplus
}
#endif
#endif
