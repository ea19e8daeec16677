/* lib/text/parse.c - .uir text to a graph (docs/uir.md is the contract).
 *
 * One line at a time, one token at a time, no recursion: a line is
 *
 *     %NAME = OPCODE OPERAND, ... [: KEY=VALUE ...]    # comment
 *
 * Operands are %NAMEs defined above, literals (i32, f32, bool) or, as the
 * second operand of a movement op, a tuple.  Each line becomes one node
 * (plus constants, plus the reshape/expand of the broadcast sugar), built
 * with uopc_make so that every check of the core applies; a refused node
 * becomes an error at the opcode with the core's message.  Names live in a
 * hash map, so a million-line file parses in linear time.
 *
 * Literal typing: a literal operand of an ALU op or STACK takes the dtype of
 * its first sibling that is a node (WHERE: among the value operands; its
 * condition keeps its spelling); elsewhere a literal keeps the dtype its
 * spelling gives (3: i32, 3.0: f32, True: bool).
 *
 * Errors carry FILE:LINE:COL (1-based, bytes) of the offending token.  The
 * first error ends the parse.  The context's own error slot is left as the
 * caller had it.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "text/text.h"
#include "uopc/uir.h"

typedef enum { OPD_NODE, OPD_LIT, OPD_TUPLE } opd_kind;
typedef enum { LIT_INT, LIT_FLOAT, LIT_BOOL } lit_kind;

/* One operand as written. */
typedef struct opd {
  opd_kind kind;
  lit_kind lit;
  int64_t i;
  double f;
  uopc_node *node;
  size_t col;
  uint32_t tup_off, tup_n; /* entries in parser.ints; tup_n counts pairs for SHRINK */
} opd;

enum { K_DTYPE, K_SLOT, K_SHAPE, K_IDX, K_OP, K_POP, K_NAME, NKEYS };
static const char *const key_names[NKEYS] = {"dtype", "slot", "shape", "idx", "op", "pop", "name"};
#define KB(k) (1u << (k))

typedef struct attrs {
  unsigned have;
  int dtype, rop;
  int64_t slot, idx, pop;
  uint32_t shape_off, shape_n;
  const char *name;        /* decoded, NUL-terminated (parser.namebuf), or NULL */
} attrs;

typedef struct parser {
  uopc_ctx *c;
  const char *file;
  uopc_error *e;
  int line;
  int failed;
  uopi_lexer lx;
  uopi_tok tok;
  uopi_names names;
  opd *ops;
  uint32_t ops_cap;
  int32_t *ints;
  uint32_t ints_n, ints_cap;
  uopc_node **srcs;
  uint32_t srcs_cap;
  char *namebuf;
  uint32_t namebuf_cap;
} parser;

/* ---- errors ------------------------------------------------------------- */

static void *fail_at(parser *p, size_t col, uopc_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void *fail_at(parser *p, size_t col, uopc_status code, const char *fmt, ...) {
  if (p->failed) return NULL;
  p->failed = 1;
  p->e->code = code;
  p->e->file = p->file;
  p->e->line = p->line;
  p->e->col = p->line == 0 ? 0 : col >= (size_t)INT_MAX ? INT_MAX : (int)col + 1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->e->msg, sizeof p->e->msg, fmt, ap);
  va_end(ap);
  return NULL;
}

#define SYNTAX(p, col, ...) fail_at(p, col, UOPC_ERR_SYNTAX, __VA_ARGS__)

static void *fail_oom(parser *p) {
  p->line = 0;
  fail_at(p, 0, UOPC_ERR_NOMEM, "out of memory");
  uopc_ctx_clear_error(p->c);
  return NULL;
}

/* The core refused a node: its message, at col. */
static void *fail_build(parser *p, size_t col) {
  const uopc_error *ce = uopc_ctx_error(p->c);
  if (ce && ce->code == UOPC_ERR_NOMEM) return fail_oom(p);
  fail_at(p, col, ce ? ce->code : UOPC_ERR_TYPE, "%s", ce ? ce->msg : "node refused");
  uopc_ctx_clear_error(p->c);
  return NULL;
}

