/* tools/check_eval.c - the evaluators of uopc check-rules: scalar graphs
 * node by node, shaped closed programs (a reference independent of run), and
 * small kernels.  Every ALU op goes through uopc_exec_alu, the spec's
 * arithmetic; none of them calls the rewriter.  No recursion over graphs:
 * graphs are walked with explicit stacks; the only recursion is over CALL
 * nesting and a kernel's SINK/END structure, both capped.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_impl.h"

/* ---- tables by node id -------------------------------------------------------- */

int chk_tab_fit(chk_tab *t, uint32_t n) {
  if (n <= t->cap) return 1;
  uint32_t cap = t->cap ? t->cap : 1024;
  while (cap < n) cap *= 2;
  uopc_val *v = realloc(t->v, (size_t)cap * sizeof *v);
  if (!v) return 0;
  t->v = v;
  uint8_t *d = realloc(t->def, cap);
  if (!d) return 0;
  t->def = d;
  uint32_t *s = realloc(t->stamp, (size_t)cap * sizeof *s);
  if (!s) return 0;
  memset(s + t->cap, 0, (size_t)(cap - t->cap) * sizeof *s);
  t->stamp = s;
  t->cap = cap;
  if (!t->cur) t->cur = 1;
  return 1;
}

void chk_tab_free(chk_tab *t) {
  free(t->v);
  free(t->def);
  free(t->stamp);
  memset(t, 0, sizeof *t);
}

/* exec_alu on u with source values s[] and their definedness d[] (poison
   rules above).  Returns 1 and *out when defined. */
static int alu(const uopc_node *u, const uopc_val *s, const uint8_t *d, uopc_val *out) {
  uopc_val in[3];
  if (u->op == UOPC_OP_WHERE) {
    if (!d[0]) return 0;
    int arm = s[0].i ? 1 : 2;
    if (!d[arm]) return 0;
    in[0] = s[0];
    in[1] = s[arm]; /* the arm not taken may be poison: give exec_alu the taken one twice */
    in[2] = s[arm];
    return uopc_exec_alu(UOPC_OP_WHERE, (uopc_dtype)u->dtype, (uopc_dtype)u->src[1]->dtype, in, out);
  }
  for (uint32_t i = 0; i < u->nsrc; i++) {
    if (!d[i]) return 0;
    in[i] = s[i];
  }
  return uopc_exec_alu((uopc_op)u->op, (uopc_dtype)u->dtype, (uopc_dtype)u->src[0]->dtype, in, out);
}

static int is_alu(const uopc_node *u) { return (uopc_op_flags((uopc_op)u->op) & UOPC_OPF_ALU) && u->nsrc <= 3; }

/* ---- scalar graphs --------------------------------------------------------------- */

int chk_scalar_eval(chk_tab *val, chk_inputs *in, uopc_node *const *topo, uint32_t n, uopc_val *out) {
  chk_tab_clear(val);
  for (uint32_t k = 0; k < n; k++) {
    uopc_node *u = topo[k];
    uopc_val v = {0, 0.0};
    int def = 1;
    if (u->ndim) return -2;
    switch (u->op) {
    case UOPC_OP_CONST: v = chk_const_val(u); break;
    case UOPC_OP_PARAM:
      if (!chk_tab_has(&in->tab, u->id))
        chk_tab_put(&in->tab, u->id, chk_rand_val(in->r, (uopc_dtype)u->dtype, in->pool, in->npool), 1);
      v = in->tab.v[u->id];
      break;
    case UOPC_OP_RANGE:
      if (!chk_tab_has(&in->tab, u->id)) { /* below its end's value, evaluated already */
        uint32_t e = u->src[0]->id;
        if (!chk_tab_has(val, e) || !val->def[e] || val->v[e].i <= 0) return -1;
        uopc_val r = {chk_rand_below(in->r, val->v[e].i), 0.0};
        chk_tab_put(&in->tab, u->id, r, 1);
      }
      v = in->tab.v[u->id];
      break;
    default: {
      if (!is_alu(u)) return -2;
      uopc_val s[3];
      uint8_t d[3];
      for (uint32_t i = 0; i < u->nsrc; i++) {
        uint32_t id = u->src[i]->id;
        if (!chk_tab_has(val, id)) return -2; /* not a toposort */
        s[i] = val->v[id];
        d[i] = val->def[id];
      }
      def = alu(u, s, d, &v);
    }
    }
    chk_tab_put(val, u->id, v, def);
  }
  if (!n) return -2;
  uint32_t root = topo[n - 1]->id;
  *out = val->v[root];
  return val->def[root] ? 1 : 0;
}

