/* tools/viz_html.c - the page of `uopc viz`: one HTML file, everything
 * inline.  The skeleton, the style and the script are tools/viz_page.html,
 * tools/viz_page.css and tools/viz_page.js, embedded into the CLI at build
 * time (cmake/Embed.cmake writes viz_assets.c); the data is one JSON object
 * in a <script type="application/json"> element, which the script reads.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz.h"

/* viz_assets.c, generated */
extern const unsigned char viz_page_html[], viz_page_css[], viz_page_js[];
extern const size_t viz_page_html_len, viz_page_css_len, viz_page_js_len;

/* ---- vz_buf ------------------------------------------------------------------ */

void vz_put(vz_buf *b, const char *s, size_t n) {
  if (b->bad || n == 0) return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n + 1) cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) {
      b->bad = 1;
      return;
    }
    b->s = p;
    b->cap = cap;
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = 0;
}

void vz_puts(vz_buf *b, const char *s) { vz_put(b, s, strlen(s)); }

void vz_printf(vz_buf *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    vz_put(b, tmp, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->bad = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  vz_put(b, big, (size_t)n);
  free(big);
}

void vz_json_str(vz_buf *b, const char *s) {
  static const char hex[] = "0123456789abcdef";
  vz_put(b, "\"", 1);
  const char *run = s;
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch >= 0x20 && ch != '"' && ch != '\\' && ch != '<' && ch != '>' && ch != 0x7f) continue;
    vz_put(b, run, (size_t)(s - run));
    run = s + 1;
    switch (ch) {
    case '"': vz_put(b, "\\\"", 2); break;
    case '\\': vz_put(b, "\\\\", 2); break;
    case '\n': vz_put(b, "\\n", 2); break;
    case '\t': vz_put(b, "\\t", 2); break;
    default: {
      char e[6] = {'\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15]};
      vz_put(b, e, 6);
    }
    }
  }
  vz_put(b, run, (size_t)(s - run));
  vz_put(b, "\"", 1);
}

void vz_buf_free(vz_buf *b) {
  free(b->s);
  memset(b, 0, sizeof *b);
}

/* ---- the page ------------------------------------------------------------------- */

static void put_html_text(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '<') fputs("&lt;", f);
    else if (*s == '>') fputs("&gt;", f);
    else if (*s == '&') fputs("&amp;", f);
    else if (*s == '"') fputs("&quot;", f);
    else fputc(*s, f);
  }
}

int vz_write_page(const char *path, const char *title, const vz_buf *data, size_t *bytes) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  const char *t = (const char *)viz_page_html, *end = t + viz_page_html_len;
  while (t < end) {
    const char *at = memchr(t, '@', (size_t)(end - t));
    if (!at) at = end;
    fwrite(t, 1, (size_t)(at - t), f);
    if (at == end) break;
    const char *close = memchr(at + 1, '@', (size_t)(end - at - 1));
    size_t key = close ? (size_t)(close - at - 1) : 0;
    if (close && key == 5 && memcmp(at + 1, "TITLE", 5) == 0) put_html_text(f, title);
    else if (close && key == 3 && memcmp(at + 1, "CSS", 3) == 0) fwrite(viz_page_css, 1, viz_page_css_len, f);
    else if (close && key == 2 && memcmp(at + 1, "JS", 2) == 0) fwrite(viz_page_js, 1, viz_page_js_len, f);
    else if (close && key == 4 && memcmp(at + 1, "DATA", 4) == 0) fwrite(data->s, 1, data->n, f);
    else {
      fputc('@', f);
      t = at + 1;
      continue;
    }
    t = close + 1;
  }
  long at = ftell(f);
  *bytes = at > 0 ? (size_t)at : 0;
  int bad = ferror(f);
  int err = errno;
  if (fclose(f) != 0 && !bad) bad = 1, err = errno;
  errno = err;
  return !bad;
}
