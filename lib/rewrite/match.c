/* lib/rewrite/match.c - matching a pattern tree against a node.
 *
 * The seed's UPat.match returns the list of every binding; the list's order
 * is the order of a depth-first search that tries, for each pattern node,
 * the source orders in itertools.permutations order and the sources left to
 * right.  This is that search.  The cheap checks come first: before a
 * pattern node descends into an order of its sources, every source must
 * pass its sub-pattern's own checks (op, dtype, literal value, arity); then
 * names are bound (an already bound name is a pointer compare) and the rest
 * of the work is handed on as a chain of goals (a continuation), so
 * backtracking needs no allocation.  The recursion is over
 * the pattern (at most UOPI_PAT_MAX_NODES deep), never over the graph.
 */
#include <stdlib.h>
#include <string.h>

#include "rewrite/rw.h"
#include "uopc/rewrite.h"

typedef struct goal {
  const uopi_pnode *p;
  uopc_node *u;
  const struct goal *next;
} goal;

typedef struct mrun {
  const uopi_pnode *nodes;
  uopc_node **b;
  uopi_emit_fn emit;
  void *ud;
} mrun;

/* itertools.permutations(range(n)) for n = 2, 3 */
static const uint8_t perm2[2 * 2] = {0, 1, 1, 0};
static const uint8_t perm3[6 * 3] = {0, 1, 2, 0, 2, 1, 1, 0, 2, 1, 2, 0, 2, 0, 1, 2, 1, 0};

static int m_node(const mrun *r, const uopi_pnode *p, uopc_node *u, const goal *rest);

/* The goals were checked with shallow() when they were made. */
static inline int m_rest(const mrun *r, const goal *g) {
  return g ? m_node(r, g->p, g->u, g->next) : r->emit(r->ud, r->b);
}

/* A CONST's value as a number (the seed's `arg ==`): 0 == 0.0 == -0.0 ==
   False, and a NaN equals nothing. */
static inline double const_num(const uopc_node *u) {
  return (u->dtype == UOPC_DT_F32 || u->dtype == UOPC_DT_F16) ? u->arg.f : (double)u->arg.i;
}

/* The checks on u alone: op, dtype, literal value, arity. */
static inline int shallow(const uopi_pnode *p, const uopc_node *u) {
  unsigned fl = p->flags;
  return ((p->ops >> u->op) & 1) && ((p->dts >> u->dtype) & 1) &&
         (!(fl & UOPI_P_LIT) || const_num(u) == p->lit) &&
         (!(fl & UOPI_P_SRC) || ((fl & UOPI_P_ANYLEN) ? u->nsrc >= p->nsrc : u->nsrc == p->nsrc));
}

/* Called with shallow(p, u) true. */
static int m_node(const mrun *r, const uopi_pnode *p, uopc_node *u, const goal *rest) {
  unsigned fl = p->flags;
  uopc_node *old = NULL;
  if (p->var >= 0) {
    old = r->b[p->var];
    if (old && old != u) return 0;  /* a name binds one node */
    r->b[p->var] = u;
  }
  int ret = 0;
  uint32_t ns = p->nsrc;
  if (ns == 0) {
    ret = m_rest(r, rest);
  } else {
    goal g[UOPI_PAT_MAX_SRC];
    const uint8_t *perm = NULL;
    uint32_t nperm = 1;
    if (fl & UOPI_P_PERM) {
      perm = ns == 2 ? perm2 : perm3;
      nperm = ns == 2 ? 2 : 6;
    }
    for (uint32_t j = 0; j < ns; j++) {
      g[j].u = u->src[j];
      g[j].next = j + 1 < ns ? &g[j + 1] : rest;
    }
    for (uint32_t k = 0; k < nperm && !ret; k++) {
      uint32_t j = 0;
      for (; j < ns; j++) {  /* every source's own checks before descending */
        g[j].p = r->nodes + p->kid[perm ? perm[k * ns + j] : j];
        if (!shallow(g[j].p, g[j].u)) break;
      }
      if (j == ns) ret = m_node(r, g[0].p, g[0].u, g[0].next);
    }
  }
  if (p->var >= 0) r->b[p->var] = old;
  return ret;
}

