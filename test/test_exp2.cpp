// Strict exp2 on f32 (lib/codegen/exp2.c): the compiled kernel gives
// exactly fptrunc(libm exp2((double)x)) -- what uopc_exec_alu and `run` give
// -- on the edges of the inline path's range, around every integer, on the
// special values and on a strided sample of all 2^32 patterns; with
// UOPC_LONG_TESTS set, on all of them (scripts/exp2-exhaustive.sh).  And the
// inline double the kernel rounds stays within the error bound exp2.c's
// argument relies on (2^12 ulps of libm's double, far below the 2^16 margin).
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

constexpr size_t kChunk = 1u << 20;

struct Exp2Kernel {
  uopc_ctx *c = uopc_ctx_new(nullptr);
  uopc_plan *p = nullptr;
  std::vector<float> in = std::vector<float>(kChunk), out = std::vector<float>(kChunk);
  size_t n = 0;
  uint64_t checked = 0, wrong = 0;
  std::string first;

  Exp2Kernel() {
    std::string text = "%A = param : slot=0 dtype=f32 shape=(" + std::to_string(kChunk) + ",)\n%o = exp2 %A\n";
    uopc_error e;
    uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), "exp2", &e);
    if (root) p = uopc_plan_compile(c, root, nullptr, &e);
    EXPECT_NE(p, nullptr) << e.msg;
  }
  ~Exp2Kernel() {
    uopc_plan_free(p);
    uopc_ctx_free(c);
  }
  void Add(uint32_t bits) {
    in[n++] = F(bits);
    if (n == kChunk) Flush();
  }
  void Flush() {
    if (!n || !p) return;
    for (size_t i = n; i < kChunk; i++) in[i] = 0.0f;
    int64_t shape = (int64_t)kChunk;
    uopc_tensor a = {in.data(), UOPC_DT_F32, 1, &shape}, o = {out.data(), UOPC_DT_F32, 1, &shape};
    uopc_error e;
    ASSERT_EQ(uopc_plan_call(p, &a, 1, &o, &e), UOPC_OK) << e.msg;
    for (size_t i = 0; i < n; i++) {
      uint32_t want = B((float)exp2((double)in[i])), got = B(out[i]);
      checked++;
      if (want != got && wrong++ == 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "exp2(%a = 0x%08x): libm 0x%08x, kernel 0x%08x", (double)in[i], B(in[i]), want, got);
        first = msg;
      }
    }
    n = 0;
  }
};

TEST(StrictExp2, SameBitsAsLibmOnEdgesSpecialsAndASample) {
  Exp2Kernel k;
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

}  // namespace
