// Multi-threaded plans (docs/schedule.md, "Threads"): a kernel split across
// threads computes every element as the whole kernel does, so results are
// bit-identical at any thread count, a poison error names the same element
// with the same message, and two host threads may call one threaded plan at
// once.  UOPC_SPLIT_MIN_WORK=1 splits even the small golden programs (every
// kernel whose outer loop is an output axis of size >= threads).
#include <gtest/gtest.h>

#include <dirent.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "support/cli.h"
#include "support/ctx.h"
#include "support/env.h"
#include "support/plan_io.h"
#include "support/progen.h"

namespace {

uopc_plan *Compile(uopc_ctx *c, uopc_node *root, uint32_t threads, uopc_error *e) {
  uopc_compile_opts o = {UOPC_TIER_FAST, 0, threads};
  return uopc_plan_compile(c, root, &o, e);
}

}  // namespace

// Every golden plan program at 1, 2, 3 and 7 threads (3 and 7: uneven
// chunks), its kernels split wherever they can be: the same bytes.
TEST(PlanThreads, GoldenProgramsBitIdenticalAt1237Threads) {
  EnvScope force("UOPC_SPLIT_MIN_WORK", "1");
  std::vector<std::string> files = GoldenPlans();
  ASSERT_GE(files.size(), 12u);
  uint32_t seed = 1, split2 = 0, split7 = 0, files_split = 0;
  for (const std::string &f : files) {
    SCOPED_TRACE(f);
    Ctx c;
    uopc_error e;
    std::string text = Slurp(f);
    uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), f.c_str(), &e);
    ASSERT_NE(root, nullptr) << e.msg;
    uopc_plan *p1 = Compile(c, root, 1, &e);
    ASSERT_NE(p1, nullptr) << e.msg;
    EXPECT_EQ(uopc_plan_threads(p1), 1u);
    EXPECT_EQ(uopc_plan_nsplit(p1), 0u);
    Inputs in;
    MakeInputs(p1, seed++, &in);
    std::string want = Call(p1, &in);
    EXPECT_NE(want.rfind("error:", 0), 0u) << want;
    for (uint32_t t : {2u, 3u, 7u}) {
      uopc_plan *p = Compile(c, root, t, &e);
      ASSERT_NE(p, nullptr) << e.msg;
      EXPECT_EQ(uopc_plan_threads(p), t);
      EXPECT_EQ(uopc_plan_nkernels(p), uopc_plan_nkernels(p1));  // a split kernel is still one kernel
      if (t == 2) split2 += uopc_plan_nsplit(p), files_split += uopc_plan_nsplit(p) > 0;
      if (t == 7) split7 += uopc_plan_nsplit(p);
      std::string got = Call(p, &in);
      EXPECT_TRUE(got == want) << t << " threads differ from 1";
      uopc_plan_free(p);
    }
    uopc_plan_free(p1);
  }
  // the test means something only where kernels were split
  // (at 7 threads only outer axes of 7 or more split: the larger programs)
  EXPECT_GE(files_split, files.size() - 2) << split2 << " kernels split in " << files_split << " files";
  EXPECT_GE(split7, 4u);
  uopc_plan_cache_clear();
}

