// Strict exp2 and log2 on f32 (lib/codegen/exp2.c, log2.c, certain.c): the
// compiled kernel gives exactly fptrunc(libm f((double)x)) -- what
// uopc_exec_alu and `run` give -- on the edges of the inline paths, the
// specials, the inputs whose inline double is near an f32 midpoint and a
// strided sample of all 2^32 patterns; with UOPC_LONG_TESTS set, on all of
// them (scripts/exp2-exhaustive.sh).  And each inline double stays within
// the error bound the rounding test relies on (2^12 ulps of libm's double:
// 1901 measured for exp2, 3 for log2).  f16: every input of exp2, log2 and
// sin, in test_kernel.cpp (KernelExp2.F16EveryInputSameBitsAsExecAlu).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "codegen/cg.h"
}
#include "uopc/uopc.h"

namespace {

float F(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}
uint32_t B(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}
uint64_t B64(double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  return b;
}
double D(uint64_t b) {
  double d;
  memcpy(&d, &b, 8);
  return d;
}

// The double exp2.c computes for an x in [LO, HI], in the same operations.
double InlineDouble(float x) {
  double xd = x, n = (xd + 0x1.8p52) - 0x1.8p52, t = xd - n, p = uopi_exp2_taylor[UOPI_EXP2_DEGREE];
  for (int k = UOPI_EXP2_DEGREE - 1; k >= 0; k--) p = std::fma(p, t, uopi_exp2_taylor[k]);
  return D(B64(p) + ((uint64_t)(int64_t)n << 52));
}

// The double log2.c computes for a positive finite x, in the same operations
// (no contraction: the kernel has none outside the explicit fmas).
#pragma STDC FP_CONTRACT OFF
double InlineLog2(float x) {
  uint64_t b = B64((double)x);
  int64_t e = (int64_t)((b >> 52) & 0x7ff) - 1023;
  double m = D((b & 0xFFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
  if (m > UOPI_LOG2_SQRT2) {
    volatile double h = m * 0.5;
    m = h;
    e += 1;
  }
  volatile double f = m - 1.0;
  volatile double s = f / (2.0 + f);
  volatile double z = s * s;
  double p = 1.0 / (2 * UOPI_LOG2_DEGREE + 1);
  for (int k = UOPI_LOG2_DEGREE - 1; k >= 0; k--) p = std::fma(p, z, 1.0 / (2 * k + 1));
  volatile double two_s = 2.0 * s;
  volatile double l = two_s * p;
  volatile double q = l * UOPI_LOG2_INVLN2;
  return (double)e + q;
}

bool NearF32Midpoint(double y) {
  uint64_t low = B64(y) & ((1u << 29) - 1);
  return low - ((1u << 28) - UOPI_EXP2_T) <= 2 * (uint64_t)UOPI_EXP2_T;
}

constexpr size_t kChunk = 1u << 20;

// A compiled one-op program (exp2 or log2) over chunks of f32 patterns,
// against libm's double rounded to f32, bit for bit (a NaN for a NaN).
struct LibmKernel {
  const char *op;
  double (*ref)(double);
  uopc_ctx *c = uopc_ctx_new(nullptr);
  uopc_plan *p = nullptr;
  std::vector<float> in = std::vector<float>(kChunk), out = std::vector<float>(kChunk);
  size_t n = 0;
  uint64_t checked = 0, wrong = 0;
  std::string first;

  LibmKernel(const char *op_, double (*ref_)(double)) : op(op_), ref(ref_) {
    std::string text = "%A = param : slot=0 dtype=f32 shape=(" + std::to_string(kChunk) + ",)\n%o = " + op + " %A\n";
    uopc_error e;
    uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), op, &e);
    if (root) p = uopc_plan_compile(c, root, nullptr, &e);
    EXPECT_NE(p, nullptr) << e.msg;
  }
  ~LibmKernel() {
    uopc_plan_free(p);
    uopc_ctx_free(c);
  }
  void Add(uint32_t bits) {
    in[n++] = F(bits);
    if (n == kChunk) Flush();
  }
  void Flush() {
    if (!n || !p) return;
    for (size_t i = n; i < kChunk; i++) in[i] = 1.0f;
    int64_t shape = (int64_t)kChunk;
    uopc_tensor a = {in.data(), UOPC_DT_F32, 1, &shape}, o = {out.data(), UOPC_DT_F32, 1, &shape};
    uopc_error e;
    ASSERT_EQ(uopc_plan_call(p, &a, 1, &o, &e), UOPC_OK) << e.msg;
    for (size_t i = 0; i < n; i++) {
      float want = (float)ref((double)in[i]);
      checked++;
      if (std::isnan(want) && std::isnan(out[i])) continue;
      if (B(want) != B(out[i]) && wrong++ == 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s(%a = 0x%08x): libm 0x%08x, kernel 0x%08x", op, (double)in[i], B(in[i]), B(want),
                 B(out[i]));
        first = msg;
      }
    }
    n = 0;
  }
};