/* ---- shaped values: the reference evaluator ---------------------------------- */

typedef struct rval {
  uint32_t n;
  uopc_val *v;
  uint8_t *d; /* element defined */
} rval;

typedef struct rctx {
  uopc_node *const *free_p;
  const chk_flat *free_v;
  uint32_t nfree;
  int fatal; /* an index out of bounds: the program has no value */
  int unsupported;
  int oom;
} rctx;

static int rval_new(rctx *R, rval *x, uint32_t n) {
  x->n = n;
  x->v = calloc(n ? n : 1, sizeof *x->v);
  x->d = calloc(n ? n : 1, 1);
  if (!x->v || !x->d) {
    free(x->v), free(x->d);
    x->v = NULL, x->d = NULL;
    R->oom = 1;
    return 0;
  }
  return 1;
}

static void rval_free(rval *x) {
  free(x->v);
  free(x->d);
  x->v = NULL, x->d = NULL;
}

static int all_def(const rval *x) {
  for (uint32_t i = 0; i < x->n; i++)
    if (!x->d[i]) return 0;
  return 1;
}

/* One scope: the nodes of a program or a CALL body, not entering nested
   bodies, with their values. */
typedef struct rscope {
  uopc_node **node;
  rval *val;
  uint32_t n, cap;
  uint32_t *hash; /* slot + 1, 0: empty */
  uint32_t hcap;
} rscope;

static uint32_t hptr(const void *p, uint32_t mask) {
  uint64_t x = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
  return (uint32_t)(x >> 32) & mask;
}

/* The slot of u, or -1. */
static int64_t scope_find(const rscope *S, const uopc_node *u) {
  if (!S->hcap) return -1;
  for (uint32_t h = hptr(u, S->hcap - 1);; h = (h + 1) & (S->hcap - 1)) {
    if (!S->hash[h]) return -1;
    if (S->node[S->hash[h] - 1] == u) return S->hash[h] - 1;
  }
}

static int scope_add(rctx *R, rscope *S, uopc_node *u) {
  if (S->n == S->cap) {
    uint32_t cap = S->cap ? 2 * S->cap : 32;
    uopc_node **nn = realloc(S->node, cap * sizeof *nn);
    if (!nn) return R->oom = 1, 0;
    S->node = nn;
    rval *nv = realloc(S->val, cap * sizeof *nv);
    if (!nv) return R->oom = 1, 0;
    memset(nv + S->cap, 0, (cap - S->cap) * sizeof *nv);
    S->val = nv;
    S->cap = cap;
  }
  if (2 * (S->n + 1) > S->hcap) {
    uint32_t hcap = S->hcap ? 2 * S->hcap : 64;
    uint32_t *h = calloc(hcap, sizeof *h);
    if (!h) return R->oom = 1, 0;
    for (uint32_t i = 0; i < S->n; i++) {
      uint32_t k = hptr(S->node[i], hcap - 1);
      while (h[k]) k = (k + 1) & (hcap - 1);
      h[k] = i + 1;
    }
    free(S->hash);
    S->hash = h;
    S->hcap = hcap;
  }
  S->node[S->n] = u;
  uint32_t k = hptr(u, S->hcap - 1);
  while (S->hash[k]) k = (k + 1) & (S->hcap - 1);
  S->hash[k] = ++S->n;
  return 1;
}

static void scope_free(rscope *S) {
  for (uint32_t i = 0; i < S->n; i++) rval_free(&S->val[i]);
  free(S->node);
  free(S->val);
  free(S->hash);
}

static void unravel(int64_t i, const int32_t *sh, uint32_t nd, int64_t *idx) {
  for (uint32_t k = nd; k-- > 0;) {
    idx[k] = i % sh[k];
    i /= sh[k];
  }
}

static int64_t ravel(const int64_t *idx, const int32_t *sh, uint32_t nd) {
  int64_t i = 0;
  for (uint32_t k = 0; k < nd; k++) i = i * sh[k] + idx[k];
  return i;
}