static void next(parser *p) { uopi_lex(&p->lx, &p->tok); }

static const char *tok_text(const uopi_tok *t, char *buf) { return uopi_quote(t->s, t->len, buf); }

/* A token that is not what the grammar wants here. */
static void *unexpected(parser *p, const char *wanted) {
  char q[200];
  const uopi_tok *t = &p->tok;
  if (t->kind == UOPI_TK_BAD) return SYNTAX(p, t->col, "%s", t->msg);
  if (t->kind == UOPI_TK_EOL) return SYNTAX(p, t->col, "expected %s, found the end of the line", wanted);
  if (t->kind == UOPI_TK_REF) return SYNTAX(p, t->col, "expected %s, found %%%s", wanted, tok_text(t, q));
  return SYNTAX(p, t->col, "expected %s, found '%s'", wanted, tok_text(t, q));
}

/* ---- tuples ------------------------------------------------------------- */

static int push_int(parser *p, int32_t v) {
  if (!uopi_grow(p->c, (void **)&p->ints, &p->ints_cap, p->ints_n + 1, sizeof *p->ints)) return fail_oom(p), 0;
  p->ints[p->ints_n++] = v;
  return 1;
}

/* After an element: ',' then more, or ')'.  Returns 1 to go on, 0 at ')',
   -1 on error. */
static int tuple_sep(parser *p) {
  next(p);
  if (p->tok.kind == UOPI_TK_RP) return 0;
  if (p->tok.kind == UOPI_TK_COMMA) {
    next(p);
    return 1;
  }
  unexpected(p, "',' or ')' in a tuple");
  return -1;
}

/* An i32 in a tuple. */
static int tuple_int(parser *p, const char *what) {
  if (p->tok.kind == UOPI_TK_INT) return push_int(p, (int32_t)p->tok.i);
  if (p->tok.kind == UOPI_TK_LP) return SYNTAX(p, p->tok.col, "expected %s, found a nested tuple", what), 0;
  unexpected(p, what);
  return 0;
}

/* A tuple at the current '(' into p->ints: (a, b, ...) or, with pairs,
   ((b0, e0), (b1, e1), ...).  Python spelling: () and (3,); a trailing
   comma is allowed, and so is (3).  Depth is at most 2 by the grammar: no
   recursion.  The current token ends at the closing ')'. */
static int parse_tuple(parser *p, int pairs, uint32_t *off, uint32_t *cnt) {
  size_t col0 = p->tok.col;
  *off = p->ints_n;
  *cnt = 0;
  next(p);
  while (p->tok.kind != UOPI_TK_RP) {
    if (*cnt == UOPC_LIMIT_DIMS) return SYNTAX(p, col0, "tuple has more than %d entries", UOPC_LIMIT_DIMS), 0;
    if (!pairs) {
      if (!tuple_int(p, "an integer")) return 0;
    } else {
      if (p->tok.kind != UOPI_TK_LP) return unexpected(p, "a (begin, end) pair"), 0;
      next(p);
      if (!tuple_int(p, "an integer")) return 0;
      next(p);
      if (p->tok.kind != UOPI_TK_COMMA) return unexpected(p, "',' in a (begin, end) pair"), 0;
      next(p);
      if (!tuple_int(p, "an integer")) return 0;
      next(p);
      if (p->tok.kind == UOPI_TK_COMMA) next(p);
      if (p->tok.kind != UOPI_TK_RP) return unexpected(p, "')' closing a (begin, end) pair"), 0;
    }
    ++*cnt;
    int r = tuple_sep(p);
    if (r < 0) return 0;
    if (r == 0) break;
  }
  return 1;
}

/* ---- literals and their dtype ------------------------------------------ */

