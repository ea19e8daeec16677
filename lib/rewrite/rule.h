/* lib/rewrite/rule.h - how the library writes its rules: one declaration
 * per rule, with its pattern, the names it binds, what it assumes, and its
 * body beside them, like the seed's `(pattern, lambda x, c1, c2: ...)`:
 *
 *     // (x + c1) + c2 -> x + (c1 + c2): exact under wrapping
 *     RULE(reassoc_add, EXACT, "[add [add $x:i32 #c1] #c2]", x, c1, c2) {
 *       return uopc_add_k(c, x, uopc_wrap_i32(ARG(c1) + ARG(c2)));
 *     }
 *
 * The body is a function of the context `c`, the user's pointer `ctx`, the
 * flag `exact` (1 in the exact rule sets, 0 in the seed's: a NOWRAP rule
 * checks its no-overflow premise only when it is set) and the bindings, by
 * name.  The names must be the pattern's, in the order the pattern first
 * binds them: the matcher checks that when it is built, so a built-in rule
 * with a wrong name aborts the first test that builds its set, never a
 * user's process.  (`c`, `ctx`, `exact` and `b_` cannot be pattern names.)
 * The class (EXACT, NOWRAP, INEXACT: include/uopc/rewrite.h) and the rule's
 * file:line (printed by the trace) are part of the declaration.
 *
 * RULESET(fn, "name", exact, &rule_a, &rule_b, ...) defines
 * `const uopc_matcher *fn(void)`: the rules in that order (rule order is
 * meaning), built once per process.  exact = 1 leaves out INEXACT rules and
 * runs the bodies with exact = 1; exact = 0 is the seed's mode.  Declare fn
 * before (UOPC_API, UOPI_FUNC or static) to give it its linkage.
 */
#ifndef UOPI_REWRITE_RULE_H
#define UOPI_REWRITE_RULE_H

#include <pthread.h>

#include "internal.h"
#include "uopc/rewrite.h"

/* One declared rule (what RULE makes). */
typedef struct uopi_rule_def {
  const char *name;
  const char *pat;
  const char *vars;       /* "x, c1, c2" */
  uopc_rule_class cls;
  const char *file;
  int line;
  uopc_rule_fn exact_fn;  /* the body with exact = 1 */
  uopc_rule_fn seed_fn;   /* the body with exact = 0 */
} uopi_rule_def;

/* The matcher of rules defs[0..n) in the given mode, named `name`.  A bad
   built-in rule (pattern, names) is a bug: it aborts with the message. */
UOPI_FUNC uopc_matcher *uopi_ruleset_build(const uopi_rule_def *const *defs, size_t n, const char *name,
                                           int exact);
/* a's rules then b's, named `name` (aborts when out of memory: built once). */
UOPI_FUNC uopc_matcher *uopi_ruleset_cat(const uopc_matcher *a, const uopc_matcher *b, const char *name);
/* Names a matcher (the string must outlive it). */
UOPI_FUNC void uopi_matcher_set_name(uopc_matcher *m, const char *name);

/* ---- the macros ---------------------------------------------------------- */

#define UOPI_CAT_(a, b) a##b
#define UOPI_CAT(a, b) UOPI_CAT_(a, b)
#define UOPI_NARG(...) UOPI_NARG_(__VA_ARGS__, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define UOPI_NARG_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, n, ...) n

#define UOPI_PARAMS_1(a) uopc_node *a
#define UOPI_PARAMS_2(a, ...) uopc_node *a, UOPI_PARAMS_1(__VA_ARGS__)
#define UOPI_PARAMS_3(a, ...) uopc_node *a, UOPI_PARAMS_2(__VA_ARGS__)
#define UOPI_PARAMS_4(a, ...) uopc_node *a, UOPI_PARAMS_3(__VA_ARGS__)
#define UOPI_PARAMS_5(a, ...) uopc_node *a, UOPI_PARAMS_4(__VA_ARGS__)
#define UOPI_PARAMS_6(a, ...) uopc_node *a, UOPI_PARAMS_5(__VA_ARGS__)
#define UOPI_PARAMS_7(a, ...) uopc_node *a, UOPI_PARAMS_6(__VA_ARGS__)
#define UOPI_PARAMS_8(a, ...) uopc_node *a, UOPI_PARAMS_7(__VA_ARGS__)
#define UOPI_PARAMS_9(a, ...) uopc_node *a, UOPI_PARAMS_8(__VA_ARGS__)
#define UOPI_PARAMS_10(a, ...) uopc_node *a, UOPI_PARAMS_9(__VA_ARGS__)
#define UOPI_ARGS_1 b_[0]
#define UOPI_ARGS_2 UOPI_ARGS_1, b_[1]
#define UOPI_ARGS_3 UOPI_ARGS_2, b_[2]
#define UOPI_ARGS_4 UOPI_ARGS_3, b_[3]
#define UOPI_ARGS_5 UOPI_ARGS_4, b_[4]
#define UOPI_ARGS_6 UOPI_ARGS_5, b_[5]
#define UOPI_ARGS_7 UOPI_ARGS_6, b_[6]
#define UOPI_ARGS_8 UOPI_ARGS_7, b_[7]
#define UOPI_ARGS_9 UOPI_ARGS_8, b_[8]
#define UOPI_ARGS_10 UOPI_ARGS_9, b_[9]

