/* lib/support/sbuf.c - a growable string through the context's allocator,
 * used by the printers and the show form.  A failed allocation makes the
 * buffer sticky-failed so that callers check once, at uopi_sb_finish.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "support/support.h"

void uopi_sb_init(uopi_sbuf *b, uopc_ctx *c) { uopi_sb_init_max(b, c, 0); }

void uopi_sb_init_max(uopi_sbuf *b, uopc_ctx *c, size_t max) {
  b->c = c;
  b->s = NULL;
  b->n = b->cap = 0;
  b->max = max;
  b->ok = 1;
  b->cut = 0;
}

/* Room for need more bytes plus a NUL. */
static int reserve(uopi_sbuf *b, size_t need) {
  if (!b->ok) return 0;
  if (need > SIZE_MAX / 4 - b->n) {
    uopc_fail(b->c, UOPC_ERR_NOMEM, "out of memory (string too long)");
    b->ok = 0;
    return 0;
  }
  size_t want = b->n + need + 1;
  if (want <= b->cap) return 1;
  size_t ncap = b->cap ? b->cap : 256;
  while (ncap < want) ncap *= 2;
  char *p = uopc_mem_realloc(b->c, b->s, b->cap, ncap);
  if (!p) {
    b->ok = 0;
    return 0;
  }
  b->s = p;
  b->cap = ncap;
  return 1;
}

void uopi_sb_putn(uopi_sbuf *b, const char *s, size_t n) {
  if (b->cut) return;
  int cut = 0;
  if (b->max && b->n + n > b->max) {
    n = b->max > b->n ? b->max - b->n : 0;
    cut = 1;
  }
  if (!reserve(b, n + (cut ? 3 : 0))) return;
  if (n) memcpy(b->s + b->n, s, n);
  b->n += n;
  if (cut) {
    memcpy(b->s + b->n, "...", 3);
    b->n += 3;
    b->cut = 1;
  }
}

void uopi_sb_printf(uopi_sbuf *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (w >= 0) uopi_sb_putn(b, tmp, (size_t)w < sizeof tmp ? (size_t)w : sizeof tmp - 1);
}

void uopi_sb_puts(uopi_sbuf *b, const char *s) { uopi_sb_putn(b, s, strlen(s)); }

void uopi_sb_putc(uopi_sbuf *b, char ch) { uopi_sb_putn(b, &ch, 1); }

char *uopi_sb_finish(uopi_sbuf *b) {
  if (!reserve(b, 0)) {
    uopi_sb_free(b);
    return NULL;
  }
  b->s[b->n] = 0;
  char *r = b->s;
  if (b->cap != b->n + 1) {
    r = uopc_mem_realloc(b->c, b->s, b->cap, b->n + 1);
    if (!r) {
      uopi_sb_free(b);
      return NULL;
    }
  }
  b->s = NULL;
  b->n = b->cap = 0;
  return r;
}

void uopi_sb_free(uopi_sbuf *b) {
  uopc_mem_free(b->c, b->s, b->cap);
  b->s = NULL;
  b->n = b->cap = 0;
}
