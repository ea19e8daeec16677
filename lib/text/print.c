/* lib/text/print.c - a graph as .uir text, the inverse of parse.c:
 * parse(print(g)) is the very node g, in the same context.
 *
 * Lines are numbered %0, %1, ... in uopc_toposort order.  Every node but a
 * CONST gets a line.  A CONST is written inline, as a literal, wherever the
 * parser's literal typing gives its dtype back (decide() below is that rule
 * run backwards); where it cannot (an f16 constant among constants only, a
 * constant root, an f32 constant in an i32 STACK...) it gets its own line
 * `%k = const LIT : dtype=D`, placed where toposort puts it, and is referred
 * to by name.  Float literals are the shortest decimal that reads back to
 * the stored double (uopc_fmt_double), so the constant is the same node.
 *
 * The broadcast sugar is never produced: an ALU node's operands all have
 * one shape, and the reshape/expand of a broadcast constant are ordinary
 * lines.  Three passes over the toposort (which constants need a line;
 * numbering; writing), each a loop: no recursion.  uopc_uir_write hands
 * the third pass's text to a FILE in 64 KiB pieces as it goes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "text/text.h"
#include "uopc/uir.h"

#define NEEDS_LINE ((void *)(uintptr_t)UINTPTR_MAX)

/* A float constant's spelling, kept for the next line that uses it. */
typedef struct spelling {
  uint32_t id1; /* the constant's id + 1; 0: empty */
  uint8_t len;
  char s[32];
} spelling;

typedef struct printer {
  uopc_ctx *c;
  uopi_table *lines; /* node id -> line number + 1, or NEEDS_LINE */
  uint8_t *inl;      /* per source of the node at hand: written inline */
  uint32_t inl_cap;
  uopi_sbuf out;
  /* recent float constants by id % 16: a graph uses a few constants on
     many lines, and the shortest round-trip spelling costs up to 17
     printf/strtod pairs */
  spelling fsp[16];
} printer;

static int is_const(const uopc_node *u) { return u->op == UOPC_OP_CONST; }

/* Sources [from, to) of u are one typing group (the parser types their
   literals by the first node among them). */
static void decide_group(const uopc_node *u, uint32_t from, uint32_t to, uint8_t *inl) {
  uint32_t first = to;
  for (uint32_t j = from; j < to && first == to; j++)
    if (!is_const(u->src[j])) first = j;
  if (first == to) {
    /* constants only: each reads back at its spelling, unless one of them
       has a dtype no spelling gives (f16); then the first constant becomes
       a line, a node the others take their dtype from */
    int all_spellable = 1;
    for (uint32_t j = from; j < to; j++)
      if (!uopi_dtype_spellable((uopc_dtype)u->src[j]->dtype)) all_spellable = 0;
    if (all_spellable) {
      for (uint32_t j = from; j < to; j++) inl[j] = 1;
      return;
    }
    first = from;
  }
  uopc_dtype t = (uopc_dtype)u->src[first]->dtype;
  for (uint32_t j = from; j < to; j++)
    if (j != first && is_const(u->src[j]))
      inl[j] = t == UOPC_DT_VOID ? uopi_dtype_spellable((uopc_dtype)u->src[j]->dtype) : u->src[j]->dtype == t;
}

/* Sources [from, to) of u, each read at dtype t (VOID: its spelling). */
static void decide_each(const uopc_node *u, uint32_t from, uint32_t to, uopc_dtype t, uint8_t *inl) {
  for (uint32_t j = from; j < to; j++) {
    uopc_dtype d = (uopc_dtype)u->src[j]->dtype;
    inl[j] = is_const(u->src[j]) && (t == UOPC_DT_VOID ? uopi_dtype_spellable(d) : d == t);
  }
}

/* Which sources of u are written as literals: the parser's literal typing
   (parse.c, build()) run backwards. */
static int decide(printer *pr, const uopc_node *u) {
  uint32_t n = u->nsrc;
  if (!uopi_grow(pr->c, (void **)&pr->inl, &pr->inl_cap, n + 1, 1)) return 0;
  memset(pr->inl, 0, n);
  unsigned fl = uopc_op_flags((uopc_op)u->op);
  if (u->op == UOPC_OP_WHERE) {
    decide_each(u, 0, 1, UOPC_DT_BOOL, pr->inl);
    decide_group(u, 1, n, pr->inl);
  } else if (u->op == UOPC_OP_STACK || (fl & UOPC_OPF_ALU)) {
    decide_group(u, 0, n, pr->inl);
  } else if (u->op == UOPC_OP_RANGE) {
    decide_each(u, 0, n, UOPC_DT_I32, pr->inl);
  } else if (u->op == UOPC_OP_INDEX) {
    decide_each(u, 0, 1, UOPC_DT_VOID, pr->inl);
    decide_each(u, 1, n, UOPC_DT_I32, pr->inl);
  } else {
    decide_each(u, 0, n, UOPC_DT_VOID, pr->inl);
  }
  return 1;
}

