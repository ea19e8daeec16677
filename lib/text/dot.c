/* lib/text/dot.c - a graph in Graphviz's dot language (uopc_dot).
 *
 * One pass over uopc_toposort: node i is `n<i>`, labelled
 * "OP DTYPE [SHAPE]\nARG", then its edges from each source.  No recursion,
 * no Graphviz: only text (uopc viz runs the `dot` program on it).
 */
#include <string.h>

#include "text/text.h"
#include "uopc/uir.h"
#include "uopc/viz.h"

/* s with dot's escapes: \ and " escaped, bytes outside printable ASCII as
   \xHH (shown literally: a CALL name may hold any byte). */
static void put_escaped(uopi_sbuf *b, const char *s) {
  static const char hex[] = "0123456789abcdef";
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') {
      uopi_sb_putc(b, '\\');
      uopi_sb_putc(b, (char)ch);
    } else if (ch >= 0x20 && ch < 0x7f) {
      uopi_sb_putc(b, (char)ch);
    } else {
      char e[5] = {'\\', '\\', 'x', hex[ch >> 4], hex[ch & 15]};
      uopi_sb_putn(b, e, 5);
    }
  }
}

/* Python's tuple spelling; pairs: ((b0, e0), (b1, e1)). */
static void put_tuple(uopi_sbuf *b, const int32_t *v, uint32_t n, int pairs) {
  uopi_sb_putc(b, '(');
  for (uint32_t i = 0; i < n; i++) {
    if (i) uopi_sb_puts(b, ", ");
    if (pairs) uopi_sb_printf(b, "(%d, %d)", (int)v[2 * i], (int)v[2 * i + 1]);
    else uopi_sb_printf(b, "%d", (int)v[i]);
  }
  uopi_sb_puts(b, n == 1 ? ",)" : ")");
}

/* The label of u: "OP DTYPE [SHAPE]" and, where u has an arg, "\nARG". */
static void put_label(uopi_sbuf *b, const uopc_node *u) {
  char tmp[32];
  uopi_sb_puts(b, uopc_op_name((uopc_op)u->op));
  uopi_sb_putc(b, ' ');
  uopi_sb_puts(b, uopc_dtype_name((uopc_dtype)u->dtype));
  if (u->ndim) {
    uopi_sb_putc(b, ' ');
    put_tuple(b, u->shape, u->ndim, 0);
  }
  switch (u->op) {
  case UOPC_OP_CONST:
    uopi_sb_puts(b, "\\n");
    if (u->dtype == UOPC_DT_BOOL) uopi_sb_puts(b, u->arg.i ? "True" : "False");
    else if (u->dtype == UOPC_DT_I32) uopi_sb_printf(b, "%lld", (long long)u->arg.i);
    else uopi_sb_putn(b, tmp, (size_t)uopc_fmt_double(u->arg.f, tmp));
    break;
  case UOPC_OP_PARAM:
  case UOPC_OP_BUFFER: uopi_sb_printf(b, "\\nslot=%lld", (long long)u->arg.i); break;
  case UOPC_OP_RANGE: uopi_sb_printf(b, "\\nidx=%lld", (long long)u->arg.i); break;
  case UOPC_OP_PERMUTE: /* RESHAPE, EXPAND: the arg is the shape, already shown */
  case UOPC_OP_SHRINK:
    uopi_sb_puts(b, "\\n");
    put_tuple(b, u->arg.v, u->arg.n, u->op == UOPC_OP_SHRINK);
    break;
  case UOPC_OP_REDUCE:
    uopi_sb_printf(b, "\\nop=%s pop=%lld", uopc_op_spelling((uopc_op)u->arg.rop), (long long)u->arg.i);
    break;
  case UOPC_OP_CALL:
    if (u->arg.name) {
      uopi_sb_puts(b, "\\nname=");
      put_escaped(b, u->arg.name);
    }
    break;
  default: break;
  }
}

char *uopc_dot(uopc_ctx *c, uopc_node *root) {
  if (!c || !uopi_check_node(c, root, "dot")) return NULL;
  uint32_t n = 0;
  uopc_node **order = uopc_toposort(c, root, &n);
  if (!order) return NULL;
  uopi_table *num = uopi_table_acquire(c); /* node id -> toposort index + 1 */
  char *res = NULL;
  int ok = num != NULL;
  for (uint32_t i = 0; ok && i < n; i++) ok = uopi_table_set(c, num, order[i]->id, (void *)(uintptr_t)(i + 1));
  if (ok) {
    uopi_sbuf b;
    uopi_sb_init(&b, c);
    uopi_sb_puts(&b, "digraph uopc {\n  ordering=in;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n");
    for (uint32_t i = 0; i < n && b.ok; i++) {
      const uopc_node *u = order[i];
      uopi_sb_printf(&b, "  n%u [label=\"", i);
      put_label(&b, u);
      uopi_sb_puts(&b, "\"];\n");
      for (uint32_t j = 0; j < u->nsrc; j++)
        uopi_sb_printf(&b, "  n%u -> n%u;\n", (unsigned)((uintptr_t)uopi_table_get(num, u->src[j]->id) - 1), i);
    }
    uopi_sb_puts(&b, "}\n");
    res = uopi_sb_finish(&b);
    uopi_sb_free(&b);
  }
  if (num) uopi_table_release(c, num);
  uopc_mem_free(c, order, (size_t)n * sizeof *order);
  return res;
}
