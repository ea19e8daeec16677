/* lib/plan_cache.c - compiled plans kept in memory by program.
 *
 *   key     the program serialized (plan_cache.h): built on every
 *           uopc_plan_compile, O(nodes), microseconds; compared byte for
 *           byte, so a hit is exactly the same program and options
 *   table   process-wide, at most max_plans entries and max_bytes of keys
 *           and plan data, least recently used evicted first; one mutex
 *   plans   refcounted (lib/plan.c): the table holds one reference, each
 *           uopc_plan_compile that returns the plan one more; uopc_plan_free
 *           drops one, the last frees it
 *
 * Why process-wide and not per context: a context has no hook to free what
 * hangs on it, and a key of (context, root pointer) would name, after the
 * context is freed, whatever node a new context puts at the same address.
 * The kernel cache (lib/kcache) is process-wide for the same reasons.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "plan_cache.h"
#include "uopc/jit.h"
#include "uopc/plan.h"

#define KEY_FORMAT 2u /* bump when the serialization changes (2: the compile flags) */

/* ---- the key ---- */

typedef struct wbuf {
  unsigned char *p;
  size_t n, cap;
  int oom;
} wbuf;

static void put(wbuf *w, const void *d, size_t n) {
  if (w->n + n > w->cap) {
    if (w->oom) return;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->n + n) cap *= 2;
    unsigned char *np = realloc(w->p, cap);
    if (!np) {
      w->oom = 1;
      return;
    }
    w->p = np, w->cap = cap;
  }
  memcpy(w->p + w->n, d, n);
  w->n += n;
}
static void put32(wbuf *w, uint32_t v) { put(w, &v, 4); }
static void put64(wbuf *w, uint64_t v) { put(w, &v, 8); }
static void putstr(wbuf *w, const char *s) {
  if (!s) {
    put32(w, UINT32_MAX);
    return;
  }
  size_t n = strlen(s);
  put32(w, (uint32_t)n);
  put(w, s, n);
}

