/* lib/schedule/lower.c - one materialized node as a loop kernel (rangeify).
 *
 * The node's output gets one RANGE per axis of size > 1 (a size-1 axis is
 * the constant 0).  Its value at that index vector is built by pushing the
 * vector back through the program, consumers before producers, without
 * recursion (an explicit stack of (node, index vector) tasks, memoized):
 *
 *   elementwise op     its sources at the same vector
 *   RESHAPE            ravel the vector over the output shape, unravel it
 *                      over the input shape, simplify (exact rules: bounds
 *                      of RANGEs make (i*8+j)//8 -> i)
 *   EXPAND             0 on the axes it grows, the vector elsewhere
 *   PERMUTE            input axis perm[i] gets output axis i
 *   SHRINK             + the begin of each axis
 *   INDEX(x, i...)     x at (i..., vector); a constant index is checked now,
 *                      a computed one clamped into range and checked at run
 *                      time (poison)
 *   a buffer           LOAD of INDEX(buffer, ravel(vector)): PARAMs,
 *                      constants, temporaries
 *
 * A REDUCE accumulates exactly as `run` does: the first element of each
 * output, then op(acc, x) for the others, left to right in C order of the
 * reduced axes, in the output's memory (read after write is sequential in
 * kernels).  The reduced axes are one flat range: the first element is
 * peeled (acc = x[0]; loop t < P-1: acc = op(acc, x[t+1]), t+1 unravelled
 * over the reduced shape).
 *
 * Undefined operations (docs/semantics.md, "Undefined operations in plans")
 * are poison: each op that can be undefined gets a check (a code), its
 * value a poison rank (0: defined), every op takes the largest rank of its
 * sources except WHERE, which takes its condition's and the selected arm's.
 * A temporary that can hold poison gets a poison buffer beside it (a rank
 * per element), written with each element and read with it by consumers,
 * so poison that no consumer uses is dropped as `run` drops it.  At the
 * result's stores the rank is folded into the kernel's status buffer
 * (status[0] = max(status[0], rank), the lowest code winning): a non-zero
 * status fails the plan call.
 *
 * The operands of a failing check (for the message) are recorded only by a
 * second variant of the kernel, a word carried through memory from element
 * to element, which keeps LLVM from vectorizing the loop.  So a kernel with
 * checks is lowered twice from the same graph: the plain variant (no
 * records: the rank reductions and the stores, which vectorize) that every
 * call runs, and the recording variant, which the plan call runs again,
 * once, only on the kernel that computes the failing op when the result's
 * status is non-zero, with status[0] set to the failing rank.  Each check
 * records at its element's store site, where the element's rank is known:
 *
 *   status[1..] = where(rank of this check == status[0] and
 *                       rank of the element's store == status[0], operand, itself)
 *   status[3]   = where(the same, 1, itself)          (something recorded)
 *
 * so only the failing check records (checks of one kind share the words),
 * and only at an element whose poison reaches the store (a WHERE that drops
 * it leaves the store's rank below; in the result's kernel the store's rank
 * is what reaches the result).  Kernels are deterministic and the buffers it
 * reads are unchanged by then, so the second run sees what the first did.
 */
#include <string.h>

#include "algebra/rules.h"
#include "core/ctx.h"
#include "schedule/schedule.h"
#include "uopc/algebra.h"
#include "uopc/jit.h"

#define RANK(code) (1000000 - (int64_t)(code))

typedef struct res {
  uopc_node *v;   /* the scalar value */
  uopc_node *pc;  /* its poison rank (i32), NULL: never poison */
} res;

typedef struct vecs {       /* interned index vectors */
  uopc_node **pool;         /* all vectors' entries, concatenated */
  uint32_t npool, cap_pool;
  uint32_t *off, *len;      /* vector k: pool[off[k] .. off[k] + len[k]) */
  uint32_t n, cap_off, cap_len;
} vecs;

typedef struct memo_e {
  uint64_t key;             /* node id << 32 | vector id, + 1 (0: empty) */
  res r;
} memo_e;

typedef struct frame {
  uopc_node *x;
  uint32_t vec;
  uint32_t state;
  uint32_t kids;            /* offset of its children in L->kid (pairs node, vec) */
  uint32_t nkids;
} frame;

typedef struct lctx {
  uopi_schedule *s;
  const uopi_realized *r;
  uopc_ctx *c;
  uint32_t self;            /* the buffer being computed */
  vecs v;
  memo_e *memo;
  uint32_t memo_cap, memo_n;
  frame *st;
  uint32_t nst, cap_st;
  uopc_node **kid;          /* children: node, then its vector id as a pointer-sized int */
  uint32_t nkid, cap_kid;
  uopi_nodes fx;            /* effects of the current store site (records) */
  uopi_nodes pend;          /* records of the current site, made at the site:
                               (address, check rank, operand) triples */
  uint32_t status, statusf; /* the kernel's status buffers (UINT32_MAX until needed) */
  uopc_node *s0;            /* LOAD of status[0] */
  int norec;                /* lowering the plain variant: no records */
  uint32_t nrec;            /* records made (by the recording variant) */
  int failed;
  double tiled;             /* loop_nest made a register tile: its work */
} lctx;

/* ---- small constructors ---- */

static uopc_node *I(lctx *L, int64_t v) { return uopc_const_i(L->c, UOPC_DT_I32, v); }
static uopc_node *B(lctx *L, int v) { return uopc_const_i(L->c, UOPC_DT_BOOL, v); }
static uopc_node *not_(lctx *L, uopc_node *b) { return uopc_ne(L->c, b, B(L, 1)); }
static uopc_node *and_(lctx *L, uopc_node *a, uopc_node *b) { return uopc_mul(L->c, a, b); }
static uopc_node *eq(lctx *L, uopc_node *a, uopc_node *b) { return not_(L, uopc_ne(L->c, a, b)); }
static uopc_node *rmax(lctx *L, uopc_node *a, uopc_node *b) { return !a ? b : !b ? a : uopc_max(L->c, a, b); }

static uopc_node *buffer_node(lctx *L, uint32_t b) {
  const uopi_pbuf *pb = &L->s->bufs[b];
  return uopc_buffer(L->c, b, pb->dtype, (int32_t)pb->numel);
}

static uopc_node *simp(lctx *L, uopc_node *u) { return u ? uopc_simplify(L->c, u) : NULL; }

/* sum of vec[i] * stride(shape)[i], simplified: the flat element index */
static uopc_node *ravel(lctx *L, uopc_node *const *vec, const int32_t *shape, uint32_t nd) {
  uopc_node *flat = NULL;
  int64_t stride = 1;
  for (uint32_t i = nd; i-- > 0;) {
    uopc_node *t = stride == 1 ? vec[i] : uopc_mul(L->c, vec[i], I(L, stride));
    flat = flat ? uopc_add(L->c, t, flat) : t;
    stride *= shape[i];
  }
  return flat ? simp(L, flat) : I(L, 0);
}

static uopc_node *load(lctx *L, uint32_t b, uopc_node *const *vec, const int32_t *shape, uint32_t nd) {
  uopc_node *idx = ravel(L, vec, shape, nd);
  return uopc_load(L->c, uopc_index(L->c, buffer_node(L, b), &idx, 1));
}

/* ---- interned vectors ---- */

static uint32_t vec_intern(lctx *L, uopc_node *const *e, uint32_t n) {
  vecs *v = &L->v;
  for (uint32_t k = 0; k < v->n; k++) /* few distinct vectors per kernel: a scan from the newest */
    if (v->len[v->n - 1 - k] == n && memcmp(v->pool + v->off[v->n - 1 - k], e, n * sizeof *e) == 0) return v->n - 1 - k;
  if (!uopi_grow(L->c, (void **)&v->pool, &v->cap_pool, v->npool + n + 1, sizeof *v->pool) ||
      !uopi_grow(L->c, (void **)&v->off, &v->cap_off, v->n + 1, sizeof *v->off) ||
      !uopi_grow(L->c, (void **)&v->len, &v->cap_len, v->n + 1, sizeof *v->len)) {
    L->failed = 1;
    return 0;
  }
  if (n) memcpy(v->pool + v->npool, e, n * sizeof *e);
  v->off[v->n] = v->npool;
  v->len[v->n] = n;
  v->npool += n;
  return v->n++;
}

static uopc_node *const *vec_at(const lctx *L, uint32_t k) { return L->v.pool + L->v.off[k]; }

