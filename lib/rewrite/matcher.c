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

#include "core/ctx.h"
#include "rewrite/rule.h"
#include "rewrite/rw.h"
#include "rewrite/step.h"
#include "uopc/rewrite.h"

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
      free((char *)m->rules[i].info.file);
      free((char *)m->rules[i].info.vars);
    }
  free(m->rules);
  free(m->by_op);
  for (int op = 0; op < UOPC_OP_COUNT; op++) free(m->filt[op]);
  free(m);
}

#define ALL_CLASSES ((UINT64_C(1) << UOPI_NCLS) - 1)

/* The classes of node that can pass step t's own op and literal checks
   (bit cls; never ABSENT). */
static uint64_t class_mask(const uopi_lstep *t) {
  uint64_t m = t->ops & ((UINT64_C(1) << UOPC_OP_COUNT) - 1);
  if ((t->ops >> UOPC_OP_CONST) & 1) {
    if (t->flags & UOPI_P_LIT) {
      double v = t->lit;
      m |= UINT64_C(1) << (UOPC_OP_COUNT + (v == 0 ? 0u : v == 1 ? 1u : v == -1 ? 2u : 3u));
    } else {
      m |= UINT64_C(0xf) << UOPC_OP_COUNT;
    }
  }
  return m;
}

/* The filter path of each step of a variant (-1: the root, or too deep). */
static void step_paths(const uopi_lstep *s, uint32_t n, int *path) {
  path[0] = -1;
  for (uint32_t i = 1; i < n; i++) {
    int pp = s[i].parent == 0 ? -2 : path[s[i].parent];
    if (pp == -2) path[i] = s[i].idx < 3 ? (int)s[i].idx : -1;
    else if (pp >= 0 && pp < 3 && s[i].idx < 2) path[i] = 3 + 2 * pp + s[i].idx;
    else path[i] = -1;
  }
}

/* Adds variant k of a pattern to group g: the classes it accepts at each
   path are ORed into gm (the first variant of a group sets them), the
   equalities it needs ANDed into eqpairs (bit a*9+b: paths a < b hold the
   same name). */
static void filter_variant(uopi_opfilt *f, uint32_t g, const uopc_pattern *p, uint32_t k, int first,
                           uint64_t *gm, uint64_t *eqpairs) {
  const uopi_lstep *s = p->steps + p->lin[k];
  uint32_t n = p->lin[k + 1] - p->lin[k];
  int path[UOPI_PAT_MAX_NODES];
  step_paths(s, n, path);
  uint64_t acc[UOPI_FILT_PATHS];
  for (uint32_t q = 0; q < UOPI_FILT_PATHS; q++) acc[q] = ALL_CLASSES;
  for (uint32_t i = 1; i < n; i++)
    if (path[i] >= 0) {
      acc[path[i]] = class_mask(&s[i]);
      if (path[i] >= 3) f->deep |= UINT64_C(1) << g;
    }
  for (uint32_t q = 0; q < UOPI_FILT_PATHS; q++) gm[q] = first ? acc[q] : gm[q] | acc[q];
  uint64_t pairs[2] = {0, 0};
  for (uint32_t i = 1; i < n; i++)
    for (uint32_t j = i + 1; j < n; j++)
      if (path[i] >= 0 && path[j] >= 0 && s[i].var >= 0 && s[i].var == s[j].var) {
        uint32_t a = (uint32_t)(path[i] < path[j] ? path[i] : path[j]);
        uint32_t b = (uint32_t)(path[i] < path[j] ? path[j] : path[i]);
        uint32_t bitno = a * UOPI_FILT_PATHS + b;
        pairs[bitno / 64] |= UINT64_C(1) << (bitno % 64);
      }
  if (first) eqpairs[0] = pairs[0], eqpairs[1] = pairs[1];
  else eqpairs[0] &= pairs[0], eqpairs[1] &= pairs[1];
}

/* The filter of the rules filed under op.  fine: one group per variant;
   else one per run of variants with the same checks on the root's
   sources.  Leaves *out NULL when it cannot be built.  0: out of memory. */
