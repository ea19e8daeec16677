/* lib/lower/linearize.h - a prepared kernel as an ordered program: the
 * linearize stage (linearize.c), and the program format that the emitter
 * (lib/codegen) translates one instruction at a time (docs/lowering.md,
 * "The linearized program").
 *
 * A program is an array of instructions in execution order.  Four kinds:
 *
 *   VALUE    %n = op(operands)   a scalar: CONST, INDEX (an address in a
 *                                BUFFER), LOAD, or an ALU op; `node` is the
 *                                graph node it computes
 *   LOOP     loop %n < %end      opens a loop; %n is its counter, 0 .. end-1
 *                                (i32, step 1; `node` is the RANGE)
 *   ENDLOOP  endloop %n          closes the innermost open loop, the LOOP %n
 *   STORE    store %addr, %v     writes v through the INDEX %addr
 *
 * Invariants (uopi_prog_verify checks them):
 *   - operands are earlier instructions, and VALUE or LOOP ones;
 *   - LOOP and ENDLOOP nest like brackets; `depth` is the number of loops
 *     open around an instruction (LOOP and ENDLOOP carry the depth outside
 *     their loop); an operand is defined at a depth whose loops are still
 *     open where it is used (nothing defined in a loop is used after it);
 *   - effects run in program order: STOREs, and guarded INDEXes (whose
 *     bounds check can end the kernel), appear in the order the kernel's
 *     SINK/END nesting gives them, each inside exactly the loops of its END;
 *   - read-after-write through a buffer is sequential: a value that read
 *     (through any chain of operands) a LOAD of slot s is never used after a
 *     STORE to s that follows the LOAD in program order, counting the STOREs
 *     of earlier iterations of every loop around the use: within a loop
 *     that stores s, such a LOAD is made inside the loop, after the last
 *     STORE to s before its use;
 *   - every other value sits at the outermost depth its operands allow
 *     (loop-invariant values are hoisted in front of the loops they do not
 *     depend on), at most once per scope: an instance is reused while it
 *     stays valid.
 *
 * The format is meant to grow: accumulators of REDUCE (a small register
 * buffer with its own LOAD/STORE), vector widths per loop, threads over
 * outer loops would be new kinds or flags here, and new cases in the
 * emitter, without changing how the program is built.
 *
 * Threads: a program belongs to one context, used by one thread.
 */
#ifndef UOPI_LOWER_LINEARIZE_H
#define UOPI_LOWER_LINEARIZE_H

#include <stdio.h>

#include "lower/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum uopi_pkind {
  UOPI_P_VALUE,   /* a scalar value (CONST, INDEX, LOAD, ALU) */
  UOPI_P_LOOP,    /* opens a loop; its value is the counter */
  UOPI_P_ENDLOOP, /* closes the innermost loop (src[0]: its LOOP) */
  UOPI_P_STORE,   /* *src[0] = src[1] */
} uopi_pkind;

/* INDEX: the index is not proven inside the buffer by bounds, so the
   address is checked at run time (an out-of-bounds index ends the kernel
   with the status word set: an effect, kept in program order). */
#define UOPI_PF_GUARD 1u

typedef struct uopi_pinst {
  uint8_t kind;    /* uopi_pkind */
  uint8_t op;      /* uopc_op of node (VALUE: its op; LOOP: RANGE; STORE: STORE) */
  uint8_t dtype;   /* uopc_dtype of the value (VALUE, LOOP: i32; STORE: of the stored value) */
  uint8_t flags;   /* UOPI_PF_* */
  uint32_t depth;  /* loops open around it (LOOP/ENDLOOP: outside their loop) */
  uint32_t nsrc;   /* operands in src (0..3) */
  uint32_t src[3]; /* operands: indices of earlier instructions */
  int32_t slot;    /* INDEX, LOAD, STORE: the BUFFER slot; else -1 */
  uopc_node *node; /* the graph node: arg, shape, bounds (STORE: the STORE node) */
} uopi_pinst;

typedef struct uopi_prog {
  uopc_ctx *c;         /* the allocator of ins */
  uopi_pinst *ins;     /* n instructions in execution order */
  uint32_t n, cap;
  uint32_t nbufs;      /* BUFFER slots 0 .. nbufs-1 (the kernel's) */
  uint32_t max_depth;  /* the deepest loop nest */
} uopi_prog;

/* The program of the prepared kernel k (uopi_kernel_prepare).  Iterative
   (any depth of loops, SINK/END nesting or operand chains); memory in
   proportion to the kernel, not to the context.  UOPC_OK, or an error in the
   context (UOPC_ERR_TYPE: a RANGE used outside its loops, a loop opened
   inside itself, an op that is not a kernel op; UOPC_ERR_NOMEM) with *out
   empty.  Free with uopi_prog_free. */
UOPI_FUNC uopc_status uopi_linearize(uopc_ctx *c, const uopi_kernel_ir *k, uopi_prog *out);

/* Frees the program's arrays.  NULL, or a zeroed program, is a no-op. */
UOPI_FUNC void uopi_prog_free(uopi_prog *p);

/* Checks the invariants above: 0 when p keeps them; 1 when one fails (a
   bug: *why says which, a static string, and *at the instruction); -1 when
   out of memory (the context's error set; nothing checked).  Used between
   stages under UOPC_DEBUG=check (lib/compile.c). */
UOPI_FUNC int uopi_prog_verify(const uopi_prog *p, const char **why, uint32_t *at);

/* Writes p to f, one instruction a line, indented by depth (the dump of
   UOPC_DEBUG=linearize). */
UOPI_FUNC void uopi_prog_print(const uopi_prog *p, FILE *f);

#ifdef __cplusplus
}
#endif
#endif
