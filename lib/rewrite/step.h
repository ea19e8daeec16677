/* lib/rewrite/step.h - one rewrite step (the seed's PatternMatcher.rewrite),
 * inline: the body of uopi_matcher_step (matcher.c), which graph_rewrite's
 * loop runs on every node without the call.
 */
#ifndef UOPI_REWRITE_STEP_H
#define UOPI_REWRITE_STEP_H

#include "core/ctx.h"
#include "rewrite/rw.h"

/* A rule tried by the backtracking search (a pattern with too many variants
   to compile): what uopi_try_binding needs. */
typedef struct uopi_attempt {
  const uopi_rw_env *env;
  const uopi_mrule *rule;
  uopc_node *u;     /* the node matched */
  uopc_node *out;   /* what the rule returned */
} uopi_attempt;

/* 1: the rule fired; -1: it failed (error recorded); 0: next binding. */
static inline int uopi_try_binding(void *ud, uopc_node *const *b) {
  uopi_attempt *a = ud;
  const uopi_rw_env *env = a->env;
  uint64_t fails = uopi_fail_count(env->c);
  uopc_node *r = a->rule->fn(env->c, b, env->ctx);
  if (r && r != a->u) {
    a->out = r;
    return 1;
  }
  if (!r && uopi_fail_count(env->c) != fails) return -1;
  return 0;
}

/* Runs variants k0 .. k1-1 of rule r on n.  1: fired (*res), 0: no,
   -1: the rule failed. */
static inline __attribute__((always_inline)) int uopi_run_variants(const uopi_rw_env *env, const uopi_mrule *r, uint32_t k0, uint32_t k1,
                               uopc_node *n, uopc_node **b, uopc_node **at, uopc_node **res) {
  const uopc_pattern *p = r->pat;
  uopc_ctx *c = env->c;
  for (uint32_t k = k0; k < k1;) {
    int nx = uopi_lin_match(p, k, n, b, at);
    if (nx >= 0) {
      k = (uint32_t)nx;
      continue;
    }
    k++;
    uint64_t fails = c->n_fail;
    uopc_node *x = r->fn(c, b, env->ctx);
    if (x && x != n) {
      *res = x;
      return 1;
    }
    if (!x && c->n_fail != fails) return -1;
  }
  return 0;
}

/* One group of a filter on n: 1 fired (*res), 0 no, -1 the rule failed.
   *last and *root_ok remember the root check of the last rule seen. */
static inline __attribute__((always_inline)) int uopi_run_group(const uopi_rw_env *env, const uopi_group *g, uopc_node *n,
                                                           uopc_node **b, uopc_node **at, uopc_node **res,
                                                           const uopi_mrule **last, int *root_ok) {
  const uopi_mrule *r = g->r;
  if (g->trivial >= 0) {
    /* `$x=(alu)` and the like: the function, at once */
    b[g->trivial] = n;
    uint64_t fails = env->c->n_fail;
    uopc_node *x = r->fn(env->c, b, env->ctx);
    if (x && x != n) {
      *res = x;
      return 1;
    }
    return __builtin_expect(!x && env->c->n_fail != fails, 0) ? -1 : 0;
  }
  if (r != *last) {
    *last = r;
    *root_ok = (n->srcops & r->need) == r->need && uopi_lstep_ok(r->pat->steps, n);
  }
  if (!*root_ok) return 0;
  return uopi_run_variants(env, r, g->k0, g->k1, n, b, at, res);
}

/* The step without a filter (an op whose rules are not all compiled, or
   with more than UOPI_FILT_MAX groups): every rule filed under n's op, in
   order.  Out of line: the built-in sets always have a filter. */
