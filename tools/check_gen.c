/* tools/check_gen.c - random values, and random instances of a rule's
 * pattern, for uopc check-rules.
 *
 * An instance is built top down from the pattern's parts
 * (uopc_pattern_part_get): a part with an op picks one of its ops, a result
 * dtype and (CHK_EVAL) a shape, works out what each source must be, and
 * builds its sources from the sub-patterns (more sources, where the pattern
 * does not list them, are random); `$x` and `_` become random leaves or
 * small random subexpressions of the dtype and shape needed, a repeated
 * name the node it bound first, `#k` a random constant, a literal that
 * constant.  A choice that fails construction is retried (a few times per
 * part, within a budget per instance).  The recursion follows the pattern
 * (at most 64 parts) and a depth limit, never a graph.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "check_impl.h"

#define ALL_OPS ((UINT64_C(1) << UOPC_OP_COUNT) - 1)
#define OPB(op) (UINT64_C(1) << (op))
#define DTB(t) (1u << (t))
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_DEPTH 4

/* ---- values ---------------------------------------------------------------- */

static const int64_t i32_edge[] = {
    0,          1,           -1,         2,           -2,         3,          -3,         7,
    INT32_MIN,  INT32_MAX,   INT32_MIN + 1, INT32_MAX - 1, INT32_MIN / 2, INT32_MAX / 2, INT32_MAX / 2 + 1,
    1 << 30,    -(1 << 30),  65535,      65536,       -65536,     1 << 24,    (1 << 24) + 1, 46340,
    46341,      -46341,      1 << 16,    255,         256,        -256,       1000000,    -1000000,
};

int64_t chk_rand_i32(chk_rng *r, const int64_t *pool, uint32_t npool) {
  uint32_t k = rng_below(r, 100);
  if (k < 30) return (int64_t)rng_below(r, 48) - 16;
  if (k < 45) return i32_edge[rng_below(r, NELEM(i32_edge))];
  if (k < 57) { /* a power of two, +-1, either sign */
    int64_t v = (INT64_C(1) << rng_below(r, 32)) + (int64_t)rng_below(r, 3) - 1;
    return uopc_wrap_i32(rng_pct(r, 40) ? -v : v);
  }
  if (k < 67) /* near overflow */
    return rng_pct(r, 50) ? INT32_MAX - (int64_t)rng_below(r, 64) : INT32_MIN + (int64_t)rng_below(r, 64);
  if (k < 82 && npool) { /* related to a constant of the instance: where its sums wrap */
    int64_t p = pool[rng_below(r, npool)], v;
    switch (rng_below(r, 8)) {
    case 0: v = p; break;
    case 1: v = -p; break;
    case 2: v = p + 1; break;
    case 3: v = p - 1; break;
    case 4: v = INT32_MAX - p + (int64_t)rng_below(r, 3) - 1; break;
    case 5: v = INT32_MIN - p + (int64_t)rng_below(r, 3) - 1; break;
    case 6: v = 2 * p; break;
    default: v = -p + (int64_t)rng_below(r, 5) - 2; break;
    }
    return uopc_wrap_i32(v);
  }
  return (int32_t)(uint32_t)rng_u64(r);
}

static const double f32_edge[] = {
    0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0.5, 2.0, -2.0, 3.0, 0.1, 1.0 / 3.0, -0.1,
    0x1p-149,                 /* the smallest subnormal */
    -0x1p-149, 0x1p-126,      /* the smallest normal */
    0x1.fffffcp-127,          /* the largest subnormal */
    1e-40, 1e-45, FLT_MAX, -FLT_MAX, 3.0e38, 4.0e38 /* rounds to inf */, 16777216.0, 16777217.0 /* rounds */,
    2147483648.0, -2147483648.0, 2147483520.0, 2147483904.0, -2147483904.0, 1e10, 65504.0, 65520.0,
    0.30000001192092896, 1e-5,
};
static const double f16_edge[] = {
    0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0.5, 2.0, -2.0, 3.0, 0.1, 1.0 / 3.0, -0.1,
    0x1p-24,                  /* the smallest subnormal */
    -0x1p-24, 0x1p-14,        /* the smallest normal */
    0x1.ff8p-15,              /* the largest subnormal */
    3e-8, 1e-8, 65504.0, -65504.0, 65519.0, 65520.0 /* rounds to inf */, 2048.0, 2049.0 /* rounds */, 2051.0,
    4096.5, 1e-5, 0.099975586,
};

static double round_to(uopc_dtype t, double x) { return t == UOPC_DT_F16 ? uopc_round_f16(x) : uopc_round_f32(x); }

double chk_rand_float(chk_rng *r, uopc_dtype t, int exact) {
  int h = t == UOPC_DT_F16;
  double v;
  uint32_t k = rng_below(r, 100);
  if (k < 35) {
    v = h ? f16_edge[rng_below(r, NELEM(f16_edge))] : f32_edge[rng_below(r, NELEM(f32_edge))];
  } else if (k < 55) {
    v = (double)((int)rng_below(r, 41) - 20);
  } else if (k < 70) {
    v = ((double)rng_below(r, 2000001) - 1000000.0) / 1000.0; /* most do not fit: they round */
  } else if (k < 85) {
    if (h) {
      v = uopc_f16_to_double((uint16_t)rng_u64(r));
    } else {
      uint32_t bits = (uint32_t)rng_u64(r);
      float f;
      memcpy(&f, &bits, sizeof f);
      v = f;
    }
  } else {
    int e = h ? (int)rng_below(r, 44) - 26 : (int)rng_below(r, 281) - 150;
    v = ldexp(1.0, e) * (rng_pct(r, 30) ? -1.0 : 1.0);
  }
  return exact ? round_to(t, v) : v;
}

