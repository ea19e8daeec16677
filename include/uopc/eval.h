/* uopc/eval.h - running programs by rewriting (seed 2.6): the evaluate
 * rules and run().
 */
#ifndef UOPC_EVAL_H
#define UOPC_EVAL_H

#include "uopc/algebra.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The evaluate rules: movement ops and REDUCE on known values, the INDEX
   rules, ALU pushed through STACK, scoped CALL inlining. */
UOPC_API const uopc_matcher *uopc_rules_evaluate(void);
/* symbolic + evaluate. */
UOPC_API const uopc_matcher *uopc_rules_run(void);

/* Each call below: NULL c gives NULL; a NULL node or one of another
   context, NULL with UOPC_ERR_ARG in c (uopc.h, channel 1a). */

/* Beta reduction of one CALL (scoped: never rewrites inside a nested CALL's
   body).  NULL with an error when call is not a CALL. */
UOPC_API uopc_node *uopc_inline_call(uopc_ctx *c, uopc_node *call);

/* graph_rewrite(u, symbolic + evaluate).  The result is a value (CONST or
   STACK tree) for a closed program; see uopc_run_value. */
UOPC_API uopc_node *uopc_run(uopc_ctx *c, uopc_node *u);
/* run, then check the result is a value; NULL with "program did not evaluate
   to a value, stuck at OP" otherwise. */
UOPC_API uopc_node *uopc_run_value(uopc_ctx *c, uopc_node *u);

#ifdef __cplusplus
}
#endif
#endif
