// test_exec_alu.cpp - exec_alu, the reference semantics (seed chapter 3.2),
// and the rounding helpers.  docs/semantics.md is the table being tested.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <vector>

#include "uopc/algebra.h"

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

uopc_val I(int64_t i) {
  uopc_val v{};
  v.i = i;
  return v;
}
uopc_val F(double f) {
  uopc_val v{};
  v.f = f;
  return v;
}

struct Res {
  int ok;
  uopc_val v;
};

Res run(uopc_op op, uopc_dtype out_t, uopc_dtype in_t, std::initializer_list<uopc_val> args) {
  uopc_val in[3] = {};
  int n = 0;
  for (const uopc_val &a : args) in[n++] = a;
  Res r{};
  r.v.i = 12345;   // sentinel: a refusal must not touch *out
  r.v.f = 12345.0;
  r.ok = uopc_exec_alu(op, out_t, in_t, in, &r.v);
  return r;
}

uint64_t bits(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// Bit-for-bit agreement, except that any NaN matches any NaN.
::testing::AssertionResult Same(double expect, double got) {
  if (std::isnan(expect) && std::isnan(got)) return ::testing::AssertionSuccess();
  if (bits(expect) == bits(got)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << expect << " (0x" << std::hex << bits(expect)
                                       << "), got " << std::dec << got << " (0x" << std::hex << bits(got)
                                       << ")";
}

// A float result of exec_alu.
double fl(uopc_op op, uopc_dtype out_t, uopc_dtype in_t, std::initializer_list<uopc_val> args) {
  Res r = run(op, out_t, in_t, args);
  EXPECT_EQ(r.ok, 1) << "refused";
  EXPECT_EQ(r.v.i, 0) << "unused field of a float result";
  return r.v.f;
}
double f32(uopc_op op, double a, double b) { return fl(op, UOPC_DT_F32, UOPC_DT_F32, {F(a), F(b)}); }
double f32u(uopc_op op, double a) { return fl(op, UOPC_DT_F32, UOPC_DT_F32, {F(a)}); }
double f16(uopc_op op, double a, double b) { return fl(op, UOPC_DT_F16, UOPC_DT_F16, {F(a), F(b)}); }
double f16u(uopc_op op, double a) { return fl(op, UOPC_DT_F16, UOPC_DT_F16, {F(a)}); }

// An integer (bool or i32) result of exec_alu.
int64_t in(uopc_op op, uopc_dtype out_t, uopc_dtype in_t, std::initializer_list<uopc_val> args) {
  Res r = run(op, out_t, in_t, args);
  EXPECT_EQ(r.ok, 1) << "refused";
  EXPECT_EQ(bits(r.v.f), 0u) << "unused field of an integer result";
  return r.v.i;
}
int64_t i32(uopc_op op, int64_t a, int64_t b) { return in(op, UOPC_DT_I32, UOPC_DT_I32, {I(a), I(b)}); }

bool refused(uopc_op op, uopc_dtype out_t, uopc_dtype in_t, std::initializer_list<uopc_val> args) {
  Res r = run(op, out_t, in_t, args);
  return r.ok == 0 && r.v.i == 12345 && r.v.f == 12345.0;
}

const int64_t kMin = INT32_MIN, kMax = INT32_MAX;

// ---- chapter 3.2: every printed example ----------------------------------

TEST(ExecAluSeed, Section32Examples) {
  EXPECT_EQ(i32(UOPC_OP_FLOORDIV, -7, 2), -4);
  EXPECT_EQ(i32(UOPC_OP_FLOORMOD, -7, 2), 1);
  EXPECT_EQ(i32(UOPC_OP_ADD, kMax, 1), kMin);
  EXPECT_EQ(i32(UOPC_OP_MUL, 65536, 65536), 0);
  EXPECT_TRUE(Same(0.30000001192092896, f32(UOPC_OP_ADD, 0.1, 0.2)));
  EXPECT_TRUE(Same(16777216.0, f32(UOPC_OP_ADD, 16777216.0, 1.0)));
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(-2.7)}), -2);
  EXPECT_TRUE(refused(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(kInf)}));
  EXPECT_TRUE(std::isnan(f32(UOPC_OP_MUL, kInf, 0.0)));
  EXPECT_TRUE(Same(-kInf, f32u(UOPC_OP_RECIP, -0.0)));
  EXPECT_TRUE(refused(UOPC_OP_FLOORDIV, UOPC_DT_I32, UOPC_DT_I32, {I(5), I(0)}));
  EXPECT_EQ(in(UOPC_OP_CMPLT, UOPC_DT_BOOL, UOPC_DT_I32, {I(3), I(4)}), 1);
}

TEST(ExecAluSeed, Exercise10EdgeCases) {
  EXPECT_TRUE(Same(kInf, f32u(UOPC_OP_RECIP, 0.0)));
  EXPECT_TRUE(Same(-kInf, f32u(UOPC_OP_LOG2, 0.0)));
  EXPECT_TRUE(std::isnan(f32u(UOPC_OP_SQRT, -1.0)));
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_BOOL, UOPC_DT_F32, {F(0.5)}), 1);
  EXPECT_EQ(i32(UOPC_OP_FLOORMOD, 7, -2), -1);
}

TEST(ExecAluSeed, PitfallRoundInputs) {
  // The f32 constant 16777217.0 is 16777216.0f in C.
  EXPECT_TRUE(Same(16777218.0, f32(UOPC_OP_ADD, 16777217.0, 2.0)));
}

TEST(ExecAluSeed, PitfallIntMinDivMinusOne) {
  EXPECT_TRUE(refused(UOPC_OP_FLOORDIV, UOPC_DT_I32, UOPC_DT_I32, {I(kMin), I(-1)}));
  EXPECT_EQ(i32(UOPC_OP_FLOORDIV, kMin, 1), kMin);
  EXPECT_EQ(i32(UOPC_OP_FLOORDIV, kMin + 1, -1), kMax);
}

// ---- the seed's gaps (issue 3), each with the fixed answer ----------------

TEST(ExecAluSeedGap, F32OverflowIsInf) {
  EXPECT_TRUE(Same(kInf, f32(UOPC_OP_ADD, 3e38, 3e38)));
  EXPECT_TRUE(Same(-kInf, f32(UOPC_OP_MUL, -1e30, 1e30)));
  EXPECT_TRUE(Same(kInf, f32u(UOPC_OP_EXP2, 128.0)));
  EXPECT_TRUE(Same(kInf, f32u(UOPC_OP_RECIP, 1e-45)));   // input rounds to 2^-149; 2^149 overflows
  // An input beyond f32 is inf too (the C literal 1e39f is inf).
  EXPECT_TRUE(Same(kInf, f32(UOPC_OP_ADD, 1e39, 0.0)));
}

TEST(ExecAluSeedGap, F16ResultAtOrAbove65520IsInf) {
  EXPECT_TRUE(Same(kInf, f16(UOPC_OP_ADD, 60000.0, 60000.0)));   // the seed: 120000.0
  EXPECT_TRUE(Same(kInf, f16(UOPC_OP_ADD, 65504.0, 16.0)));      // 65520: the tie goes to inf
  EXPECT_TRUE(Same(65504.0, f16(UOPC_OP_ADD, 65504.0, 8.0)));
  EXPECT_TRUE(Same(-kInf, f16(UOPC_OP_MUL, -300.0, 300.0)));
}

TEST(ExecAluSeedGap, Exp2NanIsNan) {
  EXPECT_TRUE(std::isnan(f32u(UOPC_OP_EXP2, kNan)));   // the seed: inf
  EXPECT_TRUE(std::isnan(f16u(UOPC_OP_EXP2, kNan)));
}

TEST(ExecAluSeedGap, IntMinModMinusOneRefused) {
  EXPECT_TRUE(refused(UOPC_OP_FLOORMOD, UOPC_DT_I32, UOPC_DT_I32, {I(kMin), I(-1)}));   // the seed: 0
  EXPECT_TRUE(refused(UOPC_OP_FLOORMOD, UOPC_DT_I32, UOPC_DT_I32, {I(5), I(0)}));
  EXPECT_EQ(i32(UOPC_OP_FLOORMOD, kMin, 1), 0);
  EXPECT_EQ(i32(UOPC_OP_FLOORMOD, kMin + 1, -1), 0);
}