/* ---- writing ------------------------------------------------------------ */

static void put_i64(uopi_sbuf *b, int64_t v) {
  char tmp[24];
  int k = (int)sizeof tmp;
  uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    tmp[--k] = (char)('0' + m % 10);
    m /= 10;
  } while (m);
  if (v < 0) tmp[--k] = '-';
  uopi_sb_putn(b, tmp + k, sizeof tmp - (size_t)k);
}

static void put_literal(printer *pr, const uopc_node *k) {
  uopi_sbuf *b = &pr->out;
  switch (k->dtype) {
  case UOPC_DT_BOOL: uopi_sb_puts(b, k->arg.i ? "True" : "False"); break;
  case UOPC_DT_I32: put_i64(b, k->arg.i); break;
  default: {
    spelling *e = &pr->fsp[k->id % 16];
    if (e->id1 != k->id + 1) {
      e->len = (uint8_t)uopc_fmt_double(k->arg.f, e->s);
      e->id1 = k->id + 1;
    }
    uopi_sb_putn(b, e->s, e->len);
    break;
  }
  }
}

static void put_ref(printer *pr, const uopc_node *s) {
  uopi_sb_putc(&pr->out, '%');
  put_i64(&pr->out, (int64_t)(uintptr_t)uopi_table_get(pr->lines, s->id) - 1);
}

/* Python's tuple spelling; pairs: ((b0, e0), (b1, e1)). */
static void put_tuple(uopi_sbuf *b, const int32_t *v, uint32_t n, int pairs) {
  uopi_sb_putc(b, '(');
  for (uint32_t i = 0; i < n; i++) {
    if (i) uopi_sb_puts(b, ", ");
    if (pairs) {
      uopi_sb_putc(b, '(');
      put_i64(b, v[2 * i]);
      uopi_sb_puts(b, ", ");
      put_i64(b, v[2 * i + 1]);
      uopi_sb_putc(b, ')');
    } else {
      put_i64(b, v[i]);
    }
  }
  uopi_sb_puts(b, n == 1 ? ",)" : ")");
}

/* A CALL name: bare when it is [A-Za-z0-9_]+, else quoted with \\ \" \xHH. */
static void put_name(uopi_sbuf *b, const char *s) {
  size_t n = strlen(s), i = 0;
  while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
                   s[i] == '_'))
    i++;
  if (i == n && n > 0) {
    uopi_sb_putn(b, s, n);
    return;
  }
  static const char hex[] = "0123456789abcdef";
  uopi_sb_putc(b, '"');
  for (i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '"' || ch == '\\') {
      uopi_sb_putc(b, '\\');
      uopi_sb_putc(b, (char)ch);
    } else if (ch >= 0x20 && ch < 0x7f) {
      uopi_sb_putc(b, (char)ch);
    } else {
      char e[4] = {'\\', 'x', hex[ch >> 4], hex[ch & 15]};
      uopi_sb_putn(b, e, 4);
    }
  }
  uopi_sb_putc(b, '"');
}

static void put_dtype(uopi_sbuf *b, const char *key, uopc_dtype t) {
  uopi_sb_puts(b, key);
  uopi_sb_puts(b, uopc_dtype_name(t));
}

/* The line of u (its number is already assigned). */
static int put_line(printer *pr, const uopc_node *u) {
  uopi_sbuf *b = &pr->out;
  put_ref(pr, u);
  uopi_sb_puts(b, " = ");
  uopi_sb_puts(b, uopc_op_spelling((uopc_op)u->op));
  if (u->op == UOPC_OP_CONST) {
    uopi_sb_putc(b, ' ');
    put_literal(pr, u);
    put_dtype(b, " : dtype=", (uopc_dtype)u->dtype);
    uopi_sb_putc(b, '\n');
    return 1;
  }
  if (!decide(pr, u)) return 0;
  for (uint32_t j = 0; j < u->nsrc; j++) {
    uopi_sb_puts(b, j ? ", " : " ");
    if (pr->inl[j]) put_literal(pr, u->src[j]);
    else put_ref(pr, u->src[j]);
  }
  switch (u->op) {
  case UOPC_OP_PARAM:
  case UOPC_OP_BUFFER:
    uopi_sb_puts(b, " : slot=");
    put_i64(b, u->arg.i);
    put_dtype(b, " dtype=", (uopc_dtype)u->dtype);
    if (u->ndim) {
      uopi_sb_puts(b, " shape=");
      put_tuple(b, u->shape, u->ndim, 0);
    }
    break;
  case UOPC_OP_RANGE:
    uopi_sb_puts(b, " : idx=");
    put_i64(b, u->arg.i);
    break;
  case UOPC_OP_CAST: put_dtype(b, " : dtype=", (uopc_dtype)u->dtype); break;
  case UOPC_OP_CALL:
    if (u->arg.name) {
      uopi_sb_puts(b, " : name=");
      put_name(b, u->arg.name);
    }
    break;
  case UOPC_OP_REDUCE:
    uopi_sb_puts(b, " : op=");
    uopi_sb_puts(b, uopc_op_spelling((uopc_op)u->arg.rop));
    uopi_sb_puts(b, " pop=");
    put_i64(b, u->arg.i);
    break;
  case UOPC_OP_RESHAPE:
  case UOPC_OP_EXPAND:
  case UOPC_OP_PERMUTE:
  case UOPC_OP_SHRINK:
    uopi_sb_puts(b, ", ");
    put_tuple(b, u->arg.v, u->arg.n, u->op == UOPC_OP_SHRINK);
    break;
  default: break;
  }
  uopi_sb_putc(b, '\n');
  return 1;
}