double Exp2(double x) { return exp2(x); }
double Log2(double x) { return log2(x); }

TEST(StrictExp2, SameBitsAsLibmOnEdgesSpecialsAndASample) {
  LibmKernel k("exp2", Exp2);
  ASSERT_NE(k.p, nullptr);
  const bool all = getenv("UOPC_LONG_TESTS") != nullptr;
  const uint64_t step = all ? 1 : 4093;  // a prime: the sample meets every low-bit pattern
  uint64_t hard = 0;
  for (uint64_t b = 0; b < (1ull << 32); b += step) k.Add((uint32_t)b);
  // every pattern within 2^16 of the inline range's ends and of each integer
  // in [-130, 130] (where rint switches and results are exact powers of 2)
  for (int i = -130; i <= 130; i++) {
    uint32_t c = B((float)i);
    for (int64_t d = -(1 << 12); d <= (1 << 12); d++) k.Add((uint32_t)((int64_t)c + d));
  }
  for (float end : {-125.0f, 127.0f, -126.0f, -149.0f, 128.0f})
    for (int64_t d = -(1 << 16); d <= (1 << 16); d++) k.Add((uint32_t)((int64_t)B(end) + d));
  // every pattern whose result is near or beyond the ends: x in [-150, -124] and [126, 128.5]
  for (uint32_t b = B(-124.0f); b <= B(-150.0f); b++) k.Add(b);
  for (uint32_t b = B(126.0f); b <= B(128.5f); b++) k.Add(b);
  // the hard cases: inputs whose inline double lies within 2^13 ulps of an
  // f32 midpoint (found by the mirror of exp2.c's arithmetic on every 41st
  // pattern of the inline range), where libm's rounding must decide
  for (uint64_t b = 0; b < (1ull << 32); b += all ? 1 : 41) {
    float x = F((uint32_t)b);
    if (!(x >= UOPI_EXP2_LO && x <= UOPI_EXP2_HI)) continue;
    uint64_t low = B64(InlineDouble(x)) & ((1u << 29) - 1);
    if (low - ((1u << 28) - (1u << 13)) <= (1u << 14)) k.Add((uint32_t)b), hard++;
  }
  // the specials: zeros, infinities, NaNs (quiet, signalling, negative), subnormals, half-integers
  for (uint32_t s : {0x0u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7fa00000u, 0xffc00001u, 0x1u,
                     0x807fffffu, B(0.5f), B(-0.5f), B(126.5f), B(-124.5f), B(-125.5f)})
    k.Add(s);
  k.Flush();
  EXPECT_EQ(k.wrong, 0u) << k.wrong << " of " << k.checked << " differ; the first: " << k.first;
  EXPECT_GT(k.checked, all ? (1ull << 32) : 1000000ull);
  EXPECT_GT(hard, all ? 10000ull : 200ull) << "hard cases";
  printf("strict exp2: %llu inputs, %llu of them near a midpoint\n", (unsigned long long)k.checked, (unsigned long long)hard);
}

