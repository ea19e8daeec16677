/* lib/llvm/cache_mem.c - the kernel cache in memory, and the path of a
 * compile through the cache (docs/cache.md).
 *
 * One table for the process: entries by key hash (chained buckets), each
 * with the code of its kernel and the number of holds on it (uopc_kernel
 * handles, plus threads waiting for it).  An entry no one holds goes to the
 * front of an LRU list; the list is bounded (entries and bytes) and its tail
 * is freed first.  There is at most one entry per key, so an object loaded
 * from disk is never linked twice (its symbols would collide).
 *
 * A second table maps the key of a graph *as given* (before
 * uopi_kernel_prepare) to its entry: a graph compiled before is found
 * without preparing it again (preparing costs about as much as the rest of
 * a hit).  Each entry keeps its last ALIASES_PER_ENTRY such aliases, which
 * go with it.
 *
 * A miss inserts a *pending* entry and fills it outside the lock (disk, else
 * LLVM).  Another thread asking for the same key meanwhile waits on a
 * condition variable instead of compiling it again; when the filler fails it
 * removes the entry and the waiters start over (one of them fills it).
 * Evicted entries are pending too until their code is out of the JIT.
 *
 * Lock order: the table's mutex, then the engine's (uopi_jit_free), and the
 * latter only outside the former.  No LLVM work and no file I/O under the
 * table's mutex.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llvm/cache.h"

#define ALIASES_PER_ENTRY 4

/* A key: hash, tier, graph bytes (owned). */
typedef struct kkey {
  uint8_t hash[UOPI_KCACHE_HASH];
  uint32_t tier;
  uint8_t *graph;
  size_t len;
} kkey;

typedef struct kalias {
  struct kalias *hnext;         /* bucket chain */
  struct kalias *enext;         /* the entry's aliases, newest first */
  kkey key;                     /* of the graph as given */
  uopi_kentry *e;
} kalias;

struct uopi_kentry {
  uopi_kentry *hnext;           /* bucket chain */
  uopi_kentry *prev, *next;     /* the LRU list, while refs == 0 */
  uopi_kentry *vnext;           /* eviction victims */
  kkey key;                     /* of the prepared graph */
  kalias *aliases;
  uint32_t naliases;
  uopi_jit_code *code;          /* NULL while pending */
  uopi_kmeta meta;
  size_t bytes;                 /* what the entry costs against the bound */
  long refs;
  int pending, failed;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t filled = PTHREAD_COND_INITIALIZER;
static uopi_kentry **buckets;
static size_t nbuckets;            /* a power of two, or 0 */
static kalias **abuckets;
static size_t nabuckets;
static uint32_t nentries, nheld;   /* in the table (pending ones included) */
static uint32_t naliases;
static uint64_t total_bytes;       /* of ready entries */
static uopi_kentry lru = {.prev = &lru, .next = &lru}; /* sentinel: next = most recent */
static uint32_t lru_count;
static uint64_t lru_bytes;
static uint32_t max_entries = 1024;
static uint64_t max_bytes = 64ull << 20;

static atomic_uint_fast64_t stats[UOPI_KSTAT_COUNT];

void uopi_kstat_add(uopi_kstat s, uint64_t n) { atomic_fetch_add_explicit(&stats[s], n, memory_order_relaxed); }

void uopi_kcache_debug(const char *fmt, ...) {
  const char *d = getenv("UOPC_DEBUG");
  if (!d || !strstr(d, "cache")) return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "uopc cache: %s\n", line);
}

/* ---- the tables (under lock) ------------------------------------------------ */

static size_t slot(const uint8_t *hash, size_t n) {
  uint64_t h;
  memcpy(&h, hash, sizeof h);
  return (size_t)h & (n - 1);
}

static int same(const kkey *a, const uopi_kkey *b) {
  return memcmp(a->hash, b->hash, UOPI_KCACHE_HASH) == 0 && a->tier == b->env.tier && a->len == b->graph_len &&
         memcmp(a->graph, b->graph, a->len) == 0;
}

static uopi_kentry *find(const uopi_kkey *k) {
  if (!nbuckets) return NULL;
  for (uopi_kentry *e = buckets[slot(k->hash, nbuckets)]; e; e = e->hnext)
    if (same(&e->key, k)) return e;
  return NULL;
}

static kalias *find_alias(const uopi_kkey *k) {
  if (!nabuckets) return NULL;
  for (kalias *a = abuckets[slot(k->hash, nabuckets)]; a; a = a->hnext)
    if (same(&a->key, k)) return a;
  return NULL;
}