/* ---- the memo ---- */

static memo_e *memo_find(lctx *L, uint64_t key) {
  if (!L->memo_cap) return NULL;
  uint32_t mask = L->memo_cap - 1, h = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;
  for (;; h = (h + 1) & mask) {
    if (L->memo[h].key == key) return &L->memo[h];
    if (L->memo[h].key == 0) return NULL;
  }
}

static int memo_put(lctx *L, uint64_t key, res r) {
  if (2 * (L->memo_n + 1) > L->memo_cap) {
    uint32_t ncap = L->memo_cap ? 2 * L->memo_cap : 256;
    memo_e *nm = uopc_mem_alloc(L->c, (size_t)ncap * sizeof *nm);
    if (!nm) return 0;
    memset(nm, 0, (size_t)ncap * sizeof *nm);
    memo_e *old = L->memo;
    uint32_t ocap = L->memo_cap;
    L->memo = nm, L->memo_cap = ncap, L->memo_n = 0;
    for (uint32_t i = 0; i < ocap; i++)
      if (old[i].key && !memo_put(L, old[i].key, old[i].r)) return 0;
    uopc_mem_free(L->c, old, (size_t)ocap * sizeof *old);
  }
  uint32_t mask = L->memo_cap - 1, h = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;
  while (L->memo[h].key) h = (h + 1) & mask;
  L->memo[h].key = key;
  L->memo[h].r = r;
  L->memo_n++;
  return 1;
}

static void memo_clear(lctx *L) {
  if (L->memo) memset(L->memo, 0, (size_t)L->memo_cap * sizeof *L->memo);
  L->memo_n = 0;
}

static uint64_t key_of(const uopc_node *x, uint32_t vec) { return (((uint64_t)x->id << 32) | vec) + 1; }

/* ---- poison ---- */

static int status_bufs(lctx *L, int want_f) {
  uopi_schedule *s = L->s;
  if (L->status == UINT32_MAX) {
    int32_t four = 4;
    L->status = uopi_schedule_add_buf(s, UOPI_PB_STATUS, UOPC_DT_I32, &four, 1, NULL);
    if (L->status == UINT32_MAX) return 0;
    uopc_node *z = I(L, 0);
    L->s0 = uopc_load(L->c, uopc_index(L->c, buffer_node(L, L->status), &z, 1));
  }
  if (want_f && L->statusf == UINT32_MAX) {
    int32_t one = 1;
    L->statusf = uopi_schedule_add_buf(s, UOPI_PB_STATUSF, UOPC_DT_F32, &one, 1, NULL);
    if (L->statusf == UINT32_MAX) return 0;
  }
  return L->s0 != NULL;
}

/* status_buffer[slot] = the operand v of a check of rank rank, recorded at
   the store site (site(), where the element's rank is known) */
static int record(lctx *L, uint32_t buf, int slot, uopc_node *rank, uopc_node *v) {
  if (L->norec) return 1;
  uopc_node *k = I(L, slot);
  uopc_node *addr = uopc_index(L->c, buffer_node(L, buf), &k, 1);
  return addr && uopi_nodes_push(L->c, &L->pend, addr) && uopi_nodes_push(L->c, &L->pend, rank) &&
         uopi_nodes_push(L->c, &L->pend, v);
}

/* The pending records of a store site whose element has rank pc: each writes
   its operand where its check's rank and pc are both status[0] (the rank
   being looked for, set by the plan call), and marks status[3]. */
static int records(lctx *L, uopc_node *pc) {
  uopc_node *last = NULL;
  for (uint32_t i = 0; pc && i + 2 < L->pend.n; i += 3) {
    uopc_node *addr = L->pend.v[i], *rank = L->pend.v[i + 1], *v = L->pend.v[i + 2];
    uopc_node *best = and_(L, eq(L, rank, L->s0), eq(L, pc, L->s0));
    uopc_node *st = uopc_store(L->c, addr, uopc_where(L->c, best, v, uopc_load(L->c, addr)));
    if (!st || !uopi_nodes_push(L->c, &L->fx, st)) return 0;
    if (best != last) {
      uopc_node *three = I(L, 3);
      uopc_node *m = uopc_index(L->c, buffer_node(L, L->status), &three, 1);
      uopc_node *mark = uopc_store(L->c, m, uopc_where(L->c, best, I(L, 1), uopc_load(L->c, m)));
      if (!mark || !uopi_nodes_push(L->c, &L->fx, mark)) return 0;
      last = best;
    }
    L->nrec++;
  }
  L->pend.n = 0;
  return 1;
}

/* A check on the value of program node x: flag (bool) says it fails.  Returns
   the poison rank node (i32), NULL on failure. */
static uopc_node *check(lctx *L, uopi_check_kind kind, const uopc_node *x, int64_t size, uopc_node *flag) {
  uint32_t code = uopi_schedule_add_check(L->s, kind, (uopc_op)x->op, size, x);
  if (!code || !status_bufs(L, kind == UOPI_CHECK_CAST)) return NULL;
  return uopc_where(L->c, flag, I(L, RANK(code)), I(L, 0));
}

/* ---- one node at one vector ---- */

/* The lowered value of a leaf (a node with a buffer, not this kernel's own,
   or a scalar constant); 0 when x is not a leaf here. */
static int leaf(lctx *L, uopc_node *x, uint32_t vec, res *out) {
  uint32_t b1 = (uint32_t)(uintptr_t)uopi_table_get(L->r->buf, x->id);
  if (b1 && b1 - 1 != L->self) {
    const uopi_pbuf pb = L->s->bufs[b1 - 1];
    uopc_node *pc = pb.poison != UINT32_MAX ? load(L, pb.poison, vec_at(L, vec), pb.shape, pb.ndim) : NULL;
    *out = (res){load(L, b1 - 1, vec_at(L, vec), pb.shape, pb.ndim), pc};
    return 1;
  }
  if (x->op == UOPC_OP_CONST) {
    *out = (res){x, NULL};
    return 1;
  }
  return 0;
}

/* The children of x at vec (appended to L->kid), for state 0 of its frame.
   INDEX needs its scalar indices first (state 0), then x at the vector they
   give (state 1). */
static int children(lctx *L, uopc_node *x, uint32_t vec, uint32_t state, const res *kids_res) {
  uopc_node *const *v = vec_at(L, vec);
  uint32_t nv = L->v.len[vec];
  uopc_node *e[UOPC_LIMIT_DIMS];
  uint32_t ne = 0, cvec;
#define KID(node, vv)                                                                          \
  do {                                                                                         \
    if (!uopi_grow(L->c, (void **)&L->kid, &L->cap_kid, L->nkid + 2, sizeof *L->kid)) return 0; \
    L->kid[L->nkid++] = (node);                                                                \
    L->kid[L->nkid++] = (uopc_node *)(uintptr_t)(vv);                                          \
  } while (0)
  switch (x->op) {
  case UOPC_OP_RESHAPE: {
    uopc_node *flat = ravel(L, v, x->shape, x->ndim);
    const uopc_node *in = x->src[0];
    for (uint32_t j = in->ndim; j-- > 0;) {
      if (in->shape[j] == 1) e[j] = I(L, 0);
      else if (j == 0) e[j] = flat;
      else e[j] = uopc_mod_k(L->c, flat, in->shape[j]);
      if (j > 0 && in->shape[j] != 1) flat = uopc_idiv_k(L->c, flat, in->shape[j]);
    }
    ne = in->ndim;
    for (uint32_t j = 0; j < ne; j++) e[j] = simp(L, e[j]);
    break;
  }
  case UOPC_OP_EXPAND:
    ne = x->ndim;
    for (uint32_t j = 0; j < ne; j++) e[j] = x->src[0]->shape[j] == 1 ? I(L, 0) : v[j];
    break;
  case UOPC_OP_PERMUTE:
    ne = x->ndim;
    for (uint32_t j = 0; j < ne; j++) e[x->arg.v[j]] = v[j];
    break;
  case UOPC_OP_SHRINK:
    ne = x->ndim;
    for (uint32_t j = 0; j < ne; j++) {
      int32_t b0 = x->arg.v[2 * j];
      e[j] = b0 ? simp(L, uopc_add(L->c, v[j], I(L, b0))) : v[j];
    }
    break;
  case UOPC_OP_INDEX: {
    uint32_t k = x->nsrc - 1;
    if (state == 0) {
      for (uint32_t j = 0; j < k; j++) KID(x->src[1 + j], 0);
      return 1;
    }
    /* state 1: x->src[0] at (clamped indices..., v) */
    const uopc_node *src = x->src[0];
    for (uint32_t j = 0; j < k; j++) {
      uopc_node *iv = kids_res[j].v;
      int64_t n = src->shape[j];
      if (iv->op == UOPC_OP_CONST && iv->arg.i >= 0 && iv->arg.i < n) {
        e[j] = iv;
      } else { /* computed, or a constant out of range: clamped, checked (poison) */
        e[j] = uopc_simplify(L->c, uopc_mod_k(L->c, iv, (double)n));
      }
    }
    for (uint32_t j = 0; j < nv; j++) e[k + j] = v[j];
    ne = k + nv;
    cvec = vec_intern(L, e, ne);
    KID(x->src[0], cvec);
    return !L->failed;
  }
  default:
    if (!(uopi_op_flags(x->op) & UOPC_OPF_ALU)) {
      uopi_fail_at(L->c, UOPC_ERR_TYPE, x, "%s cannot be lowered here (no buffer of its own)",
                   uopc_op_name((uopc_op)x->op));
      return 0;
    }
    for (uint32_t j = 0; j < x->nsrc; j++) KID(x->src[j], vec);
    return 1;
  }
  for (uint32_t j = 0; j < ne; j++)
    if (!e[j]) return 0;
  cvec = vec_intern(L, e, ne);
  KID(x->src[0], cvec);
  return !L->failed;
#undef KID
}

