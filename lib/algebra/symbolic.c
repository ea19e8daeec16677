/* lib/algebra/symbolic.c - the symbolic rule set (seed 3.5), in the seed's
 * order: fold, canonical form, identities, int-only reassociation,
 * distribution, div/mod, recombination, comparisons, and the bounds
 * catch-all last.  Rule order is meaning: keep it.
 *
 * Three sets come from these rules (docs/rewrite.md, "Exactness"):
 *   symbolic         the exact set, the default everywhere: NOWRAP rules fire
 *                    only where bounds prove their premise, INEXACT rules
 *                    are left out;
 *   symbolic_seed    the seed's own mode (`uopc simplify --seed-rules`): it
 *                    trusts that i32 arithmetic never overflows and applies
 *                    x + 0.0 -> x;
 *   symbolic_strong  the exact set plus gcd division and max by bounds.
 *
 * Each rule says what it assumes:
 *   EXACT    equal values for every input, i32 wrapping (a ring identity)
 *            or decided by sound bounds;
 *   NOWRAP   a theorem about integers, not about i32: in exact mode the rule
 *            checks with bounds that no ADD/MUL of the matched subexpression
 *            or of its result can wrap (or that the identity holds modulo
 *            2^32 anyway: a power-of-two modulus), and declines otherwise;
 *   INEXACT  the seed's x + 0.0 -> x (wrong for x = -0.0): seed mode only.
 *
 * Fixes to the seed (docs/semantics.md, "Rule set"), kept in every mode:
 *   - MAX is swapped into canonical form only for i32 and bool (Python's max
 *     is not commutative on NaN and on -0.0/0.0);
 *   - every constant a rule builds is wrapped to i32, or the rule declines
 *     when the constant does not fit;
 *   - (x % c1) % c2 and (x//c)*c + x%c need c1, c != 0 (the seed turned an
 *     undefined x % 0 into a defined value); (x % c1) // c2 needs c1 > 0
 *     (the seed's rule is wrong for negative c1: x=1, c1=-12, c2=4);
 *   - _split_terms/_divides walk sums with a loop, not recursion, and give up
 *     on a sum of more than MAX_TERMS terms (a shared ADD DAG can spell an
 *     exponential number).
 */
#include <math.h>
#include <stdint.h>

#include "algebra/bounds.h"
#include "algebra/rules.h"
#include "uopc/algebra.h"

#define MAX_TERMS 4096

static int fits_i32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }
static int is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/* ---- constant folding (seed 3.3): exec_alu is the semantics ---- */

uopc_node *uopi_fold_scalar(uopc_ctx *c, uopc_op op, uopc_dtype t, uopc_node *const *src, uint32_t n) {
  if (n > 3) return NULL;
  uopc_val in[3], out;
  for (uint32_t i = 0; i < n; i++) {
    if (!IS_CONST(src[i])) return NULL;
    in[i] = (uopc_val){src[i]->arg.i, src[i]->arg.f};
  }
  /* the dtype the operands are read in: WHERE's value operands, else the first */
  uopc_dtype in_t = (uopc_dtype)(op == UOPC_OP_WHERE ? src[1]->dtype : src[0]->dtype);
  if (!uopc_exec_alu(op, t, in_t, in, &out)) return NULL;
  return uopi_dtype_is_float(t) ? uopc_const_f(c, t, out.f) : uopc_const_i(c, t, out.i);
}

/* a scalar ALU op on constants -> its value; an undefined result stays */
RULE(fold, EXACT, "$x=(alu)", x) {
  if (x->ndim != 0 || x->srcops != UINT64_C(1) << UOPC_OP_CONST) return NULL; /* srcops: every source a CONST */
  return uopi_fold_scalar(c, (uopc_op)x->op, (uopc_dtype)x->dtype, x->src, x->nsrc);
}

/* ---- canonical form: constants on the right of commutative ops ---- */

/* k op y -> y op k when y is not a constant (not MAX on floats) */
RULE(canonical, EXACT, "$u=(add|mul|max|cmpne #k $y)", u, k, y) {
  if (IS_CONST(y)) return NULL;
  if (u->op == UOPC_OP_MAX && uopi_dtype_is_float((uopc_dtype)u->dtype)) return NULL;
  uopc_node *s[2] = {y, k};
  return uopc_replace(c, u, s, 2);
}

/* ---- identities ---- */

RULE(add_zero, EXACT, "[add $x:i32|bool 0]", x) { return x; }
/* x + 0.0 -> x: -0.0 + 0.0 is 0.0, so this is wrong for x = -0.0 (the seed
   "accepts that"; the exact sets do not) */
