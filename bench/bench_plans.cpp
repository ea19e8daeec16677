// bench_plans: tensor programs compiled to plans, side by side with C loops
// that use the same ops in the same order (bench/plan_ref.c, compiled by
// clang-19 -O3 -march=native -ffp-contract=off), in one run.
//
//   bench_plans [--reps N] [--tier fast|strong] [--only NAME] [--fast-math]
//
// For each workload of bench/data/ (ew16M, sum16M, sum4096x4096, matmul1024,
// softmax4096, attention512): the plan's compile time (with the kernel cache
// off), then N calls of the plan and N of the C loop, alternating, on the
// same inputs (2 MiB aligned, MADV_HUGEPAGE); prints the median, min and max
// of each, the ratio C / plan of the medians (>= 1: the plan is as fast),
// and whether the outputs are bit-identical.
//
// --fast-math: each workload also as a plan compiled with
// UOPC_COMPILE_FAST_MATH (docs/fast-math.md), called in the same rounds (strict
// plan, fast plan, C loop); its row ("NAME fast") compares it with the strict
// C loop, except sum16M's, which compares it with the fast C loop of
// bench/ref_fast.c (clang-19 -O3 -march=native -ffast-math), and gives the
// error of its output against the strict plan's: the relative error of a
// sum, the largest absolute difference of an array.
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
float ref_fast_sum(const float *a, long n);
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
  bool fast = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--fast-math")) fast = true;
    else if (i + 1 < argc && !strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--tier")) tier = strcmp(argv[++i], "strong") ? UOPC_TIER_FAST : UOPC_TIER_STRONG;
    else if (i + 1 < argc && !strcmp(argv[i], "--only")) only = argv[++i];
    else return fprintf(stderr, "usage: %s [--reps N] [--tier fast|strong] [--only NAME] [--fast-math]\n", argv[0]), 2;
  }
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
    uopc_compile_opts o = {tier};
    auto t0 = Clock::now();
    uopc_plan *p = uopc_plan_compile(c, root, &o, &e);
    double compile_ms = Ms(t0, Clock::now());
    if (!p) return fprintf(stderr, "%s: %s\n", w.name, e.msg), 1;
    uopc_plan *pf = nullptr;
    double fast_compile_ms = 0;
    if (fast) {
      uopc_compile_opts of = {tier, UOPC_COMPILE_FAST_MATH, 0};
      auto f0 = Clock::now();
      pf = uopc_plan_compile(c, root, &of, &e);
      fast_compile_ms = Ms(f0, Clock::now());
      if (!pf) return fprintf(stderr, "%s fast: %s\n", w.name, e.msg), 1;
    }
    std::vector<float *> in;
    std::vector<uopc_tensor> args;
    for (size_t k = 0; k < w.in.size(); k++) {
      in.push_back(Alloc((size_t)Numel(w.in[k])));
      Fill(in.back(), (size_t)Numel(w.in[k]), 17 + (uint32_t)k, 4.0f);
    }
    for (size_t k = 0; k < w.in.size(); k++)
      args.push_back({in[k], UOPC_DT_F32, (uint32_t)w.in[k].size(), w.in[k].data()});
    size_t nout = (size_t)Numel(w.out);
    float *out = Alloc(nout), *want = Alloc(nout), *fout = Alloc(nout);
    uopc_tensor ot = {out, UOPC_DT_F32, (uint32_t)w.out.size(), w.out.empty() ? nullptr : w.out.data()};
    uopc_tensor ft = {fout, UOPC_DT_F32, (uint32_t)w.out.size(), w.out.empty() ? nullptr : w.out.data()};
    bool is_sum16M = !strcmp(w.name, "sum16M");
    std::vector<double> tp, tc, tf, tcf;
    float fast_c_sum = 0;
    for (int r = 0; r < n_reps + 1; r++) {  // the first pair warms up
      auto a = Clock::now();
      if (uopc_plan_call(p, args.data(), (uint32_t)args.size(), &ot, &e) != UOPC_OK)
        return fprintf(stderr, "%s: %s\n", w.name, e.msg), 1;
      auto b = Clock::now();
      w.ref(in.data(), want);
      auto d = Clock::now();
      if (r) tp.push_back(Ms(a, b)), tc.push_back(Ms(b, d));
      if (!pf) continue;
      auto f0 = Clock::now();
      if (uopc_plan_call(pf, args.data(), (uint32_t)args.size(), &ft, &e) != UOPC_OK)
        return fprintf(stderr, "%s fast: %s\n", w.name, e.msg), 1;
      auto f1 = Clock::now();
      if (is_sum16M) fast_c_sum = ref_fast_sum(in[0], M);
      auto f2 = Clock::now();
      if (r) tf.push_back(Ms(f0, f1)), tcf.push_back(Ms(f1, f2));
    }
    bool same = memcmp(out, want, nout * sizeof(float)) == 0;
    bad += !same;
    Stats sp = Of(tp), sc = Of(tc);
    double rate = w.flops_or_bytes / (sp.med * 1e6);
    char r1[64], r2[64];
    snprintf(r1, sizeof r1, "(%.2f-%.2f)", sp.min, sp.max);
    snprintf(r2, sizeof r2, "(%.2f-%.2f)", sc.min, sc.max);
    printf("%-14s %8.1fms %10.2fms %18s %10.2fms %18s %8.3f %6.1f %s  %s\n", w.name, compile_ms, sp.med, r1, sc.med, r2,
           sc.med / sp.med, rate, w.unit, same ? "bit-identical" : "DIFFER");
    if (pf) {
      Stats sf = Of(tf), scf = is_sum16M ? Of(tcf) : sc;
      double err = 0;  // a sum: relative to the strict plan's; an array: the largest absolute difference
      if (nout == 1) err = std::fabs((double)fout[0] - out[0]) / std::fabs((double)out[0]);
      double big = 0;  // the largest |strict output|, for scale
      for (size_t i = 0; nout > 1 && i < nout; i++)
        err = std::max(err, std::fabs((double)fout[i] - out[i])), big = std::max(big, std::fabs((double)out[i]));
      snprintf(r1, sizeof r1, "(%.2f-%.2f)", sf.min, sf.max);
      snprintf(r2, sizeof r2, "(%.2f-%.2f)", scf.min, scf.max);
      char name[32];
      snprintf(name, sizeof name, "%s fast", w.name);
      printf("%-14s %8.1fms %10.2fms %18s %10.2fms %18s %8.3f %6.1f %s  %s %.3g vs strict; strict/fast %.3f%s\n", name,
             fast_compile_ms, sf.med, r1, scf.med, r2, scf.med / sf.med, w.flops_or_bytes / (sf.med * 1e6), w.unit,
             nout == 1 ? "rel. error" : "max abs error", err, sp.med / sf.med,
             is_sum16M ? " (C: -ffast-math loop)" : "");
      if (nout > 1) printf("%-14s largest |strict output| %.6g\n", "", big);
      if (nout == 1) {  // a sum: both against the exact sum (in double, exact enough for 16M values of 2^-13 steps)
        double exact = 0;
        for (int64_t i = 0; i < Numel(w.in[0]); i++) exact += in[0][i];
        printf("%-14s exact %.9g: strict plan %.9g (rel. error %.3g), fast plan %.9g (%.3g)", "", exact, out[0],
               std::fabs(out[0] - exact) / std::fabs(exact), fout[0], std::fabs(fout[0] - exact) / std::fabs(exact));
        if (is_sum16M) printf(", fast C loop %.9g (%.3g)", fast_c_sum, std::fabs(fast_c_sum - exact) / std::fabs(exact));
        printf("\n");
      }
      uopc_plan_free(pf);
    }
    fflush(stdout);
    free(fout);
    uopc_plan_free(p);
    for (float *x : in) free(x);
    free(out);
    free(want);
    uopc_ctx_free(c);
  }
  return bad ? 1 : 0;
}