TEST(ExecAluSeedGap, OutOfRangeCastToI32Refused) {
  EXPECT_TRUE(refused(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(3000000000.0)}));   // the seed: -1294967296
  EXPECT_TRUE(refused(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(-3000000000.0)}));
  // 2147483647.0 is 2^31 in f32: out of range.
  EXPECT_TRUE(refused(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(2147483647.0)}));
  EXPECT_TRUE(refused(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(2147483647.5)}));
  EXPECT_TRUE(refused(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(-2147483904.0)}));   // next f32 below -2^31
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(-2147483648.0)}), kMin);
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(-2147483648.9)}), kMin);   // rounds/truncates to -2^31
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(2147483520.0)}), 2147483520);   // largest f32 < 2^31
  EXPECT_TRUE(refused(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(-kInf)}));
  EXPECT_TRUE(refused(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(kNan)}));
  EXPECT_TRUE(refused(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F16, {F(kInf)}));
  EXPECT_TRUE(refused(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F16, {F(70000.0)}));   // inf in f16
  EXPECT_TRUE(refused(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F16, {F(kNan)}));
}

TEST(ExecAluSeedGap, ComparisonsAndCastsRoundF32Inputs) {
  EXPECT_EQ(in(UOPC_OP_CMPLT, UOPC_DT_BOOL, UOPC_DT_F32, {F(16777216.0), F(16777217.0)}), 0);   // seed: True
  EXPECT_EQ(in(UOPC_OP_CMPNE, UOPC_DT_BOOL, UOPC_DT_F32, {F(16777216.0), F(16777217.0)}), 0);
  EXPECT_EQ(in(UOPC_OP_CMPNE, UOPC_DT_BOOL, UOPC_DT_F16, {F(2048.0), F(2049.0)}), 0);
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(16777217.0)}), 16777216);
  EXPECT_TRUE(Same(0.10000000149011612, fl(UOPC_OP_CAST, UOPC_DT_F32, UOPC_DT_F32, {F(0.1)})));
  // f32 -> f16 starts from the f32 value: 1 + 2^-11 + 2^-40 is 1 + 2^-11 in f32, a tie.
  EXPECT_TRUE(Same(1.0, fl(UOPC_OP_CAST, UOPC_DT_F16, UOPC_DT_F32, {F(1.0 + 0x1p-11 + 0x1p-40)})));
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_BOOL, UOPC_DT_F32, {F(1e-50)}), 0);   // 0.0f
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_BOOL, UOPC_DT_F16, {F(1e-8)}), 0);    // 0 in f16
}

TEST(ExecAluSeedGap, MaxIsNotCommutativeForFloats) {
  // max(a, b) = b if b > a else a, on the rounded inputs.
  for (uopc_dtype t : {UOPC_DT_F32, UOPC_DT_F16}) {
    EXPECT_TRUE(Same(1.0, fl(UOPC_OP_MAX, t, t, {F(1.0), F(kNan)})));
    EXPECT_TRUE(std::isnan(fl(UOPC_OP_MAX, t, t, {F(kNan), F(1.0)})));
    EXPECT_TRUE(Same(0.0, fl(UOPC_OP_MAX, t, t, {F(0.0), F(-0.0)})));
    EXPECT_TRUE(Same(-0.0, fl(UOPC_OP_MAX, t, t, {F(-0.0), F(0.0)})));
    EXPECT_TRUE(Same(2.0, fl(UOPC_OP_MAX, t, t, {F(-kInf), F(2.0)})));
  }
  // i32 and bool max are commutative (the canonical swap is sound there).
  EXPECT_EQ(i32(UOPC_OP_MAX, -5, 3), 3);
  EXPECT_EQ(i32(UOPC_OP_MAX, 3, -5), 3);
  EXPECT_EQ(i32(UOPC_OP_MAX, kMin, kMax), kMax);
}

TEST(ExecAluSeedGap, TranscendentalsAreDoubleLibmRounded) {
  std::mt19937_64 rng(3);
  for (int k = 0; k < 20000; k++) {
    float x32 = std::uniform_real_distribution<float>(-200.0f, 200.0f)(rng);
    double x = x32;
    EXPECT_TRUE(Same(uopc_round_f32(std::exp2(x)), f32u(UOPC_OP_EXP2, x)));
    EXPECT_TRUE(Same(uopc_round_f32(std::log2(x)), f32u(UOPC_OP_LOG2, x)));
    EXPECT_TRUE(Same(uopc_round_f32(std::sin(x)), f32u(UOPC_OP_SIN, x)));
    double h = uopc_round_f16(x / 8);
    EXPECT_TRUE(Same(uopc_round_f16(std::exp2(h)), f16u(UOPC_OP_EXP2, x / 8)));
    EXPECT_TRUE(Same(uopc_round_f16(std::log2(h)), f16u(UOPC_OP_LOG2, x / 8)));
    EXPECT_TRUE(Same(uopc_round_f16(std::sin(h)), f16u(UOPC_OP_SIN, x / 8)));
  }
}

// ---- op by op ---------------------------------------------------------------

TEST(ExecAluBool, Ops) {
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 2; b++) {
      EXPECT_EQ(in(UOPC_OP_ADD, UOPC_DT_BOOL, UOPC_DT_BOOL, {I(a), I(b)}), a | b);
      EXPECT_EQ(in(UOPC_OP_MUL, UOPC_DT_BOOL, UOPC_DT_BOOL, {I(a), I(b)}), a & b);
      EXPECT_EQ(in(UOPC_OP_MAX, UOPC_DT_BOOL, UOPC_DT_BOOL, {I(a), I(b)}), a | b);
      EXPECT_EQ(in(UOPC_OP_CMPLT, UOPC_DT_BOOL, UOPC_DT_BOOL, {I(a), I(b)}), a < b);
      EXPECT_EQ(in(UOPC_OP_CMPNE, UOPC_DT_BOOL, UOPC_DT_BOOL, {I(a), I(b)}), a != b);
      EXPECT_EQ(in(UOPC_OP_WHERE, UOPC_DT_BOOL, UOPC_DT_BOOL, {I(1), I(a), I(b)}), a);
      EXPECT_EQ(in(UOPC_OP_WHERE, UOPC_DT_BOOL, UOPC_DT_BOOL, {I(0), I(a), I(b)}), b);
    }
  // Any nonzero i reads as True; results are 0/1.
  EXPECT_EQ(in(UOPC_OP_ADD, UOPC_DT_BOOL, UOPC_DT_BOOL, {I(2), I(0)}), 1);
  EXPECT_EQ(in(UOPC_OP_MUL, UOPC_DT_BOOL, UOPC_DT_BOOL, {I(2), I(4)}), 1);
  EXPECT_EQ(in(UOPC_OP_CMPNE, UOPC_DT_BOOL, UOPC_DT_BOOL, {I(2), I(1)}), 0);
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_BOOL, {I(-7)}), 1);
}

TEST(ExecAluI32, WrapAndCompare) {
  EXPECT_EQ(i32(UOPC_OP_ADD, kMin, -1), kMax);
  EXPECT_EQ(i32(UOPC_OP_ADD, kMin, kMin), 0);
  EXPECT_EQ(i32(UOPC_OP_MUL, kMin, -1), kMin);
  EXPECT_EQ(i32(UOPC_OP_MUL, kMin, kMin), 0);
  EXPECT_EQ(i32(UOPC_OP_MUL, kMax, kMax), 1);
  EXPECT_EQ(i32(UOPC_OP_MUL, 46341, 46341), -2147479015);
  // Inputs are wrapped to i32 first.
  EXPECT_EQ(i32(UOPC_OP_ADD, (int64_t)1 << 32, 5), 5);
  EXPECT_EQ(i32(UOPC_OP_ADD, (int64_t)kMax + 1, 0), kMin);
  EXPECT_EQ(in(UOPC_OP_CMPLT, UOPC_DT_BOOL, UOPC_DT_I32, {I(kMin), I(kMax)}), 1);
  EXPECT_EQ(in(UOPC_OP_CMPLT, UOPC_DT_BOOL, UOPC_DT_I32, {I(4), I(3)}), 0);
  EXPECT_EQ(in(UOPC_OP_CMPNE, UOPC_DT_BOOL, UOPC_DT_I32, {I(4), I(3)}), 1);
  EXPECT_EQ(in(UOPC_OP_WHERE, UOPC_DT_I32, UOPC_DT_I32, {I(1), I(-4), I(3)}), -4);
  EXPECT_EQ(in(UOPC_OP_WHERE, UOPC_DT_I32, UOPC_DT_I32, {I(0), I(-4), I(3)}), 3);
}

