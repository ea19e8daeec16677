/* test/fuzz_build.c - libFuzzer target for the graph builders (issue 10).
 *
 * The input is a program for a tiny machine: each step picks a public
 * constructor and its operands from a pool of nodes built so far, with
 * wrong dtypes and shapes, NULLs and nodes of a second context mixed in.
 * Every constructor must either return a node of the first context or
 * return NULL with an error recorded (and never crash, leak or return a node
 * of another context).  At the end the last nodes are printed, parsed back
 * (the same graph in a fresh context, printed the same), simplified, and run
 * with small rewrite limits.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "uopc/uopc.h"

#define POOL 64

typedef struct in {
  const uint8_t *p;
  size_t n;
} in;

static unsigned byte(in *s) {
  if (!s->n) return 0;
  s->n--;
  return *s->p++;
}

typedef struct fz {
  uopc_ctx *a, *b;  /* a: the context under test; b: the other one */
  uopc_node *pool[POOL], *other[4];
  unsigned n, next;
} fz;

static uopc_node *operand(fz *f, in *s) {
  unsigned k = byte(s);
  if (k < 8) return NULL;
  if (k < 16) return f->other[k & 3];
  if (!f->n) return NULL;
  return f->pool[k % f->n];
}

static void shape(in *s, int32_t *v, uint32_t *nd) {
  *nd = byte(s) % 4;
  for (uint32_t i = 0; i < *nd; i++) {
    unsigned b = byte(s);
    v[i] = b < 8 ? (int32_t)(b % 2) - 1 : (int32_t)(b % 4) + 1; /* sometimes 0 or -1: refused */
  }
}

static uopc_dtype dtype(in *s) { return (uopc_dtype)(byte(s) % (UOPC_DT_COUNT + 1)); /* one past: refused */ }

static void check(fz *f, uopc_node *r) {
  if (!r) {
    if (!uopc_ctx_error(f->a)) abort(); /* a refusal without an error */
    uopc_ctx_clear_error(f->a);
    return;
  }
  if (!uopc_node_in(f->a, r)) abort(); /* a node of another context */
  uopc_ctx_clear_error(f->a);
  if (f->n < POOL) f->pool[f->n++] = r;
  else f->pool[f->next++ % POOL] = r;
}

static void step(fz *f, in *s) {
  uopc_ctx *c = f->a;
  unsigned op = byte(s) % 24;
  uopc_node *x = operand(f, s), *y = operand(f, s), *z = operand(f, s);
  int32_t v[8];
  uint32_t nd;
  uopc_node *r = NULL;
  switch (op) {
  case 0: r = uopc_const_i(c, dtype(s), (int64_t)(int8_t)byte(s) * ((int64_t)1 << (byte(s) % 40))); break;
  case 1: r = uopc_const_f(c, dtype(s), (double)(int8_t)byte(s) / 3.0); break;
  case 2: shape(s, v, &nd); r = uopc_param(c, byte(s) % 4, dtype(s), v, nd); break;
  case 3: r = uopc_buffer(c, byte(s) % 4, dtype(s), (int32_t)(byte(s) % 9) - 1); break;
  case 4: r = uopc_range(c, x, byte(s) % 4); break;
  case 5: r = uopc_alu2(c, (uopc_op)(byte(s) % (UOPC_OP_COUNT + 1)), x, y); break;
  case 6: r = uopc_alu1(c, (uopc_op)(byte(s) % (UOPC_OP_COUNT + 1)), x); break;
  case 7: r = uopc_where(c, x, y, z); break;
  case 8: r = uopc_cast(c, x, dtype(s)); break;
  case 9: {
    uopc_node *src[3] = {x, y, z};
    if (x && uopc_numel(x) > 1024) { /* keep values small enough to run */
      uopc_fail(c, UOPC_ERR_ARG, "skipped");
      break;
    }
    r = uopc_stack(c, src, 1 + byte(s) % 3);
    break;
  }
  case 10: {
    uopc_node *idx[2] = {y, z};
    r = uopc_index(c, x, idx, byte(s) % 3);
    break;
  }
  case 11: {
    uopc_node *args[2] = {y, z};
    r = uopc_call(c, x, args, byte(s) % 3, byte(s) & 1 ? "f" : NULL);
    break;
  }
  case 12: shape(s, v, &nd); r = uopc_reshape(c, x, v, nd); break;
  case 13: shape(s, v, &nd); r = uopc_expand(c, x, v, nd); break;
  case 14:
    nd = byte(s) % 4;
    for (uint32_t i = 0; i < nd; i++) v[i] = (int32_t)(byte(s) % 5);
    r = uopc_permute(c, x, v, nd);
    break;
  case 15:
    nd = byte(s) % 3;
    for (uint32_t i = 0; i < 2 * nd; i++) v[i] = (int32_t)(byte(s) % 5);
    r = uopc_shrink(c, x, v, nd);
    break;
  case 16: r = uopc_reduce(c, x, (uopc_op)(byte(s) % 8), byte(s) % 4); break;
  case 17: r = uopc_load(c, x); break;
  case 18: r = uopc_store(c, x, y); break;
  case 19: {
    uopc_node *rs[2] = {y, z};
    r = uopc_end(c, x, rs, byte(s) % 3);
    break;
  }
  case 20: {
    uopc_node *src[2] = {x, y};
    r = uopc_sink(c, src, byte(s) % 3);
    break;
  }
  case 21: {
    uopc_node *src[2] = {y, z};
    r = x ? uopc_replace(c, x, src, byte(s) % 3) : NULL;
    if (!x) uopc_fail(c, UOPC_ERR_ARG, "skipped");
    break;
  }
  case 22: {
    uopc_arg a = {.i = (int8_t)byte(s), .rop = byte(s) % 8, .n = 0};
    uopc_node *src[3] = {x, y, z};
    r = uopc_make(c, (uopc_op)(byte(s) % (UOPC_OP_COUNT + 2)), dtype(s), byte(s) & 1 ? src : NULL, byte(s) % 4,
                  byte(s) & 1 ? &a : NULL);
    break;
  }
  default: {
    uopc_node *from = y, *to = z;
    r = x ? uopc_substitute(c, x, &from, &to, byte(s) % 2) : NULL;
    if (!x) uopc_fail(c, UOPC_ERR_ARG, "skipped");
  }
  }
  check(f, r);
}

