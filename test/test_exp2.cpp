// Strict exp2, log2 and sin on f32 (lib/codegen/exp2.c, log2.c, sin.c,
// certain.c): the compiled kernel, at both tiers, gives exactly
// fptrunc(libm f((double)x)) -- what uopc_exec_alu and `run` give -- on
// the edges of the inline paths, the
// specials, the inputs whose inline double is near an f32 midpoint and a
// strided sample of all 2^32 patterns; with UOPC_LONG_TESTS set, on all of
// them (scripts/exp2-exhaustive.sh).  And each inline double stays within
// the error bound the rounding test relies on (2^12 ulps of libm's double:
// 1901 measured for exp2, 3 for log2, 2 for sin).  f16: every input of exp2, log2 and
// sin, in test_kernel.cpp (KernelExp2.F16EveryInputSameBitsAsExecAlu).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
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

// The double sin.c computes for an x with TINY <= |x| <= XMAX, in the same
// operations.
double InlineSin(float x) {
  double xd = x;
  volatile double xk = xd * UOPI_SIN_2_PI;
  volatile double kd = xk + 0x1.8p52;
  volatile double k = kd - 0x1.8p52;
  uint64_t q = B64(kd) & 3;
  volatile double p1 = k * UOPI_SIN_P1, p2 = k * UOPI_SIN_P2, p3 = k * UOPI_SIN_P3;  // no fma, whatever the flags
  volatile double r = xd - p1;
  r = r - p2;
  r = r - p3;
  volatile double z = r * r;
  double ps = uopi_sin_taylor[UOPI_SIN_DEGREE - 1], pc = uopi_cos_taylor[UOPI_COS_DEGREE - 1];
  for (int i = UOPI_SIN_DEGREE - 2; i >= 0; i--) ps = std::fma(ps, z, uopi_sin_taylor[i]);
  for (int i = UOPI_COS_DEGREE - 2; i >= 0; i--) pc = std::fma(pc, z, uopi_cos_taylor[i]);
  volatile double rz = r * z;
  double y = (q & 1) ? std::fma(z, pc, 1.0) : std::fma(rz, ps, r);
  return (q & 2) ? -y : y;
}

bool NearF32Midpoint(double y) {
  uint64_t low = B64(y) & ((1u << 29) - 1);
  return low - ((1u << 28) - UOPI_CERTAIN_T) <= 2 * (uint64_t)UOPI_CERTAIN_T;
}

constexpr size_t kChunk = 1u << 20;

// A compiled one-op program (exp2, log2 or sin) over chunks of f32
// patterns, at both tiers (the strong tier runs TIER0's IR pipeline on these
// with its own codegen: jit.h, "TIER0's IR at TIER2"), against libm's double
// rounded to f32, bit for bit (a NaN for a NaN).  checked counts inputs;
// wrong counts differing outputs of either tier.
struct LibmKernel {
  const char *op;
  double (*ref)(double);
  uopc_ctx *c = uopc_ctx_new(nullptr);
  uopc_plan *p[2] = {nullptr, nullptr};  // UOPC_TIER_FAST, UOPC_TIER_STRONG
  std::vector<float> in = std::vector<float>(kChunk), out = std::vector<float>(kChunk), want = std::vector<float>(kChunk);
  size_t n = 0;
  uint64_t checked = 0, wrong = 0;
  std::string first;

  LibmKernel(const char *op_, double (*ref_)(double)) : op(op_), ref(ref_) {
    std::string text = "%A = param : slot=0 dtype=f32 shape=(" + std::to_string(kChunk) + ",)\n%o = " + op + " %A\n";
    uopc_error e;
    uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), op, &e);
    EXPECT_NE(root, nullptr) << e.msg;
    for (int k = 0; k < 2 && root; k++) {
      uopc_compile_opts o = {k ? UOPC_TIER_STRONG : UOPC_TIER_FAST, 0, 1};
      p[k] = uopc_plan_compile(c, root, &o, &e);
      EXPECT_NE(p[k], nullptr) << e.msg;
    }
  }
  ~LibmKernel() {
    uopc_plan_free(p[0]);
    uopc_plan_free(p[1]);
    uopc_ctx_free(c);
  }
  bool Ok() const { return p[0] && p[1]; }
  void Add(uint32_t bits) {
    in[n++] = F(bits);
    if (n == kChunk) Flush();
  }
  void Flush() {
    if (!n || !Ok()) return;
    for (size_t i = n; i < kChunk; i++) in[i] = 1.0f;
    int64_t shape = (int64_t)kChunk;
    for (size_t i = 0; i < n; i++) want[i] = (float)ref((double)in[i]);  // once for both tiers
    for (int k = 0; k < 2; k++) {
      uopc_tensor a = {in.data(), UOPC_DT_F32, 1, &shape}, o = {out.data(), UOPC_DT_F32, 1, &shape};
      uopc_error e;
      ASSERT_EQ(uopc_plan_call(p[k], &a, 1, &o, &e), UOPC_OK) << e.msg;
      for (size_t i = 0; i < n; i++) {
        if (std::isnan(want[i]) && std::isnan(out[i])) continue;
        if (B(want[i]) != B(out[i]) && wrong++ == 0) {
          char msg[200];
          snprintf(msg, sizeof msg, "%s(%a = 0x%08x): libm 0x%08x, kernel 0x%08x (%s tier)", op, (double)in[i],
                   B(in[i]), B(want[i]), B(out[i]), k ? "strong" : "fast");
          first = msg;
        }
      }
    }
    checked += n;
    n = 0;
  }
};

