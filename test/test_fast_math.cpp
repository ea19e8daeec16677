// Fast-math mode (UOPC_COMPILE_FAST_MATH, docs/fast-math.md): exp2, log2 and
// sin within the stated error of strict mode on the edge values and a
// sample (the all-input measurement is bench/fast_math_ulp.c), the special
// values exact, and strict and fast kernels kept apart by both caches.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "support/ctx.h"

namespace {

// The bounds docs/fast-math.md states (the measured maxima over all inputs).
constexpr int64_t kExp2Ulp = 1, kLog2Ulp = 1, kSinUlp = 2, kF16Ulp = 1;  // sin: for |x| < 2^24
constexpr float kSinMax = 0x1p24f;  // |x| at and beyond: NaN in fast mode

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
int64_t Ord(uint32_t b) { return b & 0x80000000u ? -(int64_t)(b & 0x7fffffffu) : (int64_t)b; }

// The one-op program `op` over n values of dtype dt, as a plan with flags.
uopc_plan *Plan(uopc_ctx *c, const std::string &op, const char *dt, size_t n, unsigned flags) {
  std::string text = "%A = param : slot=0 dtype=" + std::string(dt) + " shape=(" + std::to_string(n) + ",)\n%o = " + op +
                     " %A\n";
  uopc_error e;
  uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), "fast_math", &e);
  EXPECT_NE(root, nullptr) << e.msg;
  if (!root) return nullptr;
  uopc_compile_opts o = {UOPC_TIER_FAST, flags, 0};
  uopc_plan *p = uopc_plan_compile(c, root, &o, &e);
  EXPECT_NE(p, nullptr) << e.msg;
  return p;
}

template <typename T>
std::vector<T> RunPlan(const uopc_plan *p, uopc_dtype dt, const std::vector<T> &in) {
  std::vector<T> out(in.size());
  int64_t n = (int64_t)in.size();
  uopc_tensor a = {(void *)in.data(), dt, 1, &n}, o = {out.data(), dt, 1, &n};
  uopc_error e;
  EXPECT_EQ(uopc_plan_call(p, &a, 1, &o, &e), UOPC_OK) << e.msg;
  return out;
}

// Edge values of every function, then a sample of bit patterns.
std::vector<uint32_t> Inputs() {
  std::vector<uint32_t> v = {0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu,
                             0x00800000u, 0x80800000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u,
                             0x7f7fffffu, 0xff7fffffu, 0x3f800000u, 0xbf800000u, 0x3f3504f3u, 0x3fb504f3u};
  for (float f : {127.0f, 127.5f, 127.99999f, 128.0f, 129.0f, -126.0f, -127.0f, -149.0f, -149.5f, -149.99f, -150.0f,
                  -151.0f, -1e30f, 1e30f, 0.5f, -0.5f, 1e-7f, -1e-7f, 0x1p-12f, 0x1.fffffep-13f, 1.5707964f,
                  3.1415927f, 6.2831855f, 0x1.d30b72p+1f, 0x1.715476p-24f, 0x1.2e8p-140f, 1e4f, 0x1p23f, 0x1.fffffep23f, 0x1p24f, -0x1.fffffep23f, 1e6f, 12345.678f})
    v.push_back(B(f));
  uint32_t s = 12345;
  for (int i = 0; i < 1 << 16; i++) v.push_back(s = s * 1664525u + 1013904223u);
  return v;
}