static uopc_dtype spelled(lit_kind k) { return k == LIT_INT ? UOPC_DT_I32 : k == LIT_FLOAT ? UOPC_DT_F32 : UOPC_DT_BOOL; }

/* The constant a literal stands for at dtype t (VOID: its spelling). */
static uopc_node *lit_node(parser *p, const opd *o, uopc_dtype t) {
  if (t == UOPC_DT_VOID) t = spelled(o->lit);
  uopc_node *k = NULL;
  switch (t) {
  case UOPC_DT_BOOL:
    if (o->lit != LIT_BOOL) return SYNTAX(p, o->col, "number literal where a bool is needed");
    k = uopc_const_i(p->c, UOPC_DT_BOOL, o->i);
    break;
  case UOPC_DT_I32:
    if (o->lit == LIT_BOOL) return SYNTAX(p, o->col, "bool literal where a number (i32) is needed");
    if (o->lit == LIT_FLOAT) return SYNTAX(p, o->col, "float literal where an i32 is needed");
    k = uopc_const_i(p->c, UOPC_DT_I32, o->i);
    break;
  case UOPC_DT_F32:
  case UOPC_DT_F16:
    if (o->lit == LIT_BOOL) return SYNTAX(p, o->col, "bool literal where a number (%s) is needed", uopc_dtype_name(t));
    k = o->lit == LIT_INT ? uopc_const_i(p->c, t, o->i) : uopc_const_f(p->c, t, o->f);
    break;
  default: uopi_unreachable();
  }
  return k ? k : fail_build(p, o->col);
}

/* Literals among ops[from..to) at dtype t. */
static int need_dtype(parser *p, uint32_t from, uint32_t to, uopc_dtype t) {
  for (uint32_t i = from; i < to; i++) {
    opd *o = &p->ops[i];
    if (o->kind != OPD_LIT) continue;
    if (!(o->node = lit_node(p, o, t))) return 0;
    o->kind = OPD_NODE;
  }
  return 1;
}

/* Literals among ops[from..to) take the dtype of the first node there. */
static int type_group(parser *p, uint32_t from, uint32_t to) {
  uopc_dtype t = UOPC_DT_VOID;
  for (uint32_t i = from; i < to; i++)
    if (p->ops[i].kind == OPD_NODE) {
      t = (uopc_dtype)p->ops[i].node->dtype;
      break;
    }
  return need_dtype(p, from, to, t);
}

/* ---- attributes --------------------------------------------------------- */

/* The keys each op takes, and those it needs. */
static void op_keys(uopc_op op, unsigned *allowed, unsigned *required) {
  unsigned a = 0, r = 0;
  switch (op) {
  case UOPC_OP_CONST: a = r = KB(K_DTYPE); break;
  case UOPC_OP_PARAM: a = KB(K_SLOT) | KB(K_DTYPE) | KB(K_SHAPE), r = KB(K_SLOT) | KB(K_DTYPE); break;
  case UOPC_OP_BUFFER: a = r = KB(K_SLOT) | KB(K_DTYPE) | KB(K_SHAPE); break;
  case UOPC_OP_RANGE: a = r = KB(K_IDX); break;
  case UOPC_OP_CAST: a = r = KB(K_DTYPE); break;
  case UOPC_OP_CALL: a = KB(K_NAME); break;
  case UOPC_OP_REDUCE: a = r = KB(K_OP) | KB(K_POP); break;
  default: break;
  }
  *allowed = a;
  *required = r;
}

/* Room in p->namebuf for the name of token t and a NUL. */
static char *name_room(parser *p, const uopi_tok *t) {
  if (t->len >= UINT32_MAX - 1) return SYNTAX(p, t->col, "name too long");
  if (!uopi_grow(p->c, (void **)&p->namebuf, &p->namebuf_cap, (uint32_t)t->len + 1, 1)) return fail_oom(p);
  return p->namebuf;
}

