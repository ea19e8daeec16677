/* lib/algebra/exec_alu_vec.h - uopc_exec_alu_n's fast paths, four cases at a
 * time (exec_alu_vec.c).  Internal to lib/algebra. */
#ifndef UOPI_ALGEBRA_EXEC_ALU_VEC_H
#define UOPI_ALGEBRA_EXEC_ALU_VEC_H

#include <stddef.h>

#include "uopc/algebra.h"

/* For op ADD or MUL with in and out dtype t = F32 or F16: cases 0 .. k-1 of
   uopc_exec_alu_n (operands in[2i], in[2i+1]; out[i] and ok[i] = 1, the same
   bits as uopc_exec_alu), for the largest multiple of 4, k <= n; returns k.
   Any other (op, t): nothing written, returns 0.  The pointers are not
   checked (uopc_exec_alu_n has). */
size_t uopi_exec_alu_vec(uopc_op op, uopc_dtype t, const uopc_val *in, size_t n, uopc_val *out, unsigned char *ok);

#endif
