/* lib/core/ctx.c - context lifetime, the allocation choke point, errors,
 * debug switches and the pool of side tables.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"
#include "support/support.h"
#include "uopc/rewrite.h"

#define CHUNK_MIN (64u * 1024u)
#define CHUNK_MAX (4u * 1024u * 1024u)
#define CACHE_MAX_BYTES (64u * 1024u * 1024u)
/* Context arrays from this size on come from the chunk cache: from malloc,
   a context's growing arrays made the heap top grow and shrink (brk, page
   faults) on every context of a few thousand nodes. */
#define BIG_MIN (16u * 1024u)

static void *default_realloc(void *ud, void *p, size_t old_n, size_t new_n) {
  (void)ud, (void)old_n;
  if (new_n == 0) {
    free(p);
    return NULL;
  }
  return realloc(p, new_n);
}

void uopi_die(const char *file, int line, const char *what) {
  fprintf(stderr, "uopc: internal error at %s:%d: %s\n", file, line, what);
  abort();
}

void *uopi_raw_realloc(uopc_ctx *c, void *p, size_t old_n, size_t new_n) {
  return c->alloc.realloc_fn(c->alloc.ud, p, old_n, new_n);
}

void *uopc_mem_alloc(uopc_ctx *c, size_t n) { return uopc_mem_realloc(c, NULL, 0, n); }

void *uopc_mem_realloc(uopc_ctx *c, void *p, size_t old_n, size_t new_n) {
  if (!c) return NULL;
  if (new_n == 0) new_n = 1;
  void *q = uopi_raw_realloc(c, p, old_n, new_n);
  if (!q) uopc_fail(c, UOPC_ERR_NOMEM, "out of memory (%zu bytes)", new_n);
  return q;
}

void uopc_mem_free(uopc_ctx *c, void *p, size_t n) {
  if (c && p) uopi_raw_realloc(c, p, n, 0);
}

int uopi_grow(uopc_ctx *c, void **p, uint32_t *cap, uint32_t need, size_t elem) {
  if (need <= *cap) return 1;
  uint64_t ncap = *cap ? *cap : 16;
  while (ncap < need) ncap *= 2;
  if (ncap > UINT32_MAX) ncap = UINT32_MAX;
  if (ncap < need || ncap * elem > SIZE_MAX / 2) {
    uopc_fail(c, UOPC_ERR_NOMEM, "out of memory (array of %u)", need);
    return 0;
  }
  void *q = uopc_mem_realloc(c, *p, (size_t)*cap * elem, (size_t)ncap * elem);
  if (!q) return 0;
  *p = q;
  *cap = (uint32_t)ncap;
  return 1;
}

/* Arena chunks of the default allocator outlive their context in a small
   process-wide cache: fresh memory costs a page fault per 4 KiB, which
   dominated building a few thousand nodes in a new context.  Chunks are
   mmapped and prefaulted in one call (MAP_POPULATE).  A custom allocator
   gets every chunk from its realloc_fn. */
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static uopi_chunk *cache_head;
static size_t cache_bytes;

static uopi_chunk *chunk_new(uopc_ctx *c, size_t total) {
  total = (total + 4095) & ~(size_t)4095;
  if (c->alloc.realloc_fn != default_realloc) {
    uopi_chunk *ch = uopi_raw_realloc(c, NULL, 0, total);
    if (ch) ch->size = total;
    return ch;
  }
  pthread_mutex_lock(&cache_mu);
  for (uopi_chunk **pp = &cache_head; *pp; pp = &(*pp)->next) {
    if ((*pp)->size >= total && (*pp)->size <= 2 * total) {
      uopi_chunk *ch = *pp;
      *pp = ch->next;
      cache_bytes -= ch->size;
      pthread_mutex_unlock(&cache_mu);
      return ch;
    }
  }
  pthread_mutex_unlock(&cache_mu);
  uopi_chunk *ch = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (ch == MAP_FAILED) return NULL;
  ch->size = total;
  return ch;
}