RULE(add_zero_f, INEXACT, "[add $x:f32|f16 0]", x) { return x; }
RULE(mul_one, EXACT, "[mul $x:i32|bool 1]", x) { return x; }
RULE(mul_one_f, EXACT, "[mul $x:f32|f16 1]", x) { return x; } /* x * 1.0 is x for every float */
/* x * 0 -> 0 (ints: inf*0 and nan*0 are nan); drops an undefined x */
RULE(mul_zero, EXACT, "[mul $x:i32|bool 0]", x) { return K(x, 0); }
RULE(div_one, EXACT, "(floordiv $x 1)", x) { return x; }
RULE(mod_one, EXACT, "(floormod $x 1)", x) { return K(x, 0); }
RULE(max_same, EXACT, "(max $x $x)", x) { return x; }
RULE(where_same, EXACT, "(where _ $x $x)", x) { return x; }
RULE(where_const, EXACT, "(where #k $x $y)", k, x, y) { return ARG(k) ? x : y; }
RULE(where_nested_true, EXACT, "(where $z (where $z $x _) $y)", z, x, y) { return uopc_where(c, z, x, y); }
RULE(where_nested_false, EXACT, "(where $z $x (where $z _ $y))", z, x, y) { return uopc_where(c, z, x, y); }
RULE(cast_same, EXACT, "$u=(cast $x)", u, x) { return u->dtype == x->dtype ? x : NULL; }
RULE(ne_false, EXACT, "(cmpne $x:bool False)", x) { return x; }
/* x < x and x != x are False for ints (not for floats: nan != nan) */
RULE(cmp_self, EXACT, "$u=(cmplt|cmpne $x:i32 $x)", u, x) { return K(u, 0); }
RULE(add_self, EXACT, "[add $x:i32 $x]", x) { return uopc_mul_k(c, x, 2); }
RULE(sub_self, EXACT, "[add $x:i32 [mul $x -1]]", x) { return K(x, 0); }

/* ---- reassociation and distribution: ring identities, exact for i32
        under wrapping (never for floats: float + is not associative) ---- */

/* (x + k1) + k2 -> x + (k1 + k2) */
RULE(reassoc_add, EXACT, "[add [add $x:i32 #k1] #k2]", x, k1, k2) {
  return uopc_add_k(c, x, uopc_wrap_i32(ARG(k1) + ARG(k2)));
}
/* (x * k1) * k2 -> x * (k1 * k2) */
RULE(reassoc_mul, EXACT, "[mul [mul $x:i32 #k1] #k2]", x, k1, k2) {
  return uopc_mul_k(c, x, uopc_wrap_i32(ARG(k1) * ARG(k2)));
}
/* (x + k1) * k2 -> x*k2 + k1*k2 */
RULE(reassoc_add_mul, EXACT, "[mul [add $x:i32 #k1] #k2]", x, k1, k2) {
  return uopc_add_k(c, uopc_mul(c, x, k2), uopc_wrap_i32(ARG(k1) * ARG(k2)));
}
/* (x + y) * k -> x*k + y*k, so that div/mod see every term */
RULE(distribute, EXACT, "(mul $s=(add $x:i32 $y) #k)", s, x, y, k) {
  return uopc_add(c, uopc_mul(c, x, k), uopc_mul(c, y, k));
}
/* (x + k1) + y -> (x + y) + k1, so that constants meet at the top */
RULE(const_outward, EXACT, "[add [add $x:i32 #k1] $y]", x, k1, y) {
  if (IS_CONST(y)) return NULL;
  return uopc_add(c, uopc_add(c, x, y), k1);
}
/* x*k1 + x*k2 -> x*(k1 + k2) */
RULE(like_terms, EXACT, "[add [mul $x:i32 #k1] [mul $x #k2]]", x, k1, k2) {
  return uopc_mul_k(c, x, uopc_wrap_i32(ARG(k1) + ARG(k2)));
}
/* x*k + x -> x*(k + 1) */
RULE(like_terms_one, EXACT, "[add [mul $x:i32 #k1] $x]", x, k1) {
  return uopc_mul_k(c, x, uopc_wrap_i32(ARG(k1) + 1));
}

/* ---- division and modulo (floor semantics make these unconditional over
        the integers; the sum rules also need the sum not to wrap) ---- */

