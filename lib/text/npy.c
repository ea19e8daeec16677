/* lib/text/npy.c - NumPy .npy files (include/uopc/npy.h has the contract).
 *
 * The format (numpy/lib/format.py, NEP 1):
 *
 *     "\x93NUMPY" major minor  HLEN  HEADER  DATA
 *
 * HLEN is a little-endian u16 for version 1.0 and a u32 for 2.0 and 3.0
 * (3.0: the header is UTF-8 instead of latin-1).  HEADER is the repr of a
 * dict {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with
 * spaces and ended by '\n'.  DATA is the elements in C order.
 *
 * The header parser is a small hand-written scanner over the bytes (no
 * recursion, every read bounds-checked); anything it does not expect is an
 * error naming the offset.  The data is read straight into a 64-byte aligned
 * block.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "uopc/npy.h"

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6
#define MAX_HEADER (1u << 20) /* longer headers are refused (NumPy's own limit is 10000) */
#define SUPPORTED "bool |b1, i32 <i4, f32 <f4, f16 <f2"

static uopc_status fail(uopc_error *e, uopc_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static uopc_status fail(uopc_error *e, uopc_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  e->code = code;
  return code;
}

static size_t elem_size(uopc_dtype t) {
  switch (t) {
  case UOPC_DT_BOOL: return 1;
  case UOPC_DT_F16: return 2;
  case UOPC_DT_I32: case UOPC_DT_F32: return 4;
  default: return 0;
  }
}

const char *uopc_npy_descr(uopc_dtype t) {
  switch (t) {
  case UOPC_DT_BOOL: return "|b1";
  case UOPC_DT_I32: return "<i4";
  case UOPC_DT_F32: return "<f4";
  case UOPC_DT_F16: return "<f2";
  default: return NULL;
  }
}

/* ---- byte order ------------------------------------------------------------ */

/* Elements are little-endian in the file; swap in place on a big-endian host. */
static void to_host(void *data, int64_t count, size_t size) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  uint8_t *p = data;
  for (int64_t i = 0; i < count; i++, p += size)
    for (size_t a = 0, b = size - 1; a < b; a++, b--) {
      uint8_t t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
#else
  (void)data, (void)count, (void)size;
#endif
}

/* ---- the header -------------------------------------------------------------- */

typedef struct hdr {
  uopc_dtype dtype;
  uint32_t ndim;
  int64_t shape[UOPC_LIMIT_DIMS];
  int64_t count;
  size_t data_off, data_bytes;
} hdr;

typedef struct scan {
  const char *s;
  size_t n, i;
  uopc_error *e;
} scan;

static void skip_ws(scan *S) {
  while (S->i < S->n && (S->s[S->i] == ' ' || S->s[S->i] == '\t')) S->i++;
}

static uopc_status bad(scan *S, const char *what) {
  if (S->i >= S->n) return fail(S->e, UOPC_ERR_SYNTAX, "malformed header: %s, found the end of the header", what);
  unsigned char ch = (unsigned char)S->s[S->i];
  if (ch >= 0x20 && ch < 0x7f)
    return fail(S->e, UOPC_ERR_SYNTAX, "malformed header: %s, found '%c' at header offset %zu", what, ch, S->i);
  return fail(S->e, UOPC_ERR_SYNTAX, "malformed header: %s, found byte 0x%02x at header offset %zu", what, ch, S->i);
}

static int eat(scan *S, char ch) {
  skip_ws(S);
  if (S->i < S->n && S->s[S->i] == ch) {
    S->i++;
    return 1;
  }
  return 0;
}

/* A '...' or "..." string without escapes; *p, *len point into the header. */
static uopc_status string(scan *S, const char **p, size_t *len, const char *what) {
  skip_ws(S);
  if (S->i >= S->n || (S->s[S->i] != '\'' && S->s[S->i] != '"')) return bad(S, what);
  char q = S->s[S->i++];
  size_t b = S->i;
  while (S->i < S->n && S->s[S->i] != q) {
    unsigned char ch = (unsigned char)S->s[S->i];
    if (ch == '\\' || ch == '\n' || ch < 0x20 || ch >= 0x7f) return bad(S, "a string of plain ASCII characters");
    S->i++;
  }
  if (S->i >= S->n) return bad(S, "a closing quote");
  *p = S->s + b;
  *len = S->i - b;
  S->i++;
  return UOPC_OK;
}

static int word(scan *S, const char *w) {
  size_t n = strlen(w);
  if (S->n - S->i >= n && memcmp(S->s + S->i, w, n) == 0) {
    size_t j = S->i + n;
    if (j < S->n && ((S->s[j] >= 'a' && S->s[j] <= 'z') || (S->s[j] >= 'A' && S->s[j] <= 'Z') ||
                     (S->s[j] >= '0' && S->s[j] <= '9') || S->s[j] == '_'))
      return 0;
    S->i = j;
    return 1;
  }
  return 0;
}

static uopc_status parse_descr(scan *S, hdr *h) {
  skip_ws(S);
  if (S->i < S->n && (S->s[S->i] == '[' || S->s[S->i] == '{' || S->s[S->i] == '('))
    return fail(S->e, UOPC_ERR_ARG, "structured dtypes are not supported (" SUPPORTED ")");
  const char *d;
  size_t len;
  if (string(S, &d, &len, "a dtype string for 'descr'")) return S->e->code;
  static const struct {
    const char *s;
    uopc_dtype t;
  } ok[] = {{"|b1", UOPC_DT_BOOL}, {"<b1", UOPC_DT_BOOL}, {"<i4", UOPC_DT_I32}, {"<f4", UOPC_DT_F32}, {"<f2", UOPC_DT_F16}};
  for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++)
    if (len == 3 && memcmp(d, ok[k].s, 3) == 0) {
      h->dtype = ok[k].t;
      return UOPC_OK;
    }
  int shown = len > 40 ? 40 : (int)len;
  if (len == 3 && d[0] == '>' && (memcmp(d + 1, "i4", 2) == 0 || memcmp(d + 1, "f4", 2) == 0 || memcmp(d + 1, "f2", 2) == 0))
    return fail(S->e, UOPC_ERR_ARG, "big-endian data (%.3s) is not supported: save it little-endian ('<%.2s')", d, d + 1);
  return fail(S->e, UOPC_ERR_ARG, "dtype %.*s%s is not supported (" SUPPORTED ")", shown, d, len > 40 ? "..." : "");
}

