/* lib/core/scratch.c - scratch memory for passes: a stack of bump regions
 * in the context (mark, allocate, reset to the mark).
 *
 * A rule or pass that needs temporary arrays takes a mark, allocates, and
 * resets to the mark when done: nothing is freed one by one, and nested
 * users (a rule calling simplify, which runs rules) each reset only what
 * they took.  Chunks come from the context's allocator (so the
 * out-of-memory tests reach them); the newest free chunk is kept for the
 * next pass.
 */
#include <string.h>

#include "core/ctx.h"

typedef struct uopi_scratch_chunk {
  struct uopi_scratch_chunk *next; /* older chunk */
  size_t size;                     /* bytes of data[] */
  size_t used;
  size_t base;                     /* the mark where this chunk begins */
  _Alignas(16) char data[];
} chunk;

#define CHUNK_MIN (64u * 1024u)

size_t uopi_scratch_mark(const uopc_ctx *c) { return c->scratch ? c->scratch->base + c->scratch->used : 0; }

void *uopi_scratch(uopc_ctx *c, size_t n) {
  n = (n + 15u) & ~(size_t)15u;
  chunk *t = c->scratch;
  if (t && t->size - t->used >= n) {
    void *p = t->data + t->used;
    t->used += n;
    return p;
  }
  size_t mark = uopi_scratch_mark(c);
  chunk *ch = c->scratch_spare;
  if (ch && ch->size >= n) {
    c->scratch_spare = NULL;
  } else {
    size_t sz = t && t->size * 2 > CHUNK_MIN ? t->size * 2 : CHUNK_MIN;
    if (sz < n) sz = n;
    if (sz > SIZE_MAX / 2 - sizeof *ch) return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory (%zu bytes of scratch)", n);
    ch = uopi_raw_realloc(c, NULL, 0, sizeof *ch + sz);
    if (!ch) return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory (%zu bytes of scratch)", n);
    ch->size = sz;
  }
  ch->next = t;
  ch->used = n;
  ch->base = mark;
  c->scratch = ch;
  return ch->data;
}

static void chunk_drop(uopc_ctx *c, chunk *ch) {
  if (!c->scratch_spare || c->scratch_spare->size < ch->size) {
    chunk *old = c->scratch_spare;
    c->scratch_spare = ch;
    ch = old;
  }
  if (ch) uopi_raw_realloc(c, ch, sizeof *ch + ch->size, 0);
}

void uopi_scratch_reset(uopc_ctx *c, size_t mark) {
  while (c->scratch && c->scratch->base >= mark && (c->scratch->base > mark || c->scratch->next)) {
    chunk *t = c->scratch;
    c->scratch = t->next;
    chunk_drop(c, t);
  }
  if (c->scratch) {
    UOPI_ASSERT(mark >= c->scratch->base && mark - c->scratch->base <= c->scratch->used);
    c->scratch->used = mark - c->scratch->base;
  }
}

void uopi_scratch_free_all(uopc_ctx *c) {
  for (chunk *t = c->scratch, *nx; t; t = nx) {
    nx = t->next;
    uopi_raw_realloc(c, t, sizeof *t + t->size, 0);
  }
  if (c->scratch_spare) uopi_raw_realloc(c, c->scratch_spare, sizeof *c->scratch_spare + c->scratch_spare->size, 0);
  c->scratch = c->scratch_spare = NULL;
}
