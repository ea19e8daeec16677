/* lib/text/lex.c - the tokens of one .uir line.
 *
 * A line is lexed on demand, one token at a time; the lexer never looks
 * past the end of its line.  Integer literals are range checked here (i32,
 * in every context); float literals are converted here (num_parse.c).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "text/text.h"

static int is_blank(int ch) { return ch == ' ' || ch == '\t' || ch == '\r'; }

const char *uopi_quote(const char *s, size_t len, char *buf) {
  size_t k = 0;
  for (size_t i = 0; i < len; i++) {
    if (i == 40) {
      memcpy(buf + k, "...", 3);
      k += 3;
      break;
    }
    unsigned char ch = (unsigned char)s[i];
    if (ch >= 0x20 && ch < 0x7f) buf[k++] = (char)ch;
    else k += (size_t)snprintf(buf + k, 5, "\\x%02x", ch);
  }
  buf[k] = 0;
  return buf;
}

static void bad(uopi_tok *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(uopi_tok *t, const char *fmt, ...) {
  t->kind = UOPI_TK_BAD;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t->msg, sizeof t->msg, fmt, ap);
  va_end(ap);
}

/* The token's text for a message. */
static const char *text(const uopi_tok *t, char *q) { return uopi_quote(t->s, t->len, q); }

static void skip_blanks(uopi_lexer *lx) {
  while (lx->pos < lx->len && is_blank((unsigned char)lx->line[lx->pos])) lx->pos++;
}

/* A number starting at lx->pos (a digit, or '-' then a digit). */
static void lex_number(uopi_lexer *lx, uopi_tok *t) {
  char qb[200];
  const char *s = lx->line;
  size_t n = lx->len, p = lx->pos;
  int is_float = 0;
  if (s[p] == '-') p++;
  while (p < n && uopi_is_digit((unsigned char)s[p])) p++;
  if (p < n && s[p] == '.') {
    is_float = 1;
    p++;
    while (p < n && uopi_is_digit((unsigned char)s[p])) p++;
  }
  int exp_ok = 1;
  if (p < n && (s[p] == 'e' || s[p] == 'E')) {
    size_t q = p + 1;
    if (q < n && (s[q] == '+' || s[q] == '-')) q++;
    if (q < n && uopi_is_digit((unsigned char)s[q])) {
      is_float = 1;
      p = q;
      while (p < n && uopi_is_digit((unsigned char)s[p])) p++;
    } else {
      exp_ok = 0;
    }
  }
  if (!exp_ok || (p < n && (uopi_is_word((unsigned char)s[p]) || s[p] == '.'))) {
    while (p < n && (uopi_is_word((unsigned char)s[p]) || s[p] == '.' || s[p] == '+' || s[p] == '-')) p++;
    t->len = p - lx->pos;
    lx->pos = p;
    bad(t, "malformed number '%s'", text(t, qb));
    return;
  }
  t->len = p - lx->pos;
  lx->pos = p;
  if (!is_float) {
    int neg = t->s[0] == '-';
    int64_t v = 0;
    for (size_t i = (size_t)neg; i < t->len; i++) {
      v = v * 10 + (t->s[i] - '0');
      if (v > (int64_t)INT32_MAX + 1) break;
    }
    if (neg) v = -v;
    if (v < INT32_MIN || v > INT32_MAX) {
      bad(t, "integer literal %s is out of the i32 range (write a float as 1.0)", text(t, qb));
      return;
    }
    t->kind = UOPI_TK_INT;
    t->i = v;
    return;
  }
  if (!uopi_decimal_to_double(t->s, t->len, &t->f)) {
    bad(t, "float literal %s is too large for a double (write inf)", text(t, qb));
    return;
  }
  t->kind = UOPI_TK_FLOAT;
}