// The CLI's --threads: exec of a golden program at 3 threads (kernels split,
// as UOPC_DEBUG=schedule says) writes what 1 thread writes; a bad count is
// a usage error.
TEST(PlanThreads, CliThreadsOption) {
  std::string f = std::string(UOPC_SOURCE_DIR) + "/test/golden/plan_matmul.uir";
  Ctx c;
  uopc_error e;
  std::string text = Slurp(f);
  uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), f.c_str(), &e);
  ASSERT_NE(root, nullptr) << e.msg;
  uopc_plan *p = Compile(c, root, 1, &e);
  ASSERT_NE(p, nullptr) << e.msg;
  Inputs in;
  MakeInputs(p, 9, &in);
  std::string cmd = "exec " + Q(f);
  for (size_t s = 0; s < in.args.size(); s++) {
    std::string path = TmpPath("threads_in" + std::to_string(s) + ".npy"), err;
    ASSERT_TRUE(SaveNpyRaw(path, in.args[s].dtype, in.args[s].data, in.shapes[s], &err)) << err;
    cmd += " --arg " + std::to_string(s) + "=" + Q(path);
  }
  uopc_plan_free(p);
  std::vector<std::string> outs;
  for (const char *t : {"1", "3"}) {
    std::string out = TmpPath(std::string("threads_out") + t + ".npy");
    CliRun r = UopcEnv("UOPC_DEBUG=schedule UOPC_SPLIT_MIN_WORK=1", cmd + " --threads " + t + " --out " + Q(out));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("x3 threads") != std::string::npos, t[0] == '3') << r.err;
    outs.push_back(Slurp(out));
  }
  EXPECT_FALSE(outs[0].empty());
  EXPECT_TRUE(outs[0] == outs[1]);
  for (const char *bad : {"0", "65", "two", "-1", ""}) {
    CliRun r = Uopc(cmd + " --threads=" + bad);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find("--threads takes a thread count from 1 to 64"), std::string::npos) << r.err;
    r = Uopc("jit-run --threads=" + std::string(bad) + " " + Q(f));
    EXPECT_EQ(r.status, 2) << bad;
  }
  uopc_plan_cache_clear();
}

// A poison error in a big kernel (split at 2, 3 and 7 threads by the default
// work threshold) has the message one thread gives: the code from the
// chunks' status words combined, the operands from the recording variant
// (whole, on the caller).  The failing elements sit in later chunks, and two
// checks fail at once (the lower code wins, as in one kernel).
TEST(PlanThreads, PoisonErrorIsTheSameAtAnyThreadCount) {
  const int64_t N = 1 << 19;
  std::vector<int32_t> a(N), b(N), ok(N, 1);
  std::vector<float> f(N), okf(N, 1.0f);
  for (int64_t i = 0; i < N; i++) {
    a[i] = (int32_t)(i % 5000) - 2500;
    b[i] = (i == N / 2 + 17 || i == N - 3 || i == N / 3 + 1) ? 0 : (int32_t)(i % 7) + 1;
    f[i] = i == N / 5 ? 3e9f : (float)(i % 100);
  }
  std::string n = std::to_string(N);
  std::string decl = "%a = param : slot=0 dtype=i32 shape=(" + n + ",)\n%b = param : slot=1 dtype=i32 shape=(" + n +
                     ",)\n%f = param : slot=2 dtype=f32 shape=(" + n + ",)\n";
  const std::string progs[] = {
      decl + "%q = floordiv %a, %b\n%m = floormod %a, %b\n%r = add %q, %m\n",
      // a cast check (in chunk 0) and a division (later chunks): the first code wins
      decl + "%q = floordiv %a, %b\n%c = cast %f : dtype=i32\n%r = add %q, %c\n",
      decl + "%c = cast %f : dtype=i32\n%q = floordiv %a, %b\n%r = add %q, %c\n",
      // the failing op in a temporary (two consumers of an exp2)
      decl + "%q = floordiv %a, %b\n%g = cast %q : dtype=f32\n%t = exp2 %g\n%u = mul %t, %t\n%r = add %u, %t\n",
  };
  for (const std::string &prog : progs) {
    SCOPED_TRACE(prog);
    Ctx c;
    uopc_error e;
    uopc_node *root = uopc_uir_parse(c, prog.data(), prog.size(), "t.uir", &e);
    ASSERT_NE(root, nullptr) << e.msg;
    std::string want;
    for (uint32_t t : {1u, 2u, 3u, 7u}) {
      uopc_plan *p = Compile(c, root, t, &e);
      ASSERT_NE(p, nullptr) << e.msg;
      if (t > 1) EXPECT_GE(uopc_plan_nsplit(p), 1u) << t << " threads: nothing split";
      Inputs in;
      in.shapes = {{N}, {N}, {N}};
      in.args = {{a.data(), UOPC_DT_I32, 1, in.shapes[0].data()},
                 {b.data(), UOPC_DT_I32, 1, in.shapes[1].data()},
                 {f.data(), UOPC_DT_F32, 1, in.shapes[2].data()}};
      std::string got = Call(p, &in);
      if (t == 1) {
        want = got;
        EXPECT_EQ(want.rfind("error: ", 0), 0u) << "one thread did not fail";
      } else {
        EXPECT_TRUE(got == want) << t << " threads: " << (got.rfind("error:", 0) == 0 ? got : "a result, no error")
                                 << "; one thread: " << want;
      }
      in.args[1].data = ok.data();
      in.args[2].data = okf.data();
      std::string fine = Call(p, &in);
      EXPECT_NE(fine.rfind("error:", 0), 0u) << "fails without an undefined element: " << fine;
      uopc_plan_free(p);
    }
  }
  uopc_plan_cache_clear();
}

