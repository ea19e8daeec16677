/* lib/core/build.c - the sugar the seed uses, as plain C functions.
 * Each one is uopc_make with the arg filled in; NULL in, NULL out.
 */
#include <math.h>

#include "core/fast.h"

#define NULLCHECK1(a) \
  if (!c || !(a)) return !c || c->has_err ? NULL : uopc_fail(c, UOPC_ERR_ARG, "%s: NULL node", __func__)

uopc_node *uopc_const_i(uopc_ctx *c, uopc_dtype t, int64_t v) {
  /* the common case (uopc_make's fast path, without the layers) */
  if (c && (t == UOPC_DT_BOOL || (t == UOPC_DT_I32 && v >= INT32_MIN && v <= INT32_MAX)))
    return uopi_intern_const_i(c, t, t == UOPC_DT_BOOL ? (v != 0) : v);
  if (uopc_dtype_is_float(t)) return uopc_const_f(c, t, (double)v);
  uopc_arg a = {.i = t == UOPC_DT_BOOL ? (v != 0) : v};
  return uopc_make(c, UOPC_OP_CONST, t, NULL, 0, &a);
}

uopc_node *uopc_const_f(uopc_ctx *c, uopc_dtype t, double v) {
  if (!uopc_dtype_is_float(t)) return uopc_fail(c, UOPC_ERR_TYPE, "CONST %s value must be given as an integer", uopc_dtype_name(t));
  uopc_arg a = {.f = v};
  return uopc_make(c, UOPC_OP_CONST, t, NULL, 0, &a);
}

uopc_node *uopc_const_like(uopc_ctx *c, const uopc_node *x, double v) {
  NULLCHECK1(x);
  if (!uopi_check_node(c, x, "uopc_const_like")) return NULL;
  if (uopc_dtype_is_float(x->dtype)) return uopc_const_f(c, x->dtype, v);
  if (!(v >= -9.3e18 && v <= 9.3e18)) return uopc_fail(c, UOPC_ERR_TYPE, "CONST value %g is not an integer", v);
  return uopc_const_i(c, x->dtype, (int64_t)v);
}

double uopc_const_value(const uopc_node *k) {
  if (!k) return 0;
  return uopc_dtype_is_float(k->dtype) ? k->arg.f : (double)k->arg.i;
}

uopc_node *uopc_param(uopc_ctx *c, int64_t slot, uopc_dtype t, const int32_t *shape, uint32_t ndim) {
  uopc_arg a = {.i = slot, .n = ndim, .v = shape};
  return uopc_make(c, UOPC_OP_PARAM, t, NULL, 0, &a);
}

uopc_node *uopc_buffer(uopc_ctx *c, int64_t slot, uopc_dtype t, int32_t n) {
  uopc_arg a = {.i = slot, .n = 1, .v = &n};
  return uopc_make(c, UOPC_OP_BUFFER, t, NULL, 0, &a);
}

uopc_node *uopc_range(uopc_ctx *c, uopc_node *end, int64_t idx) {
  uopc_arg a = {.i = idx};
  return uopc_make(c, UOPC_OP_RANGE, UOPC_DT_VOID, &end, 1, &a);
}

uopc_node *uopc_alu(uopc_ctx *c, uopc_op op, uopc_node *const *src, uint32_t n) {
  if (!(uopc_op_flags(op) & UOPC_OPF_ALU) || op == UOPC_OP_CAST)
    return uopc_fail(c, UOPC_ERR_ARG, "uopc_alu: %s is not an ALU op", uopc_op_name(op));
  return uopc_make(c, op, UOPC_DT_VOID, src, n, NULL);
}

uopc_node *uopc_alu1(uopc_ctx *c, uopc_op op, uopc_node *a) { return uopc_alu(c, op, &a, 1); }

uopc_node *uopc_alu2(uopc_ctx *c, uopc_op op, uopc_node *a, uopc_node *b) {
  uopc_node *r;
  /* the common case: uopc_make's fast path, without the layers */
  if (c && (unsigned)op < UOPC_OP_COUNT && (uopi_op_flags(op) & UOPC_OPF_BINARY) && uopi_fast_bin(c, op, UOPC_DT_VOID, a, b, &r))
    return r;
  uopc_node *s[2] = {a, b};
  return uopc_alu(c, op, s, 2);
}