static int build_filter_mode(const uopc_matcher *m, int op, int fine, uopi_opfilt **out) {
  uint32_t lo = m->start[op], hi = m->start[op + 1];
  *out = NULL;
  uopi_opfilt *f = calloc(1, sizeof *f);
  if (!f) return 0;
  uint64_t geq[UOPI_FILT_MAX][2], gm[UOPI_FILT_MAX][UOPI_FILT_PATHS];
  for (uint32_t i = lo; i < hi; i++) {
    const uopi_mrule *r = m->by_op[i];
    const uopc_pattern *p = r->pat;
    if (!p->lin) goto none;
    uint32_t nroot = p->nodes[0].nsrc;  /* level order: steps 1..nroot are the root's sources */
    for (uint32_t k = 0; k < p->nlin;) {
      const uopi_lstep *a = p->steps + p->lin[k];
      uint32_t k1 = k + 1;
      if (!fine)
        for (; k1 < p->nlin; k1++) {
          const uopi_lstep *b = p->steps + p->lin[k1];
          uint32_t j = 1;
          while (j <= nroot && b[j].ops == a[j].ops && b[j].idx == a[j].idx && b[j].flags == a[j].flags &&
                 memcmp(&b[j].lit, &a[j].lit, sizeof a[j].lit) == 0)
            j++;
          if (j <= nroot) break;
        }
      if (f->ngroups == UOPI_FILT_MAX) goto none;
      uint32_t g = f->ngroups++;
      f->g[g] = (uopi_group){r, (uint16_t)k, (uint16_t)k1, -1, UOPI_NO_EQ, UOPI_NO_EQ};
      if (k1 == k + 1 && p->lin[k + 1] - p->lin[k] == 1 && a[0].dts == UOPI_ALL_DTYPES &&
          !(a[0].flags & (UOPI_P_LIT | UOPI_P_SRC)) && r->need == 0)
        f->g[g].trivial = a[0].var >= 0 ? a[0].var : UOPI_PAT_MAX_VARS;
      for (uint32_t kk = k; kk < k1; kk++) filter_variant(f, g, p, kk, kk == k, gm[g], geq[g]);
      k = k1;
    }
  }
  /* the tables: group g's bit at [path][class] */
  for (uint32_t q = 0; q < UOPI_FILT_PATHS; q++) {
    uint64_t any = 0;  /* the groups that accept every class here */
    for (uint32_t g = 0; g < f->ngroups; g++) {
      if (gm[g][q] == ALL_CLASSES) any |= UINT64_C(1) << g;
      else
        for (uint64_t cm = gm[g][q]; cm; cm &= cm - 1) f->cand[q][__builtin_ctzll(cm)] |= UINT64_C(1) << g;
    }
    for (uint32_t cls = 0; cls < UOPI_NCLS; cls++) f->cand[q][cls] |= any;
  }
  /* each group's first equality (the others are left to the match); free:
     the groups that accept every class at every path and need none */
  f->all = f->ngroups == 64 ? ~UINT64_C(0) : (UINT64_C(1) << f->ngroups) - 1;
  f->free = 0;
  for (uint32_t g = 0; g < f->ngroups; g++) {
    uint32_t bitno = geq[g][0] ? (uint32_t)__builtin_ctzll(geq[g][0])
                   : geq[g][1] ? 64 + (uint32_t)__builtin_ctzll(geq[g][1]) : UINT32_MAX;
    if (bitno != UINT32_MAX) {
      f->g[g].eqa = (uint8_t)(bitno / UOPI_FILT_PATHS);
      f->g[g].eqb = (uint8_t)(bitno % UOPI_FILT_PATHS);
      continue;
    }
    uint32_t q = 0;
    while (q < UOPI_FILT_PATHS && gm[g][q] == ALL_CLASSES) q++;
    if (q == UOPI_FILT_PATHS) f->free |= UINT64_C(1) << g;
  }
  f->pre = 0;  /* the free groups below the first that is not */
  for (uint32_t g = 0; g < f->ngroups && ((f->free >> g) & 1); g++) f->pre |= UINT64_C(1) << g;
  *out = f;
  return 1;
none:
  free(f);
  return 1;
}

