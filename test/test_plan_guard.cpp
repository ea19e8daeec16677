// Plans under guard pages (UOPC_COMPILE_GUARD_PAGES; the CLI's
// --guard-pages on jit-run and exec; docs/hardening.md): every temporary
// and constant array of the plan ends where its pages end, between
// inaccessible pages, so that a kernel reading past one stops with SIGSEGV.
// The flag must change no value: the golden programs and random ones give
// the same bytes with it as without, split across threads or not; the
// constant arrays really sit against an inaccessible page; the CLI's runs
// print what `uopc run` prints.
#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli.h"
#include "support/ctx.h"
#include "support/env.h"
#include "support/plan_io.h"
#include "support/progen.h"

namespace {

uopc_plan *Compile(uopc_ctx *c, uopc_node *root, uopc_tier tier, unsigned flags, uint32_t threads, uopc_error *e) {
  uopc_compile_opts o = {tier, flags, threads};
  return uopc_plan_compile(c, root, &o, e);
}

struct Region {
  uintptr_t lo, hi;
  std::string perms;
};

// This process's mappings, in address order (Linux's /proc/self/maps).
std::vector<Region> Maps() {
  std::vector<Region> v;
  std::istringstream in(Slurp("/proc/self/maps"));
  std::string line;
  while (std::getline(in, line)) {
    unsigned long lo, hi;
    char perms[8] = {0};
    if (sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perms) == 3) v.push_back({lo, hi, perms});
  }
  return v;
}

}  // namespace

// Every golden plan program, fast and strong tier, 1 and 2 threads (kernels
// split wherever they can be): the same bytes with guard pages as without.
TEST(PlanGuard, GoldenProgramsSameBytes) {
  EnvScope force("UOPC_SPLIT_MIN_WORK", "1");
  std::vector<std::string> files = GoldenPlans();
  ASSERT_GE(files.size(), 12u);
  uint32_t seed = 100;
  for (const std::string &f : files) {
    SCOPED_TRACE(f);
    Ctx c;
    uopc_error e;
    std::string text = Slurp(f);
    uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), f.c_str(), &e);
    ASSERT_NE(root, nullptr) << e.msg;
    for (uopc_tier tier : {UOPC_TIER_FAST, UOPC_TIER_STRONG})
      for (uint32_t t : {1u, 2u}) {
        uopc_plan *plain = Compile(c, root, tier, 0, t, &e);
        ASSERT_NE(plain, nullptr) << e.msg;
        uopc_plan *guard = Compile(c, root, tier, UOPC_COMPILE_GUARD_PAGES, t, &e);
        ASSERT_NE(guard, nullptr) << e.msg;
        EXPECT_EQ(uopc_plan_nkernels(guard), uopc_plan_nkernels(plain));
        EXPECT_EQ(uopc_plan_nsplit(guard), uopc_plan_nsplit(plain));
        Inputs in;
        MakeInputs(plain, seed++, &in);
        std::string want = Call(plain, &in), got = Call(guard, &in), again = Call(guard, &in);
        EXPECT_NE(want.rfind("error:", 0), 0u) << want;
        EXPECT_TRUE(got == want) << "tier " << tier << ", " << t << " threads: " << got;
        EXPECT_TRUE(again == want) << "a second call";
        uopc_plan_free(guard);
        uopc_plan_free(plain);
      }
  }
  uopc_plan_cache_clear();
}

// Random programs (PlanDiff's generator: movement ops, reduces, every dtype,
// poison) under guard pages at 1 and 2 threads agree with `run`.
TEST(PlanGuard, RandomProgramsMatchRun) {
  EnvScope force("UOPC_SPLIT_MIN_WORK", "1");
  uopc_plan_cache_clear();
  EXPECT_EQ(random_plans_disagree(47, UOPC_COMPILE_GUARD_PAGES), "");
  uopc_plan_cache_clear();
}

