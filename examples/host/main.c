/* examples/host/main.c - a host application of uopc.
 *
 * Builds two kernels with the C API (no .uir text), compiles them in-process
 * with uopc_compile, calls them with uopc_kernel_call_checked on its own
 * arrays (described by dtype and shape, checked before the kernel runs) and
 * checks every element against plain C, bit for bit (the kernels round each
 * MUL and ADD, use no FMA and sum in order, as the C below does):
 *
 *   matmul   C[i][j] = sum over k of A[i][k] * B[k][j]   64 x 64 f32, row-major
 *   a*b+a    O[i] = A[i] * B[i] + A[i]                    4096 f32
 *
 * and a tensor program compiled to a plan of kernels (include/uopc/plan.h):
 *
 *   plan     P = A2 @ B2 written as the seed writes it, reshape/expand/mul/
 *            reduce, 48 x 40 by 40 x 32, called on arrays given with dtype
 *            and shape
 *
 * Prints `host example: matmul 64x64 ok, a*b+a ok, plan matmul 48x40x32 ok` and exits 0, or says what
 * differs and exits 1.  Build it with CMake (find_package(uopc)) or with
 * pkg-config: see CMakeLists.txt and Makefile beside it.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <uopc/uopc.h>

#define N 64      /* matmul: N x N */
#define LEN 4096  /* a*b+a: LEN elements */

static float A[N * N], B[N * N], C[N * N], C_want[N * N];
static float X[LEN], Y[LEN], O[LEN], O_want[LEN];

/* C[i*n+j] += A[i*n+k] * B[k*n+j] over i, j, k (k innermost): C must start zeroed. */
static uopc_node *matmul_kernel(uopc_ctx *c, int n) {
  uopc_node *a = uopc_buffer(c, 0, UOPC_DT_F32, n * n), *b = uopc_buffer(c, 1, UOPC_DT_F32, n * n),
            *out = uopc_buffer(c, 2, UOPC_DT_F32, n * n);
  uopc_node *i = uopc_range_k(c, n, 0), *j = uopc_range_k(c, n, 1), *k = uopc_range_k(c, n, 2);
  uopc_node *ij = uopc_mad_k(c, i, n, j); /* i * n + j */
  uopc_node *ab = uopc_mul(c, uopc_load1(c, a, uopc_mad_k(c, i, n, k)), uopc_load1(c, b, uopc_mad_k(c, k, n, j)));
  uopc_node *acc = uopc_store1(c, out, ij, uopc_add(c, uopc_load1(c, out, ij), ab));
  uopc_node *loops[] = {i, j, k}; /* outermost first */
  return uopc_sink1(c, uopc_end(c, acc, loops, 3));
}

/* O[i] = A[i] * B[i] + A[i] */
static uopc_node *muladd_kernel(uopc_ctx *c, int n) {
  uopc_node *a = uopc_buffer(c, 0, UOPC_DT_F32, n), *b = uopc_buffer(c, 1, UOPC_DT_F32, n),
            *out = uopc_buffer(c, 2, UOPC_DT_F32, n);
  uopc_node *i = uopc_range_k(c, n, 0);
  uopc_node *x = uopc_load1(c, a, i), *y = uopc_load1(c, b, i);
  return uopc_sink1(c, uopc_end1(c, uopc_store1(c, out, i, uopc_add(c, uopc_mul(c, x, y), x)), i));
}

/* Compiles root (NULL: a constructor failed, the context says why) and runs
   it once on bufs.  0 on success; otherwise prints the error and returns 1. */
static int compile_and_call(uopc_ctx *c, uopc_node *root, const uopc_tensor *bufs, uint32_t nbufs, const char *what) {
  if (!root) {
    const uopc_error *ce = uopc_ctx_error(c);
    fprintf(stderr, "host example: %s: building the kernel: %s\n", what, ce ? ce->msg : "out of memory");
    return 1;
  }
  uopc_error e;
  uopc_kernel *k = uopc_compile(c, root, NULL, &e); /* NULL options: the fast tier */
  if (!k) {
    fprintf(stderr, "host example: %s: uopc_compile: %s\n", what, e.msg);
    return 1;
  }
  uopc_status st = uopc_kernel_call_checked(k, bufs, nbufs, &e);
  uopc_kernel_free(k);
  if (st != UOPC_OK) {
    fprintf(stderr, "host example: %s: uopc_kernel_call_checked: %s\n", what, e.msg);
    return 1;
  }
  return 0;
}

/* The first element where got and want differ in their bits, or -1. */
static long first_mismatch(const float *got, const float *want, long n) {
  for (long i = 0; i < n; i++)
    if (memcmp(&got[i], &want[i], sizeof got[i]) != 0) return i;
  return -1;
}

/* Values with many significant bits, so that any change of rounding shows. */
static float next_value(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((int32_t)(*s >> 8) % 20001 - 10000) / 1237.0f;
}

/* ---- a tensor program, compiled to a plan ---- */

#define PM 48
#define PK 40
#define PN 32
static float A2[PM * PK], B2[PK * PN], P2[PM * PN], P2_want[PM * PN];

/* P = A @ B as reshape/expand/mul/reduce: A (M, K) -> (M, 1, K) -> (M, N, K);
   B (K, N) permuted to (N, K) -> (1, N, K) -> (M, N, K); the product summed
   over the last axis, left to right. */