int uopi_pattern_run_search(const uopc_pattern *p, uopc_node *u, uopc_node **b, uopi_emit_fn emit, void *ud) {
  mrun r = {p->nodes, b, emit, ud};
  return shallow(p->nodes, u) ? m_node(&r, p->nodes, u, NULL) : 0;
}

int uopi_pattern_run(const uopc_pattern *p, uopc_node *u, uopc_node **b, uopi_emit_fn emit, void *ud) {
  if (!p->lin) return uopi_pattern_run_search(p, u, b, emit, ud);
  if (!uopi_lstep_ok(p->steps, u)) return 0;
  uopc_node *at[UOPI_PAT_MAX_NODES];
  int ret = 0;
  for (uint32_t k = 0; k < p->nlin && !ret;) {
    int nx = uopi_lin_match(p, k, u, b, at);
    if (nx >= 0) {
      k = (uint32_t)nx;
    } else {
      ret = emit(ud, b);
      k++;
    }
  }
  for (uint32_t i = 0; i < p->nvars; i++) b[i] = NULL;
  return ret;
}

/* ---- compiling a pattern to its linear variants ---------------------------
 * The search above, run on the pattern instead of a node: at each [...] every
 * order is taken (itertools order), the goals (pattern node, the step whose
 * source it is, which source) are chained as in m_node, and each complete
 * chain is a variant.  So the variants come in the order the search would
 * find their matches, and a variant (no orders left to choose) matches a
 * node in at most one way: running the variants in order gives the search's
 * matches in the search's order. */

typedef struct cgoal {
  uint16_t pn;
  uint8_t parent, idx;
  const struct cgoal *next;
} cgoal;

typedef struct cstate {
  const uopc_pattern *p;
  uopi_lstep seq[UOPI_PAT_MAX_NODES];
  uint32_t len;
  uopi_lstep *steps;
  uint16_t *lin;
  uint32_t nlin, nsteps;
  int over;
} cstate;

static void add_variant(cstate *s) {
  if (s->nlin == UOPI_LIN_MAX_VARIANTS || s->nsteps + s->len > UOPI_LIN_MAX_STEPS) {
    s->over = 1;
    return;
  }
  /* level order: seq is in preorder, where a node's sources follow it in
     source order, so a queue over seq's indices gives it */
  uint32_t order[UOPI_PAT_MAX_NODES], newpos[UOPI_PAT_MAX_NODES], head = 0, tail = 0;
  order[tail++] = 0;
  while (head < tail) {
    uint32_t q = order[head++];
    newpos[q] = head - 1;
    for (uint32_t i = q + 1; i < s->len; i++)
      if (s->seq[i].parent == q) order[tail++] = i;
  }
  uint32_t seen = 0;
  uopi_lstep *out = s->steps + s->nsteps;
  s->lin[s->nlin++] = (uint16_t)s->nsteps;
  for (uint32_t i = 0; i < s->len; i++) {
    uopi_lstep t = s->seq[order[i]];
    if (i) t.parent = (uint8_t)newpos[t.parent];
    if (t.var >= 0) {
      t.mode |= (seen >> t.var) & 1 ? UOPI_L_SAME : UOPI_L_BIND;
      seen |= UINT32_C(1) << t.var;
    }
    out[i] = t;
  }
  s->nsteps += s->len;
  s->lin[s->nlin] = (uint16_t)s->nsteps;
}

static int same_step(const uopi_lstep *a, const uopi_lstep *b) {
  return a->ops == b->ops && memcmp(&a->lit, &b->lit, sizeof a->lit) == 0 && a->dts == b->dts &&
         a->flags == b->flags && a->nsrc == b->nsrc && a->parent == b->parent && a->idx == b->idx &&
         a->var == b->var && a->mode == b->mode;
}

/* step i of variant k fails: every later variant with the same steps 0..i
   fails there too; next is the first that differs. */
