/* lib/text/value_print.c - a value (a CONST, or a STACK tree of CONSTs) as
 * a Python literal: [[1, 2], [3, 4]], [4.0, 8.0, 12.0], True.  Floats are
 * printed at their dtype's precision (uopc_fmt_scalar).
 *
 * First a check over the distinct nodes (pre-order, sources left to right,
 * like the seed's to_python), so that a stuck program is reported at the
 * first op that is not a value and nothing is printed; then the printing
 * walk, which expands shared STACKs each time they occur (a value is a
 * tree).  Both walks use an explicit stack.
 */
#include <string.h>

#include "text/text.h"

typedef struct frame {
  const uopc_node *u;
  uint32_t next;
} frame;

/* The first node in pre-order that is neither CONST nor STACK, or NULL.
   *ok = 0 on allocation failure. */
static const uopc_node *first_stuck(uopc_ctx *c, const uopc_node *root, int *ok) {
  const uopc_node *bad = NULL;
  uopi_table *seen = uopi_table_acquire(c);
  const uopc_node **st = NULL;
  uint32_t cap = 0, sp = 0;
  *ok = seen && uopi_grow(c, (void **)&st, &cap, 1, sizeof *st);
  if (*ok) st[sp++] = root;
  while (*ok && sp && !bad) {
    const uopc_node *u = st[--sp];
    if (uopi_table_get(seen, u->id)) continue;
    if (!(*ok = uopi_table_set(c, seen, u->id, (void *)u))) break;
    if (u->op == UOPC_OP_CONST) continue;
    if (u->op != UOPC_OP_STACK) {
      bad = u;
      break;
    }
    if (!(*ok = uopi_grow(c, (void **)&st, &cap, sp + u->nsrc, sizeof *st))) break;
    for (uint32_t j = u->nsrc; j-- > 0;) st[sp++] = u->src[j]; /* leftmost on top */
  }
  uopc_mem_free(c, st, (size_t)cap * sizeof *st);
  uopi_table_release(c, seen);
  return bad;
}

char *uopc_value_print(uopc_ctx *c, uopc_node *u) {
  if (!uopi_check_node(c, u, "value_print")) return NULL;
  int ok;
  const uopc_node *bad = first_stuck(c, u, &ok);
  if (!ok) return NULL;
  if (bad)
    return uopc_fail(c, UOPC_ERR_EVAL, "program did not evaluate to a value, stuck at %s",
                     uopc_op_name((uopc_op)bad->op));
  uopi_sbuf b;
  uopi_sb_init(&b, c);
  frame *st = NULL;
  uint32_t cap = 0, sp = 0;
  char num[32];
  ok = uopi_grow(c, (void **)&st, &cap, 1, sizeof *st);
  if (ok) st[sp++] = (frame){u, 0};
  while (ok && sp && b.ok) {
    frame *f = &st[sp - 1];
    if (f->u->op == UOPC_OP_CONST) {
      uopi_sb_putn(&b, num, (size_t)uopc_fmt_scalar(uopc_const_value(f->u), (uopc_dtype)f->u->dtype, num));
      sp--;
      continue;
    }
    if (f->next == f->u->nsrc) {
      uopi_sb_puts(&b, f->next ? "]" : "[]");
      sp--;
      continue;
    }
    uopi_sb_puts(&b, f->next ? ", " : "[");
    const uopc_node *s = f->u->src[f->next++];
    if (!(ok = uopi_grow(c, (void **)&st, &cap, sp + 1, sizeof *st))) break;
    st[sp++] = (frame){s, 0};
  }
  uopc_mem_free(c, st, (size_t)cap * sizeof *st);
  if (!ok) {
    uopi_sb_free(&b);
    return NULL;
  }
  return uopi_sb_finish(&b);
}
