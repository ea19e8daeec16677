/* uopc/uop.h - the UOp graph: context, nodes, construction, traversal.
 *
 * A context (uopc_ctx) owns every node built in it.  Nodes are hash consed:
 * building a node equal in op, dtype, arg, shape and sources to an existing
 * one returns the existing pointer, so node equality is pointer equality.
 * Nodes are immutable (their public fields are read-only) and are freed all
 * at once with the context.  Every node has a dense id (0, 1, 2, ... in order
 * of creation) so that passes can keep side tables in arrays.
 *
 * The error, ownership, NULL and thread conventions are stated once, in
 * uopc/uopc.h; this header follows them (channel 1a: the context).
 *
 * Construction checks dtype and shape.  A bad node is refused: the
 * constructor returns NULL and records an error in the context (see
 * uopc_ctx_error), e.g. "ADD shape mismatch (2,) vs (3,)".  Every
 * constructor returns NULL when given a NULL source, without overwriting the
 * first error, so nested calls need only one check at the end.
 */
#ifndef UOPC_UOP_H
#define UOPC_UOP_H

#include <stddef.h>
#include <stdint.h>

#include "uopc/error.h"
#include "uopc/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define UOPC_API __attribute__((visibility("default")))

/* Largest rank of a shape. */
#define UOPC_LIMIT_DIMS 64
/* Largest element count of a shape (indices are i32). */
#define UOPC_LIMIT_ELEMS 2147483647LL

typedef struct uopc_ctx uopc_ctx;
typedef struct uopc_node uopc_node;

/* The arg of a node; which fields mean something depends on the op:
 *   CONST          bool/i32: i;  f32/f16: f (a double, not rounded to the
 *                  dtype; every NaN is stored as the same quiet NaN)
 *   PARAM, BUFFER  i = slot;  v[0..n) = shape
 *   RANGE          i = idx
 *   RESHAPE EXPAND v[0..n) = the new shape
 *   PERMUTE        v[0..n) = the permutation
 *   SHRINK         v[0..2n) = b0, e0, b1, e1, ...  (n = number of axes)
 *   REDUCE         rop = UOPC_OP_ADD, UOPC_OP_MUL or UOPC_OP_MAX;  i = pop (K)
 *   CALL           name = optional name (NULL: none)
 * Unused fields are zero.  Constructors copy v and name into the context. */
typedef struct uopc_arg {
  int64_t i;
  double f;
  uint32_t rop;
  uint32_t n;
  const int32_t *v;
  const char *name;
} uopc_arg;

/* A node.  All fields are read-only. */
struct uopc_node {
  uint32_t id;            /* dense: 0 .. uopc_ctx_count(c)-1 */
  uint8_t op;             /* uopc_op */
  uint8_t dtype;          /* uopc_dtype */
  uint8_t ndim;           /* rank of shape */
  uint8_t flags;          /* UOPC_NF_* */
  uint32_t nsrc;          /* number of sources */
  uint32_t hash;          /* structural hash */
  uint64_t srcops;        /* bit (1 << op) for the op of every source */
  const int32_t *shape;   /* ndim dims, each >= 1 */
  uopc_arg arg;           /* see uopc_arg */
  /* caches, filled lazily by the algebra (pure functions of the node) */
  uopc_node *simplified;  /* simplify(node), or NULL when not known */
  uopc_node *src[];       /* nsrc sources */
};

#define UOPC_NF_ADDR 1u    /* an INDEX into a BUFFER: usable only by LOAD/STORE */
#define UOPC_NF_BOUNDS 2u  /* uopc_vmin/uopc_vmax are computed (kept in the context) */

/* ---- context ------------------------------------------------------------ */

/* A pluggable allocator: realloc_fn(ud, p, old_size, new_size) with the
   contract of realloc, free when new_size is 0 (return value ignored).
   Returning NULL for new_size > 0 is an allocation failure, which every
   entry point reports as UOPC_ERR_NOMEM. */
typedef struct uopc_alloc {
  void *(*realloc_fn)(void *ud, void *p, size_t old_size, size_t new_size);
  void *ud;
} uopc_alloc;

/* Creates a context.  alloc may be NULL (use malloc).  Returns NULL when
   out of memory. */
UOPC_API uopc_ctx *uopc_ctx_new(const uopc_alloc *alloc);
/* Frees the context and every node, pattern and buffer it owns. NULL is ok. */
UOPC_API void uopc_ctx_free(uopc_ctx *c);
/* 1 when u is a node of c (O(1)); 0 for NULL arguments.  Every function
   that takes a context and nodes refuses nodes of another context with
   UOPC_ERR_ARG. */