// PlanDiff's random programs at 2 threads, kernels split wherever they can be.
TEST(PlanThreads, RandomProgramsMatchRunAt2Threads) {
  EnvScope force("UOPC_SPLIT_MIN_WORK", "1");
  std::mt19937_64 rng(11);
  int n = 0;
  for (int round = 0; round < 8; round++) {
    Ctx c;
    uopc_ctx_set_check(c, 0);
    for (int k = 0; k < 10; k++, n++) {
      uopc_node *u = gen_program(c, rng, 4);
      std::string want = run_text(c, u), got = plan_text(c, u, UOPC_TIER_FAST, 2);
      if (plan_agrees(c, u, want, got)) continue;
      char *t = uopc_uir_print(c, u);
      ADD_FAILURE() << "run: " << want << "\nplan (2 threads): " << got << "\nprogram:\n" << (t ? t : "");
      if (t) uopc_mem_free(c, t, strlen(t) + 1);
    }
  }
  uopc_plan_cache_clear();
}

// The same with streaming stores at every size (UOPC_STREAM_MIN_BYTES=1):
// each result kernel has its two copies, and plan_text_opts' result buffer
// is 64-byte aligned, so the streaming one runs where the JIT's vectors are
// 512 bits (test_stream.cpp runs both copies on chosen buffers).
TEST(PlanThreads, RandomProgramsMatchRunWithStreamingStores) {
  EnvScope force("UOPC_SPLIT_MIN_WORK", "1"), stream("UOPC_STREAM_MIN_BYTES", "1");
  uopc_plan_cache_clear();
  EXPECT_EQ(random_plans_disagree(29, 0), "");
  uopc_plan_cache_clear();
}

// The thread count: the option, else UOPC_THREADS, else the CPUs the process
// may run on; junk in UOPC_THREADS is ignored by the library and warned about
// by the CLI; at most 64.
TEST(PlanThreads, ThreadCountFromOptionsEnvAndMachine) {
  const char *prog = "%a = param : slot=0 dtype=f32 shape=(4,)\n%r = add %a, %a\n";
  cpu_set_t cs;
  ASSERT_EQ(sched_getaffinity(0, sizeof cs, &cs), 0);
  uint32_t cpus = (uint32_t)CPU_COUNT(&cs);
  auto threads = [&](uint32_t opt) {
    Ctx c;
    uopc_error e;
    uopc_node *root = uopc_uir_parse(c, prog, strlen(prog), "t.uir", &e);
    uopc_plan *p = root ? Compile(c, root, opt, &e) : nullptr;
    uint32_t t = uopc_plan_threads(p);
    uopc_plan_free(p);
    return t;
  };
  unsetenv("UOPC_THREADS");
  EXPECT_EQ(threads(0), std::min(cpus, 64u));
  EXPECT_EQ(threads(5), 5u);
  EXPECT_EQ(threads(1000), 64u);
  {
    EnvScope env("UOPC_THREADS", "3");
    EXPECT_EQ(threads(0), 3u);
    EXPECT_EQ(threads(2), 2u);  // the option wins
  }
  for (const char *junk : {"two", "0", "-4", "3x"}) {
    EnvScope env("UOPC_THREADS", junk);
    EXPECT_EQ(threads(0), std::min(cpus, 64u)) << junk;
  }
  CliRun r = UopcEnv("UOPC_THREADS=two", "jit-run " + Q(ExamplePath("sq_call.uir")));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "49\n");
  EXPECT_NE(r.err.find("uopc: warning: UOPC_THREADS='two' is not a positive integer"), std::string::npos) << r.err;
  r = UopcEnv("UOPC_SPLIT_MIN_WORK=lots", "jit-run " + Q(ExamplePath("sq_call.uir")));
  EXPECT_NE(r.err.find("UOPC_SPLIT_MIN_WORK='lots' is not a positive integer"), std::string::npos) << r.err;
  uopc_plan_cache_clear();
}

