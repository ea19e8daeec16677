/* lib/core/ops.c - op and dtype property tables, generated from ops.h. */
#include <string.h>

#include "internal.h"

static const char *const op_names[] = {
#define X(N, s, a, f) #N,
    UOPC_OPS(X)
#undef X
};
static const char *const op_spellings[] = {
#define X(N, s, a, f) #s,
    UOPC_OPS(X)
#undef X
};
static const int op_arity[] = {
#define X(N, s, a, f) a,
    UOPC_OPS(X)
#undef X
};
const unsigned uopi_op_flag_table[UOPC_OP_COUNT] = {
#define X(N, s, a, f) f,
    UOPC_OPS(X)
#undef X
};
static const char *const dt_names[] = {
#define X(N, s) #s,
    UOPC_DTYPES(X)
#undef X
};

const char *uopc_op_name(uopc_op op) { return (unsigned)op < UOPC_OP_COUNT ? op_names[op] : "?"; }
const char *uopc_op_spelling(uopc_op op) { return (unsigned)op < UOPC_OP_COUNT ? op_spellings[op] : "?"; }
int uopc_op_arity(uopc_op op) { return (unsigned)op < UOPC_OP_COUNT ? op_arity[op] : 0; }
unsigned uopc_op_flags(uopc_op op) { return (unsigned)op < UOPC_OP_COUNT ? uopi_op_flag_table[op] : 0; }
const char *uopc_dtype_name(uopc_dtype t) { return (unsigned)t < UOPC_DT_COUNT ? dt_names[t] : "?"; }
int uopc_dtype_is_float(uopc_dtype t) { return t == UOPC_DT_F32 || t == UOPC_DT_F16; }

size_t uopc_dtype_size(uopc_dtype t) {
  switch (t) {
  case UOPC_DT_BOOL: return 1;
  case UOPC_DT_F16: return 2;
  case UOPC_DT_I32: case UOPC_DT_F32: return 4;
  default: return 0;
  }
}

int uopc_op_parse(const char *s, size_t len) {
  if (!s) return -1;
  for (int i = 0; i < UOPC_OP_COUNT; i++)
    if (strlen(op_spellings[i]) == len && memcmp(op_spellings[i], s, len) == 0) return i;
  return -1;
}

int uopc_dtype_parse(const char *s, size_t len) {
  if (!s) return -1;
  for (int i = 0; i < UOPC_DT_COUNT; i++)
    if (strlen(dt_names[i]) == len && memcmp(dt_names[i], s, len) == 0) return i;
  return -1;
}
