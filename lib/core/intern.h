/* lib/core/intern.h - the hash-cons table. */
#ifndef UOPI_CORE_INTERN_H
#define UOPI_CORE_INTERN_H

#include "core/ctx.h"

/* A node to be: everything that makes it what it is. */
typedef struct uopi_key {
  uopc_op op;
  uopc_dtype dtype;
  uint32_t ndim;
  const int32_t *shape;
  uint32_t nsrc;
  uopc_node *const *src;
  uopc_arg arg;
} uopi_key;

UOPI_FUNC uint32_t uopi_key_hash(const uopi_key *k);
/* The canonical node for k (checked by the caller), built on a miss.
   NULL + error on OOM. */
UOPI_FUNC uopc_node *uopi_intern(uopc_ctx *c, const uopi_key *k, uint8_t flags);
/* uopi_intern of a scalar node of an op whose arg is always empty, with
   sources a and b (checked by the caller), and no flags. */
UOPI_FUNC uopc_node *uopi_intern2(uopc_ctx *c, uopc_op op, uopc_dtype t, uopc_node *a, uopc_node *b);
/* uopi_intern of a bool/i32 CONST of value v (checked by the caller). */
UOPI_FUNC uopc_node *uopi_intern_const_i(uopc_ctx *c, uopc_dtype t, int64_t v);

#endif
