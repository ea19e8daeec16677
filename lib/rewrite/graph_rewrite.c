/* lib/rewrite/graph_rewrite.c - the engine (seed 2.4).
 *
 * Bottom-up, memoized, iterative rewrite to a fixed point.  The seed's three
 * stages, on an explicit stack of small frames:
 *
 *   stage 0  schedule the sources: the frame keeps a cursor i; the first
 *            source (from i on) without a normal form is pushed, and the
 *            frame resumes at that source when it comes back.  A node is
 *            pushed only when it is reached and not done, so each node is
 *            pushed once per visit and the stack is as deep as the graph,
 *            not as long as its edge list.  The visit order is the seed's:
 *            sources left to right, post-order, which is uopc_toposort's.
 *   stage 1  (all sources done) rebuild the node from its sources' normal
 *            forms (only when one differs), count a step, try the rules;
 *            no rule: done[u] = n; the result m is done: done[u] = done[m];
 *            otherwise the frame becomes stage 2 and m is pushed.
 *   stage 2  m is normalized: done[u] = done[m].
 *
 * `done` is a side table indexed by node id (uopi_table), fresh each call.
 * No recursion: a 1,000,000-deep chain needs a few dozen bytes of C stack.
 */
#include <string.h>

#include "rewrite/rw.h"

typedef struct frame {
  uopc_node *u;      /* the node being rewritten */
  uopc_node *aux;    /* stage 2: the rule's result, being normalized */
  uint32_t i;        /* stage 0: the next source to look at */
  uint8_t stage;     /* 0 or 2 (stage 1 runs when the cursor reaches the end) */
  uint8_t changed;   /* some source's normal form differs from the source */
} frame;

/* uopi_grow through a void * (no type punning of frame ** as void **). */
static int grow(uopc_ctx *c, void *pp, uint32_t *cap, uint32_t need, size_t elem) {
  void *p;
  memcpy(&p, pp, sizeof p);
  if (!uopi_grow(c, &p, cap, need, elem)) return 0;
  memcpy(pp, &p, sizeof p);
  return 1;
}

uopc_node *uopc_graph_rewrite(uopc_ctx *c, uopc_node *root, const uopc_matcher *m, void *ctx,
                              uint64_t max_steps) {
  if (!c) return NULL;
  if (!root || !m) {
    if (!root && uopc_ctx_error(c)) return NULL;  /* a failed constructor: its error stands */
    return uopc_fail(c, UOPC_ERR_ARG, "graph_rewrite: %s is NULL", root ? "matcher" : "root");
  }
  if (max_steps == 0) max_steps = UOPC_MAX_STEPS;
  uopi_rw_env env;
  uopi_rw_env_init(&env, c, m, ctx);
  uopi_table *done = uopi_table_acquire(c);
  if (!done) return NULL;

  const uint32_t *start = m->start;
  frame *stk = NULL;
  uopc_node **tmp = NULL;
  uint32_t cap = 0, tcap = 0, sp = 0;
  uint64_t steps = 0;
  uopc_node *result = NULL;
  if (!grow(c, &stk, &cap, 64, sizeof *stk)) goto out;
  stk[sp++] = (frame){root, NULL, 0, 0, 0};

  while (sp) {
    frame *f = &stk[sp - 1];
    uopc_node *u = f->u;
    if (f->stage == 2) {
      uopc_node *r = uopi_table_get(done, f->aux->id);
      UOPI_ASSERT(r);
      if (!uopi_table_set(c, done, u->id, r)) goto out;
      sp--;
      continue;
    }
    /* stage 0: the next source without a normal form */
    uint32_t i = f->i, ns = u->nsrc;
    for (; i < ns; i++) {
      uopc_node *s = u->src[i];
      uopc_node *r = uopi_table_get(done, s->id);
      if (!r) break;
      f->changed |= r != s;
    }
    if (i < ns) {
      f->i = i;
      if (sp == cap && !grow(c, &stk, &cap, sp + 1, sizeof *stk)) goto out;
      stk[sp++] = (frame){u->src[i], NULL, 0, 0, 0};
      continue;
    }
    /* stage 1 (a rule's result may have finished u meanwhile: seed's skip) */
    if (uopi_table_get(done, u->id)) {
      sp--;
      continue;
    }
    if (++steps > max_steps) {
      uopc_fail(c, UOPC_ERR_REWRITE, "graph_rewrite did not converge (a rule loops?)");
      goto out;
    }
    uopc_node *n = u;
    if (f->changed) {
      if (ns > tcap && !grow(c, &tmp, &tcap, ns, sizeof *tmp)) goto out;
      for (uint32_t j = 0; j < ns; j++) tmp[j] = uopi_table_get(done, u->src[j]->id);
      if (!(n = uopc_replace(c, u, tmp, ns))) goto out;
    }
    uopc_node *r = NULL;
    if (start[n->op] != start[n->op + 1] && uopi_matcher_step(&env, n, &r) < 0) goto out;
    if (r) {
      uopc_node *d = uopi_table_get(done, r->id);
      if (!d) {
        f->stage = 2;
        f->aux = r;
        if (sp == cap && !grow(c, &stk, &cap, sp + 1, sizeof *stk)) goto out;
        stk[sp++] = (frame){r, NULL, 0, 0, 0};
        continue;
      }
      n = d;
    }
    if (!uopi_table_set(c, done, u->id, n)) goto out;
    sp--;
  }
  result = uopi_table_get(done, root->id);
out:
  if (stk) uopc_mem_free(c, stk, cap * sizeof *stk);
  if (tmp) uopc_mem_free(c, tmp, tcap * sizeof *tmp);
  uopi_table_release(c, done);
  return result;
}
