// Concurrency (issue 10, hardening; scripts/tsan.sh runs these and the other
// concurrency tests under ThreadSanitizer): threads compiling and calling
// kernels and plans through the one shared kernel cache, in memory and on
// disk, and two processes filling one cache directory at once.
#include <gtest/gtest.h>
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "support/cli.h"

extern "C" {
#include "uopc/uopc.h"
}

namespace {

// o[i] = a[i] * b[i] + a[i] over n f32
uopc_node *MulAddKernel(uopc_ctx *c, int n) {
  uopc_node *a = uopc_buffer(c, 0, UOPC_DT_F32, n), *b = uopc_buffer(c, 1, UOPC_DT_F32, n),
            *o = uopc_buffer(c, 2, UOPC_DT_F32, n);
  uopc_node *i = uopc_range_k(c, n, 0);
  uopc_node *av = uopc_load1(c, a, i);
  uopc_node *v = uopc_add(c, uopc_mul(c, av, uopc_load1(c, b, i)), av);
  return uopc_sink1(c, uopc_end(c, uopc_store1(c, o, i, v), &i, 1));
}

bool MulAddIsExact(uopc_kernel *k, int n, float seed) {
  std::vector<float> a(n), b(n), o(n, -1.0f);
  for (int j = 0; j < n; j++) a[j] = seed + 0.25f * (float)j, b[j] = 1.5f - 0.125f * (float)j;
  void *bufs[] = {a.data(), b.data(), o.data()};
  if (uopc_kernel_call(k, bufs, 3, nullptr) != UOPC_OK) return false;
  for (int j = 0; j < n; j++) {
    volatile float p = a[j] * b[j];
    if (o[j] != p + a[j]) return false;
  }
  return true;
}

// P = A @ B for A (m, kk), B (kk, nn), as the seed writes it (the host example's program)
uopc_node *MatmulProgram(uopc_ctx *c, int m, int kk, int nn) {
  int32_t sa[] = {m, kk}, sb[] = {kk, nn};
  uopc_node *a = uopc_param(c, 0, UOPC_DT_F32, sa, 2), *b = uopc_param(c, 1, UOPC_DT_F32, sb, 2);
  int32_t a1[] = {m, 1, kk}, full[] = {m, nn, kk}, perm[] = {1, 0}, b1[] = {1, nn, kk};
  uopc_node *ax = uopc_expand(c, uopc_reshape(c, a, a1, 3), full, 3);
  uopc_node *bx = uopc_expand(c, uopc_reshape(c, uopc_permute(c, b, perm, 2), b1, 3), full, 3);
  return uopc_reduce(c, uopc_mul(c, ax, bx), UOPC_OP_ADD, 1);
}

constexpr int kK = 8, kN = 5;

bool MatmulIsExact(const uopc_plan *p, int m, float seed) {
  std::vector<float> a(m * kK), b(kK * kN), r((size_t)m * kN, -1.0f);
  for (size_t j = 0; j < a.size(); j++) a[j] = seed + 0.5f * (float)(j % 7);
  for (size_t j = 0; j < b.size(); j++) b[j] = 0.25f * (float)(j % 5) - 0.5f;
  const int64_t sa[] = {m, kK}, sb[] = {kK, kN}, sr[] = {m, kN};
  uopc_tensor args[] = {{a.data(), UOPC_DT_F32, 2, sa}, {b.data(), UOPC_DT_F32, 2, sb}};
  uopc_tensor out = {r.data(), UOPC_DT_F32, 2, sr};
  if (uopc_plan_call(p, args, 2, &out, nullptr) != UOPC_OK) return false;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < kN; j++) {
      float acc = a[i * kK] * b[j];  // run's order: the first product, then the rest
      for (int k = 1; k < kK; k++) {
        volatile float q = a[i * kK + k] * b[k * kN + j];
        acc = acc + q;
      }
      if (r[(size_t)i * kN + j] != acc) return false;
    }
  return true;
}

// 4 threads, each compiling (both tiers) and calling kernels and plans whose
// keys overlap with the other threads', through the one memory cache and
// the disk cache (the suite's temporary UOPC_CACHE_DIR, test_cache.cpp),
// clearing the memory cache now and then so that entries come back from
// disk while other threads hold and call them.  Then every plan from every
// thread at once.
TEST(Threads, KernelsAndPlansThroughOneSharedCache) {
  constexpr int kThreads = 4, kRounds = 12;
  std::atomic<int> bad{0};
  std::vector<uopc_plan *> plans(kThreads * kRounds);
  std::vector<int> rows(kThreads * kRounds);
  auto work = [&](int t) {
    for (int r = 0; r < kRounds; r++) {
      int n = 60 + (t + r) % 5, m = 3 + (t * 7 + r) % 4;
      uopc_ctx *c = uopc_ctx_new(nullptr);
      uopc_compile_opts o{};
      o.tier = r % 3 == 0 ? UOPC_TIER_STRONG : UOPC_TIER_FAST;
      uopc_error e{};
      uopc_kernel *k = uopc_compile(c, MulAddKernel(c, n), &o, &e);
      if (!k || !MulAddIsExact(k, n, (float)(t + r))) bad++;
      uopc_plan *p = uopc_plan_compile(c, MatmulProgram(c, m, kK, kN), &o, &e);
      uopc_ctx_free(c);  // neither the kernel nor the plan depends on it
      if (!p || !MatmulIsExact(p, m, (float)t)) bad++;
      if (k && !MulAddIsExact(k, n, 0.5f)) bad++;
      uopc_kernel_free(k);
      plans[(size_t)(t * kRounds + r)] = p;
      rows[(size_t)(t * kRounds + r)] = m;
      if (r % 4 == 3) uopc_cache_clear_memory();
    }
  };
  std::vector<std::thread> th;
  for (int t = 0; t < kThreads; t++) th.emplace_back(work, t);
  for (auto &x : th) x.join();
  EXPECT_EQ(bad.load(), 0);
  th.clear();
  for (int t = 0; t < kThreads; t++)
    th.emplace_back([&, t] {
      for (size_t i = 0; i < plans.size(); i++) {
        size_t at = (i + (size_t)t * 5) % plans.size();
        if (!plans[at] || !MatmulIsExact(plans[at], rows[at], 1.0f)) bad++;
      }
    });
  for (auto &x : th) x.join();
  EXPECT_EQ(bad.load(), 0);
  for (auto *p : plans) uopc_plan_free(p);
  uopc_plan_cache_clear(); /* cached plans hold kernels: leave none to later tests */
}