/* A quoted string; lx->pos is at the opening quote. */
static void lex_string(uopi_lexer *lx, uopi_tok *t) {
  char qb[200];
  size_t p = lx->pos + 1;
  while (p < lx->len && lx->line[p] != '"') p += lx->line[p] == '\\' ? 2 : 1;
  if (p >= lx->len) {
    t->len = lx->len - lx->pos;
    lx->pos = lx->len;
    bad(t, "unterminated string %s", text(t, qb));
    return;
  }
  t->kind = UOPI_TK_STR;
  t->s = lx->line + lx->pos + 1;
  t->len = p - lx->pos - 1;
  lx->pos = p + 1;
}

static int word_is(const char *s, size_t n, const char *w) { return strlen(w) == n && memcmp(s, w, n) == 0; }

/* A fresh token at the cursor (msg is written only for BAD tokens). */
static void start(uopi_lexer *lx, uopi_tok *t) {
  skip_blanks(lx);
  t->kind = UOPI_TK_BAD;
  t->i = 0;
  t->f = 0;
  t->msg[0] = 0;
  t->col = lx->pos;
  t->s = lx->line + lx->pos;
  t->len = 1;
}

void uopi_lex(uopi_lexer *lx, uopi_tok *t) {
  char qb[200];
  start(lx, t);
  if (lx->pos >= lx->len || lx->line[lx->pos] == '#') {
    t->kind = UOPI_TK_EOL;
    t->len = 0;
    return;
  }
  unsigned char ch = (unsigned char)lx->line[lx->pos];
  const char *s = lx->line;
  switch (ch) {
  case '=': t->kind = UOPI_TK_EQ; lx->pos++; return;
  case ',': t->kind = UOPI_TK_COMMA; lx->pos++; return;
  case ':': t->kind = UOPI_TK_COLON; lx->pos++; return;
  case '(': t->kind = UOPI_TK_LP; lx->pos++; return;
  case ')': t->kind = UOPI_TK_RP; lx->pos++; return;
  case '"': lex_string(lx, t); return;
  case '%': {
    size_t p = lx->pos + 1;
    while (p < lx->len && uopi_is_word((unsigned char)s[p])) p++;
    if (p == lx->pos + 1) {
      lx->pos++;
      bad(t, "expected a name after '%%'");
      return;
    }
    t->kind = UOPI_TK_REF;
    t->s = s + lx->pos + 1;
    t->len = p - lx->pos - 1;
    lx->pos = p;
    return;
  }
  default: break;
  }
  if (uopi_is_digit(ch) || (ch == '-' && lx->pos + 1 < lx->len && uopi_is_digit((unsigned char)s[lx->pos + 1]))) {
    lex_number(lx, t);
    return;
  }
  size_t p = lx->pos + (ch == '-');
  if (p < lx->len && uopi_is_alpha((unsigned char)s[p])) {
    size_t q = p;
    while (q < lx->len && uopi_is_word((unsigned char)s[q])) q++;
    t->len = q - lx->pos;
    lx->pos = q;
    if (word_is(s + p, q - p, "inf")) {
      t->kind = UOPI_TK_FLOAT;
      t->f = ch == '-' ? -INFINITY : INFINITY;
    } else if (ch == '-') {
      bad(t, "unexpected '%s'", text(t, qb));
    } else if (word_is(t->s, t->len, "nan")) {
      t->kind = UOPI_TK_FLOAT;
      t->f = NAN;
    } else {
      t->kind = UOPI_TK_WORD;
    }
    return;
  }
  lx->pos++;
  if (ch == 0) bad(t, "NUL byte in input");
  else bad(t, "unexpected character '%s'", text(t, qb));
}

void uopi_lex_name(uopi_lexer *lx, uopi_tok *t) {
  start(lx, t);
  if (lx->pos < lx->len && lx->line[lx->pos] == '"') {
    lex_string(lx, t);
    return;
  }
  size_t p = lx->pos;
  while (p < lx->len && uopi_is_word((unsigned char)lx->line[p])) p++;
  if (p == lx->pos) {
    t->len = lx->pos < lx->len ? 1 : 0;
    bad(t, "expected a name ([A-Za-z0-9_]+ or a quoted string)");
    return;
  }
  t->kind = UOPI_TK_WORD;
  t->len = p - lx->pos;
  lx->pos = p;
}
