// bench_cache: the kernel cache (docs/cache.md).  For the elementwise kernel
// (o = a*b + a over 4096 f32) and the 64^3 matmul nest, both built as uopc
// graphs (bench/cache_kernels.h), at both tiers; median of 20 uopc_compile
// calls each, in a warm process (the engine initialized, one compile done):
//
//   cache/<kernel>/<tier>/cold     memory and disk cache empty: prepare, key,
//                                  LLVM, link, write the entry
//   cache/<kernel>/<tier>/mem      the same graph compiled again in its
//                                  context: a memory hit (goal < 2 us)
//   cache/<kernel>/<tier>/mem_new  the same kernel built in a fresh context:
//                                  index simplification from scratch + hit
//   cache/<kernel>/<tier>/disk     memory cache cleared, entry on disk: read +
//                                  check + inflate + link + look up (goal < 100 us)
//   cache_mem_loop/<kernel>/<tier>  memory hits only: 20 rounds of 1000
//                                  uopc_compile calls of the same graph, each
//                                  round timed whole (uopc_kernel_free
//                                  included, ~30 ns); per call, median and
//                                  min over the rounds (for perf record too)
//   cache_mem_new_loop/<kernel>/<tier>  the same for mem_new: each of the
//                                  1000 calls in a fresh context, only the
//                                  uopc_compile call timed
//   cache_disk_loop/<kernel>/<tier>  disk hits: 20 rounds of 200, each in a
//                                  fresh context with the memory cache
//                                  cleared (goal < 20 us)
//
// Graph building, uopc_kernel_free and clearing happen outside the timed part.
// The cache directory is a fresh temporary folder, removed at the end.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cache_kernels.h"
#include "compile.h"

namespace {

using Clock = std::chrono::steady_clock;
enum Kernel { kEw, kMm };
enum Mode { kCold, kMem, kMemNew, kDisk };
const char *const kModeName[] = {"cold", "mem", "mem_new", "disk"};

double Us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

[[noreturn]] void Die(const char *what, const char *msg) {
  std::fprintf(stderr, "bench_cache: %s: %s\n", what, msg);
  std::exit(1);
}

uopc_node *Build(uopc_ctx *c, int kernel) {
  return kernel == kEw ? uopc_kernels::Ew(c, 4096) : uopc_kernels::Mm(c, 64);
}

// One timed uopc_compile of root; the handle is freed untimed.
double TimeCompile(uopc_ctx *c, uopc_node *root, const uopc_compile_opts &o) {
  uopc_error e{};
  auto t0 = Clock::now();
  uopc_kernel *k = uopc_compile(c, root, &o, &e);
  auto t1 = Clock::now();
  if (!k) Die("compile", e.msg);
  uopc_kernel_free(k);
  return Us(t0, t1);
}

void BM_Cache(benchmark::State &state) {
  int kernel = (int)state.range(0), mode = (int)state.range(2);
  uopc_compile_opts o{state.range(1) == 2 ? UOPC_TIER_STRONG : UOPC_TIER_FAST};
  uopc_error e{};
  std::vector<double> us;
  uopc_cache_clear_memory();
  if (uopc_cache_clear_disk(nullptr, &e) != UOPC_OK) Die("clear", e.msg);
  uopc_cache_stats s0;
  uopc_cache_get_stats(&s0);
  uopc_ctx *keep = uopc_ctx_new(nullptr);
  uopc_node *keep_root = Build(keep, kernel);
  TimeCompile(keep, keep_root, o);  // the entry exists from here on (mem and disk)
  for (auto _ : state) {
    double t = 0;
    if (mode == kMem) {
      t = TimeCompile(keep, keep_root, o);
    } else {
      uopc_ctx *c = uopc_ctx_new(nullptr);
      uopc_node *root = Build(c, kernel);
      if (mode == kCold) {
        uopc_cache_clear_memory();
        if (uopc_cache_clear_disk(nullptr, &e) != UOPC_OK) Die("clear", e.msg);
      } else if (mode == kDisk) {
        uopc_cache_clear_memory();
      }
      t = TimeCompile(c, root, o);
      uopc_ctx_free(c);
    }
    us.push_back(t);
    state.SetIterationTime(t / 1e6);
  }
  uopc_ctx_free(keep);
  uopc_cache_stats s1;
  uopc_cache_get_stats(&s1);
  double med = Median(us);
  state.counters["median_us"] = med;
  state.counters["min_us"] = *std::min_element(us.begin(), us.end());
  state.counters["mem_hits"] = (double)(s1.mem_hits - s0.mem_hits);
  state.counters["disk_hits"] = (double)(s1.disk_hits - s0.disk_hits);
  state.counters["misses"] = (double)(s1.misses - s0.misses);
  uint64_t n = 0, bytes = 0;
  if (uopc_cache_disk_usage(&n, &bytes, nullptr) == UOPC_OK && n) state.counters["entry_bytes"] = (double)bytes / (double)n;
  std::string label = kModeName[mode];
  if (mode == kMem) label += med < 2.0 ? " (goal < 2 us: met)" : " (goal < 2 us: MISSED)";
  if (mode == kDisk) label += med < 100.0 ? " (goal < 100 us: met)" : " (goal < 100 us: MISSED)";
  state.SetLabel(label);
}

void Args(benchmark::internal::Benchmark *b) {
  for (int k : {kEw, kMm})
    for (int t : {0, 2})
      for (int m : {kCold, kMem, kMemNew, kDisk}) b->Args({k, t, m});
  b->ArgNames({"kernel", "tier", "mode"});
}

BENCHMARK(BM_Cache)->Apply(Args)->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);

