// bench_compile: compile latency against call time, the fifth item of issue
// 12 ("compile latency stays within the JIT's goals, < 2 ms for a small
// kernel, or a slower pipeline is chosen only where it pays back within one
// call at the benchmark size").
//
//   bench_compile [--reps N] [--only NAME[,NAME...]] [--threads T]
//
// For each workload of bench/data/ (ew16M, sum16M, matmul1024, attention512,
// softmax4096), strict and fast mode, on one thread (T threads with
// --threads: the plan's kernels are split for T threads and compiled on T
// threads, lib/compile.h uopi_compile_kernels), the plan is compiled
// with its default loop passes and with none (UOPC_COMPILE_NO_REORDER |
// UOPC_COMPILE_NO_UPCAST), the kernel and plan caches off so that every
// compile is real: N compiles (default 3) and N calls of the last plan
// (after one untimed call), medians and min-max.  A row says how many kernels
// the plan has, the compile per kernel, and "one call" = compile + call: the
// default passes pay back within one call where their one call is shorter
// than the one without them (where the two plans' IR is the same, the
// passes change nothing and the difference is noise).  UOPC_DEBUG=cache names each kernel's compile
// time and JIT tier on stderr.  The first compile of the process, which also
// starts the JIT engine, is made before and not counted.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "timing.h"
#include "uopc/uopc.h"

namespace {

struct Row {
  double compile, call;  // medians, ms
  Stats cs, ks;          // compile and call: median, min, max
  uint32_t kernels;
};

std::string ReadFile(const std::string &path) {
  std::ifstream f(path);
  if (!f) fprintf(stderr, "bench_compile: cannot read %s\n", path.c_str()), std::exit(2);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

[[noreturn]] void Die(const char *what, const char *msg) {
  fprintf(stderr, "bench_compile: %s: %s\n", what, msg);
  std::exit(1);
}

// The LLVM IR of the plan of text with flags (one thread), kernel names
// blanked: equal for two flag sets when the passes change nothing.
std::string PlanIr(const std::string &name, const std::string &text, unsigned flags) {
  uopc_ctx *c = uopc_ctx_new(nullptr);
  uopc_error e;
  uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), name.c_str(), &e);
  uopc_compile_opts o = {UOPC_TIER_FAST, flags, 1};
  char *ir = root ? uopc_plan_emit(c, root, &o, 0, &e) : nullptr;
  if (!ir) Die(name.c_str(), e.msg);
  std::string s = std::regex_replace(std::string(ir), std::regex("uopc_k[A-Za-z0-9_]*"), "K");
  free(ir);
  uopc_ctx_free(c);
  return s;
}

// Compiles text `reps` times with flags for `threads` threads, then calls the last plan.
Row Measure(const std::string &name, const std::string &text, unsigned flags, int reps, uint32_t threads) {
  Row r{};
  std::vector<double> comp, call;
  for (int rep = 0; rep < reps; rep++) {
    uopc_cache_clear_memory();
    uopc_ctx *c = uopc_ctx_new(nullptr);
    uopc_error e;
    uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), name.c_str(), &e);
    if (!root) Die(name.c_str(), e.msg);
    uopc_compile_opts o = {UOPC_TIER_FAST, flags, threads};
    auto t0 = Clock::now();
    uopc_plan *p = uopc_plan_compile(c, root, &o, &e);
    comp.push_back(Ms(t0, Clock::now()));
    if (!p) Die(name.c_str(), e.msg);
    r.kernels = uopc_plan_nkernels(p);
    if (rep == reps - 1) {
      uint32_t nin = uopc_plan_nargs(p);
      std::vector<std::vector<float>> in(nin);
      std::vector<uopc_tensor> args(nin);
      for (uint32_t i = 0; i < nin; i++) {
        uopc_dtype dt;
        uint32_t nd;
        const int64_t *sh;
        uopc_plan_arg(p, i, &dt, &nd, &sh);
        int64_t n = 1;
        for (uint32_t k = 0; k < nd; k++) n *= sh[k];
        in[i].resize((size_t)n);
        for (size_t k = 0; k < in[i].size(); k++) in[i][k] = (float)((k * 2654435761u) % 1000) / 1000.0f;
        args[i] = {in[i].data(), UOPC_DT_F32, nd, sh};
      }
      uopc_dtype dt;
      uint32_t nd;
      const int64_t *sh;
      uopc_plan_result(p, &dt, &nd, &sh);
      int64_t n = 1;
      for (uint32_t k = 0; k < nd; k++) n *= sh[k];
      // 64-byte aligned, as bench_throughput's and the C references': the result's streaming stores need it
      std::unique_ptr<float, decltype(&free)> out((float *)aligned_alloc(64, ((size_t)n * 4 + 63) / 64 * 64), &free);
      if (!out) Die(name.c_str(), "out of memory");
      memset(out.get(), 0, (size_t)n * 4);
      uopc_tensor ot = {out.get(), UOPC_DT_F32, nd, sh};
      for (int k = 0; k <= reps; k++) {  // k = 0: the untimed first call (page faults)
        auto c0 = Clock::now();
        if (uopc_plan_call(p, args.data(), nin, &ot, &e) != UOPC_OK) Die(name.c_str(), e.msg);
        if (k) call.push_back(Ms(c0, Clock::now()));
      }
    }
    uopc_plan_free(p);
    uopc_ctx_free(c);
  }
  r.cs = Of(comp), r.ks = Of(call);
  r.compile = r.cs.med, r.call = r.ks.med;
  return r;
}

}  // namespace