// exp2.c's argument: the inline double is within 2^12 ulps (bit patterns) of
// exp2(x), and libm's within one, so a margin of T = 2^16 from a midpoint
// decides the f32 rounding.  Measured here against libm on a sample (on all
// inputs of the inline range with UOPC_LONG_TESTS); the fallback share is
// what the margin costs.
TEST(StrictExp2, InlineDoubleStaysWithinItsErrorBound) {
  const bool all = getenv("UOPC_LONG_TESTS") != nullptr;
  const uint32_t step = all ? 1 : 257;
  int64_t worst = 0;
  uint64_t tested = 0, near = 0;
  for (uint64_t b = 0; b < (1ull << 32); b += step) {
    float x = F((uint32_t)b);
    if (!(x >= UOPI_EXP2_LO && x <= UOPI_EXP2_HI)) continue;
    double y = InlineDouble(x), ref = exp2((double)x);
    int64_t d = (int64_t)B64(y) - (int64_t)B64(ref);
    worst = std::max(worst, d < 0 ? -d : d);
    uint64_t low = B64(y) & ((1u << 29) - 1);
    near += low - ((1u << 28) - UOPI_EXP2_T) <= 2 * (uint64_t)UOPI_EXP2_T;
    tested++;
  }
  EXPECT_LE(worst, 1 << 12) << "the inline exp2 is further from libm than exp2.c assumes";
  EXPECT_GT(tested, all ? 2000000000ull : 8000000ull);
  // about 2T / 2^29 = 1/2^12 of the inputs go to libm
  EXPECT_LT((double)near / (double)tested, 1.0 / 1024);
  RecordProperty("worst_ulps", (int)worst);
  printf("inline exp2: %llu inputs, worst %lld double ulps from libm, %.5f%% near a midpoint (libm)\n",
         (unsigned long long)tested, (long long)worst, 100.0 * (double)near / (double)tested);
}

// The f16 inline path (exp2.c: x in [LO16, HI16], more than T = 2^16 ulps
// from an f16 midpoint, the double rounded to f16 exactly): on every f16
// input of the range, the inline double is within 2^12 ulps of libm's and
// rounds to the same f16, and few inputs fall back.
TEST(StrictExp2, F16InlinePathCoversTheRange) {
  uint64_t tested = 0, near = 0;
  int64_t worst = 0;
  for (uint32_t hb = 0; hb < 65536; hb++) {
    double xd = uopc_f16_to_double((uint16_t)hb);
    if (!(xd >= UOPI_EXP2_LO16 && xd <= UOPI_EXP2_HI16)) continue;
    float x = (float)xd;  // exact
    double y = InlineDouble(x), ref = exp2(xd);
    int64_t d = (int64_t)B64(y) - (int64_t)B64(ref);
    worst = std::max(worst, d < 0 ? -d : d);
    uint64_t low = B64(y) & ((UINT64_C(1) << 42) - 1);
    bool is_near = low - ((UINT64_C(1) << 41) - UOPI_EXP2_T) <= 2 * (uint64_t)UOPI_EXP2_T;
    near += is_near;
    tested++;
    if (!is_near)
      ASSERT_EQ(uopc_f16_from_double(y), uopc_f16_from_double(ref)) << "x = " << xd;
  }
  EXPECT_LE(worst, 1 << 12);
  EXPECT_GT(tested, 30000u);  // [-14, 16): 2 * 14 binades below 1 and 4 above, 1024 values each
  EXPECT_LT((double)near / (double)tested, 1.0 / 256);
  printf("inline f16 exp2: %llu inputs, worst %lld double ulps from libm, %llu near an f16 midpoint (libm)\n",
         (unsigned long long)tested, (long long)worst, (unsigned long long)near);
}

