/* lib/core/intern.c - hash consing: building a node means interning it.
 *
 * The key is (op, dtype, shape, sources, arg).  Constants compare by the bit
 * pattern of their value and dtype, so 0, 0.0, -0.0 and False are four
 * different nodes; every NaN was made the same NaN before we get here.
 */
#include <string.h>

#include "core/intern.h"

/* The key is hashed as a sequence of 64-bit words: a header word (op,
   dtype, ndim, nsrc, and which optional arg fields follow: empty ones are
   skipped), then the rest.  The first two words are multiplied
   independently (a binary ALU node or an int constant is just these two, so
   its hash is short to compute: the table probe waits for it); each further
   word is folded in with one multiply. */
#define HK0 0x9e3779b97f4a7c15ull
#define HK1 0xd6e8feb86659fd93ull
#define HMUL 0xff51afd7ed558ccdull

typedef struct hstate {
  uint64_t h;
  int more;  /* 0: the next word is the second */
} hstate;

static inline void hword(hstate *s, uint64_t w) {
  if (!s->more) {
    s->h ^= w * HK1;
    s->more = 1;
  } else {
    s->h = (s->h ^ w) * HMUL;
  }
}

static inline uint32_t hfinal(uint64_t h) { return (uint32_t)(h ^ (h >> 32)); }