/* x's result from its children's results. */
static int combine(lctx *L, uopc_node *x, const res *k, uint32_t nk, res *out) {
  uopc_ctx *c = L->c;
  if (uopi_op_flags(x->op) & UOPC_OPF_MOVE) {
    *out = k[0];
    return 1;
  }
  if (x->op == UOPC_OP_INDEX) { /* k: the indices, then the value */
    uint32_t ni = nk - 1;
    uopc_node *pc = k[ni].pc;
    for (uint32_t j = 0; j < ni; j++) {
      pc = rmax(L, pc, k[j].pc);
      uopc_node *iv = k[j].v;
      int64_t n = x->src[0]->shape[j];
      if (iv->op == UOPC_OP_CONST && iv->arg.i >= 0 && iv->arg.i < n) continue;
      if (uopc_vmin(c, iv) >= 0 && uopc_vmax(c, iv) < n) continue;
      uopc_node *bad = not_(L, and_(L, not_(L, uopc_lt(c, iv, I(L, 0))), uopc_lt(c, iv, I(L, n))));
      uopc_node *rank = check(L, UOPI_CHECK_INDEX, x, n, bad);
      if (!rank || !record(L, L->status, 1, rank, iv)) return 0;
      pc = rmax(L, pc, rank);
    }
    *out = (res){k[ni].v, pc};
    return 1;
  }
  uopc_node *src[3];
  uopc_node *pc = NULL;
  for (uint32_t j = 0; j < nk; j++) src[j] = k[j].v;
  uopc_node *v = uopc_replace(c, x, src, nk);
  if (!v) return 0;
  if (x->op == UOPC_OP_WHERE) {
    uopc_node *arm = k[1].pc || k[2].pc ? uopc_where(c, src[0], k[1].pc ? k[1].pc : I(L, 0), k[2].pc ? k[2].pc : I(L, 0)) : NULL;
    pc = rmax(L, k[0].pc, arm);
  } else {
    for (uint32_t j = 0; j < nk; j++) pc = rmax(L, pc, k[j].pc);
  }
  if (x->op == UOPC_OP_FLOORDIV || x->op == UOPC_OP_FLOORMOD) {
    uopc_node *a = src[0], *b = src[1];
    int64_t blo = uopc_vmin(c, b), bhi = uopc_vmax(c, b);
    if (blo <= 0 && bhi >= 0) {
      uopc_node *flag = eq(L, b, I(L, 0));
      uopc_node *rank = check(L, UOPI_CHECK_DIV0, x, 0, flag);
      if (!rank || !record(L, L->status, 1, rank, a) || !record(L, L->status, 2, rank, b)) return 0;
      pc = rmax(L, pc, rank);
    }
    if (uopc_vmin(c, a) == INT32_MIN && blo <= -1 && bhi >= -1) {
      uopc_node *flag = and_(L, eq(L, a, I(L, INT32_MIN)), eq(L, b, I(L, -1)));
      uopc_node *rank = check(L, UOPI_CHECK_OVERFLOW, x, 0, flag);
      if (!rank || !record(L, L->status, 1, rank, a) || !record(L, L->status, 2, rank, b)) return 0;
      pc = rmax(L, pc, rank);
    }
  } else if (x->op == UOPC_OP_CAST && x->dtype == UOPC_DT_I32 && uopc_dtype_is_float((uopc_dtype)src[0]->dtype)) {
    uopc_node *f = src[0]->dtype == UOPC_DT_F32 ? src[0] : uopc_cast(c, src[0], UOPC_DT_F32);
    uopc_node *lo = uopc_const_f(c, UOPC_DT_F32, -2147483648.0), *hi = uopc_const_f(c, UOPC_DT_F32, 2147483648.0);
    uopc_node *valid = and_(L, uopc_lt(c, f, hi), not_(L, uopc_lt(c, f, lo)));
    uopc_node *flag = not_(L, valid);
    uopc_node *rank = check(L, UOPI_CHECK_CAST, x, 0, flag);
    if (!rank || !record(L, L->statusf, 0, rank, f)) return 0;
    pc = rmax(L, pc, rank);
  }
  *out = (res){v, pc};
  return 1;
}

/* The value of program node root at vector vec (iterative, memoized). */
static int lower(lctx *L, uopc_node *root, uint32_t vec, res *out) {
  memo_e *m = memo_find(L, key_of(root, vec));
  if (m) {
    *out = m->r;
    return 1;
  }
  L->nst = 0;
  if (!uopi_grow(L->c, (void **)&L->st, &L->cap_st, 1, sizeof *L->st)) return 0;
  L->st[L->nst++] = (frame){root, vec, 0, 0, 0};
  int ok = 1;
  while (ok && L->nst) {
    frame *f = &L->st[L->nst - 1];
    uint64_t key = key_of(f->x, f->vec);
    if (memo_find(L, key)) {
      L->nst--;
      continue;
    }
    res r;
    if (f->state == 0 && leaf(L, f->x, f->vec, &r)) {
      ok = r.v && memo_put(L, key, r);
      L->nst--;
      continue;
    }
    if (f->state < 2) {
      /* schedule the children.  INDEX does it twice: its indices (state 0),
         then, with their values known, the indices again and the value it
         reads (state 1), as one contiguous block */
      res kr[UOPC_LIMIT_DIMS];
      uint32_t nprev = f->state == 1 ? f->nkids : 0, prev = f->kids;
      for (uint32_t j = 0; j < nprev; j++)
        kr[j] = memo_find(L, key_of(L->kid[prev + 2 * j], (uint32_t)(uintptr_t)L->kid[prev + 2 * j + 1]))->r;
      uint32_t before = L->nkid;
      for (uint32_t j = 0; j < nprev && ok; j++) {
        if (!uopi_grow(L->c, (void **)&L->kid, &L->cap_kid, L->nkid + 2, sizeof *L->kid)) ok = 0;
        else L->kid[L->nkid++] = L->kid[prev + 2 * j], L->kid[L->nkid++] = L->kid[prev + 2 * j + 1];
      }
      if (!ok || !children(L, f->x, f->vec, f->state, kr)) {
        ok = 0;
        break;
      }
      f = &L->st[L->nst - 1];
      f->kids = before;
      f->nkids = (L->nkid - before) / 2;
      f->state = f->x->op == UOPC_OP_INDEX && f->state == 0 ? 1 : 2;
      for (uint32_t j = before + 2 * nprev; j < L->nkid; j += 2) {
        uopc_node *kn = L->kid[j];
        uint32_t kv = (uint32_t)(uintptr_t)L->kid[j + 1];
        if (memo_find(L, key_of(kn, kv))) continue;
        if (!uopi_grow(L->c, (void **)&L->st, &L->cap_st, L->nst + 1, sizeof *L->st)) {
          ok = 0;
          break;
        }
        L->st[L->nst++] = (frame){kn, kv, 0, 0, 0};
      }
      continue;
    }
    /* all children done: combine */
    res kr[3 + UOPC_LIMIT_DIMS];
    uint32_t nk = f->nkids;
    for (uint32_t j = 0; j < nk && j < 3 + UOPC_LIMIT_DIMS; j++)
      kr[j] = memo_find(L, key_of(L->kid[f->kids + 2 * j], (uint32_t)(uintptr_t)L->kid[f->kids + 2 * j + 1]))->r;
    uopc_node *x = f->x;
    L->nst--;
    if (!combine(L, x, kr, nk, &r) || !memo_put(L, key, r)) ok = 0;
  }
  if (!ok || L->failed) return 0;
  *out = memo_find(L, key_of(root, vec))->r;
  return 1;
}