/* 8 bytes a step (a byte a step, FNV-1a, was most of a hit's time) */
static uint64_t hash(const unsigned char *p, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
  for (; n >= 8; p += 8, n -= 8) {
    memcpy(&w, p, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  w = 0;
  memcpy(&w, p, n);
  h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 32);
}

int uopi_plan_key_make(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uint64_t split_min, uopi_plan_key *k) {
  memset(k, 0, sizeof *k);
  uint32_t n = 0;
  uopc_node **order = uopc_toposort(c, root, &n);
  if (!order) return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory"), 0;
  uopi_table *idx = uopi_table_acquire(c);
  wbuf w = {0};
  w.cap = 64 + (size_t)n * 64; /* most nodes need less: one allocation */
  if (!(w.p = malloc(w.cap))) w.cap = 0;
  put32(&w, KEY_FORMAT);
  put32(&w, (uint32_t)(opts ? opts->tier : UOPC_TIER_FAST));
  put32(&w, opts ? opts->flags : 0u); /* every flag changes the kernels (fast math, the loop passes) */
  put32(&w, opts ? opts->threads : 0); /* the thread count plan.c decided (never 0 there) */
  put64(&w, split_min);
  put32(&w, n);
  const char *files[8];
  uint32_t nfiles = 0;
  for (uint32_t i = 0; idx && i < n && !w.oom; i++) {
    const uopc_node *u = order[i];
    if (!uopi_table_set(c, idx, u->id, (void *)(uintptr_t)(i + 1))) break;
    unsigned char head[4] = {u->op, u->dtype, u->ndim, 0};
    put(&w, head, 4);
    put32(&w, u->nsrc);
    put(&w, u->shape, (size_t)u->ndim * sizeof *u->shape);
    uint64_t fbits;
    memcpy(&fbits, &u->arg.f, 8);
    put64(&w, (uint64_t)u->arg.i);
    put64(&w, fbits);
    put32(&w, u->arg.rop);
    put32(&w, u->arg.n);
    uint32_t nv = u->arg.n * (u->op == UOPC_OP_SHRINK ? 2u : 1u);
    if (nv && u->arg.v) put(&w, u->arg.v, (size_t)nv * sizeof *u->arg.v);
    putstr(&w, u->arg.name);
    for (uint32_t s = 0; s < u->nsrc; s++) /* sources come first in toposort order */
      put32(&w, (uint32_t)(uintptr_t)uopi_table_get(idx, u->src[s]->id));
    /* the .uir position: a poison error of the plan names it */
    const char *file = NULL;
    int line = 0, col = 0;
    if (uopc_node_pos(c, u, &file, &line, &col)) {
      /* a file named before in this key by the same pointer: its number
         (equal pointers are equal names; unequal ones are written out, so
         at worst the same program keys differently and misses) */
      uint32_t f = 0;
      while (f < nfiles && files[f] != file) f++;
      put32(&w, f);
      if (f == nfiles) {
        putstr(&w, file);
        if (nfiles < 8) files[nfiles++] = file;
      }
      put32(&w, (uint32_t)line);
      put32(&w, (uint32_t)col);
    } else {
      put32(&w, UINT32_MAX);
    }
  }
  int ok = idx && !w.oom && !uopc_ctx_error(c);
  if (idx) uopi_table_release(c, idx);
  uopc_mem_free(c, order, (size_t)n * sizeof *order);
  if (!ok) {
    free(w.p);
    if (!uopc_ctx_error(c)) uopc_fail(c, UOPC_ERR_NOMEM, "out of memory");
    return 0;
  }
  k->bytes = w.p, k->len = w.n, k->hash = hash(w.p, w.n);
  return 1;
}

void uopi_plan_key_free(uopi_plan_key *k) {
  if (!k) return;
  free(k->bytes);
  memset(k, 0, sizeof *k);
}

/* ---- the table ---- */

typedef struct entry {
  uopi_plan_key key;
  uopc_plan *plan;
  uint64_t used;   /* tick of the last hit or put */
  uint64_t bytes;  /* key + plan */
} entry;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static entry *tab;
static uint32_t ntab, captab;
static uint32_t max_plans = 256;
static uint64_t max_bytes = 256ull << 20;
static uint64_t tick, nbytes, hits, misses, evicted;

static int same(const uopi_plan_key *a, const uopi_plan_key *b) {
  return a->hash == b->hash && a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

/* Removes entry i (mu held); its plan goes to *drop for release outside the lock. */
static uopc_plan *remove_at(uint32_t i) {
  uopc_plan *p = tab[i].plan;
  nbytes -= tab[i].bytes;
  uopi_plan_key_free(&tab[i].key);
  tab[i] = tab[--ntab];
  return p;
}

static void release(uopc_plan *p) { uopc_plan_free(p); }

uopc_plan *uopi_plan_cache_get(const uopi_plan_key *k) {
  uopc_plan *p = NULL;
  pthread_mutex_lock(&mu);
  for (uint32_t i = 0; i < ntab; i++)
    if (same(&tab[i].key, k)) {
      p = tab[i].plan;
      uopi_plan_ref(p);
      tab[i].used = ++tick;
      break;
    }
  if (p) hits++;
  else misses++;
  pthread_mutex_unlock(&mu);
  return p;
}

/* Evicts least recently used entries until `need` more plans and `bytes`
   more bytes fit (mu held); the plans evicted go to drop[], at most cap. */
static uint32_t evict(uint32_t need, uint64_t bytes, uopc_plan **drop, uint32_t cap) {
  uint32_t nd = 0;
  while (ntab && nd < cap && (ntab + need > max_plans || nbytes + bytes > max_bytes)) {
    uint32_t lru = 0;
    for (uint32_t i = 1; i < ntab; i++)
      if (tab[i].used < tab[lru].used) lru = i;
    drop[nd++] = remove_at(lru);
    evicted++;
  }
  return nd;
}

uopc_plan *uopi_plan_cache_put(uopi_plan_key *k, uopc_plan *p) {
  uopc_plan *drop[8], *ret = p;
  uint32_t nd = 0;
  uint64_t bytes = k->len + uopi_plan_bytes(p);
  pthread_mutex_lock(&mu);
  for (uint32_t i = 0; i < ntab; i++)
    if (same(&tab[i].key, k)) { /* another thread compiled it first */
      ret = tab[i].plan;
      uopi_plan_ref(ret);
      tab[i].used = ++tick;
      break;
    }
  if (ret == p && max_plans && bytes <= max_bytes) {
    nd = evict(1, bytes, drop, 8);
    if (ntab < max_plans && nbytes + bytes <= max_bytes) {
      if (ntab == captab) {
        uint32_t cap = captab ? captab * 2 : 16;
        entry *nt = realloc(tab, cap * sizeof *nt);
        if (nt) tab = nt, captab = cap;
      }
      if (ntab < captab) {
        uopi_plan_ref(p); /* the table's own reference */
        tab[ntab++] = (entry){*k, p, ++tick, bytes};
        nbytes += bytes;
        memset(k, 0, sizeof *k);
      }
    }
  }
  pthread_mutex_unlock(&mu);
  for (uint32_t i = 0; i < nd; i++) release(drop[i]);
  if (ret != p) release(p);
  uopi_plan_key_free(k);
  return ret;
}

void uopc_plan_cache_clear(void) {
  for (;;) {
    uopc_plan *drop[64];
    uint32_t nd = 0;
    pthread_mutex_lock(&mu);
    while (ntab && nd < 64) drop[nd++] = remove_at(ntab - 1);
    pthread_mutex_unlock(&mu);
    for (uint32_t i = 0; i < nd; i++) release(drop[i]);
    if (!nd) break;
  }
}

void uopc_plan_cache_set_limit(uint32_t plans, uint64_t bytes) {
  uopc_plan *drop[64];
  for (;;) {
    pthread_mutex_lock(&mu);
    max_plans = plans, max_bytes = bytes;
    uint32_t nd = evict(0, 0, drop, 64);
    pthread_mutex_unlock(&mu);
    for (uint32_t i = 0; i < nd; i++) release(drop[i]);
    if (nd < 64) break;
  }
}

void uopc_plan_cache_get_stats(uopc_plan_cache_stats *s) {
  if (!s) return;
  pthread_mutex_lock(&mu);
  s->hits = hits, s->misses = misses, s->evicted = evicted;
  s->plans = ntab, s->bytes = nbytes;
  pthread_mutex_unlock(&mu);
}

void uopc_plan_cache_reset_stats(void) {
  pthread_mutex_lock(&mu);
  hits = misses = evicted = 0;
  pthread_mutex_unlock(&mu);
}