// A plan's constant array (a STACK of 1500 f32 the schedule keeps as data)
// lives, under guard pages, in whole pages of its own between two
// inaccessible ones, for as long as the plan lives; without the flag no such
// mapping appears.
TEST(PlanGuard, ConstantArraySitsBetweenInaccessiblePages) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  const int n = 1500;  // 6000 bytes: two pages, the array ending where the second ends
  std::string text = "%s = stack ";
  for (int i = 0; i < n; i++) text += (i ? ", " : "") + std::to_string(i % 7 - 3) + ".5";
  text += "\n%x = param : slot=0 dtype=f32 shape=(1500,)\n%m = mul %s, %x\n%r = reduce %m : op=add pop=1\n";
  Ctx c;
  uopc_error e;
  uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), "const.uir", &e);
  ASSERT_NE(root, nullptr) << e.msg;
  auto guarded_runs = [&](const std::vector<Region> &before) {
    std::vector<Region> now = Maps();
    int found = 0;
    for (size_t i = 1; i + 1 < now.size(); i++) {
      const Region &r = now[i];
      if (r.perms.rfind("rw", 0) != 0 || r.hi - r.lo != 2 * page) continue;
      if (now[i - 1].perms.rfind("---", 0) != 0 || now[i - 1].hi != r.lo) continue;
      if (now[i + 1].perms.rfind("---", 0) != 0 || now[i + 1].lo != r.hi) continue;
      bool old = false;
      for (const Region &b : before) old |= b.lo == r.lo && b.hi == r.hi;
      found += !old;
    }
    return found;
  };
  uopc_plan_cache_clear();
  std::vector<Region> before = Maps();
  uopc_plan *plain = Compile(c, root, UOPC_TIER_FAST, 0, 1, &e);
  ASSERT_NE(plain, nullptr) << e.msg;
  EXPECT_EQ(guarded_runs(before), 0);
  before = Maps();
  uopc_plan *guard = Compile(c, root, UOPC_TIER_FAST, UOPC_COMPILE_GUARD_PAGES, 1, &e);
  ASSERT_NE(guard, nullptr) << e.msg;
  EXPECT_EQ(guarded_runs(before), 1);
  Inputs in;
  MakeInputs(plain, 5, &in);
  std::string want = Call(plain, &in);
  EXPECT_NE(want.rfind("error:", 0), 0u) << want;
  EXPECT_TRUE(Call(guard, &in) == want);
  uopc_plan_free(guard);
  uopc_plan_free(plain);
  uopc_plan_cache_clear();
}

// The CLI: jit-run --guard-pages prints what `uopc run` prints (closed
// examples and a program with a constant array), at 1 and 2 threads; exec
// --guard-pages of a program with PARAMs writes what exec without it writes.
TEST(PlanGuard, CliJitRunAndExecWithGuardPages) {
  std::string consts = "%s = stack ";
  for (int i = 0; i < 1500; i++) consts += (i ? ", " : "") + std::to_string(i % 5) + ".25";
  consts += "\n%r = reduce %s : op=add pop=1\n";
  std::vector<std::string> files = {ExamplePath("mul_add.uir"), ExamplePath("movement_reduce.uir"),
                                    ExamplePath("nested_calls.uir"), ExamplePath("where.uir"),
                                    UirFile("guard_consts.uir", consts)};
  for (const std::string &f : files) {
    CliRun want = Uopc("run " + Q(f));
    ASSERT_EQ(want.status, 0) << f << ": " << want.err;
    for (const char *opts : {"--guard-pages", "--guard-pages --threads 2 --tier=strong"}) {
      CliRun got = UopcEnv("UOPC_SPLIT_MIN_WORK=1", std::string("jit-run ") + opts + " " + Q(f));
      EXPECT_EQ(got.status, 0) << f << " " << opts << ": " << got.err;
      EXPECT_EQ(got.out, want.out) << f << " " << opts;
    }
  }
  std::string f = std::string(UOPC_SOURCE_DIR) + "/test/golden/plan_softmax.uir";
  Ctx c;
  uopc_error e;
  std::string text = Slurp(f);
  uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), f.c_str(), &e);
  ASSERT_NE(root, nullptr) << e.msg;
  uopc_plan *p = Compile(c, root, UOPC_TIER_FAST, 0, 1, &e);
  ASSERT_NE(p, nullptr) << e.msg;
  Inputs in;
  MakeInputs(p, 3, &in);
  uopc_plan_free(p);
  std::string cmd = "exec " + Q(f);
  for (size_t s = 0; s < in.args.size(); s++) {
    std::string path = TmpPath("guard_in" + std::to_string(s) + ".npy"), err;
    ASSERT_TRUE(SaveNpyRaw(path, in.args[s].dtype, in.args[s].data, in.shapes[s], &err)) << err;
    cmd += " --arg " + std::to_string(s) + "=" + Q(path);
  }
  std::string o1 = TmpPath("guard_out1.npy"), o2 = TmpPath("guard_out2.npy");
  CliRun r = Uopc(cmd + " --out " + Q(o1));
  ASSERT_EQ(r.status, 0) << r.err;
  r = Uopc(cmd + " --guard-pages --threads 2 --out " + Q(o2));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Slurp(o1).empty());
  EXPECT_TRUE(Slurp(o1) == Slurp(o2));
  uopc_plan_cache_clear();
}
