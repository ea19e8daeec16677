// bench_kernel: kernels built as uopc graphs and compiled through
// uopc_compile (bench_jit measures the engine alone on hand-built IR).
//
//   compile/<kernel>/<tier>   median of 20: build a fresh graph with the
//                             constructors, then uopc_compile (prepare +
//                             index simplification, emit IR, optimize,
//                             codegen, link + look up); kernels: ew = o[i] =
//                             a[i]*b[i] + a[i] over 4096 f32, mm = 64^3
//                             matmul, loops i, k, j, accumulating into the
//                             zeroed output.  label: whether the hot loop is
//                             vectorized (packed ps ops on ymm/zmm in the
//                             uopc_emit_asm output; counter packed_ops)
//   ew16M/<tier>              o = a*b + a over 16M f32 (uopc graph) against
//                             the same loop compiled by clang-19 -O3
//                             -march=native -ffp-contract=off, alternating
//                             call by call; ratio = median over pairs of
//                             C time / JIT time (>= 0.95 is the goal)
//   fuzz/<op>                 uopc_fuzz_run cases per second (exec_alu per
//                             element included) for cheap triples
//
// The kernel cache is turned off (disk) and emptied (memory) so that every
// compile is a real one; each compile also uses a fresh RANGE idx, so even a
// cache would miss.  Keep runs short on a shared machine:
// `bench_kernel --benchmark_filter=compile`.
#include <benchmark/benchmark.h>

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "compile.h"
#include "fuzz.h"
#include "uopc/uopc.h"
#if __has_include("uopc/cache.h")
#include "uopc/cache.h"
#define HAVE_CACHE 1
#endif

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

[[noreturn]] void Die(const char *what, const char *msg) {
  std::fprintf(stderr, "bench_kernel: %s: %s\n", what, msg);
  std::exit(1);
}

// o[i] = a[i]*b[i] + a[i]; buffers o, a, b in slots 0, 1, 2 (the C loop's order).
uopc_node *Elementwise(uopc_ctx *c, int32_t n, int64_t idx) {
  uopc_node *O = uopc_buffer(c, 0, UOPC_DT_F32, n), *A = uopc_buffer(c, 1, UOPC_DT_F32, n), *B = uopc_buffer(c, 2, UOPC_DT_F32, n);
  uopc_node *i = uopc_range(c, uopc_const_i(c, UOPC_DT_I32, n), idx);
  uopc_node *a = uopc_load(c, uopc_index(c, A, &i, 1)), *b = uopc_load(c, uopc_index(c, B, &i, 1));
  uopc_node *st = uopc_store(c, uopc_index(c, O, &i, 1), uopc_add(c, uopc_mul(c, a, b), a));
  uopc_node *e = uopc_end(c, st, &i, 1);
  return uopc_sink(c, &e, 1);
}

// C[i,j] += A[i,k] * B[k,j] in loops i, k, j; C (slot 0) zeroed by the caller.
uopc_node *Matmul(uopc_ctx *c, int32_t n, int64_t idx) {
  uopc_node *C = uopc_buffer(c, 0, UOPC_DT_F32, n * n), *A = uopc_buffer(c, 1, UOPC_DT_F32, n * n),
            *B = uopc_buffer(c, 2, UOPC_DT_F32, n * n);
  uopc_node *N = uopc_const_i(c, UOPC_DT_I32, n);
  uopc_node *i = uopc_range(c, N, idx), *k = uopc_range(c, N, idx + 1), *j = uopc_range(c, N, idx + 2);
  uopc_node *ij = uopc_add(c, uopc_mul_k(c, i, n), j), *ik = uopc_add(c, uopc_mul_k(c, i, n), k),
            *kj = uopc_add(c, uopc_mul_k(c, k, n), j);
  uopc_node *pc = uopc_index(c, C, &ij, 1);
  uopc_node *prod = uopc_mul(c, uopc_load(c, uopc_index(c, A, &ik, 1)), uopc_load(c, uopc_index(c, B, &kj, 1)));
  uopc_node *st = uopc_store(c, pc, uopc_add(c, uopc_load(c, pc), prod));
  uopc_node *r[3] = {i, k, j};
  uopc_node *e = uopc_end(c, st, r, 3);
  return uopc_sink(c, &e, 1);
}