std::vector<std::string> CacheFiles(const std::string &dir, const char *suffix) {
  std::vector<std::string> v;
  if (DIR *d = opendir(dir.c_str())) {
    while (struct dirent *x = readdir(d)) {
      std::string n = x->d_name;
      if (n == "." || n == "..") continue;
      if (!*suffix || (n.size() > strlen(suffix) && n.compare(n.size() - strlen(suffix), strlen(suffix), suffix) == 0))
        v.push_back(n);
    }
    closedir(d);
  }
  return v;
}

// Two processes fill one empty cache directory at once: each compiles the
// same 6 kernels through `uopc cache warm`, one in order, the other in
// reverse, so they meet in the middle.  Afterwards: 6 entries, no temporary
// file, and each kernel is a disk hit for a third process.
TEST(Threads, TwoProcessesFillOneCacheDirectory) {
  char tmpl[4096];
  snprintf(tmpl, sizeof tmpl, "%s/two_procs_XXXXXX", TestTempDir().c_str());
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string root = tmpl, dir = root + "/cache";
  std::vector<std::string> files;
  for (int n = 0; n < 6; n++) {
    std::string f = root + "/k" + std::to_string(n) + ".uir", size = std::to_string(100 + n);
    Spit(f, "%A = buffer : slot=0 dtype=f32 shape=(" + size + ",)\n%O = buffer : slot=1 dtype=f32 shape=(" + size +
                ",)\n%i = range " + size + " : idx=0\n%pa = index %A, %i\n%a = load %pa\n%m = mul %a, 3.0\n"
                "%v = add %m, %a\n%po = index %O, %i\n%st = store %po, %v\n%e = end %st, %i\n%k = sink %e\n");
    files.push_back(f);
  }
  std::string fwd, rev;
  for (size_t i = 0; i < files.size(); i++) {
    fwd += " " + Q(files[i]);
    rev += " " + Q(files[files.size() - 1 - i]);
  }
  std::string env = "UOPC_DEBUG= UOPC_CACHE=1 UOPC_CACHE_DIR=" + Q(dir) + " ", cli = Q(UOPC_CLI);
  auto loop = [&](const std::string &list, const std::string &out) {
    return "(for f in" + list + "; do " + env + cli + " cache warm --tier=strong \"$f\" || exit 1; done >" + Q(out) +
           " 2>&1)";
  };
  std::string cmd = loop(fwd, root + "/a.out") + " & p=$!; " + loop(rev, root + "/b.out") +
                    " & q=$!; wait $p; a=$?; wait $q; exit $((a + $?))";
  EXPECT_EQ(std::system(("bash -c " + Q(cmd)).c_str()), 0) << Slurp(root + "/a.out") << Slurp(root + "/b.out");
  for (const char *out : {"/a.out", "/b.out"}) {
    std::string s = Slurp(root + out);
    size_t lines = std::count(s.begin(), s.end(), '\n');
    EXPECT_EQ(lines, files.size()) << s;
    for (size_t at = 0; at < s.size();) {
      size_t nl = s.find('\n', at);
      std::string line = s.substr(at, nl - at);
      EXPECT_TRUE(line == "miss" || line == "disk hit") << line;
      at = nl == std::string::npos ? s.size() : nl + 1;
    }
  }
  EXPECT_EQ(CacheFiles(dir, ".ukc").size(), files.size());
  // no temporary file left: the entries and the shared size estimate (whole
  // 8-byte records: a scan's and at most one per entry written by each)
  EXPECT_EQ(CacheFiles(dir, "").size(), files.size() + 1);
  std::string budget = Slurp(dir + "/.budget");
  EXPECT_EQ(budget.size() % 8, 0u);
  EXPECT_LE(budget.size(), 8 * (2 * files.size() + 1));
  for (auto &f : files) EXPECT_EQ(UopcEnv(env, "cache warm --tier=strong " + Q(f)).out, "disk hit\n") << f;
  EXPECT_EQ(std::system(("rm -rf " + Q(root)).c_str()), 0);
}

}  // namespace