TEST(ExecAluI32, FloorDivMod) {
  struct Case {
    int64_t a, b, q, r;
  } cases[] = {{7, 2, 3, 1},       {-7, 2, -4, 1},       {7, -2, -4, -1},     {-7, -2, 3, -1},
               {6, 3, 2, 0},       {-6, 3, -2, 0},       {0, -5, 0, 0},       {-1, 4, -1, 3},
               {kMin, 2, -1073741824, 0}, {kMin, 3, -715827883, 1}, {kMax, -1, -kMax, 0},
               {kMax, kMin, -1, -1}, {kMin, kMax, -2, 2147483646}, {1, kMin, -1, kMin + 1}};
  for (const Case &c : cases) {
    EXPECT_EQ(i32(UOPC_OP_FLOORDIV, c.a, c.b), c.q) << c.a << " // " << c.b;
    EXPECT_EQ(i32(UOPC_OP_FLOORMOD, c.a, c.b), c.r) << c.a << " % " << c.b;
  }
  EXPECT_TRUE(refused(UOPC_OP_FLOORDIV, UOPC_DT_I32, UOPC_DT_I32, {I(0), I(0)}));
  EXPECT_TRUE(refused(UOPC_OP_FLOORMOD, UOPC_DT_I32, UOPC_DT_I32, {I(kMin), I(0)}));
  // Operands are wrapped first: 2^32 is 0.
  EXPECT_TRUE(refused(UOPC_OP_FLOORDIV, UOPC_DT_I32, UOPC_DT_I32, {I(7), I((int64_t)1 << 32)}));
}

TEST(ExecAluFloat, Unary) {
  EXPECT_TRUE(Same(-0.0, f32u(UOPC_OP_SQRT, -0.0)));
  EXPECT_TRUE(Same(-0.0, f16u(UOPC_OP_SQRT, -0.0)));
  EXPECT_TRUE(Same(kInf, f32u(UOPC_OP_SQRT, kInf)));
  EXPECT_TRUE(std::isnan(f32u(UOPC_OP_SQRT, -kInf)));
  EXPECT_TRUE(Same(1.4142135381698608, f32u(UOPC_OP_SQRT, 2.0)));
  EXPECT_TRUE(Same(1.4140625, f16u(UOPC_OP_SQRT, 2.0)));
  EXPECT_TRUE(Same(0.3333333432674408, f32u(UOPC_OP_RECIP, 3.0)));
  EXPECT_TRUE(Same(0.333251953125, f16u(UOPC_OP_RECIP, 3.0)));
  EXPECT_TRUE(Same(kInf, f16u(UOPC_OP_RECIP, 0.0)));
  EXPECT_TRUE(Same(-kInf, f16u(UOPC_OP_RECIP, -1e-9)));   // input rounds to -0.0 in f16
  EXPECT_TRUE(Same(-0.0, f32u(UOPC_OP_RECIP, -kInf)));
  EXPECT_TRUE(std::isnan(f32u(UOPC_OP_RECIP, kNan)));
  EXPECT_TRUE(Same(0.0, f32u(UOPC_OP_EXP2, -kInf)));
  EXPECT_TRUE(Same(kInf, f32u(UOPC_OP_EXP2, kInf)));
  EXPECT_TRUE(Same(kInf, f16u(UOPC_OP_EXP2, 16.0)));
  EXPECT_TRUE(Same(32768.0, f16u(UOPC_OP_EXP2, 15.0)));
  EXPECT_TRUE(Same(0x1p-24, f16u(UOPC_OP_EXP2, -24.0)));
  EXPECT_TRUE(Same(0.0, f16u(UOPC_OP_EXP2, -26.0)));
  EXPECT_TRUE(Same(0x1p-149, f32u(UOPC_OP_EXP2, -149.0)));
  EXPECT_TRUE(Same(0.0, f32u(UOPC_OP_EXP2, -151.0)));
  EXPECT_TRUE(Same(-kInf, f16u(UOPC_OP_LOG2, -0.0)));
  EXPECT_TRUE(std::isnan(f32u(UOPC_OP_LOG2, -1.0)));
  EXPECT_TRUE(Same(kInf, f32u(UOPC_OP_LOG2, kInf)));
  EXPECT_TRUE(Same(-149.0, f32u(UOPC_OP_LOG2, 0x1p-149)));
  EXPECT_TRUE(std::isnan(f32u(UOPC_OP_SIN, kInf)));
  EXPECT_TRUE(std::isnan(f16u(UOPC_OP_SIN, -kInf)));
  EXPECT_TRUE(Same(-0.0, f32u(UOPC_OP_SIN, -0.0)));
  EXPECT_TRUE(Same(uopc_round_f32(std::sin((double)3.14159265f)), f32u(UOPC_OP_SIN, 3.14159265358979)));
}

TEST(ExecAluFloat, BinaryAndWhere) {
  EXPECT_TRUE(std::isnan(f32(UOPC_OP_ADD, kInf, -kInf)));
  EXPECT_TRUE(Same(0.0, f32(UOPC_OP_ADD, -0.0, 0.0)));
  EXPECT_TRUE(Same(-0.0, f32(UOPC_OP_ADD, -0.0, -0.0)));
  EXPECT_TRUE(Same(-0.0, f32(UOPC_OP_MUL, -1.0, 0.0)));
  EXPECT_TRUE(std::isnan(f16(UOPC_OP_MUL, 0.0, kInf)));
  EXPECT_TRUE(Same(0.0, f32(UOPC_OP_MUL, 1e-30, 1e-30)));   // underflow
  EXPECT_TRUE(Same(0x1p-149, f32(UOPC_OP_MUL, 0x1p-75, 0x1p-74)));
  EXPECT_TRUE(Same(0x1p-24, f16(UOPC_OP_MUL, 0x1p-12, 0x1p-12)));
  EXPECT_TRUE(Same(0.0, f16(UOPC_OP_MUL, 0x1p-13, 0x1p-12)));   // 2^-25: tie to even 0
  EXPECT_TRUE(Same(0.2998046875, f16(UOPC_OP_ADD, 0.1, 0.2)));
  EXPECT_TRUE(Same(2048.0, f16(UOPC_OP_ADD, 2048.0, 1.0)));
  EXPECT_TRUE(Same(2052.0, f16(UOPC_OP_ADD, 2050.0, 1.0)));   // 2051 ties to even 2052
  // Comparisons with NaN and signed zeros.
  for (uopc_dtype t : {UOPC_DT_F32, UOPC_DT_F16}) {
    EXPECT_EQ(in(UOPC_OP_CMPLT, UOPC_DT_BOOL, t, {F(kNan), F(1.0)}), 0);
    EXPECT_EQ(in(UOPC_OP_CMPLT, UOPC_DT_BOOL, t, {F(1.0), F(kNan)}), 0);
    EXPECT_EQ(in(UOPC_OP_CMPNE, UOPC_DT_BOOL, t, {F(kNan), F(kNan)}), 1);
    EXPECT_EQ(in(UOPC_OP_CMPNE, UOPC_DT_BOOL, t, {F(0.0), F(-0.0)}), 0);
    EXPECT_EQ(in(UOPC_OP_CMPLT, UOPC_DT_BOOL, t, {F(-0.0), F(0.0)}), 0);
    EXPECT_EQ(in(UOPC_OP_CMPLT, UOPC_DT_BOOL, t, {F(-kInf), F(kInf)}), 1);
    // WHERE: condition is bool, values rounded.
    EXPECT_TRUE(Same(t == UOPC_DT_F32 ? 0.10000000149011612 : 0.0999755859375,
                     fl(UOPC_OP_WHERE, t, t, {I(1), F(0.1), F(2.0)})));
    EXPECT_TRUE(Same(-0.0, fl(UOPC_OP_WHERE, t, t, {I(0), F(0.1), F(-0.0)})));
    EXPECT_TRUE(Same(kInf, fl(UOPC_OP_WHERE, t, t, {I(5), F(1e300), F(2.0)})));
  }
  EXPECT_TRUE(Same(65504.0, fl(UOPC_OP_WHERE, UOPC_DT_F16, UOPC_DT_F16, {I(0), F(1.0), F(65519.99)})));
}