uopc_val chk_rand_val(chk_rng *r, uopc_dtype t, const int64_t *pool, uint32_t npool) {
  uopc_val v = {0, 0.0};
  if (t == UOPC_DT_BOOL) v.i = rng_below(r, 2);
  else if (t == UOPC_DT_I32) v.i = chk_rand_i32(r, pool, npool);
  else v.f = chk_rand_float(r, t, 1);
  return v;
}

int64_t chk_rand_below(chk_rng *r, int64_t end) {
  uint32_t k = rng_below(r, 100);
  if (k < 25 || end == 1) return 0;
  if (k < 50) return end - 1;
  if (k < 58) return end - 2;
  if (k < 63) return 1;
  return (int64_t)(rng_u64(r) % (uint64_t)end);
}

/* The end of a scalar instance's RANGE: small ends often, large ones up to
   2^31 - 1 (so that bounds-guarded rules both fire and decline). */
static int64_t rand_range_end(chk_rng *r) {
  uint32_t k = rng_below(r, 100);
  if (k < 50) return 1 + rng_below(r, 64);
  if (k < 62) return 65 + rng_below(r, 4032);
  if (k < 75) {
    int64_t v = (INT64_C(1) << (1 + rng_below(r, 31))) + (int64_t)rng_below(r, 3) - 1;
    return v > INT32_MAX ? INT32_MAX : v;
  }
  if (k < 90) return 1 + (int64_t)(rng_u64(r) % (uint64_t)INT32_MAX);
  return INT32_MAX - (int64_t)rng_below(r, 4);
}

uopc_val chk_const_val(const uopc_node *u) {
  uopc_val v = {0, 0.0};
  if (uopc_dtype_is_float((uopc_dtype)u->dtype)) {
    double f = round_to((uopc_dtype)u->dtype, u->arg.f);
    v.f = isnan(f) ? (double)NAN : f;
  } else {
    v.i = u->arg.i;
  }
  return v;
}

int chk_same(uopc_val a, uopc_val b, uopc_dtype t) {
  if (!uopc_dtype_is_float(t)) return a.i == b.i;
  if (isnan(a.f) || isnan(b.f)) return isnan(a.f) && isnan(b.f);
  return a.f == b.f && signbit(a.f) == signbit(b.f);
}

void chk_fmt_val(char *buf, size_t n, uopc_val v, uopc_dtype t) {
  char s[40];
  uopc_fmt_scalar(uopc_dtype_is_float(t) ? v.f : (double)v.i, t, s);
  size_t len = strlen(buf);
  if (len < n) snprintf(buf + len, n - len, "%s", s);
}

/* ---- choices --------------------------------------------------------------- */

static uopc_dtype pick_dtype(chk_rng *r, uint32_t mask) {
  static const unsigned w[UOPC_DT_COUNT] = {15, 45, 25, 15, 0}; /* bool i32 f32 f16 void */
  unsigned tot = 0;
  for (int t = 0; t < UOPC_DT_COUNT; t++)
    if (mask >> t & 1) tot += w[t];
  if (!tot) return UOPC_DT_VOID;
  unsigned k = rng_below(r, tot);
  for (int t = 0; t < UOPC_DT_COUNT; t++) {
    if (!(mask >> t & 1)) continue;
    if (k < w[t]) return (uopc_dtype)t;
    k -= w[t];
  }
  return UOPC_DT_VOID;
}

static uint64_t alu_ops(void) {
  uint64_t m = 0;
  for (int op = 0; op < UOPC_OP_COUNT; op++)
    if (uopc_op_flags((uopc_op)op) & UOPC_OPF_ALU) m |= OPB(op);
  return m;
}

/* The ops a family builds for a pattern's op part. */
static uint64_t fam_ops(chk_family f) {
  uint64_t m = alu_ops() | OPB(UOPC_OP_CONST);
  if (f == CHK_EVAL)
    m |= OPB(UOPC_OP_STACK) | OPB(UOPC_OP_INDEX) | OPB(UOPC_OP_CALL) | OPB(UOPC_OP_RESHAPE) | OPB(UOPC_OP_EXPAND) |
         OPB(UOPC_OP_PERMUTE) | OPB(UOPC_OP_SHRINK) | OPB(UOPC_OP_REDUCE);
  if (f == CHK_KERNEL) m |= OPB(UOPC_OP_RANGE) | OPB(UOPC_OP_INDEX) | OPB(UOPC_OP_LOAD) | OPB(UOPC_OP_BUFFER);
  return m;
}

/* The dtypes an op's result can have. */
static uint32_t op_result_dts(uopc_op op) {
  switch (op) {
  case UOPC_OP_CMPLT: case UOPC_OP_CMPNE: return DTB(UOPC_DT_BOOL);
  case UOPC_OP_FLOORDIV: case UOPC_OP_FLOORMOD: case UOPC_OP_RANGE: return DTB(UOPC_DT_I32);
  case UOPC_OP_RECIP: case UOPC_OP_EXP2: case UOPC_OP_LOG2: case UOPC_OP_SQRT: case UOPC_OP_SIN:
    return DTB(UOPC_DT_F32) | DTB(UOPC_DT_F16);
  default: return CHK_DT4;
  }
}

