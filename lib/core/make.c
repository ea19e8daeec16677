/* lib/core/make.c - building a node: infer its dtype and shape, check
 * everything, then intern it.  A bad node is refused with a message that
 * names the op and the problem; nothing is built half-way.
 *
 * Where the seeds are silent the IR is strict (docs/uir.md, "Checks").
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/fast.h"

#define FAIL(...) uopc_fail(c, UOPC_ERR_TYPE, __VA_ARGS__)

void uopc_shape_str(const int32_t *shape, uint32_t ndim, char *buf, size_t size) {
  size_t k = 0;
  if (!buf || size == 0) return;
  buf[0] = 0;
  if (ndim && !shape) return;
#define PUT(...)                                                             \
  do {                                                                       \
    if (k < size) {                                                          \
      int w_ = snprintf(buf + k, size - k, __VA_ARGS__);                     \
      k += w_ > 0 ? (size_t)w_ : 0;                                          \
    }                                                                        \
  } while (0)
  PUT("(");
  for (uint32_t i = 0; i < ndim; i++) PUT(i ? ", %d" : "%d", shape[i]);
  PUT(ndim == 1 ? ",)" : ")");
#undef PUT
  if (k >= size && size >= 4) memcpy(buf + size - 4, "...", 4);
}

int64_t uopc_numel(const uopc_node *u) {
  if (!u) return 0;
  int64_t n = 1;
  for (uint32_t i = 0; i < u->ndim; i++) n *= u->shape[i];
  return n;
}

static const char *opn(uopc_op op) { return uopc_op_name(op); }

/* Checks dims >= 1 and the element count. */
static int check_dims(uopc_ctx *c, uopc_op op, const int32_t *dims, uint32_t n) {
  if (n > UOPC_LIMIT_DIMS) return FAIL("%s shape has %u dims, at most %d allowed", opn(op), n, UOPC_LIMIT_DIMS), 0;
  int64_t total = 1;
  for (uint32_t i = 0; i < n; i++) {
    if (dims[i] < 1) return FAIL("%s dim %u is %d, every dim must be at least 1", opn(op), i, dims[i]), 0;
    total *= dims[i];
    if (total > UOPC_LIMIT_ELEMS)
      return FAIL("%s shape has more than %lld elements", opn(op), (long long)UOPC_LIMIT_ELEMS), 0;
  }
  return 1;
}

static int same_shape(const uopc_node *a, const uopc_node *b) {
  return a->ndim == b->ndim && (a->ndim == 0 || memcmp(a->shape, b->shape, a->ndim * sizeof *a->shape) == 0);
}

static void *shape_mismatch(uopc_ctx *c, uopc_op op, const uopc_node *a, const uopc_node *b) {
  char sa[128], sb[128];
  uopc_shape_str(a->shape, a->ndim, sa, sizeof sa);
  uopc_shape_str(b->shape, b->ndim, sb, sizeof sb);
  return FAIL("%s shape mismatch %s vs %s", opn(op), sa, sb);
}

/* A source that carries a value (not an effect, not a buffer, not an address). */
static int is_value(const uopc_node *s) { return uopi_is_value(s); }

static const char *what(const uopc_node *s) {
  if (s->op == UOPC_OP_BUFFER) return "a BUFFER (usable only by INDEX)";
  if (s->flags & UOPC_NF_ADDR) return "an INDEX into a BUFFER (usable only by LOAD and STORE)";
  return "an effect";
}

static int is_scalar_i32(const uopc_node *s) { return is_value(s) && s->dtype == UOPC_DT_I32 && s->ndim == 0; }

