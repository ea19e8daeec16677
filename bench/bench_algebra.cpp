// Issue 3's figures, side by side with the seed's printed Python figures, on
// the seed's own graphs (bench/data/*.uir):
//   run(a*b+a) for n = 10, 100, 1000      seed: 17 ms, 48 ms, 141 ms
//   the 46-node simplify of section 3.7   seed: 8.4 ms graph_rewrite, 7.3 ms simplify #1, 3 us #2
// Each iteration uses a fresh context (parsing excluded), as the seed's first call.
// The counter "x_seed" is the speedup over the seed's figure.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" {
#include "uopc/uopc.h"
}

static uopc_node *load(uopc_ctx *c, const std::string &name) {
  std::string path = std::string(UOPC_BENCH_DATA) + "/" + name;
  uopc_error e{};
  uopc_node *r = uopc_uir_parse_file(c, path.c_str(), &e);
  if (!r) {
    fprintf(stderr, "%s:%d:%d: %s\n", path.c_str(), e.line, e.col, e.msg);
    exit(1);
  }
  return r;
}

using Clock = std::chrono::steady_clock;

// Times one call with the manual clock; returns seconds.
template <class F> static double timed(benchmark::State &st, F f) {
  auto t0 = Clock::now();
  f();
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  st.SetIterationTime(s);
  return s;
}

static void report(benchmark::State &st, double seed_seconds, double total_seconds) {
  st.counters["x_seed"] = seed_seconds / (total_seconds / (double)st.iterations());  // seed time / our time
}

static void BM_Run(benchmark::State &st) {
  const int n = (int)st.range(0);
  const double seed_ms = n == 10 ? 17.35 : n == 100 ? 47.65 : 141.11;
  double total = 0;
  for (auto _ : st) {
    uopc_ctx *c = uopc_ctx_new(nullptr);
    uopc_node *p = load(c, "run_abn" + std::to_string(n) + ".uir");
    uopc_node *v = nullptr;
    total += timed(st, [&] { v = uopc_run_value(c, p); });
    if (!v) st.SkipWithError(uopc_ctx_error(c)->msg);
    benchmark::DoNotOptimize(v);
    uopc_ctx_free(c);
  }
  report(st, seed_ms / 1e3, total);
}
// fixed iteration counts: setup (parse, warm-up) is outside the manual clock and would otherwise dominate
BENCHMARK(BM_Run)->Arg(10)->Arg(100)->Arg(1000)->Iterations(300)->UseManualTime()->Unit(benchmark::kMicrosecond);

// 0: graph_rewrite (cold bounds), 1: simplify #1 (after a graph_rewrite warmed bounds), 2: simplify #2
static void BM_Simplify46(benchmark::State &st) {
  const int which = (int)st.range(0);
  const double seed_s = which == 0 ? 8.4e-3 : which == 1 ? 7.329e-3 : 3e-6;
  uint32_t before = 0, after = 0;
  double total = 0;
  for (auto _ : st) {
    uopc_ctx *c = uopc_ctx_new(nullptr);
    uopc_node *e = load(c, "simplify46.uir");
    if (which >= 1) uopc_graph_rewrite(c, e, uopc_rules_symbolic(), nullptr, 0);
    if (which == 2) uopc_simplify(c, e);
    uopc_node *r = nullptr;
    if (which == 2) {  // a memoized call takes a few ns, under the clock's resolution: time 1000 of them
      auto t0 = Clock::now();
      for (int k = 0; k < 1000; k++) benchmark::DoNotOptimize(r = uopc_simplify(c, e));
      double s = std::chrono::duration<double>(Clock::now() - t0).count();
      st.SetIterationTime(s / 1000);
      total += s / 1000;
    } else {
      total += timed(st, [&] {
        r = which == 0 ? uopc_graph_rewrite(c, e, uopc_rules_symbolic(), nullptr, 0) : uopc_simplify(c, e);
      });
    }
    benchmark::DoNotOptimize(r);
    before = uopc_graph_size(c, e);
    after = r ? uopc_graph_size(c, r) : 0;
    uopc_ctx_free(c);
  }
  st.counters["nodes_before"] = before;
  st.counters["nodes_after"] = after;
  report(st, seed_s, total);
}
BENCHMARK(BM_Simplify46)->Arg(0)->Arg(1)->Arg(2)->Iterations(1000)->UseManualTime()->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