/* A non-negative decimal integer as Python writes it (no sign, no leading
   zeros, no underscores). */
static uopc_status dim(scan *S, int64_t *v) {
  skip_ws(S);
  if (S->i < S->n && S->s[S->i] == '-') return bad(S, "a non-negative dimension");
  if (S->i >= S->n || S->s[S->i] < '0' || S->s[S->i] > '9') return bad(S, "a dimension (a decimal integer)");
  size_t b = S->i;
  int64_t x = 0;
  while (S->i < S->n && S->s[S->i] >= '0' && S->s[S->i] <= '9') {
    int d = S->s[S->i] - '0';
    if (x > (INT64_MAX - d) / 10) return fail(S->e, UOPC_ERR_SYNTAX, "malformed header: dimension too large at header offset %zu", b);
    x = x * 10 + d;
    S->i++;
  }
  if (S->s[b] == '0' && S->i - b > 1) {
    S->i = b;
    return bad(S, "a dimension without leading zeros");
  }
  if (S->i < S->n && (S->s[S->i] == '.' || S->s[S->i] == '_' || S->s[S->i] == 'e' || S->s[S->i] == 'x' ||
                      S->s[S->i] == 'L' || S->s[S->i] == 'j'))
    return bad(S, "a dimension (a decimal integer)");
  *v = x;
  return UOPC_OK;
}

