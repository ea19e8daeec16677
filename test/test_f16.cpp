// The bit-level rounding of lib/algebra/fround.h (exec_alu's per-case path)
// against the reference conversions of lib/support/round.c, bit for bit:
// every f16 value, every tie between neighbours and the doubles next to it,
// a stride over all f32 bit patterns, NaN payloads, double subnormals and
// random doubles; then exec_alu's f16/f32 results against the same
// arithmetic through round.c.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

extern "C" {
#include "algebra/fround.h"
#include "uopc/algebra.h"
}

namespace {

uint64_t Bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, 8);
  return b;
}

double FromBits(uint64_t b) {
  double x;
  std::memcpy(&x, &b, 8);
  return x;
}

// Same double bits (NaN included: round.c's NaN and sign are reproduced).
#define EXPECT_SAME(a, b, x) EXPECT_EQ(Bits(a), Bits(b)) << "x = " << std::hexfloat << (x) << " bits 0x" << std::hex << Bits(x)

uint64_t g_fails = 0;

void CheckOne(double x) {
  double want = uopc_round_f16(x), got = uopi_round_f16(x);
  uint16_t hw = uopc_f16_from_double(x), hg = uopi_f16_from_double(x);
  double fw = uopc_round_f32(x), fg = uopi_round_f32(x);
  if (Bits(want) != Bits(got) || hw != hg || Bits(fw) != Bits(fg)) {
    if (++g_fails <= 20) {
      EXPECT_SAME(want, got, x);
      EXPECT_EQ(hw, hg) << std::hexfloat << x;
      EXPECT_SAME(fw, fg, x);
    }
  }
}

uint64_t Next(uint64_t &s) {  // splitmix64
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

TEST(F16, EveryHalfToDoubleAndBack) {
  for (uint32_t h = 0; h < 65536; h++) {
    double want = uopc_f16_to_double((uint16_t)h), got = uopi_f16_to_double((uint16_t)h);
    ASSERT_EQ(Bits(want), Bits(got)) << "h = 0x" << std::hex << h;
    if (!std::isnan(want)) ASSERT_EQ(uopi_f16_from_double(got), h);  // exact round trip
    CheckOne(want);
  }
  EXPECT_EQ(g_fails, 0u);
}

TEST(F16, TiesAndNeighbours) {
  g_fails = 0;
  // Between every pair of adjacent non-negative f16 values (and past 65504:
  // 65520, the overflow tie): the midpoint and the doubles 1, 2 ulp away.
  for (uint32_t h = 0; h < 0x7c00; h++) {
    double lo = uopc_f16_to_double((uint16_t)h);
    double hi = h + 1 < 0x7c00 ? uopc_f16_to_double((uint16_t)(h + 1)) : 65536.0;
    double mid = (lo + hi) / 2;  // exact: both have few bits
    for (double x : {lo, mid, hi}) {
      uint64_t b = Bits(x);
      for (int d = -2; d <= 2; d++) {
        if (b == 0 && d < 0) continue;
        double y = FromBits(b + (uint64_t)(int64_t)d);
        CheckOne(y);
        CheckOne(-y);
      }
    }
  }
  EXPECT_EQ(g_fails, 0u);
}

TEST(F16, SpecialDoubles) {
  g_fails = 0;
  const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 0x1p-24, 0x1p-25, 0x1.0000000000001p-25,
                             0x1.fffffffffffffp-26, 0x1p-14, 0x1.ffcp-15, 65504.0, 65519.99999999999, 65520.0, 65536.0,
                             1e300, -1e300, 0x1p-1074, 0x1p-1022, 0x1.fffffffffffffp1023, 1.0 + 0x1p-11 + 0x1p-40};
  for (double x : specials) CheckOne(x);
  // NaN payloads, both signs, quiet and signalling.
  for (uint64_t p : std::initializer_list<uint64_t>{1, 2, 0x7ffff, 0x8000000000000, 0xfffffffffffff, 0x123456789abc}) {
    CheckOne(FromBits(0x7ff0000000000000ull | p));
    CheckOne(FromBits(0xfff0000000000000ull | p));
  }
  // Double subnormals and every binade's edges.
  for (int e = -1074; e <= 1023; e++) {
    double x = std::ldexp(1.0, e);
    uint64_t b = Bits(x);
    for (uint64_t y : {b, b + 1, b - 1, b | (uint64_t)0xfffffffffffff}) {
      CheckOne(FromBits(y));
      CheckOne(-FromBits(y));
    }
  }
  EXPECT_EQ(g_fails, 0u);
}