/* How often an op is chosen for a random subexpression or among a part's ops. */
static unsigned op_weight(uopc_op op) {
  switch (op) {
  case UOPC_OP_ADD: return 30;
  case UOPC_OP_MUL: return 20;
  case UOPC_OP_CMPLT: return 10;
  case UOPC_OP_FLOORDIV: case UOPC_OP_FLOORMOD: return 8;
  case UOPC_OP_MAX: case UOPC_OP_CMPNE: return 6;
  case UOPC_OP_WHERE: case UOPC_OP_CAST: return 5;
  case UOPC_OP_RECIP: case UOPC_OP_SQRT: return 2;
  case UOPC_OP_EXP2: case UOPC_OP_LOG2: case UOPC_OP_SIN: return 1;
  default: return 10;
  }
}

/* One of ops whose result can have a dtype in dts, or UOPC_OP_COUNT. */
static uopc_op pick_op(chk_rng *r, uint64_t ops, uint32_t dts) {
  unsigned tot = 0;
  for (int op = 0; op < UOPC_OP_COUNT; op++)
    if ((ops >> op & 1) && (op_result_dts((uopc_op)op) & dts)) tot += op_weight((uopc_op)op);
  if (!tot) return UOPC_OP_COUNT;
  unsigned k = rng_below(r, tot);
  for (int op = 0; op < UOPC_OP_COUNT; op++) {
    if (!(ops >> op & 1) || !(op_result_dts((uopc_op)op) & dts)) continue;
    unsigned w = op_weight((uopc_op)op);
    if (k < w) return (uopc_op)op;
    k -= w;
  }
  return UOPC_OP_COUNT;
}

static int64_t numel_of(const int32_t *sh, uint32_t nd) {
  int64_t n = 1;
  for (uint32_t i = 0; i < nd; i++) n *= sh[i];
  return n;
}

/* A random shape (rank 0..3, dims 1..4, at most CHK_MAX_NUMEL elements). */
static void pick_shape(chk_rng *r, chk_req *q, int allow_scalar) {
  q->fixed = 1;
  q->nd = allow_scalar && rng_pct(r, 35) ? 0 : 1 + rng_below(r, 3);
  for (uint32_t i = 0; i < q->nd; i++) q->sh[i] = 1 + (int32_t)rng_below(r, 4);
  while (numel_of(q->sh, q->nd) > CHK_MAX_NUMEL)
    for (uint32_t i = 0; i < q->nd; i++)
      if (q->sh[i] > 1) {
        q->sh[i]--;
        break;
      }
}

/* A random shape with n elements (n <= CHK_MAX_NUMEL), rank at most max_nd. */
static uint32_t shape_with_numel(chk_rng *r, int64_t n, int32_t *sh, uint32_t max_nd) {
  uint32_t nd = n == 1 ? rng_below(r, 2) : 1 + rng_below(r, max_nd < 3 ? max_nd : 3);
  if (nd == 0) return 0;
  for (uint32_t i = 0; i < nd; i++) sh[i] = 1;
  for (int64_t p = 2; n > 1; p++)
    while (n % p == 0) {
      sh[rng_below(r, nd)] *= (int32_t)p;
      n /= p;
    }
  return nd;
}

static chk_req scalar_req(uint32_t dts) { return (chk_req){.dts = dts, .fixed = 1}; }

static void remember(chk_gen *g, int64_t v) {
  if (g->npool < CHK_POOL) g->pool[g->npool++] = v;
}

/* ---- leaves ----------------------------------------------------------------- */

static uopc_node *gen_const(chk_gen *g, const chk_req *q) {
  if (q->fixed && q->nd) return NULL; /* constants are scalars */
  uopc_dtype t = pick_dtype(g->r, q->dts);
  if (t == UOPC_DT_VOID) return NULL;
  if (t == UOPC_DT_BOOL) return uopc_const_i(g->c, t, rng_below(g->r, 2));
  if (t != UOPC_DT_I32) return uopc_const_f(g->c, t, chk_rand_float(g->r, t, 0));
  int64_t v;
  uint32_t k = rng_below(g->r, 100);
  if (q->divisor && k < 80) { /* a divisor: small, or one that divides a constant of the dividend */
    static const int64_t small[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 32, 64, 100, 256, 1024, 65536};
    int64_t p = g->npool ? g->pool[rng_below(g->r, g->npool)] : 0;
    if (k < 35 && p != 0 && p != INT32_MIN) {
      p = p < 0 ? -p : p;
      static const int64_t f[] = {1, 2, 3, 4, 8};
      int64_t d = f[rng_below(g->r, 5)];
      v = p % d == 0 ? p / d : p;
    } else {
      v = small[rng_below(g->r, NELEM(small))];
    }
    if (rng_pct(g->r, 10)) v = -v;
  } else if (q->dim > 0 && k < 85) /* an index: in bounds mostly, just outside sometimes */
    v = k < 70 ? (int64_t)rng_below(g->r, (uint32_t)q->dim) : (k < 78 ? -1 : q->dim);
  else if (g->in_end && k < 85) /* a RANGE end in a kernel: small enough to interpret */
    v = (int64_t)rng_below(g->r, 16) - 3;
  else if (g->fam == CHK_KERNEL && k < 60)
    v = (int64_t)rng_below(g->r, 45) - 4;
  else
    v = chk_rand_i32(g->r, g->pool, g->npool);
  remember(g, v);
  return uopc_const_i(g->c, t, v);
}

/* A CONST equal to the literal, of a dtype that can hold it (0 in a float
   dtype is 0.0 or -0.0: the literal matches both). */
