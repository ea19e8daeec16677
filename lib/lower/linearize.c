/* lib/lower/linearize.c - a prepared kernel as an ordered program (the
 * format and its invariants are in lib/lower/linearize.h).
 *
 * One walk over the effects in program order, with an explicit stack: a
 * SINK's sources one after another; an END opens its loops (outermost
 * first), walks its body, closes them.  At a STORE, and at the opening of a
 * loop (its end value), the values needed are materialized on demand by an
 * iterative depth-first walk over their operands: a node with a valid
 * instance is reused, any other gets a new instruction placed
 *   - at the outermost depth its operands allow (the deepest of theirs), in
 *     front of the open loop it is hoisted out of;
 *   - for a LOAD of slot s, at least inside the innermost open loop whose
 *     body stores s (a STORE of an earlier iteration precedes it);
 *   - for a guarded INDEX (an effect: its check may end the kernel), where
 *     it is needed.
 * An instance stops being valid when the loop it sits in closes, and, for
 * values that read slot s (through any chain of operands), at every STORE
 * to s and when a loop whose body stores s opens.
 *
 * Slots are tracked as bits of a 64-bit set, slot s as bit s % 64: exact
 * for kernels of up to 64 buffers, conservative beyond (two slots sharing a
 * bit are treated as one buffer: a value is only made anew more often).
 *
 * The program is built as a linked list of records (hoisting inserts in
 * front of an open loop) and flattened at the end.  Side tables are indexed
 * by the kernel's own node numbers (lower/nodemap.h) and by record, so the
 * memory follows the kernel, not the context.  Nothing recurses.
 */
#include <stdarg.h>
#include <string.h>

#include "lower/linearize.h"
#include "lower/nodemap.h"
#include "uopc/algebra.h"

#define NONE UINT32_MAX

static uint64_t slot_bit(int64_t slot) { return 1ull << ((uint64_t)slot & 63); }

/* An instruction while the program is a list. */
typedef struct rec {
  uopi_pinst in;   /* in.src[] are record indices until flattened */
  uint32_t next;   /* the next record in program order, NONE at the end */
  uint32_t vdepth; /* the depth of its value (LOOP: inside its loop) */
  uint64_t reads;  /* slot bits its value read */
} rec;

/* A growable array of 32-bit words (record or node numbers, depths). */
typedef struct vec {
  uint32_t *v;
  uint32_t n, cap;
} vec;

/* An open loop, at depth d (lv[d], d = 1 .. D). */
typedef struct level {
  uint32_t range;  /* node number of its RANGE */
  uint32_t loop;   /* its LOOP record */
  uint32_t pre;    /* values hoisted to depth d-1 go right after this record */
  uint64_t stores; /* slot bits its body stores */
} level;

typedef struct frame {
  uint32_t node;   /* node number */
  uint32_t next;   /* the next source to visit */
  uint32_t base;   /* END: the depth before its loops opened */
} frame;

typedef struct lin {
  uopc_ctx *c;
  uopi_nodemap map;
  uint32_t *inst;   /* per node: its valid instance (a record), or NONE */
  uint64_t *stores; /* per node: slot bits stored in it (effects; else 0) */
  uint8_t *open;    /* per node (RANGE): its loop is open */
  uint64_t stored;  /* slot bits stored anywhere in the kernel */
  rec *r;           /* records; r[0] is the list's head (no instruction) */
  uint32_t nr, caprec, tail;
  level *lv;        /* lv[1 .. D] */
  uint32_t D, caplv, max_depth;
  vec *bydepth;     /* bydepth[d]: (node, record) pairs of instances at depth d */
  uint32_t capby;
  vec byslot[64];   /* byslot[b]: (node, record) pairs of instances reading bit b */
  vec bitlev[64];   /* bitlev[b]: depths of the open loops that store bit b */
  frame *st;        /* the depth-first walk over operands */
  uint32_t capst;
  frame *eff;       /* the walk over effects */
  uint32_t capeff;
  int failed;
} lin;