static uint64_t dbits(double f) {
  uint64_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* bits of the header word: which arg fields are present */
#define H_I 1u
#define H_F 2u
#define H_RN 4u
#define H_NAME 8u

static inline uint64_t header(uint32_t op, uint32_t dtype, uint32_t ndim, uint32_t nsrc, uint32_t has) {
  return (uint64_t)op | (uint64_t)dtype << 8 | (uint64_t)ndim << 16 | (uint64_t)has << 24 | (uint64_t)nsrc << 32;
}

/* Two sources (or one, the other 0) as one word. */
static inline uint64_t pair(const uopc_node *a, const uopc_node *b) {
  return (uint64_t)a->id | (uint64_t)(b ? b->id : 0) << 32;
}

uint32_t uopi_key_hash(const uopi_key *k) {
  uint64_t fb = dbits(k->arg.f);
  uint32_t has = (k->arg.i ? H_I : 0) | (fb ? H_F : 0) | ((k->arg.rop | k->arg.n) ? H_RN : 0) |
                 (k->arg.name ? H_NAME : 0);
  hstate s = {header(k->op, k->dtype, k->ndim, k->nsrc, has) * HK0, 0};
  for (uint32_t i = 0; i < k->nsrc; i += 2) hword(&s, pair(k->src[i], i + 1 < k->nsrc ? k->src[i + 1] : NULL));
  for (uint32_t i = 0; i < k->ndim; i += 2)
    hword(&s, (uint32_t)k->shape[i] | (i + 1 < k->ndim ? (uint64_t)(uint32_t)k->shape[i + 1] << 32 : 0));
  if (has & H_I) hword(&s, (uint64_t)k->arg.i);
  if (has & H_F) hword(&s, fb);
  if (has & H_RN) {
    hword(&s, ((uint64_t)k->arg.rop << 32) | k->arg.n);
    uint32_t nv = k->arg.n * (k->op == UOPC_OP_SHRINK ? 2u : 1u);
    for (uint32_t i = 0; i < nv; i += 2)
      hword(&s, (uint32_t)k->arg.v[i] | (i + 1 < nv ? (uint64_t)(uint32_t)k->arg.v[i + 1] << 32 : 0));
  }
  if (has & H_NAME) {
    size_t len = strlen(k->arg.name);
    const char *nm = k->arg.name;
    for (size_t i = 0; i < len; i += 8) {
      uint64_t w = 0;
      memcpy(&w, nm + i, len - i < 8 ? len - i : 8);
      hword(&s, w);
    }
    hword(&s, len);
  }
  return hfinal(s.h);
}

/* uopi_key_hash of a scalar node with two sources and an empty arg. */
static inline uint32_t hash2(uopc_op op, uopc_dtype t, const uopc_node *a, const uopc_node *b) {
  return hfinal(header(op, t, 0, 2, 0) * HK0 ^ pair(a, b) * HK1);
}

/* uopi_key_hash of a bool/i32 CONST (arg.i = v, nothing else). */
static inline uint32_t hash_const_i(uopc_dtype t, int64_t v) {
  return hfinal(header(UOPC_OP_CONST, t, 0, 0, v ? H_I : 0) * HK0 ^ (uint64_t)v * HK1);
}

static int arg_eq(uopc_op op, const uopc_arg *a, const uopc_arg *b) {
  if (a->i != b->i || dbits(a->f) != dbits(b->f) || a->rop != b->rop || a->n != b->n) return 0;
  uint32_t nv = a->n * (op == UOPC_OP_SHRINK ? 2u : 1u);
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

static __attribute__((noinline)) int rehash(uopc_ctx *c) {
  uint32_t old = c->slots ? c->mask + 1 : 0;
  /* medium tables grow by 4: a context that is growing fast (run of a
     large program) moves each entry fewer times */
  uint32_t ncap = !old ? 1024 : (old >= 4096 && old < (1u << 20)) ? old * 4 : old * 2;
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

/* Room for one more node (hash table and node array); 0 on failure. */
static __attribute__((noinline)) int make_room(uopc_ctx *c) {
  if ((uint64_t)(c->n_nodes + 1) * 2 > (c->slots ? (uint64_t)c->mask + 1 : 0) && !rehash(c)) return 0;
  if (c->n_nodes >= UINT32_MAX - 1) return uopc_fail(c, UOPC_ERR_NOMEM, "too many nodes"), 0;
  if (c->n_nodes == c->cap_nodes) {
    uint32_t ncap = c->cap_nodes ? c->cap_nodes * 2 : 1024;
    uopc_node **nn = uopi_big_realloc(c, c->nodes, (size_t)c->cap_nodes * sizeof *nn, (size_t)ncap * sizeof *nn);
    if (!nn) return 0;
    c->nodes = nn;
    c->cap_nodes = ncap;
  }
  return 1;
}

/* uopi_arena with the common case inline. */
static inline void *arena(uopc_ctx *c, size_t n) {
  n = (n + 15u) & ~(size_t)15u;
  if (n > c->left) return uopi_arena(c, n);
  void *p = c->cur;
  c->cur += n;
  c->left -= n;
  /* nodes are written right after they are allocated, in arena order:
     fetch the lines a few nodes ahead for writing (no-op past the end) */
  if (c->left > 512) __builtin_prefetch(c->cur + 512, 1);
  return p;
}

/* Files node n (hash h) as the next id. */
static inline void file_node(uopc_ctx *c, uopc_node *n, uint32_t h) {
  c->nodes[c->n_nodes++] = n;
  uint32_t j = h & c->mask;
  while (c->slots[j]) j = (j + 1) & c->mask;
  c->slots[j] = ((uint64_t)h << 32) | ((uint64_t)n->id + 1);
}

static inline int has_room(const uopc_ctx *c) {
  return c->slots && (uint64_t)(c->n_nodes + 1) * 2 <= (uint64_t)c->mask + 1 && c->n_nodes < c->cap_nodes;
}

/* Every field of a new node (no memset: for 80 bytes the compiler picks
   `rep stos`, slow to start); the sources, srcops, shape and arg are the
   caller's. */
static inline void init_node(uopc_ctx *c, uopc_node *n, uopc_op op, uopc_dtype t, uint32_t ndim, uint8_t flags,
                             uint32_t nsrc, uint32_t h) {
  n->id = c->n_nodes;
  n->op = (uint8_t)op;
  n->dtype = (uint8_t)t;
  n->ndim = (uint8_t)ndim;
  n->flags = flags;
  n->nsrc = nsrc;
  n->hash = h;
  n->srcops = 0;
  n->shape = NULL;
  n->arg = (uopc_arg){0};
  n->simplified = NULL;
}

/* A miss of a scalar node with at most two sources and no arg but i. */
static __attribute__((noinline)) uopc_node *insert_small(uopc_ctx *c, uopc_op op, uopc_dtype t, uint32_t h,
                                                         uopc_node *a, uopc_node *b, int64_t i) {
  if (!has_room(c) && !make_room(c)) return NULL;
  uint32_t ns = b ? 2 : a ? 1 : 0;
  uopc_node *n = arena(c, sizeof(uopc_node) + ns * sizeof(uopc_node *));
  if (!n) return NULL;
  init_node(c, n, op, t, 0, 0, ns, h);
  uint64_t srcops = 0;
  if (a) n->src[0] = a, srcops |= 1ull << a->op;
  if (b) n->src[1] = b, srcops |= 1ull << b->op;
  n->srcops = srcops;
  n->shape = (const int32_t *)(n->src + ns);
  n->arg.i = i;
  file_node(c, n, h);
  return n;
}

/* insert_small's common case, inline: there is room in both tables and in
   the arena chunk, and slot j (where the probe for h stopped) is empty.
   NULL when it is not that case: then insert_small does it all.  ns is 0
   (a, b NULL) or 2. */
static inline __attribute__((always_inline)) uopc_node *insert_here(uopc_ctx *c, uopc_op op, uopc_dtype t,
                                                                     uint32_t h, uint32_t j, uopc_node *a,
                                                                     uopc_node *b, int64_t i) {
  uint32_t ns = b ? 2 : 0;
  _Static_assert(sizeof(uopc_node) % 16 == 0, "the arena's rounding of a node of 0 or 2 sources");
  size_t sz = sizeof(uopc_node) + ns * sizeof(uopc_node *);
  if (!has_room(c) || sz > c->left) return NULL;
  uopc_node *n = (uopc_node *)c->cur;
  c->cur += sz;
  c->left -= sz;
  if (c->left > 512) __builtin_prefetch(c->cur + 512, 1);
  init_node(c, n, op, t, 0, 0, ns, h);
  if (b) {
    n->src[0] = a, n->src[1] = b;
    n->srcops = (1ull << a->op) | (1ull << b->op);
  }
  n->shape = (const int32_t *)(n->src + ns);
  n->arg.i = i;
  c->nodes[c->n_nodes++] = n;
  c->slots[j] = ((uint64_t)h << 32) | ((uint64_t)n->id + 1);
  return n;
}

/* A miss: builds the node for k (hash h) and files it. */
static uopc_node *insert(uopc_ctx *c, const uopi_key *k, uint32_t h, uint8_t flags) {
  /* make room first so that a failure leaves nothing half-built */
  if (!has_room(c) && !make_room(c)) return NULL;
  uint32_t nv = k->arg.n * (k->op == UOPC_OP_SHRINK ? 2u : 1u);
  size_t name_len = k->arg.name ? strlen(k->arg.name) + 1 : 0;
  size_t sz = sizeof(uopc_node) + (size_t)k->nsrc * sizeof(uopc_node *) + (size_t)k->ndim * sizeof(int32_t) +
              (size_t)nv * sizeof(int32_t) + name_len;
  uopc_node *n = arena(c, sz);
  if (!n) return NULL;
  init_node(c, n, k->op, k->dtype, k->ndim, flags, k->nsrc, h);
  uint64_t srcops = 0;
  for (uint32_t i = 0; i < k->nsrc; i++) {
    n->src[i] = k->src[i];
    srcops |= 1ull << k->src[i]->op;
  }
  n->srcops = srcops;
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
  file_node(c, n, h);
  return n;
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
  return insert(c, k, h, flags);
}

uopc_node *uopi_intern2(uopc_ctx *c, uopc_op op, uopc_dtype t, uopc_node *a, uopc_node *b) {
  uint32_t h = hash2(op, t, a, b);
  if (c->slots) {
    uint32_t j = h & c->mask;
    for (;; j = (j + 1) & c->mask) {
      uint64_t e = c->slots[j];
      if (!e) break;
      if ((uint32_t)(e >> 32) != h) continue;
      uopc_node *n = c->nodes[(uint32_t)e - 1];
      /* nodes with these ops always have an empty arg */
      if (n->op == op && n->nsrc == 2 && n->src[0] == a && n->src[1] == b && n->dtype == t && n->ndim == 0)
        return n;
    }
    uopc_node *n = insert_here(c, op, t, h, j, a, b, 0);
    if (n) return n;
  }
  return insert_small(c, op, t, h, a, b, 0);
}

uopc_node *uopi_intern_const_i(uopc_ctx *c, uopc_dtype t, int64_t v) {
  uint32_t h = hash_const_i(t, v);
  if (c->slots) {
    uint32_t j = h & c->mask;
    for (;; j = (j + 1) & c->mask) {
      uint64_t e = c->slots[j];
      if (!e) break;
      if ((uint32_t)(e >> 32) != h) continue;
      uopc_node *n = c->nodes[(uint32_t)e - 1];
      /* an int CONST has nothing but i in its arg */
      if (n->op == UOPC_OP_CONST && n->dtype == t && n->arg.i == v) return n;
    }
    uopc_node *n = insert_here(c, UOPC_OP_CONST, t, h, j, NULL, NULL, v);
    if (n) return n;
  }
  return insert_small(c, UOPC_OP_CONST, t, h, NULL, NULL, v);
}