// The loops' counters: per call, the median, min and max over the rounds,
// and the label saying whether the median meets goal_us.
void ReportRounds(benchmark::State &state, const std::vector<double> &us, double goal_us) {
  double med = Median(us);
  state.counters["median_us"] = med;
  state.counters["min_us"] = *std::min_element(us.begin(), us.end());
  state.counters["max_us"] = *std::max_element(us.begin(), us.end());
  char label[64];
  snprintf(label, sizeof label, "goal < %g us: %s", goal_us, med < goal_us ? "met" : "MISSED");
  state.SetLabel(label);
}

// One round of n cache hits (a fresh context, build, the memory cache cleared
// when clear_memory so the hit comes from disk, timed uopc_compile, free):
// the mean microseconds a hit.
double HitRound(int kernel, uopc_compile_opts o, int n, bool clear_memory) {
  double t = 0;
  for (int r = 0; r < n; r++) {
    uopc_ctx *c = uopc_ctx_new(nullptr);
    uopc_node *root = Build(c, kernel);
    if (clear_memory) uopc_cache_clear_memory();
    t += TimeCompile(c, root, o);
    uopc_ctx_free(c);
  }
  return t / n;
}

// Keeps a round's figure for ReportRounds and gives it to the benchmark's clock.
void RecordRound(benchmark::State &state, std::vector<double> &us, double t) {
  us.push_back(t);
  state.SetIterationTime(t / 1e6);
}

void BM_MemLoop(benchmark::State &state) {
  int kernel = (int)state.range(0);
  uopc_compile_opts o{state.range(1) == 2 ? UOPC_TIER_STRONG : UOPC_TIER_FAST};
  uopc_ctx *c = uopc_ctx_new(nullptr);
  uopc_node *root = Build(c, kernel);
  TimeCompile(c, root, o);  // the entry exists from here on
  std::vector<double> us;
  for (auto _ : state) {
    auto t0 = Clock::now();
    for (int r = 0; r < 1000; r++) {
      uopc_error e{};
      uopc_kernel *k = uopc_compile(c, root, &o, &e);
      if (!k) Die("compile", e.msg);
      uopc_kernel_free(k);
    }
    RecordRound(state, us, Us(t0, Clock::now()) / 1000);
  }
  uopc_ctx_free(c);
  ReportRounds(state, us, 0.5);
}
BENCHMARK(BM_MemLoop)->Name("cache_mem_loop")->ArgsProduct({{kEw, kMm}, {0, 2}})->ArgNames({"kernel", "tier"})
    ->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Memory hits of a graph built again in a fresh context each time (the
// kernel cache's entry exists; the context's raw-key memo cannot help): 20
// rounds of 1000 (new context, build, timed uopc_compile, free); per call,
// median and min over the rounds.
void BM_MemNewLoop(benchmark::State &state) {
  int kernel = (int)state.range(0);
  uopc_compile_opts o{state.range(1) == 2 ? UOPC_TIER_STRONG : UOPC_TIER_FAST};
  uopc_ctx *keep = uopc_ctx_new(nullptr);
  TimeCompile(keep, Build(keep, kernel), o);  // the entry exists from here on
  std::vector<double> us;
  for (auto _ : state) RecordRound(state, us, HitRound(kernel, o, 1000, false));
  uopc_ctx_free(keep);
  ReportRounds(state, us, 0.5);
}
BENCHMARK(BM_MemNewLoop)->Name("cache_mem_new_loop")->ArgsProduct({{kEw, kMm}, {0, 2}})->ArgNames({"kernel", "tier"})
    ->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Disk hits, as many as the rounds hold: 20 rounds of 200 (a fresh
// context, build, memory cache cleared, timed uopc_compile, free); per call,
// median, min and max over the rounds (BM_Cache's mode:3 times 20 hits a
// round, where the first few pay for cold caches: this is the steady rate).
void BM_DiskLoop(benchmark::State &state) {
  int kernel = (int)state.range(0);
  uopc_compile_opts o{state.range(1) == 2 ? UOPC_TIER_STRONG : UOPC_TIER_FAST};
  uopc_ctx *keep = uopc_ctx_new(nullptr);
  TimeCompile(keep, Build(keep, kernel), o);  // the entry exists from here on (memory and disk)
  uopc_ctx_free(keep);
  std::vector<double> us;
  for (auto _ : state) RecordRound(state, us, HitRound(kernel, o, 200, true));
  ReportRounds(state, us, 20);
}
BENCHMARK(BM_DiskLoop)->Name("cache_disk_loop")->ArgsProduct({{kEw, kMm}, {0, 2}})->ArgNames({"kernel", "tier"})
    ->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char **argv) {
  char dir[] = "/tmp/uopc_bench_cache_XXXXXX";
  if (!mkdtemp(dir)) Die("mkdtemp", "cannot make a temporary directory");
  setenv("UOPC_CACHE_DIR", dir, 1);
  unsetenv("UOPC_CACHE");
  unsetenv("UOPC_CACHE_MAX_MB");
  uopc_error e{};
  // The first compile of a process pays one-time costs (+2-18 ms): absorb them.
  if (uopi_jit_warm(UOPI_JIT_TIER0, &e) || uopi_jit_warm(UOPI_JIT_TIER2, &e)) Die("warm", e.msg);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  uopc_cache_clear_disk(nullptr, nullptr);
  rmdir(dir);
  if (uopi_compile_shutdown(&e)) Die("shutdown", e.msg);
  return 0;
}