static uopc_status parse_shape(scan *S, hdr *h) {
  if (!eat(S, '(')) return bad(S, "a tuple '(' for 'shape'");
  h->ndim = 0;
  if (eat(S, ')')) return UOPC_OK;
  for (;;) {
    int64_t v = 0;
    if (dim(S, &v)) return S->e->code;
    if (h->ndim == UOPC_LIMIT_DIMS) return fail(S->e, UOPC_ERR_ARG, "more than %d dimensions", UOPC_LIMIT_DIMS);
    h->shape[h->ndim++] = v;
    if (eat(S, ')')) {
      /* (3) is the integer 3 in Python, not a tuple */
      if (h->ndim == 1) return S->i--, bad(S, "a ',' (a 1-tuple is written (N,))");
      return UOPC_OK;
    }
    if (!eat(S, ',')) return bad(S, "',' or ')' in 'shape'");
    if (eat(S, ')')) return UOPC_OK;
  }
}

/* The header text h[0..n) (without the preamble). */
static uopc_status parse_dict(const char *text, size_t n, hdr *h, uopc_error *e) {
  scan S = {text, n, 0, e};
  /* ends with '\n', after optional spaces */
  if (n == 0 || text[n - 1] != '\n')
    return fail(e, UOPC_ERR_SYNTAX, "malformed header: it does not end with a newline");
  S.n = n - 1;
  if (!eat(&S, '{')) return bad(&S, "a dict '{'");
  int seen[3] = {0, 0, 0};
  static const char *const keys[3] = {"descr", "fortran_order", "shape"};
  for (;;) {
    if (eat(&S, '}')) break;
    const char *k;
    size_t klen;
    if (string(&S, &k, &klen, "a key ('descr', 'fortran_order' or 'shape') or '}'")) return e->code;
    int which = -1;
    for (int j = 0; j < 3; j++)
      if (klen == strlen(keys[j]) && memcmp(k, keys[j], klen) == 0) which = j;
    if (which < 0) return fail(e, UOPC_ERR_SYNTAX, "malformed header: unknown key '%.*s'", klen > 40 ? 40 : (int)klen, k);
    if (seen[which]) return fail(e, UOPC_ERR_SYNTAX, "malformed header: key '%s' appears twice", keys[which]);
    seen[which] = 1;
    if (!eat(&S, ':')) return bad(&S, "':' after a key");
    skip_ws(&S);
    if (which == 0) {
      if (parse_descr(&S, h)) return e->code;
    } else if (which == 1) {
      if (word(&S, "True")) return fail(e, UOPC_ERR_ARG, "Fortran-order arrays are not supported (save with C order)");
      if (!word(&S, "False")) return bad(&S, "True or False for 'fortran_order'");
    } else {
      if (parse_shape(&S, h)) return e->code;
    }
    if (eat(&S, '}')) break;
    if (!eat(&S, ',')) return bad(&S, "',' or '}' after a value");
  }
  skip_ws(&S);
  if (S.i != S.n) return bad(&S, "only spaces after the dict");
  for (int j = 0; j < 3; j++)
    if (!seen[j]) return fail(e, UOPC_ERR_SYNTAX, "malformed header: key '%s' is missing", keys[j]);
  return UOPC_OK;
}