uopc_node *uopc_add(uopc_ctx *c, uopc_node *a, uopc_node *b) { return uopc_alu2(c, UOPC_OP_ADD, a, b); }
uopc_node *uopc_mul(uopc_ctx *c, uopc_node *a, uopc_node *b) { return uopc_alu2(c, UOPC_OP_MUL, a, b); }
uopc_node *uopc_max(uopc_ctx *c, uopc_node *a, uopc_node *b) { return uopc_alu2(c, UOPC_OP_MAX, a, b); }
uopc_node *uopc_lt(uopc_ctx *c, uopc_node *a, uopc_node *b) { return uopc_alu2(c, UOPC_OP_CMPLT, a, b); }
uopc_node *uopc_ne(uopc_ctx *c, uopc_node *a, uopc_node *b) { return uopc_alu2(c, UOPC_OP_CMPNE, a, b); }
uopc_node *uopc_idiv(uopc_ctx *c, uopc_node *a, uopc_node *b) { return uopc_alu2(c, UOPC_OP_FLOORDIV, a, b); }
uopc_node *uopc_mod(uopc_ctx *c, uopc_node *a, uopc_node *b) { return uopc_alu2(c, UOPC_OP_FLOORMOD, a, b); }

uopc_node *uopc_full_like(uopc_ctx *c, uopc_node *x, double v) {
  /* the common case, an int scalar x (what uopc_const_like and uopc_const_i
     do with it, without the layers; NaN fails the compares) */
  if (c && x && x->ndim == 0 && (x->dtype == UOPC_DT_I32 || x->dtype == UOPC_DT_BOOL) && v >= INT32_MIN &&
      v <= INT32_MAX && uopi_owns(c, x)) {
    int64_t i = (int64_t)v;
    return uopi_intern_const_i(c, (uopc_dtype)x->dtype, x->dtype == UOPC_DT_BOOL ? (i != 0) : i);
  }
  NULLCHECK1(x);
  uopc_node *k = uopc_const_like(c, x, v);
  if (!k || x->ndim == 0) return k;
  int32_t ones[UOPC_LIMIT_DIMS];
  for (uint32_t i = 0; i < x->ndim; i++) ones[i] = 1;
  return uopc_expand(c, uopc_reshape(c, k, ones, x->ndim), x->shape, x->ndim);
}

uopc_node *uopc_neg(uopc_ctx *c, uopc_node *a) { return uopc_mul(c, a, uopc_full_like(c, a, -1)); }
uopc_node *uopc_sub(uopc_ctx *c, uopc_node *a, uopc_node *b) { return uopc_add(c, a, uopc_neg(c, b)); }
uopc_node *uopc_add_k(uopc_ctx *c, uopc_node *x, double k) { return uopc_add(c, x, uopc_full_like(c, x, k)); }
uopc_node *uopc_mul_k(uopc_ctx *c, uopc_node *x, double k) { return uopc_mul(c, x, uopc_full_like(c, x, k)); }
uopc_node *uopc_idiv_k(uopc_ctx *c, uopc_node *x, double k) { return uopc_idiv(c, x, uopc_full_like(c, x, k)); }
uopc_node *uopc_mod_k(uopc_ctx *c, uopc_node *x, double k) { return uopc_mod(c, x, uopc_full_like(c, x, k)); }
uopc_node *uopc_lt_k(uopc_ctx *c, uopc_node *x, double k) { return uopc_lt(c, x, uopc_full_like(c, x, k)); }

uopc_node *uopc_where(uopc_ctx *c, uopc_node *cond, uopc_node *a, uopc_node *b) {
  uopc_node *s[3] = {cond, a, b};
  return uopc_alu(c, UOPC_OP_WHERE, s, 3);
}

uopc_node *uopc_cast(uopc_ctx *c, uopc_node *a, uopc_dtype t) {
  if (t == UOPC_DT_VOID) return uopc_fail(c, UOPC_ERR_TYPE, "CAST needs a target dtype");
  return uopc_make(c, UOPC_OP_CAST, t, &a, 1, NULL);
}

uopc_node *uopc_stack(uopc_ctx *c, uopc_node *const *src, uint32_t n) {
  return uopc_make(c, UOPC_OP_STACK, UOPC_DT_VOID, src, n, NULL);
}

/* op(head, rest[0..n)) */
static uopc_node *with_head(uopc_ctx *c, uopc_op op, uopc_node *head, uopc_node *const *rest, uint32_t n,
                            const uopc_arg *a) {
  NULLCHECK1(head);
  if (n && !rest) return uopc_fail(c, UOPC_ERR_ARG, "%s: %u sources given as NULL", uopc_op_name(op), n);
  if (n >= UINT32_MAX - 1) return uopc_fail(c, UOPC_ERR_ARG, "%s: %u sources is too many", uopc_op_name(op), n);
  uopc_node *small[8], **s = small;
  if (n + 1 > 8 && !(s = uopc_mem_alloc(c, ((size_t)n + 1) * sizeof *s))) return NULL;
  s[0] = head;
  for (uint32_t i = 0; i < n; i++) s[i + 1] = rest[i];
  uopc_node *r = uopc_make(c, op, UOPC_DT_VOID, s, n + 1, a);
  if (s != small) uopc_mem_free(c, s, ((size_t)n + 1) * sizeof *s);
  return r;
}