/* ---- a kernel ---- */

/* The poison buffer of the buffer being computed (made when first needed). */
static uint32_t self_poison(lctx *L) {
  uopi_schedule *s = L->s;
  if (s->bufs[L->self].poison == UINT32_MAX) {
    uopi_pbuf me = s->bufs[L->self];
    uint32_t p = uopi_schedule_add_buf(s, UOPI_PB_POISON, UOPC_DT_I32, me.shape, me.ndim, NULL);
    if (p == UINT32_MAX) return p;
    s->bufs[L->self].poison = p;
  }
  return s->bufs[L->self].poison;
}

/* The effects of one store site: the records, where the poison rank goes,
   the store.  For a temporary, the rank is stored beside the element (acc:
   the rank of an accumulating store, which folds the element's into it);
   for the result, it is folded into the kernel's status. */
static uopc_node *site(lctx *L, uopc_node *store, uopc_node *pc, int acc) {
  if (!store || !records(L, pc)) return NULL;
  if (pc && L->s->bufs[L->self].kind == UOPI_PB_TEMP) {
    uint32_t pb = self_poison(L);
    if (pb == UINT32_MAX) return NULL;
    uopc_node *idx = store->src[0]->src[1];
    uopc_node *addr = uopc_index(L->c, buffer_node(L, pb), &idx, 1);
    uopc_node *rank = acc ? uopc_max(L->c, uopc_load(L->c, addr), pc) : pc;
    uopc_node *st = uopc_store(L->c, addr, rank);
    if (!st || !uopi_nodes_push(L->c, &L->fx, st)) return NULL;
  } else if (pc) {
    if (!status_bufs(L, 0)) return NULL;
    uopc_node *z = I(L, 0);
    uopc_node *addr = uopc_index(L->c, buffer_node(L, L->status), &z, 1);
    uopc_node *up = uopc_store(L->c, addr, uopc_max(L->c, uopc_load(L->c, addr), pc));
    if (!up || !uopi_nodes_push(L->c, &L->fx, up)) return NULL;
  }
  if (!uopi_nodes_push(L->c, &L->fx, store)) return NULL;
  uopc_node *r = L->fx.n == 1 ? L->fx.v[0] : uopc_sink(L->c, L->fx.v, L->fx.n);
  L->fx.n = 0;
  memo_clear(L); /* records belong to their site: lower the next site afresh */
  return r;
}

static uopc_node *end_over(lctx *L, uopc_node *body, uopc_node *const *rng, uint32_t n) {
  uopc_node *real[UOPC_LIMIT_DIMS];
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++)
    if (rng[i]->op == UOPC_OP_RANGE) real[k++] = rng[i];
  return k && body ? uopc_end(L->c, body, real, k) : body;
}

/* ranges for a shape, idx from *next on (size-1 axes: the constant 0) */
static void ranges(lctx *L, const int32_t *shape, uint32_t nd, uopc_node **out, int64_t *next) {
  for (uint32_t d = 0; d < nd; d++) out[d] = shape[d] == 1 ? I(L, 0) : uopc_range(L->c, I(L, shape[d]), (*next)++);
}

/* ---- loop order and register tiles of a REDUCE (docs/loops.md) ----
 *
 * A REDUCE's kernel is, as lowered, for o...: { first; for t: step }: each
 * output element's accumulation runs innermost, in `run`'s order.  Two
 * passes change the nest without changing any element's order of
 * operations (each element is still first, then step for t = 0, 1, ... in
 * turn, by one thread), so results stay bit-identical:
 *
 *   interchange  for o \ j: { for j: first; for t: for j': step[j := j'] }
 *                where j is the innermost output axis, when more of the
 *                step's accesses are unit-stride along j than along t
 *                (matmul: the output and B along j, only A along t).  The
 *                j' loop then vectorizes (elements along j are independent).
 *   chains       when there is no interchange and the reduction is a float
 *                one in strict mode (a chain of dependent adds or maxes per
 *                output element, latency-bound): the innermost output axis
 *                j = U*j' + u, the U copies of first and step side by side
 *                in the t loop (U = 8, 4 or 2): U independent chains, each
 *                in its own order (softmax's row max and row sum).
 *   upcast       the output axis i next outside j, when some access of the
 *                step does not move along i (B[t, j] in matmul: one load
 *                serves U rows): i = U*i' + u, the U copies of first and of
 *                step side by side in the j and j' loops (U = 4 or 2, when
 *                it divides the axis).
 *
 * UOPC_COMPILE_NO_REORDER / UOPC_COMPILE_NO_UPCAST turn them off.
 */

static int renumber(lctx *L, uopc_node *k, uopi_skernel *out);

/* The register tile's width along j: one vector of f32 (16 with AVX-512,
   8 with AVX), and how many accumulators of that width it may keep: half
   the vector registers (32 with AVX-512, 16 below), the rest for the
   shared loads and broadcasts. */
#define TILE_J (int64_t)(L->s->vector_bits / 32)
#define TILE_ACCS (int64_t)(L->s->vector_bits >= 512 ? 16 : 8)
#define TILE_WORK_VECTOR 268435456.0 /* 2^28: see loop_nest */
#define TILE_WORK_CHAIN 8388608.0    /* 2^23 */
#define CHAINS_MIN_WORK 65536.0      /* 2^16 elements x reduce length: below, a few us at most */
#define PACK_MIN_REUSE 8             /* row blocks that read each panel: below, the copy costs more than it saves */
#define GROUP_BLOCKS 16              /* row blocks of a row group (loop_nest): matmul 1024, 128 rows, 512 KiB of A */

/* idx with every RANGE of it set to base (r to base + dr), folded: its value,
   or INT64_MIN when it does not fold to a constant (it loads, say) */
static int64_t value_at(lctx *L, uopc_node *idx, uopc_node *r, int64_t base, int64_t dr) {
  uint32_t n = 0, k = 0;
  uopc_node **all = uopc_toposort(L->c, idx, &n);
  if (!all) return INT64_MIN;
  uopc_node *from[16], *to[16];
  int ok = 1;
  for (uint32_t q = 0; q < n && ok; q++) {
    if (all[q]->op != UOPC_OP_RANGE) continue;
    if (k == 16) ok = 0;
    else from[k] = all[q], to[k++] = I(L, base + (all[q] == r ? dr : 0));
  }
  uopc_mem_free(L->c, all, (size_t)n * sizeof *all);
  uopc_node *v = ok ? simp(L, uopc_substitute(L->c, idx, from, to, k)) : NULL;
  return v && v->op == UOPC_OP_CONST ? (int64_t)uopc_const_value(v) : INT64_MIN;
}

/* How far idx moves when r grows by one, measured at two points (every range
   0, then every range 1): the stride, or INT64_MIN where the two disagree or
   do not fold.  A heuristic for the loop passes, never for correctness. */
static int64_t stride_along(lctx *L, uopc_node *idx, uopc_node *r) {
  int64_t a0 = value_at(L, idx, r, 0, 0), a1 = value_at(L, idx, r, 0, 1);
  int64_t b0 = value_at(L, idx, r, 1, 0), b1 = value_at(L, idx, r, 1, 1);
  if (a0 == INT64_MIN || a1 == INT64_MIN || b0 == INT64_MIN || b1 == INT64_MIN) return INT64_MIN;
  return a1 - a0 == b1 - b0 ? a1 - a0 : INT64_MIN;
}

typedef struct strides {
  uint32_t unit_j, unit_t;  /* accesses of unit stride along j, along t */
  uint32_t still_i;         /* accesses that do not move along i */
  uint32_t gathered;        /* accesses that move along j by more than one */
} strides;

/* Counts the memory accesses of g (its INDEX nodes into buffers) by their
   strides along j, t and i (i may be NULL). */
