// bench_jit: the JIT engine's compile latency and kernel throughput.
//
//   compile/<kernel>/<tier>   median of 20 compiles of a fresh kernel, each
//                             timed from building the IR to the looked-up
//                             entry: build, opt (passes), codegen, link
//                             (add+lookup); label: whether the loop is
//                             vectorized (packed ps ops in its asm)
//   ew/<n>/<tier>             o = a*b + a over n f32: the JIT kernel against
//                             the same C loop compiled by clang-19 -O3
//                             -march=native -ffp-contract=off, alternating
//                             call by call on the same buffers (2 MiB aligned,
//                             MADV_HUGEPAGE); ratio = median over call pairs
//                             of C time / JIT time (>= 1: the JIT is as fast)
//
// Keep runs short on a shared machine: `bench_jit --benchmark_filter=compile`.
#include <benchmark/benchmark.h>

#include <llvm-c/Core.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "jit/jit.h"
#include "support/samples.h"

extern "C" void uopc_bench_ew_clang(float *o, const float *a, const float *b, long n);

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void Check(uopc_status st, const uopc_error &e, const char *what) {
  if (st == UOPC_OK) return;
  std::fprintf(stderr, "bench_jit: %s: %s\n", what, e.msg);
  std::exit(1);
}

std::string Name(const char *prefix) {
  char buf[64];
  uopi_jit_unique_name(buf, sizeof buf, prefix);
  return buf;
}

// Lines of the kernel's assembly with a packed single-precision multiply on a
// vector register wider than SSE's (or any packed multiply without AVX).
int PackedMuls(sample_kind s, int64_t n, uopi_jit_tier t) {
  std::string name = Name("asm");
  uopc_error e{};
  LLVMModuleRef m;
  Check(sample_module(s, n, name.c_str(), &m, &e), e, "build");
  char *text;
  Check(uopi_jit_asm_text(m, t, &text, &e), e, "asm");
  uopi_jit_module_free(m);
  bool avx = __builtin_cpu_supports("avx");
  int count = 0;
  for (char *line = std::strtok(text, "\n"); line; line = std::strtok(nullptr, "\n"))
    if (std::strstr(line, "mulps") && (!avx || std::strstr(line, "%ymm") || std::strstr(line, "%zmm"))) count++;
  std::free(text);
  return count;
}

// ---- compile latency ---------------------------------------------------------

void BM_Compile(benchmark::State &state) {
  auto s = (sample_kind)state.range(0);
  auto t = (uopi_jit_tier)state.range(1);
  int64_t n = s == SAMPLE_EW ? 4096 : 64;
  std::vector<double> total, build, opt, cg, link;
  size_t obj = 0;
  for (auto _ : state) {
    std::string name = Name("bench");
    uopc_error e{};
    LLVMModuleRef m;
    uint8_t *bytes;
    size_t size;
    uopi_jit_code *k;
    auto t0 = Clock::now();
    Check(sample_module(s, n, name.c_str(), &m, &e), e, "build");
    auto t1 = Clock::now();
    Check(uopi_jit_prepare(m, t, &e), e, "prepare");
    auto t2 = Clock::now();
    Check(uopi_jit_emit(m, t, 0, &bytes, &size, &e), e, "emit");
    auto t3 = Clock::now();
    uopi_jit_module_free(m);  // as uopi_jit_compile does, before linking
    Check(uopi_jit_load(bytes, size, name.c_str(), 3, &k, &e), e, "load");
    auto t4 = Clock::now();
    state.SetIterationTime(Ms(t0, t4) / 1e3);
    total.push_back(Ms(t0, t4));
    build.push_back(Ms(t0, t1));
    opt.push_back(Ms(t1, t2));
    cg.push_back(Ms(t2, t3));
    link.push_back(Ms(t3, t4));
    obj = size;
    std::free(bytes);
    uopi_jit_free(k);
  }
  state.counters["median_ms"] = Median(total);
  state.counters["build_ms"] = Median(build);
  state.counters["opt_ms"] = Median(opt);
  state.counters["codegen_ms"] = Median(cg);
  state.counters["link_ms"] = Median(link);
  state.counters["obj_bytes"] = (double)obj;
  int packed = PackedMuls(s, n, t);
  state.counters["vectorized"] = packed > 0;
  state.SetLabel(packed > 0 ? "vectorized" : "NOT VECTORIZED");
}

// ---- throughput --------------------------------------------------------------

struct HugeBuf {  // 2 MiB aligned, huge pages requested, touched
  float *p = nullptr;
  size_t bytes = 0;
  explicit HugeBuf(size_t n) {
    const size_t huge = size_t(2) << 20;
    bytes = (n * sizeof(float) + huge - 1) / huge * huge;
    p = static_cast<float *>(std::aligned_alloc(huge, bytes));
    if (!p) std::abort();
    madvise(p, bytes, MADV_HUGEPAGE);
    std::memset(p, 0, bytes);
  }
  ~HugeBuf() { std::free(p); }
};

