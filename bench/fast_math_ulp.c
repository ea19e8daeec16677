/* fast_math_ulp: the error of fast-math mode's exp2, log2 and sin
 * (lib/codegen/fastmath.c) against strict mode (libm's double function
 * rounded to the dtype), over ALL inputs: the 2^32 f32 bit patterns and the
 * 2^16 f16 ones, through the public API (plans of one elementwise op,
 * compiled once strict and once with UOPC_COMPILE_FAST_MATH).
 *
 *   fast_math_ulp [--op exp2|log2|sin] [--f16-only] [--step K]
 *
 * --step K tests every K-th f32 pattern (default 1: all of them).  Prints,
 * per op and dtype, the largest error in ulps (the distance between the
 * two results in the order of the values' bit patterns, so crossing zero
 * or reaching inf counts every float between), the input where it occurs,
 * and how many results differ in NaN-ness (a NaN against a number: never
 * expected).  For sin also the largest error per range |x| < 2^k.  The
 * figures go in docs/fast-math.md.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uopc/uopc.h"

#define CHUNK (1u << 22)

static uopc_plan *plan(uopc_ctx *c, const char *op, const char *dt, uint32_t n, unsigned flags) {
  char text[256];
  snprintf(text, sizeof text, "%%A = param : slot=0 dtype=%s shape=(%u,)\n%%o = %s %%A\n", dt, n, op);
  uopc_error e;
  uopc_node *root = uopc_uir_parse(c, text, strlen(text), "fast_math_ulp", &e);
  if (!root) fprintf(stderr, "parse: %s\n", e.msg), exit(1);
  uopc_compile_opts o = {UOPC_TIER_FAST, flags, 0};
  uopc_plan *p = uopc_plan_compile(c, root, &o, &e);
  if (!p) fprintf(stderr, "compile %s: %s\n", op, e.msg), exit(1);
  return p;
}

static void call(const uopc_plan *p, void *in, void *out, uopc_dtype t, int64_t n) {
  uopc_tensor a = {in, t, 1, &n}, o = {out, t, 1, &n};
  uopc_error e;
  if (uopc_plan_call(p, &a, 1, &o, &e) != UOPC_OK) fprintf(stderr, "call: %s\n", e.msg), exit(1);
}

/* The position of a float's bit pattern in the order of the values. */
static int64_t ord32(uint32_t b) { return b & 0x80000000u ? -(int64_t)(b & 0x7fffffffu) : (int64_t)b; }
static int64_t ord16(uint16_t b) { return b & 0x8000u ? -(int64_t)(b & 0x7fffu) : (int64_t)b; }
static int nan32(uint32_t b) { return (b & 0x7fffffffu) > 0x7f800000u; }
static int nan16(uint16_t b) { return (b & 0x7fffu) > 0x7c00u; }

