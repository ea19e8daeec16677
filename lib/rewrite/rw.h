/* lib/rewrite/rw.h - what the files of lib/rewrite/ share.
 *
 *   pattern.c        the notation -> a compact pattern tree (uopc_pattern)
 *   match.c          matching a pattern tree against a node (all matches,
 *                    in the seed's order, by backtracking)
 *   matcher.c        rule tables indexed by root op; one rewrite step
 *   step.h           that step, inline (graph_rewrite's loop runs it)
 *   graph_rewrite.c  the bottom-up, memoized, iterative engine
 *   trace.c          the trace and debug-check switches of a fired rule
 */
#ifndef UOPI_RW_H
#define UOPI_RW_H

#include "internal.h"
#include "uopc/rewrite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits of the notation (checked by the parser, with an error). */
#define UOPI_PAT_MAX_SRC 8     /* sub-patterns of one (...) or [...] */
#define UOPI_PAT_MAX_PERM 3    /* sub-patterns of one [...] (n! orders) */
#define UOPI_PAT_MAX_VARS 32   /* names bound by one pattern */
#define UOPI_PAT_MAX_NODES 64  /* parts of one pattern (matching recurses
                                  once per part: this bounds its C stack) */
#define UOPI_PAT_MAX_LEN 4096  /* characters of pattern text */

#define UOPI_ALL_OPS ((UINT64_C(1) << UOPC_OP_COUNT) - 1)
#define UOPI_ALL_DTYPES ((uint8_t)((1u << UOPC_DT_COUNT) - 1))

/* pattern node flags */
#define UOPI_P_SRC 1u     /* sources are given (absent: not looked at) */
#define UOPI_P_PERM 2u    /* [...]: sources in any order */
#define UOPI_P_ANYLEN 4u  /* trailing `...`: more sources allowed */
#define UOPI_P_LIT 8u     /* a CONST whose value == lit */

/* One node of a pattern tree.  Children are indices into the pattern's node
   array; the root is node 0. */
typedef struct uopi_pnode {
  uint64_t ops;     /* allowed ops, bit (1 << op) */
  double lit;       /* the literal, when UOPI_P_LIT */
  uint8_t dts;      /* allowed dtypes, bit (1 << dtype) */
  uint8_t flags;    /* UOPI_P_* */
  uint8_t nsrc;     /* number of sub-patterns */
  int8_t var;       /* binding index, -1: none */
  uint16_t kid[UOPI_PAT_MAX_SRC];
} uopi_pnode;

/* One check of a linear pattern (a pattern with every [...] order fixed):
   the node at `idx` among the sources of step `parent`'s node must pass the
   shallow checks (op, dtype, literal, arity) and bind or compare a name.
   Steps are in level order (the root's sources first, where most attempts
   fail), so a parent's arity is checked before its sources are read. */
typedef struct uopi_lstep {
  uint64_t ops;
  double lit;
  uint8_t dts, flags, nsrc;
  uint8_t parent, idx;   /* step 0 (the root) has none */
  int8_t var;            /* binding index, -1: none */
  uint8_t mode;          /* UOPI_L_* */
  uint8_t next;          /* when this step fails: the next variant whose
                            steps up to this one differ (the ones between
                            would fail here the same way) */
} uopi_lstep;

#define UOPI_L_CHECK 1u  /* shallow checks needed (not `$x` / `_`) */
#define UOPI_L_BIND 2u   /* first appearance of var: store */
#define UOPI_L_SAME 4u   /* var seen before: pointer compare */

/* Compiled patterns are capped (n! orders per [...] multiply); beyond this
   the backtracking search is used. */
#define UOPI_LIN_MAX_VARIANTS 64u
#define UOPI_LIN_MAX_STEPS 1024u

struct uopc_pattern {
  uint32_t nnodes, nvars;
  uopi_pnode *nodes;                    /* nnodes, root first */
  char *text;                           /* a copy of the source text */
  char *names;                          /* NUL-separated names */
  const char *var[UOPI_PAT_MAX_VARS];   /* into names */
  uint64_t need;                        /* ops the root's sources must include */
  /* The pattern compiled to its linear variants, in the order the search
     finds their matches (each variant matches at most one way), or NULL
     (too many: match by search).  lin[k] .. lin[k+1] are variant k's steps;
     step 0 of every variant is the root. */
  uint32_t nlin;
  uint16_t *lin;                        /* nlin + 1 offsets into steps */
  uopi_lstep *steps;
};