// AnonHugePages of the process, MiB (is THP really in use?).
double HugeMiB() {
  FILE *f = std::fopen("/proc/self/smaps_rollup", "r");
  if (!f) return -1;
  char line[256];
  double kb = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "AnonHugePages: %lf kB", &kb) == 1) break;
  std::fclose(f);
  return kb / 1024;
}

void BM_Ew(benchmark::State &state) {
  const int64_t n = state.range(0);
  auto t = (uopi_jit_tier)state.range(1);
  const int reps = n >= (1 << 20) ? 1 : (int)std::max<int64_t>(1, (int64_t(1) << 24) / n);  // ~16M elems a sample
  HugeBuf o(n), a(n), b(n);
  for (int64_t i = 0; i < n; i++) {
    a.p[i] = (float)(i % 1021) * 0.37f - 50.0f;
    b.p[i] = (float)(i % 997) * 0.011f + 0.5f;
  }
  std::string name = Name("ew");
  uopc_error e{};
  LLVMModuleRef m;
  uopi_jit_code *k;
  Check(sample_module(SAMPLE_EW, n, name.c_str(), &m, &e), e, "build");
  Check(uopi_jit_compile(m, name.c_str(), 3, t, &k, &e), e, "compile");
  void *bufs[3] = {o.p, a.p, b.p};

  // Same bits from both.
  Check(uopi_jit_call(k, bufs, 3, &e), e, "call");
  std::vector<float> jit_out(o.p, o.p + n);
  uopc_bench_ew_clang(o.p, a.p, b.p, n);
  if (std::memcmp(jit_out.data(), o.p, n * sizeof(float)) != 0) state.SkipWithError("JIT and C results differ");

  std::vector<double> jit_ms, c_ms;
  auto run_jit = [&] {
    auto t0 = Clock::now();
    for (int r = 0; r < reps; r++) uopi_jit_call(k, bufs, 3, &e);
    benchmark::ClobberMemory();
    jit_ms.push_back(Ms(t0, Clock::now()) / reps);
  };
  auto run_c = [&] {
    auto t0 = Clock::now();
    for (int r = 0; r < reps; r++) uopc_bench_ew_clang(o.p, a.p, b.p, n);
    benchmark::ClobberMemory();
    c_ms.push_back(Ms(t0, Clock::now()) / reps);
  };
  for (auto _ : state) {
    if (jit_ms.size() % 2) {  // alternate which side goes first
      run_jit();
      run_c();
    } else {
      run_c();
      run_jit();
    }
    state.SetIterationTime(jit_ms.back() / 1e3);
  }
  double jm = Median(jit_ms), cm = Median(c_ms), bytes = 3.0 * sizeof(float) * (double)n;
  state.counters["jit_ns_per_elem"] = jm * 1e6 / (double)n;
  state.counters["c_ns_per_elem"] = cm * 1e6 / (double)n;
  state.counters["jit_GBps"] = bytes / (jm * 1e6);
  state.counters["c_GBps"] = bytes / (cm * 1e6);
  std::vector<double> ratios;  // per adjacent pair: robust to load that drifts
  for (size_t i = 0; i < jit_ms.size(); i++) ratios.push_back(c_ms[i] / jit_ms[i]);
  state.counters["ratio"] = Median(ratios);
  state.counters["huge_MiB"] = HugeMiB();
  uopi_jit_free(k);
}

void CompileArgs(benchmark::internal::Benchmark *b) {
  for (int s : {SAMPLE_EW, SAMPLE_MM})
    for (int t : {UOPI_JIT_TIER0, UOPI_JIT_TIER2}) b->Args({s, t});
  b->ArgNames({"kernel", "tier"});
}

void EwArgs(benchmark::internal::Benchmark *b) {
  for (int64_t n : {int64_t(1) << 24, int64_t(4096)})
    for (int t : {UOPI_JIT_TIER0, UOPI_JIT_TIER2}) b->Args({n, t});
  b->ArgNames({"n", "tier"});
}

BENCHMARK(BM_Compile)->Apply(CompileArgs)->Iterations(20)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ew)->Apply(EwArgs)->Iterations(40)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char **argv) {
  uopc_error e{};
  // The first compile of a process pays one-time costs (+2-18 ms): absorb them.
  Check(uopi_jit_warm(UOPI_JIT_TIER0, &e), e, "warm");
  Check(uopi_jit_warm(UOPI_JIT_TIER2, &e), e, "warm");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  Check(uopi_jit_shutdown(&e), e, "shutdown");
  return 0;
}