/* (x // k1) // k2 -> x // (k1*k2), k1, k2 > 0 */
RULE(div_div, EXACT, "(floordiv (floordiv $x:i32 #k1) #k2)", x, k1, k2) {
  int64_t a = ARG(k1), b = ARG(k2);
  if (a <= 0 || b <= 0 || a * b > INT32_MAX) return NULL;
  return uopc_idiv_k(c, x, (double)(a * b));
}
/* (x % k1) % k2 -> x % k2 when k2 > 0 divides k1 */
RULE(mod_mod, EXACT, "(floormod (floormod $x:i32 #k1) #k2)", x, k1, k2) {
  int64_t a = ARG(k1), b = ARG(k2);
  if (a == 0 || b <= 0 || uopi_floormod64(a, b) != 0) return NULL;
  return uopc_mod(c, x, k2);
}
/* (x % k1) // k2 -> (x // k2) % (k1 // k2), k1, k2 > 0, k2 divides k1 */
RULE(mod_div, EXACT, "(floordiv (floormod $x:i32 #k1) #k2)", x, k1, k2) {
  int64_t a = ARG(k1), b = ARG(k2);
  if (a <= 0 || b <= 0 || a % b != 0) return NULL;
  return uopc_mod_k(c, uopc_idiv(c, x, k2), (double)(a / b));
}

/* u / k when u is a visible multiple of k (a constant, or a product with a
   constant): the seed's _divides on one term.  NULL when it is not. */
static uopc_node *divides(uopc_ctx *c, uopc_node *u, int64_t k) {
  if (IS_CONST(u)) return uopi_floormod64(ARG(u), k) == 0 ? K(u, uopi_floordiv64(ARG(u), k)) : NULL;
  if (u->op == UOPC_OP_MUL && IS_CONST(u->src[1]))
    return uopi_floormod64(ARG(u->src[1]), k) == 0
               ? uopc_mul_k(c, u->src[0], (double)uopi_floordiv64(ARG(u->src[1]), k))
               : NULL;
  return NULL;
}

static int is_divisible(const uopc_node *u, int64_t k) {
  if (u->op == UOPC_OP_CONST) return uopi_floormod64(u->arg.i, k) == 0;
  return u->op == UOPC_OP_MUL && u->src[1]->op == UOPC_OP_CONST && uopi_floormod64(u->src[1]->arg.i, k) == 0;
}

/* The interval of divides(u, k) (u divisible by k). */
static uopi_iv divides_iv(uopc_ctx *c, uopc_node *u, int64_t k) {
  if (IS_CONST(u)) return uopi_iv_k(uopi_floordiv64(ARG(u), k));
  return uopi_iv_mul(uopi_bounds(c, u->src[0]), uopi_iv_k(uopi_floordiv64(ARG(u->src[1]), k)));
}

/* The terms of a sum, left to right (the seed's _split_terms), iteratively,
   into *out (its buffer, then scratch).  Returns 0 when there are more than
   MAX_TERMS (or memory ran out: then the error is recorded).  *nowrap (when
   given) says whether no ADD of the sum can wrap. */
static int split_terms(uopc_ctx *c, uopc_node *x, uopi_nodes *out, int *nowrap) {
  uopc_node *st_local[16]; uopi_nodes st = {st_local, 0, 16}; /* the stack: here until it grows */
  out->n = 0;
  if (nowrap) *nowrap = 1;
  if (!uopi_nodes_push(c, &st, x)) return 0;
  while (st.n) {
    uopc_node *u = st.v[--st.n];
    if (u->op == UOPC_OP_ADD) {
      if (nowrap && !uopi_nowrap(c, u)) *nowrap = 0;
      if (!uopi_nodes_push(c, &st, u->src[1]) || !uopi_nodes_push(c, &st, u->src[0])) return 0;
      continue;
    }
    if (out->n == MAX_TERMS || !uopi_nodes_push(c, out, u)) return 0;
  }
  return 1;
}

/* (a*k + b) // k == a + b//k  and  (a*k + b) % k == b % k (floor division,
   k > 0): the seed's _div_sum.  Over i32 it also needs the sum not to wrap
   (before and after): in exact mode checked by intervals, except for a
   modulo by a power of two, which wrapping (mod 2^32) cannot change. */