TEST(ExecAluCast, AllPairs) {
  // to bool: x != 0
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_BOOL, UOPC_DT_BOOL, {I(1)}), 1);
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_BOOL, UOPC_DT_I32, {I(-3)}), 1);
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_BOOL, UOPC_DT_I32, {I(0)}), 0);
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_BOOL, UOPC_DT_I32, {I((int64_t)1 << 32)}), 0);   // wraps to 0
  for (uopc_dtype t : {UOPC_DT_F32, UOPC_DT_F16}) {
    EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_BOOL, t, {F(kNan)}), 1);
    EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_BOOL, t, {F(-0.0)}), 0);
    EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_BOOL, t, {F(-kInf)}), 1);
  }
  // to i32
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_BOOL, {I(0)}), 0);
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_BOOL, {I(1)}), 1);
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_I32, {I(-9)}), -9);
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(2.7)}), 2);
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(-0.9)}), 0);
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F16, {F(65504.0)}), 65504);
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F16, {F(-2.5)}), -2);
  EXPECT_EQ(in(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F16, {F(1000.7)}), 1000);   // 1000.5 in f16
  // to f32
  EXPECT_TRUE(Same(1.0, fl(UOPC_OP_CAST, UOPC_DT_F32, UOPC_DT_BOOL, {I(1)})));
  EXPECT_TRUE(Same(0.0, fl(UOPC_OP_CAST, UOPC_DT_F32, UOPC_DT_BOOL, {I(0)})));
  EXPECT_TRUE(Same(16777216.0, fl(UOPC_OP_CAST, UOPC_DT_F32, UOPC_DT_I32, {I(16777217)})));
  EXPECT_TRUE(Same(2147483648.0, fl(UOPC_OP_CAST, UOPC_DT_F32, UOPC_DT_I32, {I(kMax)})));
  EXPECT_TRUE(Same(-2147483648.0, fl(UOPC_OP_CAST, UOPC_DT_F32, UOPC_DT_I32, {I(kMin)})));
  EXPECT_TRUE(Same(0.0, fl(UOPC_OP_CAST, UOPC_DT_F32, UOPC_DT_I32, {I(0)})));
  EXPECT_TRUE(Same(65504.0, fl(UOPC_OP_CAST, UOPC_DT_F32, UOPC_DT_F16, {F(65519.0)})));
  EXPECT_TRUE(Same(0x1p-24, fl(UOPC_OP_CAST, UOPC_DT_F32, UOPC_DT_F16, {F(0x1p-24)})));
  EXPECT_TRUE(Same(kInf, fl(UOPC_OP_CAST, UOPC_DT_F32, UOPC_DT_F32, {F(1e39)})));
  EXPECT_TRUE(std::isnan(fl(UOPC_OP_CAST, UOPC_DT_F32, UOPC_DT_F16, {F(kNan)})));
  // to f16
  EXPECT_TRUE(Same(1.0, fl(UOPC_OP_CAST, UOPC_DT_F16, UOPC_DT_BOOL, {I(1)})));
  EXPECT_TRUE(Same(65504.0, fl(UOPC_OP_CAST, UOPC_DT_F16, UOPC_DT_I32, {I(65519)})));
  EXPECT_TRUE(Same(kInf, fl(UOPC_OP_CAST, UOPC_DT_F16, UOPC_DT_I32, {I(65520)})));
  EXPECT_TRUE(Same(-kInf, fl(UOPC_OP_CAST, UOPC_DT_F16, UOPC_DT_I32, {I(-70000)})));
  EXPECT_TRUE(Same(kInf, fl(UOPC_OP_CAST, UOPC_DT_F16, UOPC_DT_I32, {I(kMax)})));
  EXPECT_TRUE(Same(2052.0, fl(UOPC_OP_CAST, UOPC_DT_F16, UOPC_DT_I32, {I(2051)})));   // tie to even
  EXPECT_TRUE(Same(kInf, fl(UOPC_OP_CAST, UOPC_DT_F16, UOPC_DT_F32, {F(65520.0)})));
  EXPECT_TRUE(Same(65504.0, fl(UOPC_OP_CAST, UOPC_DT_F16, UOPC_DT_F32, {F(65519.99)})));   // 65520.0 in f32!
  EXPECT_TRUE(Same(0.0999755859375, fl(UOPC_OP_CAST, UOPC_DT_F16, UOPC_DT_F32, {F(0.1)})));
  EXPECT_TRUE(Same(-0.0, fl(UOPC_OP_CAST, UOPC_DT_F16, UOPC_DT_F16, {F(-1e-10)})));
}

// ---- the domain: everything outside it gives 0 and leaves *out alone ------

// An independent copy of the domain table in docs/semantics.md.
bool expected_domain(uopc_op op, uopc_dtype out_t, uopc_dtype in_t) {
  auto val = [](uopc_dtype t) { return t == UOPC_DT_BOOL || t == UOPC_DT_I32 || t == UOPC_DT_F32 || t == UOPC_DT_F16; };
  auto flt = [](uopc_dtype t) { return t == UOPC_DT_F32 || t == UOPC_DT_F16; };
  if (!val(out_t) || !val(in_t)) return false;
  switch (op) {
  case UOPC_OP_ADD: case UOPC_OP_MUL: case UOPC_OP_MAX: case UOPC_OP_WHERE: return out_t == in_t;
  case UOPC_OP_CMPLT: case UOPC_OP_CMPNE: return out_t == UOPC_DT_BOOL;
  case UOPC_OP_FLOORDIV: case UOPC_OP_FLOORMOD: return out_t == UOPC_DT_I32 && in_t == UOPC_DT_I32;
  case UOPC_OP_RECIP: case UOPC_OP_EXP2: case UOPC_OP_LOG2: case UOPC_OP_SQRT: case UOPC_OP_SIN:
    return out_t == in_t && flt(in_t);
  case UOPC_OP_CAST: return true;
  default: return false;
  }
}

TEST(ExecAluDomain, EveryTriple) {
  int inside = 0;
  // Up to the NUM_ sentinels (an out-of-range enum value is UB in C++).
  for (int op = 0; op <= (int)UOPC_OP_COUNT; op++)
    for (int o = 0; o <= (int)UOPC_DT_COUNT; o++)
      for (int i = 0; i <= (int)UOPC_DT_COUNT; i++) {
        uopc_op p = (uopc_op)op;
        uopc_dtype ot = (uopc_dtype)o, it = (uopc_dtype)i;
        // Operands that are defined for every op in the domain (1 and 1).
        uopc_val args[3] = {};
        for (uopc_val &a : args) {
          a.i = 1;
          a.f = 1.0;
        }
        uopc_val out;
        out.i = 777;
        out.f = 777.0;
        int ok = uopc_exec_alu(p, ot, it, args, &out);
        bool want = expected_domain(p, ot, it);
        EXPECT_EQ(ok, want ? 1 : 0) << "op " << op << " out " << o << " in " << i;
        if (!ok) {
          EXPECT_TRUE(out.i == 777 && out.f == 777.0);
        }
        if (want) {
          inside++;
          EXPECT_EQ(uopc_exec_alu(p, ot, it, args, nullptr), 0);
          EXPECT_EQ(uopc_exec_alu(p, ot, it, nullptr, &out), 0);
        }
      }
  // 3 ops x 4 dtypes (ADD MUL MAX) + WHERE x 4 + 2 compares x 4 + 2 (floordiv, floormod)
  // + 5 unary x 2 + 16 casts.
  EXPECT_EQ(inside, 12 + 4 + 8 + 2 + 10 + 16);
}

TEST(ExecAluDomain, Examples) {
  EXPECT_TRUE(refused(UOPC_OP_RECIP, UOPC_DT_I32, UOPC_DT_I32, {I(3)}));
  EXPECT_TRUE(refused(UOPC_OP_SQRT, UOPC_DT_BOOL, UOPC_DT_BOOL, {I(1)}));
  EXPECT_TRUE(refused(UOPC_OP_FLOORDIV, UOPC_DT_F32, UOPC_DT_F32, {F(7.0), F(2.0)}));
  EXPECT_TRUE(refused(UOPC_OP_FLOORMOD, UOPC_DT_BOOL, UOPC_DT_BOOL, {I(1), I(1)}));
  EXPECT_TRUE(refused(UOPC_OP_ADD, UOPC_DT_F32, UOPC_DT_I32, {I(1), I(2)}));
  EXPECT_TRUE(refused(UOPC_OP_CMPLT, UOPC_DT_I32, UOPC_DT_I32, {I(1), I(2)}));
  EXPECT_TRUE(refused(UOPC_OP_EXP2, UOPC_DT_F16, UOPC_DT_F32, {F(1.0)}));
  EXPECT_TRUE(refused(UOPC_OP_CAST, UOPC_DT_VOID, UOPC_DT_I32, {I(1)}));
  EXPECT_TRUE(refused(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_VOID, {I(1)}));
  EXPECT_TRUE(refused(UOPC_OP_CONST, UOPC_DT_I32, UOPC_DT_I32, {I(1)}));
  EXPECT_TRUE(refused(UOPC_OP_STORE, UOPC_DT_VOID, UOPC_DT_I32, {I(1), I(1)}));
  EXPECT_TRUE(refused(UOPC_OP_COUNT, UOPC_DT_I32, UOPC_DT_I32, {I(1), I(1)}));
  EXPECT_TRUE(refused(UOPC_OP_ADD, UOPC_DT_COUNT, UOPC_DT_COUNT, {I(1), I(1)}));
}

// ---- f16 and f32 rounding ---------------------------------------------------