static uopc_node *matmul_program(uopc_ctx *c) {
  int32_t sa[] = {PM, PK}, sb[] = {PK, PN};
  uopc_node *a = uopc_param(c, 0, UOPC_DT_F32, sa, 2), *b = uopc_param(c, 1, UOPC_DT_F32, sb, 2);
  int32_t a1[] = {PM, 1, PK}, full[] = {PM, PN, PK}, perm[] = {1, 0}, b1[] = {1, PN, PK};
  uopc_node *ax = uopc_expand(c, uopc_reshape(c, a, a1, 3), full, 3);
  uopc_node *bx = uopc_expand(c, uopc_reshape(c, uopc_permute(c, b, perm, 2), b1, 3), full, 3);
  return uopc_reduce(c, uopc_mul(c, ax, bx), UOPC_OP_ADD, 1);
}

static int plan_matmul(void) {
  uint32_t s = 7;
  for (int t = 0; t < PM * PK; t++) A2[t] = next_value(&s);
  for (int t = 0; t < PK * PN; t++) B2[t] = next_value(&s);
  for (int i = 0; i < PM; i++)
    for (int j = 0; j < PN; j++) {
      float acc = A2[i * PK] * B2[j]; /* run's order: the first element, then the rest */
      for (int k = 1; k < PK; k++) {
        volatile float p = A2[i * PK + k] * B2[k * PN + j];
        acc = acc + p;
      }
      P2_want[i * PN + j] = acc;
    }
  uopc_ctx *c = uopc_ctx_new(NULL);
  if (!c) return fprintf(stderr, "host example: out of memory\n"), 1;
  uopc_node *prog = matmul_program(c);
  uopc_error e;
  uopc_plan *p = prog ? uopc_plan_compile(c, prog, NULL, &e) : NULL;
  if (!p) {
    fprintf(stderr, "host example: plan: %s\n", prog ? e.msg : uopc_ctx_error(c)->msg);
    uopc_ctx_free(c);
    return 1;
  }
  uopc_ctx_free(c); /* a plan does not depend on its context */
  const int64_t sa[] = {PM, PK}, sb[] = {PK, PN}, sp[] = {PM, PN};
  uopc_tensor args[] = {{A2, UOPC_DT_F32, 2, sa}, {B2, UOPC_DT_F32, 2, sb}}, out = {P2, UOPC_DT_F32, 2, sp};
  uopc_status st = uopc_plan_call(p, args, 2, &out, &e);
  uopc_plan_free(p);
  if (st != UOPC_OK) return fprintf(stderr, "host example: plan call: %s\n", e.msg), 1;
  long m = first_mismatch(P2, P2_want, PM * PN);
  if (m >= 0) {
    fprintf(stderr, "host example: plan: P[%ld][%ld] is %.9g, plain C says %.9g\n", m / PN, m % PN, P2[m], P2_want[m]);
    return 1;
  }
  return 0;
}

int main(void) {
  uint32_t s = 2024;
  for (int t = 0; t < N * N; t++) A[t] = next_value(&s), B[t] = next_value(&s);
  for (int t = 0; t < LEN; t++) X[t] = next_value(&s), Y[t] = next_value(&s);

  /* plain C; each product goes through a volatile so that no compiler fuses it into an FMA */
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      float acc = 0.0f;
      for (int k = 0; k < N; k++) {
        volatile float p = A[i * N + k] * B[k * N + j];
        acc = acc + p;
      }
      C_want[i * N + j] = acc;
    }
  for (int t = 0; t < LEN; t++) {
    volatile float p = X[t] * Y[t];
    O_want[t] = p + X[t];
  }

  uopc_ctx *c = uopc_ctx_new(NULL); /* owns every node built below */
  if (!c) {
    fprintf(stderr, "host example: out of memory\n");
    return 1;
  }
  /* by BUFFER slot, each with its dtype and shape; C starts zeroed (static) */
  const int64_t mm_len[] = {N * N}, ma_len[] = {LEN};
  uopc_tensor mm_bufs[] = {{A, UOPC_DT_F32, 1, mm_len}, {B, UOPC_DT_F32, 1, mm_len}, {C, UOPC_DT_F32, 1, mm_len}};
  uopc_tensor ma_bufs[] = {{X, UOPC_DT_F32, 1, ma_len}, {Y, UOPC_DT_F32, 1, ma_len}, {O, UOPC_DT_F32, 1, ma_len}};
  int bad = compile_and_call(c, matmul_kernel(c, N), mm_bufs, 3, "matmul") ||
            compile_and_call(c, muladd_kernel(c, LEN), ma_bufs, 3, "a*b+a");
  uopc_ctx_free(c); /* the kernels were freed after their call; the arrays are ours */
  if (bad) return 1;

  long m = first_mismatch(C, C_want, N * N);
  if (m >= 0) {
    fprintf(stderr, "host example: matmul: C[%ld][%ld] is %.9g, plain C says %.9g\n", m / N, m % N, C[m], C_want[m]);
    return 1;
  }
  long o = first_mismatch(O, O_want, LEN);
  if (o >= 0) {
    fprintf(stderr, "host example: a*b+a: O[%ld] is %.9g, plain C says %.9g\n", o, O[o], O_want[o]);
    return 1;
  }
  if (plan_matmul()) return 1;
  printf("host example: matmul %dx%d ok, a*b+a ok, plan matmul %dx%dx%d ok\n", N, N, PM, PK, PN);
  return 0;
}
