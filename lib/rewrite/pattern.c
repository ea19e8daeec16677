/* lib/rewrite/pattern.c - the pattern notation (include/uopc/rewrite.h) and
 * its compact tree.
 *
 * Grammar (whitespace separates items; `:` and `=` bind tightly):
 *
 *   pat    := '$' NAME '=' pat            name the node pat matched
 *           | '(' head item* ')'          sources in order
 *           | '[' head item* ']'          sources in any order (at most 3)
 *           | '$' NAME [':' dtypes]       any node, bound
 *           | '#' NAME [':' dtypes]       any CONST, bound
 *           | '_' [':' dtypes]            any node
 *           | literal [':' dtypes]        a CONST equal to the literal
 *   head   := ops [':' dtypes]
 *   item   := pat | '...'                 (`...` last: more sources allowed)
 *   ops    := op ('|' op)*                op: a .uir op name, '*' or 'alu'
 *   dtypes := dtype ('|' dtype)*
 *   literal:= -?digits[.digits][e[+-]digits] | True | False | inf | -inf
 *
 * `(ops)` with no items does not look at the sources.  The parser recurses
 * over the pattern (at most UOPI_PAT_MAX_NODES parts), never over a graph.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite/rw.h"
#include "uopc/rewrite.h"

typedef struct parser {
  const char *s;       /* the text */
  size_t len, pos;
  uopc_pattern *p;     /* nodes has room for len + 1 nodes */
  size_t nb;           /* bytes used in p->names */
  uopc_error *e;
} parser;