TEST(ExecAluF16, RoundingCases) {
  EXPECT_TRUE(Same(65504.0, uopc_round_f16(65504.0)));
  EXPECT_TRUE(Same(65504.0, uopc_round_f16(65519.99)));
  EXPECT_TRUE(Same(kInf, uopc_round_f16(65520.0)));
  EXPECT_TRUE(Same(-kInf, uopc_round_f16(-65520.0)));
  EXPECT_TRUE(Same(-65504.0, uopc_round_f16(-65519.999999)));
  EXPECT_TRUE(Same(kInf, uopc_round_f16(1e300)));
  EXPECT_TRUE(Same(-kInf, uopc_round_f16(-kInf)));
  EXPECT_TRUE(std::isnan(uopc_round_f16(kNan)));
  // Subnormals: units of 2^-24.
  EXPECT_TRUE(Same(0x1p-24, uopc_round_f16(0x1p-24)));
  EXPECT_TRUE(Same(0.0, uopc_round_f16(0x1p-25)));                       // tie -> 0 (even)
  EXPECT_TRUE(Same(-0.0, uopc_round_f16(-0x1p-25)));
  EXPECT_TRUE(Same(0x1p-24, uopc_round_f16(0x1.000001p-25)));            // just above the tie
  EXPECT_TRUE(Same(0x1p-23, uopc_round_f16(3 * 0x1p-25)));               // 1.5 units -> 2
  EXPECT_TRUE(Same(0x1p-23, uopc_round_f16(5 * 0x1p-25)));               // 2.5 units -> 2
  EXPECT_TRUE(Same(1023 * 0x1p-24, uopc_round_f16(1023 * 0x1p-24)));     // largest subnormal
  EXPECT_TRUE(Same(0x1p-14, uopc_round_f16(1023.5 * 0x1p-24)));          // tie -> smallest normal
  EXPECT_TRUE(Same(0x1p-14, uopc_round_f16(0x1p-14)));
  EXPECT_TRUE(Same(0.0, uopc_round_f16(5e-324)));
  EXPECT_TRUE(Same(-0.0, uopc_round_f16(-0.0)));
  // Ties to even among normals.
  EXPECT_TRUE(Same(1.0, uopc_round_f16(1.0 + 0x1p-11)));
  EXPECT_TRUE(Same(1.0 + 0x1p-9, uopc_round_f16(1.0 + 3 * 0x1p-11)));
  EXPECT_TRUE(Same(2048.0, uopc_round_f16(2049.0)));
  EXPECT_TRUE(Same(2052.0, uopc_round_f16(2051.0)));
  EXPECT_TRUE(Same(2.0, uopc_round_f16(2.0 - 0x1p-12)));   // rounds up into the next binade
  // Directly from double, not through float (that would round twice).
  EXPECT_TRUE(Same(1.0 + 0x1p-10, uopc_round_f16(1.0 + 0x1p-11 + 0x1p-40)));
  EXPECT_TRUE(Same(1.0, uopc_round_f16((double)(float)(1.0 + 0x1p-11 + 0x1p-40))));
  // Bits.
  EXPECT_EQ(uopc_f16_from_double(1.0), 0x3c00);
  EXPECT_EQ(uopc_f16_from_double(-2.0), 0xc000);
  EXPECT_EQ(uopc_f16_from_double(65504.0), 0x7bff);
  EXPECT_EQ(uopc_f16_from_double(kInf), 0x7c00);
  EXPECT_EQ(uopc_f16_from_double(-kInf), 0xfc00);
  EXPECT_EQ(uopc_f16_from_double(0x1p-24), 0x0001);
  EXPECT_EQ(uopc_f16_from_double(-0.0), 0x8000);
  EXPECT_EQ(uopc_f16_from_double(kNan) & 0x7c00, 0x7c00);
  EXPECT_NE(uopc_f16_from_double(kNan) & 0x03ff, 0);
  EXPECT_TRUE(Same(0.333251953125, uopc_f16_to_double(0x3555)));
  EXPECT_TRUE(std::isnan(uopc_f16_to_double(0x7c01)));
  EXPECT_TRUE(std::isnan(uopc_f16_to_double(0xfe00)));
}

// Every f16 value reads back to itself, and every midpoint between two
// neighbours goes to the even one (the next double either side to the nearer).
TEST(ExecAluF16, ExhaustiveNeighbours) {
  for (uint32_t h = 0; h < 0x10000; h++) {
    double x = uopc_f16_to_double((uint16_t)h);
    if (std::isnan(x)) continue;
    ASSERT_EQ(uopc_f16_from_double(x), h) << std::hex << h;
  }
  for (uint32_t s = 0; s < 2; s++)
    for (uint32_t h = 0; h < 0x7c00; h++) {   // h and h + 1 (0x7bff + 1 is inf)
      uint16_t lo = (uint16_t)(h | (s << 15)), hi = (uint16_t)((h + 1) | (s << 15));
      double a = uopc_f16_to_double(lo), b = uopc_f16_to_double(hi);
      if (h + 1 == 0x7c00) b = s ? -65536.0 : 65536.0;   // where inf would be, for the midpoint
      double mid = a + (b - a) / 2;   // exact in double
      uint16_t even = (h & 1) ? hi : lo;
      ASSERT_EQ(uopc_f16_from_double(mid), even) << std::hex << h;
      ASSERT_EQ(uopc_f16_from_double(std::nextafter(mid, a)), lo) << std::hex << h;
      ASSERT_EQ(uopc_f16_from_double(std::nextafter(mid, b)), hi) << std::hex << h;
    }
}

#if defined(__FLT16_MAX__)
// Cross-check with the compiler's own _Float16 (libgcc/compiler-rt
// __truncdfhf2 rounds directly from double).
TEST(ExecAluF16, MatchesCompilerFloat16) {
  std::mt19937_64 rng(16);
  for (int k = 0; k < 100000; k++) {
    uint64_t u = rng();
    // Exponents around the f16 range (2^-30 .. 2^20), random sign and mantissa.
    uint64_t e = 1023 - 30 + (rng() % 51);
    u = (u & 0x800fffffffffffffull) | (e << 52);
    double x;
    std::memcpy(&x, &u, sizeof x);
    volatile double vx = x;
    _Float16 h = (_Float16)vx;
    ASSERT_TRUE(Same((double)h, uopc_round_f16(x))) << x;
  }
}

// f16 arithmetic against the compiler's _Float16 arithmetic.
TEST(ExecAluF16, RandomOpsMatchFloat16) {
  std::mt19937_64 rng(17);
  for (int k = 0; k < 100000; k++) {
    uint16_t ha = (uint16_t)rng(), hb = (uint16_t)rng();
    double a = uopc_f16_to_double(ha), b = uopc_f16_to_double(hb);
    volatile _Float16 va = (_Float16)a, vb = (_Float16)b;
    _Float16 sum = va + vb, prod = va * vb, rec = (_Float16)1 / vb, quo = va / vb;
    ASSERT_TRUE(Same((double)sum, f16(UOPC_OP_ADD, a, b))) << a << " + " << b;
    ASSERT_TRUE(Same((double)prod, f16(UOPC_OP_MUL, a, b))) << a << " * " << b;
    ASSERT_TRUE(Same((double)rec, f16u(UOPC_OP_RECIP, b))) << "1 / " << b;
    ASSERT_TRUE(Same((double)quo, uopc_round_f16(a / b))) << a << " / " << b;
  }
}
#endif

TEST(ExecAluF32, RoundF32) {
  EXPECT_TRUE(Same(3.4028234663852886e38, uopc_round_f32(3.4028234663852886e38)));
  EXPECT_TRUE(Same(3.4028234663852886e38, uopc_round_f32(0x1.fffffefffffffp127)));
  EXPECT_TRUE(Same(kInf, uopc_round_f32(0x1.ffffffp127)));   // the tie goes to inf
  EXPECT_TRUE(Same(-kInf, uopc_round_f32(-1e300)));
  EXPECT_TRUE(Same(0x1p-149, uopc_round_f32(0x1.8p-150)));
  EXPECT_TRUE(Same(0.0, uopc_round_f32(0x1p-150)));
  EXPECT_TRUE(Same(-0.0, uopc_round_f32(-1e-300)));
  EXPECT_TRUE(std::isnan(uopc_round_f32(kNan)));
  EXPECT_TRUE(Same(kInf, uopc_round_f32(kInf)));
}

TEST(ExecAluI32, WrapI32) {
  EXPECT_EQ(uopc_wrap_i32(0), 0);
  EXPECT_EQ(uopc_wrap_i32(kMax), kMax);
  EXPECT_EQ(uopc_wrap_i32(kMax + 1), kMin);
  EXPECT_EQ(uopc_wrap_i32(kMin), kMin);
  EXPECT_EQ(uopc_wrap_i32(kMin - 1), kMax);
  EXPECT_EQ(uopc_wrap_i32(-1), -1);
  EXPECT_EQ(uopc_wrap_i32(4294967296LL), 0);
  EXPECT_EQ(uopc_wrap_i32(INT64_MIN), 0);
  EXPECT_EQ(uopc_wrap_i32(INT64_MAX), -1);
}

// ---- randomized cross-checks against plain C arithmetic --------------------