// Two host threads calling one threaded plan at once (its chunks go to the
// one pool, or run on the caller when the pool is busy): both get the answer
// one thread gives, every time.  In scripts/tsan.sh's list.
TEST(PlanThreads, TwoHostThreadsCallOneThreadedPlan) {
  EnvScope force("UOPC_SPLIT_MIN_WORK", "1");
  std::string f = std::string(UOPC_SOURCE_DIR) + "/test/golden/plan_softmax.uir";
  Ctx c;
  uopc_error e;
  std::string text = Slurp(f);
  uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), f.c_str(), &e);
  ASSERT_NE(root, nullptr) << e.msg;
  uopc_plan *p1 = Compile(c, root, 1, &e), *p3 = Compile(c, root, 3, &e);
  ASSERT_NE(p1, nullptr) << e.msg;
  ASSERT_NE(p3, nullptr) << e.msg;
  ASSERT_GE(uopc_plan_nsplit(p3), 1u);
  Inputs in;
  MakeInputs(p1, 5, &in);
  std::string want = Call(p1, &in);
  int bad[2] = {0, 0};
  std::vector<std::thread> th;
  for (int k = 0; k < 2; k++)
    th.emplace_back([&, k] {
      Inputs mine = in;  // its own copy of the inputs (the same values)
      for (size_t s = 0; s < mine.args.size(); s++) mine.args[s].data = mine.data[s].data(), mine.args[s].shape = mine.shapes[s].data();
      for (int r = 0; r < 50; r++) bad[k] += Call(p3, &mine) != want;
    });
  for (std::thread &t : th) t.join();
  EXPECT_EQ(bad[0], 0);
  EXPECT_EQ(bad[1], 0);
  uopc_plan_free(p1);
  uopc_plan_free(p3);
  uopc_plan_cache_clear();
}

// The pool itself (lib/support/pool.h): batches from several host threads at
// once, each job run exactly once; after a shutdown the next batch starts
// workers again.
extern "C" {
#include "support/pool.h"
}

namespace {
struct Counts {
  std::atomic<int> hit[16];
};
void Bump(void *arg, uint32_t j) { static_cast<Counts *>(arg)->hit[j].fetch_add(1); }
}  // namespace

TEST(PlanThreads, PoolRunsEveryJobOnceFromSeveralThreads) {
  std::vector<std::thread> th;
  int bad[3] = {0, 0, 0};
  for (int k = 0; k < 3; k++)
    th.emplace_back([&, k] {
      for (int r = 0; r < 200; r++) {
        Counts c;
        uint32_t n = 1 + (uint32_t)((r + k) % 16);
        for (auto &h : c.hit) h = 0;
        uopi_pool_run(Bump, &c, n);
        for (uint32_t j = 0; j < 16; j++) bad[k] += c.hit[j].load() != (j < n ? 1 : 0);
      }
    });
  for (std::thread &t : th) t.join();
  EXPECT_EQ(bad[0] + bad[1] + bad[2], 0);
  EXPECT_GE(uopi_pool_workers(), 1u);
  uopi_pool_shutdown();
  EXPECT_EQ(uopi_pool_workers(), 0u);
  Counts c;
  for (auto &h : c.hit) h = 0;
  uopi_pool_run(Bump, &c, 4);
  for (uint32_t j = 0; j < 4; j++) EXPECT_EQ(c.hit[j].load(), 1);
  uopi_pool_shutdown();
}