/* The preamble: *hstart, *hlen of the header.  p holds at least n bytes. */
static uopc_status preamble(const uint8_t *p, size_t n, size_t *hstart, size_t *hlen, uopc_error *e) {
  if (n < MAGIC_LEN || memcmp(p, MAGIC, MAGIC_LEN) != 0) {
    if (n < MAGIC_LEN && (n == 0 || memcmp(p, MAGIC, n) == 0))
      return fail(e, UOPC_ERR_SYNTAX, "truncated file: %zu bytes, no .npy header", n);
    return fail(e, UOPC_ERR_SYNTAX, "not a .npy file (it does not start with \\x93NUMPY)");
  }
  if (n < MAGIC_LEN + 2) return fail(e, UOPC_ERR_SYNTAX, "truncated file: %zu bytes, no format version", n);
  unsigned major = p[6], minor = p[7];
  if (major < 1 || major > 3 || minor != 0)
    return fail(e, UOPC_ERR_ARG, ".npy format version %u.%u is not supported (1.0, 2.0, 3.0)", major, minor);
  size_t lw = major == 1 ? 2 : 4;
  if (n < 8 + lw) return fail(e, UOPC_ERR_SYNTAX, "truncated file: %zu bytes, no header length", n);
  uint32_t len = p[8] | (uint32_t)p[9] << 8;
  if (lw == 4) len |= (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24;
  if (len > MAX_HEADER) return fail(e, UOPC_ERR_SYNTAX, "header length %u is too large (at most %u)", len, MAX_HEADER);
  *hstart = 8 + lw;
  *hlen = len;
  return UOPC_OK;
}

/* After the dict: count and data size, with overflow checks. */
static uopc_status sizes(hdr *h, uopc_error *e) {
  int64_t count = 1;
  for (uint32_t i = 0; i < h->ndim; i++) {
    if (h->shape[i] && count > INT64_MAX / h->shape[i]) return fail(e, UOPC_ERR_ARG, "the shape has too many elements");
    count *= h->shape[i];
  }
  size_t es = elem_size(h->dtype);
  if ((uint64_t)count > (uint64_t)SIZE_MAX / es || (uint64_t)count > (uint64_t)INT64_MAX / es)
    return fail(e, UOPC_ERR_ARG, "the shape has too many elements");
  h->count = count;
  h->data_bytes = (size_t)count * es;
  return UOPC_OK;
}

static void *alloc_data(size_t bytes) {
  if (!bytes) return NULL;
  size_t r = (bytes + 63) / 64 * 64;
  if (r < bytes) return NULL;
  return aligned_alloc(64, r);
}

static void fill_out(uopc_npy *out, const hdr *h, void *data) {
  memset(out, 0, sizeof *out);
  out->dtype = h->dtype;
  out->ndim = h->ndim;
  memcpy(out->shape, h->shape, h->ndim * sizeof h->shape[0]);
  out->count = h->count;
  out->data = data;
}

static const char *plural(size_t n) { return n == 1 ? "" : "s"; }

uopc_status uopc_npy_parse(const void *buf, size_t n, const char *name, uopc_npy *out, uopc_error *e) {
  uopc_error tmp;
  if (!e) e = &tmp;
  memset(e, 0, sizeof *e);
  e->file = name;
  if (!out) return fail(e, UOPC_ERR_ARG, "npy: NULL output");
  memset(out, 0, sizeof *out);
  if (!buf && n) return fail(e, UOPC_ERR_ARG, "npy: NULL buffer");
  const uint8_t *p = buf;
  size_t hs, hl;
  if (preamble(p, n, &hs, &hl, e)) return e->code;
  if (n - hs < hl) return fail(e, UOPC_ERR_SYNTAX, "truncated header: %zu of %zu bytes", n - hs, hl);
  hdr h = {0};
  if (parse_dict((const char *)p + hs, hl, &h, e) || sizes(&h, e)) return e->code;
  size_t have = n - hs - hl;
  if (have < h.data_bytes)
    return fail(e, UOPC_ERR_SYNTAX, "truncated data: the header says %lld element%s (%zu bytes), the file has %zu byte%s of data",
                (long long)h.count, plural((size_t)h.count), h.data_bytes, have, plural(have));
  if (have > h.data_bytes)
    return fail(e, UOPC_ERR_SYNTAX, "%zu trailing byte%s after the data of %lld element%s", have - h.data_bytes,
                plural(have - h.data_bytes), (long long)h.count, plural((size_t)h.count));
  void *data = alloc_data(h.data_bytes);
  if (h.data_bytes && !data) return fail(e, UOPC_ERR_NOMEM, "out of memory for %zu bytes of data", h.data_bytes);
  if (h.data_bytes) memcpy(data, p + hs + hl, h.data_bytes);
  to_host(data, h.count, elem_size(h.dtype));
  fill_out(out, &h, data);
  return UOPC_OK;
}

/* ---- files ----------------------------------------------------------------------- */

/* Reads up to n bytes (fewer only at end of file).  -1 on error (errno). */
static ssize_t read_full(int fd, void *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)buf + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (r == 0) break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

uopc_status uopc_npy_read(const char *path, uopc_npy *out, uopc_error *e) {
  uopc_error tmp;
  if (!e) e = &tmp;
  memset(e, 0, sizeof *e);
  e->file = path;
  if (!out) return fail(e, UOPC_ERR_ARG, "npy: NULL output");
  memset(out, 0, sizeof *out);
  if (!path) return fail(e, UOPC_ERR_ARG, "npy: NULL path");
  char eb[128];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(e, UOPC_ERR_IO, "cannot open: %s", strerror_r(errno, eb, sizeof eb));
  struct stat sb;
  if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    close(fd);
    return fail(e, UOPC_ERR_IO, "cannot read: Is a directory");
  }
  uint8_t pre[12];
  char *text = NULL;
  void *data = NULL;
  hdr h = {0};
  size_t hs = 0, hl = 0;
  uopc_status st = UOPC_OK;
  ssize_t got = read_full(fd, pre, sizeof pre);
  if (got < 0) st = fail(e, UOPC_ERR_IO, "cannot read: %s", strerror_r(errno, eb, sizeof eb));
  else st = preamble(pre, (size_t)got, &hs, &hl, e);
  /* the header (its first bytes may already be in pre) */
  if (!st && !(text = malloc(hl ? hl : 1))) st = fail(e, UOPC_ERR_NOMEM, "out of memory");
  if (!st) {
    size_t already = (size_t)got > hs ? (size_t)got - hs : 0;
    if (already > hl) already = hl;
    memcpy(text, pre + hs, already);
    ssize_t r = read_full(fd, text + already, hl - already);
    if (r < 0) st = fail(e, UOPC_ERR_IO, "cannot read: %s", strerror_r(errno, eb, sizeof eb));
    else if (already + (size_t)r < hl) st = fail(e, UOPC_ERR_SYNTAX, "truncated header: %zu of %zu bytes", already + (size_t)r, hl);
  }
  if (!st) st = parse_dict(text, hl, &h, e);
  if (!st) st = sizes(&h, e);
  size_t extra = (!st && (size_t)got > hs + hl) ? (size_t)got - hs - hl : 0; /* data bytes already in pre */
  if (!st && !(data = alloc_data(h.data_bytes)) && h.data_bytes)
    st = fail(e, UOPC_ERR_NOMEM, "out of memory for %zu bytes of data", h.data_bytes);
  if (!st) {
    size_t use = extra < h.data_bytes ? extra : h.data_bytes;
    if (use) memcpy(data, pre + hs + hl, use);
    ssize_t r = read_full(fd, (char *)data + use, h.data_bytes - use);
    size_t have = r < 0 ? 0 : use + (size_t)r;
    if (r < 0) st = fail(e, UOPC_ERR_IO, "cannot read: %s", strerror_r(errno, eb, sizeof eb));
    else if (have < h.data_bytes)
      st = fail(e, UOPC_ERR_SYNTAX, "truncated data: the header says %lld element%s (%zu bytes), the file has %zu byte%s of data",
                (long long)h.count, plural((size_t)h.count), h.data_bytes, have, plural(have));
    else {
      char more[4096];
      size_t trailing = extra > h.data_bytes ? extra - h.data_bytes : 0;
      for (;;) {
        ssize_t t = read_full(fd, more, sizeof more);
        if (t < 0) {
          st = fail(e, UOPC_ERR_IO, "cannot read: %s", strerror_r(errno, eb, sizeof eb));
          break;
        }
        trailing += (size_t)t;
        if ((size_t)t < sizeof more) break;
      }
      if (!st && trailing)
        st = fail(e, UOPC_ERR_SYNTAX, "%zu trailing byte%s after the data of %lld element%s", trailing, plural(trailing),
                  (long long)h.count, plural((size_t)h.count));
    }
  }
  close(fd);
  free(text);
  if (st) {
    free(data);
    return st;
  }
  to_host(data, h.count, elem_size(h.dtype));
  fill_out(out, &h, data);
  return UOPC_OK;
}