double Exp2(double x) { return exp2(x); }
double Log2(double x) { return log2(x); }
double Sin(double x) { return sin(x); }

// The inline ranges (where each function's mirror applies).
bool InExp2Range(float x) { return x >= UOPI_EXP2_LO && x <= UOPI_EXP2_HI; }
bool InLog2Range(float x) { return x > 0 && x < INFINITY; }
bool InSinRange(float x) { return std::fabs(x) >= UOPI_SIN_TINY && std::fabs(x) <= UOPI_SIN_XMAX; }

// The start of each kernel test: a strided sample of all 2^32 patterns
// (every one with UOPC_LONG_TESTS; the stride a prime, so the sample meets
// every low-bit pattern).
void AddSample(LibmKernel &k, bool all) {
  for (uint64_t b = 0; b < (1ull << 32); b += all ? 1 : 4093) k.Add((uint32_t)b);
}

// The hard cases: the inputs of the inline range whose inline double lies
// within 2^13 ulps of an f32 midpoint (found by the mirror on every 41st
// pattern, every one with all), where libm's rounding must decide.  Returns
// how many were added.
uint64_t AddHardCases(LibmKernel &k, double (*mirror)(float), bool (*in_range)(float), bool all) {
  uint64_t hard = 0;
  for (uint64_t b = 0; b < (1ull << 32); b += all ? 1 : 41) {
    float x = F((uint32_t)b);
    if (!in_range(x)) continue;
    uint64_t low = B64(mirror(x)) & ((1u << 29) - 1);
    if (low - ((1u << 28) - (1u << 13)) <= (1u << 14)) k.Add((uint32_t)b), hard++;
  }
  return hard;
}

// The end of each kernel test: the specials every function gets (zeros,
// infinities, NaNs quiet, signalling and negative, subnormals) and its own,
// then the verdict.
void AddSpecialsAndCheck(LibmKernel &k, std::initializer_list<uint32_t> own, uint64_t hard, uint64_t min_hard) {
  for (uint32_t s : {0x0u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7fa00000u, 0xffc00001u, 0x1u,
                     0x807fffffu})
    k.Add(s);
  for (uint32_t s : own) k.Add(s);
  k.Flush();
  EXPECT_EQ(k.wrong, 0u) << k.wrong << " of " << k.checked << " differ; the first: " << k.first;
  EXPECT_GT(hard, min_hard) << "hard cases";
  printf("strict %s: %llu inputs checked against libm (%llu near a midpoint)\n", k.op, (unsigned long long)k.checked,
         (unsigned long long)hard);
}

// Each file's argument: its inline double is within 2^12 ulps (bit
// patterns) of libm's double, so a margin of T = 2^16 from a midpoint
// decides the f32 rounding.  Measured against libm on every 257th pattern
// of the inline range (every one with UOPC_LONG_TESTS); the share near a
// midpoint (about 2T / 2^29 = 1/2^12 with random low bits) is what the
// margin costs: those elements go to libm.
void CheckMirrorBound(const char *name, double (*mirror)(float), double (*ref)(double), bool (*in_range)(float),
                      uint64_t min_tested_all, uint64_t min_tested) {
  const bool all = getenv("UOPC_LONG_TESTS") != nullptr;
  int64_t worst = 0;
  uint64_t tested = 0, near = 0;
  for (uint64_t b = 0; b < (1ull << 32); b += all ? 1 : 257) {
    float x = F((uint32_t)b);
    if (!in_range(x)) continue;
    double y = mirror(x), r = ref((double)x);
    int64_t d = (int64_t)B64(y) - (int64_t)B64(r);
    if ((y < 0) != (r < 0) && y != 0 && r != 0) d = INT64_MAX / 2;  // signs differ: far off
    worst = std::max(worst, d < 0 ? -d : d);
    near += NearF32Midpoint(y);
    tested++;
  }
  EXPECT_LE(worst, 1 << 12) << "the inline " << name << " is further from libm than its argument assumes";
  EXPECT_GT(tested, all ? min_tested_all : min_tested);
  EXPECT_LT((double)near / (double)tested, 1.0 / 1024);
  ::testing::Test::RecordProperty("worst_ulps", (int)worst);
  printf("inline %s: %llu inputs, worst %lld double ulps from libm, %.5f%% near a midpoint (libm)\n", name,
         (unsigned long long)tested, (long long)worst, 100.0 * (double)near / (double)tested);
}

