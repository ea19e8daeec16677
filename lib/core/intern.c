/* lib/core/intern.c - hash consing: building a node means interning it.
 *
 * The key is (op, dtype, shape, sources, arg).  Constants compare by the bit
 * pattern of their value and dtype, so 0, 0.0, -0.0 and False are four
 * different nodes; every NaN was made the same NaN before we get here.
 */
#include <string.h>

#include "core/intern.h"

static inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 32);
}

static uint64_t dbits(double f) {
  uint64_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

uint32_t uopi_key_hash(const uopi_key *k) {
  uint64_t h = mix(k->op, ((uint64_t)k->dtype << 8) | k->ndim);
  for (uint32_t i = 0; i < k->ndim; i++) h = mix(h, (uint32_t)k->shape[i]);
  h = mix(h, k->nsrc);
  for (uint32_t i = 0; i < k->nsrc; i++) h = mix(h, k->src[i]->id);
  h = mix(h, (uint64_t)k->arg.i);
  h = mix(h, dbits(k->arg.f));
  h = mix(h, ((uint64_t)k->arg.rop << 32) | k->arg.n);
  for (uint32_t i = 0; i < k->arg.n * (k->op == UOPC_SHRINK ? 2u : 1u); i++) h = mix(h, (uint32_t)k->arg.v[i]);
  if (k->arg.name)
    for (const char *s = k->arg.name; *s; s++) h = mix(h, (unsigned char)*s);
  return (uint32_t)(h ^ (h >> 29));
}

static int arg_eq(uopc_op op, const uopc_arg *a, const uopc_arg *b) {
  if (a->i != b->i || dbits(a->f) != dbits(b->f) || a->rop != b->rop || a->n != b->n) return 0;
  uint32_t nv = a->n * (op == UOPC_SHRINK ? 2u : 1u);
  if (nv && memcmp(a->v, b->v, nv * sizeof *a->v) != 0) return 0;
  if ((a->name == NULL) != (b->name == NULL)) return 0;
  return a->name == NULL || strcmp(a->name, b->name) == 0;
}

static int key_eq(const uopc_node *n, const uopi_key *k, uint32_t h) {
  if (n->hash != h || n->op != k->op || n->dtype != k->dtype || n->ndim != k->ndim || n->nsrc != k->nsrc)
    return 0;
  for (uint32_t i = 0; i < k->nsrc; i++)
    if (n->src[i] != k->src[i]) return 0;
  if (k->ndim && memcmp(n->shape, k->shape, k->ndim * sizeof *k->shape) != 0) return 0;
  return arg_eq(k->op, &n->arg, &k->arg);
}

static int rehash(uopc_ctx *c) {
  uint32_t old = c->slots ? c->mask + 1 : 0;
  uint32_t ncap = old ? old * 2 : 1024;
  if (ncap == 0) {
    uopc_fail(c, UOPC_ERR_NOMEM, "too many nodes");
    return 0;
  }
  uint64_t *ns = uopi_big_realloc(c, NULL, 0, (size_t)ncap * sizeof *ns);
  if (!ns) return 0;
  memset(ns, 0, (size_t)ncap * sizeof *ns);
  for (uint32_t i = 0; i < old; i++) {
    uint64_t e = c->slots[i];
    if (!e) continue;
    uint32_t j = (uint32_t)(e >> 32) & (ncap - 1);
    while (ns[j]) j = (j + 1) & (ncap - 1);
    ns[j] = e;
  }
  uopi_big_free(c, c->slots, (size_t)old * sizeof *c->slots);
  c->slots = ns;
  c->mask = ncap - 1;
  return 1;
}

uopc_node *uopi_intern(uopc_ctx *c, const uopi_key *k, uint8_t flags) {
  uint32_t h = uopi_key_hash(k);
  if (c->slots) {
    for (uint32_t j = h & c->mask;; j = (j + 1) & c->mask) {
      uint64_t e = c->slots[j];
      if (!e) break;
      if ((uint32_t)(e >> 32) != h) continue;
      uopc_node *n = c->nodes[(uint32_t)e - 1];
      if (key_eq(n, k, h)) return n;
    }
  }
  /* a miss: make room first so that a failure leaves nothing half-built */
  if ((uint64_t)(c->n_nodes + 1) * 2 > (c->slots ? (uint64_t)c->mask + 1 : 0) && !rehash(c)) return NULL;
  if (c->n_nodes >= UINT32_MAX - 1) return uopc_fail(c, UOPC_ERR_NOMEM, "too many nodes");
  if (c->n_nodes == c->cap_nodes) {
    uint32_t ncap = c->cap_nodes ? c->cap_nodes * 2 : 1024;
    uopc_node **nn = uopi_big_realloc(c, c->nodes, (size_t)c->cap_nodes * sizeof *nn, (size_t)ncap * sizeof *nn);
    if (!nn) return NULL;
    c->nodes = nn;
    c->cap_nodes = ncap;
  }
  uint32_t nv = k->arg.n * (k->op == UOPC_SHRINK ? 2u : 1u);
  size_t name_len = k->arg.name ? strlen(k->arg.name) + 1 : 0;
  size_t sz = sizeof(uopc_node) + (size_t)k->nsrc * sizeof(uopc_node *) + (size_t)k->ndim * sizeof(int32_t) +
              (size_t)nv * sizeof(int32_t) + name_len;
  uopc_node *n = uopi_arena(c, sz);
  if (!n) return NULL;
  memset(n, 0, sizeof *n);
  n->id = c->n_nodes;
  n->op = (uint8_t)k->op;
  n->dtype = (uint8_t)k->dtype;
  n->ndim = (uint8_t)k->ndim;
  n->flags = flags;
  n->nsrc = k->nsrc;
  n->hash = h;
  for (uint32_t i = 0; i < k->nsrc; i++) {
    n->src[i] = k->src[i];
    n->srcops |= 1ull << k->src[i]->op;
  }
  char *tail = (char *)(n->src + k->nsrc);
  int32_t *shape = (int32_t *)tail;
  if (k->ndim) memcpy(shape, k->shape, k->ndim * sizeof *shape);
  n->shape = shape;
  n->arg = k->arg;
  int32_t *v = shape + k->ndim;
  if (nv) memcpy(v, k->arg.v, nv * sizeof *v);
  n->arg.v = nv ? v : NULL;
  if (name_len) {
    char *nm = (char *)(v + nv);
    memcpy(nm, k->arg.name, name_len);
    n->arg.name = nm;
  }
  c->nodes[c->n_nodes++] = n;
  uint32_t j = h & c->mask;
  while (c->slots[j]) j = (j + 1) & c->mask;
  c->slots[j] = ((uint64_t)h << 32) | ((uint64_t)n->id + 1);
  return n;
}