/* A quoted name's escapes (\\, \", \xHH) into p->namebuf. */
static const char *decode_name(parser *p, const uopi_tok *t) {
  if (!name_room(p, t)) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < t->len; i++) {
    char ch = t->s[i];
    size_t col = t->col + 1 + i; /* +1: the opening quote */
    if (ch == 0) return SYNTAX(p, col, "NUL byte in input");
    if (ch != '\\') {
      p->namebuf[k++] = ch;
      continue;
    }
    char esc = ++i < t->len ? t->s[i] : 0;
    if (esc == '\\' || esc == '"') {
      p->namebuf[k++] = esc;
    } else if (esc == 'x') {
      int v = 0, ok = 1;
      for (int j = 1; j <= 2; j++) {
        char h = i + (size_t)j < t->len ? t->s[i + (size_t)j] : 0;
        int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        if (d < 0) ok = 0;
        else v = v * 16 + d;
      }
      if (!ok) return SYNTAX(p, col, "bad escape in name: \\x needs two hex digits");
      if (v == 0) return SYNTAX(p, col, "a name cannot contain a NUL byte");
      p->namebuf[k++] = (char)v;
      i += 2;
    } else {
      return SYNTAX(p, col, "bad escape in name (use \\\\, \\\" or \\xHH)");
    }
  }
  p->namebuf[k] = 0;
  return p->namebuf;
}

/* One KEY=VALUE; the current token is the key. */
static int parse_attr(parser *p, uopc_op op, attrs *a) {
  char q[200];
  if (p->tok.kind != UOPI_TK_WORD) return unexpected(p, "an attribute key=value"), 0;
  int k = 0;
  while (k < NKEYS && !(strlen(key_names[k]) == p->tok.len && memcmp(key_names[k], p->tok.s, p->tok.len) == 0)) k++;
  size_t kcol = p->tok.col;
  if (k == NKEYS) return SYNTAX(p, kcol, "unknown attribute '%s'", tok_text(&p->tok, q)), 0;
  unsigned allowed, required;
  op_keys(op, &allowed, &required);
  if (!(allowed & KB(k))) return SYNTAX(p, kcol, "%s takes no attribute '%s'", uopc_op_name(op), key_names[k]), 0;
  if (a->have & KB(k)) return SYNTAX(p, kcol, "repeated attribute '%s'", key_names[k]), 0;
  a->have |= KB(k);
  next(p);
  if (p->tok.kind != UOPI_TK_EQ) return unexpected(p, "'=' after an attribute key"), 0;
  if (k == K_NAME) {
    uopi_lex_name(&p->lx, &p->tok);
    if (p->tok.kind == UOPI_TK_BAD) return SYNTAX(p, p->tok.col, "%s", p->tok.msg), 0;
    if (p->tok.kind == UOPI_TK_WORD) {
      if (!name_room(p, &p->tok)) return 0;
      memcpy(p->namebuf, p->tok.s, p->tok.len);
      p->namebuf[p->tok.len] = 0;
      a->name = p->namebuf;
    } else {
      a->name = decode_name(p, &p->tok);
    }
    return a->name != NULL;
  }
  next(p);
  uopi_tok *t = &p->tok;
  switch (k) {
  case K_DTYPE: {
    int d = t->kind == UOPI_TK_WORD ? uopc_dtype_parse(t->s, t->len) : -1;
    if (d < 0 || d == UOPC_DT_VOID) {
      if (t->kind != UOPI_TK_WORD) return unexpected(p, "a dtype (bool, i32, f32, f16)"), 0;
      return SYNTAX(p, t->col, "unknown dtype '%s' (bool, i32, f32, f16)", tok_text(t, q)), 0;
    }
    a->dtype = d;
    return 1;
  }
  case K_OP: {
    int o = t->kind == UOPI_TK_WORD ? uopc_op_parse(t->s, t->len) : -1;
    if (o < 0) {
      if (t->kind != UOPI_TK_WORD) return unexpected(p, "an op (add, mul, max)"), 0;
      return SYNTAX(p, t->col, "unknown op '%s'", tok_text(t, q)), 0;
    }
    a->rop = o;
    return 1;
  }
  case K_SHAPE:
    if (t->kind != UOPI_TK_LP) return unexpected(p, "a shape tuple such as (2, 3)"), 0;
    return parse_tuple(p, 0, &a->shape_off, &a->shape_n);
  default: /* slot, idx, pop */
    if (t->kind != UOPI_TK_INT) return unexpected(p, "an integer"), 0;
    if (k == K_SLOT) a->slot = t->i;
    else if (k == K_IDX) a->idx = t->i;
    else a->pop = t->i;
    return 1;
  }
}