// The pool's spin (UOPC_POOL_SPIN_US): jobs of uneven length, so that the
// caller finishes its own first and waits for a worker's, writing plain
// (non-atomic) results that the caller reads as soon as the batch returns;
// at a spin of 1 us (the caller and the workers sleep at once), the default
// (200 us) and 50 ms (the workers are still polling when the next batch
// comes, and when the pool shuts down); batches of 2 jobs (which spin on a
// machine of 2 CPUs or more) and larger ones.  Under TSan (scripts/tsan.sh) a
// missing happens-before between a worker's job and the caller's return is
// a report.
namespace {
struct Slow {
  uint64_t out[8];
  uint32_t us[8];
};
void SlowJob(void *arg, uint32_t j) {
  Slow *s = static_cast<Slow *>(arg);
  auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(s->us[j]);
  while (std::chrono::steady_clock::now() < end) {
  }
  s->out[j] = 1000 + j;  // a plain store, read by the caller after the batch
}
}  // namespace

TEST(PlanThreads, PoolSpinSeesEveryJobsResult) {
  for (const char *spin : {"1", "200", "50000"}) {
    EnvScope at("UOPC_POOL_SPIN_US", spin);
    int bad = 0;
    for (int r = 0; r < 60; r++) {
      Slow s;
      uint32_t n = r % 3 ? 2 : 2 + (uint32_t)(r % 7);  // 2: spins on 2 CPUs or more; more than the CPUs: no spin
      for (uint32_t j = 0; j < 8; j++) s.out[j] = 0, s.us[j] = (uint32_t)((j * 37 + (uint32_t)r * 11) % 120);
      uopi_pool_run(SlowJob, &s, n);
      for (uint32_t j = 0; j < 8; j++) bad += s.out[j] != (j < n ? 1000 + j : 0);
    }
    EXPECT_EQ(bad, 0) << "spin " << spin << " us";
  }
  uopi_pool_shutdown();  // workers may be polling (50 ms): shutdown still returns
  EXPECT_EQ(uopi_pool_workers(), 0u);
}

// ---- a plan's kernels compiled at once (lib/compile.h uopi_compile_kernels) ----

#include "compile.h"

namespace {
// The kernel O[i] = A[i] * K + A[i] on n floats, as .uir text.
std::string MulAddText(int n, int k) {
  std::string s = std::to_string(n);
  return "%A = buffer : slot=0 dtype=f32 shape=(" + s + ",)\n%O = buffer : slot=1 dtype=f32 shape=(" + s +
         ",)\n%i = range " + s + " : idx=0\n%pa = index %A, %i\n%a = load %pa\n%m = mul %a, " + std::to_string(k) +
         ".0\n%v = add %m, %a\n%po = index %O, %i\n%st = store %po, %v\n%e = end %st, %i\n%k = sink %e\n";
}

// 1 when kernel k computes O = A * mult + A on n small integers (exact in f32).
bool MulAddWorks(uopc_kernel *k, int n, int mult) {
  std::vector<float> a((size_t)n), o((size_t)n, -1.0f);
  for (int i = 0; i < n; i++) a[(size_t)i] = (float)(i % 50 - 25);
  void *bufs[2] = {a.data(), o.data()};
  uopc_error e;
  if (!k || uopc_kernel_call(k, bufs, 2, &e) != UOPC_OK) return false;
  for (int i = 0; i < n; i++)
    if (o[(size_t)i] != a[(size_t)i] * (float)mult + a[(size_t)i]) return false;
  return true;
}
}  // namespace