/* Called for each match with the bindings (nvars entries).  Returns 0 to ask
   for the next match, anything else to stop (passed back by the run). */
typedef int (*uopi_emit_fn)(void *ud, uopc_node *const *b);

/* Enumerates the matches of p on u in the seed's order (permutations in
   itertools order, sources left to right, backtracking), calling emit for
   each.  b is scratch for p->nvars bindings and must be all NULL; it is all
   NULL again on return.  Returns 0 when every match was emitted, or the
   first non-zero value emit returned. */
UOPI_FUNC int uopi_pattern_run(const uopc_pattern *p, uopc_node *u, uopc_node **b,
                               uopi_emit_fn emit, void *ud);
/* The same by the backtracking search alone (what the compiled variants
   must agree with; for tests). */
UOPI_FUNC int uopi_pattern_run_search(const uopc_pattern *p, uopc_node *u, uopc_node **b,
                                      uopi_emit_fn emit, void *ud);
/* Compiles p's linear variants (p->lin, p->steps); leaves them NULL when
   there are too many.  Returns 0 when out of memory. */
UOPI_FUNC int uopi_pattern_compile(uopc_pattern *p);
/* A copy of a parsed pattern (NULL when out of memory). */
UOPI_FUNC uopc_pattern *uopi_pattern_clone(const uopc_pattern *p);

/* The shallow checks of a step on u: op, dtype, literal value, arity. */
static inline double uopi_const_num(const uopc_node *u) {
  return (u->dtype == UOPC_DT_F32 || u->dtype == UOPC_DT_F16) ? u->arg.f : (double)u->arg.i;
}
static inline int uopi_lstep_ok(const uopi_lstep *s, const uopc_node *u) {
  unsigned fl = s->flags;
  return ((s->ops >> u->op) & 1) && ((s->dts >> u->dtype) & 1) &&
         (!(fl & UOPI_P_LIT) || uopi_const_num(u) == s->lit) &&
         (!(fl & UOPI_P_SRC) || ((fl & UOPI_P_ANYLEN) ? u->nsrc >= s->nsrc : u->nsrc == s->nsrc));
}

/* Steps 1 .. n-1 of variant k on u, whose root step already passed.
   Returns -1 when they all pass, with the bindings in b (every name is
   written; nothing needs clearing between variants), else the variant to
   try next.  at is scratch for n nodes. */
static inline int uopi_lin_match(const uopc_pattern *p, uint32_t k, uopc_node *u, uopc_node **b,
                                 uopc_node **at) {
  const uopi_lstep *s = p->steps + p->lin[k];
  uint32_t n = p->lin[k + 1] - p->lin[k];
  at[0] = u;
  if (s[0].var >= 0) b[s[0].var] = u;
  for (uint32_t i = 1; i < n; i++) {
    const uopi_lstep *t = &s[i];
    uopc_node *x = at[t->parent]->src[t->idx];
    unsigned mode = t->mode;
    if ((mode & UOPI_L_CHECK) && !uopi_lstep_ok(t, x)) return t->next;
    if (mode & UOPI_L_BIND) b[t->var] = x;
    else if ((mode & UOPI_L_SAME) && b[t->var] != x) return t->next;
    at[i] = x;
  }
  return -1;
}

/* ---- matchers ----------------------------------------------------------- */

typedef struct uopi_mrule {
  uopc_pattern *pat;    /* owned */
  uopc_rule_fn fn;
  char *name;           /* owned copy of uopc_rule.name, or NULL */
  uint64_t need;        /* = pat->need: early reject by child ops */
  uopc_rule info;       /* the rule as given, its strings owned (pat: the
                           pattern's copy of its text) */
} uopi_mrule;

/* ---- early reject by the classes of the nodes near the root -------------
 * A node's class is its op, except that a CONST is split by value (0, 1, -1,
 * other) so that literals reject too; ABSENT stands for a source that does
 * not exist.  The filter looks at a few paths below the root: its sources
 * 0, 1, 2 and their sources 0 and 1 (path 3 + 2*j + jj is source jj of
 * source j).  The variants of the rules filed under an op are split into
 * runs (groups, at most UOPI_FILT_MAX, in priority order): group g's bit in
 * cand[path][class] says whether a node of that class at that path can pass
 * some variant of the group (a group with no check there accepts every
 * class); a group also knows two paths that every variant of it needs to
 * hold the same node (a name used twice), when there are such.  A node's candidates are the AND over
 * the paths: usually only the rules that will match are run. */