int main(int argc, char **argv) {
  int reps = 3;
  uint32_t threads = 1;
  std::string only;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = (uint32_t)atoi(argv[++i]);
    else return fprintf(stderr, "usage: %s [--reps N] [--only NAME[,NAME...]] [--threads T]\n", argv[0]), 2;
  }
  if (reps < 1) reps = 1;
  if (threads < 1) threads = 1;
  uopc_plan_cache_set_limit(0, 0);
  uopc_cache_set_disk(0);
  {  // the JIT engine starts with the first compile of the process: not counted
    static const char warm[] = "%A = param : slot=0 dtype=f32 shape=(64,)\n%o = add %A, %A\n";
    uopc_ctx *c = uopc_ctx_new(nullptr);
    uopc_error e;
    uopc_node *root = uopc_uir_parse(c, warm, sizeof warm - 1, "warm-up", &e);
    uopc_plan *p = root ? uopc_plan_compile(c, root, nullptr, &e) : nullptr;
    if (!p) Die("warm-up", e.msg);
    uopc_plan_free(p);
    uopc_ctx_free(c);
  }
  printf("%-13s %-6s %-9s %7s %22s %9s %22s %10s\n", "workload", "mode", "passes", "kernels", "compile ms (min-max)",
         "per kernel", "call ms (min-max)", "one call");
  for (const char *w : {"ew16M", "sum16M", "matmul1024", "attention512", "softmax4096"}) {
    if (!only.empty() && ("," + only + ",").find(std::string(",") + w + ",") == std::string::npos) continue;
    std::string text = ReadFile(std::string(UOPC_BENCH_DATA) + "/" + w + ".uir");
    for (unsigned mode : {0u, (unsigned)UOPC_COMPILE_FAST_MATH}) {
      double one[2];
      const bool same = PlanIr(w, text, mode) == PlanIr(w, text, mode | UOPC_COMPILE_NO_REORDER | UOPC_COMPILE_NO_UPCAST);
      for (int none = 0; none < 2; none++) {
        unsigned flags = mode | (none ? UOPC_COMPILE_NO_REORDER | UOPC_COMPILE_NO_UPCAST : 0u);
        Row r = Measure(w, text, flags, reps, threads);
        one[none] = r.compile + r.call;
        char cm[48], km[48];
        snprintf(cm, sizeof cm, "%.2f (%.2f-%.2f)", r.compile, r.cs.min, r.cs.max);
        snprintf(km, sizeof km, "%.3f (%.3f-%.3f)", r.call, r.ks.min, r.ks.max);
        printf("%-13s %-6s %-9s %7u %22s %9.2f %22s %10.2f%s\n", w, mode ? "fast" : "strict", none ? "none" : "default",
               r.kernels, cm, r.compile / r.kernels, km, one[none],
               !none ? ""
               : same         ? "  the passes change nothing here"
               : one[0] <= one[1] ? "  the passes pay back within one call"
                                  : "  the passes pay back only after one call");
        fflush(stdout);
      }
    }
  }
  return 0;
}
