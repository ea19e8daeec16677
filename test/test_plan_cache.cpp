// The plan cache (include/uopc/plan.h, lib/plan_cache.c): a program compiled
// before, with the same options, gives the same plan from memory; anything
// else compiles.  Plans are refcounted: one uopc_plan_free per compile.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "support/ctx.h"

namespace {

// Cached plans hold kernels, and the engine's shutdown (test_jit_engine's
// environment, registered before this one and so torn down after it)
// refuses while kernels are live: empty the cache first.
class PlanCacheEnv : public ::testing::Environment {
 public:
  void TearDown() override { uopc_plan_cache_clear(); }
};
::testing::Environment *const plan_cache_env = ::testing::AddGlobalTestEnvironment(new PlanCacheEnv);

// Each test starts and ends with an empty cache and default limits.
class PlanCache : public ::testing::Test {
 protected:
  void SetUp() override {
    uopc_plan_cache_set_limit(256, 256ull << 20);
    uopc_plan_cache_clear();
    uopc_plan_cache_reset_stats();
  }
  void TearDown() override {
    uopc_plan_cache_set_limit(256, 256ull << 20);
    uopc_plan_cache_clear();
  }
};

uopc_plan_cache_stats Stats() {
  uopc_plan_cache_stats s;
  uopc_plan_cache_get_stats(&s);
  return s;
}

uopc_node *Parse(uopc_ctx *c, const std::string &text, const char *file = "t.uir") {
  uopc_error e;
  uopc_node *u = uopc_uir_parse(c, text.data(), text.size(), file, &e);
  EXPECT_NE(u, nullptr) << e.msg << "\n" << text;
  return u;
}

// a OP b + a over f32 (4, 8) PARAMs 0 and 1
std::string Ew(const char *op) {
  return std::string("%a = param : slot=0 dtype=f32 shape=(4, 8)\n%b = param : slot=1 dtype=f32 shape=(4, 8)\n%m = ") + op +
         " %a, %b\n%r = add %m, %a\n";
}

const int64_t kShape[] = {4, 8};

// Calls a two-argument f32 (4, 8) plan on a[i] = i, b[i] = 2 - i/4.
std::vector<float> Call(const uopc_plan *p) {
  std::vector<float> a(32), b(32), o(32, -1.0f);
  for (int i = 0; i < 32; i++) a[i] = (float)i, b[i] = 2.0f - (float)i / 4;
  uopc_tensor args[2] = {{a.data(), UOPC_DT_F32, 2, kShape}, {b.data(), UOPC_DT_F32, 2, kShape}};
  uopc_tensor out = {o.data(), UOPC_DT_F32, 2, kShape};
  uopc_error e;
  EXPECT_EQ(uopc_plan_call(p, args, 2, &out, &e), UOPC_OK) << e.msg;
  return o;
}

std::vector<float> Expected(char op) {
  std::vector<float> o(32);
  for (int i = 0; i < 32; i++) {
    float a = (float)i, b = 2.0f - (float)i / 4;
    float m = op == '*' ? a * b : a + b;
    o[i] = m + a;
  }
  return o;
}

double Us(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

TEST_F(PlanCache, HitReturnsTheSamePlanFast) {
  Ctx c;
  uopc_node *r = Parse(c, Ew("mul"));
  ASSERT_NE(r, nullptr);
  uopc_error e;
  auto t0 = std::chrono::steady_clock::now();
  uopc_plan *p1 = uopc_plan_compile(c, r, nullptr, &e);
  double miss_us = Us(t0);
  ASSERT_NE(p1, nullptr) << e.msg;
  EXPECT_EQ(Stats().misses, 1u);
  EXPECT_EQ(Stats().hits, 0u);
  t0 = std::chrono::steady_clock::now();
  uopc_plan *p2 = uopc_plan_compile(c, r, nullptr, &e);
  double hit_us = Us(t0);
  EXPECT_EQ(p2, p1);
  EXPECT_EQ(e.code, UOPC_OK);
  EXPECT_EQ(Stats().hits, 1u);
  EXPECT_EQ(Stats().misses, 1u);
  EXPECT_EQ(Stats().plans, 1u);
  EXPECT_GT(Stats().bytes, 0u);
  // the hit builds the key only: no schedule, no kernel cache
  EXPECT_LT(hit_us * 4, miss_us) << "hit " << hit_us << " us, miss " << miss_us << " us";
  EXPECT_EQ(Call(p2), Expected('*'));
  // the same program built again (new nodes? no: hash-consed, the same root)
  uopc_node *r2 = Parse(c, Ew("mul"));
  EXPECT_EQ(r2, r);
  // two compiles that returned it: two frees (ASan sees a double free or a leak)
  uopc_plan_free(p1);
  EXPECT_EQ(Call(p2), Expected('*'));  // still held by the second compile and the cache
  uopc_plan_free(p2);
  EXPECT_EQ(Stats().plans, 1u);
  uopc_plan *p3 = uopc_plan_compile(c, r, nullptr, &e);
  EXPECT_EQ(p3, p1);  // the cache kept it
  EXPECT_EQ(Call(p3), Expected('*'));
  uopc_plan_free(p3);
}

TEST_F(PlanCache, DifferentProgramsAndOptionsMiss) {
  Ctx c;
  uopc_node *mul = Parse(c, Ew("mul")), *add = Parse(c, Ew("add"));
  uopc_compile_opts fast = {UOPC_TIER_FAST}, strong = {UOPC_TIER_STRONG};
  uopc_error e;
  uopc_plan *pm = uopc_plan_compile(c, mul, &fast, &e);
  uopc_plan *pa = uopc_plan_compile(c, add, &fast, &e);
  uopc_plan *ps = uopc_plan_compile(c, mul, &strong, &e);
  uopc_plan *pn = uopc_plan_compile(c, mul, nullptr, &e);  // NULL is the fast tier
  ASSERT_TRUE(pm && pa && ps && pn);
  EXPECT_NE(pm, pa);
  EXPECT_NE(pm, ps);
  EXPECT_EQ(pm, pn);
  EXPECT_EQ(Stats().misses, 3u);
  EXPECT_EQ(Stats().hits, 1u);
  EXPECT_EQ(Call(pm), Expected('*'));
  EXPECT_EQ(Call(pa), Expected('+'));
  EXPECT_EQ(Call(ps), Expected('*'));
  // a different shape is a different program
  std::string t = Ew("mul");
  for (size_t at; (at = t.find("(4, 8)")) != std::string::npos;) t.replace(at, 6, "(8, 4)");
  uopc_plan *p84 = uopc_plan_compile(c, Parse(c, t), nullptr, &e);
  ASSERT_NE(p84, nullptr) << e.msg;
  EXPECT_NE(p84, pm);
  const int64_t *shape;
  uint32_t nd;
  ASSERT_TRUE(uopc_plan_result(p84, nullptr, &nd, &shape));
  EXPECT_EQ(shape[0], 8);
  for (uopc_plan *p : {pm, pa, ps, pn, p84}) uopc_plan_free(p);
}

TEST_F(PlanCache, PlanOutlivesItsContextAndKeysAreContent) {
  uopc_error e;
  uopc_ctx *c1 = uopc_ctx_new(nullptr);
  uopc_plan *p1 = uopc_plan_compile(c1, Parse(c1, Ew("mul")), nullptr, &e);
  ASSERT_NE(p1, nullptr) << e.msg;
  uopc_ctx_free(c1);
  EXPECT_EQ(Call(p1), Expected('*'));  // plan.h: a plan does not depend on its context
  // A new context (often at the freed one's address, its nodes too): a
  // different program must not get the old plan, the same program does.
  for (int round = 0; round < 3; round++) {
    uopc_ctx *c2 = uopc_ctx_new(nullptr);
    uopc_plan *pa = uopc_plan_compile(c2, Parse(c2, Ew("add")), nullptr, &e);
    ASSERT_NE(pa, nullptr) << e.msg;
    EXPECT_NE(pa, p1);
    EXPECT_EQ(Call(pa), Expected('+'));
    uopc_plan *pm = uopc_plan_compile(c2, Parse(c2, Ew("mul")), nullptr, &e);
    EXPECT_EQ(pm, p1);
    uopc_ctx_free(c2);
    uopc_plan_free(pa);
    uopc_plan_free(pm);
  }
  EXPECT_EQ(Stats().misses, 2u);  // mul once, add once
  uopc_plan_free(p1);
}

TEST_F(PlanCache, PositionsAreInTheKey) {
  // the same graph written at different lines: a poison error names the line
  const std::string body = "%a = param : slot=0 dtype=i32 shape=(4,)\n%b = param : slot=1 dtype=i32 shape=(4,)\n%q = floordiv %a, %b\n";
  std::string lines[2];
  for (int k = 0; k < 2; k++) {
    uopc_ctx *c = uopc_ctx_new(nullptr);
    uopc_error e;
    uopc_plan *p = uopc_plan_compile(c, Parse(c, std::string(k, '\n') + body, "pos.uir"), nullptr, &e);
    ASSERT_NE(p, nullptr) << e.msg;
    int32_t a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 1, 1}, o[4];
    const int64_t s4[] = {4};
    uopc_tensor args[2] = {{a, UOPC_DT_I32, 1, s4}, {b, UOPC_DT_I32, 1, s4}}, out = {o, UOPC_DT_I32, 1, s4};
    EXPECT_EQ(uopc_plan_call(p, args, 2, &out, &e), UOPC_ERR_EVAL);
    EXPECT_NE(std::string(e.msg).find("division by zero in FLOORDIV"), std::string::npos) << e.msg;
    lines[k] = std::to_string(e.line);
    uopc_plan_free(p);
    uopc_ctx_free(c);
  }
  EXPECT_EQ(lines[0], "3");
  EXPECT_EQ(lines[1], "4");
  EXPECT_EQ(Stats().misses, 2u);
}

TEST_F(PlanCache, ClearAndLeastRecentlyUsedEviction) {
  Ctx c;
  uopc_error e;
  uopc_node *p[3] = {Parse(c, Ew("mul")), Parse(c, Ew("add")), Parse(c, Ew("max"))};
  auto compile_free = [&](uopc_node *r) {
    uopc_plan *q = uopc_plan_compile(c, r, nullptr, &e);
    EXPECT_NE(q, nullptr) << e.msg;
    uopc_plan_free(q);
  };
  // clear: the next compile misses; a plan held across the clear stays valid
  uopc_plan *held = uopc_plan_compile(c, p[0], nullptr, &e);
  uopc_plan_cache_clear();
  EXPECT_EQ(Stats().plans, 0u);
  EXPECT_EQ(Call(held), Expected('*'));
  uopc_plan *again = uopc_plan_compile(c, p[0], nullptr, &e);
  EXPECT_NE(again, nullptr);
  EXPECT_EQ(Stats().misses, 2u);
  uopc_plan_free(held);
  uopc_plan_free(again);
  // at most 2: mul, add, then mul used, then max evicts add
  uopc_plan_cache_clear();
  uopc_plan_cache_reset_stats();
  uopc_plan_cache_set_limit(2, 256ull << 20);
  compile_free(p[0]);
  compile_free(p[1]);
  compile_free(p[0]);
  compile_free(p[2]);
  EXPECT_EQ(Stats().plans, 2u);
  EXPECT_EQ(Stats().evicted, 1u);
  EXPECT_EQ(Stats().hits, 1u);
  compile_free(p[0]);  // kept
  EXPECT_EQ(Stats().hits, 2u);
  compile_free(p[1]);  // was evicted
  EXPECT_EQ(Stats().hits, 2u);
  EXPECT_EQ(Stats().misses, 4u);
  // 0: no caching at all, and what was cached goes
  uopc_plan_cache_set_limit(0, 0);
  EXPECT_EQ(Stats().plans, 0u);
  uopc_plan *a = uopc_plan_compile(c, p[0], nullptr, &e), *b = uopc_plan_compile(c, p[0], nullptr, &e);
  EXPECT_NE(a, b);
  EXPECT_EQ(Call(a), Expected('*'));
  EXPECT_EQ(Call(b), Expected('*'));
  uopc_plan_free(a);
  uopc_plan_free(b);
  // a byte budget smaller than any plan keeps none
  uopc_plan_cache_set_limit(256, 16);
  compile_free(p[0]);
  EXPECT_EQ(Stats().plans, 0u);
}

TEST_F(PlanCache, ErrorsAreNotCached) {
  Ctx c;
  uopc_error e;
  uopc_node *bad = Parse(c, "%b = buffer : slot=0 dtype=i32 shape=(2,)\n%r = range 2 : idx=0\n%i = index %b, %r\n");
  for (int k = 0; k < 2; k++) {
    EXPECT_EQ(uopc_plan_compile(c, bad, nullptr, &e), nullptr);
    EXPECT_NE(e.code, UOPC_OK);
  }
  EXPECT_EQ(uopc_plan_compile(c, nullptr, nullptr, &e), nullptr);
  EXPECT_EQ(e.code, UOPC_ERR_ARG);
  EXPECT_EQ(Stats().plans, 0u);
}

TEST_F(PlanCache, ThreadsCompileTheSameProgram) {
  const int kThreads = 4;
  std::vector<uopc_plan *> got(kThreads);
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; t++)
    ts.emplace_back([&, t] {
      uopc_ctx *c = uopc_ctx_new(nullptr);
      uopc_error e;
      uopc_node *r = uopc_uir_parse(c, Ew("mul").data(), Ew("mul").size(), "t.uir", &e);
      got[t] = r ? uopc_plan_compile(c, r, nullptr, &e) : nullptr;
      bad += !got[t];
      uopc_ctx_free(c);
    });
  for (auto &t : ts) t.join();
  ASSERT_EQ(bad, 0);
  EXPECT_EQ(Stats().plans, 1u);
  // every thread's plan computes the right values; one of them is cached
  for (uopc_plan *p : got) EXPECT_EQ(Call(p), Expected('*'));
  uopc_error e;
  Ctx c;
  uopc_plan *p = uopc_plan_compile(c, Parse(c, Ew("mul")), nullptr, &e);
  EXPECT_EQ(std::count(got.begin(), got.end(), p), kThreads);  // the threads that lost the race got the winner's
  uopc_plan_free(p);
  for (uopc_plan *q : got) uopc_plan_free(q);
}

}  // namespace
