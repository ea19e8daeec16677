/* lib/core/graph.c - walking graphs: toposort, size, substitute, the
 * PARAMs of a CALL body.  All iterative: a graph may be a million deep.
 */
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"

typedef struct frame {
  uopc_node *u;
  uint32_t next; /* next source to visit */
} frame;

/* Post-order walk from root, sources left to right, each node once.  When
   skip_call_bodies, the src[0] of every CALL met (the root too) is not
   entered.  Calls visit(u, ud) in order; returns 0 when visit or an
   allocation fails. */
static int walk(uopc_ctx *c, uopc_node *root, int skip_call_bodies, int (*visit)(uopc_node *, void *),
                void *ud) {
  uopi_table *seen = uopi_table_acquire(c);
  if (!seen) return 0;
  frame *st = NULL;
  uint32_t cap = 0, sp = 0;
  int ok = uopi_grow(c, (void **)&st, &cap, 64, sizeof *st) && uopi_table_set(c, seen, root->id, root);
  if (ok) st[sp++] = (frame){root, 0};
  while (ok && sp) {
    frame *f = &st[sp - 1];
    uopc_node *u = f->u;
    if (f->next == 0 && skip_call_bodies && u->op == UOPC_OP_CALL) f->next = 1;
    if (f->next < u->nsrc) {
      uopc_node *s = u->src[f->next++];
      if (uopi_table_get(seen, s->id)) continue;
      if (!uopi_table_set(c, seen, s->id, s) || !uopi_grow(c, (void **)&st, &cap, sp + 1, sizeof *st)) {
        ok = 0;
        break;
      }
      st[sp++] = (frame){s, 0};
      continue;
    }
    sp--;
    if (!visit(u, ud)) ok = 0;
  }
  uopc_mem_free(c, st, (size_t)cap * sizeof *st);
  uopi_table_release(c, seen);
  return ok;
}

typedef struct collect {
  uopc_ctx *c;
  uopc_node **v;
  uint32_t n, cap;
  int params_only;
} collect;

static int collect_visit(uopc_node *u, void *ud) {
  collect *k = ud;
  if (k->params_only && u->op != UOPC_OP_PARAM) return 1;
  if (!uopi_grow(k->c, (void **)&k->v, &k->cap, k->n + 1, sizeof *k->v)) return 0;
  k->v[k->n++] = u;
  return 1;
}

/* Shrinks a collected array to exactly n entries so it can be freed with n. */
static uopc_node **fit(collect *k, uint32_t *n) {
  *n = k->n;
  if (k->n == 0) {
    uopc_mem_free(k->c, k->v, (size_t)k->cap * sizeof *k->v);
    return NULL;
  }
  if (k->cap != k->n) {
    uopc_node **v = uopc_mem_realloc(k->c, k->v, (size_t)k->cap * sizeof *v, (size_t)k->n * sizeof *v);
    if (!v) {
      uopc_mem_free(k->c, k->v, (size_t)k->cap * sizeof *k->v);
      *n = 0;
      return NULL;
    }
    k->v = v;
  }
  return k->v;
}

uopc_node **uopc_toposort(uopc_ctx *c, uopc_node *root, uint32_t *n) {
  if (!n) return uopc_fail(c, UOPC_ERR_ARG, "toposort: NULL count pointer");
  *n = 0;
  if (!uopi_check_node(c, root, "toposort")) return NULL;
  collect k = {c, NULL, 0, 0, 0};
  if (!walk(c, root, 0, collect_visit, &k)) {
    uopc_mem_free(c, k.v, (size_t)k.cap * sizeof *k.v);
    return NULL;
  }
  return fit(&k, n);
}

static int count_visit(uopc_node *u, void *ud) {
  (void)u;
  ++*(uint32_t *)ud;
  return 1;
}

uint32_t uopc_graph_size(uopc_ctx *c, uopc_node *root) {
  uint32_t n = 0;
  if (!c || !root || !uopi_owns(c, root)) return 0;
  if (!walk(c, root, 0, count_visit, &n)) return 0;
  return n;
}

static int param_cmp(const void *a, const void *b) {
  const uopc_node *x = *(uopc_node *const *)a, *y = *(uopc_node *const *)b;
  if (x->arg.i != y->arg.i) return x->arg.i < y->arg.i ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

uopc_node **uopc_call_params(uopc_ctx *c, uopc_node *body, uint32_t *n) {
  if (!n) return uopc_fail(c, UOPC_ERR_ARG, "call_params: NULL count pointer");
  *n = 0;
  if (!uopi_check_node(c, body, "call_params")) return NULL;
  collect k = {c, NULL, 0, 0, 1};
  if (!walk(c, body, 1, collect_visit, &k)) {
    uopc_mem_free(c, k.v, (size_t)k.cap * sizeof *k.v);
    return NULL;
  }
  if (k.n > 1) qsort(k.v, k.n, sizeof *k.v, param_cmp);
  return fit(&k, n);
}

typedef struct rebuild {
  uopc_ctx *c;
  uopi_table *map;
  uopc_node **buf;
  uint32_t bcap;
  int scoped;
} rebuild;

static int rebuild_visit(uopc_node *u, void *ud) {
  rebuild *k = ud;
  if (uopi_table_get(k->map, u->id)) return 1; /* given by the caller: replaced, not rebuilt */
  if (!uopi_grow(k->c, (void **)&k->buf, &k->bcap, u->nsrc + 1, sizeof *k->buf)) return 0;
  for (uint32_t j = 0; j < u->nsrc; j++) {
    uopc_node *m = (k->scoped && u->op == UOPC_OP_CALL && j == 0) ? NULL : uopi_table_get(k->map, u->src[j]->id);
    k->buf[j] = m ? m : u->src[j];
  }
  uopc_node *r = uopc_replace(k->c, u, k->buf, u->nsrc);
  return r && uopi_table_set(k->c, k->map, u->id, r);
}

uopc_node *uopi_rebuild(uopc_ctx *c, uopc_node *root, uopi_table *map, int scoped) {
  rebuild k = {c, map, NULL, 0, scoped};
  int ok = walk(c, root, scoped, rebuild_visit, &k);
  uopc_mem_free(c, k.buf, (size_t)k.bcap * sizeof *k.buf);
  return ok ? uopi_table_get(map, root->id) : NULL;
}

uopc_node *uopc_substitute(uopc_ctx *c, uopc_node *root, uopc_node *const *from, uopc_node *const *to,
                           uint32_t n) {
  if (!uopi_check_node(c, root, "substitute")) return NULL;
  if (n && (!from || !to)) return uopc_fail(c, UOPC_ERR_ARG, "substitute: %u replacements given as NULL arrays", n);
  for (uint32_t i = 0; i < n; i++)
    if (!uopi_check_node(c, from[i], "substitute") || !uopi_check_node(c, to[i], "substitute")) return NULL;
  uopi_table *map = uopi_table_acquire(c);
  if (!map) return NULL;
  uopc_node *res = NULL;
  uint32_t i = 0;
  for (; i < n; i++) {
    if (!from[i] || !to[i]) {
      uopc_fail(c, UOPC_ERR_ARG, "substitute: NULL node");
      break;
    }
    if (!uopi_table_set(c, map, from[i]->id, to[i])) break;
  }
  if (i == n) res = uopi_rebuild(c, root, map, 0);
  uopi_table_release(c, map);
  return res;
}