static uopc_node *gen_lit(chk_gen *g, double lit, const chk_req *q) {
  if (q->fixed && q->nd) return NULL;
  uint32_t m = q->dts;
  if (lit != 0 && lit != 1) m &= ~DTB(UOPC_DT_BOOL);
  if (!(lit == floor(lit) && lit >= INT32_MIN && lit <= INT32_MAX)) m &= ~DTB(UOPC_DT_I32);
  uopc_dtype t = pick_dtype(g->r, m);
  if (t == UOPC_DT_VOID) return NULL;
  if (!uopc_dtype_is_float(t)) return uopc_const_i(g->c, t, (int64_t)lit);
  return uopc_const_f(g->c, t, lit == 0 && rng_pct(g->r, 50) ? -0.0 : lit);
}

static uopc_node *gen_buffer(chk_gen *g, uopc_dtype t, int32_t n) {
  if (g->next_slot >= CHK_NSLOTS - 1) return NULL; /* the last slot is the kernel's output */
  return uopc_buffer(g->c, g->next_slot++, t, n);
}

/* LOAD of an element of a kernel's input buffer of dtype t (end: the buffer
   of small values for RANGE ends). */
static uopc_node *gen_load(chk_gen *g, uopc_dtype t, int end) {
  uopc_node **b = end ? &g->endbuf : &g->inbuf[t];
  if (!*b && !(*b = gen_buffer(g, end ? UOPC_DT_I32 : t, end ? 4 : 8))) return NULL;
  uopc_node *k = uopc_const_i(g->c, UOPC_DT_I32, rng_below(g->r, (uint32_t)(*b)->shape[0]));
  return uopc_load(g->c, uopc_index(g->c, *b, &k, 1));
}

static uopc_node *gen_range(chk_gen *g) {
  if (g->nranges && rng_pct(g->r, 35)) return g->ranges[rng_below(g->r, g->nranges)];
  uopc_node *end;
  if (g->fam == CHK_KERNEL) {
    /* ends in normal form (a constant or a LOAD): simplify_index runs after
       simplify_range has simplified every RANGE below it */
    if (rng_pct(g->r, 20)) end = gen_load(g, UOPC_DT_I32, 1);
    else end = uopc_const_i(g->c, UOPC_DT_I32, rng_pct(g->r, 80) ? 1 + rng_below(g->r, 8) : 9 + rng_below(g->r, 24));
  } else if (rng_pct(g->r, 5)) {
    end = uopc_param(g->c, rng_below(g->r, 4), UOPC_DT_I32, NULL, 0); /* an end known only at run time */
  } else {
    end = uopc_const_i(g->c, UOPC_DT_I32, rand_range_end(g->r));
  }
  uopc_node *r = uopc_range(g->c, end, g->next_idx++);
  if (r && g->nranges < NELEM(g->ranges)) g->ranges[g->nranges++] = r;
  return r;
}

/* A PARAM of the CALL body being built with this dtype and shape, or NULL. */
static uopc_node *scope_param(chk_gen *g, uint32_t dts, uint32_t nd, const int32_t *sh) {
  uopc_node *ok[4];
  uint32_t n = 0;
  for (uint32_t i = 0; i < g->nscope && n < 4; i++) {
    uopc_node *p = g->scope[i];
    if ((dts >> p->dtype & 1) && p->ndim == nd && (nd == 0 || memcmp(p->shape, sh, nd * sizeof *sh) == 0)) ok[n++] = p;
  }
  return n ? ok[rng_below(g->r, n)] : NULL;
}

/* A scalar leaf. */
static uopc_node *gen_leaf(chk_gen *g, const chk_req *q) {
  uopc_dtype t = pick_dtype(g->r, q->dts);
  if (t == UOPC_DT_VOID) return NULL;
  chk_req one = *q;
  one.dts = DTB(t);
  uint32_t k = rng_below(g->r, 100);
  switch (g->fam) {
  case CHK_SCALAR:
    if (t == UOPC_DT_I32) {
      if (k < 35) return gen_const(g, &one);
      if (k < 65) return uopc_param(g->c, rng_below(g->r, 4), t, NULL, 0);
      return gen_range(g);
    }
    return k < 40 ? gen_const(g, &one) : uopc_param(g->c, rng_below(g->r, 4), t, NULL, 0);
  case CHK_KERNEL:
    if (g->in_end) return t == UOPC_DT_I32 && k >= 80 ? gen_load(g, t, 1) : gen_const(g, &one);
    if (t == UOPC_DT_I32) {
      if (k < 40) return gen_const(g, &one);
      if (k < 85) return gen_range(g);
      return gen_load(g, t, 0);
    }
    return k < 50 ? gen_const(g, &one) : gen_load(g, t, 0);
  case CHK_EVAL: {
    if (q->dim > 0 && t == UOPC_DT_I32 && k < 85) { /* an index: a constant, or a PARAM % dim */
      if (k < 60 || g->scope) return gen_const(g, &one);
      uopc_node *p = uopc_param(g->c, CHK_FREE_SLOT + rng_below(g->r, 4), t, NULL, 0);
      return uopc_mod(g->c, p, uopc_const_i(g->c, t, q->dim));
    }
    if (k < 50) return gen_const(g, &one);
    if (g->scope) {
      uopc_node *p = scope_param(g, one.dts, 0, NULL);
      return p ? p : gen_const(g, &one);
    }
    return uopc_param(g->c, CHK_FREE_SLOT + rng_below(g->r, 4), t, NULL, 0);
  }
  }
  return NULL;
}