// One batch with equal kernels in it (the second of a pair finds the first's
// entry pending: it comes after the batch, from memory), at 1 and 2 threads;
// then a batch whose middle root is not a kernel: the error, no handle, no
// hold left, and the kernels compiled before the failure stay cached; then
// 40 kernels, more than one window of emitted modules (8 per thread).
TEST(PlanThreads, CompileBatchEqualKernelsAndAFailure) {
  uopc_cache_set_disk(0);
  uopc_plan_cache_clear();
  for (uint32_t threads : {1u, 2u}) {
    SCOPED_TRACE(threads);
    uopc_cache_clear_memory();
    uopc_cache_reset_stats();
    Ctx c;
    uopc_error e;
    const int n[3] = {40, 41, 42}, mult[3] = {3, 5, 7};
    uopc_node *k[3];
    for (int i = 0; i < 3; i++) {
      std::string t = MulAddText(n[i], mult[i]);
      ASSERT_NE(k[i] = uopc_uir_parse(c, t.data(), t.size(), "k.uir", &e), nullptr) << e.msg;
    }
    uopc_node *roots[6] = {k[0], k[1], k[0], k[2], k[1], k[0]};
    const int which[6] = {0, 1, 0, 2, 1, 0};
    uopi_jit_tier tiers[6] = {UOPI_JIT_TIER0, UOPI_JIT_TIER0, UOPI_JIT_TIER0,
                              UOPI_JIT_TIER0, UOPI_JIT_TIER0, UOPI_JIT_TIER0};
    uopc_kernel *out[6];
    ASSERT_EQ(uopi_kernels_compile(c, roots, tiers, nullptr, 6, nullptr, threads, out, &e), UOPC_OK) << e.msg;
    uopc_cache_stats s;
    uopc_cache_get_stats(&s);
    EXPECT_EQ(s.misses, 3u);    // each distinct kernel compiled once
    EXPECT_EQ(s.mem_hits, 3u);  // the three repeats
    EXPECT_EQ(s.mem_held, 3u);
    for (int i = 0; i < 6; i++) EXPECT_TRUE(MulAddWorks(out[i], n[which[i]], mult[which[i]])) << i;
    for (uopc_kernel *h : out) uopc_kernel_free(h);

    uopc_cache_clear_memory();
    uopc_cache_reset_stats();
    uopc_node *bad = uopc_const_f(c, UOPC_DT_F32, 1.0);
    uopc_node *fails[3] = {k[1], bad, k[2]};
    uopc_kernel *none[3] = {nullptr, nullptr, nullptr};
    EXPECT_NE(uopi_kernels_compile(c, fails, tiers, nullptr, 3, nullptr, threads, none, &e), UOPC_OK);
    EXPECT_NE(std::string(e.msg), "");
    EXPECT_EQ(uopc_ctx_error(c), nullptr);  // reported through e only, as uopc_compile
    for (uopc_kernel *h : none) EXPECT_EQ(h, nullptr);
    uopc_cache_get_stats(&s);
    EXPECT_EQ(s.misses, 1u);  // k[1], before the failure; k[2] never started
    EXPECT_EQ(s.mem_held, 0u);
    uopc_kernel *again = uopc_compile(c, k[1], nullptr, &e);
    uopc_cache_get_stats(&s);
    EXPECT_EQ(s.mem_hits, 1u);  // the failed batch filled its entry
    EXPECT_TRUE(MulAddWorks(again, n[1], mult[1]));
    uopc_kernel_free(again);

    // more kernels than a window holds (8 per thread): several windows, in order
    constexpr int kMany = 40;
    std::vector<uopc_node *> many(kMany);
    std::vector<uopi_jit_tier> mtiers(kMany, UOPI_JIT_TIER0);
    std::vector<uopc_kernel *> mout(kMany);
    for (int i = 0; i < kMany; i++) {
      std::string t = MulAddText(100 + i, 2 + i % 5);
      ASSERT_NE(many[(size_t)i] = uopc_uir_parse(c, t.data(), t.size(), "m.uir", &e), nullptr) << e.msg;
    }
    uopc_cache_reset_stats();
    ASSERT_EQ(uopi_kernels_compile(c, many.data(), mtiers.data(), nullptr, kMany, nullptr, threads, mout.data(), &e), UOPC_OK)
        << e.msg;
    uopc_cache_get_stats(&s);
    EXPECT_EQ(s.misses, (uint64_t)kMany);
    for (int i = 0; i < kMany; i++) EXPECT_TRUE(MulAddWorks(mout[(size_t)i], 100 + i, 2 + i % 5)) << i;
    for (uopc_kernel *h : mout) uopc_kernel_free(h);
  }
  uopc_cache_clear_memory();
}