void CheckF32(const char *op, int64_t bound) {
  Ctx c;
  std::vector<uint32_t> in = Inputs();
  uopc_plan *ps = Plan(c, op, "f32", in.size(), 0), *pf = Plan(c, op, "f32", in.size(), UOPC_COMPILE_FAST_MATH);
  ASSERT_TRUE(ps && pf);
  std::vector<uint32_t> rs = RunPlan(ps, UOPC_DT_F32, in), rf = RunPlan(pf, UOPC_DT_F32, in);
  int differ = 0;
  for (size_t i = 0; i < in.size(); i++) {
    float x = F(in[i]), s = F(rs[i]), f = F(rf[i]);
    bool out_of_range = !strcmp(op, "sin") && !(std::fabs(x) < kSinMax);
    if (out_of_range) {
      EXPECT_TRUE(std::isnan(f)) << op << "(" << x << ") beyond the range: " << f;
      continue;
    }
    ASSERT_EQ(std::isnan(s), std::isnan(f)) << op << "(" << std::hexfloat << x << "): strict " << s << ", fast " << f;
    if (std::isnan(s)) continue;
    int64_t d = std::llabs(Ord(rs[i]) - Ord(rf[i]));
    differ += d != 0;
    EXPECT_LE(d, bound) << op << "(" << std::hexfloat << x << "): strict " << s << ", fast " << f;
    if ((x == 0 || std::isinf(x)) && d == 0) EXPECT_EQ(rs[i], rf[i]) << op << "(" << x << "): the sign";
  }
  EXPECT_GT(differ, 0) << op << ": no last bit changed: is the fast kernel the strict one?";
  uopc_plan_free(ps);
  uopc_plan_free(pf);
}

TEST(FastMath, Exp2WithinBound) { CheckF32("exp2", kExp2Ulp); }
TEST(FastMath, Log2WithinBound) { CheckF32("log2", kLog2Ulp); }
TEST(FastMath, SinWithinBound) { CheckF32("sin", kSinUlp); }

TEST(FastMath, F16AllInputsWithinBound) {
  Ctx c;
  std::vector<uint16_t> in(65536);
  for (uint32_t i = 0; i < 65536; i++) in[i] = (uint16_t)i;
  for (const char *op : {"exp2", "log2", "sin"}) {
    uopc_plan *ps = Plan(c, op, "f16", in.size(), 0), *pf = Plan(c, op, "f16", in.size(), UOPC_COMPILE_FAST_MATH);
    ASSERT_TRUE(ps && pf);
    std::vector<uint16_t> rs = RunPlan(ps, UOPC_DT_F16, in), rf = RunPlan(pf, UOPC_DT_F16, in);
    auto nan = [](uint16_t b) { return (b & 0x7fffu) > 0x7c00u; };
    auto ord = [](uint16_t b) { return b & 0x8000u ? -(int64_t)(b & 0x7fffu) : (int64_t)b; };
    for (uint32_t i = 0; i < 65536; i++) {
      ASSERT_EQ(nan(rs[i]), nan(rf[i])) << op << " f16 bits " << std::hex << i;
      if (!nan(rs[i])) EXPECT_LE(std::llabs(ord(rs[i]) - ord(rf[i])), kF16Ulp) << op << " f16 bits " << std::hex << i;
    }
    uopc_plan_free(ps);
    uopc_plan_free(pf);
  }
}

TEST(FastMath, SpecialValuesExact) {
  Ctx c;
  const float inf = INFINITY;
  struct Case {
    const char *op;
    float x, want;
  } cases[] = {{"exp2", inf, inf},    {"exp2", -inf, 0.0f},  {"exp2", 128.0f, inf}, {"exp2", -150.0f, 0.0f},
               {"exp2", 0.0f, 1.0f},  {"exp2", -0.0f, 1.0f}, {"exp2", 3.0f, 8.0f},  {"exp2", -149.0f, 0x1p-149f},
               {"log2", 0.0f, -inf},  {"log2", -0.0f, -inf}, {"log2", inf, inf},    {"log2", 1.0f, 0.0f},
               {"log2", 8.0f, 3.0f},  {"log2", 0x1p-149f, -149.0f},                  {"sin", 0.0f, 0.0f},
               {"sin", -0.0f, -0.0f}, {"sin", 0x1p-140f, 0x1p-140f}};
  for (const Case &k : cases) {
    uopc_plan *p = Plan(c, k.op, "f32", 1, UOPC_COMPILE_FAST_MATH);
    ASSERT_TRUE(p);
    float got = RunPlan(p, UOPC_DT_F32, std::vector<float>{k.x})[0];
    EXPECT_EQ(B(got), B(k.want)) << k.op << "(" << k.x << ") = " << got << ", want " << k.want;
    uopc_plan_free(p);
  }
  for (float x : {-1.0f, -inf, NAN, -0x1p-149f}) {  // log2 of a negative and NaN: NaN; sin of inf: NaN
    uopc_plan *p = Plan(c, "log2", "f32", 1, UOPC_COMPILE_FAST_MATH);
    EXPECT_TRUE(std::isnan(RunPlan(p, UOPC_DT_F32, std::vector<float>{x})[0])) << "log2(" << x << ")";
    uopc_plan_free(p);
  }
  for (float x : {inf, -inf, NAN}) {
    uopc_plan *p = Plan(c, "sin", "f32", 1, UOPC_COMPILE_FAST_MATH);
    EXPECT_TRUE(std::isnan(RunPlan(p, UOPC_DT_F32, std::vector<float>{x})[0])) << "sin(" << x << ")";
    uopc_plan_free(p);
  }
}