/* ---- operands ----------------------------------------------------------- */

static int is_move(uopc_op op) { return (uopc_op_flags(op) & UOPC_OPF_MOVE) != 0; }

/* Operands as written: CONST has its literal, movement ops their tuple. */
static int text_arity(uopc_op op) {
  if (op == UOPC_OP_CONST) return 1;
  if (is_move(op)) return 2;
  return uopc_op_arity(op);
}

/* The operand at the current token into p->ops[idx]. */
static int parse_operand(parser *p, uopc_op op, uint32_t idx) {
  char q[200];
  if (!uopi_grow(p->c, (void **)&p->ops, &p->ops_cap, idx + 1, sizeof *p->ops)) return fail_oom(p), 0;
  opd *o = &p->ops[idx];
  uopi_tok *t = &p->tok;
  memset(o, 0, sizeof *o);
  o->col = t->col;
  switch (t->kind) {
  case UOPI_TK_REF: {
    uopi_name *nm = uopi_names_get(&p->names, t->s, t->len);
    if (!nm) return SYNTAX(p, t->col, "undefined name %%%s", tok_text(t, q)), 0;
    o->kind = OPD_NODE;
    o->node = uopc_ctx_node(p->c, nm->id);
    return 1;
  }
  case UOPI_TK_INT: o->kind = OPD_LIT, o->lit = LIT_INT, o->i = t->i; return 1;
  case UOPI_TK_FLOAT: o->kind = OPD_LIT, o->lit = LIT_FLOAT, o->f = t->f; return 1;
  case UOPI_TK_WORD:
    if ((t->len == 4 && memcmp(t->s, "True", 4) == 0) || (t->len == 5 && memcmp(t->s, "False", 5) == 0)) {
      o->kind = OPD_LIT, o->lit = LIT_BOOL, o->i = t->len == 4;
      return 1;
    }
    return SYNTAX(p, t->col, "unexpected '%s' (an operand is a %%NAME, a literal or a tuple)", tok_text(t, q)), 0;
  case UOPI_TK_LP:
    if (!is_move(op) || idx != 1)
      return SYNTAX(p, t->col, "unexpected tuple (only the second operand of a movement op is a tuple)"), 0;
    o->kind = OPD_TUPLE;
    return parse_tuple(p, op == UOPC_OP_SHRINK, &o->tup_off, &o->tup_n);
  default: return unexpected(p, "an operand"), 0;
  }
}

/* ---- building ----------------------------------------------------------- */

/* The remaining literals at their spelling, then every operand into p->srcs. */
static uopc_node **operand_nodes(parser *p, uint32_t n) {
  if (!uopi_grow(p->c, (void **)&p->srcs, &p->srcs_cap, n + 1, sizeof *p->srcs)) return fail_oom(p);
  for (uint32_t i = 0; i < n; i++) {
    opd *o = &p->ops[i];
    if (o->kind == OPD_LIT) {
      if (!(o->node = lit_node(p, o, UOPC_DT_VOID))) return NULL;
      o->kind = OPD_NODE;
    }
    p->srcs[i] = o->node;
  }
  return p->srcs;
}

/* The broadcast sugar: in an ALU op with a shaped operand of shape S, every
   scalar operand c becomes expand(reshape(c, (1,)*len(S)), S). */
