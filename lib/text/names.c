/* lib/text/names.c - the parser's map from %NAME to node: open addressing,
 * linear probing, FNV-1a hashes, grown at half load.  Keys point into the
 * text being parsed, so the map lives no longer than one parse.
 */
#include <string.h>

#include "text/text.h"

static uint32_t fnv1a(const char *s, size_t len) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < len; i++) {
    h ^= (unsigned char)s[i];
    h *= 0x100000001b3ull;
  }
  return (uint32_t)(h ^ (h >> 32));
}

void uopi_names_init(uopi_names *m, uopc_ctx *c) {
  m->c = c;
  m->e = NULL;
  m->cap = m->n = 0;
}

void uopi_names_free(uopi_names *m) {
  uopc_mem_free(m->c, m->e, m->cap * sizeof *m->e);
  m->e = NULL;
  m->cap = m->n = 0;
}

static uopi_name *find(const uopi_names *m, const char *s, size_t len, uint32_t h) {
  size_t mask = m->cap - 1;
  for (size_t j = (size_t)h & mask;; j = (j + 1) & mask) {
    uopi_name *e = &m->e[j];
    if (!e->s) return e;
    if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0) return e;
  }
}

uopi_name *uopi_names_get(const uopi_names *m, const char *s, size_t len) {
  if (!m->cap) return NULL;
  uopi_name *e = find(m, s, len, fnv1a(s, len));
  return e->s ? e : NULL;
}

static int grow(uopi_names *m) {
  size_t ncap = m->cap ? m->cap * 2 : 64;
  if (ncap > SIZE_MAX / 2 / sizeof *m->e) {
    uopc_fail(m->c, UOPC_ERR_NOMEM, "out of memory (too many names)");
    return 0;
  }
  uopi_name *ne = uopc_mem_alloc(m->c, ncap * sizeof *ne);
  if (!ne) return 0;
  memset(ne, 0, ncap * sizeof *ne);
  uopi_names old = *m;
  m->e = ne;
  m->cap = ncap;
  for (size_t i = 0; i < old.cap; i++)
    if (old.e[i].s) *find(m, old.e[i].s, old.e[i].len, old.e[i].hash) = old.e[i];
  uopc_mem_free(m->c, old.e, old.cap * sizeof *old.e);
  return 1;
}

int uopi_names_put(uopi_names *m, const char *s, size_t len, uopc_node *node, int line) {
  if ((m->n + 1) * 2 > m->cap && !grow(m)) return 0;
  uint32_t h = fnv1a(s, len);
  uopi_name *e = find(m, s, len, h);
  UOPI_ASSERT(!e->s && len < UINT32_MAX);
  *e = (uopi_name){s, node, h, (uint32_t)len, line};
  m->n++;
  return 1;
}