/* The PARAMs of a CALL body have the slot, dtype and shape of its arguments. */
static int check_call(uopc_ctx *c, uopc_node *const *src, uint32_t n) {
  uint32_t np = 0;
  uopc_node **ps = uopc_call_params(c, src[0], &np);
  if (!ps && uopc_ctx_error(c)) return 0;
  int ok = 1;
  for (uint32_t i = 0; i < np && ok; i++) {
    uopc_node *p = ps[i];
    int64_t slot = p->arg.i;
    if (slot >= (int64_t)n - 1) {
      FAIL("CALL body uses PARAM slot %lld but the call has %u argument%s", (long long)slot, n - 1,
           n - 1 == 1 ? "" : "s");
      ok = 0;
    } else {
      uopc_node *a = src[1 + slot];
      if (a->dtype != p->dtype || !same_shape(a, p)) {
        char sa[128], sp[128];
        uopc_shape_str(a->shape, a->ndim, sa, sizeof sa);
        uopc_shape_str(p->shape, p->ndim, sp, sizeof sp);
        FAIL("CALL argument %lld is %s %s but PARAM slot %lld is %s %s", (long long)slot,
             uopc_dtype_name(a->dtype), sa, (long long)slot, uopc_dtype_name(p->dtype), sp);
        ok = 0;
      }
    }
  }
  uopc_mem_free(c, ps, (size_t)np * sizeof *ps);
  return ok;
}


/* A STACK whose sources pass every check of the general path (one loop
   instead of four): built without it.  0 when anything fails (the general
   path reports it). */
static int fast_stack(uopc_ctx *c, uopc_dtype dtype, uopc_node *const *src, uint32_t n, uopc_node **out) {
  if (n == 0 || n > INT32_MAX || !src[0]) return 0;
  const uopc_node *s0 = src[0];
  if (!is_value(s0) || s0->ndim + 1u > UOPC_LIMIT_DIMS || !uopi_owns(c, s0)) return 0;
  uopc_dtype t = (uopc_dtype)s0->dtype;
  if (dtype != UOPC_DT_VOID && dtype != t) return 0;
  for (uint32_t i = 1; i < n; i++) {
    const uopc_node *x = src[i];
    if (!x || x->dtype != t || x->op == UOPC_OP_BUFFER || (x->flags & UOPC_NF_ADDR) || !same_shape(x, s0) ||
        !uopi_owns(c, x))
      return 0;
  }
  int32_t shape[UOPC_LIMIT_DIMS + 1];
  shape[0] = (int32_t)n;
  memcpy(shape + 1, s0->shape, s0->ndim * sizeof *shape);
  int64_t total = 1;
  for (uint32_t i = 0; i <= s0->ndim; i++) {
    if (shape[i] < 1) return 0;
    total *= shape[i];
    if (total > UOPC_LIMIT_ELEMS) return 0;
  }
  uopi_key k = {.op = UOPC_OP_STACK, .dtype = t, .ndim = s0->ndim + 1u, .shape = shape, .nsrc = n, .src = src};
  *out = uopi_intern(c, &k, 0);
  return 1;
}

uopc_node *uopc_make(uopc_ctx *c, uopc_op op, uopc_dtype dtype, uopc_node *const *src, uint32_t n,
                     const uopc_arg *argp) {
  uopc_node *r;
  if (!c) return NULL;
  if (n && !src) return uopc_fail(c, UOPC_ERR_ARG, "make: %u sources given as NULL", n);
  if ((unsigned)op < UOPC_OP_COUNT && (uopi_op_flags(op) & UOPC_OPF_BINARY) && n == 2) {
    if (uopi_fast_bin(c, op, dtype, src[0], src[1], &r)) return r;
  } else if (op == UOPC_OP_CONST && n == 0 && argp && uopi_fast_const_ok(dtype, argp)) {
    return uopi_intern_const_i(c, dtype, argp->i);
  }
  if (op == UOPC_OP_STACK) {
    if (fast_stack(c, dtype, src, n, &r)) return r;
  }
  return uopi_make_checked(c, op, dtype, src, n, argp);
}