UOPC_API int uopc_node_in(const uopc_ctx *c, const uopc_node *u);
/* Where u was written: the .uir file, line and column (1-based) of the line
   that first defined it, for nodes made by the parser.  Returns 1 and sets
   the outputs (any may be NULL; *file is owned by c), or 0 when no position
   is known (a node built by the API or by a rule). */
UOPC_API int uopc_node_pos(const uopc_ctx *c, const uopc_node *u, const char **file, int *line, int *col);
/* The UOPC_* environment variables (docs/cli.md, "Environment") are read by
   the library where they apply; a value it cannot read is ignored and the
   default kept, never an error.  uopc_env_check checks them all now: for each
   variable that is set but malformed, or a UOPC_ name the library does not
   read, it calls warn(ud, msg) with a one-line message that says the
   fallback.  Returns how many; warn may be NULL. */
UOPC_API unsigned uopc_env_check(void (*warn)(void *ud, const char *msg), void *ud);
/* Number of nodes built so far (ids are 0 .. count-1); 0 for NULL c. */
UOPC_API uint32_t uopc_ctx_count(const uopc_ctx *c);
/* The node with this id; NULL for NULL c or an id >= uopc_ctx_count(c). */
UOPC_API uopc_node *uopc_ctx_node(const uopc_ctx *c, uint32_t id);
/* The first error recorded since the last uopc_ctx_clear_error, or NULL
   (also for NULL c).  Owned by c; valid until the next clear or free. */
UOPC_API const uopc_error *uopc_ctx_error(const uopc_ctx *c);
/* Forgets the recorded error.  NULL c: no-op. */
UOPC_API void uopc_ctx_clear_error(uopc_ctx *c);
/* Records an error (printf-style message) unless one is already recorded.
   Returns NULL so that rules and constructors can `return uopc_fail(...)`.
   NULL c: records nothing, returns NULL. */
UOPC_API void *uopc_fail(uopc_ctx *c, uopc_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Memory from the context's allocator; free with uopc_mem_free(c, p, n),
   n the block's size in bytes (what was asked for; for the strings and
   node arrays the library returns, strlen(s) + 1 and count * sizeof(p[0])).
   On failure NULL with UOPC_ERR_NOMEM recorded.  NULL c: NULL, and
   uopc_mem_free is a no-op (as for NULL p). */
UOPC_API void *uopc_mem_alloc(uopc_ctx *c, size_t n);
UOPC_API void *uopc_mem_realloc(uopc_ctx *c, void *p, size_t old_n, size_t new_n);
UOPC_API void uopc_mem_free(uopc_ctx *c, void *p, size_t n);

/* ---- op and dtype properties -------------------------------------------- */

/* "ADD", "FLOORDIV", ...; "?" for a value outside uopc_op (every op query
   below has such a sentinel: "?", 0, -1). */
UOPC_API const char *uopc_op_name(uopc_op op);
/* "add", "floordiv", ... (the .uir spelling) */
UOPC_API const char *uopc_op_spelling(uopc_op op);
/* The op spelled s in .uir (case-sensitive, lower case), or -1 (also for
   NULL s). */
UOPC_API int uopc_op_parse(const char *s, size_t len);
/* Arity, -1 for any number; 0 for an unknown op. */
UOPC_API int uopc_op_arity(uopc_op op);
/* UOPC_OPF_* flags; 0 for an unknown op. */
UOPC_API unsigned uopc_op_flags(uopc_op op);
/* "bool", "i32", "f32", "f16", "void"; "?" for a value outside uopc_dtype. */
UOPC_API const char *uopc_dtype_name(uopc_dtype t);
/* The dtype named s, or -1 (also for NULL s). */
UOPC_API int uopc_dtype_parse(const char *s, size_t len);
/* 1 for f32 and f16, else 0. */
UOPC_API int uopc_dtype_is_float(uopc_dtype t);
/* Bytes per element of a dtype in buffers and arrays (bool 1, i32 4, f32 4,
   f16 2); 0 for VOID and unknown dtypes. */
UOPC_API size_t uopc_dtype_size(uopc_dtype t);

/* ---- construction ------------------------------------------------------- */