/* ---- nodes ------------------------------------------------------------------ */

static uopc_node *gen_part(chk_gen *g, uint32_t pi, const chk_req *q, int depth);
static uopc_node *gen_any(chk_gen *g, const chk_req *q, int depth);

/* The dtypes sub-pattern i of p allows (a bound name: its node's dtype). */
static uint32_t sub_dts(const chk_gen *g, const uopc_pattern_part *p, uint32_t i) {
  if (!p || !p->has_src || i >= p->nsrc || p->src[i] >= g->nparts) return CHK_DT4;
  const uopc_pattern_part *s = &g->parts[p->src[i]];
  if (s->var >= 0 && s->var < CHK_MAX_VARS && g->var[s->var]) return DTB(g->var[s->var]->dtype);
  return s->dtypes & CHK_DT4;
}

/* Which dtype source i of op carries: 'D' the result's, 'T' the shared
   operand dtype, 'b' bool, 'i' i32, '*' its own. */
static char src_role(uopc_op op, uint32_t i) {
  switch (op) {
  case UOPC_OP_ADD: case UOPC_OP_MUL: case UOPC_OP_MAX: case UOPC_OP_RECIP: case UOPC_OP_EXP2:
  case UOPC_OP_LOG2: case UOPC_OP_SQRT: case UOPC_OP_SIN: case UOPC_OP_STACK: case UOPC_OP_RESHAPE:
  case UOPC_OP_EXPAND: case UOPC_OP_PERMUTE: case UOPC_OP_SHRINK: case UOPC_OP_REDUCE: case UOPC_OP_LOAD:
    return 'D';
  case UOPC_OP_CMPLT: case UOPC_OP_CMPNE: case UOPC_OP_CAST: return 'T';
  case UOPC_OP_FLOORDIV: case UOPC_OP_FLOORMOD: case UOPC_OP_RANGE: return 'i';
  case UOPC_OP_WHERE: return i == 0 ? 'b' : 'D';
  case UOPC_OP_INDEX: return i == 0 ? 'D' : 'i';
  case UOPC_OP_CALL: return i == 0 ? 'D' : '*';
  default: return '*';
  }
}

/* A source the pattern does not give. */
static uopc_node *gen_default_src(chk_gen *g, uopc_op op, uint32_t i, const chk_req *q, int depth) {
  int binary = (uopc_op_flags(op) & UOPC_OPF_ALU) && uopc_op_arity(op) == 2;
  if (op == UOPC_OP_INDEX && g->fam == CHK_KERNEL && i == 0) {
    uopc_dtype t = pick_dtype(g->r, q->dts);
    return t == UOPC_DT_VOID ? NULL : gen_buffer(g, t, 1 + (int32_t)rng_below(g->r, 32));
  }
  if (op == UOPC_OP_LOAD) { /* the address of an input element */
    uopc_dtype t = pick_dtype(g->r, q->dts);
    if (t == UOPC_DT_VOID || g->fam != CHK_KERNEL) return NULL;
    uopc_node *l = gen_load(g, t, 0);
    return l ? l->src[0] : NULL;
  }
  if (binary && g->fam != CHK_EVAL && !q->nd) { /* x op k is the common shape of index math */
    if ((i == 1 && rng_pct(g->r, 55)) || (i == 0 && rng_pct(g->r, 8))) return gen_const(g, q);
  }
  return gen_any(g, q, depth);
}

/* A node of op with random choices; p (may be NULL) gives sub-patterns for
   its first sources. */
