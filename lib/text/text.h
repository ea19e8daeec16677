/* lib/text/text.h - what the files of lib/text/ share.
 *
 *   names.c        the %NAME -> node map of the parser (open addressing)
 *   lex.c          the tokens of one .uir line
 *   num_parse.c    decimal literal text -> double, independent of the locale
 *   parse.c        .uir text -> graph (uopc_uir_parse, uopc_uir_parse_file)
 *   print.c        graph -> .uir text (uopc_uir_print)
 *   value_print.c  a CONST/STACK tree as a Python literal (uopc_value_print)
 *   dot.c          graph -> Graphviz dot text (uopc_dot)
 *
 * Nothing here recurses: every walk over input-controlled structure is a
 * loop with an explicit stack.
 */
#ifndef UOPI_TEXT_H
#define UOPI_TEXT_H

#include <stddef.h>

#include "support/support.h"

/* ---- names.c ------------------------------------------------------------ */

/* One name: off is where it starts in the text (after its '%'; never 0, so
   0 marks an empty slot), id its node's id (uopc_ctx_node). */
typedef struct uopi_name {
  uint32_t off;
  uint32_t id;
} uopi_name;

typedef struct uopi_names {
  uopc_ctx *c;
  const char *text;   /* the text being parsed (not owned), len < UINT32_MAX */
  size_t len;
  uopi_name *e;
  size_t cap, n;      /* cap is 0 or a power of two */
} uopi_names;

/* An empty map for names in text[0..len), which must outlive it. */
UOPI_FUNC void uopi_names_init(uopi_names *m, uopc_ctx *c, const char *text, size_t len);
UOPI_FUNC void uopi_names_free(uopi_names *m);
/* The entry for the name s[0..len), or NULL.  s is a whole %NAME token (a
   maximal run of word characters), anywhere. */
UOPI_FUNC uopi_name *uopi_names_get(const uopi_names *m, const char *s, size_t len);
/* Adds a name that is not in the map; s[0..len) is a %NAME token inside the
   map's text.  0 on OOM (context error set). */
UOPI_FUNC int uopi_names_put(uopi_names *m, const char *s, size_t len, const uopc_node *node);
/* The 1-based line of the text where entry e's name stands (INT_MAX at most);
   counts the text before it, so it is for error messages. */
UOPI_FUNC int uopi_names_line(const uopi_names *m, const uopi_name *e);

/* The characters of %NAME tokens and words: [A-Za-z0-9_]. */
static inline int uopi_is_digit(int ch) { return ch >= '0' && ch <= '9'; }
static inline int uopi_is_alpha(int ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_'; }
static inline int uopi_is_word(int ch) { return uopi_is_alpha(ch) || uopi_is_digit(ch); }

/* ---- lex.c -------------------------------------------------------------- */

typedef enum uopi_tk {
  UOPI_TK_EOL,    /* end of line, or a comment */
  UOPI_TK_REF,    /* %NAME (s, len: the NAME) */
  UOPI_TK_WORD,   /* [A-Za-z_][A-Za-z0-9_]*: opcodes, keys, True, inf, ... */
  UOPI_TK_INT,    /* -?[0-9]+ within the i32 range (i) */
  UOPI_TK_FLOAT,  /* a float literal, including inf, -inf, nan (f) */
  UOPI_TK_STR,    /* "..." (s, len: the text between the quotes, escapes kept) */
  UOPI_TK_EQ,     /* = */
  UOPI_TK_COMMA,  /* , */
  UOPI_TK_COLON,  /* : */
  UOPI_TK_LP,     /* ( */
  UOPI_TK_RP,     /* ) */
  UOPI_TK_BAD,    /* a lexical error: msg says what */
} uopi_tk;

typedef struct uopi_tok {
  uopi_tk kind;
  const char *s;   /* the token's text */
  size_t len;
  size_t col;      /* 0-based byte offset in its line */
  int64_t i;
  double f;
  char msg[160];   /* UOPI_TK_BAD only */
} uopi_tok;

/* A cursor over one line (without its '\n'). */
typedef struct uopi_lexer {
  const char *line;
  size_t len;
  size_t pos;
} uopi_lexer;

/* The next token.  Words that spell inf and nan are floats; True and False
   stay words (the parser knows where a literal may stand). */
UOPI_FUNC void uopi_lex(uopi_lexer *lx, uopi_tok *t);
/* The next token read as a raw name: [A-Za-z0-9_]+ (kind WORD) or a quoted
   string (kind STR), after blanks.  Anything else is BAD. */
UOPI_FUNC void uopi_lex_name(uopi_lexer *lx, uopi_tok *t);
/* s[0..len) for a message: cut after 40 bytes with "...", bytes outside
   printable ASCII as \xNN.  buf must hold 200 bytes. */
UOPI_FUNC const char *uopi_quote(const char *s, size_t len, char *buf);

/* ---- num_parse.c -------------------------------------------------------- */

/* The double nearest to the decimal s[0..len) (grammar:
   -?[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?, already checked), read without the
   locale.  Returns 0 when the magnitude overflows to infinity. */
UOPI_FUNC int uopi_decimal_to_double(const char *s, size_t len, double *out);

/* ---- print.c ----------------------------------------------- */

/* The dtype a literal's spelling gives on its own (True -> bool, 3 -> i32,
   2.0 -> f32).  A constant of another dtype needs a node sibling or a line. */
static inline int uopi_dtype_spellable(uopc_dtype t) {
  return t == UOPC_DT_BOOL || t == UOPC_DT_I32 || t == UOPC_DT_F32;
}

#endif