float random_f32(std::mt19937_64 &rng) {
  uint32_t u = (uint32_t)rng();
  if (rng() & 1) u = (u & 0x807fffffu) | ((120u + (uint32_t)(rng() % 16)) << 23);   // close exponents
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

TEST(ExecAluRandom, F32MatchesFloatArithmetic) {
  std::mt19937_64 rng(32);
  for (int k = 0; k < 100000; k++) {
    volatile float va = random_f32(rng), vb = random_f32(rng);
    float a = va, b = vb;
    volatile float sum = va + vb, prod = va * vb, quo = va / vb, rec = 1.0f / vb, root = std::sqrt(a);
    float mx = b > a ? b : a;
    ASSERT_TRUE(Same(sum, f32(UOPC_OP_ADD, a, b))) << a << " + " << b;
    ASSERT_TRUE(Same(prod, f32(UOPC_OP_MUL, a, b))) << a << " * " << b;
    ASSERT_TRUE(Same(quo, uopc_round_f32((double)a / (double)b))) << a << " / " << b;
    ASSERT_TRUE(Same(rec, f32u(UOPC_OP_RECIP, b))) << "1 / " << b;
    ASSERT_TRUE(Same(root, f32u(UOPC_OP_SQRT, a))) << "sqrt " << a;
    ASSERT_TRUE(Same(mx, f32(UOPC_OP_MAX, a, b))) << "max " << a << ", " << b;
    ASSERT_EQ(in(UOPC_OP_CMPLT, UOPC_DT_BOOL, UOPC_DT_F32, {F(a), F(b)}), a < b);
    ASSERT_EQ(in(UOPC_OP_CMPNE, UOPC_DT_BOOL, UOPC_DT_F32, {F(a), F(b)}), a != b);
    ASSERT_EQ(in(UOPC_OP_CAST, UOPC_DT_BOOL, UOPC_DT_F32, {F(a)}), a != 0.0f);
    if (std::isfinite(a) && a > -2147483904.0f && a < 2147483648.0f)
      ASSERT_EQ(in(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(a)}), (int32_t)a) << a;
    else
      ASSERT_TRUE(refused(UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32, {F(a)})) << a;
  }
}

TEST(ExecAluRandom, I32MatchesIndependentFormulas) {
  std::mt19937_64 rng(64);
  for (int k = 0; k < 100000; k++) {
    int32_t a = (int32_t)(uint32_t)rng();
    int32_t b = (k & 1) ? (int32_t)(rng() % 19) - 9 : (int32_t)(uint32_t)rng();
    // Wraparound via unsigned arithmetic.
    int32_t sum = (int32_t)((uint32_t)a + (uint32_t)b), prod = (int32_t)((uint32_t)a * (uint32_t)b);
    ASSERT_EQ(i32(UOPC_OP_ADD, a, b), sum);
    ASSERT_EQ(i32(UOPC_OP_MUL, a, b), prod);
    ASSERT_EQ(i32(UOPC_OP_MAX, a, b), a > b ? a : b);
    ASSERT_EQ(in(UOPC_OP_CMPLT, UOPC_DT_BOOL, UOPC_DT_I32, {I(a), I(b)}), a < b);
    ASSERT_TRUE(Same((double)(float)a, fl(UOPC_OP_CAST, UOPC_DT_F32, UOPC_DT_I32, {I(a)})));
    if (b == 0 || (a == INT32_MIN && b == -1)) {
      ASSERT_TRUE(refused(UOPC_OP_FLOORDIV, UOPC_DT_I32, UOPC_DT_I32, {I(a), I(b)}));
      ASSERT_TRUE(refused(UOPC_OP_FLOORMOD, UOPC_DT_I32, UOPC_DT_I32, {I(a), I(b)}));
      continue;
    }
    // floor of the exact quotient: (double)a / b is never rounded onto an
    // integer it is not (its distance to one is >= 1/|b|, far above an ulp).
    int64_t q = (int64_t)std::floor((double)a / (double)b);
    int64_t r = (int64_t)a - (int64_t)b * q;
    ASSERT_EQ(i32(UOPC_OP_FLOORDIV, a, b), q) << a << " // " << b;
    ASSERT_EQ(i32(UOPC_OP_FLOORMOD, a, b), r) << a << " % " << b;
    ASSERT_TRUE(r == 0 || (r < 0) == (b < 0));
    ASSERT_LT(std::llabs(r), std::llabs((int64_t)b));
  }
}

// uopc_exec_alu_n against uopc_exec_alu case by case, for every
// (op, out, in) the loops of the domain test visit (in and out of the
// domain): the same ok flags and the same result bits, untouched results
// where refused.  Random bits, edge values and values with refusals
// (zero divisors, NaN casts) mixed.
TEST(ExecAluBatch, SameAsOneAtATime) {
  std::mt19937_64 rng(12);
  const double edges[] = {0.0, -0.0, 1.0, -1.0, 0.5, 65504.0, 65520.0, 1e300, -1e-300, 0x1p-25, 0x1.8p-25,
                          0x1p-24, 0x1.ffffffp127, std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
  const size_t n = 3000;
  std::vector<uopc_val> in(3 * n), out(n), one(n);
  std::vector<unsigned char> ok(n);
  size_t checked = 0;
  for (int op = 0; op <= (int)UOPC_OP_COUNT; op++)
    for (int o = 0; o <= (int)UOPC_DT_COUNT; o++)
      for (int i = 0; i <= (int)UOPC_DT_COUNT; i++) {
        uopc_op p = (uopc_op)op;
        uopc_dtype ot = (uopc_dtype)o, it = (uopc_dtype)i;
        for (uopc_val &v : in) {
          uint64_t r = rng();
          switch (r & 3) {
          case 0: v.f = edges[(r >> 8) % (sizeof edges / sizeof edges[0])]; break;
          case 1: {
            uint64_t b = rng();
            std::memcpy(&v.f, &b, 8);
            break;
          }
          case 2: v.f = (double)(int32_t)(r >> 32) * 0x1p-20; break;
          default: v.f = (double)((int64_t)(r >> 60) - 8); break;
          }
          v.i = (r & 4) ? (int64_t)(int32_t)(r >> 32) : (int64_t)((r >> 40) % 5) - 2;
        }
        for (size_t j = 0; j < n; j++) {
          out[j].i = one[j].i = 777;
          out[j].f = one[j].f = 777.0;
        }
        size_t k = p == UOPC_OP_WHERE ? 3 : (p == UOPC_OP_RECIP || p == UOPC_OP_EXP2 || p == UOPC_OP_LOG2 ||
                                             p == UOPC_OP_SQRT || p == UOPC_OP_SIN || p == UOPC_OP_CAST)
                                                ? 1
                                                : 2;
        size_t good = uopc_exec_alu_n(p, ot, it, in.data(), n, out.data(), ok.data()), want = 0;
        for (size_t j = 0; j < n; j++) {
          int r = uopc_exec_alu(p, ot, it, in.data() + k * j, &one[j]);
          want += (size_t)r;
          ASSERT_EQ((int)ok[j], r) << "op " << op << " out " << o << " in " << i << " case " << j;
          ASSERT_EQ(std::memcmp(&out[j], &one[j], sizeof one[j]), 0)
              << "op " << op << " out " << o << " in " << i << " case " << j;
        }
        ASSERT_EQ(good, want);
        checked += want;
      }
  EXPECT_GT(checked, (size_t)50 * n);  // most of the domain computed something
  uopc_val v[2] = {}, r;
  unsigned char f;
  EXPECT_EQ(uopc_exec_alu_n(UOPC_OP_ADD, UOPC_DT_F32, UOPC_DT_F32, nullptr, 1, &r, &f), 0u);
  EXPECT_EQ(uopc_exec_alu_n(UOPC_OP_ADD, UOPC_DT_F32, UOPC_DT_F32, v, 1, nullptr, &f), 0u);
  EXPECT_EQ(uopc_exec_alu_n(UOPC_OP_ADD, UOPC_DT_F32, UOPC_DT_F32, v, 1, &r, nullptr), 0u);
  EXPECT_EQ(uopc_exec_alu_n(UOPC_OP_ADD, UOPC_DT_F32, UOPC_DT_F32, v, 0, &r, &f), 0u);
}

}  // namespace

// The batch fast paths (f32 and f16 ADD and MUL: lib/algebra/exec_alu_vec.c,
// four cases at a time without a branch, and the scalar loop after them)
// against lib/support/round.c directly: every f16 value against 80 others
// (zeros, subnormals, the binade edges, ties, inf, NaN, and values whose
// products and sums land below 2^-14 and at 65520); doubles that are not f16
// or f32 values (the operand rounding); f32 sums and products that overflow.
// Batch lengths not a multiple of 4, so the scalar tail runs too.
static double ref_binary(uopc_op op, uopc_dtype t, double a, double b) {
  double (*rnd)(double) = t == UOPC_DT_F16 ? uopc_round_f16 : uopc_round_f32;
  double x = rnd(a), y = rnd(b);
  double r = rnd(op == UOPC_OP_ADD ? x + y : x * y);
  return std::isnan(r) ? std::numeric_limits<double>::quiet_NaN() : r;
}

