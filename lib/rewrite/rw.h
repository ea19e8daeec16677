/* lib/rewrite/rw.h - what the files of lib/rewrite/ share.
 *
 *   pattern.c        the notation -> a compact pattern tree (uopc_pattern)
 *   match.c          matching a pattern tree against a node (all matches,
 *                    in the seed's order, by backtracking)
 *   matcher.c        rule tables indexed by root op; one rewrite step
 *   graph_rewrite.c  the bottom-up, memoized, iterative engine
 *   trace.c          the trace and debug-check switches of a fired rule
 */
#ifndef UOPI_RW_H
#define UOPI_RW_H

#include "internal.h"

/* Limits of the notation (checked by the parser, with an error). */
#define UOPI_PAT_MAX_SRC 8     /* sub-patterns of one (...) or [...] */
#define UOPI_PAT_MAX_PERM 3    /* sub-patterns of one [...] (n! orders) */
#define UOPI_PAT_MAX_VARS 32   /* names bound by one pattern */
#define UOPI_PAT_MAX_NODES 64  /* parts of one pattern (matching recurses
                                  once per part: this bounds its C stack) */
#define UOPI_PAT_MAX_LEN 4096  /* characters of pattern text */

#define UOPI_ALL_OPS ((UINT64_C(1) << UOPC_NUM_OPS) - 1)
#define UOPI_ALL_DTYPES ((uint8_t)((1u << UOPC_NUM_DTYPES) - 1))

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

struct uopc_pattern {
  uint32_t nnodes, nvars;
  uopi_pnode *nodes;                    /* nnodes, root first */
  char *text;                           /* a copy of the source text */
  char *names;                          /* NUL-separated names */
  const char *var[UOPI_PAT_MAX_VARS];   /* into names */
  uint64_t need;                        /* ops the root's sources must include */
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

/* ---- matchers ----------------------------------------------------------- */

typedef struct uopi_mrule {
  uopc_pattern *pat;    /* owned */
  uopc_rule_fn fn;
  char *name;           /* owned copy of uopc_rule.name, or NULL */
  uint64_t need;        /* = pat->need: early reject by child ops */
} uopi_mrule;

struct uopc_matcher {
  size_t n;
  uopi_mrule *rules;                    /* n, in priority order */
  const uopi_mrule **by_op;             /* rules filed per op, concatenated */
  uint32_t start[UOPC_NUM_OPS + 1];     /* by_op[start[op] .. start[op+1]) */
};

/* What one rewrite call needs besides the node: read once per call. */
typedef struct uopi_rw_env {
  uopc_ctx *c;
  const uopc_matcher *m;
  void *ctx;          /* the user's pointer, given to every rule */
  FILE *trace;        /* uopi_trace(c) */
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

#endif
