// bench_plancache: uopc_plan_compile through the plan cache (include/uopc/plan.h),
// for three workloads of bench/data/ (ew16M: 1 kernel, softmax4096: 4,
// attention512: 6):
//
//   plancache/<prog>/hit       the same root compiled again: the key (a walk
//                              over the program) + the lookup
//   plancache/<prog>/hit_new   the program parsed again in a fresh context,
//                              then compiled: a hit too (the key is the
//                              program, not the pointer); parsing not timed
//   plancache/<prog>/miss      plan cache cleared before each compile: the
//                              schedule, then every kernel a kernel-cache
//                              memory hit
//   plancache/<prog>/cold      plan cache and kernel cache (memory; disk off)
//                              cleared: everything compiled by LLVM
//
// Clearing, parsing and uopc_plan_free happen outside the timed part.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "uopc/uopc.h"

namespace {

const char *const kProgs[] = {"ew16M", "softmax4096", "attention512"};
enum Mode { kHit, kHitNew, kMiss, kCold };
const char *const kModeName[] = {"hit", "hit_new", "miss", "cold"};

void Die(const char *what, const char *msg) {
  std::fprintf(stderr, "bench_plancache: %s: %s\n", what, msg);
  std::exit(1);
}

uopc_node *Load(uopc_ctx *c, const char *name) {
  std::string path = std::string(UOPC_BENCH_DATA) + "/" + name + ".uir";
  uopc_error e;
  uopc_node *r = uopc_uir_parse_file(c, path.c_str(), &e);
  if (!r) Die(path.c_str(), e.msg);
  return r;
}

uopc_plan *Compile(uopc_ctx *c, uopc_node *r) {
  uopc_error e;
  uopc_plan *p = uopc_plan_compile(c, r, nullptr, &e);
  if (!p) Die("plan_compile", e.msg);
  return p;
}

void BM_PlanCache(benchmark::State &st, const char *prog, Mode mode) {
  uopc_cache_set_disk(0);
  uopc_ctx *c = uopc_ctx_new(nullptr);
  uopc_node *r = Load(c, prog);
  uopc_plan_free(Compile(c, r));  // warm: engine, kernel cache, plan cache
  for (auto _ : st) {
    uopc_ctx *fresh = nullptr;
    uopc_node *root = r;
    if (mode != kHit) {
      st.PauseTiming();
      if (mode == kMiss || mode == kCold) uopc_plan_cache_clear();
      if (mode == kCold) uopc_cache_clear_memory();
      if (mode == kHitNew) fresh = uopc_ctx_new(nullptr), root = Load(fresh, prog);
      st.ResumeTiming();
    }
    uopc_plan *p = Compile(fresh ? fresh : c, root);
    if (mode == kHit) {  // a reference count less: nothing to pause for
      uopc_plan_free(p);
      continue;
    }
    st.PauseTiming();
    uopc_plan_free(p);
    if (fresh) uopc_ctx_free(fresh);
    st.ResumeTiming();
  }
  uopc_plan_cache_stats s;
  uopc_plan_cache_get_stats(&s);
  st.counters["hits"] = (double)s.hits;
  st.counters["misses"] = (double)s.misses;
  uopc_plan_cache_reset_stats();
  uopc_plan_cache_clear();
  uopc_ctx_free(c);
}

int Register() {
  for (const char *p : kProgs)
    for (Mode m : {kHit, kHitNew, kMiss, kCold}) {
      std::string name = std::string("plancache/") + p + "/" + kModeName[m];
      benchmark::RegisterBenchmark(name.c_str(), BM_PlanCache, p, m)
          ->Unit(benchmark::kMicrosecond)
          ->Iterations(m == kCold ? 5 : m == kHit ? 2000 : 50);
    }
  return 0;
}
const int kRegistered = Register();

}  // namespace

BENCHMARK_MAIN();