static void fail(lin *L, uopc_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(lin *L, uopc_status code, const char *fmt, ...) {
  if (!L->failed) {
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    uopc_fail(L->c, code, "%s", msg);
  }
  L->failed = 1;
}

static void push(lin *L, vec *v, uint32_t x) {
  if (!uopi_grow(L->c, (void **)&v->v, &v->cap, v->n + 1, sizeof *v->v)) {
    L->failed = 1;
    return;
  }
  v->v[v->n++] = x;
}

static void vec_free(uopc_ctx *c, vec *v) { uopc_mem_free(c, v->v, (size_t)v->cap * sizeof *v->v); }

static uint32_t num(lin *L, const uopc_node *u) {
  uint32_t n = uopi_nodemap_get(&L->map, u);
  UOPI_ASSERT(n != NONE); /* every node of the kernel is numbered */
  return n;
}

/* ---- the list of records -------------------------------------------------------- */

/* A new record (not yet in the list), or NONE on OOM. */
static uint32_t new_rec(lin *L, uopi_pkind kind, const uopc_node *u, uopc_dtype t, uint32_t depth) {
  if (!uopi_grow(L->c, (void **)&L->r, &L->caprec, L->nr + 1, sizeof *L->r)) {
    L->failed = 1;
    return NONE;
  }
  rec *x = &L->r[L->nr];
  memset(x, 0, sizeof *x);
  x->in.kind = (uint8_t)kind;
  x->in.op = u->op;
  x->in.dtype = (uint8_t)t;
  x->in.depth = depth;
  x->in.slot = -1;
  x->in.node = (uopc_node *)u;
  x->next = NONE;
  x->vdepth = depth;
  return L->nr++;
}

static void insert_after(lin *L, uint32_t at, uint32_t x) {
  L->r[x].next = L->r[at].next;
  L->r[at].next = x;
  if (L->tail == at) L->tail = x;
}

static void append(lin *L, uint32_t x) { insert_after(L, L->tail, x); }

/* Puts value record x at depth d: at the end when d is the current depth,
   else in front of the open loop at depth d+1. */
static void place(lin *L, uint32_t x, uint32_t d) {
  if (d == L->D) {
    append(L, x);
  } else {
    insert_after(L, L->lv[d + 1].pre, x);
    L->lv[d + 1].pre = x;
  }
}

/* ---- instances -------------------------------------------------------------------- */

/* Record x is node n's instance from now on. */
static void remember(lin *L, uint32_t n, uint32_t x) {
  L->inst[n] = x;
  uint32_t d = L->r[x].vdepth;
  push(L, &L->bydepth[d], n);
  push(L, &L->bydepth[d], x);
  for (uint64_t b = L->r[x].reads & L->stored; b; b &= b - 1) {
    vec *v = &L->byslot[__builtin_ctzll(b)];
    push(L, v, n);
    push(L, v, x);
  }
}

/* Forgets the instances listed in v (those still current), and the list. */
static void forget(lin *L, vec *v) {
  for (uint32_t i = 0; i + 1 < v->n; i += 2)
    if (L->inst[v->v[i]] == v->v[i + 1]) L->inst[v->v[i]] = NONE;
  v->n = 0;
}

/* Forgets every instance whose value read one of the slot bits. */
static void forget_reads(lin *L, uint64_t bits) {
  for (uint64_t b = bits & L->stored; b; b &= b - 1) forget(L, &L->byslot[__builtin_ctzll(b)]);
}

/* ---- values ---------------------------------------------------------------------------- */

/* A new instance of node n, whose operands all have one. */
static void make(lin *L, uint32_t n) {
  uopc_node *u = L->map.node[n];
  uint32_t src[3], ns = 0, depth = 0;
  uint64_t reads = 0;
  for (uint32_t i = 0; i < u->nsrc; i++) {
    if (u->src[i]->op == UOPC_OP_BUFFER) continue;
    if (ns == 3) {
      fail(L, UOPC_ERR_TYPE, "%s has too many operands to be compiled", uopc_op_name((uopc_op)u->op));
      return;
    }
    uint32_t x = L->inst[num(L, u->src[i])];
    src[ns++] = x;
    if (L->r[x].vdepth > depth) depth = L->r[x].vdepth;
    reads |= L->r[x].reads;
  }
  uint32_t flags = 0;
  int32_t slot = -1;
  switch (u->op) {
  case UOPC_OP_CONST: break;
  case UOPC_OP_RANGE:
    fail(L, UOPC_ERR_TYPE, "RANGE idx=%lld is used outside the loops (ENDs) that close it", (long long)u->arg.i);
    return;
  case UOPC_OP_INDEX: {
    const uopc_node *buf = u->src[0];
    slot = (int32_t)buf->arg.i;
    if (!(uopc_vmin(L->c, u->src[1]) >= 0 && uopc_vmax(L->c, u->src[1]) < buf->shape[0])) {
      flags |= UOPI_PF_GUARD; /* an effect: where it is needed */
      depth = L->D;
    }
    break;
  }
  case UOPC_OP_LOAD: {
    slot = (int32_t)u->src[0]->src[0]->arg.i;
    uint64_t b = slot_bit(slot);
    reads |= b;
    vec *lev = &L->bitlev[__builtin_ctzll(b)];
    if (lev->n && lev->v[lev->n - 1] > depth) depth = lev->v[lev->n - 1];
    break;
  }
  default:
    if (!(uopc_op_flags((uopc_op)u->op) & UOPC_OPF_ALU)) {
      fail(L, UOPC_ERR_TYPE, "%s cannot be compiled here", uopc_op_name((uopc_op)u->op));
      return;
    }
  }
  uint32_t x = new_rec(L, UOPI_P_VALUE, u, (uopc_dtype)u->dtype, depth);
  if (x == NONE) return;
  rec *p = &L->r[x];
  memcpy(p->in.src, src, sizeof src);
  p->in.nsrc = ns;
  p->in.flags = (uint8_t)flags;
  p->in.slot = slot;
  p->reads = reads;
  place(L, x, depth);
  remember(L, n, x);
}

/* The instance of u valid here, made (with what it needs) when there is
   none; NONE on failure. */
static uint32_t demand(lin *L, uopc_node *root) {
  uint32_t rn = num(L, root);
  if (L->inst[rn] != NONE) return L->inst[rn];
  if (root->op == UOPC_OP_BUFFER) {
    fail(L, UOPC_ERR_TYPE, "BUFFER cannot be compiled here");
    return NONE;
  }
  uint32_t sp = 0;
  if (!uopi_grow(L->c, (void **)&L->st, &L->capst, 1, sizeof *L->st)) return L->failed = 1, NONE;
  L->st[sp++] = (frame){rn, 0, 0};
  while (sp && !L->failed) {
    frame *f = &L->st[sp - 1];
    uopc_node *u = L->map.node[f->node];
    if (f->next < u->nsrc) {
      uopc_node *s = u->src[f->next++];
      if (s->op == UOPC_OP_BUFFER) continue;
      uint32_t sn = num(L, s);
      if (L->inst[sn] != NONE) continue;
      if (!uopi_grow(L->c, (void **)&L->st, &L->capst, sp + 1, sizeof *L->st)) return L->failed = 1, NONE;
      L->st[sp++] = (frame){sn, 0, 0};
      continue;
    }
    sp--;
    make(L, f->node);
  }
  return L->failed ? NONE : L->inst[rn];
}

/* ---- effects ------------------------------------------------------------------------------ */

static void store(lin *L, uopc_node *u) {
  uint32_t a = demand(L, u->src[0]);
  uint32_t v = a == NONE ? NONE : demand(L, u->src[1]);
  if (v == NONE) return;
  uint32_t x = new_rec(L, UOPI_P_STORE, u, (uopc_dtype)u->src[1]->dtype, L->D);
  if (x == NONE) return;
  rec *p = &L->r[x];
  p->in.nsrc = 2;
  p->in.src[0] = a;
  p->in.src[1] = v;
  p->in.slot = L->r[a].in.slot;
  append(L, x);
  forget_reads(L, slot_bit(p->in.slot)); /* later reads of the slot read memory again */
}

/* Opens the loop of RANGE r, whose END's body stores the slot bits `stores`. */
static void open_loop(lin *L, uopc_node *r, uint64_t stores) {
  uint32_t n = num(L, r);
  if (L->open[n]) {
    fail(L, UOPC_ERR_TYPE, "RANGE idx=%lld is opened again inside its own loop", (long long)r->arg.i);
    return;
  }
  uint32_t end = demand(L, r->src[0]);
  if (end == NONE) return;
  uint32_t x = new_rec(L, UOPI_P_LOOP, r, UOPC_DT_I32, L->D);
  if (x == NONE) return;
  L->r[x].in.nsrc = 1;
  L->r[x].in.src[0] = end;
  L->r[x].vdepth = L->D + 1;
  uint32_t d = L->D + 1;
  if (!uopi_grow(L->c, (void **)&L->lv, &L->caplv, d + 1, sizeof *L->lv)) {
    L->failed = 1;
    return;
  }
  if (d + 1 > L->capby) {
    uint32_t old = L->capby;
    if (!uopi_grow(L->c, (void **)&L->bydepth, &L->capby, d + 1, sizeof *L->bydepth)) {
      L->failed = 1;
      return;
    }
    memset(L->bydepth + old, 0, (size_t)(L->capby - old) * sizeof *L->bydepth);
  }
  L->lv[d] = (level){n, x, L->tail, stores};
  append(L, x);
  L->D = d;
  if (d > L->max_depth) L->max_depth = d;
  L->open[n] = 1;
  forget_reads(L, stores); /* an earlier iteration's store precedes every read in the body */
  for (uint64_t b = stores & L->stored; b; b &= b - 1) push(L, &L->bitlev[__builtin_ctzll(b)], d);
  remember(L, n, x);
}

static void close_loop(lin *L) {
  level *l = &L->lv[L->D];
  uint32_t x = new_rec(L, UOPI_P_ENDLOOP, L->map.node[l->range], UOPC_DT_VOID, L->D - 1);
  if (x == NONE) return;
  L->r[x].in.nsrc = 1;
  L->r[x].in.src[0] = l->loop;
  append(L, x);
  L->open[l->range] = 0;
  forget(L, &L->bydepth[L->D]); /* nothing made inside the loop is valid after it */
  for (uint64_t b = l->stores & L->stored; b; b &= b - 1) L->bitlev[__builtin_ctzll(b)].n--;
  L->D--;
}

/* The walk over the effects below root (a SINK), in program order. */
static void effects(lin *L, uopc_node *root) {
  uint32_t sp = 0;
  if (!uopi_grow(L->c, (void **)&L->eff, &L->capeff, 1, sizeof *L->eff)) {
    L->failed = 1;
    return;
  }
  L->eff[sp++] = (frame){num(L, root), 0, 0};
  while (sp && !L->failed) {
    frame *f = &L->eff[sp - 1];
    uopc_node *u = L->map.node[f->node], *next = NULL;
    switch (u->op) {
    case UOPC_OP_SINK:
      if (f->next < u->nsrc) next = u->src[f->next++];
      else sp--;
      break;
    case UOPC_OP_STORE:
      store(L, u);
      sp--;
      break;
    case UOPC_OP_END:
      if (f->next == 0) f->base = L->D, f->next = 1;
      if (f->next < u->nsrc) {
        open_loop(L, u->src[f->next++], L->stores[f->node]); /* outermost first */
      } else if (f->next == u->nsrc) {
        f->next++;
        next = u->src[0]; /* the body */
      } else {
        while (L->D > f->base && !L->failed) close_loop(L);
        sp--;
      }
      break;
    default: fail(L, UOPC_ERR_TYPE, "%s is not an effect", uopc_op_name((uopc_op)u->op));
    }
    if (next && !L->failed) {
      if (!uopi_grow(L->c, (void **)&L->eff, &L->capeff, sp + 1, sizeof *L->eff)) {
        L->failed = 1;
        return;
      }
      L->eff[sp++] = (frame){num(L, next), 0, 0};
    }
  }
}

/* ---- the stage ------------------------------------------------------------------------------ */

/* Slot bits stored in each effect node (post-order: sources first). */
static void compute_stores(lin *L) {
  for (uint32_t i = 0; i < L->map.n; i++) {
    const uopc_node *u = L->map.node[i];
    uint64_t m = 0;
    if (u->op == UOPC_OP_STORE) m = slot_bit(u->src[0]->src[0]->arg.i);
    else if (u->op == UOPC_OP_SINK || u->op == UOPC_OP_END)
      for (uint32_t j = 0; j < u->nsrc; j++) m |= L->stores[num(L, u->src[j])];
    L->stores[i] = m;
  }
}

/* The list as an array: out->ins in list order, operands renumbered. */
static void flatten(lin *L, uopi_prog *out) {
  uint32_t n = L->nr - 1, *pos = NULL, cap = 0;
  if (!uopi_grow(L->c, (void **)&pos, &cap, L->nr, sizeof *pos) ||
      !uopi_grow(L->c, (void **)&out->ins, &out->cap, n ? n : 1, sizeof *out->ins)) {
    uopc_mem_free(L->c, pos, (size_t)cap * sizeof *pos);
    L->failed = 1;
    return;
  }
  uint32_t k = 0;
  for (uint32_t x = L->r[0].next; x != NONE; x = L->r[x].next) pos[x] = k++;
  UOPI_ASSERT(k == n);
  k = 0;
  for (uint32_t x = L->r[0].next; x != NONE; x = L->r[x].next) {
    uopi_pinst *p = &out->ins[k++];
    *p = L->r[x].in;
    for (uint32_t j = 0; j < p->nsrc; j++) p->src[j] = pos[p->src[j]];
  }
  out->n = n;
  uopc_mem_free(L->c, pos, (size_t)cap * sizeof *pos);
}

static void lin_free(lin *L) {
  uopc_ctx *c = L->c;
  uint32_t n = L->map.n;
  uopc_mem_free(c, L->inst, (size_t)n * sizeof *L->inst);
  uopc_mem_free(c, L->stores, (size_t)n * sizeof *L->stores);
  uopc_mem_free(c, L->open, (size_t)n * sizeof *L->open);
  uopi_nodemap_free(&L->map);
  uopc_mem_free(c, L->r, (size_t)L->caprec * sizeof *L->r);
  uopc_mem_free(c, L->lv, (size_t)L->caplv * sizeof *L->lv);
  for (uint32_t d = 0; d < L->capby; d++) vec_free(c, &L->bydepth[d]);
  uopc_mem_free(c, L->bydepth, (size_t)L->capby * sizeof *L->bydepth);
  for (int b = 0; b < 64; b++) vec_free(c, &L->byslot[b]), vec_free(c, &L->bitlev[b]);
  uopc_mem_free(c, L->st, (size_t)L->capst * sizeof *L->st);
  uopc_mem_free(c, L->eff, (size_t)L->capeff * sizeof *L->eff);
}

uopc_status uopi_linearize(uopc_ctx *c, const uopi_kernel_ir *k, uopi_prog *out) {
  memset(out, 0, sizeof *out);
  out->c = c;
  lin L = {.c = c};
  if (uopi_nodemap_build(c, k->root, &L.map) != UOPC_OK) return UOPC_ERR_NOMEM;
  uint32_t n = L.map.n;
  L.inst = uopc_mem_alloc(c, (size_t)n * sizeof *L.inst);
  L.stores = uopc_mem_alloc(c, (size_t)n * sizeof *L.stores);
  L.open = uopc_mem_alloc(c, (size_t)n * sizeof *L.open);
  L.failed = !L.inst || !L.stores || !L.open ||
             !uopi_grow(c, (void **)&L.bydepth, &L.capby, 1, sizeof *L.bydepth);
  if (!L.failed) {
    memset(L.inst, 0xff, (size_t)n * sizeof *L.inst); /* NONE */
    memset(L.open, 0, (size_t)n);
    memset(L.bydepth, 0, (size_t)L.capby * sizeof *L.bydepth);
    compute_stores(&L);
    L.stored = L.stores[num(&L, k->root)];
    L.tail = new_rec(&L, UOPI_P_VALUE, k->root, UOPC_DT_VOID, 0); /* r[0]: the head */
  }
  if (!L.failed) effects(&L, k->root);
  if (!L.failed) flatten(&L, out);
  lin_free(&L);
  if (L.failed) {
    uopi_prog_free(out);
    out->c = c;
    const uopc_error *e = uopc_ctx_error(c);
    if (!e) uopc_fail(c, UOPC_ERR_NOMEM, "out of memory linearizing a kernel");
    return uopc_ctx_error(c)->code;
  }
  out->nbufs = k->nbufs;
  out->max_depth = L.max_depth;
  return UOPC_OK;
}

void uopi_prog_free(uopi_prog *p) {
  if (!p || !p->c) return;
  uopc_mem_free(p->c, p->ins, (size_t)p->cap * sizeof *p->ins);
  p->ins = NULL;
  p->n = p->cap = 0;
}