static void set_next(cstate *s) {
  for (uint32_t k = 0; k < s->nlin; k++) {
    const uopi_lstep *a = s->steps + s->lin[k];
    uint32_t n = s->lin[k + 1] - s->lin[k];
    /* d[k2]: the first step where variant k2 differs from k */
    uint8_t d[UOPI_LIN_MAX_VARIANTS];
    for (uint32_t k2 = k + 1; k2 < s->nlin; k2++) {
      const uopi_lstep *c = s->steps + s->lin[k2];
      uint32_t m = s->lin[k2 + 1] - s->lin[k2], j = 0;
      while (j < n && j < m && same_step(&a[j], &c[j])) j++;
      d[k2] = (uint8_t)j;
    }
    uint32_t k2;
    for (uint32_t i = 0; i < n; i++) {
      /* the first variant after k whose steps 0..i differ from k's */
      k2 = k + 1;
      while (k2 < s->nlin && d[k2] > i) k2++;
      s->steps[s->lin[k] + i].next = (uint8_t)k2;
    }
  }
}

static void expand(cstate *s, const cgoal *g) {
  if (s->over) return;
  if (!g) {
    add_variant(s);
    return;
  }
  const uopi_pnode *pn = &s->p->nodes[g->pn];
  uint32_t me = s->len++;
  uopi_lstep *t = &s->seq[me];
  t->ops = pn->ops;
  t->lit = pn->lit;
  t->dts = pn->dts;
  t->flags = pn->flags;
  t->nsrc = pn->nsrc;
  t->parent = g->parent;
  t->idx = g->idx;
  t->var = pn->var;
  t->mode = (pn->ops != UOPI_ALL_OPS || pn->dts != UOPI_ALL_DTYPES || (pn->flags & (UOPI_P_LIT | UOPI_P_SRC)))
                ? UOPI_L_CHECK : 0;
  uint32_t ns = pn->nsrc;
  if (ns == 0) {
    expand(s, g->next);
  } else {
    const uint8_t *perm = NULL;
    uint32_t nperm = 1;
    if (pn->flags & UOPI_P_PERM) {
      perm = ns == 2 ? perm2 : perm3;
      nperm = ns == 2 ? 2 : 6;
    }
    for (uint32_t k = 0; k < nperm && !s->over; k++) {
      cgoal kids[UOPI_PAT_MAX_SRC];
      for (uint32_t j = 0; j < ns; j++)
        kids[j] = (cgoal){pn->kid[perm ? perm[k * ns + j] : j], (uint8_t)me, (uint8_t)j,
                          j + 1 < ns ? &kids[j + 1] : g->next};
      expand(s, &kids[0]);
    }
  }
  s->len--;
}

int uopi_pattern_compile(uopc_pattern *p) {
  p->nlin = 0;
  p->lin = NULL;
  p->steps = NULL;
  cstate *s = malloc(sizeof *s);
  uint16_t *lin = malloc((UOPI_LIN_MAX_VARIANTS + 1) * sizeof *lin);
  uopi_lstep *steps = malloc(UOPI_LIN_MAX_STEPS * sizeof *steps);
  if (!s || !lin || !steps) {
    free(s), free(lin), free(steps);
    return 0;
  }
  *s = (cstate){.p = p, .steps = steps, .lin = lin};
  cgoal root = {0, 0, 0, NULL};
  expand(s, &root);
  int ok = 1;
  if (!s->over && s->nlin > 0) {
    set_next(s);
    uopi_lstep *st = realloc(steps, s->nsteps * sizeof *steps);
    uint16_t *ln = realloc(lin, (s->nlin + 1) * sizeof *lin);
    if (st) steps = st;
    if (ln) lin = ln;
    p->steps = steps, p->lin = lin, p->nlin = s->nlin;
    steps = NULL, lin = NULL;
  }
  free(s), free(lin), free(steps);
  return ok;
}

/* ---- uopc_pattern_match: collect every match ----------------------------- */

typedef struct collect {
  uopc_node **out;
  uint32_t max, n, nvars;
} collect;

static int collect_one(void *ud, uopc_node *const *b) {
  collect *k = ud;
  if (k->n < k->max)
    for (uint32_t i = 0; i < k->nvars; i++) k->out[(size_t)k->n * k->nvars + i] = b[i];
  if (k->n < UINT32_MAX) k->n++;
  return 0;
}

uint32_t uopc_pattern_match(const uopc_pattern *p, uopc_node *u, uopc_node **out, uint32_t max) {
  if (!p || !u) return 0;
  uopc_node *b[UOPI_PAT_MAX_VARS] = {0};
  collect k = {out, out ? max : 0, 0, p->nvars};
  uopi_pattern_run(p, u, b, collect_one, &k);
  return k.n;
}