static int perr(parser *ps, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(parser *ps, size_t at, const char *fmt, ...) {
  if (ps->e) {
    va_list ap;
    va_start(ap, fmt);
    ps->e->code = UOPC_ERR_SYNTAX;
    ps->e->file = NULL;
    ps->e->line = 1;
    ps->e->col = (int)at + 1;
    vsnprintf(ps->e->msg, sizeof ps->e->msg, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static int is_word(int ch) { return isalnum((unsigned char)ch) || ch == '_'; }
static int peek(const parser *ps) { return ps->pos < ps->len ? (unsigned char)ps->s[ps->pos] : 0; }
static void skip_ws(parser *ps) {
  while (ps->pos < ps->len && isspace((unsigned char)ps->s[ps->pos])) ps->pos++;
}
/* A character that may follow a word, number or name. */
static int is_delim(int ch) {
  return ch == 0 || isspace(ch) || ch == ')' || ch == ']' || ch == '(' || ch == '[' || ch == ':';
}
static size_t word_len(const parser *ps) {
  size_t n = 0;
  while (ps->pos + n < ps->len && is_word((unsigned char)ps->s[ps->pos + n])) n++;
  return n;
}

static int new_node(parser *ps) {
  uopc_pattern *p = ps->p;
  if (p->nnodes == UOPI_PAT_MAX_NODES)
    return perr(ps, ps->pos, "pattern has more than %d parts", UOPI_PAT_MAX_NODES);
  uopi_pnode *n = &p->nodes[p->nnodes];
  memset(n, 0, sizeof *n);
  n->ops = UOPI_ALL_OPS;
  n->dts = UOPI_ALL_DTYPES;
  n->var = -1;
  return (int)p->nnodes++;
}

/* The binding index of name s[at..at+n), added on first appearance. */
static int var_index(parser *ps, size_t at, size_t n) {
  uopc_pattern *p = ps->p;
  for (uint32_t i = 0; i < p->nvars; i++)
    if (strlen(p->var[i]) == n && memcmp(p->var[i], ps->s + at, n) == 0) return (int)i;
  if (p->nvars == UOPI_PAT_MAX_VARS)
    return perr(ps, at, "too many names in one pattern (at most %d)", UOPI_PAT_MAX_VARS);
  char *dst = p->names + ps->nb;
  memcpy(dst, ps->s + at, n);
  dst[n] = 0;
  ps->nb += n + 1;
  p->var[p->nvars] = dst;
  return (int)p->nvars++;
}

/* dtypes := dtype ('|' dtype)*, after a ':' that the caller consumed. */
static int parse_dtypes(parser *ps, uint8_t *out) {
  uint8_t m = 0;
  for (;;) {
    size_t at = ps->pos, n = word_len(ps);
    if (n == 0) return perr(ps, at, "expected a dtype (bool, i32, f32, f16, void)");
    int t = uopc_dtype_parse(ps->s + at, n);
    if (t < 0) return perr(ps, at, "unknown dtype '%.*s'", (int)n, ps->s + at);
    m |= (uint8_t)(1u << t);
    ps->pos += n;
    if (peek(ps) != '|') break;
    ps->pos++;
  }
  *out = m;
  return 0;
}

/* An optional ':' dtypes directly after an item. */
static int opt_dtypes(parser *ps, uopi_pnode *n) {
  if (peek(ps) != ':') return 0;
  ps->pos++;
  return parse_dtypes(ps, &n->dts);
}

/* ops := op ('|' op)* */
static int parse_ops(parser *ps, uint64_t *out) {
  uint64_t m = 0;
  for (;;) {
    size_t at = ps->pos;
    if (peek(ps) == '*') {
      m |= UOPI_ALL_OPS;
      ps->pos++;
    } else {
      size_t n = word_len(ps);
      if (n == 0) return perr(ps, at, "expected an op name, '*' or 'alu'");
      if (n == 3 && memcmp(ps->s + at, "alu", 3) == 0) {
        for (int op = 0; op < UOPC_OP_COUNT; op++)
          if (uopc_op_flags((uopc_op)op) & UOPC_OPF_ALU) m |= UINT64_C(1) << op;
      } else {
        int op = uopc_op_parse(ps->s + at, n);
        if (op < 0) {
          char low[32];
          size_t k = 0;
          for (; k < n && k < sizeof low - 1; k++) low[k] = (char)tolower((unsigned char)ps->s[at + k]);
          low[k] = 0;
          if (k == n && uopc_op_parse(low, k) >= 0)
            return perr(ps, at, "unknown op '%.*s' (op names are lower case: '%s')", (int)n, ps->s + at, low);
          return perr(ps, at, "unknown op '%.*s'", (int)n, ps->s + at);
        }
        m |= UINT64_C(1) << op;
      }
      ps->pos += n;
    }
    if (peek(ps) != '|') break;
    ps->pos++;
  }
  *out = m;
  return 0;
}

/* literal := -?digits[.digits][e[+-]digits] | -?inf | True | False */
static int parse_literal(parser *ps, double *out) {
  size_t at = ps->pos, i = at;
  const char *s = ps->s;
  int neg = 0;
  if (i < ps->len && s[i] == '-') neg = 1, i++;
  if (ps->len - i >= 3 && memcmp(s + i, "inf", 3) == 0 && (i + 3 == ps->len || !is_word((unsigned char)s[i + 3]))) {
    *out = neg ? -INFINITY : INFINITY;
    ps->pos = i + 3;
  } else {
    size_t d0 = i;
    while (i < ps->len && isdigit((unsigned char)s[i])) i++;
    if (i == d0) return perr(ps, at, "expected a pattern");
    if (i < ps->len && s[i] == '.') {
      i++;
      while (i < ps->len && isdigit((unsigned char)s[i])) i++;
    }
    if (i < ps->len && (s[i] == 'e' || s[i] == 'E')) {
      size_t j = i + 1;
      if (j < ps->len && (s[j] == '+' || s[j] == '-')) j++;
      size_t e0 = j;
      while (j < ps->len && isdigit((unsigned char)s[j])) j++;
      if (j == e0) return perr(ps, at, "bad number '%.*s'", (int)(j - at), s + at);
      i = j;
    }
    char buf[64];
    if (i - at >= sizeof buf) return perr(ps, at, "number too long");
    memcpy(buf, s + at, i - at);
    buf[i - at] = 0;
    char *end;
    double v = strtod(buf, &end);
    if (*end) return perr(ps, at, "bad number '%s'", buf);
    *out = v;
    ps->pos = i;
  }
  if (!is_delim(peek(ps))) {
    size_t n = ps->pos - at;
    while (!is_delim(peek(ps))) ps->pos++, n++;
    return perr(ps, at, "bad literal '%.*s'", (int)n, s + at);
  }
  return 0;
}

static int parse_pat(parser *ps);

/* '(' or '[' has been seen at ps->pos. */
static int parse_node(parser *ps) {
  size_t open_at = ps->pos;
  char close = ps->s[ps->pos] == '(' ? ')' : ']';
  ps->pos++;
  skip_ws(ps);
  int id = new_node(ps);
  if (id < 0) return -1;
  uopi_pnode *n = &ps->p->nodes[id];
  if (parse_ops(ps, &n->ops) < 0 || opt_dtypes(ps, n) < 0) return -1;
  if (!is_delim(peek(ps)) || peek(ps) == ':')
    return perr(ps, ps->pos, "unexpected '%c' after the op", peek(ps));
  int any_len = 0, nsrc = 0;
  for (;;) {
    skip_ws(ps);
    int ch = peek(ps);
    if (ch == 0)
      return perr(ps, ps->pos, "missing '%c' to close the '%c' at column %zu", close,
                  ps->s[open_at], open_at + 1);
    if (ch == ')' || ch == ']') {
      if (ch != close) return perr(ps, ps->pos, "expected '%c', found '%c'", close, ch);
      ps->pos++;
      break;
    }
    if (any_len) return perr(ps, ps->pos, "'...' must be the last item");
    if (ps->len - ps->pos >= 3 && memcmp(ps->s + ps->pos, "...", 3) == 0) {
      any_len = 1;
      ps->pos += 3;
      continue;
    }
    if (nsrc == UOPI_PAT_MAX_SRC)
      return perr(ps, ps->pos, "too many sources in one pattern (at most %d)", UOPI_PAT_MAX_SRC);
    size_t kid_at = ps->pos;
    int k = parse_pat(ps);
    if (k < 0) return -1;
    if (close == ']' && nsrc == UOPI_PAT_MAX_PERM)
      return perr(ps, kid_at, "[...] matches at most %d sources in any order", UOPI_PAT_MAX_PERM);
    n = &ps->p->nodes[id];
    n->kid[nsrc++] = (uint16_t)k;
  }
  n = &ps->p->nodes[id];
  n->nsrc = (uint8_t)nsrc;
  if (nsrc > 0 || any_len) n->flags |= UOPI_P_SRC;
  if (any_len) n->flags |= UOPI_P_ANYLEN;
  if (close == ']' && nsrc > 1) n->flags |= UOPI_P_PERM;
  return id;
}

static int parse_pat(parser *ps) {
  int id;
  size_t at = ps->pos;
  int ch = peek(ps);
  if (ch == '(' || ch == '[') {
    id = parse_node(ps);
  } else if (ch == '$' || ch == '#') {
    ps->pos++;
    size_t n = word_len(ps);
    if (n == 0) return perr(ps, ps->pos, "expected a name after '%c'", ch);
    int v = var_index(ps, ps->pos, n);
    if (v < 0) return -1;
    ps->pos += n;
    size_t save = ps->pos;
    skip_ws(ps);
    if (ch == '$' && peek(ps) == '=') {
      ps->pos++;
      skip_ws(ps);
      size_t sub_at = ps->pos;
      if (peek(ps) == 0) return perr(ps, sub_at, "expected a pattern after '='");
      id = parse_pat(ps);
      if (id < 0) return -1;
      if (ps->p->nodes[id].var >= 0)
        return perr(ps, sub_at, "'$%s=' names a pattern that already has a name", ps->p->var[v]);
      ps->p->nodes[id].var = (int8_t)v;
    } else {
      ps->pos = save;
      id = new_node(ps);
      if (id < 0) return -1;
      uopi_pnode *nd = &ps->p->nodes[id];
      nd->var = (int8_t)v;
      if (ch == '#') nd->ops = UINT64_C(1) << UOPC_OP_CONST;
      if (opt_dtypes(ps, nd) < 0) return -1;
    }
  } else if (ch == '_' && !is_word((unsigned char)(ps->pos + 1 < ps->len ? ps->s[ps->pos + 1] : 0))) {
    ps->pos++;
    id = new_node(ps);
    if (id < 0) return -1;
    if (opt_dtypes(ps, &ps->p->nodes[id]) < 0) return -1;
  } else {
    double v = 0;
    size_t n = word_len(ps);
    if (n == 4 && memcmp(ps->s + at, "True", 4) == 0) {
      v = 1, ps->pos += 4;
    } else if (n == 5 && memcmp(ps->s + at, "False", 5) == 0) {
      v = 0, ps->pos += 5;
    } else if (isdigit(ch) || ch == '-' || (n == 3 && memcmp(ps->s + at, "inf", 3) == 0)) {
      if (parse_literal(ps, &v) < 0) return -1;
    } else if (n == 3 && memcmp(ps->s + at, "nan", 3) == 0) {
      return perr(ps, at, "no NaN literal: a NaN constant equals no number");
    } else if (n > 0 && !isdigit(ch)) {
      return perr(ps, at, "expected a pattern, found '%.*s' (an op goes in parentheses: '(%.*s ...)')",
                  (int)n, ps->s + at, (int)n, ps->s + at);
    } else if (ch == 0) {
      return perr(ps, at, "expected a pattern, found the end of the text");
    } else {
      return perr(ps, at, "expected a pattern, found '%c'", ch);
    }
    id = new_node(ps);
    if (id < 0) return -1;
    uopi_pnode *nd = &ps->p->nodes[id];
    nd->ops = UINT64_C(1) << UOPC_OP_CONST;
    nd->flags |= UOPI_P_LIT;
    nd->lit = v;
    if (opt_dtypes(ps, nd) < 0) return -1;
  }
  if (id >= 0 && ps->pos < ps->len && !is_delim(peek(ps)))
    return perr(ps, ps->pos, "unexpected '%c'", peek(ps));
  return id;
}

/* ---- public ------------------------------------------------------------- */

static uint64_t root_need(const uopc_pattern *p) {
  const uopi_pnode *r = &p->nodes[0];
  uint64_t need = 0;
  if (!(r->flags & UOPI_P_SRC)) return 0;
  for (int i = 0; i < r->nsrc; i++) {
    uint64_t ops = p->nodes[r->kid[i]].ops;
    if (ops && (ops & (ops - 1)) == 0) need |= ops;  /* exactly one op */
  }
  return need;
}

uopc_pattern *uopc_pattern_parse(const char *src, uopc_error *e) {
  if (!src) {
    if (e) {
      memset(e, 0, sizeof *e);
      e->code = UOPC_ERR_ARG;
      snprintf(e->msg, sizeof e->msg, "pattern text is NULL");
    }
    return NULL;
  }
  size_t len = strlen(src);
  parser ps = {.s = src, .len = len, .e = e};
  if (len > UOPI_PAT_MAX_LEN) {
    perr(&ps, 0, "pattern longer than %d characters", UOPI_PAT_MAX_LEN);
    return NULL;
  }
  uopc_pattern *p = calloc(1, sizeof *p);
  if (!p) goto oom;
  ps.p = p;
  /* every name uses at least two characters of text ('$' or '#', then
     the name), so names (each NUL-terminated) fit in len bytes */
  p->nodes = malloc(UOPI_PAT_MAX_NODES * sizeof *p->nodes);
  p->names = malloc(len + 1);
  p->text = malloc(len + 1);
  if (!p->nodes || !p->names || !p->text) goto oom;
  memcpy(p->text, src, len + 1);
  skip_ws(&ps);
  if (ps.pos == len) {
    perr(&ps, ps.pos, "empty pattern");
    goto fail;
  }
  if (parse_pat(&ps) < 0) goto fail;
  skip_ws(&ps);
  if (ps.pos != len) {
    perr(&ps, ps.pos, "unexpected '%c' after the pattern", src[ps.pos]);
    goto fail;
  }
  uopi_pnode *shrunk = realloc(p->nodes, p->nnodes * sizeof *p->nodes);
  if (shrunk) p->nodes = shrunk;
  p->need = root_need(p);
  if (!uopi_pattern_compile(p)) goto oom;
  return p;
oom:
  if (e) {
    memset(e, 0, sizeof *e);
    e->code = UOPC_ERR_NOMEM;
    snprintf(e->msg, sizeof e->msg, "out of memory");
  }
fail:
  uopc_pattern_free(p);
  return NULL;
}

uopc_pattern *uopi_pattern_clone(const uopc_pattern *p) {
  size_t len = strlen(p->text);
  uopc_pattern *q = calloc(1, sizeof *q);
  if (!q) return NULL;
  *q = *p;
  q->nodes = malloc(p->nnodes * sizeof *q->nodes);
  q->names = malloc(len + 1);
  q->text = malloc(len + 1);
  q->lin = p->lin ? malloc((p->nlin + 1) * sizeof *q->lin) : NULL;
  q->steps = p->lin ? malloc((size_t)p->lin[p->nlin] * sizeof *q->steps) : NULL;
  if (!q->nodes || !q->names || !q->text || (p->lin && (!q->lin || !q->steps))) {
    uopc_pattern_free(q);
    return NULL;
  }
  memcpy(q->nodes, p->nodes, p->nnodes * sizeof *q->nodes);
  memcpy(q->names, p->names, len + 1);
  memcpy(q->text, p->text, len + 1);
  for (uint32_t i = 0; i < p->nvars; i++) q->var[i] = q->names + (p->var[i] - p->names);
  if (p->lin) {
    memcpy(q->lin, p->lin, (p->nlin + 1) * sizeof *q->lin);
    memcpy(q->steps, p->steps, (size_t)p->lin[p->nlin] * sizeof *q->steps);
  }
  return q;
}

void uopc_pattern_free(uopc_pattern *p) {
  if (!p) return;
  free(p->nodes);
  free(p->lin);
  free(p->steps);
  free(p->names);
  free(p->text);
  free(p);
}

uint32_t uopc_pattern_nvars(const uopc_pattern *p) { return p ? p->nvars : 0; }

const char *uopc_pattern_var(const uopc_pattern *p, uint32_t i) {
  return p && i < p->nvars ? p->var[i] : NULL;
}

uint32_t uopc_pattern_nparts(const uopc_pattern *p) { return p ? p->nnodes : 0; }

uopc_status uopc_pattern_part_get(const uopc_pattern *p, uint32_t i, uopc_pattern_part *out) {
  if (!p || !out || i >= p->nnodes) return UOPC_ERR_ARG;
  const uopi_pnode *n = &p->nodes[i];
  memset(out, 0, sizeof *out);
  out->ops = n->ops;
  out->dtypes = n->dts;
  out->var = n->var;
  out->has_lit = (n->flags & UOPI_P_LIT) != 0;
  out->lit = n->lit;
  out->has_src = (n->flags & UOPI_P_SRC) != 0;
  out->any_order = (n->flags & UOPI_P_PERM) != 0;
  out->any_len = (n->flags & UOPI_P_ANYLEN) != 0;
  out->nsrc = n->nsrc;
  for (uint32_t k = 0; k < n->nsrc && k < 8; k++) out->src[k] = n->kid[k];
  return UOPC_OK;
}