/* The general constructor.  dtype is needed for CONST, PARAM, BUFFER and
   CAST (the target); for every other op pass UOPC_DT_VOID and it is inferred
   (passing the inferred dtype is also accepted).  Shape and dtype are
   inferred from sources and arg and checked; on any violation returns NULL
   with an error naming the op and the problem.  arg may be NULL (all zero).
   UOPC_ERR_ARG: op or dtype outside its enum ("unknown op 999"), src NULL
   with nsrc > 0, arg->n > 0 with arg->v NULL, a source of another context. */
UOPC_API uopc_node *uopc_make(uopc_ctx *c, uopc_op op, uopc_dtype dtype,
                              uopc_node *const *src, uint32_t nsrc, const uopc_arg *arg);
/* u with its sources replaced (same op, dtype and arg); u itself when src
   equals u's sources.  Checked like uopc_make. */
UOPC_API uopc_node *uopc_replace(uopc_ctx *c, uopc_node *u, uopc_node *const *src, uint32_t nsrc);

/* Constants (always scalars).  uopc_const_i: bool (v != 0) or i32 (v must fit)
   or a float dtype (v converted exactly).  uopc_const_f: f32/f16 only. */
UOPC_API uopc_node *uopc_const_i(uopc_ctx *c, uopc_dtype t, int64_t v);
UOPC_API uopc_node *uopc_const_f(uopc_ctx *c, uopc_dtype t, double v);
/* A constant of x's dtype with value v (ints: v truncated toward zero must
   fit).  x NULL or of another context: UOPC_ERR_ARG (no new message after
   an earlier error, as for every NULL operand). */
UOPC_API uopc_node *uopc_const_like(uopc_ctx *c, const uopc_node *x, double v);
/* A constant like x broadcast to x's shape: the constant itself for a
   scalar x, else expand(reshape(k, (1,...)), shape(x)) (the .uir sugar). */
UOPC_API uopc_node *uopc_full_like(uopc_ctx *c, uopc_node *x, double v);
/* An f32/f16 constant's value, or a bool/i32 constant's as a double; 0 for
   NULL k. */
UOPC_API double uopc_const_value(const uopc_node *k);

UOPC_API uopc_node *uopc_param(uopc_ctx *c, int64_t slot, uopc_dtype t, const int32_t *shape, uint32_t ndim);
UOPC_API uopc_node *uopc_buffer(uopc_ctx *c, int64_t slot, uopc_dtype t, int32_t n);
UOPC_API uopc_node *uopc_range(uopc_ctx *c, uopc_node *end, int64_t idx);

/* ALU ops.  uopc_alu: any ALU op except CAST with its sources. */
UOPC_API uopc_node *uopc_alu(uopc_ctx *c, uopc_op op, uopc_node *const *src, uint32_t n);
UOPC_API uopc_node *uopc_alu1(uopc_ctx *c, uopc_op op, uopc_node *a);
UOPC_API uopc_node *uopc_alu2(uopc_ctx *c, uopc_op op, uopc_node *a, uopc_node *b);
UOPC_API uopc_node *uopc_add(uopc_ctx *c, uopc_node *a, uopc_node *b);
UOPC_API uopc_node *uopc_mul(uopc_ctx *c, uopc_node *a, uopc_node *b);
UOPC_API uopc_node *uopc_max(uopc_ctx *c, uopc_node *a, uopc_node *b);
UOPC_API uopc_node *uopc_lt(uopc_ctx *c, uopc_node *a, uopc_node *b);
UOPC_API uopc_node *uopc_ne(uopc_ctx *c, uopc_node *a, uopc_node *b);
UOPC_API uopc_node *uopc_idiv(uopc_ctx *c, uopc_node *a, uopc_node *b);  /* FLOORDIV */
UOPC_API uopc_node *uopc_mod(uopc_ctx *c, uopc_node *a, uopc_node *b);   /* FLOORMOD */
/* -x is x * -1; x - y is x + (-y) (the seed's sugar). */
UOPC_API uopc_node *uopc_neg(uopc_ctx *c, uopc_node *a);
UOPC_API uopc_node *uopc_sub(uopc_ctx *c, uopc_node *a, uopc_node *b);
/* Sugar with a constant of x's dtype on the right: x + k, x * k, x // k, x % k, x < k. */
UOPC_API uopc_node *uopc_add_k(uopc_ctx *c, uopc_node *x, double k);
UOPC_API uopc_node *uopc_mul_k(uopc_ctx *c, uopc_node *x, double k);
UOPC_API uopc_node *uopc_idiv_k(uopc_ctx *c, uopc_node *x, double k);
UOPC_API uopc_node *uopc_mod_k(uopc_ctx *c, uopc_node *x, double k);
UOPC_API uopc_node *uopc_lt_k(uopc_ctx *c, uopc_node *x, double k);
UOPC_API uopc_node *uopc_where(uopc_ctx *c, uopc_node *cond, uopc_node *a, uopc_node *b);
UOPC_API uopc_node *uopc_cast(uopc_ctx *c, uopc_node *a, uopc_dtype t);