// Four host threads compile the same multi-kernel plans at 2 threads at
// once (plan cache off, the kernel cache emptied between rounds): each
// finds kernels another thread is filling (BUSY, taken after its batch) and
// every plan computes the bytes of the plan compiled alone.
TEST(PlanThreads, HostThreadsCompileOnePlanAtOnce) {
  EnvScope force("UOPC_SPLIT_MIN_WORK", "1");
  uopc_cache_set_disk(0);
  uopc_plan_cache_set_limit(0, 0);
  std::vector<std::string> texts, wants;
  std::vector<Inputs> ins(2);
  for (const char *name : {"plan_attention_small.uir", "plan_softmax.uir"}) {
    std::string f = std::string(UOPC_SOURCE_DIR) + "/test/golden/" + name;
    texts.push_back(Slurp(f));
    Ctx c;
    uopc_error e;
    uopc_node *root = uopc_uir_parse(c, texts.back().data(), texts.back().size(), name, &e);
    ASSERT_NE(root, nullptr) << e.msg;
    uopc_plan *p = Compile(c, root, 1, &e);
    ASSERT_NE(p, nullptr) << e.msg;
    MakeInputs(p, (uint32_t)texts.size(), &ins[texts.size() - 1]);
    wants.push_back(Call(p, &ins[texts.size() - 1]));
    EXPECT_NE(wants.back().rfind("error:", 0), 0u) << wants.back();
    uopc_plan_free(p);
  }
  std::atomic<int> bad{0}, split{0};
  for (int round = 0; round < 3; round++) {
    uopc_cache_clear_memory();
    std::vector<std::thread> th;
    for (int t = 0; t < 4; t++)
      th.emplace_back([&, t] {
        for (size_t w = 0; w < texts.size(); w++) {
          size_t at = (w + (size_t)t) % texts.size();
          Ctx c;
          uopc_error e;
          uopc_node *root = uopc_uir_parse(c, texts[at].data(), texts[at].size(), "p.uir", &e);
          uopc_plan *p = root ? Compile(c, root, 2, &e) : nullptr;
          if (!p) {
            bad++;
            continue;
          }
          split += uopc_plan_nsplit(p) > 0;
          Inputs in = ins[at];
          for (size_t s = 0; s < in.args.size(); s++) in.args[s].data = in.data[s].data();
          if (Call(p, &in) != wants[at]) bad++;
          uopc_plan_free(p);
        }
      });
    for (std::thread &x : th) x.join();
  }
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(split.load(), 0);  // the plans had chunks: several kernels a batch
  uopc_plan_cache_set_limit(256, 256u << 20);
  uopc_cache_clear_memory();
}

// The plan's text path honours the tier the plan chose for a kernel
// (uopi_kernel_emit at tier t is uopc_emit_asm at the public tier of t), and
// the tiers give different code here, so a tier dropped on the way shows.
TEST(KernelEmit, AtTheTierThePlanChose) {
  Ctx c;
  uopc_error e;
  std::string t = MulAddText(1000, 3);
  uopc_node *k = uopc_uir_parse(c, t.data(), t.size(), "k.uir", &e);
  ASSERT_NE(k, nullptr) << e.msg;
  auto names = [](char *s) {
    std::string r = s ? std::regex_replace(std::string(s), std::regex("uopc_k[A-Za-z0-9_]*"), "K") : "";
    free(s);
    return r;
  };
  uopc_compile_opts fast = {UOPC_TIER_FAST, 0, 1}, strong = {UOPC_TIER_STRONG, 0, 1};
  std::string at0 = names(uopi_kernel_emit(c, k, &strong, UOPI_JIT_TIER0, 1, &e));
  std::string at2 = names(uopi_kernel_emit(c, k, &fast, UOPI_JIT_TIER2, 1, &e));
  ASSERT_FALSE(at0.empty()) << e.msg;
  EXPECT_EQ(at0, names(uopc_emit_asm(c, k, &fast, &e)));
  EXPECT_EQ(at2, names(uopc_emit_asm(c, k, &strong, &e)));
  EXPECT_NE(at0, at2);
}