static uopc_node *gen_op(chk_gen *g, uopc_op op, const uopc_pattern_part *p, const chk_req *q, int depth) {
  if (g->budget-- <= 0 || depth > MAX_DEPTH + 6) return NULL;
  uopc_ctx *c = g->c;
  chk_rng *R = g->r;
  uint32_t npat = p && p->has_src ? p->nsrc : 0;
  int exact_n = p && p->has_src && !p->any_len; /* exactly npat sources */
  if (npat > 8) return NULL;
  uint32_t dts = q->dts & op_result_dts(op);
  if (!dts) return NULL;
  if (op == UOPC_OP_CONST) return npat ? NULL : gen_const(g, q);
  if (op == UOPC_OP_BUFFER) {
    uopc_dtype t = pick_dtype(R, dts);
    return npat || (q->fixed && q->nd) ? NULL : gen_buffer(g, t, 1 + (int32_t)rng_below(R, 32));
  }
  if (op == UOPC_OP_PARAM || (uopc_op_flags(op) & UOPC_OPF_EFFECT)) return NULL;

  /* the shape */
  chk_req shp = *q;
  if (!shp.fixed) {
    if (g->fam == CHK_EVAL) pick_shape(R, &shp, op != UOPC_OP_STACK);
    else shp.fixed = 1, shp.nd = 0;
  }
  uint32_t nd = shp.nd;
  int32_t sh[CHK_MAX_DIMS];
  memcpy(sh, shp.sh, sizeof sh);
  int scalar_only = op == UOPC_OP_RANGE || op == UOPC_OP_LOAD || (op == UOPC_OP_INDEX && g->fam == CHK_KERNEL);
  if (nd && scalar_only) return NULL;
  if (op == UOPC_OP_STACK && nd == 0) return NULL;

  /* the result dtype D and the operand dtype T, agreeing with the sub-patterns */
  uint32_t dm = dts, tm = CHK_DT4;
  for (uint32_t i = 0; i < npat; i++) {
    char role = src_role(op, i);
    if (role == 'D') dm &= sub_dts(g, p, i);
    if (role == 'T') tm &= sub_dts(g, p, i);
  }
  uopc_dtype D = pick_dtype(R, dm), T = pick_dtype(R, tm);
  if (D == UOPC_DT_VOID || T == UOPC_DT_VOID) return NULL;

  /* the number of sources */
  int arity = uopc_op_arity(op);
  uint32_t total;
  if (arity >= 0) {
    total = (uint32_t)arity;
    if (npat > total || (exact_n && npat != total)) return NULL;
  } else if (op == UOPC_OP_STACK) {
    if (exact_n || npat > (uint32_t)sh[0]) {
      if (shp.fixed && q->fixed && (uint32_t)sh[0] != npat) return NULL;
      sh[0] = (int32_t)npat;
    }
    if (sh[0] < 1 || numel_of(sh, nd) > CHK_MAX_NUMEL) return NULL;
    total = (uint32_t)sh[0];
  } else if (op == UOPC_OP_INDEX) {
    if (g->fam == CHK_KERNEL) {
      total = 2;
      if (npat > 2 || (exact_n && npat != 2)) return NULL;
    } else {
      uint32_t nidx = exact_n ? npat - 1 : rng_below(R, 3);
      if (npat && nidx < npat - 1) nidx = npat - 1;
      if (nd + nidx > CHK_MAX_DIMS) return NULL;
      total = 1 + nidx;
    }
  } else if (op == UOPC_OP_CALL) {
    uint32_t nargs = exact_n ? npat - 1 : rng_below(R, 4);
    if (npat && nargs < npat - 1) nargs = npat - 1;
    if (nargs > 4 || g->call_depth >= 2) return NULL;
    total = 1 + nargs;
  } else {
    return NULL;
  }
  if (total > 8) return NULL;

  /* what each source must be, and the op's arg */
  chk_req sq[8];
  uopc_arg arg = {0};
  int32_t av[2 * CHK_MAX_DIMS];
  for (uint32_t i = 0; i < total; i++) {
    char role = src_role(op, i);
    uint32_t m = role == 'D' ? DTB(D) : role == 'T' ? DTB(T) : role == 'b' ? DTB(UOPC_DT_BOOL)
               : role == 'i' ? DTB(UOPC_DT_I32) : CHK_DT4;
    sq[i] = (chk_req){.dts = m, .fixed = 1, .nd = nd};
    memcpy(sq[i].sh, sh, sizeof sh);
  }
  switch (op) {
  case UOPC_OP_FLOORDIV: case UOPC_OP_FLOORMOD: sq[1].divisor = 1; break;
  case UOPC_OP_RANGE: sq[0].nd = 0; break;
  case UOPC_OP_STACK:
    for (uint32_t i = 0; i < total; i++) {
      sq[i].nd = nd - 1;
      memmove(sq[i].sh, sh + 1, (nd - 1) * sizeof *sh);
    }
    break;
  case UOPC_OP_INDEX:
    for (uint32_t i = 1; i < total; i++) sq[i].nd = 0;
    if (g->fam == CHK_EVAL) { /* source 0: (index dims) + shape */
      uint32_t nidx = total - 1;
      int32_t pre[CHK_MAX_DIMS];
      for (uint32_t j = 0; j < nidx; j++) pre[j] = 1 + (int32_t)rng_below(R, 4);
      for (uint32_t j = 0; j < nidx && numel_of(pre, nidx) * numel_of(sh, nd) > CHK_MAX_NUMEL; j++) pre[j] = 1;
      if (numel_of(pre, nidx) * numel_of(sh, nd) > CHK_MAX_NUMEL) return NULL;
      sq[0].nd = nidx + nd;
      memcpy(sq[0].sh, pre, nidx * sizeof *pre);
      memcpy(sq[0].sh + nidx, sh, nd * sizeof *sh);
    }
    break;
  case UOPC_OP_CALL:
    for (uint32_t i = 1; i < total; i++) {
      if (i == 1 && rng_pct(R, 60)) { /* often an argument like the result */
        sq[i].dts = DTB(D);
        continue;
      }
      sq[i].fixed = 0;
      sq[i].dts = CHK_DT4;
    }
    break;
  case UOPC_OP_RESHAPE:
    sq[0].nd = shape_with_numel(R, numel_of(sh, nd), sq[0].sh, CHK_MAX_DIMS);
    arg.n = nd, arg.v = sh;
    break;
  case UOPC_OP_EXPAND: {
    int any = 0;
    for (uint32_t i = 0; i < nd; i++)
      if (sh[i] > 1 && rng_pct(R, 50)) sq[0].sh[i] = 1, any = 1;
    if (!any)
      for (uint32_t i = 0; i < nd; i++)
        if (sh[i] > 1) {
          sq[0].sh[i] = 1;
          break;
        }
    arg.n = nd, arg.v = sh;
    break;
  }
  case UOPC_OP_PERMUTE:
    for (uint32_t i = 0; i < nd; i++) av[i] = (int32_t)i;
    for (uint32_t i = nd; i > 1; i--) {
      uint32_t j = rng_below(R, i);
      int32_t t = av[i - 1];
      av[i - 1] = av[j], av[j] = t;
    }
    for (uint32_t i = 0; i < nd; i++) sq[0].sh[av[i]] = sh[i]; /* output axis i is input axis perm[i] */
    arg.n = nd, arg.v = av;
    break;
  case UOPC_OP_SHRINK:
    for (uint32_t i = 0; i < nd; i++) {
      sq[0].sh[i] = sh[i] + (int32_t)rng_below(R, 3);
      av[2 * i] = (int32_t)rng_below(R, (uint32_t)(sq[0].sh[i] - sh[i] + 1));
      av[2 * i + 1] = av[2 * i] + sh[i];
    }
    if (numel_of(sq[0].sh, nd) > CHK_MAX_NUMEL) memcpy(sq[0].sh, sh, sizeof sh), memset(av, 0, sizeof av);
    for (uint32_t i = 0; i < nd; i++) av[2 * i + 1] = av[2 * i] + sh[i];
    arg.n = nd, arg.v = av;
    break;
  case UOPC_OP_REDUCE: {
    uint32_t k = 1 + rng_below(R, 2);
    if (nd + k > CHK_MAX_DIMS) k = CHK_MAX_DIMS - nd;
    if (k == 0) return NULL;
    for (uint32_t j = 0; j < k; j++) sq[0].sh[nd + j] = 1 + (int32_t)rng_below(R, 3);
    while (numel_of(sq[0].sh, nd + k) > CHK_MAX_NUMEL)
      for (uint32_t j = 0; j < k; j++)
        if (sq[0].sh[nd + j] > 1) {
          sq[0].sh[nd + j]--;
          break;
        }
    sq[0].nd = nd + k;
    static const uopc_op rops[] = {UOPC_OP_ADD, UOPC_OP_MUL, UOPC_OP_MAX};
    arg.rop = rops[rng_below(R, 3)];
    arg.i = k;
    break;
  }
  default: break;
  }

  /* the sources (a CALL's arguments before its body, which uses them) */
  uopc_node *src[8] = {0}, *params[4];
  for (uint32_t k = 0; k < total; k++) {
    uint32_t i = op == UOPC_OP_CALL ? (k + 1) % total : k;
    chk_req s = sq[i];
    if (op == UOPC_OP_INDEX && i >= 1 && src[0]) {
      if (src[0]->op == UOPC_OP_BUFFER) s.dim = src[0]->shape[0];
      else if (i - 1 < src[0]->ndim) s.dim = src[0]->shape[i - 1];
    }
    if (!s.fixed) pick_shape(R, &s, 1);
    uopc_node *const *old_scope = g->scope;
    uint32_t old_n = g->nscope;
    int old_end = g->in_end;
    if (op == UOPC_OP_CALL && i == 0) { /* the body sees the arguments as PARAMs 0..n-1 */
      for (uint32_t j = 1; j < total; j++) {
        params[j - 1] = uopc_param(c, j - 1, (uopc_dtype)src[j]->dtype, src[j]->shape, src[j]->ndim);
        if (!params[j - 1]) return NULL;
      }
      g->scope = params, g->nscope = total - 1;
      g->call_depth++;
    }
    if (op == UOPC_OP_RANGE) g->in_end = 1;
    src[i] = i < npat ? gen_part(g, p->src[i], &s, depth + 1) : gen_default_src(g, op, i, &s, depth + 1);
    g->in_end = old_end;
    if (op == UOPC_OP_CALL && i == 0) {
      g->scope = old_scope, g->nscope = old_n;
      g->call_depth--;
    }
    if (!src[i]) return NULL;
  }
  if (p && p->any_order && (uopc_op_flags(op) & UOPC_OPF_COMM) && total == 2 && rng_pct(R, 50)) {
    uopc_node *t = src[0];
    src[0] = src[1], src[1] = t;
  }
  if (op == UOPC_OP_RANGE) {
    uopc_node *r = uopc_range(c, src[0], g->next_idx++);
    if (r && g->nranges < NELEM(g->ranges)) g->ranges[g->nranges++] = r;
    return r;
  }
  return uopc_make(c, op, op == UOPC_OP_CAST ? D : UOPC_DT_VOID, src, total, &arg);
}