static void chunk_free(uopc_ctx *c, uopi_chunk *ch) {
  if (c->alloc.realloc_fn != default_realloc) {
    uopi_raw_realloc(c, ch, ch->size, 0);
    return;
  }
  pthread_mutex_lock(&cache_mu);
  if (cache_bytes + ch->size <= CACHE_MAX_BYTES) {
    ch->next = cache_head;
    cache_head = ch;
    cache_bytes += ch->size;
    ch = NULL;
  }
  pthread_mutex_unlock(&cache_mu);
  if (ch) munmap(ch, ch->size);
}

void *uopi_big_realloc(uopc_ctx *c, void *p, size_t old_n, size_t new_n) {
  const size_t big = BIG_MIN;
  if (old_n < big && new_n < big) return uopc_mem_realloc(c, p, old_n, new_n);
  void *q = NULL;
  if (new_n >= big) {
    uopi_chunk *ch = chunk_new(c, sizeof(uopi_chunk) + new_n);
    if (!ch) return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory (%zu bytes)", new_n);
    q = ch->data;
  } else if (!(q = uopc_mem_alloc(c, new_n))) {
    return NULL;
  }
  if (p) memcpy(q, p, old_n < new_n ? old_n : new_n);
  uopi_big_free(c, p, old_n);
  return q;
}

void uopi_big_free(uopc_ctx *c, void *p, size_t n) {
  if (!p) return;
  if (n < BIG_MIN) uopc_mem_free(c, p, n);
  else chunk_free(c, (uopi_chunk *)((char *)p - offsetof(uopi_chunk, data)));
}

void *uopi_arena(uopc_ctx *c, size_t n) {
  n = (n + 15u) & ~(size_t)15u;
  if (n > c->left) {
    /* chunks grow geometrically with the context */
    size_t sz = c->chunks ? c->chunks->size * 2 : CHUNK_MIN;
    if (sz > CHUNK_MAX) sz = CHUNK_MAX;
    if (sz < n) sz = n;
    size_t total = sizeof(uopi_chunk) + sz + 16;
    uopi_chunk *ch = chunk_new(c, total);
    if (!ch) return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory (%zu bytes)", total);
    ch->next = c->chunks;
    c->chunks = ch;
    uintptr_t a = ((uintptr_t)ch->data + 15u) & ~(uintptr_t)15u;
    c->cur = (char *)a;
    c->left = sz;
  }
  void *p = c->cur;
  c->cur += n;
  c->left -= n;
  return p;
}

static uint64_t env_count(const char *name, uint64_t dflt) {
  uint64_t v;
  return uopi_env_count(name, &v) ? v : dflt;
}

uopc_ctx *uopc_ctx_new(const uopc_alloc *alloc) {
  uopc_alloc a = alloc && alloc->realloc_fn ? *alloc : (uopc_alloc){default_realloc, NULL};
  uopc_ctx *c = a.realloc_fn(a.ud, NULL, 0, sizeof *c);
  if (!c) return NULL;
  memset(c, 0, sizeof *c);
  c->alloc = a;
  const char *dbg = getenv("UOPC_DEBUG");
  if (dbg && strstr(dbg, "rewrite")) c->trace = stderr;
  if (dbg && strstr(dbg, "check")) c->check = 1;
  c->limits = (uopc_rewrite_limits){env_count("UOPC_REWRITE_STEPS_PER_NODE", UOPC_LIMIT_STEPS_PER_NODE),
                                    env_count("UOPC_REWRITE_MIN_STEPS", UOPC_LIMIT_STEPS),
                                    env_count("UOPC_REWRITE_CHAIN", UOPC_LIMIT_CHAIN)};
  return c;
}