TEST(StrictExp2, SameBitsAsLibmOnEdgesSpecialsAndASample) {
  LibmKernel k("exp2", Exp2);
  ASSERT_TRUE(k.Ok());
  const bool all = getenv("UOPC_LONG_TESTS") != nullptr;
  AddSample(k, all);
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
  uint64_t hard = AddHardCases(k, InlineDouble, InExp2Range, all);
  AddSpecialsAndCheck(k, {B(0.5f), B(-0.5f), B(126.5f), B(-124.5f), B(-125.5f)}, hard, all ? 10000u : 200u);
  EXPECT_GT(k.checked, all ? (1ull << 32) : 1000000ull);
}

// exp2.c: 2^12 ulps from exp2(x) by its argument, libm within one; 1901 measured.
TEST(StrictExp2, InlineDoubleStaysWithinItsErrorBound) {
  CheckMirrorBound("exp2", InlineDouble, Exp2, InExp2Range, 2000000000ull, 8000000ull);
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
    bool is_near = low - ((UINT64_C(1) << 41) - UOPI_CERTAIN_T) <= 2 * (uint64_t)UOPI_CERTAIN_T;
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
  ASSERT_TRUE(k.Ok());
  const bool all = getenv("UOPC_LONG_TESTS") != nullptr;
  AddSample(k, all);
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
  uint64_t hard = AddHardCases(k, InlineLog2, InLog2Range, all);
  AddSpecialsAndCheck(k, {0x7f7fffffu, B(-1.0f), B(-0.5f), B(0.5f), B(2.0f), B(1.0f)}, hard, all ? 50000u : 1000u);
}

// log2.c: 3 ulps measured over every positive finite f32.
TEST(StrictLog2, InlineDoubleStaysWithinItsErrorBound) {
  CheckMirrorBound("log2", InlineLog2, Log2, InLog2Range, 2000000000ull, 8000000ull);
}

TEST(StrictSin, SameBitsAsLibmOnEdgesSpecialsAndASample) {
  LibmKernel k("sin", Sin);
  ASSERT_TRUE(k.Ok());
  const bool all = getenv("UOPC_LONG_TESTS") != nullptr;
  AddSample(k, all);
  // around every multiple of pi/4 up to 2^11 (results near 0 and +-1, the
  // quadrant switching, k rounding at a tie) and the last ones below XMAX
  for (int64_t m = -2608; m <= 2608; m++)
    for (int64_t d = -64; d <= 64; d++) k.Add((uint32_t)((int64_t)B((float)((double)m * 0.78539816339744830962)) + d));
  for (int64_t m = 1335000; m <= 1335088; m++)
    for (int64_t d = -64; d <= 64; d++) k.Add((uint32_t)((int64_t)B((float)((double)m * 0.78539816339744830962)) + d));
  // every pattern within 2^16 of the ends: TINY and XMAX, both signs
  for (float end : {(float)UOPI_SIN_TINY, (float)UOPI_SIN_XMAX, -(float)UOPI_SIN_TINY, -(float)UOPI_SIN_XMAX})
    for (int64_t d = -(1 << 16); d <= (1 << 16); d++) k.Add((uint32_t)((int64_t)B(end) + d));
  uint64_t hard = AddHardCases(k, InlineSin, InSinRange, all);
  AddSpecialsAndCheck(k, {0x7f7fffffu, 0xff7fffffu, B(1.0f), B(-1.0f), B(3.14159265f), B(1.57079633f)}, hard,
                      all ? 10000u : 200u);
}

// sin.c: 2 ulps measured over every f32 of the inline range.
TEST(StrictSin, InlineDoubleStaysWithinItsErrorBound) {
  CheckMirrorBound("sin", InlineSin, Sin, InSinRange, 700000000ull, 2500000ull);
}

}  // namespace