static __attribute__((noinline, unused)) int uopi_step_all(const uopi_rw_env *env, uopc_node *n, uopc_node **out) {
  const uopc_matcher *m = env->m;
  uopc_node *b[UOPI_PAT_MAX_VARS + 1];
  uopc_node *at[UOPI_PAT_MAX_NODES];
  uint64_t have = n->srcops;
  uopc_node *res = NULL;
  const uopi_mrule *r = NULL;
  uint32_t lo = m->start[n->op], hi = m->start[n->op + 1];
  for (uint32_t i = lo; i < hi; i++) {
    r = m->by_op[i];
    if ((have & r->need) != r->need) continue;  /* a needed child op is absent */
    const uopc_pattern *p = r->pat;
    if (p->lin) {
      /* the compiled variants, in the search's order */
      if (!uopi_lstep_ok(p->steps, n)) continue;
      int st = uopi_run_variants(env, r, 0, p->nlin, n, b, at, &res);
      if (st < 0) return -1;
      if (st > 0) goto fired;
    } else {
      for (uint32_t k = 0; k < p->nvars; k++) b[k] = NULL;
      uopi_attempt a = {env, r, n, NULL};
      int st = uopi_pattern_run_search(p, n, b, uopi_try_binding, &a);
      if (st == 0) continue;
      if (st < 0) return -1;
      res = a.out;
      goto fired;
    }
  }
  return 0;
fired:
  if (__builtin_expect(env->check || env->trace || env->trace_fn, 0) && !uopi_rule_fired(env, r, n, res)) return -1;
  *out = res;
  return 1;
}

/* uopi_matcher_step (rw.h), inline: one rewrite step on n.  1 and *out when
   a rule fired, 0 when none applies, -1 on error (recorded in the context). */
static inline __attribute__((always_inline)) int uopi_step(const uopi_rw_env *env, uopc_node *n, uopc_node **out) {
  const uopc_matcher *m = env->m;
  uopc_node *b[UOPI_PAT_MAX_VARS + 1];  /* + 1: where a trivial group binds nothing */
  uopc_node *at[UOPI_PAT_MAX_NODES];
  uopc_node *res = NULL;
  const uopi_mrule *r = NULL;
  const uopi_opfilt *f = m->filt[n->op];
  if (__builtin_expect(f != NULL, 1)) {
    const uopi_mrule *last = NULL;
    int root_ok = 0, st;
    /* groups that check nothing below the root and come first (fold's
       `$x=(alu)`): before the filter, which they do not need */
    for (uint64_t pre = f->pre; pre; pre &= pre - 1)
      if ((st = uopi_run_group(env, &f->g[__builtin_ctzll(pre)], n, b, at, &res, &last, &root_ok)) != 0) {
        if (st < 0) return -1;
        r = f->g[__builtin_ctzll(pre)].r;
        goto fired;
      }
    uopc_node *pn[UOPI_FILT_PATHS];
    uint32_t ns = n->nsrc;
    uopc_node *x0 = ns > 0 ? n->src[0] : NULL, *x1 = ns > 1 ? n->src[1] : NULL, *x2 = ns > 2 ? n->src[2] : NULL;
    pn[0] = x0, pn[1] = x1, pn[2] = x2;
    uint64_t cand = f->all & ~f->pre & f->cand[0][x0 ? uopi_class(x0) : UOPI_CLS_ABSENT] &
                    f->cand[1][x1 ? uopi_class(x1) : UOPI_CLS_ABSENT] &
                    f->cand[2][x2 ? uopi_class(x2) : UOPI_CLS_ABSENT];
    if (cand & f->deep) {
      for (uint32_t j = 0; j < 3; j++) {
        uopc_node *x = pn[j];
        uint32_t xs = x ? x->nsrc : 0;
        uopc_node *y0 = xs > 0 ? x->src[0] : NULL, *y1 = xs > 1 ? x->src[1] : NULL;
        pn[3 + 2 * j] = y0, pn[4 + 2 * j] = y1;
        cand &= f->cand[3 + 2 * j][y0 ? uopi_class(y0) : UOPI_CLS_ABSENT] &
                f->cand[4 + 2 * j][y1 ? uopi_class(y1) : UOPI_CLS_ABSENT];
      }
    } else {
      for (uint32_t q = 3; q < UOPI_FILT_PATHS; q++) pn[q] = NULL;  /* no deep group is left */
    }
    for (; cand; cand &= cand - 1) {
      const uopi_group *g = &f->g[__builtin_ctzll(cand)];
      if (g->eqa != UOPI_NO_EQ && pn[g->eqa] != pn[g->eqb]) continue;
      if ((st = uopi_run_group(env, g, n, b, at, &res, &last, &root_ok)) != 0) {
        if (st < 0) return -1;
        r = g->r;
        goto fired;
      }
    }
    return 0;
  }
  return uopi_step_all(env, n, out);
fired:
  if (__builtin_expect(env->check || env->trace || env->trace_fn, 0) && !uopi_rule_fired(env, r, n, res)) return -1;
  *out = res;
  return 1;
}


#endif
