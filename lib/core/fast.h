/* lib/core/fast.h - the constructors' fast paths, shared by make.c (the
 * checked constructor) and build.c (the sugar): a binary ALU op on two
 * scalars and an int constant, when every check of the general path would
 * pass, go straight to the hash-cons table.  When a check fails, or
 * anything is unusual, they decline and the caller takes the general path,
 * which reports.  So a fast path never changes what a constructor returns or
 * which error it records; it only skips the layers (uopc_add -> uopc_alu2 ->
 * uopc_alu -> uopc_make) between the call and the table.
 */
#ifndef UOPI_CORE_FAST_H
#define UOPI_CORE_FAST_H

#include <string.h>

#include "core/intern.h"

/* uopc_make's general path, without its fast paths: every check, with its
   message (c not NULL).  What the fast paths must agree with (for tests). */
UOPI_FUNC uopc_node *uopi_make_checked(uopc_ctx *c, uopc_op op, uopc_dtype dtype, uopc_node *const *src, uint32_t n,
                                       const uopc_arg *argp);

/* A source that carries a value (not an effect, not a buffer, not an
   address): make.c's is_value. */
static inline int uopi_is_value(const uopc_node *s) {
  return s->dtype != UOPC_DT_VOID && s->op != UOPC_OP_BUFFER && !(s->flags & UOPC_NF_ADDR);
}

/* A binary ALU op (op has UOPC_OPF_BINARY) on two scalars that pass every
   check of uopc_make's general path, with result dtype `dtype` (VOID: the
   inferred one): 1 and *out = the node (NULL + error when out of memory).
   0 when a check fails or anything is unusual (NULL sources, another
   context's node, shapes, dtypes): the general path runs and reports. */
static inline int uopi_fast_bin(uopc_ctx *c, uopc_op op, uopc_dtype dtype, uopc_node *a, uopc_node *b,
                                uopc_node **out) {
  if (!a || !b || a->ndim != 0 || b->ndim != 0 || a->dtype != b->dtype || !uopi_owns(c, a) || !uopi_owns(c, b)) return 0;
  uopc_dtype t = (uopc_dtype)a->dtype;
  if (t == UOPC_DT_VOID || a->op == UOPC_OP_BUFFER || b->op == UOPC_OP_BUFFER || ((a->flags | b->flags) & UOPC_NF_ADDR))
    return 0;
  unsigned fl = uopi_op_flags(op);
  if ((fl & UOPC_OPF_INT) && t != UOPC_DT_I32) return 0;
  uopc_dtype inferred = (fl & UOPC_OPF_CMP) ? UOPC_DT_BOOL : t;
  if (dtype != UOPC_DT_VOID && dtype != inferred) return 0;
  *out = uopi_intern2(c, op, inferred, a, b);
  return 1;
}

/* 1 when a CONST of dtype `dtype` with arg *a is a bool/i32 constant that
   passes the general path's checks (then uopi_intern_const_i builds it). */
static inline int uopi_fast_const_ok(uopc_dtype dtype, const uopc_arg *a) {
  if (dtype != UOPC_DT_I32 && dtype != UOPC_DT_BOOL) return 0;
  uint64_t fb;
  memcpy(&fb, &a->f, sizeof fb);
  if (fb || a->n || a->rop || a->name) return 0;
  return dtype == UOPC_DT_BOOL ? (a->i == 0 || a->i == 1) : (a->i >= INT32_MIN && a->i <= INT32_MAX);
}

#endif