static int ref_scope(rctx *R, uopc_node *root, const rval *params, uint32_t nparams, int depth, rval *out);

/* The value of u, its sources' values in S. */
static int ref_node(rctx *R, rscope *S, uopc_node *u, const rval *params, uint32_t nparams, int depth, rval *out) {
  const rval *s[8];
  uint32_t ns = u->nsrc < 8 ? u->nsrc : 8;
  if (u->nsrc > 8 && u->op != UOPC_OP_STACK && u->op != UOPC_OP_CALL) return R->unsupported = 1, 0;
  for (uint32_t i = (u->op == UOPC_OP_CALL); i < ns; i++) s[i] = &S->val[scope_find(S, u->src[i])];
  uint32_t n = (uint32_t)uopc_numel(u);
  uopc_dtype t = (uopc_dtype)u->dtype;
  switch (u->op) {
  case UOPC_OP_CONST:
    if (!rval_new(R, out, 1)) return 0;
    out->v[0] = chk_const_val(u), out->d[0] = 1;
    return 1;
  case UOPC_OP_PARAM: {
    if (params) {
      if (u->arg.i >= nparams) return R->unsupported = 1, 0;
      const rval *p = &params[u->arg.i];
      if (!rval_new(R, out, p->n)) return 0;
      memcpy(out->v, p->v, p->n * sizeof *p->v);
      memcpy(out->d, p->d, p->n);
      return 1;
    }
    for (uint32_t i = 0; i < R->nfree; i++)
      if (R->free_p[i] == u) {
        if (R->free_v[i].n != n || !rval_new(R, out, n)) return R->unsupported |= !R->oom, 0;
        memcpy(out->v, R->free_v[i].v, n * sizeof *out->v);
        memset(out->d, 1, n);
        return 1;
      }
    return R->unsupported = 1, 0;
  }
  case UOPC_OP_STACK: {
    if (!rval_new(R, out, n)) return 0;
    uint32_t at = 0;
    for (uint32_t i = 0; i < u->nsrc; i++) {
      const rval *x = &S->val[scope_find(S, u->src[i])];
      memcpy(out->v + at, x->v, x->n * sizeof *x->v);
      memcpy(out->d + at, x->d, x->n);
      at += x->n;
    }
    return 1;
  }
  case UOPC_OP_INDEX: {
    const rval *x = s[0];
    const uopc_node *xs = u->src[0];
    if (xs->op == UOPC_OP_BUFFER) return R->unsupported = 1, 0;
    if (!rval_new(R, out, n)) return 0;
    int64_t off = 0;
    for (uint32_t i = 1; i < u->nsrc; i++) {
      if (!s[i]->d[0]) return 1; /* an undefined index: the node is undefined */
      int64_t k = s[i]->v[0].i;
      if (k < 0 || k >= xs->shape[i - 1]) return R->fatal = 1, 1;
      off = off * xs->shape[i - 1] + k;
    }
    off *= n;
    memcpy(out->v, x->v + off, n * sizeof *out->v);
    memcpy(out->d, x->d + off, n);
    return 1;
  }
  case UOPC_OP_RESHAPE: case UOPC_OP_EXPAND: case UOPC_OP_PERMUTE: case UOPC_OP_SHRINK: case UOPC_OP_REDUCE: {
    const rval *x = s[0];
    const uopc_node *xs = u->src[0];
    if (!rval_new(R, out, n)) return 0;
    if (!all_def(x)) return 1; /* undefined as a whole */
    int64_t oi[UOPC_LIMIT_DIMS], ii[UOPC_LIMIT_DIMS];
    if (u->op == UOPC_OP_REDUCE) {
      uint32_t inner = x->n / (n ? n : 1);
      for (uint32_t i = 0; i < n; i++) {
        uopc_val acc = x->v[(size_t)i * inner];
        int ok = 1;
        for (uint32_t j = 1; j < inner && ok; j++) {
          uopc_val ab[2] = {acc, x->v[(size_t)i * inner + j]};
          ok = uopc_exec_alu((uopc_op)u->arg.rop, t, t, ab, &acc);
        }
        out->v[i] = acc, out->d[i] = (uint8_t)ok;
      }
      return 1;
    }
    for (uint32_t i = 0; i < n; i++) {
      int64_t src_i = i;
      if (u->op != UOPC_OP_RESHAPE) {
        unravel(i, u->shape, u->ndim, oi);
        for (uint32_t k = 0; k < xs->ndim; k++) {
          if (u->op == UOPC_OP_EXPAND) ii[k] = xs->shape[k] == 1 ? 0 : oi[k];
          else if (u->op == UOPC_OP_SHRINK) ii[k] = oi[k] + u->arg.v[2 * k];
          else ii[u->arg.v[k]] = oi[k]; /* output axis k is input axis perm[k] */
        }
        src_i = ravel(ii, xs->shape, xs->ndim);
      }
      out->v[i] = x->v[src_i], out->d[i] = 1;
    }
    return 1;
  }
  case UOPC_OP_CALL: {
    uint32_t na = u->nsrc - 1;
    rval *args = calloc(na ? na : 1, sizeof *args);
    if (!args) return R->oom = 1, 0;
    for (uint32_t i = 0; i < na; i++) args[i] = S->val[scope_find(S, u->src[1 + i])]; /* borrowed */
    int ok = ref_scope(R, u->src[0], args, na, depth + 1, out);
    free(args);
    return ok;
  }
  default: {
    if (!is_alu(u)) return R->unsupported = 1, 0;
    if (!rval_new(R, out, n)) return 0;
    for (uint32_t i = 0; i < n; i++) {
      uopc_val sv[3];
      uint8_t sd[3];
      for (uint32_t j = 0; j < u->nsrc; j++) sv[j] = s[j]->v[i], sd[j] = s[j]->d[i];
      out->d[i] = (uint8_t)alu(u, sv, sd, &out->v[i]);
    }
    return 1;
  }
  }
}

