/* tools/fuzz.h - differential fuzzing of compiled code against exec_alu
 * (tools/fuzz.c, the static library uopc_fuzz: not part of libuopc; it uses
 * the public API only).
 *
 * For one (op, in dtype, out dtype) triple of docs/semantics.md, the fuzzer
 * builds the kernel
 *
 *     out[i] = op(a[i], b[i])            (one operand for unary ops and CAST,
 *                                         three for WHERE: c[i], a[i], b[i])
 *
 * with the uopc constructors (BUFFERs for the operands in operand order,
 * slots 0.., then the output; one RANGE over the batch), compiles it once
 * with uopc_compile, then repeatedly fills the operand buffers with random
 * values mixed with edge values (0, -0.0, +-inf, NaN payloads, denormals,
 * INT_MIN, INT_MAX, +-1, 2^24 +- 1, 65504, 65520, 2^31, powers of two, ...),
 * calls the kernel and compares every element with uopc_exec_alu on the same
 * operands.  The data comes from buffers, so LLVM cannot fold it.
 *
 * Comparison: exact bits of the result dtype (bool: the stored byte is 0 or
 * 1 as exec_alu says), except that any NaN matches any NaN; -0.0 does not
 * match 0.0.  Where exec_alu gives no value (division by zero, INT_MIN // -1,
 * casting a non-finite or out-of-range float to i32) nothing is compared:
 * the kernel only has to run without crashing, and the case is counted in
 * `refused`, apart from `cases`.
 *
 * Determinism: the operands of a triple depend only on the seed and the
 * triple (each triple has its own random stream), so a run restricted to one
 * triple with the same seed, count and batch sees the same operands as the
 * full run.
 *
 * Threads: uopc_fuzz_run may be called from several threads at once.
 */
#ifndef UOPC_TOOLS_FUZZ_H
#define UOPC_TOOLS_FUZZ_H

#include <uopc/uopc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An (op, in_t, out_t) triple in exec_alu's calling convention: in_t is the
   operand dtype (WHERE: of the value operands, its condition is bool; CAST:
   the source dtype; CMPLT/CMPNE: the compared dtype). */
typedef struct uopc_fuzz_pair {
  uopc_op op;
  uopc_dtype in_t, out_t;
} uopc_fuzz_pair;

/* The 52 triples of docs/semantics.md's table, in its order (ADD, MUL, MAX,
   CMPLT, CMPNE, FLOORDIV, FLOORMOD, WHERE, RECIP, SQRT, EXP2, LOG2, SIN,
   CAST; dtypes bool, i32, f32, f16).  Static storage; *n gets the count. */
const uopc_fuzz_pair *uopc_fuzz_pairs(size_t *n);

/* One compared case that failed: operand and result bits at their dtypes
   (bool: the byte, i32/f32: 32 bits, f16: 16 bits). */
typedef struct uopc_fuzz_case {
  uopc_fuzz_pair pair;
  uint32_t nin;     /* operands: 1, 2, or 3 (WHERE: the condition first) */
  uint32_t in[3];
  uint32_t jit;     /* what the compiled kernel stored */
  uint32_t ref;     /* what uopc_exec_alu computed */
} uopc_fuzz_case;

/* The largest count a run accepts (2^50 cases: 130 days at 100 M cases/s);
   larger ones are refused with UOPC_ERR_ARG, never run short. */
#define UOPC_FUZZ_MAX_COUNT (UINT64_C(1) << 50)

typedef struct uopc_fuzz_opts {
  uint64_t seed;
  uint64_t count;        /* compared cases per triple; 0: 100000; at most UOPC_FUZZ_MAX_COUNT */
  uint32_t batch;        /* elements per kernel call; 0: 4095 (odd, so the
                            scalar remainder loop runs as well as the
                            vector loop) */
  uopc_tier tier;        /* the kernel's tier ... */
  int both_tiers;        /* ... or nonzero: compile FAST and STRONG kernels
                            and alternate between them batch by batch */
  uint32_t max_reports;  /* mismatches passed to on_mismatch per triple; 0: 10 */
  /* Called for each of the first max_reports mismatches (may be NULL). */
  void (*on_mismatch)(void *ud, const uopc_fuzz_case *m);
  /* Called after every batch with the cases compared so far (may be NULL);
     a nonzero return stops the run early (the stats cover what ran). */
  int (*on_progress)(void *ud, const uopc_fuzz_pair *p, uint64_t done, uint64_t total);
  void *ud;
  /* Nonzero: a test of the comparison itself.  In every batch, the JIT's
     output for the first compared case whose reference is not a NaN gets its
     lowest bit flipped (counted in stats.injected); each must come back as
     a mismatch (a NaN is skipped because any NaN matches any NaN). */
  int self_test;
} uopc_fuzz_opts;

typedef struct uopc_fuzz_stats {
  uint64_t cases;       /* compared with exec_alu */
  uint64_t refused;     /* exec_alu gave no value: run, not compared */
  uint64_t mismatches;
  uint64_t injected;    /* with opts.self_test: outputs corrupted on purpose */
  double compile_ms;    /* building and compiling the kernel(s) */
  double seconds;       /* generating, running and checking */
} uopc_fuzz_stats;

/* Fuzzes one triple (one of uopc_fuzz_pairs(); any other is UOPC_ERR_ARG).
   opts may be NULL (all defaults, seed 0).  Returns UOPC_OK when the run
   completed, whatever the number of mismatches (see s->mismatches), or an
   error (compiling failed, out of memory) in *e.  s receives the counts. */
uopc_status uopc_fuzz_run(const uopc_fuzz_pair *p, const uopc_fuzz_opts *opts, uopc_fuzz_stats *s,
                                   uopc_error *e);

/* The kernel the fuzzer compiles for p over n elements, built in c (for
   tests and --emit): a SINK, or NULL with the error in c. */
uopc_node *uopc_fuzz_kernel(uopc_ctx *c, const uopc_fuzz_pair *p, int32_t n);

/* A triple's dtype in the CLI's spelling: "f32" (in_t; also for CMPLT and
   CMPNE, whose result is bool), "f32:i32" for a CAST.  buf holds 16 bytes. */
const char *uopc_fuzz_dtype_str(const uopc_fuzz_pair *p, char buf[16]);

/* A one-line reproducer of a mismatch (no newline): op, dtype, every operand
   and both results as hex bits and as the project prints values (the
   shortest decimal at the dtype's precision), e.g.
     mismatch: cast f32:i32 a=0x4effffff (2147483500.0) jit=0x80000000 (-2147483648) exec_alu=0x7fffff80 (2147483520)
   Writes at most n bytes (NUL included; cut if longer) and returns buf. */
char *uopc_fuzz_describe(const uopc_fuzz_case *m, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