static uopc_node *div_sum(uopc_ctx *c, uopc_node *x, uopc_node *k, int mod, int exact) {
  int64_t kv = ARG(k);
  if (kv <= 0) return NULL;
  int guard = exact && !(mod && is_pow2(kv)), nowrap;
  size_t mark = uopi_scratch_mark(c);
  uopc_node *res = NULL;
  uopc_node *t_local[16]; uopi_nodes t = {t_local, 0, 16}; /* the terms: here until they grow */
  if (!split_terms(c, x, &t, guard ? &nowrap : NULL) || (guard && !nowrap)) goto out;
  int any = 0;
  for (uint32_t i = 0; i < t.n; i++) any |= is_divisible(t.v[i], kv);
  if (!any) goto out;
  if (guard) { /* every partial sum of the result, and the products, fit */
    uopi_iv q = {0, 0}, r = {0, 0};
    int nq = 0, nr = 0;
    for (uint32_t i = 0; i < t.n; i++) {
      uopc_node *u = t.v[i];
      if (is_divisible(u, kv)) {
        if (!uopi_nowrap(c, u)) goto out;
        if (mod) continue;
        uopi_iv d = divides_iv(c, u, kv);
        q = nq++ ? uopi_iv_add(q, d) : d;
        if (!uopi_iv_fits_i32(q)) goto out;
      } else {
        uopi_iv b = uopi_bounds(c, u);
        r = nr++ ? uopi_iv_add(r, b) : b;
        if (!uopi_iv_fits_i32(r)) goto out;
      }
    }
    uopi_iv rq = {uopi_floordiv64(r.lo, kv), uopi_floordiv64(r.hi, kv)};
    if (!mod && !uopi_iv_fits_i32(uopi_iv_add(q, rq))) goto out;
  }
  uopc_node *quot = NULL, *rest = NULL;
  for (uint32_t i = 0; i < t.n; i++) {
    if (is_divisible(t.v[i], kv)) {
      if (mod) continue;
      uopc_node *q = divides(c, t.v[i], kv);
      quot = quot ? uopc_add(c, quot, q) : q;
    } else {
      rest = rest ? uopc_add(c, rest, t.v[i]) : t.v[i];
    }
  }
  if (!rest) rest = K(x, 0);
  res = mod ? uopc_mod(c, rest, k) : uopc_add(c, quot, uopc_idiv(c, rest, k));
out:
  uopi_scratch_reset(c, mark);
  return res;
}

RULE(div_sum, NOWRAP, "(floordiv $x:i32 #k)", x, k) { return div_sum(c, x, k, 0, exact); }
RULE(mod_sum, NOWRAP, "(floormod $x:i32 #k)", x, k) { return div_sum(c, x, k, 1, exact); }
/* x // k -> 0 and x % k -> x when bounds say 0 <= x < k */
RULE(div_small, EXACT, "(floordiv $x:i32 #k)", x, k) {
  return (uopi_vmin(c, x) >= 0 && uopi_vmax(c, x) < ARG(k)) ? K(x, 0) : NULL;
}
RULE(mod_small, EXACT, "(floormod $x:i32 #k)", x, k) {
  return (uopi_vmin(c, x) >= 0 && uopi_vmax(c, x) < ARG(k)) ? x : NULL;
}

/* ---- recombine: (x//k)*k + x%k == x, a ring identity (k != 0) ---- */

RULE(recombine, EXACT, "[add [mul (floordiv $x:i32 #k) #k] (floormod $x #k)]", x, k) {
  return ARG(k) != 0 ? x : NULL;
}
RULE(recombine_y, EXACT, "[add [add [mul (floordiv $x:i32 #k) #k] $y] (floormod $x #k)]", x, k, y) {
  return ARG(k) != 0 ? uopc_add(c, x, y) : NULL;
}

/* ---- comparisons: true over the integers; over i32 only when the sum or
        product compared does not wrap ---- */

/* x + k1 < k2 -> x < k2 - k1 */
RULE(lt_add, NOWRAP, "(cmplt $s=[add $x:i32 #k1] #k2)", s, x, k1, k2) {
  int64_t d = ARG(k2) - ARG(k1);
  if (!fits_i32(d) || (exact && !uopi_nowrap(c, s))) return NULL;
  return uopc_lt_k(c, x, (double)d);
}
/* x*k1 < k2 -> x < ceil(k2/k1), k1 > 0 */
RULE(lt_mul, NOWRAP, "(cmplt $s=[mul $x:i32 #k1] #k2)", s, x, k1, k2) {
  if (ARG(k1) <= 0 || (exact && !uopi_nowrap(c, s))) return NULL;
  return uopc_lt_k(c, x, (double)-uopi_floordiv64(-ARG(k2), ARG(k1)));
}

/* ---- the catch-all: bounds pin an int/bool expression to one value ---- */

RULE(const_bounds, EXACT, "$x=(alu)", x) {
  if (x->ndim != 0 || uopi_dtype_is_float((uopc_dtype)x->dtype)) return NULL;
  int64_t lo = uopi_vmin(c, x);
  return lo == uopi_vmax(c, x) ? uopc_const_i(c, (uopc_dtype)x->dtype, lo) : NULL;
}