/* The value of root in a scope whose PARAMs are params[0..nparams) (NULL:
   the top level, where PARAMs are the free ones). */
static int ref_scope(rctx *R, uopc_node *root, const rval *params, uint32_t nparams, int depth, rval *out) {
  if (depth > 8) return R->unsupported = 1, 0;
  rscope S = {0};
  struct frame {
    uopc_node *u;
    uint32_t i;
  } *st = NULL;
  uint32_t sp = 0, cap = 64;
  int ok = scope_add(R, &S, root) && (st = malloc(cap * sizeof *st)) != NULL;
  if (!ok) R->oom = 1;
  /* post-order, sources first, not entering a CALL's body (its src[0]) */
  if (ok) st[sp++] = (struct frame){root, 0};
  while (sp && ok) {
    struct frame *f = &st[sp - 1];
    uopc_node *u = f->u;
    if (f->i < u->nsrc) {
      uint32_t i = f->i++;
      uopc_node *x = u->src[i];
      if ((u->op == UOPC_OP_CALL && i == 0) || scope_find(&S, x) >= 0) continue;
      if (!scope_add(R, &S, x)) {
        ok = 0;
      } else if (sp == cap) {
        struct frame *ns = realloc(st, 2 * cap * sizeof *st);
        if (!ns) R->oom = 1, ok = 0;
        else st = ns, cap *= 2;
      }
      if (ok) st[sp++] = (struct frame){x, 0};
      continue;
    }
    sp--;
    if (!ref_node(R, &S, u, params, nparams, depth, &S.val[scope_find(&S, u)]) || R->fatal) ok = 0;
  }
  if (ok) {
    int64_t slot = scope_find(&S, root);
    *out = S.val[slot];
    S.val[slot] = (rval){0};
  }
  free(st);
  scope_free(&S);
  return ok && !R->oom && !R->fatal && !R->unsupported;
}

int chk_ref_eval(uopc_ctx *c, uopc_node *root, uopc_node *const *free_p, const chk_flat *free_v, uint32_t nfree,
                 chk_flat *out) {
  (void)c;
  rctx R = {.free_p = free_p, .free_v = free_v, .nfree = nfree};
  rval v = {0};
  out->n = 0, out->v = NULL;
  int ok = ref_scope(&R, root, NULL, 0, 0, &v);
  if (R.unsupported || R.oom) {
    rval_free(&v);
    return -2;
  }
  if (!ok || R.fatal || !all_def(&v)) {
    rval_free(&v);
    return 0;
  }
  out->n = v.n;
  out->v = v.v;
  free(v.d);
  return 1;
}