/* The general path: every check, with its message. */
__attribute__((noinline)) uopc_node *uopi_make_checked(uopc_ctx *c, uopc_op op, uopc_dtype dtype,
                                                       uopc_node *const *src, uint32_t n, const uopc_arg *argp) {
  static const uopc_arg zero_arg;
  if ((unsigned)op >= UOPC_OP_COUNT) return uopc_fail(c, UOPC_ERR_ARG, "unknown op %d", (int)op);
  if ((unsigned)dtype >= UOPC_DT_COUNT) return uopc_fail(c, UOPC_ERR_ARG, "unknown dtype %d", (int)dtype);
  for (uint32_t i = 0; i < n; i++) {
    /* a NULL source: a failed constructor's error stands */
    if (!src[i]) return c->has_err ? NULL : uopc_fail(c, UOPC_ERR_ARG, "%s source %u is NULL", opn(op), i);
    if (!uopi_owns(c, src[i]))
      return uopc_fail(c, UOPC_ERR_ARG, "%s source %u belongs to another context (nodes never cross contexts)",
                       opn(op), i);
  }
  uopc_arg arg = argp ? *argp : zero_arg;
  if (arg.n && !arg.v) return uopc_fail(c, UOPC_ERR_ARG, "%s: a tuple of %u entries given as NULL", opn(op), arg.n);
  int arity = uopc_op_arity(op);
  unsigned fl = uopc_op_flags(op);
  if (arity >= 0 && n != (uint32_t)arity)
    return FAIL("%s takes %d source%s, got %u", opn(op), arity, arity == 1 ? "" : "s", n);

  uopi_key k = {.op = op, .dtype = dtype, .nsrc = n, .src = src};
  uint8_t flags = 0;
  int32_t shape_buf[UOPC_LIMIT_DIMS + 1];
  k.shape = shape_buf;
  /* every op but INDEX, LOAD and the effects needs value sources */
  if (!(fl & UOPC_OPF_ANYSRC)) {
    for (uint32_t i = 0; i < n; i++)
      if (!is_value(src[i])) return FAIL("%s source %u is %s", opn(op), i, what(src[i]));
  }
  /* the dtype argument: required for some ops, inferred (and checked if given) for the rest */
  uopc_dtype inferred = UOPC_DT_VOID;

  if (fl & UOPC_OPF_ALU) {
    /* all ALU ops: operands equal in shape; result has that shape */
    const uopc_node *v0 = op == UOPC_OP_WHERE ? src[1] : src[0];
    for (uint32_t i = 0; i < n; i++)
      if (!same_shape(src[i], v0)) return shape_mismatch(c, op, v0, src[i]);
    k.ndim = v0->ndim;
    k.shape = v0->shape;
    switch (op) {
    case UOPC_OP_WHERE:
      if (src[0]->dtype != UOPC_DT_BOOL)
        return FAIL("WHERE condition is %s, must be bool", uopc_dtype_name(src[0]->dtype));
      if (src[1]->dtype != src[2]->dtype)
        return FAIL("WHERE dtype mismatch %s vs %s", uopc_dtype_name(src[1]->dtype), uopc_dtype_name(src[2]->dtype));
      inferred = src[1]->dtype;
      break;
    case UOPC_OP_CAST:
      if (dtype == UOPC_DT_VOID) return FAIL("CAST needs a target dtype");
      inferred = dtype;
      break;
    default:
      if ((fl & UOPC_OPF_FLOAT) && !uopc_dtype_is_float(src[0]->dtype))
        return FAIL("%s needs f32 or f16, got %s", opn(op), uopc_dtype_name(src[0]->dtype));
      if ((fl & UOPC_OPF_BINARY) && src[0]->dtype != src[1]->dtype)
        return FAIL("%s dtype mismatch %s vs %s", opn(op), uopc_dtype_name(src[0]->dtype),
                    uopc_dtype_name(src[1]->dtype));
      if ((fl & UOPC_OPF_INT) && src[0]->dtype != UOPC_DT_I32)
        return FAIL("%s needs i32, got %s", opn(op), uopc_dtype_name(src[0]->dtype));
      inferred = (fl & UOPC_OPF_CMP) ? UOPC_DT_BOOL : src[0]->dtype;
    }
    arg = zero_arg;
  } else {
    switch (op) {
    case UOPC_OP_CONST:
      inferred = dtype;
      k.ndim = 0;
      if (dtype == UOPC_DT_VOID) return FAIL("CONST needs a dtype");
      if (uopc_dtype_is_float(dtype)) {
        if (arg.i != 0) return FAIL("CONST %s value must be given as a float", uopc_dtype_name(dtype));
        if (isnan(arg.f)) arg.f = NAN; /* every NaN is the same constant */
      } else {
        if (arg.f != 0 || signbit(arg.f)) return FAIL("CONST %s value must be given as an integer", uopc_dtype_name(dtype));
        if (dtype == UOPC_DT_BOOL && arg.i != 0 && arg.i != 1) return FAIL("CONST bool value %lld is not 0 or 1", (long long)arg.i);
        if (dtype == UOPC_DT_I32 && (arg.i < INT32_MIN || arg.i > INT32_MAX))
          return FAIL("CONST %lld is out of the i32 range", (long long)arg.i);
      }
      if (arg.n || arg.rop || arg.name) return FAIL("CONST takes no tuple, op or name");
      break;
    case UOPC_OP_PARAM:
    case UOPC_OP_BUFFER:
      inferred = dtype;
      if (dtype == UOPC_DT_VOID) return FAIL("%s needs a dtype", opn(op));
      if (arg.i < 0 || arg.i > INT32_MAX) return FAIL("%s slot %lld is out of range", opn(op), (long long)arg.i);
      if (op == UOPC_OP_BUFFER && arg.n != 1) return FAIL("BUFFER shape must have one dim, got %u", arg.n);
      if (!check_dims(c, op, arg.v, arg.n)) return NULL;
      k.ndim = arg.n;
      k.shape = arg.v;
      arg.f = 0, arg.rop = 0, arg.name = NULL;
      break;
    case UOPC_OP_RANGE:
      if (!is_scalar_i32(src[0])) return FAIL("RANGE end must be an i32 scalar");
      if (arg.i < 0 || arg.i > INT32_MAX) return FAIL("RANGE idx %lld is out of range", (long long)arg.i);
      inferred = UOPC_DT_I32;
      k.ndim = 0;
      arg = (uopc_arg){.i = arg.i};
      break;
    case UOPC_OP_STACK:
      if (n == 0) return FAIL("STACK needs at least one source");
      for (uint32_t i = 1; i < n; i++) {
        if (src[i]->dtype != src[0]->dtype)
          return FAIL("STACK dtype mismatch %s vs %s", uopc_dtype_name(src[0]->dtype), uopc_dtype_name(src[i]->dtype));
        if (!same_shape(src[i], src[0])) return shape_mismatch(c, op, src[0], src[i]);
      }
      if (src[0]->ndim + 1u > UOPC_LIMIT_DIMS) return FAIL("STACK result has more than %d dims", UOPC_LIMIT_DIMS);
      if (n > INT32_MAX) return FAIL("STACK has too many sources");
      shape_buf[0] = (int32_t)n;
      memcpy(shape_buf + 1, src[0]->shape, src[0]->ndim * sizeof *shape_buf);
      k.ndim = src[0]->ndim + 1u;
      if (!check_dims(c, op, shape_buf, k.ndim)) return NULL;
      inferred = src[0]->dtype;
      arg = zero_arg;
      break;
    case UOPC_OP_INDEX: {
      if (n == 0) return FAIL("INDEX needs a source");
      uopc_node *x = src[0];
      for (uint32_t i = 1; i < n; i++)
        if (!is_scalar_i32(src[i])) return FAIL("INDEX index %u must be an i32 scalar", i - 1);
      if (x->op == UOPC_OP_BUFFER) {
        if (n != 2) return FAIL("INDEX of a BUFFER takes exactly one index, got %u", n - 1);
        flags |= UOPC_NF_ADDR;
        k.ndim = 0;
      } else {
        if (!is_value(x)) return FAIL("INDEX source 0 is %s", what(x));
        if (n - 1 > x->ndim) return FAIL("INDEX has %u indices but its source has %u dims", n - 1, (unsigned)x->ndim);
        k.ndim = x->ndim - (n - 1);
        k.shape = x->shape + (n - 1);
      }
      inferred = x->dtype;
      arg = zero_arg;
      break;
    }
    case UOPC_OP_CALL:
      if (n == 0) return FAIL("CALL needs a body");
      if (!check_call(c, src, n)) return NULL;
      inferred = src[0]->dtype;
      k.ndim = src[0]->ndim;
      k.shape = src[0]->shape;
      arg = (uopc_arg){.name = arg.name && arg.name[0] ? arg.name : NULL};
      break;
    case UOPC_OP_RESHAPE:
    case UOPC_OP_EXPAND: {
      uopc_node *x = src[0];
      if (!check_dims(c, op, arg.v, arg.n)) return NULL;
      char sa[128], sb[128];
      uopc_shape_str(x->shape, x->ndim, sa, sizeof sa);
      uopc_shape_str(arg.v, arg.n, sb, sizeof sb);
      if (op == UOPC_OP_RESHAPE) {
        int64_t ne = 1;
        for (uint32_t i = 0; i < arg.n; i++) ne *= arg.v[i];
        if (ne != uopc_numel(x)) return FAIL("RESHAPE from %s to %s changes the element count", sa, sb);
      } else {
        if (arg.n != x->ndim) return FAIL("EXPAND from %s to %s changes the number of dims", sa, sb);
        for (uint32_t i = 0; i < arg.n; i++)
          if (x->shape[i] != arg.v[i] && x->shape[i] != 1)
            return FAIL("EXPAND from %s to %s: only axes of size 1 can grow", sa, sb);
      }
      k.ndim = arg.n;
      k.shape = arg.v;
      inferred = x->dtype;
      arg = (uopc_arg){.n = arg.n, .v = arg.v};
      break;
    }
    case UOPC_OP_PERMUTE: {
      uopc_node *x = src[0];
      if (arg.n != x->ndim) return FAIL("PERMUTE of %u dims needs a permutation of %u, got %u entries", x->ndim, x->ndim, arg.n);
      uint8_t seen[UOPC_LIMIT_DIMS] = {0};
      for (uint32_t i = 0; i < arg.n; i++) {
        if (arg.v[i] < 0 || (uint32_t)arg.v[i] >= arg.n || seen[arg.v[i]])
          return FAIL("PERMUTE arg is not a permutation of 0..%u", arg.n - 1);
        seen[arg.v[i]] = 1;
        shape_buf[i] = x->shape[arg.v[i]];
      }
      k.ndim = arg.n;
      inferred = x->dtype;
      arg = (uopc_arg){.n = arg.n, .v = arg.v};
      break;
    }
    case UOPC_OP_SHRINK: {
      uopc_node *x = src[0];
      if (arg.n != x->ndim) return FAIL("SHRINK of %u dims needs %u (begin, end) pairs, got %u", x->ndim, x->ndim, arg.n);
      for (uint32_t i = 0; i < arg.n; i++) {
        int32_t b = arg.v[2 * i], e = arg.v[2 * i + 1];
        if (!(0 <= b && b < e && e <= x->shape[i]))
          return FAIL("SHRINK axis %u: (%d, %d) must satisfy 0 <= begin < end <= %d", i, b, e, x->shape[i]);
        shape_buf[i] = e - b;
      }
      k.ndim = arg.n;
      inferred = x->dtype;
      arg = (uopc_arg){.n = arg.n, .v = arg.v};
      break;
    }
    case UOPC_OP_REDUCE: {
      uopc_node *x = src[0];
      if (arg.rop != UOPC_OP_ADD && arg.rop != UOPC_OP_MUL && arg.rop != UOPC_OP_MAX)
        return FAIL("REDUCE op must be add, mul or max");
      if (arg.i < 1 || arg.i > x->ndim)
        return FAIL("REDUCE pop=%lld must be between 1 and the number of dims (%u)", (long long)arg.i, x->ndim);
      k.ndim = x->ndim - (uint32_t)arg.i;
      k.shape = x->shape;
      inferred = x->dtype;
      arg = (uopc_arg){.i = arg.i, .rop = arg.rop};
      break;
    }
    case UOPC_OP_LOAD:
      if (!(src[0]->flags & UOPC_NF_ADDR)) return FAIL("LOAD needs an INDEX into a BUFFER");
      inferred = src[0]->dtype;
      k.ndim = 0;
      arg = zero_arg;
      break;
    case UOPC_OP_STORE:
      if (!(src[0]->flags & UOPC_NF_ADDR)) return FAIL("STORE needs an INDEX into a BUFFER");
      if (!is_value(src[1])) return FAIL("STORE value is %s", what(src[1]));
      if (src[1]->ndim != 0) return FAIL("STORE value must be a scalar");
      if (src[1]->dtype != src[0]->dtype)
        return FAIL("STORE value is %s but the buffer is %s", uopc_dtype_name(src[1]->dtype), uopc_dtype_name(src[0]->dtype));
      inferred = UOPC_DT_VOID;
      k.ndim = 0;
      arg = zero_arg;
      break;
    case UOPC_OP_END:
      if (n < 2) return FAIL("END needs a value and at least one RANGE");
      if (src[0]->dtype != UOPC_DT_VOID) return FAIL("END source 0 must be an effect (STORE or END)");
      for (uint32_t i = 1; i < n; i++)
        if (src[i]->op != UOPC_OP_RANGE) return FAIL("END source %u must be a RANGE, got %s", i, opn(src[i]->op));
      inferred = UOPC_DT_VOID;
      k.ndim = 0;
      arg = zero_arg;
      break;
    case UOPC_OP_SINK:
      if (n == 0) return FAIL("SINK needs at least one source");
      for (uint32_t i = 0; i < n; i++)
        if (src[i]->dtype != UOPC_DT_VOID) return FAIL("SINK source %u must be an effect (STORE, END or SINK)", i);
      inferred = UOPC_DT_VOID;
      k.ndim = 0;
      arg = zero_arg;
      break;
    default:
      uopi_unreachable();
    }
  }
  if (op != UOPC_OP_CONST && op != UOPC_OP_PARAM && op != UOPC_OP_BUFFER && op != UOPC_OP_CAST && dtype != UOPC_DT_VOID &&
      dtype != inferred)
    return FAIL("%s has dtype %s, not %s", opn(op), uopc_dtype_name(inferred), uopc_dtype_name(dtype));
  k.dtype = inferred;
  k.arg = arg;
  return uopi_intern(c, &k, flags);
}

