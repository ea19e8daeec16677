/* tools/check_impl.h - what the checker's files share:
 *   check_gen.c    random values and random instances of a pattern;
 *   check_eval.c   the evaluators (scalar, shaped reference, kernel interpreter);
 *   check_rules.c  one rule: build, apply, compare, count; the sets.
 */
#ifndef UOPC_TOOLS_CHECK_IMPL_H
#define UOPC_TOOLS_CHECK_IMPL_H

#include "check_rules.h"

/* ---- random numbers (splitmix64) ---- */

typedef struct chk_rng {
  uint64_t s;
} chk_rng;

static inline uint64_t rng_u64(chk_rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/* Uniform in 0..n-1 (n > 0). */
static inline uint32_t rng_below(chk_rng *r, uint32_t n) { return (uint32_t)(((rng_u64(r) >> 32) * n) >> 32); }
/* 1 with probability pct/100. */
static inline int rng_pct(chk_rng *r, unsigned pct) { return rng_below(r, 100) < pct; }

/* ---- limits ---- */

#define CHK_MAX_PARTS 64  /* parts of a pattern (the pattern notation's own limit) */
#define CHK_MAX_VARS 32   /* names of a pattern */
#define CHK_MAX_DIMS 4    /* rank of a generated shape */
#define CHK_MAX_NUMEL 24  /* elements of a generated shaped value */
#define CHK_POOL 16       /* i32 constants of an instance remembered for related values */
#define CHK_FREE_SLOT 16  /* CHK_EVAL: the free PARAMs (bound to random values) are slots 16..19 */
#define CHK_NSLOTS 8      /* CHK_KERNEL: BUFFER slots */
#define CHK_DT4 ((1u << UOPC_DT_BOOL) | (1u << UOPC_DT_I32) | (1u << UOPC_DT_F32) | (1u << UOPC_DT_F16))

/* ---- random values ---- */

/* An i32 value: small numbers, edge values (0, +-1, INT_MIN, INT_MAX),
   values near overflow, powers of two +-1, values related to the constants
   in pool (their negation, INT_MAX - k, ...), uniform. */
int64_t chk_rand_i32(chk_rng *r, const int64_t *pool, uint32_t npool);
/* A float for dtype t: +-0.0, +-inf, NaN, subnormals, the largest finite
   values, values that round (0.1, 2^24 + 1, 65520 in f16), small integers,
   random bit patterns.  exact = 1 rounds it to t (the value of a PARAM or a
   buffer element); 0 may leave a double that rounds (a CONST's literal). */
double chk_rand_float(chk_rng *r, uopc_dtype t, int exact);
/* A value of dtype t (bool, i32, f32, f16) as uopc_val; floats rounded to t. */
uopc_val chk_rand_val(chk_rng *r, uopc_dtype t, const int64_t *pool, uint32_t npool);
/* A value of a RANGE with this end (end >= 1): 0, end - 1 or uniform. */
int64_t chk_rand_below(chk_rng *r, int64_t end);
/* The value of u (a CONST) rounded to its dtype. */
uopc_val chk_const_val(const uopc_node *u);
/* Bit for bit at dtype t (a NaN equals any NaN, -0.0 differs from 0.0). */
int chk_same(uopc_val a, uopc_val b, uopc_dtype t);
/* Appends a value's spelling to buf. */
void chk_fmt_val(char *buf, size_t n, uopc_val v, uopc_dtype t);

/* ---- instances ---- */

/* What a generated node must be. */
typedef struct chk_req {
  uint32_t dts;  /* allowed dtypes (bit 1 << dtype) */
  int fixed;     /* the shape nd, sh is required (otherwise any: CHK_EVAL picks one) */
  uint32_t nd;
  int32_t sh[CHK_MAX_DIMS];
  int32_t dim;   /* > 0: the node is an index into an axis (or buffer) of this size */
  int divisor;   /* the node is a divisor (FLOORDIV, FLOORMOD): small, or dividing a constant */
} chk_req;

typedef struct chk_gen {
  uopc_ctx *c;
  chk_rng *r;
  chk_family fam;
  const uopc_pattern_part *parts;
  uint32_t nparts;
  uopc_node *var[CHK_MAX_VARS];  /* bindings of the pattern's names */
  int budget;                    /* construction attempts left for this instance */
  int64_t pool[CHK_POOL];        /* i32 constants of the instance */
  uint32_t npool;
  uint32_t next_idx;             /* next RANGE idx */
  uopc_node *ranges[8];          /* RANGEs made, for reuse */
  uint32_t nranges;
  uint32_t next_slot;            /* CHK_KERNEL: next BUFFER slot */
  uopc_node *inbuf[UOPC_DT_COUNT]; /* CHK_KERNEL: input buffers of values, by dtype */
  uopc_node *endbuf;             /* CHK_KERNEL: an input buffer of small values for RANGE ends */
  int in_end;                    /* generating a RANGE end (CHK_KERNEL: no RANGEs, small values) */
  int norm_ends;                 /* CHK_KERNEL: RANGE ends in normal form (a constant or a LOAD) */
  uopc_node *const *scope;       /* CHK_EVAL: inside a CALL body, its PARAMs (NULL: top level) */
  uint32_t nscope;
  int call_depth;
} chk_gen;

/* A random instance of the pattern g->parts (part 0 is the root), or NULL
   when construction kept failing (the context's error is cleared).  g->c,
   g->r, g->fam, g->parts, g->nparts are set by the caller; the rest is
   reset here. */
uopc_node *chk_gen_instance(chk_gen *g);

/* ---- evaluators ---- */

/* A table of values by node id; clearing it is one increment (a stamp per
   entry), so tables are cleared for every input drawn at no cost. */
typedef struct chk_tab {
  uopc_val *v;
  uint8_t *def;
  uint32_t *stamp;
  uint32_t cap, cur;
} chk_tab;

/* Makes room for ids 0..n-1; 0 when out of memory. */
int chk_tab_fit(chk_tab *t, uint32_t n);
void chk_tab_free(chk_tab *t);
static inline void chk_tab_clear(chk_tab *t) { t->cur++; }
static inline int chk_tab_has(const chk_tab *t, uint32_t id) { return id < t->cap && t->stamp[id] == t->cur; }
static inline void chk_tab_put(chk_tab *t, uint32_t id, uopc_val v, int def) {
  t->v[id] = v;
  t->def[id] = (uint8_t)(def != 0);
  t->stamp[id] = t->cur;
}

/* The inputs of a scalar instance: PARAM and RANGE values by node id,
   drawn when first needed (a PARAM from chk_rand_val with the instance's
   constants; a RANGE below its end's value) and kept for the other side. */
typedef struct chk_inputs {
  chk_tab tab;
  chk_rng *r;
  const int64_t *pool;
  uint32_t npool;
} chk_inputs;

/* The scalar evaluator: the value of topo[n-1] (topo: a toposort, sources
   first), node by node with exec_alu; an undefined result is poison, every
   op on poison is poison except WHERE, which takes the poison of its
   condition and of the arm it selects.  val holds the node values (fit to
   the context's count).  Returns 1 (defined, *out set), 0 (poison), -1 (a
   vacuous input: a RANGE whose end is <= 0 or poison) or -2 (an op it
   cannot evaluate). */
int chk_scalar_eval(chk_tab *val, chk_inputs *in, uopc_node *const *topo, uint32_t n, uopc_val *out);

/* The shaped reference evaluator (CHK_EVAL), written from the spec's table:
   CONST, PARAM, STACK, ALU (elementwise), INDEX of a value, RESHAPE, EXPAND,
   PERMUTE, SHRINK, REDUCE, CALL (the body evaluated with its PARAMs bound
   to the arguments).  The free PARAMs free_p[i] take the values free_v[i].
   An index out of bounds is an error of the whole program (as in run); an
   undefined index, or an undefined element under a movement op or REDUCE,
   makes that node undefined as a whole (run cannot move a value it has not
   computed).  Returns 1 (every element defined: out->v holds them in C
   order, from malloc), 0 (undefined or an error) or -2 (cannot evaluate). */
typedef struct chk_flat {
  uint32_t n;
  uopc_val *v;
} chk_flat;
int chk_ref_eval(uopc_ctx *c, uopc_node *root, uopc_node *const *free_p, const chk_flat *free_v, uint32_t nfree,
                 chk_flat *out);

/* The kernel interpreter (CHK_KERNEL): SINK, END, RANGE, INDEX of a BUFFER,
   LOAD, STORE and scalar ALU ops through exec_alu, over bufs[slot].
   Effects run in program order, each loop iteration to completion.  A
   stored undefined value makes that element undefined (def = 0); an
   undefined address or RANGE end, an address outside its buffer, or a
   RANGE used outside the END that closes it stops the run.  Returns 1
   (ran), 0 (stopped: undefined), -1 (more than max_steps stores and loop
   iterations), -2 (cannot interpret), -3 (out of memory). */
typedef struct chk_buf {
  uopc_dtype t;
  int32_t n;
  uopc_val *v;
  uint8_t *def;
} chk_buf;
int chk_kernel_run(uopc_node *sink, chk_buf *bufs, uint32_t nbufs, uint64_t max_steps);

#endif
