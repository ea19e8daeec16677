// bench_plans: tensor programs compiled to plans, side by side with C loops
// that use the same ops in the same order (bench/plan_ref.c, compiled by
// clang-19 -O3 -march=native -ffp-contract=off), in one run.
//
//   bench_plans [--reps N] [--tier fast|strong] [--only NAME] [--threads N[,N...]]
//
// For each workload of bench/data/ (ew16M, sum16M, sum4096x4096, matmul1024,
// softmax4096, attention512): the plan's compile time (with the kernel cache
// off), then N calls of the plan and N of the C loop, alternating, on the
// same inputs (2 MiB aligned, MADV_HUGEPAGE); prints the median, min and max
// of each, the ratio C / plan of the medians (>= 1: the plan is as fast),
// and whether the outputs are bit-identical.  --threads 1,2 compiles one
// plan per thread count (uopc_compile_opts.threads, in that order) and
// alternates their calls with the C loop's, one row each ("NAME/tN"): a
// later plan's compile time is then what its chunk kernels add (the whole
// kernels come from the kernel cache in memory).  Default: one plan on one
// thread (the figures before threads, comparable with the C loops).
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "timing.h"
#include "uopc/uopc.h"

extern "C" {
void ref_ew(float *o, const float *a, const float *b, long n);
float ref_sum(const float *a, long n);
void ref_matmul_ijk(float *c, const float *a, const float *b, long n);
void ref_matmul_ikj(float *c, const float *a, const float *b, long n);
void ref_softmax(float *y, float *e, const float *x, long rows, long n);
void ref_attention(float *o, float *s, float *p, const float *q, const float *k, const float *v, long n, long d);
}

namespace {

float *Alloc(size_t n) {
  size_t bytes = (n * sizeof(float) + (2u << 20) - 1) & ~((size_t)(2u << 20) - 1);
  void *p = aligned_alloc(2u << 20, bytes);
  if (!p) std::exit(2);
  madvise(p, bytes, MADV_HUGEPAGE);
  std::memset(p, 0, bytes);
  return static_cast<float *>(p);
}

void Fill(float *a, size_t n, uint32_t seed, float scale) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    a[i] = ((int32_t)(seed >> 8) % 20001 - 10000) / 10000.0f * scale;
  }
}

struct Work {
  const char *name, *file;
  std::vector<std::vector<int64_t>> in;  // input shapes
  std::vector<int64_t> out;              // output shape
  double flops_or_bytes;                 // per call, for the rate column
  const char *unit;                      // "GB/s" or "GFLOP/s"
  std::function<void(float *const *in, float *out)> ref;
  int reps;
};

int64_t Numel(const std::vector<int64_t> &s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

}  // namespace