uopc_node *uopc_replace(uopc_ctx *c, uopc_node *u, uopc_node *const *src, uint32_t n) {
  if (!c) return NULL;
  if (!u || !uopi_owns(c, u)) { /* the check inline; the call only to record why */
    (void)uopi_check_node(c, u, "replace");
    return NULL;
  }
  if (n && !src) return uopc_fail(c, UOPC_ERR_ARG, "replace: sources are NULL");
  if (n == u->nsrc) {
    uint32_t i = 0;
    while (i < n && src[i] == u->src[i]) i++;
    if (i == n) return u;
  }
  uopc_node *r;
  if ((uopi_op_flags(u->op) & UOPC_OPF_BINARY) && n == 2 && uopi_fast_bin(c, (uopc_op)u->op, UOPC_DT_VOID, src[0], src[1], &r)) return r;
  uopc_arg a = u->arg;
  if (u->op == UOPC_OP_PARAM || u->op == UOPC_OP_BUFFER) {
    a.n = u->ndim;
    a.v = u->shape;
  }
  uopc_dtype t = (u->op == UOPC_OP_CAST || u->op == UOPC_OP_CONST) ? (uopc_dtype)u->dtype : UOPC_DT_VOID;
  return uopc_make(c, (uopc_op)u->op, t, src, n, &a);
}