void uopc_npy_free(uopc_npy *a) {
  if (!a) return;
  free(a->data);
  memset(a, 0, sizeof *a);
}

/* ---- writing ---------------------------------------------------------------------- */

/* Checks a and builds preamble + header in hb (which holds hcap bytes). */
static uopc_status header(const uopc_npy *a, char *hb, size_t hcap, size_t *len, size_t *data_bytes, uopc_error *e) {
  const char *descr = a ? uopc_npy_descr(a->dtype) : NULL;
  if (!descr) return fail(e, UOPC_ERR_ARG, "npy: no array, or a dtype without a .npy form");
  if (a->ndim > UOPC_LIMIT_DIMS) return fail(e, UOPC_ERR_ARG, "npy: more than %d dimensions", UOPC_LIMIT_DIMS);
  int64_t count = 1;
  for (uint32_t i = 0; i < a->ndim; i++) {
    if (a->shape[i] < 0) return fail(e, UOPC_ERR_ARG, "npy: negative dimension");
    if (a->shape[i] && count > INT64_MAX / a->shape[i]) return fail(e, UOPC_ERR_ARG, "npy: the shape has too many elements");
    count *= a->shape[i];
  }
  if (count != a->count) return fail(e, UOPC_ERR_ARG, "npy: count %lld does not match the shape", (long long)a->count);
  size_t es = elem_size(a->dtype);
  if ((uint64_t)count > (uint64_t)SIZE_MAX / es) return fail(e, UOPC_ERR_ARG, "npy: the shape has too many elements");
  if (count && !a->data) return fail(e, UOPC_ERR_ARG, "npy: NULL data");
  *data_bytes = (size_t)count * es;
  /* the dict as NumPy's repr writes it */
  char dict[UOPC_LIMIT_DIMS * 22 + 96];
  size_t n = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (uint32_t i = 0; i < a->ndim; i++)
    n += (size_t)snprintf(dict + n, sizeof dict - n, "%s%lld", i ? ", " : "", (long long)a->shape[i]);
  n += (size_t)snprintf(dict + n, sizeof dict - n, "%s), }", a->ndim == 1 ? "," : "");
  /* version 1.0 unless the header needs more than 65535 bytes (never, with
     at most 64 dimensions; kept for the format's sake) */
  size_t pre = 10, total = (pre + n + 1 + 63) / 64 * 64;
  int v2 = total - pre > 65535;
  if (v2) pre = 12, total = (pre + n + 1 + 63) / 64 * 64;
  if (total > hcap) return fail(e, UOPC_ERR_ARG, "npy: header too long");
  size_t hlen = total - pre;
  memcpy(hb, MAGIC, MAGIC_LEN);
  hb[6] = v2 ? 2 : 1;
  hb[7] = 0;
  hb[8] = (char)(hlen & 0xff);
  hb[9] = (char)((hlen >> 8) & 0xff);
  if (v2) hb[10] = (char)((hlen >> 16) & 0xff), hb[11] = (char)((hlen >> 24) & 0xff);
  memcpy(hb + pre, dict, n);
  memset(hb + pre + n, ' ', total - pre - n - 1);
  hb[total - 1] = '\n';
  *len = total;
  return UOPC_OK;
}