uopc_node *uopc_index(uopc_ctx *c, uopc_node *x, uopc_node *const *idx, uint32_t n) {
  return with_head(c, UOPC_OP_INDEX, x, idx, n, NULL);
}

uopc_node *uopc_call(uopc_ctx *c, uopc_node *body, uopc_node *const *args, uint32_t n, const char *name) {
  uopc_arg a = {.name = name};
  return with_head(c, UOPC_OP_CALL, body, args, n, &a);
}

static uopc_node *move(uopc_ctx *c, uopc_op op, uopc_node *x, const int32_t *v, uint32_t n) {
  uopc_arg a = {.n = n, .v = v};
  return uopc_make(c, op, UOPC_DT_VOID, &x, 1, &a);
}

uopc_node *uopc_reshape(uopc_ctx *c, uopc_node *x, const int32_t *s, uint32_t n) { return move(c, UOPC_OP_RESHAPE, x, s, n); }
uopc_node *uopc_expand(uopc_ctx *c, uopc_node *x, const int32_t *s, uint32_t n) { return move(c, UOPC_OP_EXPAND, x, s, n); }
uopc_node *uopc_permute(uopc_ctx *c, uopc_node *x, const int32_t *p, uint32_t n) { return move(c, UOPC_OP_PERMUTE, x, p, n); }
uopc_node *uopc_shrink(uopc_ctx *c, uopc_node *x, const int32_t *b, uint32_t n) { return move(c, UOPC_OP_SHRINK, x, b, n); }

uopc_node *uopc_reduce(uopc_ctx *c, uopc_node *x, uopc_op rop, int64_t pop) {
  uopc_arg a = {.i = pop, .rop = (uint32_t)rop};
  return uopc_make(c, UOPC_OP_REDUCE, UOPC_DT_VOID, &x, 1, &a);
}

uopc_node *uopc_load(uopc_ctx *c, uopc_node *addr) { return uopc_make(c, UOPC_OP_LOAD, UOPC_DT_VOID, &addr, 1, NULL); }

uopc_node *uopc_store(uopc_ctx *c, uopc_node *addr, uopc_node *value) {
  uopc_node *s[2] = {addr, value};
  return uopc_make(c, UOPC_OP_STORE, UOPC_DT_VOID, s, 2, NULL);
}

uopc_node *uopc_end(uopc_ctx *c, uopc_node *value, uopc_node *const *ranges, uint32_t n) {
  return with_head(c, UOPC_OP_END, value, ranges, n, NULL);
}

uopc_node *uopc_sink(uopc_ctx *c, uopc_node *const *src, uint32_t n) {
  return uopc_make(c, UOPC_OP_SINK, UOPC_DT_VOID, src, n, NULL);
}

/* ---- kernel sugar: the constructors above, composed (uop.h) ---- */

uopc_node *uopc_range_k(uopc_ctx *c, int32_t end, int64_t idx) {
  if (!c) return NULL;
  return uopc_range(c, uopc_const_i(c, UOPC_DT_I32, end), idx);
}

uopc_node *uopc_mad_k(uopc_ctx *c, uopc_node *x, double k, uopc_node *y) {
  if (!c) return NULL;
  return uopc_add(c, uopc_mul_k(c, x, k), y);
}

uopc_node *uopc_index1(uopc_ctx *c, uopc_node *buf, uopc_node *idx) {
  if (!c) return NULL;
  return uopc_index(c, buf, &idx, 1);
}

uopc_node *uopc_load1(uopc_ctx *c, uopc_node *buf, uopc_node *idx) {
  if (!c) return NULL;
  return uopc_load(c, uopc_index1(c, buf, idx));
}

uopc_node *uopc_store1(uopc_ctx *c, uopc_node *buf, uopc_node *idx, uopc_node *value) {
  if (!c) return NULL;
  return uopc_store(c, uopc_index1(c, buf, idx), value);
}

uopc_node *uopc_end1(uopc_ctx *c, uopc_node *value, uopc_node *range) {
  if (!c) return NULL;
  return uopc_end(c, value, &range, 1);
}

uopc_node *uopc_sink1(uopc_ctx *c, uopc_node *effect) {
  if (!c) return NULL;
  return uopc_sink(c, &effect, 1);
}
