// bench_rewrite.cpp - graph_rewrite cost per visited node (notes/rewrite-speed.md).
//
// Graphs of about 1,000,000 nodes, built once per benchmark; each iteration
// is one graph_rewrite call (a fresh memo).  The goal: under 100 ns per
// visited node with no rules and with one rule.
//
//   chain  a 1,000,000-deep ADD chain: x = x + k, k cycling through 1000
//          distinct i32 constants (1,001,001 nodes)
//   tree   a balanced ADD tree over 500,000 distinct i32 params
//          (999,999 nodes, depth 19): wide, every node used once
//
// Matchers:
//   none     no rules: stage 0 and stage 1 only
//   reject   [add $x 0] -> x: filed under ADD, so it is tried at every ADD,
//            and never matches (chain: the literal compare fails on both
//            orders; tree: the child-op mask rejects it with one AND)
//   decline  [add $x #c] -> fn returning NULL: the chain binds and calls
//            the function at every ADD
//   fires    (add $x #c) -> x: every ADD of the chain rewrites (the memo
//            shortcut: the result is already done); the root becomes p0
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

extern "C" {
#include "uopc/uopc.h"
}

namespace {

double thread_cpu_ns() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

uopc_node *r_keep0(uopc_ctx *, uopc_node *const *b, void *) { return b[0]; }
uopc_node *r_decline(uopc_ctx *, uopc_node *const *, void *) { return nullptr; }

enum Rules { kNone, kReject, kDecline, kFires };
enum Shape { kChain, kTree };

uopc_matcher *make_matcher(Rules r) {
  uopc_rule rules[1];
  switch (r) {
  case kNone: return uopc_matcher_new(nullptr, 0, nullptr);
  case kReject: rules[0] = {"[add $x 0]", r_keep0, "x+0"}; break;
  case kDecline: rules[0] = {"[add $x #c]", r_decline, "x+c"}; break;
  case kFires: rules[0] = {"(add $x #c)", r_keep0, "x+c -> x"}; break;
  }
  return uopc_matcher_new(rules, 1, nullptr);
}

uopc_node *build(uopc_ctx *c, Shape s) {
  if (s == kChain) {
    uopc_node *k[1000];
    for (int i = 0; i < 1000; i++) k[i] = uopc_const_i(c, UOPC_DT_I32, i + 1);
    uopc_node *x = uopc_param(c, 0, UOPC_DT_I32, nullptr, 0);
    for (int i = 0; i < 1000000 && x; i++) x = uopc_add(c, x, k[i % 1000]);
    return x;
  }
  const uint32_t leaves = 500000;
  uopc_node **level = static_cast<uopc_node **>(malloc(leaves * sizeof(uopc_node *)));
  if (!level) return nullptr;
  for (uint32_t i = 0; i < leaves; i++) level[i] = uopc_param(c, i, UOPC_DT_I32, nullptr, 0);
  uint32_t n = leaves;
  while (n > 1) {
    uint32_t m = 0;
    for (uint32_t i = 0; i + 1 < n; i += 2) level[m++] = uopc_add(c, level[i], level[i + 1]);
    if (n % 2) level[m++] = level[n - 1];
    n = m;
  }
  uopc_node *root = level[0];
  free(level);
  return root;
}

void BM_GraphRewrite(benchmark::State &state) {
  Shape shape = static_cast<Shape>(state.range(0));
  Rules rules = static_cast<Rules>(state.range(1));
  uopc_ctx *c = uopc_ctx_new(nullptr);
  uopc_ctx_set_check(c, 0);
  uopc_ctx_set_trace(c, nullptr);
  uopc_node *root = build(c, shape);
  uopc_matcher *m = make_matcher(rules);
  if (!root || !m) {
    state.SkipWithError("setup failed");
    uopc_matcher_free(m);
    uopc_ctx_free(c);
    return;
  }
  uint32_t nodes = uopc_graph_size(c, root);
  uopc_node *want = rules == kFires ? uopc_param(c, 0, UOPC_DT_I32, nullptr, 0) : root;
  uopc_graph_rewrite(c, root, m, nullptr, 0);  // warm up: page in the memo table
  double cpu_ns = 0;
  for (auto _ : state) {
    double t0 = thread_cpu_ns();
    uopc_node *r = uopc_graph_rewrite(c, root, m, nullptr, 0);
    cpu_ns += thread_cpu_ns() - t0;
    if (r != want) {
      state.SkipWithError(uopc_ctx_error(c) ? uopc_ctx_error(c)->msg : "unexpected result");
      break;
    }
    benchmark::DoNotOptimize(r);
  }
  state.counters["nodes"] = nodes;
  // CPU time of this thread per visited node (the machine is shared: wall
  // time includes other people's builds)
  if (state.iterations())
    state.counters["ns_per_node"] = cpu_ns / (static_cast<double>(nodes) * static_cast<double>(state.iterations()));
  uopc_matcher_free(m);
  uopc_ctx_free(c);
}

void Args(benchmark::internal::Benchmark *b) {
  b->ArgNames({"shape", "rules"});
  for (int s : {kChain, kTree})
    for (int r : {kNone, kReject, kDecline, kFires}) {
      if (s == kTree && r == kFires) continue;  // the tree has no constants
      b->Args({s, r});
    }
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_GraphRewrite)->Apply(Args);

}  // namespace

BENCHMARK_MAIN();
