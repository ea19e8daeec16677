/* lib/rewrite/matcher.c - rule tables (the seed's PatternMatcher).
 *
 * A matcher owns its parsed patterns and copies of the rule names, all from
 * malloc: it belongs to no context and is never changed after it is built,
 * so any number of contexts and threads may share it.  Rules are filed under
 * every op their root pattern can match (`*`, `$x` and `_` under all ops),
 * in priority order, as one array sliced by op.
 */
#include <stdlib.h>
#include <string.h>

#include "rewrite/rw.h"

static void set_err(uopc_error *e, uopc_status code, int col, const char *msg) {
  if (!e) return;
  memset(e, 0, sizeof *e);
  e->code = code;
  e->line = col ? 1 : 0;
  e->col = col;
  snprintf(e->msg, sizeof e->msg, "%s", msg);
}

void uopc_matcher_free(uopc_matcher *m) {
  if (!m) return;
  if (m->rules)
    for (size_t i = 0; i < m->n; i++) {
      uopc_pattern_free(m->rules[i].pat);
      free(m->rules[i].name);
    }
  free(m->rules);
  free(m->by_op);
  free(m);
}

uopc_matcher *uopc_matcher_new(const uopc_rule *rules, size_t n, uopc_error *e) {
  if (n && !rules) {
    set_err(e, UOPC_ERR_ARG, 0, "matcher: rules is NULL");
    return NULL;
  }
  if (n > UINT32_MAX / UOPC_NUM_OPS) {
    set_err(e, UOPC_ERR_ARG, 0, "matcher: too many rules");
    return NULL;
  }
  uopc_matcher *m = calloc(1, sizeof *m);
  if (!m) goto oom;
  m->rules = calloc(n ? n : 1, sizeof *m->rules);
  if (!m->rules) goto oom;
  m->n = n;
  size_t filed = 0;
  for (size_t i = 0; i < n; i++) {
    uopi_mrule *r = &m->rules[i];
    if (!rules[i].fn || !rules[i].pat) {
      char msg[64];
      snprintf(msg, sizeof msg, "rule %zu: %s is NULL", i, rules[i].fn ? "pattern" : "function");
      set_err(e, UOPC_ERR_ARG, 0, msg);
      goto fail;
    }
    uopc_error pe;
    r->pat = uopc_pattern_parse(rules[i].pat, &pe);
    if (!r->pat) {
      if (e) {
        *e = pe;
        snprintf(e->msg, sizeof e->msg, "rule %zu: %.120s (column %d of \"%.60s\")", i, pe.msg, pe.col,
                 rules[i].pat);
      }
      goto fail;
    }
    if (rules[i].name) {
      size_t len = strlen(rules[i].name) + 1;
      if (!(r->name = malloc(len))) goto oom;
      memcpy(r->name, rules[i].name, len);
    }
    r->fn = rules[i].fn;
    r->need = r->pat->need;
    uint64_t ops = r->pat->nodes[0].ops;
    for (int op = 0; op < UOPC_NUM_OPS; op++) m->start[op + 1] += (uint32_t)((ops >> op) & 1);
    filed += (size_t)__builtin_popcountll(ops);
  }
  m->by_op = malloc((filed ? filed : 1) * sizeof *m->by_op);
  if (!m->by_op) goto oom;
  for (int op = 0; op < UOPC_NUM_OPS; op++) m->start[op + 1] += m->start[op];
  uint32_t fill[UOPC_NUM_OPS];
  memcpy(fill, m->start, sizeof fill);
  for (size_t i = 0; i < n; i++) {
    uint64_t ops = m->rules[i].pat->nodes[0].ops;
    for (int op = 0; op < UOPC_NUM_OPS; op++)
      if ((ops >> op) & 1) m->by_op[fill[op]++] = &m->rules[i];
  }
  return m;
oom:
  set_err(e, UOPC_ERR_NOMEM, 0, "out of memory");
fail:
  uopc_matcher_free(m);
  return NULL;
}

uopc_matcher *uopc_matcher_cat(const uopc_matcher *a, const uopc_matcher *b) {
  if (!a || !b) return NULL;
  size_t n = a->n + b->n;
  uopc_rule *rules = malloc((n ? n : 1) * sizeof *rules);
  if (!rules) return NULL;
  for (size_t i = 0; i < n; i++) {
    const uopi_mrule *r = i < a->n ? &a->rules[i] : &b->rules[i - a->n];
    rules[i] = (uopc_rule){r->pat->text, r->fn, r->name};
  }
  uopc_matcher *m = uopc_matcher_new(rules, n, NULL);  /* parsed before: fails only when out of memory */
  free(rules);
  return m;
}

size_t uopc_matcher_size(const uopc_matcher *m) { return m ? m->n : 0; }

size_t uopc_matcher_count_for(const uopc_matcher *m, uopc_op op) {
  if (!m || (unsigned)op >= UOPC_NUM_OPS) return 0;
  return m->start[op + 1] - m->start[op];
}

/* ---- one rewrite step ---------------------------------------------------- */

void uopi_rw_env_init(uopi_rw_env *env, uopc_ctx *c, const uopc_matcher *m, void *ctx) {
  env->c = c;
  env->m = m;
  env->ctx = ctx;
  env->trace = uopi_trace(c);
  env->check = uopi_check(c);
}

typedef struct attempt {
  const uopi_rw_env *env;
  const uopi_mrule *rule;
  uopc_node *u;     /* the node matched */
  uopc_node *out;   /* what the rule returned */
} attempt;

/* 1: the rule fired; -1: it failed (error recorded); 0: next binding. */
static int try_binding(void *ud, uopc_node *const *b) {
  attempt *a = ud;
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

int uopi_matcher_step(const uopi_rw_env *env, uopc_node *n, uopc_node **out) {
  const uopc_matcher *m = env->m;
  uint32_t lo = m->start[n->op], hi = m->start[n->op + 1];
  /* bindings: a run leaves them all NULL again, so zero each slot once */
  uopc_node *b[UOPI_PAT_MAX_VARS];
  uint32_t zeroed = 0;
  attempt a = {env, NULL, n, NULL};
  uint64_t have = n->srcops;
  for (uint32_t i = lo; i < hi; i++) {
    const uopi_mrule *r = m->by_op[i];
    if ((have & r->need) != r->need) continue;  /* a needed child op is absent */
    for (; zeroed < r->pat->nvars; zeroed++) b[zeroed] = NULL;
    a.rule = r;
    int st = uopi_pattern_run(r->pat, n, b, try_binding, &a);
    if (st == 0) continue;
    if (st < 0) return -1;
    if ((env->check || env->trace) && !uopi_rule_fired(env, r, n, a.out)) return -1;
    *out = a.out;
    return 1;
  }
  return 0;
}

uopc_node *uopc_matcher_rewrite(const uopc_matcher *m, uopc_ctx *c, uopc_node *u, void *ctx) {
  if (!c) return NULL;
  if (!m || !u) {
    if (!u && uopc_ctx_error(c)) return NULL;  /* a failed constructor: its error stands */
    return uopc_fail(c, UOPC_ERR_ARG, "matcher_rewrite: %s is NULL", m ? "node" : "matcher");
  }
  uopi_rw_env env;
  uopi_rw_env_init(&env, c, m, ctx);
  uopc_node *out = NULL;
  return uopi_matcher_step(&env, u, &out) > 0 ? out : NULL;
}
