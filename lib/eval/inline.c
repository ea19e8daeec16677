/* lib/eval/inline.c - CALL inlining is beta reduction (seed 2.6).
 *
 * Scoped: a nested CALL's body (its src[0]) has its own PARAMs, so we never
 * rewrite inside it, and rebuilding a nested CALL keeps its body.  PARAMs
 * are hash consed and shared by every body that uses the slot, so entering a
 * nested body would capture its parameters (the seed's 98-instead-of-72 bug).
 */
#include "internal.h"
#include "uopc/eval.h"

uopc_node *uopc_inline_call(uopc_ctx *c, uopc_node *call) {
  if (!uopi_check_node(c, call, "inline_call")) return NULL;
  if (call->op != UOPC_OP_CALL) return uopc_fail(c, UOPC_ERR_ARG, "inline_call needs a CALL");
  uopc_node *body = call->src[0];
  uint32_t np = 0;
  uopc_node **ps = uopc_call_params(c, body, &np);
  if (!ps && uopc_ctx_error(c)) return NULL;
  uopi_table *map = uopi_table_acquire(c);
  uopc_node *res = NULL;
  uint32_t i = 0;
  if (map) {
    for (; i < np; i++) /* construction checked slot < number of args */
      if (!uopi_table_set(c, map, ps[i]->id, call->src[1 + ps[i]->arg.i])) break;
    if (i == np) res = uopi_rebuild(c, body, map, 1);
    uopi_table_release(c, map);
  }
  uopc_mem_free(c, ps, (size_t)np * sizeof *ps);
  return res;
}
