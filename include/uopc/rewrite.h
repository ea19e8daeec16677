/* uopc/rewrite.h - patterns, pattern matchers and graph_rewrite.
 *
 * A rule is a pattern written in a small notation, a C function, and a name:
 *
 *     { "(add $x 0)",              r_keep_x, "x+0 -> x" },
 *     { "[mul $x:i32|bool 0]",     r_zero,   "x*0 -> 0" },
 *     { "$u=(add (add $x:i32 #c1) #c2)", r_reassoc, "(x+c1)+c2" },
 *
 * The notation (parsed once, when the matcher is built):
 *
 *   (OPS SRC...)      a node whose op is in OPS, sources matched in order;
 *                     a trailing `...` lets the node have more sources than
 *                     listed (the seed's allow_any_len)
 *   [OPS SRC...]      sources matched in any order (every permutation, the
 *                     seed's list sources; for commutative ops)
 *   (OPS)             a node with that op, sources not looked at
 *   OPS               op names joined by `|` (`add|mul`), `*` for any op, or
 *                     `alu` for every ALU op; optionally `:DTYPES`
 *   $x  $x:DTYPES     any node, bound to x (UPat.var)
 *   #c  #c:DTYPES     any CONST, bound to c (UPat.cvar)
 *   _   _:DTYPES      any node, not bound
 *   $u=PAT            PAT, and the node it matched is bound to u
 *   LITERAL           a CONST whose value equals the literal as a number,
 *                     like the seed's `arg ==`: 0 matches 0, 0.0, -0.0 and
 *                     False; 1 matches True.  `True`/`False` are 1/0.
 *                     `LITERAL:DTYPES` also constrains the dtype.
 *   DTYPES            dtype names joined by `|`: `i32|bool`
 *
 * A name used twice must bind the same node (pointer equality).  Bindings
 * reach the rule function in an array, in order of each name's first
 * appearance in the pattern text.
 */
#ifndef UOPC_REWRITE_H
#define UOPC_REWRITE_H

#include <stdio.h>

#include "uopc/uop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A rule function.  b holds the bindings (see above); ctx is the pointer
   given to uopc_graph_rewrite (every rule receives it; rules that need no
   context ignore it).  Returns the replacement, or NULL to decline.  To fail
   the whole rewrite, record an error with uopc_fail and return NULL.
   Returning the matched node itself counts as declining. */
typedef uopc_node *(*uopc_rule_fn)(uopc_ctx *c, uopc_node *const *b, void *ctx);

/* What a rule assumes (docs/rewrite.md, "Exactness"):
 *   EXACT    equal values for every input in the spec's arithmetic (i32
 *            wraps, floats round), undefined inputs aside (a rule may turn
 *            an undefined value into a defined one, never the reverse);
 *   NOWRAP   exact only when no i32 value of the matched subexpression,
 *            before or after the rewrite, wraps: in the exact rule sets the
 *            rule checks that premise with bounds and declines otherwise;
 *            in the seed's set it trusts it (seed chapter 3.5);
 *   INEXACT  not exact for some float inputs (the seed's x + 0.0 -> x on
 *            -0.0): only in the seed's set. */
typedef enum uopc_rule_class {
  UOPC_RULE_EXACT = 0,
  UOPC_RULE_NOWRAP = 1,
  UOPC_RULE_INEXACT = 2,
} uopc_rule_class;

/* "exact", "nowrap", "inexact" (NULL for an unknown class). */
UOPC_API const char *uopc_rule_class_name(uopc_rule_class k);

typedef struct uopc_rule {
  const char *pat;   /* pattern text */
  uopc_rule_fn fn;
  const char *name;  /* shown by the trace; NULL: the pattern text */
  /* Optional (zero when not given): */
  const char *file;  /* where the rule is written (the trace prints FILE:LINE) */
  int line;
  uopc_rule_class cls;
  const char *vars;  /* the names fn reads, comma separated, in the order of
                        b[]: checked against the pattern's names when the
                        matcher is built (NULL: not checked) */
} uopc_rule;

/* ---- patterns ----------------------------------------------------------- */

typedef struct uopc_pattern uopc_pattern;

/* Parses one pattern.  On error returns NULL and fills *e (col = offset+1
   in src, line = 1; NULL src: UOPC_ERR_ARG).  Free with uopc_pattern_free
   (NULL is a no-op). */