#define UOPI_CLS_ABSENT (UOPC_OP_COUNT + 4)
#define UOPI_NCLS (UOPC_OP_COUNT + 5)
#define UOPI_FILT_PATHS 9
#define UOPI_FILT_MAX 64

static inline uint32_t uopi_class(const uopc_node *u) {
  if (u->op != UOPC_OP_CONST) return u->op;
  if (u->dtype == UOPC_DT_F32 || u->dtype == UOPC_DT_F16) {
    double v = u->arg.f;
    return UOPC_OP_COUNT + (v == 0 ? 0u : v == 1 ? 1u : v == -1 ? 2u : 3u);
  }
  uint64_t i1 = (uint64_t)u->arg.i + 1; /* -1, 0, 1 -> 0, 1, 2 */
  return UOPC_OP_COUNT + (i1 <= 2 ? (0x12u >> (2 * i1)) & 3u : 3u);
}

typedef struct uopi_group {
  const struct uopi_mrule *r;
  uint16_t k0, k1;                      /* its variants k0 .. k1-1 */
  int8_t trivial;                       /* -1, or the group is one variant that
                                           checks nothing but the root's op:
                                           the root's binding (UOPI_PAT_MAX_VARS:
                                           none) */
  uint8_t eqa, eqb;                     /* two paths every variant needs to
                                           hold the same node (a name used
                                           twice), or UOPI_NO_EQ */
} uopi_group;

#define UOPI_NO_EQ 0xffu

typedef struct uopi_opfilt {
  uint32_t ngroups;
  uint64_t all;                         /* every group */
  uint64_t free;                        /* groups that check no path */
  uint64_t pre;                         /* the free groups before the first that is not */
  uint64_t deep;                        /* groups that check a path at depth 2 */
  uopi_group g[UOPI_FILT_MAX];
  uint64_t cand[UOPI_FILT_PATHS][UOPI_NCLS];
} uopi_opfilt;

struct uopc_matcher {
  const char *name;                     /* NULL, or a static string */
  size_t n;
  uopi_mrule *rules;                    /* n, in priority order */
  const uopi_mrule **by_op;             /* rules filed per op, concatenated */
  uint32_t start[UOPC_OP_COUNT + 1];     /* by_op[start[op] .. start[op+1]) */
  /* per op with rules: the filter, or NULL (a rule not compiled, or more
     than UOPI_FILT_MAX groups): then every rule is tried */
  uopi_opfilt *filt[UOPC_OP_COUNT];
};

/* What one rewrite call needs besides the node: read once per call. */
typedef struct uopi_rw_env {
  uopc_ctx *c;
  const uopc_matcher *m;
  void *ctx;          /* the user's pointer, given to every rule */
  FILE *trace;        /* uopi_trace(c) */
  int trace_fn;       /* a trace callback is set */
  int check;          /* uopi_check(c) */
} uopi_rw_env;

UOPI_FUNC void uopi_rw_env_init(uopi_rw_env *env, uopc_ctx *c, const uopc_matcher *m, void *ctx);

/* One rewrite step on n (the seed's PatternMatcher.rewrite).  Returns 1 and
   sets *out when a rule fired, 0 when none applies, -1 on error (recorded in
   the context). */
UOPI_FUNC int uopi_matcher_step(const uopi_rw_env *env, uopc_node *n, uopc_node **out);

/* A rule fired, turning before into after: the debug check and the trace.
   Returns 0 (error recorded) when the check fails or printing runs out of
   memory. */
UOPI_FUNC int uopi_rule_fired(const uopi_rw_env *env, const uopi_mrule *r,
                              uopc_node *before, uopc_node *after);

/* The name a rule is shown by: its name, else its pattern text. */
static inline const char *uopi_rule_name(const uopi_mrule *r) {
  return r->name ? r->name : r->pat->text;
}

#ifdef __cplusplus
}
#endif

#endif