static int broadcast(parser *p, uint32_t n, size_t col) {
  const uopc_node *shaped = NULL;
  for (uint32_t i = 0; i < n && !shaped; i++)
    if (p->srcs[i]->ndim) shaped = p->srcs[i];
  if (!shaped) return 1;
  int32_t ones[UOPC_LIMIT_DIMS];
  for (uint32_t d = 0; d < shaped->ndim; d++) ones[d] = 1;
  for (uint32_t i = 0; i < n; i++) {
    if (p->srcs[i]->ndim) continue;
    uopc_node *r = uopc_reshape(p->c, p->srcs[i], ones, shaped->ndim);
    r = uopc_expand(p->c, r, shaped->shape, shaped->ndim);
    if (!r) return fail_build(p, col), 0;
    p->srcs[i] = r;
  }
  return 1;
}

static uopc_node *build(parser *p, uopc_op op, size_t op_col, uint32_t n, const attrs *a) {
  uopc_arg arg;
  memset(&arg, 0, sizeof arg);
  uopc_dtype dt = UOPC_DT_VOID;
  unsigned fl = uopc_op_flags(op);
  switch (op) {
  case UOPC_OP_CONST:
    if (p->ops[0].kind != OPD_LIT) return SYNTAX(p, p->ops[0].col, "const needs a literal operand");
    return lit_node(p, &p->ops[0], (uopc_dtype)a->dtype);
  case UOPC_OP_PARAM:
  case UOPC_OP_BUFFER:
    dt = (uopc_dtype)a->dtype;
    arg.i = a->slot;
    arg.n = a->shape_n;
    arg.v = a->shape_n ? p->ints + a->shape_off : NULL;
    break;
  case UOPC_OP_RANGE: arg.i = a->idx; break;
  case UOPC_OP_CAST: dt = (uopc_dtype)a->dtype; break;
  case UOPC_OP_CALL: arg.name = a->name; break;
  case UOPC_OP_REDUCE:
    arg.rop = (uint32_t)a->rop;
    arg.i = a->pop;
    break;
  default: break;
  }
  if (is_move(op)) {
    const opd *t = &p->ops[1];
    if (t->kind != OPD_TUPLE)
      return SYNTAX(p, t->col, "%s needs a tuple as its second operand", uopc_op_name(op));
    arg.n = t->tup_n;
    arg.v = t->tup_n ? p->ints + t->tup_off : NULL;
    n = 1;
  }
  /* literal typing; where a context needs one dtype (WHERE's condition,
     RANGE's end, INDEX's indices) a literal of another kind is reported at
     the literal rather than as the core's refusal of the node */
  if (op == UOPC_OP_STACK && !type_group(p, 0, n)) return NULL;
  if ((fl & UOPC_OPF_ALU) && op != UOPC_OP_WHERE && !type_group(p, 0, n)) return NULL;
  if (op == UOPC_OP_WHERE && (!need_dtype(p, 0, 1, UOPC_DT_BOOL) || !type_group(p, 1, n))) return NULL;
  if (op == UOPC_OP_RANGE && !need_dtype(p, 0, n, UOPC_DT_I32)) return NULL;
  if (op == UOPC_OP_INDEX && !need_dtype(p, 1, n, UOPC_DT_I32)) return NULL;
  if (!operand_nodes(p, n)) return NULL;
  if ((fl & UOPC_OPF_ALU) && !broadcast(p, n, op_col)) return NULL;
  uopc_node *u = uopc_make(p->c, op, dt, p->srcs, n, &arg);
  return u ? u : fail_build(p, op_col);
}