TEST(F16, F32BitPatternsStride) {
  g_fails = 0;
  // Every 251st f32 bit pattern (17 M values, NaNs and subnormals included).
  for (uint64_t u = 0; u < (1ull << 32); u += 251) {
    uint32_t w = (uint32_t)u;
    float f;
    std::memcpy(&f, &w, 4);
    CheckOne((double)f);
  }
  EXPECT_EQ(g_fails, 0u);
}

TEST(F16, RandomDoubles) {
  g_fails = 0;
  uint64_t s = 12;
  for (int i = 0; i < 4000000; i++) {
    uint64_t r = Next(s);
    CheckOne(FromBits(r));  // any bits
    // near the f16 range: exponent in [-30, 17], any mantissa
    uint64_t e = (uint64_t)(1023 - 30 + (int)(r % 48));
    CheckOne(FromBits((r & 0x800fffffffffffffull) | (e << 52)));
  }
  EXPECT_EQ(g_fails, 0u);
}

// exec_alu's fast paths (ADD, MUL) and general path against round.c's
// arithmetic: round both inputs, compute in double, round once, one NaN.
double Ref(uopc_op op, uopc_dtype t, double a, double b) {
  auto rnd = [&](double x) { return t == UOPC_DT_F16 ? uopc_round_f16(x) : uopc_round_f32(x); };
  double r;
  a = rnd(a);
  b = rnd(b);
  switch (op) {
  case UOPC_OP_ADD: r = a + b; break;
  case UOPC_OP_MUL: r = a * b; break;
  case UOPC_OP_MAX: r = b > a ? b : a; break;
  default: r = a == 0.0 ? std::copysign(INFINITY, a) : 1.0 / a; break;  // RECIP
  }
  r = rnd(r);
  return std::isnan(r) ? (double)NAN : r;
}

TEST(F16, ExecAluMatchesRoundC) {
  uint64_t s = 99, bad = 0;
  for (uopc_dtype t : {UOPC_DT_F16, UOPC_DT_F32}) {
    for (uopc_op op : {UOPC_OP_ADD, UOPC_OP_MUL, UOPC_OP_MAX, UOPC_OP_RECIP}) {
      for (int i = 0; i < 300000; i++) {
        uint64_t r = Next(s), q = Next(s);
        int span = t == UOPC_DT_F16 ? 48 : 300;
        uint64_t ea = (uint64_t)(1023 - span / 2 - 10 + (int)(r % (uint64_t)span)), eb = (uint64_t)(1023 - span / 2 - 10 + (int)(q % (uint64_t)span));
        double a = FromBits((r & 0x800fffffffffffffull) | (ea << 52)), b = FromBits((q & 0x800fffffffffffffull) | (eb << 52));
        if (i % 7 == 0) b = -a;  // exact cancellation: +0
        if (i % 11 == 0) a = FromBits(0x7ff0000000000001ull + (r & 0xffff));
        uopc_val in[2] = {{0, a}, {0, b}}, out{};
        ASSERT_EQ(uopc_exec_alu(op, t, t, in, &out), 1);
        double want = Ref(op, t, a, b);
        if (Bits(out.f) != Bits(want) && ++bad <= 10)
          ADD_FAILURE() << "op " << op << " dtype " << t << std::hexfloat << " a=" << a << " b=" << b << " got " << out.f
                        << " want " << want;
      }
    }
  }
  EXPECT_EQ(bad, 0u);
}

}  // namespace