static void finish(fz *f, uopc_node *u) {
  uopc_ctx *c = f->a;
  char *t = uopc_uir_print(c, u);
  if (!t) abort(); /* printing a node of this context cannot fail but for memory */
  uopc_ctx *d = uopc_ctx_new(NULL);
  uopc_error e;
  uopc_node *back = uopc_uir_parse(d, t, strlen(t), "printed", &e);
  if (!back) abort(); /* what we print reads back */
  char *t2 = uopc_uir_print(d, back);
  if (!t2 || strcmp(t, t2) != 0) abort();
  uopc_mem_free(d, t2, strlen(t2) + 1);
  uopc_ctx_free(d);
  uopc_mem_free(c, t, strlen(t) + 1);
  uopc_rewrite_limits lim = {10, 20000, 200};
  uopc_ctx_set_rewrite_limits(c, &lim);
  if (!uopc_simplify(c, u) && !uopc_ctx_error(c)) abort();
  uopc_ctx_clear_error(c);
  if (!uopc_run(c, u) && !uopc_ctx_error(c)) abort();
  uopc_ctx_clear_error(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz f = {uopc_ctx_new(NULL), uopc_ctx_new(NULL), {0}, {0}, 0, 0};
  if (!f.a || !f.b) abort();
  f.other[0] = uopc_const_i(f.b, UOPC_DT_I32, 3);
  f.other[1] = uopc_param(f.b, 0, UOPC_DT_F32, NULL, 0);
  f.other[2] = uopc_range(f.b, f.other[0], 0);
  f.other[3] = uopc_buffer(f.b, 0, UOPC_DT_I32, 4);
  f.pool[f.n++] = uopc_const_i(f.a, UOPC_DT_I32, 2);
  f.pool[f.n++] = uopc_const_f(f.a, UOPC_DT_F32, 1.5);
  f.pool[f.n++] = uopc_param(f.a, 0, UOPC_DT_I32, NULL, 0);
  in s = {data, size > 4096 ? 4096 : size};
  while (s.n) step(&f, &s);
  for (unsigned k = f.n > 4 ? f.n - 4 : 0; k < f.n; k++) finish(&f, f.pool[k]);
  uopc_ctx_free(f.a);
  uopc_ctx_free(f.b);
  return 0;
}