/* Doubles a table (a failure leaves it as it is: longer chains). */
#define GROW(T, buckets, nbuckets)                                                                                    \
  do {                                                                                                                \
    size_t n_ = nbuckets ? nbuckets * 2 : 256;                                                                        \
    T **b_ = calloc(n_, sizeof *b_);                                                                                  \
    if (!b_) break;                                                                                                   \
    for (size_t i_ = 0; i_ < nbuckets; i_++)                                                                          \
      for (T *x_ = buckets[i_], *nx_; x_; x_ = nx_) {                                                                 \
        nx_ = x_->hnext;                                                                                              \
        size_t j_ = slot(x_->key.hash, n_);                                                                           \
        x_->hnext = b_[j_];                                                                                           \
        b_[j_] = x_;                                                                                                  \
      }                                                                                                               \
    free(buckets);                                                                                                    \
    buckets = b_;                                                                                                     \
    nbuckets = n_;                                                                                                    \
  } while (0)

static void unlink_entry(uopi_kentry *e) {
  uopi_kentry **p = &buckets[slot(e->key.hash, nbuckets)];
  while (*p != e) p = &(*p)->hnext;
  *p = e->hnext;
  nentries--;
}

static void unlink_alias(kalias *a) {
  kalias **p = &abuckets[slot(a->key.hash, nabuckets)];
  while (*p != a) p = &(*p)->hnext;
  *p = a->hnext;
  naliases--;
}

static size_t alias_bytes(const kalias *a) { return sizeof *a + a->key.len; }

/* Takes e's aliases out of the alias table; returns the list. */
static kalias *unlink_aliases(uopi_kentry *e) {
  kalias *l = e->aliases;
  for (kalias *a = l; a; a = a->enext) unlink_alias(a);
  e->aliases = NULL;
  e->naliases = 0;
  return l;
}

static void free_aliases(kalias *a) {
  for (kalias *nx; a; a = nx) {
    nx = a->enext;
    free(a->key.graph);
    free(a);
  }
}

static void lru_remove(uopi_kentry *e) {
  e->prev->next = e->next;
  e->next->prev = e->prev;
  e->prev = e->next = NULL;
  lru_count--;
  lru_bytes -= e->bytes;
}

static void lru_push(uopi_kentry *e) {
  e->next = lru.next;
  e->prev = &lru;
  lru.next->prev = e;
  lru.next = e;
  lru_count++;
  lru_bytes += e->bytes;
}

/* Takes unheld entries off the tail until the bounds hold, onto *victims
   (through vnext).  A victim stays in the table as pending until
   free_victims has removed its code from the JIT: a thread asking for its
   key meanwhile waits, then starts over, so the same object is never linked
   while its old copy is still there. */
static void evict(uopi_kentry **victims, uint32_t keep_entries, uint64_t keep_bytes) {
  while (lru_count && (lru_count > keep_entries || lru_bytes > keep_bytes)) {
    uopi_kentry *e = lru.prev;
    lru_remove(e);
    total_bytes -= e->bytes;
    e->pending = 1;
    e->vnext = *victims;
    *victims = e;
  }
}

static void free_entry(uopi_kentry *e) {
  uopi_jit_free(e->code);
  free_aliases(e->aliases);
  free(e->key.graph);
  free(e);
}

/* Frees victims' code (without the lock), then takes them out of the table. */
static void free_victims(uopi_kentry *v) {
  if (!v) return;
  for (uopi_kentry *e = v; e; e = e->vnext) {
    uopi_jit_free(e->code);
    e->code = NULL;
  }
  pthread_mutex_lock(&lock);
  uopi_kentry *dead = NULL;
  for (uopi_kentry *e = v, *nx; e; e = nx) {
    nx = e->vnext;
    unlink_entry(e);
    e->aliases = unlink_aliases(e) /* still owned by e: freed with it */;
    e->pending = 0;
    e->failed = 1;
    if (e->refs == 0) e->vnext = dead, dead = e; /* else the last waiter frees it */
  }
  pthread_cond_broadcast(&filled);
  pthread_mutex_unlock(&lock);
  for (uopi_kentry *e = dead, *nx; e; e = nx) {
    nx = e->vnext;
    free_entry(e);
  }
}

/* One more hold (a handle's, or a waiting thread's): off the LRU list, and
   counted in nheld while any. */
static void hold(uopi_kentry *e) {
  if (e->refs++ == 0) {
    if (e->prev) lru_remove(e);
    nheld++;
  }
}

/* One hold less; 1 when it was the last. */
static int unhold(uopi_kentry *e) {
  if (--e->refs) return 0;
  nheld--;
  return 1;
}

/* ---- the compile path ----------------------------------------------------- */

/* Finds the key's entry and holds it (1), or inserts a pending entry held by
   the caller, who must fill or abandon it (0).  -1 when out of memory.  The
   key's graph bytes move into a new entry (k->graph then points at them). */