#define RULE(name, cls, pat, ...) UOPI_RULE_(static, name, cls, pat, __VA_ARGS__)
/* A rule other files list too: declare it with UOPI_RULE_DECL(name) in a
   header (`rule_NAME` then has hidden external linkage). */
#define RULE_SHARED(name, cls, pat, ...) UOPI_RULE_(__attribute__((visibility("hidden"))), name, cls, pat, __VA_ARGS__)
#define UOPI_RULE_DECL(name) UOPI_FUNC const uopi_rule_def rule_##name

#define UOPI_RULE_(storage, name, cls, pat, ...)                                                    \
  static uopc_node *name##_body(uopc_ctx *c, void *ctx, int exact,                                  \
                                UOPI_CAT(UOPI_PARAMS_, UOPI_NARG(__VA_ARGS__))(__VA_ARGS__));       \
  static uopc_node *name##_exact(uopc_ctx *c, uopc_node *const *b_, void *ctx) {                    \
    return name##_body(c, ctx, 1, UOPI_CAT(UOPI_ARGS_, UOPI_NARG(__VA_ARGS__)));                    \
  }                                                                                                 \
  static uopc_node *name##_seed(uopc_ctx *c, uopc_node *const *b_, void *ctx) {                     \
    return name##_body(c, ctx, 0, UOPI_CAT(UOPI_ARGS_, UOPI_NARG(__VA_ARGS__)));                    \
  }                                                                                                 \
  storage const uopi_rule_def rule_##name = {#name,    pat,      #__VA_ARGS__, UOPC_RULE_##cls,      \
                                             __FILE__, __LINE__, name##_exact, name##_seed};        \
  static uopc_node *name##_body(uopc_ctx *c, void *ctx, int exact,                                  \
                                UOPI_CAT(UOPI_PARAMS_, UOPI_NARG(__VA_ARGS__))(__VA_ARGS__))

#define RULESET(fn, setname, exact, ...)                                                            \
  static const uopi_rule_def *const fn##_defs_[] = {__VA_ARGS__};                                   \
  static pthread_once_t fn##_once_ = PTHREAD_ONCE_INIT;                                             \
  static uopc_matcher *fn##_m_;                                                                     \
  static void fn##_build_(void) {                                                                   \
    fn##_m_ = uopi_ruleset_build(fn##_defs_, sizeof fn##_defs_ / sizeof fn##_defs_[0], setname, exact); \
  }                                                                                                 \
  const uopc_matcher *fn(void) {                                                                    \
    pthread_once(&fn##_once_, fn##_build_);                                                         \
    return fn##_m_;                                                                                 \
  }

/* fn = a's rules then b's (the seed's a + b), built once. */
#define RULESET_CAT(fn, setname, a, b)                                                              \
  static pthread_once_t fn##_once_ = PTHREAD_ONCE_INIT;                                             \
  static uopc_matcher *fn##_m_;                                                                     \
  static void fn##_build_(void) { fn##_m_ = uopi_ruleset_cat(a(), b(), setname); }                  \
  const uopc_matcher *fn(void) {                                                                    \
    pthread_once(&fn##_once_, fn##_build_);                                                         \
    return fn##_m_;                                                                                 \
  }

/* Shorthands of rule bodies. */
#define K(x, v) uopc_full_like(c, (x), (double)(v)) /* a constant of x's dtype and shape */
#define IS_CONST(u) ((u)->op == UOPC_OP_CONST)
#define ARG(u) ((u)->arg.i)

#endif