// out[i] = exp2(a[i]) as a kernel: strict and fast kernels are two misses of
// the kernel cache, and the strict kernel compiled first, then found again
// after the fast one, still gives libm's bits.
TEST(FastMath, KernelCacheKeepsModesApart) {
  Ctx c;
  const char *text =
      "%A = buffer : slot=0 dtype=f32 shape=(4096,)\n%O = buffer : slot=1 dtype=f32 shape=(4096,)\n"
      "%r = range 4096 : idx=0\n%i = index %A, %r\n%v = load %i\n%e = exp2 %v\n%o = index %O, %r\n"
      "%s = store %o, %e\n%n = end %s, %r\n%k = sink %n\n";
  uopc_error e;
  uopc_node *root = uopc_uir_parse(c, text, strlen(text), "fast_math", &e);
  ASSERT_NE(root, nullptr) << e.msg;
  uopc_cache_set_disk(0);  // misses are compiles, not files of an earlier run
  uopc_plan_cache_clear();
  uopc_cache_clear_memory();
  uopc_cache_reset_stats();
  uopc_compile_opts strict = {UOPC_TIER_FAST, 0, 0}, fast = {UOPC_TIER_FAST, UOPC_COMPILE_FAST_MATH, 0};
  uopc_kernel *ks = uopc_compile(c, root, &strict, &e);
  ASSERT_NE(ks, nullptr) << e.msg;
  uopc_kernel *kf = uopc_compile(c, root, &fast, &e);
  ASSERT_NE(kf, nullptr) << e.msg;
  uopc_cache_stats st;
  uopc_cache_get_stats(&st);
  EXPECT_EQ(st.misses, 2u);
  EXPECT_EQ(st.mem_hits, 0u);
  uopc_kernel *ks2 = uopc_compile(c, root, &strict, &e);  // the strict entry, not the fast one
  ASSERT_NE(ks2, nullptr) << e.msg;
  uopc_cache_get_stats(&st);
  EXPECT_EQ(st.misses, 2u);
  EXPECT_EQ(st.mem_hits, 1u);
  std::vector<float> a(4096), os(4096), of(4096);
  for (int i = 0; i < 4096; i++) a[i] = (float)(i - 2048) * 0.03125f + 0.0078125f * (float)(i % 7);
  void *bs[2] = {a.data(), os.data()}, *bf[2] = {a.data(), of.data()};
  ASSERT_EQ(uopc_kernel_call(ks2, bs, 2, &e), UOPC_OK) << e.msg;
  ASSERT_EQ(uopc_kernel_call(kf, bf, 2, &e), UOPC_OK) << e.msg;
  int differ = 0;
  for (int i = 0; i < 4096; i++) {
    EXPECT_EQ(B(os[i]), B((float)std::exp2((double)a[i]))) << "strict exp2(" << a[i] << ")";
    differ += B(os[i]) != B(of[i]);
  }
  EXPECT_GT(differ, 0) << "the fast kernel gave the strict bits everywhere: the same entry?";
  uopc_kernel_free(ks);
  uopc_kernel_free(ks2);
  uopc_kernel_free(kf);
  uopc_cache_set_disk(1);
}