static void expect_batch_matches_round_c(uopc_op op, uopc_dtype t, const std::vector<uopc_val> &in) {
  size_t n = in.size() / 2;
  std::vector<uopc_val> out(n);
  std::vector<unsigned char> ok(n, 0);
  ASSERT_EQ(uopc_exec_alu_n(op, t, t, in.data(), n, out.data(), ok.data()), n);
  for (size_t i = 0; i < n; i++) {
    double want = ref_binary(op, t, in[2 * i].f, in[2 * i + 1].f);
    uint64_t wb, gb;
    std::memcpy(&wb, &want, 8);
    std::memcpy(&gb, &out[i].f, 8);
    ASSERT_EQ(ok[i], 1) << i;
    ASSERT_EQ(out[i].i, 0) << i;
    ASSERT_EQ(gb, wb) << (op == UOPC_OP_ADD ? "add " : "mul ") << (t == UOPC_DT_F16 ? "f16 " : "f32 ") << std::hexfloat
                      << in[2 * i].f << ", " << in[2 * i + 1].f << " gave " << out[i].f << ", want " << want;
  }
}

TEST(ExecAluBatch, FastPathsMatchRoundC) {
  std::vector<double> others;
  for (uint16_t h : {0x0000, 0x8000, 0x0001, 0x8001, 0x0002, 0x0003, 0x01ff, 0x0200, 0x03ff, 0x83ff, 0x0400, 0x8400,
                     0x0401, 0x07ff, 0x1000, 0x1400, 0x13ff, 0x2000, 0x2400, 0x27ff, 0x3000, 0x3400, 0x37ff, 0x3800,
                     0x3bff, 0x3c00, 0xbc00, 0x3c01, 0x3e00, 0x4000, 0x4200, 0x5800, 0x5bff, 0x7000, 0x77ff, 0x7800,
                     0x7bff, 0xfbff, 0x7bfe, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0x0155, 0x2aaa, 0x4d55, 0x6aaa})
    others.push_back(uopc_f16_to_double(h));
  for (double d : {0x1p-25, 0x1.8p-25, 0x1.0000000000001p-25, 0x1p-26, 0x1p-24, 0x1.8p-24, 0x1.4p-24, 0x1p-14,
                   0x1.ffcp-15, 0x1.ffep-15, 0x1.ffdp-15, 65504.0, 65519.0, 65520.0, 65536.0, 1e300, 1e-300, 0x1p-1074,
                   -0x1p-1074, 0x1.8p-1060, 0x1.002p0, 0x1.001p0, 0x1.0018p0, 3.0e-5, -6.1e-5, 0x1.ffffffp127,
                   0x1.fffffep127, 0x1p-149, 0x1p-150, 0x1.8p-150})
    others.push_back(d);
  ASSERT_EQ(others.size(), 78u);
  for (uopc_op op : {UOPC_OP_ADD, UOPC_OP_MUL}) {
    std::vector<uopc_val> in;
    for (uint32_t h = 0; h < 65536; h++)
      for (double b : others) in.push_back({0, uopc_f16_to_double((uint16_t)h)}), in.push_back({0, b});
    in.push_back({0, 0x1p-24});  // an odd number of cases: the tail runs
    in.push_back({0, 0x1p-1});
    expect_batch_matches_round_c(op, UOPC_DT_F16, in);
  }
  std::mt19937_64 rng(2026);
  for (uopc_dtype t : {UOPC_DT_F16, UOPC_DT_F32})
    for (uopc_op op : {UOPC_OP_ADD, UOPC_OP_MUL}) {
      std::vector<uopc_val> in;
      for (int i = 0; i < 400003; i++) {  // doubles with any low bits, in and around the dtype's range
        uint64_t r = rng();
        int span = t == UOPC_DT_F16 ? 48 : 300;
        double x = std::ldexp((double)(r >> 11) * 0x1p-53 + 0.5, (int)((r >> 3) % (uint64_t)span) - span / 2 - 4);
        in.push_back({0, (r & 1) ? -x : x});
      }
      expect_batch_matches_round_c(op, t, in);
    }
}

// The other batch lanes (exec_alu_vec.c: MAX, CMPLT, CMPNE, WHERE, SQRT and
// RECIP on f32 and f16, four cases at a time) against uopc_exec_alu one case
// at a time (exec_alu.c's scalar code): every f16 value against the 78
// values of the test above and against itself (so that every comparison is
// seen equal, less and greater, NaNs and both zeros included), every f16
// value through the unary ops, and random doubles that are not values of
// the dtype (the operand rounding), with WHERE's conditions 0, 1, -1 and
// large.  The whole uopc_val is compared: the f field of a bool result and
// the i field of a float result too.  Batch lengths not a multiple of 4.
// refused NULL: every case must compute; else exec_alu's refusals must be
// the batch's (ok 0, the result left as it was), counted into *refused.
static void expect_batch_is_one_at_a_time(uopc_op op, uopc_dtype ot, uopc_dtype t, const std::vector<uopc_val> &in,
                                          size_t k, size_t *refused = nullptr) {
  size_t n = in.size() / k, want = 0;
  std::vector<uopc_val> out(n, uopc_val{777, 7.0}), one(n, uopc_val{777, 7.0});
  std::vector<unsigned char> ok(n, 9);
  size_t good = uopc_exec_alu_n(op, ot, t, in.data(), n, out.data(), ok.data());
  for (size_t i = 0; i < n; i++) {
    int r = uopc_exec_alu(op, ot, t, in.data() + k * i, &one[i]);
    if (!refused) ASSERT_EQ(r, 1) << i;
    else *refused += (size_t)!r;
    want += (size_t)r;
    ASSERT_EQ((int)ok[i], r) << i;
    ASSERT_EQ(std::memcmp(&out[i], &one[i], sizeof one[i]), 0)
        << uopc_op_name(op) << " " << uopc_dtype_name(t) << " -> " << uopc_dtype_name(ot) << " case " << i
        << std::hexfloat << ": " << in[k * i].i << "/" << in[k * i].f << (k > 1 ? ", " : "")
        << (k > 1 ? in[k * i + 1].i : 0) << "/" << (k > 1 ? in[k * i + 1].f : 0.0) << " gave {" << out[i].i << ", "
        << out[i].f << "}, want {" << one[i].i << ", " << one[i].f << "}";
  }
  ASSERT_EQ(good, want);
}

TEST(ExecAluBatch, OtherLanesMatchOneAtATime) {
  std::vector<double> others;
  for (uint16_t h : {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x8400, 0x3bff, 0x3c00, 0xbc00, 0x3c01,
                     0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0x4d55})
    others.push_back(uopc_f16_to_double(h));
  for (double d : {0x1p-25, 0x1.8p-25, 0x1p-24, 0x1.ffdp-15, 65519.0, 65520.0, 1e300, -1e300, 0x1p-1074, -0x1p-1074,
                   0x1.002p0, 0x1.001p0, 0x1.ffffffp127, 0x1p-150, 0x1.8p-150, -2.5, 3.0e-5})
    others.push_back(d);
  const int64_t conds[] = {0, 1, -1, 2, INT64_MIN, 4096};
  std::mt19937_64 rng(2027);
  for (uopc_dtype t : {UOPC_DT_F16, UOPC_DT_F32}) {
    for (uopc_op op : {UOPC_OP_MAX, UOPC_OP_CMPLT, UOPC_OP_CMPNE}) {
      uopc_dtype ot = op == UOPC_OP_MAX ? t : UOPC_DT_BOOL;
      std::vector<uopc_val> in;
      for (uint32_t h = 0; h < 65536; h++) {
        double a = uopc_f16_to_double((uint16_t)h);
        in.push_back({0, a}), in.push_back({0, a});
        for (double b : others) in.push_back({0, a}), in.push_back({0, b}), in.push_back({0, b}), in.push_back({0, a});
      }
      in.push_back({0, -0.0}), in.push_back({0, 0.0});  // an odd number of cases: the tail runs
      expect_batch_is_one_at_a_time(op, ot, t, in, 2);
    }
    for (uopc_op op : {UOPC_OP_SQRT, UOPC_OP_RECIP}) {
      std::vector<uopc_val> in;
      for (uint32_t h = 0; h < 65536; h++) in.push_back({0, uopc_f16_to_double((uint16_t)h)});
      for (double d : others) in.push_back({0, d}), in.push_back({0, -d});
      in.push_back({0, 2.0});
      expect_batch_is_one_at_a_time(op, t, t, in, 1);
    }
    std::vector<uopc_val> in;
    for (uint32_t h = 0; h < 65536; h += 3)
      for (int64_t c : conds)
        in.push_back({c, 0.0}), in.push_back({0, uopc_f16_to_double((uint16_t)h)}),
            in.push_back({0, others[(h + (uint32_t)c) % others.size()]});
    expect_batch_is_one_at_a_time(UOPC_OP_WHERE, t, t, in, 3);
    // doubles with any low bits, in and around the dtype's range
    for (uopc_op op : {UOPC_OP_MAX, UOPC_OP_CMPLT, UOPC_OP_CMPNE, UOPC_OP_WHERE, UOPC_OP_SQRT, UOPC_OP_RECIP}) {
      size_t k = op == UOPC_OP_WHERE ? 3 : (op == UOPC_OP_SQRT || op == UOPC_OP_RECIP) ? 1 : 2;
      uopc_dtype ot = (op == UOPC_OP_CMPLT || op == UOPC_OP_CMPNE) ? UOPC_DT_BOOL : t;
      std::vector<uopc_val> r;
      for (int i = 0; i < 100003; i++)
        for (size_t j = 0; j < k; j++) {
          uint64_t x = rng();
          int span = t == UOPC_DT_F16 ? 48 : 300;
          double d = std::ldexp((double)(x >> 11) * 0x1p-53 + 0.5, (int)((x >> 3) % (uint64_t)span) - span / 2 - 4);
          if ((x & 6) == 0) d = std::ldexp(1.0, (int)((x >> 3) % 64) - 30);  // some equal pairs
          r.push_back({op == UOPC_OP_WHERE && j == 0 ? (int64_t)(x & 1) : 0, (x & 1) ? -d : d});
        }
      expect_batch_is_one_at_a_time(op, ot, t, r, k);
    }
  }
}

