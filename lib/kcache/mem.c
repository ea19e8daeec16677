/* lib/kcache/mem.c - the kernel cache in memory: a store of entries with
 * the pending-entry protocol (docs/cache.md).
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
 * A miss inserts a *pending* entry, and the thread that asked becomes its
 * filler: it fills the entry outside the lock (lib/compile.c: from disk,
 * else by compiling).  Another thread asking for the same key meanwhile
 * waits on a condition variable instead of compiling it again; when the
 * filler fails it removes the entry and the waiters start over (one of them
 * becomes the filler).
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

#include "kcache/kcache.h"
#include "uopc/cache.h"

#define ALIASES_PER_ENTRY 4

/* A key: hash, tier, compile flags, graph bytes (owned). */
typedef struct kkey {
  uint8_t hash[UOPI_KCACHE_HASH];
  uint32_t tier, flags;
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
  return memcmp(a->hash, b->hash, UOPI_KCACHE_HASH) == 0 && a->tier == b->env.tier && a->flags == b->env.flags && a->len == b->graph_len &&
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

/* ---- the store ------------------------------------------------------------- */

int uopi_kcache_acquire(uopi_kkey *k, int wait, uopi_kentry **out) {
  pthread_mutex_lock(&lock);
  for (;;) {
    uopi_kentry *e = find(k);
    if (e && !e->pending) {
      hold(e);
      pthread_mutex_unlock(&lock);
      uopi_kstat_add(UOPI_KSTAT_MEM_HIT, 1);
      *out = e;
      return UOPI_KCACHE_HIT;
    }
    if (!e) break;
    if (!wait) { /* the caller may be the filler itself (a batch, compile.c) */
      pthread_mutex_unlock(&lock);
      *out = NULL;
      return UOPI_KCACHE_BUSY;
    }
    /* someone is filling it (or freeing it): wait, holding it so that it stays */
    hold(e);
    while (e->pending) pthread_cond_wait(&filled, &lock);
    if (!e->failed) { /* the wait's hold becomes the caller's */
      pthread_mutex_unlock(&lock);
      uopi_kstat_add(UOPI_KSTAT_MEM_HIT, 1);
      *out = e;
      return UOPI_KCACHE_HIT;
    }
    if (unhold(e)) free_entry(e); /* already out of the table; no code */
  }
  uopi_kentry *e = calloc(1, sizeof *e);
  if (e && nentries + 1 > nbuckets) GROW(uopi_kentry, buckets, nbuckets);
  if (!e || !nbuckets) {
    pthread_mutex_unlock(&lock);
    free(e);
    *out = NULL;
    return UOPI_KCACHE_NOMEM;
  }
  memcpy(e->key.hash, k->hash, UOPI_KCACHE_HASH);
  e->key.tier = k->env.tier;
  e->key.flags = k->env.flags;
  e->key.graph = k->graph;
  e->key.len = k->graph_len;
  e->pending = 1;
  hold(e);
  size_t b = slot(e->key.hash, nbuckets);
  e->hnext = buckets[b];
  buckets[b] = e;
  nentries++;
  pthread_mutex_unlock(&lock);
  k->lent = 1;
  *out = e;
  return UOPI_KCACHE_FILL;
}

void uopi_kcache_abandon(uopi_kentry *e) {
  pthread_mutex_lock(&lock);
  unlink_entry(e);
  e->pending = 0;
  e->failed = 1;
  pthread_cond_broadcast(&filled);
  int last = unhold(e);
  pthread_mutex_unlock(&lock);
  if (last) free_entry(e);
}

void uopi_kcache_fill(uopi_kentry *e, uopi_jit_code *code, const uopi_kmeta *m) {
  pthread_mutex_lock(&lock);
  e->code = code;
  e->meta = *m;
  e->bytes = code->obj_size + e->key.len + sizeof *e;
  total_bytes += e->bytes;
  e->pending = 0;
  pthread_cond_broadcast(&filled);
  pthread_mutex_unlock(&lock);
}

void uopi_kcache_alias(uopi_kentry *e, uopi_kkey *raw) {
  kalias *a = malloc(sizeof *a), *drop = NULL;
  if (!a) return;
  if (!uopi_kkey_own(raw)) { /* lent bytes (the context's raw-key memo): the alias takes a copy */
    free(a);
    return;
  }
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
  a->key.flags = raw->env.flags;
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

uopi_kentry *uopi_kcache_find_raw(const uopi_kkey *raw) {
  pthread_mutex_lock(&lock);
  kalias *a = find_alias(raw);
  uopi_kentry *e = a && !a->e->pending ? a->e : NULL;
  if (e) hold(e);
  pthread_mutex_unlock(&lock);
  if (e) uopi_kstat_add(UOPI_KSTAT_MEM_HIT, 1);
  return e;
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
  if (!s) return;
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
