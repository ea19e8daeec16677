/* lib/text/names.c - the parser's map from %NAME to node: open addressing,
 * linear probing, FNV-1a hashes, grown at half load.  An entry is 8 bytes:
 * where the name starts in the text being parsed and the id of its node.
 * A name's length is not kept: a %NAME token is the longest run of word
 * characters after its '%' (lex.c), so the stored name ends at the first
 * character that is not a word character.  Its line is not kept either: it
 * is counted from the text on the one path that needs it, the error for a
 * name defined twice.  The map lives no longer than one parse.
 */
#include <limits.h>
#include <string.h>

#include "text/text.h"

_Static_assert(sizeof(uopi_name) == 8, "a name costs 8 bytes (docs/hardening.md, bytes per node)");

void uopi_names_init(uopi_names *m, uopc_ctx *c, const char *text, size_t len) {
  m->c = c;
  m->text = text;
  m->len = len;
  m->e = NULL;
  m->cap = m->n = 0;
}

void uopi_names_free(uopi_names *m) {
  uopc_mem_free(m->c, m->e, m->cap * sizeof *m->e);
  m->e = NULL;
  m->cap = m->n = 0;
}

/* Does the name stored at offset off spell s[0..len)? */
static int same(const uopi_names *m, uint32_t off, const char *s, size_t len) {
  if (len > m->len - off || memcmp(m->text + off, s, len) != 0) return 0;
  return off + len == m->len || !uopi_is_word((unsigned char)m->text[off + len]);
}

/* The slot of s[0..len) with hash h, or the empty slot where it would go. */
static uopi_name *find(const uopi_names *m, const char *s, size_t len, uint32_t h) {
  size_t mask = m->cap - 1;
  for (size_t j = (size_t)h & mask;; j = (j + 1) & mask) {
    uopi_name *e = &m->e[j];
    if (!e->off || same(m, e->off, s, len)) return e;
  }
}

uopi_name *uopi_names_get(const uopi_names *m, const char *s, size_t len) {
  if (!m->cap) return NULL;
  uopi_name *e = find(m, s, len, uopi_fnv1a(s, len));
  return e->off ? e : NULL;
}

/* The length of the name stored at offset off. */
static size_t stored_len(const uopi_names *m, uint32_t off) {
  size_t k = off;
  while (k < m->len && uopi_is_word((unsigned char)m->text[k])) k++;
  return k - off;
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
  for (size_t i = 0; i < old.cap; i++) {
    uint32_t off = old.e[i].off;
    if (!off) continue;
    const char *s = m->text + off;
    size_t len = stored_len(m, off);
    *find(m, s, len, uopi_fnv1a(s, len)) = old.e[i];
  }
  uopc_mem_free(m->c, old.e, old.cap * sizeof *old.e);
  return 1;
}

int uopi_names_put(uopi_names *m, const char *s, size_t len, const uopc_node *node) {
  UOPI_ASSERT(s > m->text && s + len <= m->text + m->len && (size_t)(s - m->text) < UINT32_MAX);
  if ((m->n + 1) * 2 > m->cap && !grow(m)) return 0;
  uopi_name *e = find(m, s, len, uopi_fnv1a(s, len));
  UOPI_ASSERT(!e->off);
  *e = (uopi_name){(uint32_t)(s - m->text), node->id};
  m->n++;
  return 1;
}

int uopi_names_line(const uopi_names *m, const uopi_name *e) {
  size_t lines = 1;
  for (const char *p = m->text, *end = m->text + e->off; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
    lines++;
  return lines < INT_MAX ? (int)lines : INT_MAX;
}