static int count_strides(lctx *L, uopc_node *g, uopc_node *j, uopc_node *t, uopc_node *i, strides *out) {
  uint32_t n = 0;
  uopc_node **all = uopc_toposort(L->c, g, &n);
  if (!all) return 0;
  memset(out, 0, sizeof *out);
  for (uint32_t k = 0; k < n; k++) {
    uopc_node *x = all[k];
    if (x->op != UOPC_OP_INDEX || x->nsrc != 2 || x->src[0]->op != UOPC_OP_BUFFER) continue;
    int64_t sj = stride_along(L, x->src[1], j);
    out->unit_j += sj == 1;
    out->gathered += sj != 0 && sj != 1;
    out->unit_t += stride_along(L, x->src[1], t) == 1;
    if (i && sj != 0) out->still_i += stride_along(L, x->src[1], i) == 0;
  }
  uopc_mem_free(L->c, all, (size_t)n * sizeof *all);
  return 1;
}

/* g with r := U*r' + u, for u = 0 .. U-1, as a SINK of the U copies */
static uopc_node *upcast_copies(lctx *L, uopc_node *g, uopc_node *r, uopc_node *r2, int64_t U) {
  uopc_node *copy[16];
  for (int64_t u = 0; u < U; u++) {
    uopc_node *at = uopc_add(L->c, uopc_mul(L->c, r2, I(L, U)), I(L, u));
    copy[u] = at ? uopc_substitute(L->c, g, &r, &at, 1) : NULL;
    if (!copy[u]) return NULL;
  }
  return uopc_sink(L->c, copy, (uint32_t)U);
}

/* A (blocked) transposed copy of buffer b seen as (R, C) = (numel / C, its
   last axis), in panels W wide (W divides C): a new temporary bt of shape
   (C / W, R, W), bt[q, r, w] = b[r, q * W + w] (W = 1: the transpose (C, R)),
   and its kernel, scheduled now (before the kernel being lowered, which
   reads it).  UINT32_MAX on failure. */
static uint32_t transposed_copy(lctx *L, uint32_t b, int32_t R, int32_t C, int32_t W) {
  uopc_ctx *c = L->c;
  uopi_schedule *s = L->s;
  for (uint32_t k = 0; k < s->nbufs; k++) /* made already (another kernel reads b the same way) */
    if (s->bufs[k].transposed == W && s->bufs[k].slot == (int64_t)b && s->bufs[k].shape[0] == C / W &&
        s->bufs[k].shape[1] == R)
      return k;
  uopc_node *src = s->bufs[b].node;
  int32_t rc[3] = {R, C / W, W}, perm[3] = {1, 0, 2}, cr[3] = {C / W, R, W};
  uint32_t nd = W == 1 ? 2 : 3;
  if (W == 1) cr[0] = C, cr[1] = R;
  uopc_node *view = src && src->ndim ? uopc_permute(c, uopc_reshape(c, src, rc, nd), perm, nd) : src;
  uint32_t bt = uopi_schedule_add_buf(s, UOPI_PB_TEMP, s->bufs[b].dtype, cr, nd, view);
  if (bt == UINT32_MAX) return bt;
  s->bufs[bt].transposed = W;
  s->bufs[bt].slot = b; /* which buffer it copies */
  uopc_node *rr = uopc_range(c, I(L, R), 0), *qq = uopc_range(c, I(L, C / W), 1), *ww = NULL;
  uopc_node *from = uopc_add(c, uopc_mul(c, rr, I(L, C)), qq), *to = uopc_add(c, uopc_mul(c, qq, I(L, R)), rr);
  if (W > 1) { /* from = r*C + q*W + w, to = (q*R + r)*W + w */
    ww = uopc_range(c, I(L, W), 2);
    from = uopc_add(c, uopc_add(c, uopc_mul(c, rr, I(L, C)), uopc_mul(c, qq, I(L, W))), ww);
    to = uopc_add(c, uopc_mul(c, to, I(L, W)), ww);
  }
  uopc_node *ld = from ? uopc_load(c, uopc_index(c, buffer_node(L, b), &from, 1)) : NULL;
  uopc_node *st = ld && to ? uopc_store(c, uopc_index(c, buffer_node(L, bt), &to, 1), ld) : NULL;
  /* the transpose writes along its rows (r innermost: reading a column of b
     is cheaper than writing a column of bt, whose stores a row of b apart
     fall in two L1 sets: attention's K, 0.20 -> 0.024 ms on Zen 2); the
     panels read along b's rows (0.74 vs 0.87 ms for matmul 1024's B) */
  uopc_node *nest[3] = {qq, rr, NULL};
  if (W > 1) nest[0] = rr, nest[1] = qq, nest[2] = ww;
  uopc_node *g = st ? uopc_sink(c, (uopc_node *[]){uopc_end(c, st, nest, nd)}, 1) : NULL;
  uopi_skernel sk = {0};
  if (!g || !renumber(L, g, &sk)) return UINT32_MAX;
  sk.out = bt, sk.status = sk.statusf = UINT32_MAX;
  if (!uopi_grow(c, (void **)&s->kernels, &s->cap_kernels, s->nkernels + 1, sizeof *s->kernels)) return UINT32_MAX;
  s->kernels[s->nkernels++] = sk;
  return bt;
}

/* Whether buffer b may be read through a copy made before the kernel runs:
   an input, a constant or a temporary that is never poison (a copy would
   drop its poison ranks), not the buffer being computed. */
static int copyable(lctx *L, uint32_t b) {
  const uopi_pbuf *pb = &L->s->bufs[b];
  return b != L->self &&
         (pb->kind == UOPI_PB_INPUT || pb->kind == UOPI_PB_CONST || (pb->kind == UOPI_PB_TEMP && pb->poison == UINT32_MAX));
}

/* In first and step, every INDEX into each buffer done[q], seen as rows of
   C[q] elements, becomes an INDEX into its copy of panel width w
   (transposed_copy):
   INDEX(b, i) -> INDEX(bt, ((i % C) // W) * (R * W) + (i // C) * W + i % W)
   (W = 1: (i % C) * R + i // C), exact for every i in range, simplified.
   Returns 0 on failure (out of memory). */
static int read_copies(lctx *L, uopc_node **first, uopc_node **step, const uint32_t *done, const int32_t *Cq,
                       int32_t w, uint32_t ndone) {
  uopc_ctx *c = L->c;
  uopi_nodes from = {0}, to = {0}; /* scratch: reset by uopi_lower_buffer */
  int ok = 1;
  for (uint32_t q = 0; q < ndone && ok; q++) {
    uint32_t b = done[q];
    const int64_t numel = L->s->bufs[b].numel; /* transposed_copy may move s->bufs */
    int32_t C = Cq[q], R = (int32_t)(numel / C);
    uint32_t bt = transposed_copy(L, b, R, C, w);
    if (bt == UINT32_MAX) return 0;
    for (int g2 = 0; g2 < 2 && ok; g2++) { /* every INDEX into b, in first and in step */
      uopc_node **g = g2 ? step : first;
      uint32_t m = 0;
      uopc_node **xs = uopc_toposort(c, *g, &m);
      if (!xs) return 0;
      from.n = to.n = 0;
      for (uint32_t k = 0; k < m && ok; k++) {
        uopc_node *x = xs[k];
        if (x->op != UOPC_OP_INDEX || x->nsrc != 2 || x->src[0]->op != UOPC_OP_BUFFER || x->src[0]->arg.i != (int64_t)b) continue;
        /* only an index provably in range: the map is a bijection of [0, numel) and would
           send an index out of range to some element (a wrong value, not the error) */
        if (uopc_vmin(c, x->src[1]) < 0 || uopc_vmax(c, x->src[1]) >= numel) continue;
        uopc_node *i = x->src[1], *col = uopc_mod_k(c, i, C), *row = uopc_idiv_k(c, i, (double)C);
        uopc_node *ni = w == 1 ? uopc_add(c, uopc_mul(c, col, I(L, R)), row)
                               : uopc_add(c, uopc_add(c, uopc_mul(c, uopc_idiv_k(c, col, (double)w), I(L, (int64_t)R * w)),
                                                      uopc_mul(c, row, I(L, w))),
                                          uopc_mod_k(c, i, w));
        ni = simp(L, ni);
        uopc_node *nx = ni ? uopc_index(c, buffer_node(L, bt), &ni, 1) : NULL;
        ok = nx && uopi_nodes_push(c, &from, x) && uopi_nodes_push(c, &to, nx);
      }
      uopc_mem_free(c, xs, (size_t)m * sizeof *xs);
      if (ok && from.n) *g = uopc_substitute(c, *g, from.v, to.v, from.n);
      ok = ok && *g;
    }
  }
  return ok;
}