UOPC_API uopc_pattern *uopc_pattern_parse(const char *src, uopc_error *e);
UOPC_API void uopc_pattern_free(uopc_pattern *p);
/* Number of names the pattern binds (0 for NULL p), and the i-th name
   (NULL for NULL p or i out of range; owned by p). */
UOPC_API uint32_t uopc_pattern_nvars(const uopc_pattern *p);
UOPC_API const char *uopc_pattern_var(const uopc_pattern *p, uint32_t i);
/* The parts of a parsed pattern, for tools that read patterns (uopc
   check-rules builds random instances of each rule's pattern from them).
   Part 0 is the root; a part's sub-patterns are parts too. */
typedef struct uopc_pattern_part {
  uint64_t ops;        /* the ops it allows, bit (1 << op) */
  uint32_t dtypes;     /* the dtypes it allows, bit (1 << dtype) */
  int var;             /* the name it binds (index for uopc_pattern_var), or -1 */
  int has_lit;         /* a CONST whose value equals lit */
  double lit;
  int has_src;         /* sources given: (...) or [...] */
  int any_order;       /* [...]: sources in any order */
  int any_len;         /* a trailing `...`: more sources allowed */
  uint32_t nsrc;       /* sub-patterns, as part indices in src[] */
  uint32_t src[8];
} uopc_pattern_part;

/* Number of parts of p (0 for NULL). */
UOPC_API uint32_t uopc_pattern_nparts(const uopc_pattern *p);
/* Writes part i of p into *out; UOPC_ERR_ARG when p or out is NULL or i is
   out of range. */
UOPC_API uopc_status uopc_pattern_part_get(const uopc_pattern *p, uint32_t i, uopc_pattern_part *out);

/* Every way p matches u (the seed's UPat.match): writes up to max matches,
   each nvars bindings, into out[k*nvars + i].  Returns the total number of
   matches (which may exceed max).  0 for NULL p or u; out may be NULL only
   when max is 0. */
UOPC_API uint32_t uopc_pattern_match(const uopc_pattern *p, uopc_node *u, uopc_node **out, uint32_t max);

/* ---- matchers ----------------------------------------------------------- */

typedef struct uopc_matcher uopc_matcher;

/* Builds a matcher from n ordered rules (rule order is priority).  Patterns
   are parsed here; on a bad pattern returns NULL and fills *e with the
   rule's index in msg.  Matchers do not belong to a context: one matcher
   may serve every context and thread.  Free with uopc_matcher_free (NULL:
   no-op).  rules NULL with n > 0, a rule without pattern or function:
   UOPC_ERR_ARG. */
UOPC_API uopc_matcher *uopc_matcher_new(const uopc_rule *rules, size_t n, uopc_error *e);
/* A new matcher with a's rules, then b's (the seed's a + b); NULL when a or
   b is NULL or out of memory. */
UOPC_API uopc_matcher *uopc_matcher_cat(const uopc_matcher *a, const uopc_matcher *b);
UOPC_API void uopc_matcher_free(uopc_matcher *m);
/* Number of rules (0 for NULL). */
UOPC_API size_t uopc_matcher_size(const uopc_matcher *m);
/* Number of rules filed under op (the seed's by_op); 0 for NULL m or an
   unknown op. */
UOPC_API size_t uopc_matcher_count_for(const uopc_matcher *m, uopc_op op);

/* Rule i of the matcher, in priority order (NULL when i is out of range).
   The strings belong to the matcher. */
UOPC_API const uopc_rule *uopc_matcher_rule(const uopc_matcher *m, size_t i);
/* The matcher's name (the built-in sets: "symbolic", "symbolic_seed", ...;
   NULL for a matcher built by uopc_matcher_new, and for NULL m). */
UOPC_API const char *uopc_matcher_name(const uopc_matcher *m);

/* One rewrite step on u (the seed's PatternMatcher.rewrite): the first rule,
   in order, whose pattern matches and whose function returns a node other
   than u.  NULL when none applies (or on error: check uopc_ctx_error;
   NULL m, NULL or foreign u: UOPC_ERR_ARG). */
UOPC_API uopc_node *uopc_matcher_rewrite(const uopc_matcher *m, uopc_ctx *c, uopc_node *u, void *ctx);

/* ---- graph_rewrite ------------------------------------------------------ */