// The plan cache: the same program strict and fast is two plans.
TEST(FastMath, PlanCacheKeepsModesApart) {
  Ctx c;
  uopc_plan_cache_clear();
  uopc_plan_cache_reset_stats();
  uopc_plan *ps = Plan(c, "sin", "f32", 64, 0), *pf = Plan(c, "sin", "f32", 64, UOPC_COMPILE_FAST_MATH);
  uopc_plan *ps2 = Plan(c, "sin", "f32", 64, 0);
  ASSERT_TRUE(ps && pf && ps2);
  uopc_plan_cache_stats st;
  uopc_plan_cache_get_stats(&st);
  EXPECT_EQ(st.misses, 2u);
  EXPECT_EQ(st.hits, 1u);
  EXPECT_NE(ps, pf);
  std::vector<float> x(64);
  for (int i = 0; i < 64; i++) x[i] = 0.37f * (float)i - 11.0f;
  std::vector<float> y = RunPlan(ps2, UOPC_DT_F32, x);
  for (int i = 0; i < 64; i++) EXPECT_EQ(B(y[i]), B((float)std::sin((double)x[i]))) << "strict sin(" << x[i] << ")";
  uopc_plan_free(ps);
  uopc_plan_free(pf);
  uopc_plan_free(ps2);
  uopc_plan_cache_clear();
}

// A reduction in fast mode: the sum is reordered (other bits than the
// strict plan's left-to-right sum) within the error bound of any order.
TEST(FastMath, SumCloseToStrict) {
  Ctx c;
  const int n = 1 << 16;
  std::string text = "%A = param : slot=0 dtype=f32 shape=(" + std::to_string(n) + ",)\n%s = reduce %A : op=add pop=1\n";
  uopc_error e;
  uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), "fast_math", &e);
  ASSERT_NE(root, nullptr) << e.msg;
  uopc_compile_opts s = {UOPC_TIER_FAST, 0, 0}, f = {UOPC_TIER_FAST, UOPC_COMPILE_FAST_MATH, 0};
  uopc_plan *ps = uopc_plan_compile(c, root, &s, &e), *pf = uopc_plan_compile(c, root, &f, &e);
  ASSERT_TRUE(ps && pf) << e.msg;
  std::vector<float> a(n);
  uint32_t r = 7;
  for (float &v : a) r = r * 1664525u + 1013904223u, v = (float)(int32_t)(r >> 8) * 0x1p-20f;
  float want = 0;
  for (float v : a) want += v;
  int64_t len = n;
  uopc_tensor in = {a.data(), UOPC_DT_F32, 1, &len};
  float gs = 0, gf = 0;
  uopc_tensor os = {&gs, UOPC_DT_F32, 0, nullptr}, of = {&gf, UOPC_DT_F32, 0, nullptr};
  ASSERT_EQ(uopc_plan_call(ps, &in, 1, &os, &e), UOPC_OK) << e.msg;
  ASSERT_EQ(uopc_plan_call(pf, &in, 1, &of, &e), UOPC_OK) << e.msg;
  EXPECT_EQ(B(gs), B(want));
  double mag = 0, exact = 0;
  for (float v : a) mag += std::fabs((double)v), exact += (double)v;
  // any order of n float additions errs by at most (n - 1) * 2^-24 * sum |a|
  EXPECT_LE(std::fabs((double)gf - exact), (n - 1) * 0x1p-24 * mag) << "fast " << gf << ", exact " << exact;
  EXPECT_NE(B(gf), B(gs)) << "the same bits as the strict order: not reordered? (possible, but not for this input)";
  uopc_plan_free(ps);
  uopc_plan_free(pf);
}