static int acquire(uopi_kkey *k, uopi_kentry **out) {
  pthread_mutex_lock(&lock);
  for (;;) {
    uopi_kentry *e = find(k);
    if (e && !e->pending) {
      hold(e);
      pthread_mutex_unlock(&lock);
      *out = e;
      return 1;
    }
    if (!e) break;
    /* someone is filling it (or freeing it): wait, holding it so that it stays */
    hold(e);
    while (e->pending) pthread_cond_wait(&filled, &lock);
    if (!e->failed) { /* the wait's hold becomes the caller's */
      pthread_mutex_unlock(&lock);
      *out = e;
      return 1;
    }
    if (unhold(e)) free_entry(e); /* already out of the table; no code */
  }
  uopi_kentry *e = calloc(1, sizeof *e);
  if (e && nentries + 1 > nbuckets) GROW(uopi_kentry, buckets, nbuckets);
  if (!e || !nbuckets) {
    pthread_mutex_unlock(&lock);
    free(e);
    return -1;
  }
  memcpy(e->key.hash, k->hash, UOPI_KCACHE_HASH);
  e->key.tier = k->env.tier;
  e->key.graph = k->graph;
  e->key.len = k->graph_len;
  e->pending = 1;
  hold(e);
  size_t b = slot(e->key.hash, nbuckets);
  e->hnext = buckets[b];
  buckets[b] = e;
  nentries++;
  pthread_mutex_unlock(&lock);
  *out = e;
  return 0;
}

/* The filler gives up: the entry leaves the table, waiters start over. */
static void abandon(uopi_kentry *e) {
  pthread_mutex_lock(&lock);
  unlink_entry(e);
  e->pending = 0;
  e->failed = 1;
  pthread_cond_broadcast(&filled);
  int last = unhold(e);
  pthread_mutex_unlock(&lock);
  if (last) free_entry(e);
}

static void fulfil(uopi_kentry *e, uopi_jit_code *code, const uopi_kmeta *m) {
  pthread_mutex_lock(&lock);
  e->code = code;
  e->meta = *m;
  e->bytes = code->obj_size + e->key.len + sizeof *e;
  total_bytes += e->bytes;
  e->pending = 0;
  pthread_cond_broadcast(&filled);
  pthread_mutex_unlock(&lock);
}

/* Remembers raw (the graph as given; its bytes move in) as a way to e, a
   held ready entry.  Out of memory only skips it. */
static void add_alias(uopi_kentry *e, uopi_kkey *raw) {
  kalias *a = malloc(sizeof *a), *drop = NULL;
  if (!a) return;
  pthread_mutex_lock(&lock);
  if (find_alias(raw)) { /* another thread was first */
    pthread_mutex_unlock(&lock);
    free(a);
    return;
  }
  if (naliases + 1 > nabuckets) GROW(kalias, abuckets, nabuckets);
  if (!nabuckets) {
    pthread_mutex_unlock(&lock);
    free(a);
    return;
  }
  memcpy(a->key.hash, raw->hash, UOPI_KCACHE_HASH);
  a->key.tier = raw->env.tier;
  a->key.graph = raw->graph;
  a->key.len = raw->graph_len;
  a->e = e;
  size_t b = slot(a->key.hash, nabuckets);
  a->hnext = abuckets[b];
  abuckets[b] = a;
  naliases++;
  a->enext = e->aliases;
  e->aliases = a;
  e->bytes += alias_bytes(a);
  total_bytes += alias_bytes(a);
  if (++e->naliases > ALIASES_PER_ENTRY) { /* the oldest goes */
    kalias **p = &e->aliases;
    while ((*p)->enext) p = &(*p)->enext;
    drop = *p;
    *p = NULL;
    unlink_alias(drop);
    e->naliases--;
    e->bytes -= alias_bytes(drop);
    total_bytes -= alias_bytes(drop);
  }
  pthread_mutex_unlock(&lock);
  raw->graph = NULL; /* owned by the alias now */
  free_aliases(drop);
}