#define HCAP (UOPC_LIMIT_DIMS * 22 + 256)

/* The data in file byte order (a copy on big-endian hosts; else a itself). */
static const void *le_data(const uopc_npy *a, size_t bytes, void **owned) {
  *owned = NULL;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  if (bytes && elem_size(a->dtype) > 1) {
    *owned = malloc(bytes);
    if (!*owned) return NULL;
    memcpy(*owned, a->data, bytes);
    to_host(*owned, a->count, elem_size(a->dtype));
    return *owned;
  }
#endif
  (void)bytes;
  return a->data;
}

void *uopc_npy_encode(const uopc_npy *a, size_t *size, uopc_error *e) {
  uopc_error tmp;
  if (!e) e = &tmp;
  memset(e, 0, sizeof *e);
  char hb[HCAP];
  size_t hlen, bytes;
  if (header(a, hb, sizeof hb, &hlen, &bytes, e)) return NULL;
  if (bytes > SIZE_MAX - hlen) return fail(e, UOPC_ERR_ARG, "npy: too large"), NULL;
  uint8_t *out = malloc(hlen + bytes);
  void *owned;
  const void *d = le_data(a, bytes, &owned);
  if (!out || (bytes && !d)) {
    free(out);
    free(owned);
    return fail(e, UOPC_ERR_NOMEM, "out of memory"), NULL;
  }
  memcpy(out, hb, hlen);
  if (bytes) memcpy(out + hlen, d, bytes);
  free(owned);
  if (size) *size = hlen + bytes;
  return out;
}

