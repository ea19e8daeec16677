/* lib/core/show.c - the seed's one-line `show` form, used by the rewrite
 * trace: add(mul(p0, 3), 6).  Iterative; long output is cut with "...".
 */
#include <string.h>

#include "core/ctx.h"
#include "support/support.h"
#include "uopc/uir.h"

typedef uopi_sbuf sbuf;
#define put uopi_sb_printf

static void put_leaf(sbuf *b, const uopc_node *u) {
  char num[40];
  switch (u->op) {
  case UOPC_OP_CONST:
    if (u->dtype == UOPC_DT_BOOL) put(b, "%s", u->arg.i ? "True" : "False");
    else if (u->dtype == UOPC_DT_I32) put(b, "%lld", (long long)u->arg.i);
    else {
      uopc_fmt_double(u->arg.f, num);
      put(b, "%s", num);
    }
    break;
  case UOPC_OP_PARAM: put(b, "p%lld", (long long)u->arg.i); break;
  case UOPC_OP_BUFFER: put(b, "b%lld", (long long)u->arg.i); break;
  case UOPC_OP_RANGE: put(b, "r%lld", (long long)u->arg.i); break;
  default: uopi_unreachable();
  }
}

static int is_leaf(const uopc_node *u) {
  return u->op == UOPC_OP_CONST || u->op == UOPC_OP_PARAM || u->op == UOPC_OP_BUFFER || u->op == UOPC_OP_RANGE;
}

/* the args of an op, after its sources: ", (1, 1)", ", add, 1", ", i32" */
static void put_args(sbuf *b, const uopc_node *u) {
  switch (u->op) {
  case UOPC_OP_RESHAPE: case UOPC_OP_EXPAND: case UOPC_OP_PERMUTE: {
    char sh[256];
    uopc_shape_str(u->arg.v, u->arg.n, sh, sizeof sh);
    put(b, ", %s", sh);
    break;
  }
  case UOPC_OP_SHRINK:
    put(b, ", (");
    for (uint32_t i = 0; i < u->arg.n; i++) put(b, "%s(%d, %d)", i ? ", " : "", u->arg.v[2 * i], u->arg.v[2 * i + 1]);
    put(b, u->arg.n == 1 ? ",)" : ")");
    break;
  case UOPC_OP_REDUCE: put(b, ", %s, %lld", uopc_op_spelling((uopc_op)u->arg.rop), (long long)u->arg.i); break;
  case UOPC_OP_CAST: put(b, ", %s", uopc_dtype_name((uopc_dtype)u->dtype)); break;
  default: break;
  }
}

typedef struct sframe {
  const uopc_node *u;
  uint32_t next;
} sframe;

char *uopc_show(uopc_ctx *c, const uopc_node *u, size_t max_len) {
  if (!uopi_check_node(c, u, "show")) return NULL;
  sbuf b;
  uopi_sb_init_max(&b, c, max_len ? max_len : 1);
  sframe *st = NULL;
  uint32_t cap = 0, sp = 0;
  if (!uopi_grow(c, (void **)&st, &cap, 16, sizeof *st)) return NULL;
  st[sp++] = (sframe){u, 0};
  while (sp && b.ok && !b.cut) {
    sframe *f = &st[sp - 1];
    const uopc_node *x = f->u;
    if (is_leaf(x)) {
      put_leaf(&b, x);
      sp--;
      continue;
    }
    if (f->next == 0) put(&b, "%s(", uopc_op_spelling((uopc_op)x->op));
    if (f->next < x->nsrc) {
      if (f->next) put(&b, ", ");
      const uopc_node *s = x->src[f->next++];
      if (!uopi_grow(c, (void **)&st, &cap, sp + 1, sizeof *st)) {
        b.ok = 0;
        break;
      }
      st[sp++] = (sframe){s, 0};
      continue;
    }
    put_args(&b, x);
    put(&b, ")");
    sp--;
  }
  uopc_mem_free(c, st, (size_t)cap * sizeof *st);
  if (!b.ok) {
    uopi_sb_free(&b);
    return NULL;
  }
  return uopi_sb_finish(&b);
}