static int build_filter(uopc_matcher *m, int op) {
  if (m->start[op] == m->start[op + 1]) return 1;
  uopi_opfilt *f;
  if (!build_filter_mode(m, op, 1, &f)) return 0;
  if (!f && !build_filter_mode(m, op, 0, &f)) return 0;
  m->filt[op] = f;
  return 1;
}

static char *dup(const char *s) {
  size_t len = strlen(s) + 1;
  char *d = malloc(len);
  if (d) memcpy(d, s, len);
  return d;
}

/* 1 when vars ("x, c1, c2") are the pattern's names in order. */
static int vars_match(const uopc_pattern *p, const char *vars) {
  const char *s = vars;
  for (uint32_t k = 0;; k++) {
    while (*s == ' ' || *s == ',') s++;
    const char *e = s;
    while (*e && *e != ',' && *e != ' ') e++;
    if (e == s) return k == p->nvars;
    if (k >= p->nvars || strlen(p->var[k]) != (size_t)(e - s) || memcmp(p->var[k], s, (size_t)(e - s)) != 0) return 0;
    s = e;
  }
}

/* uopc_matcher_new; when from is given, rule i's pattern is a copy of
   from[i]'s (parsed before) instead of parsed from rules[i].pat. */
static uopc_matcher *matcher_build(const uopc_rule *rules, const uopi_mrule *const *from, size_t n, uopc_error *e) {
  if (n && !rules) {
    set_err(e, UOPC_ERR_ARG, 0, "matcher: rules is NULL");
    return NULL;
  }
  if (n > UINT32_MAX / UOPC_OP_COUNT) {
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
    if (from) {
      if (!(r->pat = uopi_pattern_clone(from[i]->pat))) goto oom;
    } else {
      r->pat = uopc_pattern_parse(rules[i].pat, &pe);
    }
    if (!r->pat) {
      if (e) {
        *e = pe;
        snprintf(e->msg, sizeof e->msg, "rule %zu: %.120s (column %d of \"%.60s\")", i, pe.msg, pe.col,
                 rules[i].pat);
      }
      goto fail;
    }
    if ((rules[i].name && !(r->name = dup(rules[i].name))) || (rules[i].file && !(r->info.file = dup(rules[i].file))) ||
        (rules[i].vars && !(r->info.vars = dup(rules[i].vars))))
      goto oom;
    if (rules[i].vars && !vars_match(r->pat, rules[i].vars)) {
      char msg[240];
      snprintf(msg, sizeof msg, "rule %zu (%.40s): its function takes (%.60s), but the pattern binds", i,
               rules[i].name ? rules[i].name : "", rules[i].vars);
      size_t len = strlen(msg);
      for (uint32_t k = 0; k < r->pat->nvars && len + 2 < sizeof msg; k++)
        len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s", k ? ", " : " ", r->pat->var[k]);
      if (!r->pat->nvars) snprintf(msg + len, sizeof msg - len, " nothing");
      set_err(e, UOPC_ERR_ARG, 0, msg);
      goto fail;
    }
    if ((unsigned)rules[i].cls > UOPC_RULE_INEXACT) {
      set_err(e, UOPC_ERR_ARG, 0, "rule with an unknown class");
      goto fail;
    }
    r->info.pat = r->pat->text;
    r->info.fn = rules[i].fn;
    r->info.name = r->name;
    r->info.line = rules[i].line;
    r->info.cls = rules[i].cls;
    r->fn = rules[i].fn;
    r->need = r->pat->need;
    uint64_t ops = r->pat->nodes[0].ops;
    for (int op = 0; op < UOPC_OP_COUNT; op++) m->start[op + 1] += (uint32_t)((ops >> op) & 1);
    filed += (size_t)__builtin_popcountll(ops);
  }
  m->by_op = malloc((filed ? filed : 1) * sizeof *m->by_op);
  if (!m->by_op) goto oom;
  for (int op = 0; op < UOPC_OP_COUNT; op++) m->start[op + 1] += m->start[op];
  uint32_t fill[UOPC_OP_COUNT];
  memcpy(fill, m->start, sizeof fill);
  for (size_t i = 0; i < n; i++) {
    uint64_t ops = m->rules[i].pat->nodes[0].ops;
    for (int op = 0; op < UOPC_OP_COUNT; op++)
      if ((ops >> op) & 1) m->by_op[fill[op]++] = &m->rules[i];
  }
  for (int op = 0; op < UOPC_OP_COUNT; op++)
    if (!build_filter(m, op)) goto oom;
  return m;
oom:
  set_err(e, UOPC_ERR_NOMEM, 0, "out of memory");
fail:
  uopc_matcher_free(m);
  return NULL;
}

