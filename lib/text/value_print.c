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
#include "uopc/algebra.h"
#include "uopc/tensor.h"
#include "uopc/uir.h"

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

char *uopc_tensor_print(uopc_ctx *c, const uopc_tensor *t) {
  if (!c) return NULL;
  if (!t || t->ndim > UOPC_LIMIT_DIMS || (t->ndim && !t->shape) || !uopc_dtype_size(t->dtype))
    return uopc_fail(c, UOPC_ERR_ARG, "tensor_print: bad tensor descriptor");
  int64_t n = 1;
  for (uint32_t d = 0; d < t->ndim; d++) {
    if (t->shape[d] < 1 || t->shape[d] > UOPC_LIMIT_ELEMS) return uopc_fail(c, UOPC_ERR_ARG, "tensor_print: bad shape");
    n *= t->shape[d];
    if (n > UOPC_LIMIT_ELEMS) return uopc_fail(c, UOPC_ERR_ARG, "tensor_print: too many elements");
  }
  if (!t->data) return uopc_fail(c, UOPC_ERR_ARG, "tensor_print: NULL data");
  uopi_sbuf b;
  uopi_sb_init(&b, c);
  int64_t idx[UOPC_LIMIT_DIMS] = {0};
  char num[40];
  const unsigned char *p = t->data;
  for (int64_t i = 0; i < n && b.ok; i++) {
    /* open a bracket for every trailing axis that starts here */
    uint32_t open = 0;
    while (open < t->ndim && idx[t->ndim - 1 - open] == 0) open++;
    if (i) uopi_sb_puts(&b, ", ");
    for (uint32_t k = 0; k < open; k++) uopi_sb_putc(&b, '[');
    double v;
    switch (t->dtype) {
    case UOPC_DT_BOOL: v = p[i] != 0; break;
    case UOPC_DT_I32: {
      int32_t x;
      memcpy(&x, p + 4 * i, 4);
      v = x;
      break;
    }
    case UOPC_DT_F32: {
      float x;
      memcpy(&x, p + 4 * i, 4);
      v = x;
      break;
    }
    default: {
      uint16_t x;
      memcpy(&x, p + 2 * i, 2);
      v = uopc_f16_to_double(x);
    }
    }
    uopi_sb_putn(&b, num, (size_t)uopc_fmt_scalar(v, t->dtype, num));
    /* close a bracket for every trailing axis that ends here */
    for (uint32_t d = t->ndim; d-- > 0;) {
      if (++idx[d] < t->shape[d]) break;
      idx[d] = 0;
      uopi_sb_putc(&b, ']');
    }
  }
  return uopi_sb_finish(&b);
}