/* ---- kernels --------------------------------------------------------------------- */

/* The scalar nodes under one root (a STORE, or a RANGE's end), sources first,
   not entering RANGEs (a RANGE's value is its loop's), with the positions of
   each node's sources. */
typedef struct kprog {
  uopc_node *root;
  uint32_t n;
  uopc_node **u;
  int32_t *sp; /* 3 per node */
  uopc_val *v;
  uint8_t *d;
} kprog;

#define KMAX_PROGS 32
#define KMAX_NODES 512
#define KMAX_LOOPS 32

typedef struct kstate {
  chk_buf *bufs;
  uint32_t nbufs;
  kprog prog[KMAX_PROGS];
  uint32_t nprog;
  uopc_node *act_r[KMAX_LOOPS];
  int64_t act_v[KMAX_LOOPS];
  uint32_t nact;
  uint64_t steps, max_steps;
  int stop; /* 0 running, 1 undefined, 2 too long, 3 cannot interpret, 4 out of memory */
} kstate;

static int32_t kfind(const kprog *p, const uopc_node *u) {
  for (uint32_t i = 0; i < p->n; i++)
    if (p->u[i] == u) return (int32_t)i;
  return -1;
}

static kprog *kprog_get(kstate *K, uopc_node *root) {
  for (uint32_t i = 0; i < K->nprog; i++)
    if (K->prog[i].root == root) return &K->prog[i];
  if (K->nprog == KMAX_PROGS) return K->stop = 3, NULL;
  kprog *p = &K->prog[K->nprog++];
  memset(p, 0, sizeof *p);
  p->root = root;
  p->u = malloc(KMAX_NODES * sizeof *p->u);
  p->sp = malloc(KMAX_NODES * 3 * sizeof *p->sp);
  p->v = malloc(KMAX_NODES * sizeof *p->v);
  p->d = malloc(KMAX_NODES);
  struct frame {
    uopc_node *u;
    uint32_t i;
  } st[KMAX_NODES];
  uopc_node *seen[KMAX_NODES];
  uint32_t sp = 0, nseen = 0;
  if (!p->u || !p->sp || !p->v || !p->d) return K->stop = 4, NULL;
  st[sp++] = (struct frame){root, 0};
  seen[nseen++] = root;
  while (sp) {
    struct frame *f = &st[sp - 1];
    uopc_node *u = f->u;
    uint32_t nsrc = (u->op == UOPC_OP_RANGE || u->op == UOPC_OP_BUFFER) ? 0 : u->nsrc;
    if (nsrc > 3) return K->stop = 3, NULL;
    if (f->i < nsrc) {
      uopc_node *x = u->src[f->i++];
      int dup = 0;
      for (uint32_t j = 0; j < nseen && !dup; j++) dup = seen[j] == x;
      if (dup) continue;
      if (nseen == KMAX_NODES || sp == KMAX_NODES) return K->stop = 3, NULL;
      seen[nseen++] = x;
      st[sp++] = (struct frame){x, 0};
      continue;
    }
    sp--;
    for (uint32_t j = 0; j < 3; j++) p->sp[3 * p->n + j] = j < nsrc ? kfind(p, u->src[j]) : -1;
    p->u[p->n++] = u;
  }
  return p;
}

static void kprogs_free(kstate *K) {
  for (uint32_t i = 0; i < K->nprog; i++) {
    free(K->prog[i].u);
    free(K->prog[i].sp);
    free(K->prog[i].v);
    free(K->prog[i].d);
  }
}

static chk_buf *kbuf(kstate *K, const uopc_node *b) {
  if (b->op != UOPC_OP_BUFFER || b->arg.i < 0 || b->arg.i >= K->nbufs) return NULL;
  chk_buf *B = &K->bufs[b->arg.i];
  return B->t == b->dtype && B->n == b->shape[0] ? B : NULL;
}