static int write_full(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

uopc_status uopc_npy_save_temp(const char *path, const uopc_npy *a, char **tmp_path, uopc_error *e) {
  uopc_error tmp;
  if (!e) e = &tmp;
  memset(e, 0, sizeof *e);
  e->file = path;
  if (tmp_path) *tmp_path = NULL;
  if (!path || !tmp_path) return fail(e, UOPC_ERR_ARG, "npy: NULL path");
  char hb[HCAP], eb[128];
  size_t hlen, bytes;
  if (header(a, hb, sizeof hb, &hlen, &bytes, e)) return e->code;
  size_t pl = strlen(path);
  char *t = malloc(pl + 32);
  if (!t) return fail(e, UOPC_ERR_NOMEM, "out of memory");
  /* path.tmp-PID-RANDOM, created exclusively (mode 0666 less the umask, like
     any new file) */
  static unsigned long counter;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long r = (unsigned long)ts.tv_nsec ^ ((unsigned long)__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) << 20);
    snprintf(t, pl + 32, "%s.tmp-%ld-%06lx", path, (long)getpid(), r & 0xffffffUL);
    fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    fail(e, UOPC_ERR_IO, "cannot create a file next to it: %s", strerror_r(errno, eb, sizeof eb));
    free(t);
    return e->code;
  }
  void *owned;
  const void *d = le_data(a, bytes, &owned);
  uopc_status st = UOPC_OK;
  if (bytes && !d) st = fail(e, UOPC_ERR_NOMEM, "out of memory");
  else if (write_full(fd, hb, hlen) || (bytes && write_full(fd, d, bytes)))
    st = fail(e, UOPC_ERR_IO, "cannot write: %s", strerror_r(errno, eb, sizeof eb));
  free(owned);
  if (close(fd) != 0 && !st) st = fail(e, UOPC_ERR_IO, "cannot write: %s", strerror_r(errno, eb, sizeof eb));
  if (st) {
    unlink(t);
    free(t);
    return st;
  }
  *tmp_path = t;
  return UOPC_OK;
}

uopc_status uopc_npy_save(const char *path, const uopc_npy *a, uopc_error *e) {
  uopc_error tmp;
  if (!e) e = &tmp;
  char *t;
  if (uopc_npy_save_temp(path, a, &t, e)) return e->code;
  if (rename(t, path) != 0) {
    char eb[128];
    fail(e, UOPC_ERR_IO, "cannot write: %s", strerror_r(errno, eb, sizeof eb));
    unlink(t);
    free(t);
    return e->code;
  }
  free(t);
  return UOPC_OK;
}