/* uopc_uir_write hands the text to its FILE in pieces of about this size,
   so the whole text is never in memory. */
#define WRITE_CHUNK (64u * 1024u)

/* Writes the text of pr->out to f and empties it; 0 (error recorded) when
   the write fails. */
static int flush_to(printer *pr, FILE *f) {
  uopi_sbuf *b = &pr->out;
  if (!b->ok) return 0;
  if (b->n && fwrite(b->s, 1, b->n, f) != b->n) {
    char eb[128];
    uopc_fail(pr->c, UOPC_ERR_IO, "uir_write: cannot write: %s", strerror_r(errno, eb, sizeof eb));
    return 0;
  }
  b->n = 0;
  return 1;
}

/* The three passes; the text goes to pr->out, and with f non-NULL to f as
   it is made.  1 on success (error recorded otherwise). */
static int print_graph(printer *pr, uopc_node *root, FILE *f) {
  uopc_ctx *c = pr->c;
  uint32_t n = 0;
  uopc_node **order = uopc_toposort(c, root, &n);
  if (!order) return 0;
  int ok = (pr->lines = uopi_table_acquire(c)) != NULL;
  /* 1: the constants that cannot be inline somewhere, and a constant root;
     and room for the widest node's decisions, so that pass 3 allocates
     nothing but (for a line longer than WRITE_CHUNK) the text buffer */
  uint32_t widest = 0;
  for (uint32_t i = 0; ok && i < n; i++) {
    const uopc_node *u = order[i];
    if (u->nsrc > widest) widest = u->nsrc;
    if (is_const(u) || !(u->srcops & (UINT64_C(1) << UOPC_OP_CONST))) continue;
    if (!(ok = decide(pr, u))) break;
    for (uint32_t j = 0; ok && j < u->nsrc; j++)
      if (is_const(u->src[j]) && !pr->inl[j]) ok = uopi_table_set(c, pr->lines, u->src[j]->id, NEEDS_LINE);
  }
  if (ok && !uopi_grow(c, (void **)&pr->inl, &pr->inl_cap, widest + 1, 1)) ok = 0;
  if (ok && is_const(root)) ok = uopi_table_set(c, pr->lines, root->id, NEEDS_LINE);
  /* 2: numbering, in toposort order */
  uint32_t k = 0;
  for (uint32_t i = 0; ok && i < n; i++) {
    const uopc_node *u = order[i];
    if (is_const(u) && uopi_table_get(pr->lines, u->id) != NEEDS_LINE) continue;
    ok = uopi_table_set(c, pr->lines, u->id, (void *)(uintptr_t)(++k));
  }
  /* 3: the lines */
  for (uint32_t i = 0; ok && i < n; i++) {
    const uopc_node *u = order[i];
    if (is_const(u) && !uopi_table_get(pr->lines, u->id)) continue;
    ok = put_line(pr, u) && pr->out.ok;
    if (ok && f && pr->out.n >= WRITE_CHUNK) ok = flush_to(pr, f);
  }
  if (ok && f) ok = flush_to(pr, f);
  uopc_mem_free(c, order, (size_t)n * sizeof *order);
  return ok;
}

static void printer_free(printer *pr) {
  uopi_sb_free(&pr->out);
  uopc_mem_free(pr->c, pr->inl, pr->inl_cap);
  if (pr->lines) uopi_table_release(pr->c, pr->lines);
}

char *uopc_uir_print(uopc_ctx *c, uopc_node *root) {
  if (!uopi_check_node(c, root, "uir_print")) return NULL;
  printer pr = {.c = c};
  uopi_sb_init(&pr.out, c);
  char *res = print_graph(&pr, root, NULL) ? uopi_sb_finish(&pr.out) : NULL;
  printer_free(&pr);
  return res;
}

int uopc_uir_write(uopc_ctx *c, uopc_node *root, FILE *f) {
  if (!uopi_check_node(c, root, "uir_write")) return -1;
  if (!f) return uopc_fail(c, UOPC_ERR_ARG, "uir_write: NULL file"), -1;
  printer pr = {.c = c};
  uopi_sb_init(&pr.out, c);
  int ok = print_graph(&pr, root, f);
  printer_free(&pr);
  return ok ? 0 : -1;
}