UOPC_API uopc_node *uopc_stack(uopc_ctx *c, uopc_node *const *src, uint32_t n);
/* x indexed by idx[0..n) (i32 scalars).  n = 0 is allowed (INDEX(x)). */
UOPC_API uopc_node *uopc_index(uopc_ctx *c, uopc_node *x, uopc_node *const *idx, uint32_t n);
/* Apply body to args[0..n); name may be NULL. */
UOPC_API uopc_node *uopc_call(uopc_ctx *c, uopc_node *body, uopc_node *const *args, uint32_t n, const char *name);

UOPC_API uopc_node *uopc_reshape(uopc_ctx *c, uopc_node *x, const int32_t *shape, uint32_t ndim);
UOPC_API uopc_node *uopc_expand(uopc_ctx *c, uopc_node *x, const int32_t *shape, uint32_t ndim);
UOPC_API uopc_node *uopc_permute(uopc_ctx *c, uopc_node *x, const int32_t *perm, uint32_t ndim);
/* bounds: b0, e0, b1, e1, ... for each of the ndim axes. */
UOPC_API uopc_node *uopc_shrink(uopc_ctx *c, uopc_node *x, const int32_t *bounds, uint32_t ndim);
/* rop: UOPC_OP_ADD, UOPC_OP_MUL or UOPC_OP_MAX; reduces the last pop axes. */
UOPC_API uopc_node *uopc_reduce(uopc_ctx *c, uopc_node *x, uopc_op rop, int64_t pop);

UOPC_API uopc_node *uopc_load(uopc_ctx *c, uopc_node *addr);
UOPC_API uopc_node *uopc_store(uopc_ctx *c, uopc_node *addr, uopc_node *value);
UOPC_API uopc_node *uopc_end(uopc_ctx *c, uopc_node *value, uopc_node *const *ranges, uint32_t n);
UOPC_API uopc_node *uopc_sink(uopc_ctx *c, uopc_node *const *src, uint32_t n);

/* ---- kernel sugar -------------------------------------------------------
 * Kernels in a few lines, as the seed writes them.  Each helper is the
 * constructors above composed (nothing new is checked or allowed): the
 * nodes belong to c like any other, a NULL operand (a failed inner call)
 * returns NULL without a new error, so the first error of a nested chain
 * stands, and c NULL returns NULL.  The copy kernel of docs/uir.md:
 *
 *   uopc_node *A = uopc_buffer(c, 0, UOPC_DT_F32, 32), *O = uopc_buffer(c, 1, UOPC_DT_F32, 32);
 *   uopc_node *i = uopc_range_k(c, 4, 0), *j = uopc_range_k(c, 8, 1);
 *   uopc_node *flat = uopc_mad_k(c, i, 8, j);
 *   uopc_node *idx = uopc_mad_k(c, uopc_mod_k(c, uopc_idiv_k(c, flat, 8), 4), 8, uopc_mod_k(c, flat, 8));
 *   uopc_node *loops[] = {i, j};
 *   uopc_node *k = uopc_sink1(c, uopc_end(c, uopc_store1(c, O, flat, uopc_load1(c, A, idx)), loops, 2));
 *
 * and a matmul C[i,j] += A[i,k] * B[k,j] over n x n row-major buffers (C
 * zeroed; the sum runs over k in order):
 *
 *   uopc_node *i = uopc_range_k(c, n, 0), *j = uopc_range_k(c, n, 1), *k = uopc_range_k(c, n, 2);
 *   uopc_node *ij = uopc_mad_k(c, i, n, j);
 *   uopc_node *ab = uopc_mul(c, uopc_load1(c, A, uopc_mad_k(c, i, n, k)), uopc_load1(c, B, uopc_mad_k(c, k, n, j)));
 *   uopc_node *loops[] = {i, j, k};
 *   uopc_node *root = uopc_sink1(c, uopc_end(c, uopc_store1(c, C, ij, uopc_add(c, uopc_load1(c, C, ij), ab)), loops, 3));
 */

/* RANGE over 0 .. end-1 with a constant end: uopc_range(c, CONST i32 end,
   idx).  An end <= 0 is a loop that runs no iteration.  idx must be unique
   in a kernel (checked when it is compiled). */