/* The criteria of a copy: j, t the step's output and reduce ranges, W the
   panel width; for pack_panels the stride and reuse bounds. */
typedef struct copy_want {
  uopc_node *j, *t;
  int32_t W;
  uint64_t min_bytes, min_reuse, reuse;
} copy_want;

/* A copy of buffer b read at INDEX x, for untranspose: b seen as rows of its
   last axis C (returned), read by C along j and by one along t; 0: not. */
static int64_t transposable(lctx *L, const uopc_node *x, uint32_t b, const copy_want *w) {
  const uopi_pbuf *pb = &L->s->bufs[b];
  int32_t C = pb->ndim ? pb->shape[pb->ndim - 1] : 1;
  if (C < 2 || pb->numel / C < 2 || pb->numel > (1 << 22)) return 0;
  return stride_along(L, x->src[1], w->j) == C && stride_along(L, x->src[1], w->t) == 1 ? C : 0;
}

/* ... for pack_panels: b seen as rows of C = the stride along t (returned),
   read by one along j; 0: not. */
static int64_t packable(lctx *L, const uopc_node *x, uint32_t b, const copy_want *w) {
  const uopi_pbuf *pb = &L->s->bufs[b];
  if (pb->numel > (1 << 24) || w->reuse < w->min_reuse) return 0;
  int64_t C = stride_along(L, x->src[1], w->t);
  if (C <= 0 || C % w->W || pb->numel % C || (uint64_t)C * uopc_dtype_size(pb->dtype) < w->min_bytes) return 0;
  return stride_along(L, x->src[1], w->j) == 1 ? C : 0;
}

/* The buffers (at most 8) the step reads that may be copied and that
   want(...) accepts, each once, read through copies of panel width w->W
   (read_copies).  Returns 0 on failure (out of memory). */
static int copy_reads(lctx *L, uopc_node **first, uopc_node **step, const copy_want *w,
                      int64_t (*want)(lctx *, const uopc_node *, uint32_t, const copy_want *)) {
  uint32_t n = 0;
  uopc_node **all = uopc_toposort(L->c, *step, &n);
  if (!all) return 0;
  uint32_t done[8], ndone = 0;
  int32_t Cs[8];
  for (uint32_t k = 0; k < n && ndone < 8; k++) {
    uopc_node *x = all[k];
    if (x->op != UOPC_OP_INDEX || x->nsrc != 2 || x->src[0]->op != UOPC_OP_BUFFER) continue;
    uint32_t b = (uint32_t)x->src[0]->arg.i;
    int seen = 0;
    for (uint32_t q = 0; q < ndone; q++) seen |= done[q] == b;
    int64_t C = seen || !copyable(L, b) ? 0 : want(L, x, b, w);
    if (C) Cs[ndone] = (int32_t)C, done[ndone++] = b;
  }
  uopc_mem_free(L->c, all, (size_t)n * sizeof *all);
  return read_copies(L, first, step, done, Cs, w->W, ndone);
}

/* The step's gathered reads (stride C along j, 1 along t: a row of b read
   along t for each j, as K in Q K^T) of small buffers that hold no poison
   become reads of a transposed copy (unit stride along j), in first and
   step: INDEX(b, i) -> INDEX(bt, (i % C) * R + i // C), exact for every i
   in range, simplified.  Returns 0 on failure (out of memory). */
static int untranspose(lctx *L, uopc_node **first, uopc_node **step, uopc_node *j, uopc_node *t) {
  copy_want w = {j, t, 1, 0, 0, 0};
  return copy_reads(L, first, step, &w, transposable);
}

/* The step's reads along the reduce axis t with a stride of a page or more
   (C elements of at least 4 KiB, unit stride along j: B in A @ B) of
   buffers that may be copied become reads of a copy in panels W wide
   (transposed_copy): the register tile then reads one contiguous W-wide
   row of a panel per step of t, where it read one row of b per page, which
   the hardware prefetchers (which stop at page boundaries) do not follow
   and whose addresses all fall in the same L1 set (matmul 1024: 84 -> 50
   ms a call, Zen 2).  Only where each element of the copy is read by many
   row blocks (reuse: the copy costs a pass over b).  UOPC_PACK_MIN_BYTES
   overrides the stride's 4 KiB and then packs at any reuse (tests: 1).
   Returns 0 on failure (out of memory). */
static int pack_panels(lctx *L, uopc_node **first, uopc_node **step, uopc_node *j, uopc_node *t, int32_t W,
                       int64_t reuse) {
  copy_want w = {j, t, W, 4096, PACK_MIN_REUSE, (uint64_t)reuse};
  if (uopi_env_count("UOPC_PACK_MIN_BYTES", &w.min_bytes)) w.min_reuse = 1;
  return copy_reads(L, first, step, &w, packable);
}

/* The loop nest of a REDUCE: first (the peeled element) and step (one
   accumulation, at t) inside the output ranges o. */