// The i32 lanes (ADD, MUL, MAX, CMPLT, CMPNE, WHERE: 32-bit lanes on the
// operands' low bits) against uopc_exec_alu one case at a time: the edges
// against each other, and random int64 operands (exec_alu wraps them first)
// with WHERE's conditions drawn so that some are nonzero only above bit 31.
TEST(ExecAluBatch, I32LanesMatchOneAtATime) {
  const int64_t edges[] = {0, 1, -1, 2, -2, 7, -7, 46341, -46341, 65536, INT32_MAX, INT32_MIN, INT32_MAX - 1,
                           INT32_MIN + 1, (int64_t)1 << 32, -((int64_t)1 << 32), ((int64_t)1 << 32) + 5, INT64_MIN,
                           INT64_MAX, (int64_t)0x80000000, (int64_t)0xffffffff};
  std::mt19937_64 rng(2028);
  for (uopc_op op : {UOPC_OP_ADD, UOPC_OP_MUL, UOPC_OP_MAX, UOPC_OP_CMPLT, UOPC_OP_CMPNE, UOPC_OP_WHERE}) {
    size_t k = op == UOPC_OP_WHERE ? 3 : 2;
    uopc_dtype ot = (op == UOPC_OP_CMPLT || op == UOPC_OP_CMPNE) ? UOPC_DT_BOOL : UOPC_DT_I32;
    std::vector<uopc_val> in;
    for (int64_t a : edges)
      for (int64_t b : edges) {
        if (k == 3) in.push_back({a & 3 ? a : (int64_t)1 << 40, 0.0});
        in.push_back({a, 0.0}), in.push_back({b, 0.0});
      }
    for (int i = 0; i < 200003; i++)
      for (size_t j = 0; j < k; j++) {
        uint64_t x = rng();
        int64_t v = (x & 3) == 0 ? (int64_t)x : (x & 3) == 1 ? (int64_t)(int32_t)(x >> 32) : (int64_t)(x >> 58) - 32;
        if (k == 3 && j == 0) v = (x & 8) ? (int64_t)((x >> 4) & 1) << (x % 64) : 0;
        in.push_back({v, 0.0});
      }
    expect_batch_is_one_at_a_time(op, ot, UOPC_DT_I32, in, k);
  }
}

// FLOORDIV and FLOORMOD's i32 lanes (the quotient's floor in double, the
// remainder in 32-bit lanes, refused per lane) against uopc_exec_alu one
// case at a time: every pair of edges (zero divisors and INT32_MIN by -1
// among them), and random operands of every size with a zero divisor, a -1
// or INT32_MIN now and then; the ok flags, the results, and the untouched
// results of refused cases.
TEST(ExecAluBatch, I32DivModLanesMatchOneAtATime) {
  const int64_t edges[] = {0, 1, -1, 2, -2, 3, -3, 7, -7, 46341, -46341, 65536, -65537, INT32_MAX, INT32_MIN,
                           INT32_MAX - 1, INT32_MIN + 1, (int64_t)1 << 32, ((int64_t)1 << 32) - 1, INT64_MIN,
                           (int64_t)0x80000000, 1000000007, -999999937};
  std::mt19937_64 rng(2029);
  std::vector<uopc_val> in;
  for (int64_t a : edges)
    for (int64_t b : edges) in.push_back({a, 0.0}), in.push_back({b, 0.0});
  for (int i = 0; i < 300001; i++)
    for (int j = 0; j < 2; j++) {
      uint64_t x = rng();
      int64_t v;
      switch (x & 7) {
      case 0: v = 0; break;
      case 1: v = j ? -1 : INT32_MIN; break;
      case 2: v = (int64_t)x; break;
      case 3: v = (int64_t)(x >> 59) - 16; break;
      case 4: v = (int64_t)(int16_t)(x >> 16); break;
      default: v = (int64_t)(int32_t)(x >> 32); break;
      }
      in.push_back({v, 0.0});
    }
  size_t refused = 0;
  for (uopc_op op : {UOPC_OP_FLOORDIV, UOPC_OP_FLOORMOD})
    expect_batch_is_one_at_a_time(op, UOPC_DT_I32, UOPC_DT_I32, in, 2, &refused);
  EXPECT_GT(refused, (size_t)2 * 40000);  // zero divisors and INT32_MIN / -1 were met
}

// CAST's lanes (every pair of f32, f16, i32 and bool; to i32 refused per
// lane when not finite or out of range) against uopc_exec_alu one case at a
// time: every f16 value; doubles around the i32 limits, which the f32 or f16
// rounding moves first; NaNs, infinities, zeros, halves, subnormals; random
// doubles that are not values of the dtype; random int64 operands (wrapped
// first) and bool operands nonzero only above bit 31.  ok flags, results,
// and the untouched results of refused cases.
TEST(ExecAluBatch, CastLanesMatchOneAtATime) {
  std::vector<uopc_val> fin, iin;
  for (uint32_t h = 0; h < 65536; h++) fin.push_back({0, uopc_f16_to_double((uint16_t)h)});
  for (double d : {2147483647.0, 2147483647.5, 2147483648.0, 2147483520.0, 2147483583.0, 2147483584.0, -2147483648.0,
                   -2147483648.5, -2147483649.0, -2147483904.0, 4294967296.0, 1e10, -1e10, 0.5, -0.5, -0.99999,
                   0.99999, 1.5, -1.5, 0.0, -0.0, 0x1p-149, -0x1p-149, 0x1p-1074, 65519.0, 65520.0, 1e300, -1e300,
                   std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                   std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN()})
    fin.push_back({0, d}), fin.push_back({0, std::nextafter(d, 0.0)}), fin.push_back({0, std::nextafter(d, 1e308)});
  std::mt19937_64 rng(2030);
  for (int i = 0; i < 200003; i++) {
    uint64_t x = rng();
    double d = std::ldexp((double)(x >> 11) * 0x1p-53 + 0.5, (int)((x >> 3) % 80) - 40);
    fin.push_back({0, (x & 1) ? -d : d});
    int64_t v = (x & 3) == 0 ? (int64_t)x : (x & 3) == 1 ? (int64_t)(int32_t)(x >> 32) : (int64_t)(x >> 60) - 8;
    if ((x & 12) == 0) v = (int64_t)1 << (x % 64);
    iin.push_back({v, 0.0});
  }
  const uopc_dtype all[] = {UOPC_DT_BOOL, UOPC_DT_I32, UOPC_DT_F32, UOPC_DT_F16};
  size_t refused = 0;
  for (uopc_dtype it : all)
    for (uopc_dtype ot : all)
      expect_batch_is_one_at_a_time(UOPC_OP_CAST, ot, it, (it == UOPC_DT_F32 || it == UOPC_DT_F16) ? fin : iin, 1,
                                    &refused);
  EXPECT_GT(refused, (size_t)50000);  // f32 and f16 to i32: NaNs, infinities, out of range
}