/* Evaluates p in the current loops; 0 when the run stops. */
static int kprog_run(kstate *K, kprog *p) {
  for (uint32_t k = 0; k < p->n && !K->stop; k++) {
    uopc_node *u = p->u[k];
    const int32_t *sp = &p->sp[3 * k];
    uopc_val v = {0, 0.0};
    int def = 1;
    switch (u->op) {
    case UOPC_OP_CONST: v = chk_const_val(u); break;
    case UOPC_OP_BUFFER: break;
    case UOPC_OP_RANGE: {
      uint32_t j = K->nact;
      while (j > 0 && K->act_r[j - 1] != u) j--;
      if (!j) return K->stop = 1, 0; /* used outside the END that closes it */
      v.i = K->act_v[j - 1];
      break;
    }
    case UOPC_OP_INDEX: /* an address: its index; LOAD and STORE check it */
      if (u->nsrc != 2 || u->src[0]->op != UOPC_OP_BUFFER) return K->stop = 3, 0;
      v = p->v[sp[1]], def = p->d[sp[1]];
      break;
    case UOPC_OP_LOAD: {
      uopc_node *a = u->src[0];
      chk_buf *B = kbuf(K, a->src[0]);
      if (!B) return K->stop = 3, 0;
      int32_t ai = sp[0];
      if (!p->d[ai] || p->v[ai].i < 0 || p->v[ai].i >= B->n) return K->stop = 1, 0;
      v = B->v[p->v[ai].i], def = B->def[p->v[ai].i];
      break;
    }
    case UOPC_OP_STORE: {
      uopc_node *a = u->src[0];
      chk_buf *B = kbuf(K, a->src[0]);
      if (!B) return K->stop = 3, 0;
      int32_t ai = sp[0], vi = sp[1];
      if (!p->d[ai] || p->v[ai].i < 0 || p->v[ai].i >= B->n) return K->stop = 1, 0;
      B->v[p->v[ai].i] = p->v[vi];
      B->def[p->v[ai].i] = p->d[vi];
      if (++K->steps > K->max_steps) return K->stop = 2, 0;
      break;
    }
    default: {
      if (!is_alu(u) || u->ndim) return K->stop = 3, 0;
      uopc_val s[3];
      uint8_t d[3];
      for (uint32_t i = 0; i < u->nsrc; i++) s[i] = p->v[sp[i]], d[i] = p->d[sp[i]];
      def = alu(u, s, d, &v);
    }
    }
    p->v[k] = v, p->d[k] = (uint8_t)def;
  }
  return !K->stop;
}

static void kexec(kstate *K, uopc_node *e, int depth);

/* The loops of END e from level on, then its value. */
static void kloops(kstate *K, uopc_node *e, uint32_t level, int depth) {
  if (level == e->nsrc) {
    kexec(K, e->src[0], depth + 1);
    return;
  }
  uopc_node *r = e->src[level];
  kprog *p = kprog_get(K, r->src[0]);
  if (!p || !kprog_run(K, p)) return;
  if (!p->d[p->n - 1]) { /* an undefined end */
    K->stop = 1;
    return;
  }
  int64_t end = p->v[p->n - 1].i;
  if (K->nact == KMAX_LOOPS) {
    K->stop = 3;
    return;
  }
  uint32_t a = K->nact++;
  K->act_r[a] = r;
  for (int64_t i = 0; i < end && !K->stop; i++) {
    K->act_v[a] = i;
    if (++K->steps > K->max_steps) K->stop = 2;
    else kloops(K, e, level + 1, depth);
  }
  K->nact--;
}

static void kexec(kstate *K, uopc_node *e, int depth) {
  if (K->stop) return;
  if (depth > 16) {
    K->stop = 3;
    return;
  }
  switch (e->op) {
  case UOPC_OP_SINK:
    for (uint32_t i = 0; i < e->nsrc && !K->stop; i++) kexec(K, e->src[i], depth + 1);
    break;
  case UOPC_OP_END: kloops(K, e, 1, depth); break;
  case UOPC_OP_STORE: {
    kprog *p = kprog_get(K, e);
    if (p) kprog_run(K, p);
    break;
  }
  default: K->stop = 3;
  }
}

int chk_kernel_run(uopc_node *sink, chk_buf *bufs, uint32_t nbufs, uint64_t max_steps) {
  kstate *K = calloc(1, sizeof *K);
  if (!K) return -3;
  K->bufs = bufs;
  K->nbufs = nbufs;
  K->max_steps = max_steps;
  kexec(K, sink, 0);
  int stop = K->stop;
  kprogs_free(K);
  free(K);
  static const int rc[] = {1, 0, -1, -2, -3};
  return rc[stop];
}
