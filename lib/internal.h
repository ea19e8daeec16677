/* lib/internal.h - what the library's files share and users do not see.
 *
 * Prefixes: uopc_ is public (include/uopc/), uopi_ is internal (hidden
 * visibility), static functions have no prefix.
 */
#ifndef UOPI_INTERNAL_H
#define UOPI_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "uopc/uop.h"  /* the context, nodes and errors; each file includes the rest of the API it uses */

#define UOPI_FUNC __attribute__((visibility("hidden"))) extern

#ifdef __cplusplus
extern "C" {
#endif

/* Bugs are not errors: an internal invariant that fails aborts with a
   location.  User input never reaches these. */
UOPI_FUNC void uopi_die(const char *file, int line, const char *what) __attribute__((noreturn));
#define UOPI_ASSERT(x) ((x) ? (void)0 : uopi_die(__FILE__, __LINE__, #x))
#define uopi_unreachable() uopi_die(__FILE__, __LINE__, "unreachable")

/* ---- op properties (the flags column of UOPC_OPS, include/uopc/ops.h) ---- */
UOPI_FUNC const unsigned uopi_op_flag_table[UOPC_OP_COUNT];
/* UOPC_OPF_* of op, which must be a valid op. */
static inline unsigned uopi_op_flags(unsigned op) { return uopi_op_flag_table[op]; }

/* uopc_dtype_is_float, inline (rule bodies ask it of every node they see). */
static inline int uopi_dtype_is_float(unsigned t) { return t == UOPC_DT_F32 || t == UOPC_DT_F16; }

/* ---- integer helpers shared by exec_alu, bounds and the rules ---------- */
/* Python's a // b and a % b (floor), b != 0, no overflow (|a| < 2^62). */
static inline int64_t uopi_floordiv64(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t uopi_floormod64(int64_t a, int64_t b) { return a - uopi_floordiv64(a, b) * b; }

/* ---- side tables keyed by node id --------------------------------------
 * A table maps node ids to pointers.  Acquiring one is O(1) (a generation
 * counter clears it); tables come from a per-context pool, so nested passes
 * (a rule calling simplify inside graph_rewrite) each get their own.  A table
 * grows (by doubling) to any id on set: its size follows the largest id set,
 * not the number of nodes in the context. */
typedef struct uopi_slot {
  void *val;
  uint32_t gen;
} uopi_slot;

typedef struct uopi_table {
  uopi_slot *e;
  uint32_t cap;
  uint32_t cur;
  struct uopi_table *next_free;
} uopi_table;

UOPI_FUNC uopi_table *uopi_table_acquire(uopc_ctx *c);   /* NULL on OOM (error set) */
UOPI_FUNC void uopi_table_release(uopc_ctx *c, uopi_table *t);
static inline void *uopi_table_get(const uopi_table *t, uint32_t id) {
  return (id < t->cap && t->e[id].gen == t->cur) ? t->e[id].val : NULL;
}
UOPI_FUNC int uopi_table_set(uopc_ctx *c, uopi_table *t, uint32_t id, void *v); /* 0 on OOM */

/* root with every node rebuilt bottom-up from its sources' entries in map;
   a node that already has an entry is replaced by it, not rebuilt.  map ends
   holding the result of every node walked.  When scoped, the body (src[0])
   of a CALL is neither entered nor replaced: it is another scope (CALL
   inlining).  NULL with the context's error on failure. */
UOPI_FUNC uopc_node *uopi_rebuild(uopc_ctx *c, uopc_node *root, uopi_table *map, int scoped);

/* ---- node arguments of public functions ---------------------------------
 * 1 when u is a node of c.  Otherwise 0 with an error: for a NULL u,
 * UOPC_ERR_ARG "FN: NULL node" unless an error is already recorded (a failed
 * constructor's error stands); for a node of another context, UOPC_ERR_ARG
 * "FN: the node belongs to another context". */
UOPI_FUNC int uopi_check_node(uopc_ctx *c, const uopc_node *u, const char *fn);

/* ---- the error slot around calls that report through a uopc_error * ----
 * The convention of include/uopc/uopc.h: such a call reports only through
 * *e and leaves the context's recorded error as the caller had it.  The
 * pipeline below it records errors in the context as everywhere; so the
 * call sets the caller's error aside (uopi_err_begin: saved, then cleared),
 * and uopi_err_end copies this call's error (when st is not UOPC_OK) into
 * *e (e may be NULL; zeroed on success), then puts the caller's back.
 * c may be NULL (nothing saved).  uopi_err_end returns st. */
typedef struct uopi_errsave {
  int had;
  uopc_error err;
} uopi_errsave;
UOPI_FUNC void uopi_err_begin(uopc_ctx *c, uopi_errsave *s);
UOPI_FUNC uopc_status uopi_err_end(uopc_ctx *c, uopi_errsave *s, uopc_status st, uopc_error *e);

/* ---- where nodes were written (lib/core/pos.c) ----------------------------
 * uopi_pos_set records u's .uir position unless it has one (0 when out of
 * memory, error recorded).  uopi_fail_at is uopc_fail with the error's
 * file/line/col set to where `at` was written, when that is known. */
UOPI_FUNC int uopi_pos_set(uopc_ctx *c, const uopc_node *u, const char *file, int line, int col);
UOPI_FUNC void *uopi_fail_at(uopc_ctx *c, uopc_status code, const uopc_node *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- scratch memory of passes -------------------------------------------
 * m = uopi_scratch_mark(c); p = uopi_scratch(c, n); ...; uopi_scratch_reset(c, m);
 * uopi_scratch returns n bytes (16-byte aligned, uninitialized) valid until
 * a reset to a mark taken before it, or NULL with UOPC_ERR_NOMEM recorded.
 * Resets are LIFO: reset to your own mark only. */
UOPI_FUNC size_t uopi_scratch_mark(const uopc_ctx *c);
UOPI_FUNC void *uopi_scratch(uopc_ctx *c, size_t n);
UOPI_FUNC void uopi_scratch_reset(uopc_ctx *c, size_t mark);
UOPI_FUNC void uopi_scratch_free_all(uopc_ctx *c);

/* ---- debug switches ------------------------------------------------------
 * Read from the context (set from UOPC_DEBUG when the context is made). */
UOPI_FUNC FILE *uopi_trace(const uopc_ctx *c);     /* NULL: off */
UOPI_FUNC int uopi_tracing(const uopc_ctx *c);     /* a trace file or callback is set */
UOPI_FUNC int uopi_check(const uopc_ctx *c);       /* dtype/shape check of rules */
/* How many failures were reported (uopc_fail calls, recorded or not): a
   pass compares counts to tell a rule's failure from a decline even when an
   older error is still recorded. */
UOPI_FUNC uint64_t uopi_fail_count(const uopc_ctx *c);

/* ---- growable arrays (through the context's allocator) ------------------ */
/* Makes room for at least need elements of size elem in *p (capacity *cap).
   Returns 0 on OOM (error set). */
UOPI_FUNC int uopi_grow(uopc_ctx *c, void **p, uint32_t *cap, uint32_t need, size_t elem);

#ifdef __cplusplus
}
#endif
#endif
