/* lib/algebra/exec_alu_vec.h - uopc_exec_alu_n's fast paths, four cases at a
 * time (exec_alu_vec.c).  Internal to lib/algebra. */
#ifndef UOPI_ALGEBRA_EXEC_ALU_VEC_H
#define UOPI_ALGEBRA_EXEC_ALU_VEC_H

#include <stddef.h>

#include "uopc/algebra.h"

/* For (op, out_t, in_t) in exec_alu's domain (the caller checks it): with
   in_t F32 or F16, op ADD, MUL, MAX, CMPLT, CMPNE, WHERE, SQRT or RECIP;
   with in_t I32, op ADD, MUL, MAX, CMPLT, CMPNE, WHERE, FLOORDIV or
   FLOORMOD; CAST from any of F32, F16, I32 and BOOL: cases 0 .. k-1 of
   uopc_exec_alu_n (a case's operands in[s*i] .. in[s*i+s-1], s = 1 for a
   unary op, 3 for WHERE, else 2; ok[i] and out[i] as uopc_exec_alu gives
   them: out[i] untouched where it refuses, which only FLOORDIV, FLOORMOD
   and CAST to I32 do), for the largest multiple of 4, k <= n; returns k.
   Any other op or dtype, or a CPU without AVX2: nothing written, returns 0.
   The pointers are not checked (uopc_exec_alu_n has). */
size_t uopi_exec_alu_vec(uopc_op op, uopc_dtype out_t, uopc_dtype in_t, const uopc_val *in, size_t n, uopc_val *out,
                         unsigned char *ok);

#endif