/* One line; returns its node, or NULL for a blank line or on error. */
static uopc_node *parse_line(parser *p) {
  char q[200];
  p->ints_n = 0; /* tuples are used by the line that spells them */
  next(p);
  if (p->tok.kind == UOPI_TK_EOL) return NULL;
  if (p->tok.kind != UOPI_TK_REF) return unexpected(p, "%NAME at the start of a line");
  uopi_tok name = p->tok;
  if (name.len >= UINT32_MAX) return SYNTAX(p, name.col, "name too long");
  uopi_name *prev = uopi_names_get(&p->names, name.s, name.len);
  if (prev) return SYNTAX(p, name.col, "%%%s is already defined on line %d", tok_text(&name, q),
                                uopi_names_line(&p->names, prev));
  next(p);
  if (p->tok.kind != UOPI_TK_EQ) return unexpected(p, "'=' after the name");
  next(p);
  if (p->tok.kind != UOPI_TK_WORD) return unexpected(p, "an opcode");
  int opi = uopc_op_parse(p->tok.s, p->tok.len);
  if (opi < 0) return SYNTAX(p, p->tok.col, "unknown op '%s'", tok_text(&p->tok, q));
  uopc_op op = (uopc_op)opi;
  size_t op_col = p->tok.col;

  uint32_t n = 0;
  next(p);
  if (p->tok.kind != UOPI_TK_EOL && p->tok.kind != UOPI_TK_COLON) {
    for (;;) {
      if (n == UINT32_MAX - 1) return SYNTAX(p, p->tok.col, "too many operands");
      if (!parse_operand(p, op, n)) return NULL;
      n++;
      next(p);
      if (p->tok.kind == UOPI_TK_COMMA) {
        next(p);
        continue;
      }
      if (p->tok.kind == UOPI_TK_EOL || p->tok.kind == UOPI_TK_COLON) break;
      return unexpected(p, "',' or ':' or the end of the line");
    }
  }
  attrs a;
  memset(&a, 0, sizeof a);
  if (p->tok.kind == UOPI_TK_COLON) {
    next(p);
    if (p->tok.kind == UOPI_TK_EOL) return unexpected(p, "an attribute after ':'");
    while (p->tok.kind != UOPI_TK_EOL) {
      if (!parse_attr(p, op, &a)) return NULL;
      next(p);
    }
  }
  int ar = text_arity(op);
  if (ar >= 0 && n != (uint32_t)ar)
    return SYNTAX(p, op_col, "%s takes %d operand%s, got %u", uopc_op_name(op), ar, ar == 1 ? "" : "s", n);
  unsigned allowed, required;
  op_keys(op, &allowed, &required);
  for (int k = 0; k < NKEYS; k++)
    if ((required & KB(k)) && !(a.have & KB(k)))
      return SYNTAX(p, op_col, "%s needs the attribute %s=", uopc_op_name(op), key_names[k]);

  uint32_t before = uopc_ctx_count(p->c);
  uopc_node *u = build(p, op, op_col, n, &a);
  if (!u) return NULL;
  if (u->id >= before && !uopi_pos_set(p->c, u, p->file, p->line, (int)op_col + 1)) return fail_oom(p);
  if (!uopi_names_put(&p->names, name.s, name.len, u)) return fail_oom(p);
  return u;
}

static uopc_node *parse_all(parser *p, const char *text, size_t len) {
  uopc_node *root = NULL;
  size_t pos = 0;
  while (pos < len && !p->failed) {
    const char *nl = memchr(text + pos, '\n', len - pos);
    size_t end = nl ? (size_t)(nl - text) : len;
    size_t line_len = end - pos;
    if (line_len && text[end - 1] == '\r') line_len--; /* CRLF */
    if (p->line < INT_MAX) p->line++;
    p->lx = (uopi_lexer){text + pos, line_len, 0};
    const char *nul = memchr(text + pos, 0, line_len);
    if (nul) return SYNTAX(p, (size_t)(nul - (text + pos)), "NUL byte in input");
    uopc_node *u = parse_line(p);
    if (u) root = u;
    pos = end + 1;
  }
  if (p->failed) return NULL;
  if (!root) {
    p->line = 0;
    return SYNTAX(p, 0, "empty program (no line defines a node)");
  }
  return root;
}