/* How long graph_rewrite may run before it calls a rewrite a loop.  Two
   limits, either of which stops it with UOPC_ERR_REWRITE and a message that
   names the limit:
     steps     rule steps (a node processed, or a rule's result rewritten
               again): at most max(min_steps, steps_per_node * N), where N is
               the number of nodes of the input visited plus the nodes the
               rules created, so the limit grows with the real work;
     chain     how many times in a row one node's result was rewritten again
               (a rule that loops grows exactly this).
   Defaults: steps_per_node 100, min_steps 10^7, max_chain 10^5.  A new
   context reads UOPC_REWRITE_STEPS_PER_NODE, UOPC_REWRITE_MIN_STEPS and
   UOPC_REWRITE_CHAIN (positive decimal integers; anything else is ignored
   and the default kept). */
typedef struct uopc_rewrite_limits {
  uint64_t steps_per_node;
  uint64_t min_steps;
  uint64_t max_chain;
} uopc_rewrite_limits;

#define UOPC_LIMIT_STEPS_PER_NODE 100u
#define UOPC_LIMIT_STEPS 10000000u
#define UOPC_LIMIT_CHAIN 100000u

/* Sets the limits of c (a zero field keeps its current value).  NULL c or
   lim: no-op. */
UOPC_API void uopc_ctx_set_rewrite_limits(uopc_ctx *c, const uopc_rewrite_limits *lim);
/* The limits of c (the defaults for a NULL c). */
UOPC_API uopc_rewrite_limits uopc_ctx_rewrite_limits(const uopc_ctx *c);

/* Bottom-up, memoized, iterative rewrite to a fixed point (seed 2.4):
   sources are rewritten before their users, a rule's result is rewritten
   again, each node is processed once.  max_steps 0 means the context's
   limits (above); a non-zero max_steps is a fixed cap on the steps instead
   (the chain limit still applies).  Returns the normal form of root, or
   NULL with the context's error set ("graph_rewrite did not converge: ..."
   when a limit was hit, or the error a rule or constructor recorded;
   UOPC_ERR_ARG for a NULL or foreign root or a NULL m). */
UOPC_API uopc_node *uopc_graph_rewrite(uopc_ctx *c, uopc_node *root, const uopc_matcher *m,
                                       void *ctx, uint64_t max_steps);

/* Trace: when set, every rule that fires is printed to f as
   `FILE:LINE NAME: BEFORE -> AFTER` (each side in uopc_show form; FILE is
   relative to the repository; `NAME: BEFORE -> AFTER` for a rule that
   does not say where it is written).  NULL turns it
   off.  A new context starts with stderr when the environment variable
   UOPC_DEBUG contains "rewrite".  NULL c: no-op. */
UOPC_API void uopc_ctx_set_trace(uopc_ctx *c, FILE *f);
/* A trace callback, for tools that record rewrites (uopc viz): called for
   every graph_rewrite call that starts (BEGIN: before = the root, set = the
   matcher's name) and ends (END: after = the result, NULL on error), and for
   every rule that fires (RULE: the rule, before -> after), in order; calls
   nest when a rule runs graph_rewrite itself (depth).  The nodes belong to
   the context; the event is valid during the call only. */
typedef enum uopc_trace_kind { UOPC_TRACE_BEGIN, UOPC_TRACE_RULE, UOPC_TRACE_END } uopc_trace_kind;
typedef struct uopc_trace_event {
  uopc_trace_kind kind;
  const char *set;          /* the matcher's name (uopc_matcher_name), or NULL */
  const uopc_rule *rule;    /* RULE: the rule that fired (name, pattern, file, line, class) */
  uopc_node *before, *after;
  uint32_t depth;           /* nesting of graph_rewrite calls, 0 outermost */
} uopc_trace_event;
typedef void (*uopc_trace_fn)(void *ud, const uopc_trace_event *ev);
/* Sets (or with fn NULL, clears) c's trace callback.  It runs besides the
   text trace.  NULL c: no-op. */
UOPC_API void uopc_ctx_set_trace_fn(uopc_ctx *c, uopc_trace_fn fn, void *ud);

/* Debug check: when on, a rule whose result differs in dtype or shape from
   the node it replaces fails the rewrite with an error naming the rule.
   A new context starts with it on when UOPC_DEBUG contains "check".  NULL c:
   no-op. */
UOPC_API void uopc_ctx_set_check(uopc_ctx *c, int on);

#ifdef __cplusplus
}
#endif
#endif
