/* lib/schedule/schedule.h - rangeify: a tensor program becomes a schedule of
 * loop kernels over buffers (docs/schedule.md).
 *
 *   realize.c   the program made ready: CALLs inlined (scoped); which nodes
 *               get a buffer of their own (materialized) and which fuse into
 *               their consumers; constant data for STACK literals
 *   lower.c     one materialized node as a kernel graph: the node's output
 *               ranges pushed back through movement ops to every buffer it
 *               reads (index arithmetic, simplified exactly), REDUCE as an
 *               accumulation loop in `run`'s order, undefined operations as
 *               poison codes checked at every store
 *   schedule.c  the whole schedule: buffers, kernels in order, checks
 *
 * The schedule names buffers by index; a kernel graph refers to plan buffer
 * b as BUFFER(slot = b) until its slots are renumbered 0..n-1 (kernel->map
 * says which plan buffer each slot is).  Nothing here compiles: the pipeline
 * (lib/plan.c) compiles the kernels and runs them.
 */
#ifndef UOPI_SCHEDULE_H
#define UOPI_SCHEDULE_H

#include "internal.h"
#include "support/support.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum uopi_pb_kind {
  UOPI_PB_INPUT,   /* a PARAM of the program: the caller's array */
  UOPI_PB_CONST,   /* constant data (a STACK literal) owned by the plan */
  UOPI_PB_TEMP,    /* a materialized intermediate, allocated per call */
  UOPI_PB_OUTPUT,  /* the program's value: the caller's array */
  UOPI_PB_STATUS,  /* a kernel's poison record: i32[4] (code, operands) */
  UOPI_PB_STATUSF, /* ... and f32[1] (a cast's float operand) */
  UOPI_PB_POISON,  /* a temporary's poison ranks: i32 per element, zeroed per call */
} uopi_pb_kind;

typedef struct uopi_pbuf {
  uopi_pb_kind kind;
  uopc_dtype dtype;
  uint32_t ndim;
  int32_t *shape;     /* ndim dims (context memory) */
  int64_t numel;      /* elements (1 for a scalar) */
  int64_t slot;       /* INPUT: the PARAM slot */
  void *data;         /* CONST: numel values in buffer layout (malloc) */
  uopc_node *node;    /* the program node it holds (INPUT, CONST, TEMP, OUTPUT) */
  uint32_t poison;    /* TEMP: its UOPI_PB_POISON buffer, or UINT32_MAX (never poison) */
  int transposed;     /* TEMP: a transposed copy of another buffer (slot), made
                         (with its kernel) by the loop passes of lower.c, not
                         lowered again: its panel width (1: the plain transpose);
                         0 for every other buffer */
} uopi_pbuf;

/* What a poison code means (a check in a kernel). */
typedef enum uopi_check_kind {
  UOPI_CHECK_DIV0,      /* FLOORDIV/FLOORMOD by zero: operands in status[1], [2] */
  UOPI_CHECK_OVERFLOW,  /* INT_MIN // -1, INT_MIN % -1 */
  UOPI_CHECK_CAST,      /* float to i32 outside the range: operand in statusf[0] */
  UOPI_CHECK_INDEX,     /* INDEX by a value out of range: the index in status[1] */
} uopi_check_kind;

typedef struct uopi_scheck {
  uopi_check_kind kind;
  uopc_op op;           /* the op that is undefined */
  int64_t size;         /* INDEX: the axis size */
  const uopc_node *at;  /* the program node (for its .uir position) */
  uint32_t kernel;      /* the kernel that computes the op: its status has the operands */
} uopi_scheck;

typedef struct uopi_skernel {
  uopc_node *root;      /* the kernel graph (SINK), slots renumbered */
  uint32_t nbufs;
  uint32_t *map;        /* kernel slot -> plan buffer (nbufs entries) */
  uint32_t out;         /* the plan buffer it computes */
  uint32_t status;      /* its UOPI_PB_STATUS buffer, or UINT32_MAX */
  uint32_t statusf;     /* its UOPI_PB_STATUSF buffer, or UINT32_MAX */
  uopc_node *rec;       /* the recording variant (lower.c), or NULL: root
                           records no operands (no check).  Run only to find
                           the operands of a failure: root without records */
  uint32_t rec_nbufs;
  uint32_t *rec_map;    /* rec's slot -> plan buffer */
  double tiled;         /* its register tile's multiply-adds (lower.c's loop
                           passes: elements x reduce length); 0: no tile */
} uopi_skernel;

typedef struct uopi_schedule {
  uopc_ctx *c;
  uopc_node *program;   /* after CALL inlining */
  uint32_t nbufs, cap_bufs;
  uopi_pbuf *bufs;
  uint32_t out;         /* the OUTPUT buffer */
  uint32_t nkernels, cap_kernels;
  uopi_skernel *kernels; /* in execution order */
  uint32_t nchecks, cap_checks;
  uopi_scheck *checks;   /* code k is checks[k - 1] */
  unsigned flags;        /* UOPC_COMPILE_* bits (jit.h): which loop passes run */
  unsigned vector_bits;  /* the target's vector width (128, 256, 512): the register tiles' shape */
} uopi_schedule;

/* Schedules the program rooted at root (a value: not a SINK/STORE/END),
   with the loop passes of flags, register tiles shaped for vector_bits
   (the JIT's uopi_jit_vector_bits; 0 or below 128: 128).
   Kernel graphs and arrays live in c.  On error returns the status with the
   context's error set (naming the node, at its .uir position when known).
   Free with uopi_schedule_free (the CONST data). */
UOPI_FUNC uopc_status uopi_schedule_build(uopc_ctx *c, uopc_node *root, unsigned flags, unsigned vector_bits,
                                          uopi_schedule *out);
UOPI_FUNC void uopi_schedule_free(uopi_schedule *s);
/* Appends the schedule to b, one line a buffer and a kernel, each starting
   with prefix: what UOPC_DEBUG=schedule prints (prefix "uopc schedule: "). */
UOPI_FUNC void uopi_schedule_describe(const uopi_schedule *s, uopi_sbuf *b, const char *prefix);

/* ---- between the files of lib/schedule ---- */

/* realize.c */
typedef struct uopi_realized {
  uopi_table *buf;      /* program node id -> plan buffer index + 1 */
} uopi_realized;
/* CALLs inlined, scoped (the seed's inline_call), nothing else rewritten. */
UOPI_FUNC uopc_node *uopi_inline_calls(uopc_ctx *c, uopc_node *root);
/* Decides the buffers of s->program: inputs, constants, temporaries, the
   output; fills s->bufs and r->buf.  The program must be inlined. */
UOPI_FUNC uopc_status uopi_realize(uopi_schedule *s, uopi_realized *r);

/* lower.c: appends the kernel that computes plan buffer b. */
UOPI_FUNC uopc_status uopi_lower_buffer(uopi_schedule *s, const uopi_realized *r, uint32_t b);

/* schedule.c */
UOPI_FUNC uint32_t uopi_schedule_add_buf(uopi_schedule *s, uopi_pb_kind kind, uopc_dtype t, const int32_t *shape,
                                         uint32_t ndim, uopc_node *node);
/* A new check; its code (1-based), or 0 when out of memory. */
UOPI_FUNC uint32_t uopi_schedule_add_check(uopi_schedule *s, uopi_check_kind kind, uopc_op op, int64_t size,
                                           const uopc_node *at);

#ifdef __cplusplus
}
#endif
#endif