/* A STACK tree of constants (a value run can move), of dtype t and shape q. */
static uopc_node *gen_literal(chk_gen *g, uopc_dtype t, const chk_req *q) {
  uopc_node *lvl[CHK_MAX_NUMEL];
  int64_t n = numel_of(q->sh, q->nd);
  chk_req one = scalar_req(DTB(t));
  for (int64_t i = 0; i < n; i++)
    if (!(lvl[i] = gen_const(g, &one))) return NULL;
  for (uint32_t d = q->nd; d-- > 0;) { /* group the innermost axis into STACKs */
    int64_t groups = n / q->sh[d];
    for (int64_t j = 0; j < groups; j++)
      if (!(lvl[j] = uopc_stack(g->c, lvl + j * q->sh[d], (uint32_t)q->sh[d]))) return NULL;
    n = groups;
  }
  return lvl[0];
}

/* A random value of what q asks (CHK_EVAL), shaped or scalar. */
static uopc_node *gen_any_eval(chk_gen *g, const chk_req *q, int depth) {
  chk_req s = *q;
  if (!s.fixed) pick_shape(g->r, &s, 1);
  if (g->scope && rng_pct(g->r, 40)) { /* in a CALL body: its PARAMs often */
    uopc_node *p = scope_param(g, s.dts, s.nd, s.sh);
    if (p) return p;
  }
  uint32_t k = rng_below(g->r, 100);
  if (depth >= MAX_DEPTH - 1) k = s.nd ? k % 55 : 0; /* deep: leaves, and STACKs that end in leaves */
  uopc_op op;
  if (s.nd == 0) {
    if (k < 50 || (s.dim > 0 && k < 85)) return gen_leaf(g, &s);
    op = k < 70 ? pick_op(g->r, alu_ops(), s.dts) : k < 82 ? UOPC_OP_INDEX : k < 90 ? UOPC_OP_REDUCE : UOPC_OP_CALL;
  } else if (k < 20) {
    uopc_dtype t = pick_dtype(g->r, s.dts);
    if (t == UOPC_DT_VOID) return NULL;
    if (g->scope) {
      uopc_node *p = scope_param(g, DTB(t), s.nd, s.sh);
      if (p) return p;
      op = UOPC_OP_STACK;
    } else {
      return uopc_param(g->c, CHK_FREE_SLOT + rng_below(g->r, 4), t, s.sh, s.nd);
    }
  } else if (k < 35) {
    uopc_dtype t = pick_dtype(g->r, s.dts);
    return t == UOPC_DT_VOID ? NULL : gen_literal(g, t, &s);
  } else if (k < 55) {
    op = UOPC_OP_STACK;
  } else if (k < 75) {
    static const uopc_op mv[] = {UOPC_OP_RESHAPE, UOPC_OP_EXPAND, UOPC_OP_PERMUTE, UOPC_OP_SHRINK};
    op = mv[rng_below(g->r, 4)];
  } else {
    op = k < 85 ? pick_op(g->r, alu_ops(), s.dts) : k < 90 ? UOPC_OP_INDEX : k < 95 ? UOPC_OP_REDUCE : UOPC_OP_CALL;
  }
  if (op != UOPC_OP_COUNT) {
    uopc_node *n = gen_op(g, op, NULL, &s, depth);
    if (n) return n;
    uopc_ctx_clear_error(g->c);
  }
  if (s.nd == 0) return gen_leaf(g, &s);
  uopc_node *n = gen_op(g, UOPC_OP_STACK, NULL, &s, depth);
  if (!n) uopc_ctx_clear_error(g->c);
  return n;
}

