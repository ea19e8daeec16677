/* uopc/ops.h - the one list of ops and dtypes.
 *
 * Every table about ops (enum, names, arity, properties) is generated from
 * UOPC_OPS.  Columns: NAME, lower-case spelling in .uir, arity (-1: any
 * number of sources), property flags.
 */
#ifndef UOPC_OPS_H
#define UOPC_OPS_H

#include <stdint.h>

#define UOPC_OPF_ALU 1u       /* elementwise arithmetic: folded by exec_alu */
#define UOPC_OPF_COMM 2u      /* commutative: patterns [op ...] try both orders */
#define UOPC_OPF_UNARY 4u     /* one source */
#define UOPC_OPF_MOVE 8u      /* movement op: RESHAPE EXPAND PERMUTE SHRINK */
#define UOPC_OPF_EFFECT 16u   /* no value: STORE END SINK */
#define UOPC_OPF_BINARY 32u   /* a binary ALU op: two operands of one dtype */
#define UOPC_OPF_CMP 64u      /* a comparison: the result is bool */
#define UOPC_OPF_INT 128u     /* i32 operands only */
#define UOPC_OPF_FLOAT 256u   /* f32/f16 operands only */
#define UOPC_OPF_ANYSRC 512u  /* sources may be addresses or effects, not only values */

#define UOPC_OPF_BIN (UOPC_OPF_ALU | UOPC_OPF_BINARY)
#define UOPC_OPF_UN (UOPC_OPF_ALU | UOPC_OPF_UNARY)

/*        NAME      spelling   arity flags                                            meaning */
#define UOPC_OPS(X)                                                                                \
  X(CONST,    const,    0,  0)                                       /* a constant scalar */          \
  X(PARAM,    param,    0,  0)                                       /* function/program input */     \
  X(BUFFER,   buffer,   0,  0)                                       /* kernel memory argument */     \
  X(RANGE,    range,    1,  0)                                       /* loop variable 0..END-1 */     \
  X(ADD,      add,      2,  UOPC_OPF_BIN | UOPC_OPF_COMM)            /* a + b (bool: or) */           \
  X(MUL,      mul,      2,  UOPC_OPF_BIN | UOPC_OPF_COMM)            /* a * b (bool: and) */          \
  X(MAX,      max,      2,  UOPC_OPF_BIN | UOPC_OPF_COMM)            /* b if b > a else a */          \
  X(CMPLT,    cmplt,    2,  UOPC_OPF_BIN | UOPC_OPF_CMP)             /* a < b */                      \
  X(CMPNE,    cmpne,    2,  UOPC_OPF_BIN | UOPC_OPF_CMP | UOPC_OPF_COMM) /* a != b */                 \
  X(FLOORDIV, floordiv, 2,  UOPC_OPF_BIN | UOPC_OPF_INT)             /* Python a // b (i32) */        \
  X(FLOORMOD, floormod, 2,  UOPC_OPF_BIN | UOPC_OPF_INT)             /* Python a % b (i32) */         \
  X(WHERE,    where,    3,  UOPC_OPF_ALU)                            /* c ? a : b */                  \
  X(RECIP,    recip,    1,  UOPC_OPF_UN | UOPC_OPF_FLOAT)            /* 1/a */                        \
  X(EXP2,     exp2,     1,  UOPC_OPF_UN | UOPC_OPF_FLOAT)            /* libm exp2 on double */        \
  X(LOG2,     log2,     1,  UOPC_OPF_UN | UOPC_OPF_FLOAT)            /* libm log2 on double */        \
  X(SQRT,     sqrt,     1,  UOPC_OPF_UN | UOPC_OPF_FLOAT)            /* IEEE sqrt */                  \
  X(SIN,      sin,      1,  UOPC_OPF_UN | UOPC_OPF_FLOAT)            /* libm sin on double */         \
  X(CAST,     cast,     1,  UOPC_OPF_UN)                             /* C conversion to dtype */      \
  X(STACK,    stack,   -1,  0)                                       /* (n,)+shape(a) value */        \
  X(INDEX,    index,   -1,  UOPC_OPF_ANYSRC)                         /* element or buffer address */  \
  X(CALL,     call,    -1,  0)                                       /* apply body to args */         \
  X(RESHAPE,  reshape,  1,  UOPC_OPF_MOVE)                           /* new shape, same order */      \
  X(EXPAND,   expand,   1,  UOPC_OPF_MOVE)                           /* grow axes of size 1 */        \
  X(PERMUTE,  permute,  1,  UOPC_OPF_MOVE)                           /* reorder axes */               \
  X(SHRINK,   shrink,   1,  UOPC_OPF_MOVE)                           /* sub-box ((b, e), ...) */      \
  X(REDUCE,   reduce,   1,  0)                                       /* reduce the last K axes */     \
  X(LOAD,     load,     1,  UOPC_OPF_ANYSRC)                         /* read through an INDEX */      \
  X(STORE,    store,    2,  UOPC_OPF_EFFECT | UOPC_OPF_ANYSRC)       /* write through an INDEX */     \
  X(END,      end,     -1,  UOPC_OPF_EFFECT | UOPC_OPF_ANYSRC)       /* close loops around value */   \
  X(SINK,     sink,    -1,  UOPC_OPF_EFFECT | UOPC_OPF_ANYSRC)       /* kernel root */

typedef enum uopc_op {
#define UOPC_X_ENUM(N, s, a, f) UOPC_OP_##N,
  UOPC_OPS(UOPC_X_ENUM)
#undef UOPC_X_ENUM
  UOPC_OP_COUNT
} uopc_op;

/* Dtypes.  VOID is the dtype of effects (STORE, END, SINK). */
#define UOPC_DTYPES(X) \
  X(BOOL, bool)        \
  X(I32, i32)          \
  X(F32, f32)          \
  X(F16, f16)          \
  X(VOID, void)

typedef enum uopc_dtype {
#define UOPC_X_DT(N, s) UOPC_DT_##N,
  UOPC_DTYPES(UOPC_X_DT)
#undef UOPC_X_DT
  UOPC_DT_COUNT
} uopc_dtype;

#endif