static void f32_run(uopc_ctx *c, const char *op, uint32_t step) {
  uopc_plan *ps = plan(c, op, "f32", CHUNK, 0), *pf = plan(c, op, "f32", CHUNK, UOPC_COMPILE_FAST_MATH);
  uint32_t *in = malloc(CHUNK * 4), *rs = malloc(CHUNK * 4), *rf = malloc(CHUNK * 4);
  if (!in || !rs || !rf) exit(2);
  int64_t worst = 0, binade[256] = {0};
  uint32_t worst_x = 0, worst_s = 0, worst_f = 0;
  uint64_t nanbad = 0, tested = 0, exact = 0;
  uint64_t total = 1ull << 32;
  for (uint64_t base = 0; base < total; base += (uint64_t)CHUNK * step) {
    uint32_t n = 0;
    for (; n < CHUNK && base + (uint64_t)n * step < total; n++) in[n] = (uint32_t)(base + (uint64_t)n * step);
    for (uint32_t i = n; i < CHUNK; i++) in[i] = 0;
    call(ps, in, rs, UOPC_DT_F32, CHUNK);
    call(pf, in, rf, UOPC_DT_F32, CHUNK);
    for (uint32_t i = 0; i < n; i++) {
      uint32_t s = rs[i], f = rf[i];
      tested++;
      if (nan32(s) || nan32(f)) {
        nanbad += nan32(s) != nan32(f);
        continue;
      }
      int64_t d = llabs(ord32(s) - ord32(f));
      exact += d == 0;
      int bx = (in[i] >> 23) & 0xff;
      if (d > binade[bx]) binade[bx] = d;
      if (d > worst) worst = d, worst_x = in[i], worst_s = s, worst_f = f;
    }
  }
  float x, vs, vf;
  memcpy(&x, &worst_x, 4), memcpy(&vs, &worst_s, 4), memcpy(&vf, &worst_f, 4);
  printf("%-5s f32: %llu inputs, %.4f%% identical, max error %lld ulp at x = %a (%.9g): strict %.9g, fast %.9g; "
         "NaN-ness differs: %llu\n",
         op, (unsigned long long)tested, 100.0 * (double)exact / (double)tested, (long long)worst, x, x, vs, vf,
         (unsigned long long)nanbad);
  if (!strcmp(op, "sin")) { /* per range |x| < 2^k: the binades below it */
    int64_t m = 0;
    for (int bx = 0; bx < 255; bx++) {
      if (binade[bx] > m) m = binade[bx];
      int k = bx - 126; /* binade bx holds |x| in [2^(bx-127), 2^(bx-126)) */
      if (k >= -2 && k <= 32 && (k % 2 == 0 || k > 12))
        printf("  sin f32 |x| < 2^%d: max error %lld ulp\n", k, (long long)m);
    }
  }
  fflush(stdout);
  free(in), free(rs), free(rf);
  uopc_plan_free(ps), uopc_plan_free(pf);
}

static void f16_run(uopc_ctx *c, const char *op) {
  uopc_plan *ps = plan(c, op, "f16", 65536, 0), *pf = plan(c, op, "f16", 65536, UOPC_COMPILE_FAST_MATH);
  static uint16_t in[65536], rs[65536], rf[65536];
  for (uint32_t i = 0; i < 65536; i++) in[i] = (uint16_t)i;
  call(ps, in, rs, UOPC_DT_F16, 65536);
  call(pf, in, rf, UOPC_DT_F16, 65536);
  int64_t worst = 0;
  uint32_t wx = 0, nanbad = 0, exact = 0;
  for (uint32_t i = 0; i < 65536; i++) {
    if (nan16(rs[i]) || nan16(rf[i])) {
      nanbad += nan16(rs[i]) != nan16(rf[i]);
      continue;
    }
    int64_t d = llabs(ord16(rs[i]) - ord16(rf[i]));
    exact += d == 0;
    if (d > worst) worst = d, wx = i;
  }
  printf("%-5s f16: 65536 inputs, %.4f%% identical, max error %lld ulp at bits 0x%04x (strict 0x%04x, fast 0x%04x); "
         "NaN-ness differs: %u\n",
         op, 100.0 * exact / 65536.0, (long long)worst, wx, rs[wx], rf[wx], nanbad);
  fflush(stdout);
  uopc_plan_free(ps), uopc_plan_free(pf);
}

int main(int argc, char **argv) {
  const char *only = NULL;
  int f16_only = 0;
  uint32_t step = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--op") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--f16-only")) f16_only = 1;
    else if (!strcmp(argv[i], "--step") && i + 1 < argc) step = (uint32_t)strtoul(argv[++i], NULL, 10);
    else return fprintf(stderr, "usage: %s [--op exp2|log2|sin] [--f16-only] [--step K]\n", argv[0]), 2;
  }
  if (!step) step = 1;
  setenv("UOPC_CACHE", "0", 1);
  uopc_ctx *c = uopc_ctx_new(NULL);
  const char *ops[] = {"exp2", "log2", "sin"};
  for (int k = 0; k < 3; k++) {
    if (only && strcmp(only, ops[k])) continue;
    f16_run(c, ops[k]);
    if (!f16_only) f32_run(c, ops[k], step);
  }
  uopc_ctx_free(c);
  return 0;
}