static uopc_node *loop_nest(lctx *L, uopc_node *first, uopc_node *step, uopc_node **o, uint32_t nd, uopc_node *t,
                            int chains, int64_t *next) {
  uopc_ctx *c = L->c;
  int jx = -1, ix = -1;
  for (uint32_t d = 0; d < nd; d++)
    if (o[d]->op == UOPC_OP_RANGE) ix = jx, jx = (int)d;
  strides sc = {0};
  int64_t jn = jx >= 0 ? (int64_t)uopc_const_value(o[jx]->src[0]) : 0;
  int64_t in = ix >= 0 ? (int64_t)uopc_const_value(o[ix]->src[0]) : 0;
  double work = uopc_const_value(t->src[0]) + 1; /* multiply-adds, say: elements x reduce length */
  for (uint32_t d = 0; d < nd; d++)
    if (o[d]->op == UOPC_OP_RANGE) work *= uopc_const_value(o[d]->src[0]);
  int measured = jx >= 0 && !(L->s->flags & UOPC_COMPILE_NO_REORDER) &&
                 count_strides(L, step, o[jx], t, ix >= 0 ? o[ix] : NULL, &sc);
  /* the tile and the row blocks cost compile time (8 to 16 copies of the
     step: about 6 ms more per kernel); they are made only where one call
     saves more than that: where the interchange alone vectorizes the loop,
     from 2^28 multiply-adds (matmul 1024, measured break-even near 512^3);
     where only the tile makes the loop vectorize (the step runs as a
     latency-bound chain otherwise: attention's Q K^T), from 2^23 */
  int anyway = measured && sc.unit_j > sc.unit_t;
  uint64_t min_work; /* UOPC_TILE_MIN_WORK overrides both (tests: 1) */
  int hot = !!(L->s->flags & UOPC_COMPILE_HOT); /* many calls: compile time is not counted */
  int pays = hot || (uopi_env_count("UOPC_TILE_MIN_WORK", &min_work) ? work >= (double)min_work
                                                                      : work >= (anyway ? TILE_WORK_VECTOR : TILE_WORK_CHAIN));
  int tileable = !(L->s->flags & UOPC_COMPILE_NO_UPCAST) && pays && jn % TILE_J == 0 && jn > TILE_J && in % 2 == 0;
  int swap = measured && (anyway || (tileable && sc.still_i));
  if (!swap) {
    /* chains: U rows' accumulations side by side (each still in order) */
    uint64_t min_chain; /* UOPC_TILE_MIN_WORK overrides this threshold too */
    double chain_work = uopi_env_count("UOPC_TILE_MIN_WORK", &min_chain) ? (double)min_chain : CHAINS_MIN_WORK;
    int64_t U = chains && jx >= 0 && (hot || work >= chain_work) && !(L->s->flags & UOPC_COMPILE_NO_UPCAST)
                    ? (jn % 8 == 0 ? 8 : jn % 4 == 0 ? 4 : jn % 2 == 0 ? 2 : 0)
                    : 0;
    uopc_node *oc[UOPC_LIMIT_DIMS];
    memcpy(oc, o, nd * sizeof *o);
    if (U) {
      uopc_node *j = o[jx], *j2 = uopc_range(c, I(L, jn / U), (*next)++);
      first = j2 ? upcast_copies(L, first, j, j2, U) : NULL;
      step = j2 && first ? upcast_copies(L, step, j, j2, U) : NULL;
      if (!first || !step) return NULL;
      oc[jx] = j2;
    }
    uopc_node *body = uopc_sink(c, (uopc_node *[]){first, uopc_end(c, step, &t, 1)}, 2);
    return uopc_sink(c, (uopc_node *[]){end_over(L, body, oc, nd)}, 1);
  }
  if (sc.gathered && tileable) { /* gathers of small buffers: read a transposed copy */
    if (!untranspose(L, &first, &step, o[jx], t) ||
        !count_strides(L, step, o[jx], t, ix >= 0 ? o[ix] : NULL, &sc))
      return NULL;
  }
  uopc_node *j = o[jx], *j2 = uopc_range(c, j->src[0], (*next)++);
  step = j2 ? uopc_substitute(c, step, &j, &j2, 1) : NULL;
  int64_t U = 0, isize = ix >= 0 ? (int64_t)uopc_const_value(o[ix]->src[0]) : 0;
  /* U rows (the row block) of V vectors: TILE_ACCS / 2 rows of 2 vectors
     fill the accumulators with the fewest loads per multiply-add (AVX2: 4 x
     2 loads 6 per 8 accumulators, where 8 x 1 loads 9: matmul 1024 43 -> 36
     ms a call on Zen 2) */
  if (ix >= 0 && sc.still_i && pays && !(L->s->flags & UOPC_COMPILE_NO_UPCAST))
    U = sc.gathered && isize % 16 == 0 && TILE_ACCS >= 16 ? 16 /* a gather shared by more rows */
        : isize % (TILE_ACCS / 2) == 0 ? TILE_ACCS / 2 : isize % 4 == 0 ? 4 : isize % 2 == 0 ? 2 : 0;
  int64_t jsize = (int64_t)uopc_const_value(j->src[0]);
  int tile = U && jsize % TILE_J == 0 && jsize > TILE_J;
  /* V vectors side by side when the row block leaves registers for them */
  int64_t V = tile && 2 * U <= TILE_ACCS && jsize % (2 * TILE_J) == 0 ? 2 : 1;
  if (tile && !pack_panels(L, &first, &step, j2, t, (int32_t)(TILE_J * V), isize / U)) return NULL;
  uopc_node *outer[UOPC_LIMIT_DIMS]; /* nd - 1 axes, then jo and ib: at most nd + 1 <= UOPC_LIMIT_DIMS
                                        (the REDUCE's source has nd + K dims, K >= 1) */
  uint32_t no = 0;
  for (uint32_t d = 0; d < nd; d++)
    if ((int)d != jx) outer[no++] = o[d];
  uopc_node *i2 = NULL;
  if (U) {
    uopc_node *i = o[ix];
    i2 = uopc_range(c, I(L, isize / U), (*next)++);
    first = i2 ? upcast_copies(L, first, i, i2, U) : NULL;
    step = i2 && step ? upcast_copies(L, step, i, i2, U) : NULL;
    for (uint32_t d = 0; d < no; d++)
      if (outer[d] == i) outer[d] = i2;
  }
  if (!first || !step) return NULL;
  if (tile) { /* register tile: j = TILE_J*jo + jr */
    /* the V vectors: j = TILE_J*V*jo + jr + TILE_J*v (the constant
       outermost, so LLVM's alias analysis sees the V columns as one base
       plus offsets) */
    uopc_node *jo = uopc_range(c, I(L, jsize / (TILE_J * V)), (*next)++);
    uopc_node *jr = uopc_range(c, I(L, TILE_J), (*next)++), *jr2 = uopc_range(c, I(L, TILE_J), (*next)++);
    uopc_node *fv[2], *sv[2];
    for (int64_t v = 0; v < V && first && step; v++) {
      uopc_node *at = uopc_add(c, uopc_add(c, uopc_mul(c, jo, I(L, TILE_J * V)), jr), I(L, TILE_J * v));
      uopc_node *at2 = uopc_add(c, uopc_add(c, uopc_mul(c, jo, I(L, TILE_J * V)), jr2), I(L, TILE_J * v));
      fv[v] = at ? uopc_substitute(c, first, &j, &at, 1) : NULL;
      sv[v] = at2 ? uopc_substitute(c, step, &j2, &at2, 1) : NULL;
      if (!fv[v] || !sv[v]) return NULL;
    }
    if (!first || !step) return NULL;
    first = V == 1 ? fv[0] : uopc_sink(c, fv, (uint32_t)V);
    step = V == 1 ? sv[0] : uopc_sink(c, sv, (uint32_t)V);
    j = jr, j2 = jr2;
    L->tiled = work;
    /* Row groups: i2 = GROUP_BLOCKS*ig + ib, and the nest ig, jo, ib: a
       column block's panel of b is read by the GROUP_BLOCKS row blocks of
       a group while it is in the cache (with jo inside i2, every row block
       read every panel: all of b per row block, 512 MiB from L3 for matmul
       1024, which bounded it on an Intel Xeon: fast 1T 21.6 -> 16.1 ms),
       and threads still split rows (ig: split.c needs each chunk's stores
       in one range of the output).  Without whole groups: jo inside i2. */
    int64_t nblk = isize / U;
    uopc_node *ig = NULL, *ib = NULL;
    if (nblk % GROUP_BLOCKS == 0 && nblk > GROUP_BLOCKS) {
      ig = uopc_range(c, I(L, nblk / GROUP_BLOCKS), (*next)++);
      ib = uopc_range(c, I(L, GROUP_BLOCKS), (*next)++);
      uopc_node *at = ig && ib ? uopc_add(c, uopc_mul(c, ig, I(L, GROUP_BLOCKS)), ib) : NULL;
      first = at ? uopc_substitute(c, first, &i2, &at, 1) : NULL;
      step = at && first ? uopc_substitute(c, step, &i2, &at, 1) : NULL;
      if (!first || !step) return NULL;
    }
    for (uint32_t d = 0; d < no; d++)
      if (outer[d] == i2) {
        if (ig) outer[d] = ig; /* ig, jo, ib */
        d++;
        memmove(outer + d + 1 + !!ig, outer + d, (no - d) * sizeof *outer);
        outer[d] = jo, no++;
        if (ig) outer[d + 1] = ib, no++;
        break;
      }
    if (!first || !step) return NULL;
  }
  uopc_node *fj = uopc_end(c, first, &j, 1);
  uopc_node *sj = uopc_end(c, uopc_end(c, step, &j2, 1), &t, 1);
  uopc_node *body = uopc_sink(c, (uopc_node *[]){fj, sj}, 2);
  return uopc_sink(c, (uopc_node *[]){end_over(L, body, outer, no)}, 1);
}

/* The shortest fast-mode float sum that starts from -0.0 (kernel_graph):
   a sum long enough to stream from memory, where the loads' alignment
   counts.  attention512's 64-long dot products ran 10-15 % slower so
   (fastest of 15 rounds, four alternations; why was not found), its
   512-long sums 0-3 % slower, softmax4096's 4096-long ones no slower,
   sum16M 1.3-2x faster (docs/loops.md, "Fast reductions"). */
#define FROM_ZERO_MIN 1024