uopc_node *Build(uopc_ctx *c, int which, int64_t idx) { return which == 0 ? Elementwise(c, 4096, idx) : Matmul(c, 64, idx); }

// Lines of the assembly with a packed single-precision multiply or add on a
// vector register wider than SSE's (any packed one without AVX).
int PackedOps(int which, uopc_tier t) {
  uopc_ctx *c = uopc_ctx_new(nullptr);
  uopc_compile_opts o{};
  o.tier = t;
  uopc_error e{};
  char *text = uopc_emit_asm(c, Build(c, which, 0), &o, &e);
  if (!text) Die("asm", e.msg);
  bool avx = __builtin_cpu_supports("avx");
  int count = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if ((line.find("mulps") != std::string::npos || line.find("addps") != std::string::npos) &&
        (!avx || line.find("%ymm") != std::string::npos || line.find("%zmm") != std::string::npos))
      count++;
  std::free(text);
  uopc_ctx_free(c);
  return count;
}

int64_t next_idx = 1000;  // a fresh RANGE idx per compile: a new graph every time

void BM_Compile(benchmark::State &state) {
  int which = (int)state.range(0);
  uopc_compile_opts o{};
  o.tier = (uopc_tier)state.range(1);
  std::vector<double> total, graph, compile;
  for (auto _ : state) {
    auto t0 = Clock::now();
    uopc_ctx *c = uopc_ctx_new(nullptr);
    uopc_node *root = Build(c, which, next_idx += 3);
    auto t1 = Clock::now();
    uopc_error e{};
    uopc_kernel *k = uopc_compile(c, root, &o, &e);
    auto t2 = Clock::now();
    if (!k) Die("compile", e.msg);
    state.SetIterationTime(Ms(t0, t2) / 1e3);
    total.push_back(Ms(t0, t2));
    graph.push_back(Ms(t0, t1));
    compile.push_back(Ms(t1, t2));
    uopc_kernel_free(k);
    uopc_ctx_free(c);
  }
  state.counters["median_ms"] = Median(total);
  state.counters["graph_ms"] = Median(graph);
  state.counters["compile_ms"] = Median(compile);
  state.counters["min_ms"] = *std::min_element(total.begin(), total.end());
  int packed = PackedOps(which, o.tier);
  state.counters["packed_ops"] = packed;
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

void BM_Ew16M(benchmark::State &state) {
  const int32_t n = 1 << 24;
  uopc_compile_opts o{};
  o.tier = (uopc_tier)state.range(0);
  HugeBuf out(n), a(n), b(n);
  for (int32_t i = 0; i < n; i++) {
    a.p[i] = (float)(i % 1021) * 0.37f - 50.0f;
    b.p[i] = (float)(i % 997) * 0.011f + 0.5f;
  }
  uopc_ctx *c = uopc_ctx_new(nullptr);
  uopc_error e{};
  uopc_kernel *k = uopc_compile(c, Elementwise(c, n, 0), &o, &e);
  if (!k) Die("compile", e.msg);
  void *bufs[3] = {out.p, a.p, b.p};
  if (uopc_kernel_call(k, bufs, 3, &e) != UOPC_OK) Die("call", e.msg);
  std::vector<float> jit_out(out.p, out.p + n);
  uopc_bench_ew_clang(out.p, a.p, b.p, n);
  if (std::memcmp(jit_out.data(), out.p, (size_t)n * sizeof(float)) != 0) state.SkipWithError("JIT and C results differ");
  std::vector<double> jit_ms, c_ms;
  auto run_jit = [&] {
    auto t0 = Clock::now();
    uopc_kernel_call(k, bufs, 3, &e);
    benchmark::ClobberMemory();
    jit_ms.push_back(Ms(t0, Clock::now()));
  };
  auto run_c = [&] {
    auto t0 = Clock::now();
    uopc_bench_ew_clang(out.p, a.p, b.p, n);
    benchmark::ClobberMemory();
    c_ms.push_back(Ms(t0, Clock::now()));
  };
  for (auto _ : state) {
    if (jit_ms.size() % 2) {
      run_jit();
      run_c();
    } else {
      run_c();
      run_jit();
    }
    state.SetIterationTime(jit_ms.back() / 1e3);
  }
  double jm = Median(jit_ms), cm = Median(c_ms), bytes = 3.0 * sizeof(float) * n;
  std::vector<double> ratios;
  for (size_t i = 0; i < jit_ms.size(); i++) ratios.push_back(c_ms[i] / jit_ms[i]);
  state.counters["jit_ns_per_elem"] = jm * 1e6 / n;
  state.counters["c_ns_per_elem"] = cm * 1e6 / n;
  state.counters["jit_GBps"] = bytes / (jm * 1e6);
  state.counters["c_GBps"] = bytes / (cm * 1e6);
  state.counters["ratio"] = Median(ratios);
  uopc_kernel_free(k);
  uopc_ctx_free(c);
}

// ---- the fuzzer's speed -----------------------------------------------------------

const uopc_fuzz_pair kFuzzPairs[] = {
    {UOPC_OP_ADD, UOPC_DT_F32, UOPC_DT_F32},  {UOPC_OP_MUL, UOPC_DT_I32, UOPC_DT_I32},  {UOPC_OP_CMPLT, UOPC_DT_F32, UOPC_DT_BOOL},
    {UOPC_OP_MAX, UOPC_DT_F32, UOPC_DT_F32},  {UOPC_OP_WHERE, UOPC_DT_I32, UOPC_DT_I32}, {UOPC_OP_CAST, UOPC_DT_I32, UOPC_DT_F32},
    {UOPC_OP_ADD, UOPC_DT_BOOL, UOPC_DT_BOOL}, {UOPC_OP_ADD, UOPC_DT_F16, UOPC_DT_F16},
};

void BM_Fuzz(benchmark::State &state) {
  const uopc_fuzz_pair &p = kFuzzPairs[state.range(0)];
  uopc_fuzz_opts o{};
  o.seed = 1;
  o.count = 10000000;
  uopc_fuzz_stats s{};
  double cases = 0, secs = 0, mism = 0;
  for (auto _ : state) {
    uopc_error e{};
    if (uopc_fuzz_run(&p, &o, &s, &e) != UOPC_OK) Die("fuzz", e.msg);
    state.SetIterationTime(s.seconds);
    cases += (double)(s.cases + s.refused);
    secs += s.seconds;
    mism += (double)s.mismatches;
  }
  char dt[16];
  state.SetLabel(std::string(uopc_op_spelling(p.op)) + " " + uopc_fuzz_dtype_str(&p, dt));
  state.counters["Mcases_per_s"] = cases / secs / 1e6;
  state.counters["mismatches"] = mism;
}

void CompileArgs(benchmark::internal::Benchmark *b) {
  for (int k : {0, 1})
    for (int t : {UOPC_TIER_FAST, UOPC_TIER_STRONG}) b->Args({k, t});
  b->ArgNames({"kernel", "tier"});
}

BENCHMARK(BM_Compile)->Name("compile")->Apply(CompileArgs)->Iterations(20)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ew16M)->Name("ew16M")->Arg(UOPC_TIER_FAST)->Arg(UOPC_TIER_STRONG)->ArgName("tier")->Iterations(40)
    ->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Fuzz)->Name("fuzz")->DenseRange(0, (int)(sizeof kFuzzPairs / sizeof kFuzzPairs[0]) - 1)->ArgName("pair")
    ->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char **argv) {
  uopc_error e{};
#ifdef HAVE_CACHE
  uopc_cache_set_disk(0);
  uopc_cache_set_memory_limit(0, 0);
#endif
  // The first compile of a process pays one-time costs (+2-18 ms): absorb them.
  if (uopi_jit_warm(UOPI_JIT_TIER0, &e) || uopi_jit_warm(UOPI_JIT_TIER2, &e)) Die("warm", e.msg);
  // and uopc_compile's own first-use costs (rule sets, matchers)
  for (uopc_tier t : {UOPC_TIER_FAST, UOPC_TIER_STRONG})
    for (int which : {0, 1}) {
      uopc_ctx *c = uopc_ctx_new(nullptr);
      uopc_compile_opts o{};
      o.tier = t;
      uopc_kernel *k = uopc_compile(c, Build(c, which, next_idx += 3), &o, &e);
      if (!k) Die("warm", e.msg);
      uopc_kernel_free(k);
      uopc_ctx_free(c);
    }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (uopi_compile_shutdown(&e)) Die("shutdown", e.msg);
  return 0;
}
