/* lib/algebra/symbolic.c - the symbolic rule set (seed 3.5), in the seed's
 * order: fold, canonical form, identities, int-only reassociation,
 * distribution, div/mod, recombination, comparisons, and the bounds
 * catch-all last.  Rule order is meaning: keep it.
 *
 * Fixes to the seed (docs/semantics.md, "Rule set"):
 *   - MAX is swapped into canonical form only for i32 and bool (Python's max
 *     is not commutative on NaN and on -0.0/0.0).
 *   - every constant a rule builds is wrapped to i32, or the rule declines
 *     when the constant does not fit;
 *   - (x % c1) % c2 and (x//c)*c + x%c need c1, c != 0 (the seed turned an
 *     undefined x % 0 into a defined value); (x % c1) // c2 needs c1 > 0
 *     (the seed's rule is wrong for negative c1: x=1, c1=-12, c2=4).
 *   - _split_terms/_divides walk sums with a loop, not recursion.
 */
#include <stdint.h>

#include "algebra/rules.h"

static int fits_i32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }
static int64_t fdiv64(int64_t a, int64_t b) { /* Python a // b, b != 0 */
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static int64_t fmod64(int64_t a, int64_t b) { return a - fdiv64(a, b) * b; }

/* ---- canonical form and identities ---- */

RULE(r_canon) { /* c op y -> y op c, for commutative ops, when y is not a constant */
  uopc_node *u = b[0], *k = b[1], *y = b[2];
  if (IS_CONST(y)) return NULL;
  if (u->op == UOPC_OP_MAX && uopc_dtype_is_float((uopc_dtype)u->dtype)) return NULL;
  uopc_node *s[2] = {y, k};
  return uopc_replace(c, u, s, 2);
}
RULE(r_x) { return b[0]; }
RULE(r_zero) { return K(b[0], 0); }
RULE(r_where_const) { return ARG(b[0]) ? b[1] : b[2]; }
RULE(r_where_zxy) { return uopc_where(c, b[0], b[1], b[2]); }
RULE(r_cast_same) { return b[0]->dtype == b[1]->dtype ? b[1] : NULL; }
RULE(r_false) { return K(b[0], 0); }
RULE(r_twice) { return uopc_mul_k(c, b[0], 2); }

/* ---- reassociation and distribution (i32 only) ---- */

RULE(r_add_cc) { return uopc_add_k(c, b[0], uopc_wrap_i32(ARG(b[1]) + ARG(b[2]))); }
RULE(r_mul_cc) { return uopc_mul_k(c, b[0], uopc_wrap_i32(ARG(b[1]) * ARG(b[2]))); }
RULE(r_addmul_cc) { /* (x + c1) * c2 -> x*c2 + c1*c2 */
  return uopc_add_k(c, uopc_mul(c, b[0], b[2]), uopc_wrap_i32(ARG(b[1]) * ARG(b[2])));
}
RULE(r_distribute) { /* (x + y) * c -> x*c + y*c; b: s x y c */
  return uopc_add(c, uopc_mul(c, b[1], b[3]), uopc_mul(c, b[2], b[3]));
}
RULE(r_const_out) { /* (x + c1) + y -> (x + y) + c1 */
  if (IS_CONST(b[2])) return NULL;
  return uopc_add(c, uopc_add(c, b[0], b[2]), b[1]);
}
RULE(r_terms_cc) { return uopc_mul_k(c, b[0], uopc_wrap_i32(ARG(b[1]) + ARG(b[2]))); }
RULE(r_terms_c1) { return uopc_mul_k(c, b[0], uopc_wrap_i32(ARG(b[1]) + 1)); }

/* ---- division and modulo ---- */

RULE(r_divdiv) {
  int64_t c1 = ARG(b[1]), c2 = ARG(b[2]);
  if (c1 <= 0 || c2 <= 0 || c1 * c2 > INT32_MAX) return NULL;
  return uopc_idiv_k(c, b[0], (double)(c1 * c2));
}
RULE(r_modmod) {
  int64_t c1 = ARG(b[1]), c2 = ARG(b[2]);
  if (c1 == 0 || c2 <= 0 || fmod64(c1, c2) != 0) return NULL;
  return uopc_mod(c, b[0], b[2]);
}
RULE(r_moddiv) { /* (x % c1) // c2 -> (x // c2) % (c1 // c2) */
  int64_t c1 = ARG(b[1]), c2 = ARG(b[2]);
  if (c1 <= 0 || c2 <= 0 || c1 % c2 != 0) return NULL;
  return uopc_mod_k(c, uopc_idiv(c, b[0], b[2]), (double)(c1 / c2));
}

/* u / k when u is a visible multiple of k (a constant, or a product with a
   constant): the seed's _divides on one term.  NULL when it is not. */
static uopc_node *divides(uopc_ctx *c, uopc_node *u, int64_t k) {
  if (IS_CONST(u)) return fmod64(ARG(u), k) == 0 ? K(u, fdiv64(ARG(u), k)) : NULL;
  if (u->op == UOPC_OP_MUL && IS_CONST(u->src[1]))
    return fmod64(ARG(u->src[1]), k) == 0 ? uopc_mul_k(c, u->src[0], (double)fdiv64(ARG(u->src[1]), k)) : NULL;
  return NULL;
}

static int is_divisible(const uopc_node *u, int64_t k) {
  if (u->op == UOPC_OP_CONST) return fmod64(u->arg.i, k) == 0;
  return u->op == UOPC_OP_MUL && u->src[1]->op == UOPC_OP_CONST && fmod64(u->src[1]->arg.i, k) == 0;
}

/* The terms of a sum, left to right (the seed's _split_terms), iteratively. */
static uopc_node **split_terms(uopc_ctx *c, uopc_node *x, uint32_t *n, uint32_t *cap) {
  uopc_node **out = NULL, **stack = NULL;
  uint32_t scap = 0, sp = 0;
  *n = 0, *cap = 0;
  if (!uopi_grow(c, (void **)&stack, &scap, 16, sizeof *stack)) return NULL;
  stack[sp++] = x;
  while (sp) {
    uopc_node *u = stack[--sp];
    if (u->op == UOPC_OP_ADD) {
      if (!uopi_grow(c, (void **)&stack, &scap, sp + 2, sizeof *stack)) goto fail;
      stack[sp++] = u->src[1];
      stack[sp++] = u->src[0];
      continue;
    }
    if (!uopi_grow(c, (void **)&out, cap, *n + 1, sizeof *out)) goto fail;
    out[(*n)++] = u;
  }
  uopc_mem_free(c, stack, (size_t)scap * sizeof *stack);
  return out;
fail:
  uopc_mem_free(c, stack, (size_t)scap * sizeof *stack);
  uopc_mem_free(c, out, (size_t)*cap * sizeof *out);
  return NULL;
}

/* split_terms into buf (cap entries) without allocating: the number of
   terms, or -1 when they (or the walk) do not fit. */
static int split_terms_small(uopc_node *x, uopc_node **buf, uint32_t cap) {
  uopc_node *stack[64];
  uint32_t sp = 0, n = 0;
  stack[sp++] = x;
  while (sp) {
    uopc_node *u = stack[--sp];
    if (u->op == UOPC_OP_ADD) {
      if (sp + 2 > sizeof stack / sizeof stack[0]) return -1;
      stack[sp++] = u->src[1];
      stack[sp++] = u->src[0];
      continue;
    }
    if (n == cap) return -1;
    buf[n++] = u;
  }
  return (int)n;
}

/* (a*c + b) // c == a + b//c  and  (a*c + b) % c == b % c (floor division). */
static uopc_node *div_sum(uopc_ctx *c, uopc_node *x, uopc_node *k, int mod) {
  int64_t kv = ARG(k);
  if (kv <= 0) return NULL;
  uopc_node *small[32];
  uint32_t n, cap = 0;
  int ns = split_terms_small(x, small, sizeof small / sizeof small[0]);
  uopc_node **t = small;
  if (ns >= 0) n = (uint32_t)ns;
  else if (!(t = split_terms(c, x, &n, &cap))) return NULL;
  uopc_node *quot = NULL, *rest = NULL, *res = NULL;
  int any = 0;
  for (uint32_t i = 0; i < n; i++) any |= is_divisible(t[i], kv);
  if (any) {
    for (uint32_t i = 0; i < n; i++) {
      if (is_divisible(t[i], kv)) {
        if (mod) continue;
        uopc_node *q = divides(c, t[i], kv);
        quot = quot ? uopc_add(c, quot, q) : q;
      } else {
        rest = rest ? uopc_add(c, rest, t[i]) : t[i];
      }
    }
    if (!rest) rest = K(x, 0);
    res = mod ? uopc_mod(c, rest, k) : uopc_add(c, quot, uopc_idiv(c, rest, k));
  }
  if (t != small) uopc_mem_free(c, t, (size_t)cap * sizeof *t);
  return res;
}

RULE(r_div_sum) { return div_sum(c, b[0], b[1], 0); }
RULE(r_mod_sum) { return div_sum(c, b[0], b[1], 1); }
RULE(r_div_small) { /* x // c -> 0 when 0 <= x < c */
  return (uopc_vmin(c, b[0]) >= 0 && uopc_vmax(c, b[0]) < ARG(b[1])) ? K(b[0], 0) : NULL;
}
RULE(r_mod_small) { /* x % c -> x when 0 <= x < c */
  return (uopc_vmin(c, b[0]) >= 0 && uopc_vmax(c, b[0]) < ARG(b[1])) ? b[0] : NULL;
}
RULE(r_recombine) { return ARG(b[1]) != 0 ? b[0] : NULL; }
RULE(r_recombine_y) { return ARG(b[1]) != 0 ? uopc_add(c, b[0], b[2]) : NULL; }

/* ---- comparisons ---- */

RULE(r_lt_add) { /* x + c1 < c2 -> x < c2 - c1 */
  int64_t d = ARG(b[2]) - ARG(b[1]);
  return fits_i32(d) ? uopc_lt_k(c, b[0], (double)d) : NULL;
}
RULE(r_lt_mul) { /* x*c1 < c2 -> x < ceil(c2/c1), c1 > 0 */
  int64_t c1 = ARG(b[1]), c2 = ARG(b[2]);
  return c1 > 0 ? uopc_lt_k(c, b[0], (double)-fdiv64(-c2, c1)) : NULL;
}

/* ---- the catch-all: bounds pin an int/bool expression to one value ---- */

RULE(r_const_bounds) {
  uopc_node *x = b[0];
  if (x->ndim != 0 || x->dtype == UOPC_DT_F32 || x->dtype == UOPC_DT_F16) return NULL;
  int64_t lo = uopc_vmin(c, x);
  return lo == uopc_vmax(c, x) ? uopc_const_i(c, (uopc_dtype)x->dtype, lo) : NULL;
}

static const uopc_rule symbolic_rules[] = {
    {"$x=(alu)", uopi_rule_fold, "fold"},
    /* canonical form: constants on the right of commutative ops */
    {"$u=(add|mul|max|cmpne #c $y)", r_canon, "canonical"},
    /* identities */
    {"[add $x 0]", r_x, "add_zero"},
    {"[add $x 0.0]", r_x, "add_zero_f"}, /* not exact for x=-0.0; we accept that (seed) */
    {"[mul $x 1]", r_x, "mul_one"},
    {"[mul $x 1.0]", r_x, "mul_one_f"},
    {"[mul $x:i32|bool 0]", r_zero, "mul_zero"},
    {"(floordiv $x 1)", r_x, "div_one"},
    {"(floormod $x 1)", r_zero, "mod_one"},
    {"(max $x $x)", r_x, "max_same"},
    {"(where _ $x $x)", r_x, "where_same"},
    {"(where #c $x $y)", r_where_const, "where_const"},
    {"(where $z (where $z $x _) $y)", r_where_zxy, "where_nested_true"},
    {"(where $z $x (where $z _ $y))", r_where_zxy, "where_nested_false"},
    {"$c=(cast $x)", r_cast_same, "cast_same"},
    {"(cmpne $x:bool False)", r_x, "ne_false"},
    {"$u=(cmplt|cmpne $x:i32 $x)", r_false, "cmp_self"},
    {"[add $x:i32 $x]", r_twice, "add_self"},
    {"[add $x:i32 [mul $x -1]]", r_zero, "sub_self"},
    /* reassociate constants outward, so that they can meet and fold (ints only) */
    {"[add [add $x:i32 #c1] #c2]", r_add_cc, "reassoc_add"},
    {"[mul [mul $x:i32 #c1] #c2]", r_mul_cc, "reassoc_mul"},
    {"[mul [add $x:i32 #c1] #c2]", r_addmul_cc, "reassoc_add_mul"},
    /* distribute constants over sums so div/mod can see every term */
    {"(mul $s=(add $x:i32 $y) #c)", r_distribute, "distribute"},
    {"[add [add $x:i32 #c1] $y]", r_const_out, "const_outward"},
    {"[add [mul $x:i32 #c1] [mul $x #c2]]", r_terms_cc, "like_terms"},
    {"[add [mul $x:i32 #c1] $x]", r_terms_c1, "like_terms_one"},
    /* division and modulo (floor semantics make these unconditional) */
    {"(floordiv (floordiv $x:i32 #c1) #c2)", r_divdiv, "div_div"},
    {"(floormod (floormod $x:i32 #c1) #c2)", r_modmod, "mod_mod"},
    {"(floordiv (floormod $x:i32 #c1) #c2)", r_moddiv, "mod_div"},
    {"(floordiv $x:i32 #c)", r_div_sum, "div_sum"},
    {"(floormod $x:i32 #c)", r_mod_sum, "mod_sum"},
    {"(floordiv $x:i32 #c)", r_div_small, "div_small"},
    {"(floormod $x:i32 #c)", r_mod_small, "mod_small"},
    /* recombine: (x//c)*c + x%c == x */
    {"[add [mul (floordiv $x:i32 #c1) #c1] (floormod $x #c1)]", r_recombine, "recombine"},
    {"[add [add [mul (floordiv $x:i32 #c1) #c1] $y] (floormod $x #c1)]", r_recombine_y, "recombine_y"},
    /* comparisons */
    {"(cmplt [add $x:i32 #c1] #c2)", r_lt_add, "lt_add"},
    {"(cmplt [mul $x:i32 #c1] #c2)", r_lt_mul, "lt_mul"},
    /* bounds say this int expression is a constant */
    {"$x=(alu)", r_const_bounds, "const_bounds"},
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static uopc_matcher *symbolic_m;
static void build(void) {
  symbolic_m = uopi_matcher_static(symbolic_rules, sizeof symbolic_rules / sizeof symbolic_rules[0], "symbolic");
}

const uopc_matcher *uopc_rules_symbolic(void) {
  pthread_once(&once, build);
  return symbolic_m;
}

const uopc_rule *uopc_rules_symbolic_table(size_t *n) {
  *n = sizeof symbolic_rules / sizeof symbolic_rules[0];
  return symbolic_rules;
}

/* ---- symbolic_strong: symbolic plus rules the seed's set misses (3.9) ----
 * Inserted before the bounds catch-all.  Each is exact for i32 under the
 * same no-overflow assumption as the seed's division rules. */

static int64_t gcd64(int64_t a, int64_t b) {
  a = a < 0 ? -a : a, b = b < 0 ? -b : b;
  while (b) {
    int64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

/* The gcd of the constant factors of every term of x and of k (0: a term has
   no constant factor). */
static int64_t terms_gcd(uopc_ctx *c, uopc_node *x, int64_t k, int *oom) {
  uint32_t n, cap;
  uopc_node **t = split_terms(c, x, &n, &cap);
  if (!t) {
    *oom = 1;
    return 0;
  }
  int64_t g = k;
  for (uint32_t i = 0; i < n && g > 1; i++) {
    uopc_node *u = t[i];
    if (IS_CONST(u)) g = gcd64(g, ARG(u));
    else if (u->op == UOPC_OP_MUL && IS_CONST(u->src[1])) g = gcd64(g, ARG(u->src[1]));
    else g = 1;
  }
  uopc_mem_free(c, t, (size_t)cap * sizeof *t);
  return g;
}

/* x with every term divided by g (each term is a visible multiple of g). */
static uopc_node *div_terms(uopc_ctx *c, uopc_node *x, int64_t g) {
  uint32_t n, cap;
  uopc_node **t = split_terms(c, x, &n, &cap);
  if (!t) return NULL;
  uopc_node *r = NULL;
  for (uint32_t i = 0; i < n; i++) {
    uopc_node *q = divides(c, t[i], g);
    r = r ? uopc_add(c, r, q) : q;
  }
  uopc_mem_free(c, t, (size_t)cap * sizeof *t);
  return r;
}

/* (g*a) // (g*k) -> a // k and (g*a) % (g*k) -> (a % k) * g, g the gcd of every term's factor and k > 0 */
static uopc_node *gcd_divmod(uopc_ctx *c, uopc_node *x, uopc_node *k, int mod) {
  int oom = 0;
  if (ARG(k) <= 0) return NULL;
  int64_t g = terms_gcd(c, x, ARG(k), &oom);
  if (oom || g <= 1) return NULL;
  uopc_node *a = div_terms(c, x, g);
  if (!a) return NULL;
  return mod ? uopc_mul_k(c, uopc_mod_k(c, a, (double)(ARG(k) / g)), (double)g)
             : uopc_idiv_k(c, a, (double)(ARG(k) / g));
}

RULE(r_gcd_div) { return gcd_divmod(c, b[0], b[1], 0); }
RULE(r_gcd_mod) { return gcd_divmod(c, b[0], b[1], 1); }
RULE(r_max_bounds) { /* max(x, c) -> x when x >= c always, -> c when x <= c always */
  if (uopc_vmin(c, b[0]) >= ARG(b[1])) return b[0];
  if (uopc_vmax(c, b[0]) <= ARG(b[1])) return b[1];
  return NULL;
}

static const uopc_rule strong_extra[] = {
    {"(floordiv $x:i32 #c)", r_gcd_div, "gcd_div"},
    {"(floormod $x:i32 #c)", r_gcd_mod, "gcd_mod"},
    {"(max $x:i32 #c)", r_max_bounds, "max_bounds"},
};

static pthread_once_t strong_once = PTHREAD_ONCE_INIT;
static uopc_matcher *strong_m;
static void build_strong(void) {
  enum { NS = sizeof symbolic_rules / sizeof symbolic_rules[0], NE = sizeof strong_extra / sizeof strong_extra[0] };
  static uopc_rule all[NS + NE];
  for (size_t i = 0; i + 1 < NS; i++) all[i] = symbolic_rules[i];
  for (size_t i = 0; i < NE; i++) all[NS - 1 + i] = strong_extra[i];
  all[NS + NE - 1] = symbolic_rules[NS - 1]; /* the bounds catch-all stays last */
  strong_m = uopi_matcher_static(all, NS + NE, "symbolic_strong");
}

const uopc_matcher *uopc_rules_symbolic_strong(void) {
  pthread_once(&strong_once, build_strong);
  return strong_m;
}
