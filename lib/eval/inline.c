/* lib/eval/inline.c - CALL inlining is beta reduction (seed 2.6).
 *
 * Scoped: a nested CALL's body (its src[0]) has its own PARAMs, so we never
 * rewrite inside it, and rebuilding a nested CALL keeps its body.  PARAMs
 * are hash consed and shared by every body that uses the slot, so entering a
 * nested body would capture its parameters (the seed's 98-instead-of-72 bug).
 */
#include "internal.h"

typedef struct fr {
  uopc_node *u;
  uint32_t next;
} fr;

uopc_node *uopc_inline_call(uopc_ctx *c, uopc_node *call) {
  if (!call || call->op != UOPC_CALL) return uopc_fail(c, UOPC_ERR_ARG, "inline_call needs a CALL");
  uopc_node *body = call->src[0];
  uint32_t np = 0;
  uopc_node **ps = uopc_call_params(c, body, &np);
  if (!ps && uopc_ctx_error(c)) return NULL;
  uopi_table *map = uopi_table_acquire(c);
  fr *st = NULL;
  uopc_node **buf = NULL;
  uint32_t cap = 0, sp = 0, bcap = 0;
  uopc_node *res = NULL;
  if (!map) goto out;
  for (uint32_t i = 0; i < np; i++) /* construction checked slot < number of args */
    if (!uopi_table_set(c, map, ps[i]->id, call->src[1 + ps[i]->arg.i])) goto out;
  if (!uopi_grow(c, (void **)&st, &cap, 16, sizeof *st)) goto out;
  if (!uopi_table_get(map, body->id)) st[sp++] = (fr){body, 0};
  while (sp) {
    fr *f = &st[sp - 1];
    uopc_node *u = f->u;
    if (f->next == 0 && u->op == UOPC_CALL) f->next = 1; /* its body is another scope */
    if (f->next < u->nsrc) {
      uopc_node *s = u->src[f->next++];
      if (uopi_table_get(map, s->id)) continue;
      if (!uopi_grow(c, (void **)&st, &cap, sp + 1, sizeof *st)) goto out;
      st[sp++] = (fr){s, 0};
      continue;
    }
    sp--;
    if (!uopi_grow(c, (void **)&buf, &bcap, u->nsrc + 1, sizeof *buf)) goto out;
    for (uint32_t j = 0; j < u->nsrc; j++) {
      uopc_node *m = (u->op == UOPC_CALL && j == 0) ? NULL : uopi_table_get(map, u->src[j]->id);
      buf[j] = m ? m : u->src[j];
    }
    uopc_node *r = uopc_replace(c, u, buf, u->nsrc);
    if (!r || !uopi_table_set(c, map, u->id, r)) goto out;
  }
  res = uopi_table_get(map, body->id);
out:
  uopc_mem_free(c, buf, (size_t)bcap * sizeof *buf);
  uopc_mem_free(c, st, (size_t)cap * sizeof *st);
  uopi_table_release(c, map);
  uopc_mem_free(c, ps, (size_t)np * sizeof *ps);
  return res;
}