// A fast float sum starts from -0.0 and reads every element in its loop
// (lower.c): -0.0 + x is x, so signed zeros come out as in strict mode, and
// an undefined element is still found, the first one included (it used to
// be peeled out of the loop), in a temporary and in the result.
TEST(FastMath, SumFromNegativeZeroKeepsZerosAndUndefinedElements) {
  Ctx c;
  uopc_error e;
  auto compile = [&](const std::string &text, unsigned flags) {
    uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), "fast_math", &e);
    EXPECT_NE(root, nullptr) << e.msg;
    uopc_compile_opts o = {UOPC_TIER_FAST, flags, 0};
    uopc_plan *p = root ? uopc_plan_compile(c, root, &o, &e) : nullptr;
    EXPECT_NE(p, nullptr) << e.msg;
    return p;
  };
  for (int64_t n : {1, 2, 17, 1023, 1024, 3000}) {  // below and from FROM_ZERO_MIN (lower.c)
    std::string sum = "%A = param : slot=0 dtype=f32 shape=(" + std::to_string(n) + ",)\n%s = reduce %A : op=add pop=1\n";
    for (unsigned flags : {0u, UOPC_COMPILE_FAST_MATH}) {
      uopc_plan *p = compile(sum, flags);
      ASSERT_TRUE(p);
      for (int plus_at : {-1, 0, (int)n - 1}) {  // all -0.0; one +0.0 first or last
        std::vector<float> a(n, -0.0f);
        if (plus_at >= 0) a[plus_at] = 0.0f;
        float got = 1;
        uopc_tensor in = {a.data(), UOPC_DT_F32, 1, &n}, out = {&got, UOPC_DT_F32, 0, nullptr};
        ASSERT_EQ(uopc_plan_call(p, &in, 1, &out, &e), UOPC_OK) << e.msg;
        EXPECT_EQ(B(got), plus_at < 0 ? 0x80000000u : 0u) << "n " << n << ", +0.0 at " << plus_at << ", flags " << flags;
      }
      uopc_plan_free(p);
    }
  }
  // sum(I // J) as f32: in the result's kernel, and through a temporary
  // (t = the row sums, read by a second kernel)
  const int64_t rows = 3, cols = 1030;  // both sums at least FROM_ZERO_MIN (lower.c) long
  std::string shp = "shape=(" + std::to_string(rows) + ", " + std::to_string(cols) + ")";
  std::string div = "%I = param : slot=0 dtype=i32 " + shp + "\n%J = param : slot=1 dtype=i32 " + shp +
                    "\n%q = floordiv %I, %J\n%f = cast %q : dtype=f32\n";
  std::string whole = div + "%s = reduce %f : op=add pop=2\n";
  std::string rowsum = div + "%t = reduce %f : op=add pop=1\n%u = mul %t, %t\n%s = reduce %u : op=add pop=1\n";
  for (const std::string *text : {&whole, &rowsum})
    for (unsigned flags : {0u, UOPC_COMPILE_FAST_MATH}) {
      uopc_plan *p = compile(*text, flags);
      ASSERT_TRUE(p);
      for (int zero_at : {0, -1, 1, -1, (int)(cols + 5), -1, (int)(rows * cols - 1), -1}) {  // a clean call after each failing one
        std::vector<int32_t> I(rows * cols), J(rows * cols);
        for (int k = 0; k < rows * cols; k++) I[k] = k % 23 - 11, J[k] = k % 5 + 1;
        if (zero_at >= 0) J[zero_at] = 0;
        int64_t shape[2] = {rows, cols};
        uopc_tensor in[2] = {{I.data(), UOPC_DT_I32, 2, shape}, {J.data(), UOPC_DT_I32, 2, shape}};
        float got = 0;
        uopc_tensor out = {&got, UOPC_DT_F32, 0, nullptr};
        uopc_status st = uopc_plan_call(p, in, 2, &out, &e);
        std::string what = std::string(text == &whole ? "whole" : "row sums") + ", flags " + std::to_string(flags) +
                           ", zero at " + std::to_string(zero_at);
        if (zero_at >= 0) {
          EXPECT_EQ(st, UOPC_ERR_EVAL) << what;
          EXPECT_NE(std::string(e.msg).find("division by zero"), std::string::npos) << what << ": " << e.msg;
          continue;
        }
        ASSERT_EQ(st, UOPC_OK) << what << ": " << e.msg;
        double want = 0;  // small integers (below 2^24 throughout): every order of the adds gives these exact values
        for (int r = 0; r < rows; r++) {
          double t = 0;
          for (int k = 0; k < cols; k++) {
            int32_t a = I[r * cols + k], b = J[r * cols + k];
            t += (double)(a / b - ((a % b != 0) && ((a < 0) != (b < 0))));
          }
          want += text == &whole ? t : t * t;
        }
        EXPECT_EQ(got, (float)want) << what;
      }
      uopc_plan_free(p);
    }
}

}  // namespace