/* The kernel's SINK for buffer b. */
static uopc_node *kernel_graph(lctx *L, uint32_t b) {
  uopc_ctx *c = L->c;
  const uopi_pbuf pbv = L->s->bufs[b], *pb = &pbv; /* a copy: lowering may add buffers */
  uopc_node *m = pb->node;
  uint32_t own = (uint32_t)(uintptr_t)uopi_table_get(L->r->buf, m->id) - 1;
  uopc_node *o[UOPC_LIMIT_DIMS], *buf = buffer_node(L, b);
  int64_t next = 0;
  ranges(L, pb->shape, pb->ndim, o, &next);
  res r;
  if (own == b && m->op == UOPC_OP_REDUCE) {
    const uopc_node *x = m->src[0];
    uint32_t nd = pb->ndim, K = (uint32_t)m->arg.i;
    uopc_node *e[UOPC_LIMIT_DIMS], *addr, *oi = ravel(L, o, pb->shape, nd);
    memcpy(e, o, nd * sizeof *e);
    addr = uopc_index(c, buf, &oi, 1);
    /* the reduced axes as one flat range in C order: the first element is
       peeled, the others are f = t + 1 for t < P - 1, unravelled over the
       reduced shape (simplify folds the unravel back into the flat index
       wherever the body reads the axes contiguously).  A float sum of at
       least FROM_ZERO_MIN elements in fast mode starts from -0.0 instead
       (-0.0 + x is x, bit for bit, for every x): f = t for t < P, so that
       its vector loop reads from the first element, where an aligned
       buffer's lines start (from the second, every 64-byte load of a 16M sum
       straddled two lines: 1.6x slower on Zen 5; docs/loops.md, "Fast
       reductions") */
    const int32_t *R = x->shape + nd;
    int64_t P = 1;
    for (uint32_t j = 0; j < K; j++) P *= R[j];
    const int from_zero = P >= FROM_ZERO_MIN && (L->s->flags & UOPC_COMPILE_FAST_MATH) &&
                          m->arg.rop == UOPC_OP_ADD && uopc_dtype_is_float((uopc_dtype)m->dtype);
    uopc_node *first = NULL;
    if (!from_zero) {
      for (uint32_t j = 0; j < K; j++) e[nd + j] = I(L, 0);
      if (!lower(L, m->src[0], vec_intern(L, e, nd + K), &r)) return NULL;
      first = site(L, uopc_store(c, addr, r.v), r.pc, 0);
      if (P == 1) return uopc_sink(c, (uopc_node *[]){end_over(L, first, o, nd)}, 1);
    }
    uopc_node *t = uopc_range(c, I(L, from_zero ? P : P - 1), next++), *f = from_zero ? t : uopc_add(c, t, I(L, 1));
    for (uint32_t j = K; j-- > 0;) {
      if (R[j] == 1) {
        e[nd + j] = I(L, 0);
        continue;
      }
      int64_t later = 1;
      for (uint32_t q = j + 1; q < K; q++) later *= R[q];
      uopc_node *v = later == 1 ? f : uopc_idiv_k(c, f, (double)later);
      if (later * R[j] < P) v = uopc_mod_k(c, v, R[j]);
      e[nd + j] = simp(L, v);
    }
    if (!lower(L, m->src[0], vec_intern(L, e, nd + K), &r)) return NULL;
    uopc_node *acc = uopc_alu2(c, (uopc_op)m->arg.rop, uopc_load(c, addr), r.v);
    uopc_node *step = site(L, uopc_store(c, addr, acc), r.pc, 1);
    /* from -0.0: the first store's poison rank is 0 (as the plan's call
       leaves a poison buffer: plan.c zeroes them); every element's own rank
       is the step's */
    if (from_zero && step)
      first = site(L, uopc_store(c, addr, uopc_const_f(c, (uopc_dtype)m->dtype, -0.0)), r.pc ? I(L, 0) : NULL, 0);
    if (!first || !step) return NULL;
    /* a float reduction in strict mode is a latency-bound chain per element
       (no reassociation): the chains pass of loop_nest interleaves several */
    int chains = uopc_dtype_is_float((uopc_dtype)m->dtype) && !(L->s->flags & UOPC_COMPILE_FAST_MATH);
    return loop_nest(L, first, step, o, nd, t, chains, &next);
  }
  if (own == b && m->op == UOPC_OP_STACK) { /* one loop nest per element */
    uopi_nodes parts = {0}; /* scratch: reset by uopi_lower_buffer */
    uopc_node *rest[UOPC_LIMIT_DIMS];
    for (uint32_t k = 0; k < m->nsrc; k++) {
      uopc_node *e[UOPC_LIMIT_DIMS];
      e[0] = I(L, k);
      for (uint32_t d = 1; d < pb->ndim; d++) e[d] = rest[d - 1] = o[d];
      if (!lower(L, m->src[k], vec_intern(L, rest, pb->ndim - 1), &r)) return NULL;
      uopc_node *idx = ravel(L, e, pb->shape, pb->ndim);
      uopc_node *st = site(L, uopc_store(c, uopc_index(c, buf, &idx, 1), r.v), r.pc, 0);
      if (!st || !uopi_nodes_push(c, &parts, end_over(L, st, o + 1, pb->ndim - 1))) return NULL;
    }
    return uopc_sink(c, parts.v, parts.n);
  }
  /* an elementwise value (or a copy of the buffer the root reads) */
  if (!lower(L, m, vec_intern(L, o, pb->ndim), &r)) return NULL;
  uopc_node *oi = ravel(L, o, pb->shape, pb->ndim);
  uopc_node *st = site(L, uopc_store(c, uopc_index(c, buf, &oi, 1), r.v), r.pc, 0);
  return uopc_sink(c, (uopc_node *[]){end_over(L, st, o, pb->ndim)}, 1);
}

/* BUFFER(slot = plan buffer) -> BUFFER(slot 0..n-1) in order of appearance. */
static int renumber(lctx *L, uopc_node *k, uopi_skernel *out) {
  uopc_ctx *c = L->c;
  uint32_t n = 0;
  uopc_node **all = uopc_toposort(c, k, &n);
  if (!all) return 0;
  uopi_nodes from = {0}, to = {0};
  size_t mark = uopi_scratch_mark(c);
  int ok = 1;
  for (uint32_t i = 0; i < n && ok; i++)
    if (all[i]->op == UOPC_OP_BUFFER) ok = uopi_nodes_push(c, &from, all[i]);
  uopc_mem_free(c, all, (size_t)n * sizeof *all);
  out->map = ok ? uopi_arena(c, (from.n ? from.n : 1) * sizeof *out->map) : NULL;
  for (uint32_t i = 0; ok && i < from.n; i++) {
    uint32_t b = (uint32_t)from.v[i]->arg.i;
    out->map[i] = b;
    ok = out->map && uopi_nodes_push(c, &to, uopc_buffer(c, i, L->s->bufs[b].dtype, (int32_t)L->s->bufs[b].numel));
  }
  out->nbufs = from.n;
  out->root = ok ? uopc_substitute(c, k, from.v, to.v, from.n) : NULL;
  uopi_scratch_reset(c, mark);
  return out->root != NULL;
}

uopc_status uopi_lower_buffer(uopi_schedule *s, const uopi_realized *r, uint32_t b) {
  uopc_ctx *c = s->c;
  lctx L;
  memset(&L, 0, sizeof L);
  L.s = s, L.r = r, L.c = c, L.self = b, L.status = L.statusf = UINT32_MAX;
  size_t mark = uopi_scratch_mark(c);
  uopc_status st = UOPC_OK;
  vec_intern(&L, NULL, 0); /* vector 0: the empty one (scalars) */
  /* the recording variant first (the kernel as it always was), then, when it
     records anything, the plain one: the same lowering without the records
     (its checks, buffers and codes are the ones the first made) */
  uopc_node *k = L.failed ? NULL : kernel_graph(&L, b), *plain = NULL;
  if (k && L.nrec) {
    L.norec = 1;
    memo_clear(&L);
    plain = kernel_graph(&L, b);
  }
  uopi_skernel sk = {0}, rec = {0};
  if (!k || (L.nrec && (!plain || !renumber(&L, k, &rec))) || !renumber(&L, plain ? plain : k, &sk)) {
    st = uopc_ctx_error(c) ? uopc_ctx_error(c)->code : UOPC_ERR_NOMEM;
    if (!uopc_ctx_error(c)) uopc_fail(c, UOPC_ERR_NOMEM, "out of memory");
  } else {
    sk.out = b;
    sk.tiled = L.tiled;
    sk.status = L.status;
    sk.statusf = L.statusf;
    sk.rec = rec.root, sk.rec_nbufs = rec.nbufs, sk.rec_map = rec.map;
    if (!uopi_grow(c, (void **)&s->kernels, &s->cap_kernels, s->nkernels + 1, sizeof *s->kernels)) st = UOPC_ERR_NOMEM;
    else s->kernels[s->nkernels++] = sk;
  }
  uopi_scratch_reset(c, mark);
  uopc_mem_free(c, L.v.pool, (size_t)L.v.cap_pool * sizeof *L.v.pool);
  uopc_mem_free(c, L.v.off, (size_t)L.v.cap_off * sizeof *L.v.off);
  uopc_mem_free(c, L.v.len, (size_t)L.v.cap_len * sizeof *L.v.len);
  uopc_mem_free(c, L.memo, (size_t)L.memo_cap * sizeof *L.memo);
  uopc_mem_free(c, L.st, (size_t)L.cap_st * sizeof *L.st);
  uopc_mem_free(c, L.kid, (size_t)L.cap_kid * sizeof *L.kid);
  return st;
}