/* ---- symbolic_strong's extras (chapter 3.9's incompleteness examples) ---- */

static int64_t gcd64(int64_t a, int64_t b) {
  a = a < 0 ? -a : a, b = b < 0 ? -b : b;
  while (b) {
    int64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

/* (g*a) // (g*k) -> a // k and (g*a) % (g*k) -> (a % k) * g, g the gcd of
   every term's constant factor and of the divisor K > 0. */
static uopc_node *gcd_divmod(uopc_ctx *c, uopc_node *x, uopc_node *k, int mod, int exact) {
  int64_t kv = ARG(k);
  if (kv <= 0) return NULL;
  int guard = exact && !(mod && is_pow2(kv)), nowrap;
  size_t mark = uopi_scratch_mark(c);
  uopc_node *res = NULL;
  uopc_node *t_local[16]; uopi_nodes t = {t_local, 0, 16}; /* the terms: here until they grow */
  if (!split_terms(c, x, &t, guard ? &nowrap : NULL) || (guard && !nowrap)) goto out;
  int64_t g = kv;
  for (uint32_t i = 0; i < t.n && g > 1; i++) {
    uopc_node *u = t.v[i];
    if (IS_CONST(u)) g = gcd64(g, ARG(u));
    else if (u->op == UOPC_OP_MUL && IS_CONST(u->src[1])) g = gcd64(g, ARG(u->src[1]));
    else g = 1;
  }
  if (g <= 1) goto out;
  if (guard) {
    uopi_iv a = {0, 0};
    for (uint32_t i = 0; i < t.n; i++) {
      if (!uopi_nowrap(c, t.v[i])) goto out;
      uopi_iv d = divides_iv(c, t.v[i], g);
      a = i ? uopi_iv_add(a, d) : d;
      if (!uopi_iv_fits_i32(a)) goto out;
    }
  }
  uopc_node *a = NULL;
  for (uint32_t i = 0; i < t.n; i++) {
    uopc_node *q = divides(c, t.v[i], g);
    a = a ? uopc_add(c, a, q) : q;
  }
  res = mod ? uopc_mul_k(c, uopc_mod_k(c, a, (double)(kv / g)), (double)g) : uopc_idiv_k(c, a, (double)(kv / g));
out:
  uopi_scratch_reset(c, mark);
  return res;
}

RULE(gcd_div, NOWRAP, "(floordiv $x:i32 #k)", x, k) { return gcd_divmod(c, x, k, 0, exact); }
RULE(gcd_mod, NOWRAP, "(floormod $x:i32 #k)", x, k) { return gcd_divmod(c, x, k, 1, exact); }
/* max(x, k) -> x when x >= k always, -> k when x <= k always */
RULE(max_bounds, EXACT, "(max $x:i32 #k)", x, k) {
  if (uopi_vmin(c, x) >= ARG(k)) return x;
  if (uopi_vmax(c, x) <= ARG(k)) return k;
  return NULL;
}

/* ---- the sets ---- */

#define SYMBOLIC_RULES                                                                                    \
  &rule_fold, &rule_canonical, &rule_add_zero, &rule_add_zero_f, &rule_mul_one, &rule_mul_one_f,          \
      &rule_mul_zero, &rule_div_one, &rule_mod_one, &rule_max_same, &rule_where_same, &rule_where_const,  \
      &rule_where_nested_true, &rule_where_nested_false, &rule_cast_same, &rule_ne_false, &rule_cmp_self, \
      &rule_add_self, &rule_sub_self, &rule_reassoc_add, &rule_reassoc_mul, &rule_reassoc_add_mul,        \
      &rule_distribute, &rule_const_outward, &rule_like_terms, &rule_like_terms_one, &rule_div_div,       \
      &rule_mod_mod, &rule_mod_div, &rule_div_sum, &rule_mod_sum, &rule_div_small, &rule_mod_small,       \
      &rule_recombine, &rule_recombine_y, &rule_lt_add, &rule_lt_mul

RULESET(uopc_rules_fold, "fold", 1, &rule_fold)
RULESET(uopc_rules_symbolic, "symbolic", 1, SYMBOLIC_RULES, &rule_const_bounds)
RULESET(uopc_rules_symbolic_seed, "symbolic_seed", 0, SYMBOLIC_RULES, &rule_const_bounds)
RULESET(uopc_rules_symbolic_strong, "symbolic_strong", 1, SYMBOLIC_RULES, &rule_gcd_div, &rule_gcd_mod,
        &rule_max_bounds, &rule_const_bounds)