/* A random leaf or small subexpression of what q asks. */
static uopc_node *gen_any(chk_gen *g, const chk_req *q, int depth) {
  if (g->fam == CHK_EVAL) return gen_any_eval(g, q, depth);
  chk_req s = *q;
  s.fixed = 1, s.nd = 0;
  if (g->fam == CHK_KERNEL && s.dim > 0 && (s.dts & DTB(UOPC_DT_I32)) && depth < MAX_DEPTH && rng_pct(g->r, 40)) {
    /* an index that lands inside its buffer more often: x % n */
    chk_req x = scalar_req(DTB(UOPC_DT_I32));
    uopc_node *a = gen_any(g, &x, depth + 1);
    uopc_node *m = a ? uopc_mod(g->c, a, uopc_const_i(g->c, UOPC_DT_I32, s.dim)) : NULL;
    if (m) return m;
    uopc_ctx_clear_error(g->c);
  }
  s.dim = 0;
  int leaf = depth >= MAX_DEPTH ? 100 : depth <= 1 ? 30 : 55;
  if (!rng_pct(g->r, (unsigned)leaf))
    for (int a = 0; a < 3; a++) {
      uopc_op op = pick_op(g->r, alu_ops(), s.dts);
      if (op == UOPC_OP_COUNT) break;
      uopc_node *n = gen_op(g, op, NULL, &s, depth);
      if (n) return n;
      uopc_ctx_clear_error(g->c);
    }
  return gen_leaf(g, &s);
}

/* A node matching part pi of the pattern and q. */
static uopc_node *gen_part(chk_gen *g, uint32_t pi, const chk_req *q, int depth) {
  if (pi >= g->nparts) return NULL;
  const uopc_pattern_part *p = &g->parts[pi];
  int var = p->var >= 0 && p->var < CHK_MAX_VARS ? p->var : -1;
  if (var >= 0 && g->var[var]) return g->var[var]; /* a repeated name: the same node */
  chk_req s = *q;
  s.dts &= p->dtypes;
  if (!s.dts) return NULL;
  uopc_node *n = NULL;
  if (p->has_lit) {
    n = gen_lit(g, p->lit, &s);
  } else if (!p->has_src && (p->ops & ALL_OPS) == ALL_OPS) {
    n = gen_any(g, &s, depth);
  } else {
    uint64_t ops = p->ops & fam_ops(g->fam);
    uopc_node *saved[CHK_MAX_VARS];
    memcpy(saved, g->var, sizeof saved);
    for (int a = 0; a < 4 && !n; a++) {
      uopc_op op = pick_op(g->r, ops, s.dts);
      if (op == UOPC_OP_COUNT) break;
      n = gen_op(g, op, p, &s, depth);
      if (!n) {
        memcpy(g->var, saved, sizeof saved);
        uopc_ctx_clear_error(g->c);
      }
    }
  }
  if (n && var >= 0) g->var[var] = n;
  return n;
}

uopc_node *chk_gen_instance(chk_gen *g) {
  memset(g->var, 0, sizeof g->var);
  g->budget = 400;
  g->npool = 0;
  g->next_idx = 0;
  g->nranges = 0;
  g->next_slot = 0;
  memset(g->inbuf, 0, sizeof g->inbuf);
  g->endbuf = NULL;
  g->in_end = 0;
  g->scope = NULL;
  g->nscope = 0;
  g->call_depth = 0;
  chk_req q = {.dts = CHK_DT4, .fixed = g->fam != CHK_EVAL};
  uopc_node *n = gen_part(g, 0, &q, 0);
  if (!n) uopc_ctx_clear_error(g->c);
  return n;
}