TEST(StrictLog2, SameBitsAsLibmOnEdgesSpecialsAndASample) {
  LibmKernel k("log2", Log2);
  ASSERT_NE(k.p, nullptr);
  const bool all = getenv("UOPC_LONG_TESTS") != nullptr;
  const uint64_t step = all ? 1 : 4093;  // a prime: the sample meets every low-bit pattern
  for (uint64_t b = 0; b < (1ull << 32); b += step) k.Add((uint32_t)b);
  // around every power of two (the result an integer, e switching) and
  // every sqrt(2) * 2^k (the halving switching), f32 subnormals included
  for (int e = -149; e <= 127; e++)
    for (double c : {std::ldexp(1.0, e), std::ldexp(UOPI_LOG2_SQRT2, e)}) {
      if (c >= 3.4e38) continue;
      uint32_t cb = B((float)c);
      for (int64_t d = -(1 << 10); d <= (1 << 10); d++) {
        int64_t v = (int64_t)cb + d;
        if (v > 0 && v < 0x7f800000) k.Add((uint32_t)v);
      }
    }
  // every pattern within 2^16 of 1.0 (results near 0)
  for (int64_t d = -(1 << 16); d <= (1 << 16); d++) k.Add((uint32_t)((int64_t)B(1.0f) + d));
  // the hard cases: inputs whose inline double lies within 2^13 ulps of an
  // f32 midpoint (found by the mirror on every 41st positive pattern)
  uint64_t hard = 0;
  for (uint64_t b = 1; b < 0x7f800000u; b += all ? 1 : 41) {
    uint64_t low = B64(InlineLog2(F((uint32_t)b))) & ((1u << 29) - 1);
    if (low - ((1u << 28) - (1u << 13)) <= (1u << 14)) k.Add((uint32_t)b), hard++;
  }
  // the specials: zeros, infinities, NaNs (quiet, signalling, negative), negatives, subnormals
  for (uint32_t s : {0x0u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7fa00000u, 0xffc00001u, 0x1u,
                     0x807fffffu, 0x7f7fffffu, B(-1.0f), B(-0.5f), B(0.5f), B(2.0f), B(1.0f)})
    k.Add(s);
  k.Flush();
  EXPECT_EQ(k.wrong, 0u) << k.wrong << " of " << k.checked << " differ; the first: " << k.first;
  EXPECT_GT(hard, all ? 50000u : 1000u);
  printf("strict log2: %llu inputs checked against libm (%llu near a midpoint)\n", (unsigned long long)k.checked,
         (unsigned long long)hard);
}

// log2.c's argument: the inline double is within 2^12 ulps of libm's (3
// measured over every positive finite f32), so a margin of T = 2^16 from a
// midpoint decides the f32 rounding.  On a sample here, on all inputs with
// UOPC_LONG_TESTS.
TEST(StrictLog2, InlineDoubleStaysWithinItsErrorBound) {
  const bool all = getenv("UOPC_LONG_TESTS") != nullptr;
  const uint32_t step = all ? 1 : 257;
  int64_t worst = 0;
  uint64_t tested = 0, near = 0;
  for (uint64_t b = 1; b < 0x7f800000u; b += step) {
    float x = F((uint32_t)b);
    double y = InlineLog2(x), ref = log2((double)x);
    int64_t d = (int64_t)B64(y) - (int64_t)B64(ref);
    if ((y < 0) != (ref < 0) && y != 0 && ref != 0) d = INT64_MAX / 2;  // signs differ: far off
    worst = std::max(worst, d < 0 ? -d : d);
    near += NearF32Midpoint(y);
    tested++;
  }
  EXPECT_LE(worst, 1 << 12) << "the inline log2 is further from libm than log2.c assumes";
  EXPECT_GT(tested, all ? 2000000000ull : 8000000ull);
  EXPECT_LT((double)near / (double)tested, 1.0 / 1024);
  printf("inline log2: %llu inputs, worst %lld double ulps from libm, %.5f%% near a midpoint (libm)\n",
         (unsigned long long)tested, (long long)worst, 100.0 * (double)near / (double)tested);
}

}  // namespace
