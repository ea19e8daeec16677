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
#include "rewrite/rw.h"

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
  return (u->dtype == UOPC_F32 || u->dtype == UOPC_F16) ? u->arg.f : (double)u->arg.i;
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

int uopi_pattern_run(const uopc_pattern *p, uopc_node *u, uopc_node **b, uopi_emit_fn emit, void *ud) {
  mrun r = {p->nodes, b, emit, ud};
  return shallow(p->nodes, u) ? m_node(&r, p->nodes, u, NULL) : 0;
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