UOPC_API uopc_node *uopc_range_k(uopc_ctx *c, int32_t end, int64_t idx);
/* x * k + y, as two ops (MUL then ADD; for floats two roundings, never a
   fused multiply-add); k a constant of x's dtype.  For row-major indices:
   uopc_mad_k(c, row, ncols, col). */
UOPC_API uopc_node *uopc_mad_k(uopc_ctx *c, uopc_node *x, double k, uopc_node *y);
/* buf indexed by one i32 index: INDEX(buf, idx), the address of element
   idx of a BUFFER (or element idx of a value). */
UOPC_API uopc_node *uopc_index1(uopc_ctx *c, uopc_node *buf, uopc_node *idx);
/* LOAD(INDEX(buf, idx)): element idx of a BUFFER, of the buffer's dtype. */
UOPC_API uopc_node *uopc_load1(uopc_ctx *c, uopc_node *buf, uopc_node *idx);
/* STORE(INDEX(buf, idx), value): value (a scalar of buf's dtype) into
   element idx of a BUFFER. */
UOPC_API uopc_node *uopc_store1(uopc_ctx *c, uopc_node *buf, uopc_node *idx, uopc_node *value);
/* END(value, range): the loop over one RANGE around an effect. */
UOPC_API uopc_node *uopc_end1(uopc_ctx *c, uopc_node *value, uopc_node *range);
/* SINK(effect): a kernel root with one effect. */
UOPC_API uopc_node *uopc_sink1(uopc_ctx *c, uopc_node *effect);

/* ---- queries and traversal ---------------------------------------------- */

/* Number of elements of u's shape (1 for scalars; 0 for NULL u). */
UOPC_API int64_t uopc_numel(const uopc_node *u);
/* Writes "(2, 3)" style (Python tuple spelling: "()", "(3,)") into buf,
   cut with "..." when longer than size.  NULL buf or size 0: no-op; NULL
   shape with ndim > 0: "". */
UOPC_API void uopc_shape_str(const int32_t *shape, uint32_t ndim, char *buf, size_t size);

/* All nodes reachable from root, each once, in the seed's toposort order
   (depth first, sources left to right, post-order).  Returns an array of
   *n nodes from uopc_mem_alloc (free with uopc_mem_free(c, p, n*sizeof(p[0]))),
   or NULL on allocation failure.  Iterative: any depth is fine.  NULL or
   foreign root, NULL n: NULL with UOPC_ERR_ARG (*n = 0 when n is given). */
UOPC_API uopc_node **uopc_toposort(uopc_ctx *c, uopc_node *root, uint32_t *n);
/* Number of distinct nodes reachable from root; 0 (nothing recorded) for a
   NULL c or root, a root of another context, or out of memory. */
UOPC_API uint32_t uopc_graph_size(uopc_ctx *c, uopc_node *root);

/* root with every node from[i] replaced by to[i] (all occurrences, bottom up,
   rebuilding users).  NULL with an error if a rebuilt node fails its checks.
   UOPC_ERR_ARG: NULL or foreign root or from[i] / to[i], from or to NULL
   with n > 0. */
UOPC_API uopc_node *uopc_substitute(uopc_ctx *c, uopc_node *root, uopc_node *const *from,
                                    uopc_node *const *to, uint32_t n);

/* The PARAMs of a CALL body, not looking inside nested CALL bodies (the
   src[0] of a CALL met on the way), sorted by slot then by id.  Returns an
   array from uopc_mem_alloc (*n entries; free with uopc_mem_free), NULL with
   *n = 0 when there are none or on allocation failure (check the error).
   NULL or foreign body, NULL n: NULL with UOPC_ERR_ARG. */
UOPC_API uopc_node **uopc_call_params(uopc_ctx *c, uopc_node *body, uint32_t *n);

/* The seed's one-line `show` form: add(mul(p0, 3), 6).  CONST prints its
   literal (Python repr of the value at its dtype: 3, 2.0, True), PARAM as
   p<slot>, BUFFER as b<slot>, RANGE as r<idx>; other ops as
   lowercase(op)(sources..., args...).  Returns a string from uopc_mem_alloc
   (free with uopc_mem_free(c, s, strlen(s) + 1)), or NULL.  Shared subterms
   are printed each time; output longer than max_len is cut with "...".
   NULL or foreign u: NULL with UOPC_ERR_ARG. */
UOPC_API char *uopc_show(uopc_ctx *c, const uopc_node *u, size_t max_len);

#ifdef __cplusplus
}
#endif
#endif