void uopc_ctx_free(uopc_ctx *c) {
  if (!c) return;
  if (c->ext_memo_free) c->ext_memo_free(c->ext_memo);
  for (uint32_t i = 0; i < c->n_tables; i++) {
    uopi_table *t = c->tables_all[i];
    uopi_big_free(c, t->e, (size_t)t->cap * sizeof *t->e);
    uopi_raw_realloc(c, t, sizeof *t, 0);
  }
  uopi_scratch_free_all(c);
  uopi_big_free(c, c->bounds, (size_t)c->cap_bounds * sizeof *c->bounds);
  uopc_mem_free(c, c->pos, (size_t)c->cap_pos * sizeof *c->pos);
  uopc_mem_free(c, c->pos_files, (size_t)c->cap_pos_files * sizeof *c->pos_files);
  for (uopi_chunk *ch = c->chunks, *nx; ch; ch = nx) {
    nx = ch->next;
    chunk_free(c, ch);
  }
  uopi_big_free(c, c->nodes, (size_t)c->cap_nodes * sizeof *c->nodes);
  if (c->slots) uopi_big_free(c, c->slots, ((size_t)c->mask + 1) * sizeof *c->slots);
  uopc_alloc a = c->alloc;
  a.realloc_fn(a.ud, c, sizeof *c, 0);
}

uint32_t uopc_ctx_count(const uopc_ctx *c) { return c ? c->n_nodes : 0; }
uopc_node *uopc_ctx_node(const uopc_ctx *c, uint32_t id) { return c && id < c->n_nodes ? c->nodes[id] : NULL; }
const uopc_error *uopc_ctx_error(const uopc_ctx *c) { return c && c->has_err ? &c->err : NULL; }

void uopc_ctx_clear_error(uopc_ctx *c) {
  if (!c) return;
  c->has_err = 0; /* c->err is written whole by the next uopc_fail */
}

void *uopc_fail(uopc_ctx *c, uopc_status code, const char *fmt, ...) {
  if (!c) return NULL;
  c->n_fail++;
  if (c->has_err) return NULL;
  c->has_err = 1;
  c->err.code = code;
  c->err.file = NULL;
  c->err.line = c->err.col = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err.msg, sizeof c->err.msg, fmt, ap);
  va_end(ap);
  return NULL;
}

void *uopi_fail_at(uopc_ctx *c, uopc_status code, const uopc_node *at, const char *fmt, ...) {
  if (!c) return NULL;
  c->n_fail++;
  if (c->has_err) return NULL;
  c->has_err = 1;
  c->err.code = code;
  c->err.file = NULL;
  c->err.line = c->err.col = 0;
  if (at) uopc_node_pos(c, at, &c->err.file, &c->err.line, &c->err.col);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err.msg, sizeof c->err.msg, fmt, ap);
  va_end(ap);
  return NULL;
}

void uopc_ctx_set_rewrite_limits(uopc_ctx *c, const uopc_rewrite_limits *lim) {
  if (!c || !lim) return;
  if (lim->steps_per_node) c->limits.steps_per_node = lim->steps_per_node;
  if (lim->min_steps) c->limits.min_steps = lim->min_steps;
  if (lim->max_chain) c->limits.max_chain = lim->max_chain;
}

uopc_rewrite_limits uopc_ctx_rewrite_limits(const uopc_ctx *c) {
  if (!c) return (uopc_rewrite_limits){UOPC_LIMIT_STEPS_PER_NODE, UOPC_LIMIT_STEPS, UOPC_LIMIT_CHAIN};
  return c->limits;
}

void uopc_ctx_set_trace(uopc_ctx *c, FILE *f) {
  if (c) c->trace = f;
}
void uopc_ctx_set_trace_fn(uopc_ctx *c, uopc_trace_fn fn, void *ud) {
  if (!c) return;
  c->trace_fn = fn;
  c->trace_ud = ud;
}
void uopc_ctx_set_check(uopc_ctx *c, int on) {
  if (c) c->check = on != 0;
}
FILE *uopi_trace(const uopc_ctx *c) { return c->trace; }
int uopi_tracing(const uopc_ctx *c) { return c->trace || c->trace_fn; }
uint64_t uopi_fail_count(const uopc_ctx *c) { return c->n_fail; }
int uopi_check(const uopc_ctx *c) { return c->check; }