int main(int argc, char **argv) {
  int reps = 0;
  uopc_tier tier = UOPC_TIER_FAST;
  const char *only = nullptr;
  std::vector<uint32_t> threads;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--tier")) tier = strcmp(argv[i + 1], "strong") ? UOPC_TIER_FAST : UOPC_TIER_STRONG;
    else if (!strcmp(argv[i], "--only")) only = argv[i + 1];
    else if (!strcmp(argv[i], "--threads")) {
      for (const char *t = argv[i + 1]; *t;) {
        char *end;
        long v = strtol(t, &end, 10);
        if (end == t || v < 1 || v > 64) return fprintf(stderr, "--threads: counts from 1 to 64, comma-separated\n"), 2;
        threads.push_back((uint32_t)v);
        t = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return fprintf(stderr, "--threads: counts from 1 to 64, comma-separated\n"), 2;
      }
    } else return fprintf(stderr, "usage: %s [--reps N] [--tier fast|strong] [--only NAME] [--threads N[,N...]]\n", argv[0]), 2;
  }
  bool named = !threads.empty();
  if (threads.empty()) threads.push_back(1);  // the figures of issue 12 are one thread's unless asked
  setenv("UOPC_CACHE", "0", 1);  // compile times are real compiles
  static float scratch_e[4096 * 4096];
  static float scratch_s[512 * 512], scratch_p[512 * 512];
  const long M = 1 << 24;
  std::vector<Work> works = {
      {"ew16M", "ew16M.uir", {{M}, {M}}, {M}, 12.0 * M, "GB/s",
       [](float *const *in, float *o) { ref_ew(o, in[0], in[1], M); }, 21},
      {"sum16M", "sum16M.uir", {{M}}, {}, 4.0 * M, "GB/s", [](float *const *in, float *o) { *o = ref_sum(in[0], M); }, 21},
      {"sum4096x4096", "sum4096x4096.uir", {{4096, 4096}}, {}, 4.0 * M, "GB/s",
       [](float *const *in, float *o) { *o = ref_sum(in[0], M); }, 21},
      {"matmul1024", "matmul1024.uir", {{1024, 1024}, {1024, 1024}}, {1024, 1024}, 2.0 * 1024 * 1024 * 1024, "GFLOP/s",
       [](float *const *in, float *o) { ref_matmul_ijk(o, in[0], in[1], 1024); }, 3},
      {"softmax4096", "softmax4096.uir", {{4096, 4096}}, {4096, 4096}, 8.0 * M, "GB/s",
       [](float *const *in, float *o) { ref_softmax(o, scratch_e, in[0], 4096, 4096); }, 5},
      {"attention512", "attention512.uir", {{512, 64}, {512, 64}, {512, 64}}, {512, 64}, 4.0 * 512 * 512 * 64, "GFLOP/s",
       [](float *const *in, float *o) { ref_attention(o, scratch_s, scratch_p, in[0], in[1], in[2], 512, 64); }, 11},
  };
  printf("%-14s %10s %12s %18s %12s %18s %8s %10s  %s\n", "workload", "compile", "plan median", "(min-max) ms",
         "C median", "(min-max) ms", "C/plan", "plan rate", "outputs");
  int bad = 0;
  for (Work &w : works) {
    if (only && strcmp(only, w.name)) continue;
    int n_reps = reps ? reps : w.reps;
    uopc_ctx *c = uopc_ctx_new(nullptr);
    uopc_error e;
    std::string path = std::string(UOPC_BENCH_DATA) + "/" + w.file;
    uopc_node *root = uopc_uir_parse_file(c, path.c_str(), &e);
    if (!root) return fprintf(stderr, "%s: %s\n", path.c_str(), e.msg), 1;
    std::vector<uopc_plan *> plans;
    std::vector<double> compile_ms;
    for (uint32_t t : threads) {
      uopc_compile_opts o = {tier, 0, t};
      auto t0 = Clock::now();
      uopc_plan *p = uopc_plan_compile(c, root, &o, &e);
      compile_ms.push_back(Ms(t0, Clock::now()));
      if (!p) return fprintf(stderr, "%s: %s\n", w.name, e.msg), 1;
      plans.push_back(p);
    }
    size_t np = plans.size();
    std::vector<float *> in;
    std::vector<uopc_tensor> args;
    for (size_t k = 0; k < w.in.size(); k++) {
      in.push_back(Alloc((size_t)Numel(w.in[k])));
      Fill(in.back(), (size_t)Numel(w.in[k]), 17 + (uint32_t)k, 4.0f);
    }
    for (size_t k = 0; k < w.in.size(); k++)
      args.push_back({in[k], UOPC_DT_F32, (uint32_t)w.in[k].size(), w.in[k].data()});
    size_t nout = (size_t)Numel(w.out);
    float *want = Alloc(nout);
    std::vector<float *> outs;
    for (size_t k = 0; k < np; k++) outs.push_back(Alloc(nout));
    std::vector<std::vector<double>> tp(np);
    std::vector<double> tc;
    for (int r = 0; r < n_reps + 1; r++) {  // the first round warms up
      for (size_t k = 0; k < np; k++) {
        uopc_tensor ot = {outs[k], UOPC_DT_F32, (uint32_t)w.out.size(), w.out.empty() ? nullptr : w.out.data()};
        auto a = Clock::now();
        if (uopc_plan_call(plans[k], args.data(), (uint32_t)args.size(), &ot, &e) != UOPC_OK)
          return fprintf(stderr, "%s: %s\n", w.name, e.msg), 1;
        if (r) tp[k].push_back(Ms(a, Clock::now()));
      }
      auto b = Clock::now();
      w.ref(in.data(), want);
      auto d = Clock::now();
      if (r) tc.push_back(Ms(b, d));
    }
    Stats sc = Of(tc);
    for (size_t k = 0; k < np; k++) {
      bool same = memcmp(outs[k], want, nout * sizeof(float)) == 0;
      bad += !same;
      Stats sp = Of(tp[k]);
      double rate = w.flops_or_bytes / (sp.med * 1e6);
      char r1[64], r2[64], name[64];
      snprintf(r1, sizeof r1, "(%.2f-%.2f)", sp.min, sp.max);
      snprintf(r2, sizeof r2, "(%.2f-%.2f)", sc.min, sc.max);
      if (named) snprintf(name, sizeof name, "%s/t%u", w.name, uopc_plan_threads(plans[k]));
      else snprintf(name, sizeof name, "%s", w.name);
      printf("%-14s %8.1fms %10.2fms %18s %10.2fms %18s %8.3f %6.1f %s  %s  (%u of %u kernels split)\n", name,
             compile_ms[k], sp.med, r1, sc.med, r2, sc.med / sp.med, rate, w.unit, same ? "bit-identical" : "DIFFER",
             uopc_plan_nsplit(plans[k]), uopc_plan_nkernels(plans[k]));
      fflush(stdout);
    }
    for (uopc_plan *p : plans) uopc_plan_free(p);
    for (float *x : outs) free(x);
    for (float *x : in) free(x);
    free(want);
    uopc_ctx_free(c);
  }
  return bad ? 1 : 0;
}