/* The entry of the prepared kernel: memory, disk, or fn. */
static uopc_status get_prepared(uopc_ctx *c, const uopi_kernel_ir *k, uopi_jit_tier t, uopi_kcompile_fn fn, void *ud,
                                uopi_kentry **out) {
  uopi_kkey key;
  uopc_status st = uopi_kkey_make(c, k, t, &key);
  if (st) return st;
  uopi_kentry *e;
  int found = acquire(&key, &e);
  if (found) {
    uopi_kkey_free(&key);
    if (found < 0) return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory"), UOPC_ERR_NOMEM;
    uopi_kstat_add(UOPI_KSTAT_MEM_HIT, 1);
    *out = e;
    return UOPC_OK;
  }
  /* ours to fill; key.graph is the entry's now, stable while we hold it */
  uopi_kmeta meta;
  uopi_kmeta_of(k, &meta);
  uopi_jit_code *code = NULL;
  if (uopi_kdisk_load(&key, &meta, &code, meta.name, sizeof meta.name)) {
    uopi_kstat_add(UOPI_KSTAT_DISK_HIT, 1);
    fulfil(e, code, &meta);
    *out = e;
    return UOPC_OK;
  }
  uopi_jit_unique_name(meta.name, sizeof meta.name, "uopc_k");
  st = fn(c, k, t, meta.name, ud, &code);
  if (st) {
    abandon(e);
    return st;
  }
  uopi_kstat_add(UOPI_KSTAT_MISS, 1);
  char hex[2 * UOPI_KCACHE_HASH + 1];
  uopi_kcache_hex(key.hash, hex);
  uopi_kcache_debug("miss %s: compiled", hex);
  fulfil(e, code, &meta);
  uopi_kdisk_store(&key, &meta, code);
  *out = e;
  return UOPC_OK;
}

uopc_status uopi_kcache_get(uopc_ctx *c, uopc_node *root, uopi_jit_tier t, uopi_kcompile_fn fn, void *ud,
                            uopi_kentry **out) {
  *out = NULL;
  uopi_kkey raw = {0};
  if (root) { /* the shortcut: this very graph was compiled before */
    uopc_status st = uopi_kkey_raw(c, root, t, &raw);
    if (st) return st;
    pthread_mutex_lock(&lock);
    kalias *a = find_alias(&raw);
    uopi_kentry *e = a && !a->e->pending ? a->e : NULL;
    if (e) hold(e);
    pthread_mutex_unlock(&lock);
    if (e) {
      uopi_kkey_free(&raw);
      uopi_kstat_add(UOPI_KSTAT_MEM_HIT, 1);
      *out = e;
      return UOPC_OK;
    }
  }
  uopi_kernel_ir k;
  uopc_status st = uopi_kernel_prepare(c, root, &k);
  if (st == UOPC_OK) st = get_prepared(c, &k, t, fn, ud, out);
  if (st == UOPC_OK && raw.graph) add_alias(*out, &raw);
  uopi_kkey_free(&raw);
  return st;
}

const uopi_jit_code *uopi_kentry_code(const uopi_kentry *e) { return e->code; }
const uopi_kmeta *uopi_kentry_meta(const uopi_kentry *e) { return &e->meta; }

void uopi_kcache_release(uopi_kentry *e) {
  if (!e) return;
  uopi_kentry *victims = NULL;
  pthread_mutex_lock(&lock);
  UOPI_ASSERT(e->refs > 0 && !e->pending);
  if (unhold(e)) {
    lru_push(e);
    evict(&victims, max_entries, max_bytes);
  }
  pthread_mutex_unlock(&lock);
  free_victims(victims);
}

void uopi_kcache_drop_unheld(void) {
  uopi_kentry *victims = NULL;
  pthread_mutex_lock(&lock);
  evict(&victims, 0, 0);
  pthread_mutex_unlock(&lock);
  free_victims(victims);
}

/* ---- the public API --------------------------------------------------------- */

void uopc_cache_get_stats(uopc_cache_stats *s) {
  memset(s, 0, sizeof *s);
  s->mem_hits = atomic_load(&stats[UOPI_KSTAT_MEM_HIT]);
  s->disk_hits = atomic_load(&stats[UOPI_KSTAT_DISK_HIT]);
  s->misses = atomic_load(&stats[UOPI_KSTAT_MISS]);
  s->disk_writes = atomic_load(&stats[UOPI_KSTAT_DISK_WRITE]);
  s->disk_damaged = atomic_load(&stats[UOPI_KSTAT_DISK_DAMAGED]);
  s->disk_evicted = atomic_load(&stats[UOPI_KSTAT_DISK_EVICTED]);
  pthread_mutex_lock(&lock);
  s->mem_entries = nentries;
  s->mem_held = nheld;
  s->mem_bytes = total_bytes;
  pthread_mutex_unlock(&lock);
}

void uopc_cache_reset_stats(void) {
  for (int i = 0; i < UOPI_KSTAT_COUNT; i++) atomic_store(&stats[i], 0);
}

void uopc_cache_set_memory_limit(uint32_t entries, uint64_t bytes) {
  uopi_kentry *victims = NULL;
  pthread_mutex_lock(&lock);
  max_entries = entries;
  max_bytes = bytes;
  evict(&victims, max_entries, max_bytes);
  pthread_mutex_unlock(&lock);
  free_victims(victims);
}

void uopc_cache_clear_memory(void) { uopi_kcache_drop_unheld(); }