/* ---- side tables ---- */

uopi_table *uopi_table_acquire(uopc_ctx *c) {
  uopi_table *t = c->tables_free;
  if (t) {
    c->tables_free = t->next_free;
  } else {
    if (c->n_tables == sizeof c->tables_all / sizeof c->tables_all[0])
      return uopc_fail(c, UOPC_ERR_REWRITE, "passes nested too deeply (more than 64 side tables)");
    t = uopc_mem_alloc(c, sizeof *t);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    c->tables_all[c->n_tables++] = t;
  }
  t->next_free = NULL;
  if (++t->cur == 0) { /* generation wrapped: really clear */
    for (uint32_t i = 0; i < t->cap; i++) t->e[i].gen = 0;
    t->cur = 1;
  }
  return t;
}

void uopi_table_release(uopc_ctx *c, uopi_table *t) {
  if (!t) return;
  t->next_free = c->tables_free;
  c->tables_free = t;
}

int uopi_table_set(uopc_ctx *c, uopi_table *t, uint32_t id, void *v) {
  if (id >= t->cap) { /* by doubling, to the ids used: a pass over a small graph in a big context stays small */
    uint32_t need = id + 1;
    uint64_t ncap = t->cap ? t->cap : 64;
    while (ncap < need) ncap *= 2;
    if (ncap > UINT32_MAX) ncap = UINT32_MAX;
    uopi_slot *ne = uopi_big_realloc(c, t->e, (size_t)t->cap * sizeof *ne, (size_t)ncap * sizeof *ne);
    if (!ne) return 0;
    memset(ne + t->cap, 0, (size_t)(ncap - t->cap) * sizeof *ne);
    t->e = ne;
    t->cap = (uint32_t)ncap;
  }
  t->e[id].val = v;
  t->e[id].gen = t->cur;
  return 1;
}

int uopc_node_in(const uopc_ctx *c, const uopc_node *u) { return c && u && uopi_owns(c, u); }

int uopi_check_node(uopc_ctx *c, const uopc_node *u, const char *fn) {
  if (!c) return 0;
  if (u && uopi_owns(c, u)) return 1;
  if (!u) {
    if (!c->has_err) uopc_fail(c, UOPC_ERR_ARG, "%s: NULL node", fn);
  } else {
    uopc_fail(c, UOPC_ERR_ARG, "%s: the node belongs to another context (nodes never cross contexts)", fn);
  }
  return 0;
}

/* ---- the error slot around calls that report through a uopc_error * ---- */

void uopi_err_begin(uopc_ctx *c, uopi_errsave *s) {
  s->had = c && c->has_err;
  if (s->had) s->err = c->err;
  uopc_ctx_clear_error(c);
}

uopc_status uopi_err_end(uopc_ctx *c, uopi_errsave *s, uopc_status st, uopc_error *e) {
  if (st != UOPC_OK && e) {
    if (c && c->has_err) {
      *e = c->err;
    } else {
      memset(e, 0, sizeof *e);
      e->code = st;
      snprintf(e->msg, sizeof e->msg, "%s", st == UOPC_ERR_NOMEM ? "out of memory" : "failed (no message recorded)");
    }
  } else if (e) { /* no error: code UOPC_OK and an empty message (not a 280-byte memset) */
    e->code = UOPC_OK;
    e->file = NULL;
    e->line = e->col = 0;
    e->msg[0] = 0;
  }
  uopc_ctx_clear_error(c);
  if (c && s->had) {
    c->has_err = 1;
    c->err = s->err;
  }
  return st;
}
