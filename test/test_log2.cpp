// Strict log2 on f32 (lib/codegen/log2.c): the compiled kernel gives exactly
// fptrunc(libm log2((double)x)) -- what uopc_exec_alu and `run` give -- on
// the specials, around every power of two and sqrt(2) * 2^k (where the
// exponent and the halving switch), on the inputs whose inline double is
// near an f32 midpoint, and on a strided sample of all 2^32 patterns; with
// UOPC_LONG_TESTS set, on all of them (scripts/exp2-exhaustive.sh).  And the
// inline double stays within the error bound the rounding test relies on
// (2^12 ulps of libm's double; 3 measured).  f16 log2: every input, in
// test_kernel.cpp (KernelExp2.F16EveryInputSameBitsAsExecAlu).
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

// The double log2.c computes for a positive finite x, in the same operations
// (no contraction: the kernel has none outside the explicit fmas).
#pragma STDC FP_CONTRACT OFF
double InlineDouble(float x) {
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

bool NearMidpoint(double y) {
  uint64_t low = B64(y) & ((1u << 29) - 1);
  return low - ((1u << 28) - UOPI_EXP2_T) <= 2 * (uint64_t)UOPI_EXP2_T;
}

constexpr size_t kChunk = 1u << 20;

struct Log2Kernel {
  uopc_ctx *c = uopc_ctx_new(nullptr);
  uopc_plan *p = nullptr;
  std::vector<float> in = std::vector<float>(kChunk), out = std::vector<float>(kChunk);
  size_t n = 0;
  uint64_t checked = 0, wrong = 0;
  std::string first;

  Log2Kernel() {
    std::string text = "%A = param : slot=0 dtype=f32 shape=(" + std::to_string(kChunk) + ",)\n%o = log2 %A\n";
    uopc_error e;
    uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), "log2", &e);
    if (root) p = uopc_plan_compile(c, root, nullptr, &e);
    EXPECT_NE(p, nullptr) << e.msg;
  }
  ~Log2Kernel() {
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
      float want = (float)log2((double)in[i]);
      uint32_t wb = B(want), gb = B(out[i]);
      checked++;
      if (std::isnan(want) && std::isnan(out[i])) continue;  // a NaN for a NaN
      if (wb != gb && wrong++ == 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "log2(%a = 0x%08x): libm 0x%08x, kernel 0x%08x", (double)in[i], B(in[i]), wb, gb);
        first = msg;
      }
    }
    n = 0;
  }
};

TEST(StrictLog2, SameBitsAsLibmOnEdgesSpecialsAndASample) {
  Log2Kernel k;
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
    uint64_t low = B64(InlineDouble(F((uint32_t)b))) & ((1u << 29) - 1);
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
    double y = InlineDouble(x), ref = log2((double)x);
    int64_t d = (int64_t)B64(y) - (int64_t)B64(ref);
    if ((y < 0) != (ref < 0) && y != 0 && ref != 0) d = INT64_MAX / 2;  // signs differ: far off
    worst = std::max(worst, d < 0 ? -d : d);
    near += NearMidpoint(y);
    tested++;
  }
  EXPECT_LE(worst, 1 << 12) << "the inline log2 is further from libm than log2.c assumes";
  EXPECT_GT(tested, all ? 2000000000ull : 8000000ull);
  EXPECT_LT((double)near / (double)tested, 1.0 / 1024);
  printf("inline log2: %llu inputs, worst %lld double ulps from libm, %.5f%% near a midpoint (libm)\n",
         (unsigned long long)tested, (long long)worst, 100.0 * (double)near / (double)tested);
}

}  // namespace