uopc_node *uopc_uir_parse(uopc_ctx *c, const char *text, size_t len, const char *file, uopc_error *e) {
  uopc_error dummy;
  parser p;
  memset(&p, 0, sizeof p);
  p.c = c;
  p.file = file;
  p.e = e ? e : &dummy;
  memset(p.e, 0, sizeof *p.e);
  if (!c) {
    p.e->code = UOPC_ERR_ARG;
    snprintf(p.e->msg, sizeof p.e->msg, "uir_parse: NULL context");
    return NULL;
  }
  uopi_names_init(&p.names, c, text, len);
  /* The context's error slot is the caller's: set it aside while the core
     reports refused nodes through it, and put it back afterwards (uopc.h:
     a call with a uopc_error * leaves the context's error as it was). */
  uopi_errsave saved;
  uopi_err_begin(c, &saved);

  uopc_node *root;
  if (!text && len) root = SYNTAX(&p, 0, "no text");
  else if (len >= UINT32_MAX) /* the name table keeps 32-bit offsets (names.c) */
    root = SYNTAX(&p, 0, "the text is %zu bytes; the .uir reader takes at most %u", len, UINT32_MAX - 1);
  else root = parse_all(&p, text, len);

  uopi_names_free(&p.names);
  uopc_mem_free(c, p.ops, (size_t)p.ops_cap * sizeof *p.ops);
  uopc_mem_free(c, p.ints, (size_t)p.ints_cap * sizeof *p.ints);
  uopc_mem_free(c, p.srcs, (size_t)p.srcs_cap * sizeof *p.srcs);
  uopc_mem_free(c, p.namebuf, p.namebuf_cap);
  uopi_err_end(c, &saved, UOPC_OK, NULL); /* *e is the parser's own */
  return root;
}

uopc_node *uopc_uir_parse_file(uopc_ctx *c, const char *path, uopc_error *e) {
  uopc_error dummy;
  if (!e) e = &dummy;
  memset(e, 0, sizeof *e);
  if (!c || !path) {
    e->code = UOPC_ERR_ARG;
    snprintf(e->msg, sizeof e->msg, "uir_parse_file: NULL %s", !c ? "context" : "path");
    return NULL;
  }
  e->file = path;
  char eb[128];
  FILE *f = fopen(path, "rb");
  if (!f) {
    e->code = UOPC_ERR_IO;
    snprintf(e->msg, sizeof e->msg, "cannot open: %s", strerror_r(errno, eb, sizeof eb));
    return NULL;
  }
  char *buf = NULL;
  size_t n = 0, cap = 0;
  int ok = 1;
  /* A regular file's size, and one byte more for the read that sees its
     end, is the first buffer: the text is the largest thing a parse holds
     besides the graph (docs/hardening.md, bytes per node). */
  struct stat st;
  size_t first = 65536;
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uintmax_t)st.st_size < SIZE_MAX / 4)
    first = (size_t)st.st_size + 1;
  for (;;) {
    if (n == cap) {
      size_t ncap = cap ? cap * 2 : first;
      char *nb = ncap > cap ? uopc_mem_realloc(c, buf, cap, ncap) : NULL;
      if (!nb) {
        e->code = UOPC_ERR_NOMEM;
        snprintf(e->msg, sizeof e->msg, "out of memory reading the file");
        ok = 0;
        break;
      }
      buf = nb;
      cap = ncap;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) {
      if (ferror(f)) {
        e->code = UOPC_ERR_IO;
        snprintf(e->msg, sizeof e->msg, "cannot read: %s", strerror_r(errno, eb, sizeof eb));
        ok = 0;
      }
      break;
    }
  }
  fclose(f);
  uopc_node *root = ok ? uopc_uir_parse(c, buf, n, path, e) : NULL;
  uopc_mem_free(c, buf, cap);
  return root;
}