uopc_matcher *uopc_matcher_new(const uopc_rule *rules, size_t n, uopc_error *e) {
  return matcher_build(rules, NULL, n, e);
}

uopc_matcher *uopc_matcher_cat(const uopc_matcher *a, const uopc_matcher *b) {
  if (!a || !b) return NULL;
  size_t n = a->n + b->n;
  uopc_rule *rules = malloc((n ? n : 1) * sizeof *rules);
  const uopi_mrule **from = malloc((n ? n : 1) * sizeof *from);
  uopc_matcher *m = NULL;
  if (rules && from) {
    for (size_t i = 0; i < n; i++) {
      const uopi_mrule *r = i < a->n ? &a->rules[i] : &b->rules[i - a->n];
      rules[i] = r->info;
      from[i] = r;
    }
    m = matcher_build(rules, from, n, NULL);  /* copies of parsed patterns: fails only when out of memory */
  }
  free(rules);
  free(from);
  return m;
}

size_t uopc_matcher_size(const uopc_matcher *m) { return m ? m->n : 0; }

const uopc_rule *uopc_matcher_rule(const uopc_matcher *m, size_t i) {
  return m && i < m->n ? &m->rules[i].info : NULL;
}

const char *uopc_matcher_name(const uopc_matcher *m) { return m ? m->name : NULL; }

void uopi_matcher_set_name(uopc_matcher *m, const char *name) { m->name = name; }

const char *uopc_rule_class_name(uopc_rule_class k) {
  switch (k) {
  case UOPC_RULE_EXACT: return "exact";
  case UOPC_RULE_NOWRAP: return "nowrap";
  case UOPC_RULE_INEXACT: return "inexact";
  }
  return NULL;
}

size_t uopc_matcher_count_for(const uopc_matcher *m, uopc_op op) {
  if (!m || (unsigned)op >= UOPC_OP_COUNT) return 0;
  return m->start[op + 1] - m->start[op];
}

/* ---- one rewrite step ---------------------------------------------------- */

void uopi_rw_env_init(uopi_rw_env *env, uopc_ctx *c, const uopc_matcher *m, void *ctx) {
  env->c = c;
  env->m = m;
  env->ctx = ctx;
  env->trace = uopi_trace(c);
  env->trace_fn = c->trace_fn != NULL;
  env->check = uopi_check(c);
}

int uopi_matcher_step(const uopi_rw_env *env, uopc_node *n, uopc_node **out) { return uopi_step(env, n, out); }

uopc_node *uopc_matcher_rewrite(const uopc_matcher *m, uopc_ctx *c, uopc_node *u, void *ctx) {
  if (!c) return NULL;
  if (!uopi_check_node(c, u, "matcher_rewrite")) return NULL;
  if (!m) return uopc_fail(c, UOPC_ERR_ARG, "matcher_rewrite: matcher is NULL");
  uopi_rw_env env;
  uopi_rw_env_init(&env, c, m, ctx);
  uopc_node *out = NULL;
  return uopi_matcher_step(&env, u, &out) > 0 ? out : NULL;
}
