// bench_throughput: issue 12's throughput table in one run, every workload
// through uopc and through its reference, side by side (docs/bench.md).
//
//   bench_throughput [--reps N] [--smoke] [--out DIR] [--only NAME[,NAME...]] [--tier fast|strong]
//
// Workloads: the machine's limits (STREAM triad 1 / 2 threads, plain and
// streaming stores; the FMA peak 1 / 2 threads), then each plan of
// bench/data/ (ew16M, sum16M, matmul1024, attention512, softmax4096) in
// four variants: strict and fast mode (UOPC_COMPILE_FAST_MATH), each on 1
// and 2 threads (uopc_compile_opts.threads; attention also with the
// UOPC_COMPILE_HOT opt-in, ew16M and softmax also without streaming stores,
// UOPC_COMPILE_NO_STREAM; ew16M beside the plain and the streaming triad),
// against its references (C
// loops compiled by clang-19 at build time, OpenBLAS sgemm where installed).
// Each variant is compiled (kernel and plan caches off), called once to warm
// up, then N rounds of one uopc call followed by one call of each reference,
// so a noisy neighbour slows both sides alike (N: --reps, else per workload,
// fewer but at least 3 when the rounds of one group would pass 15 s).  Prints one table (medians,
// min-max, the ratio reference / uopc, the rate, the target and
// PASS/short) and writes it as TSV to DIR/bench.tsv (default bench-results/)
// for bench/plot_ratios.py.  Strict outputs must be bit-identical to the C
// reference with the same op order (exit status 1 otherwise); fast outputs
// are shown with their max relative error against strict.
//
// --smoke: small sizes and one round (the ctest bench_smoke), to keep the
// harness working; its figures mean nothing.
//
// OpenBLAS (bench/ref_openblas.c): sgemm probes, in this process and in
// children with OPENBLAS_CORETYPE set to each core the CPU can run, decide
// which core is fastest, and the benchmark re-executes itself with it (the
// variable is read when the library loads; a caller's OPENBLAS_CORETYPE is
// one of the candidates, not a choice); it also sets OPENBLAS_THREAD_TIMEOUT=4 so that OpenBLAS's
// idle worker sleeps at once instead of spinning into the next uopc call.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "refs.h"
#include "timing.h"
#include "uopc/uopc.h"

extern "C" {
void ref_ew(float *o, const float *a, const float *b, long n);
float ref_sum(const float *a, long n);
void ref_matmul_ikj_seq(float *c, const float *a, const float *b, long n);
void ref_softmax(float *y, float *e, const float *x, long rows, long n);
void ref_attention(float *o, float *s, float *p, const float *q, const float *k, const float *v, long n, long d);
}

namespace {

// ---- memory and inputs -------------------------------------------------------

// n floats, 2 MiB aligned, with huge pages asked for (bandwidth is 25-50%
// lower without them), zeroed so that every page is touched before timing.
float *Alloc(size_t n) {
  size_t bytes = (n * sizeof(float) + (2u << 20) - 1) & ~((size_t)(2u << 20) - 1);
  if (!bytes) bytes = 2u << 20;
  void *p = aligned_alloc(2u << 20, bytes);
  if (!p) std::fprintf(stderr, "bench_throughput: out of memory (%zu bytes)\n", bytes), std::exit(2);
  madvise(p, bytes, MADV_HUGEPAGE);
  std::memset(p, 0, bytes);
  return static_cast<float *>(p);
}

// bench_plans' inputs: multiples of 1/10000 in [-scale, scale].
void Fill(float *a, size_t n, uint32_t seed, float scale) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    a[i] = ((int32_t)(seed >> 8) % 20001 - 10000) / 10000.0f * scale;
  }
}

// ---- what a row compares -----------------------------------------------------

// The acceptance target of one row: uopc at least `v` times the
// reference's speed (RATIO), or uopc's median at most `v` ms (MS).
struct Target {
  enum Kind { NONE, RATIO, MS } kind = NONE;
  double v = 0;
  const char *label = "";
};
Target AtLeast(double x, const char *label) { return {Target::RATIO, x, label}; }
Target AtMostMs(double ms, const char *label) { return {Target::MS, ms, label}; }

struct Ref {
  std::string name;           // what the reference is
  std::function<void()> run;  // one call
  double work;                // bytes or flops per call
  Target target;
  bool available = true;      // false: OpenBLAS not installed
  std::string variant;        // rows without a uopc side: the row's variant
};

struct Row {
  std::string workload, variant, reference, unit, target, status, check;
  bool has_uopc = false, has_ref = false;
  Stats u{}, r{};
  double ratio = NAN, urate = NAN, rrate = NAN, need = NAN, compile_ms = NAN;
  int rounds = 0;
};

// One group: a uopc variant (or none: the machine's limits) and the references
// it is compared with, timed in alternating rounds.
struct Group {
  std::string workload, variant, unit;
  std::function<bool()> uopc;  // one call; false on error (printed)
  double work = 0;
  std::vector<Ref> refs;
  int reps = 1;             // rounds after the warm-up round
  bool fixed_reps = false;  // --reps or --smoke: exactly reps rounds
};

// Without --reps, a group whose warm-up round shows that its rounds would
// take more than kGroupBudgetMs runs fewer rounds, but at least kMinReps
// (the slow plans of today: matmul1024 takes seconds a call).
const double kGroupBudgetMs = 15000;
const int kMinReps = 3;

std::vector<Row> RunGroup(const Group &g) {
  std::vector<double> tu;
  std::vector<std::vector<double>> tr(g.refs.size());
  int reps = g.reps;
  for (int round = 0; round <= reps; round++) {  // round 0 warms up
    auto start = Clock::now();
    if (g.uopc) {
      auto a = Clock::now();
      if (!g.uopc()) std::exit(1);
      if (round) tu.push_back(Ms(a, Clock::now()));
    }
    for (size_t k = 0; k < g.refs.size(); k++) {
      if (!g.refs[k].available) continue;
      auto a = Clock::now();
      g.refs[k].run();
      if (round) tr[k].push_back(Ms(a, Clock::now()));
    }
    if (!round && !g.fixed_reps) {  // slow rounds: fewer of them, at least kMinReps
      double ms = Ms(start, Clock::now());
      if (ms * reps > kGroupBudgetMs) reps = std::max(kMinReps, (int)(kGroupBudgetMs / ms));
    }
  }
  std::vector<Row> rows;
  for (size_t k = 0; k < g.refs.size(); k++) {
    const Ref &f = g.refs[k];
    Row w;
    w.workload = g.workload;
    w.variant = g.uopc ? g.variant : f.variant;
    w.reference = f.available ? f.name : "OpenBLAS not installed (" + f.name.substr(f.name.rfind(' ') + 1) + ")";
    w.unit = g.unit;
    w.has_uopc = (bool)g.uopc;
    w.has_ref = f.available;
    w.rounds = reps;
    if (w.has_uopc) w.u = Of(tu), w.urate = g.work / (w.u.med * 1e6);
    if (w.has_ref) w.r = Of(tr[k]), w.rrate = f.work / (w.r.med * 1e6);
    if (w.has_uopc && w.has_ref) w.ratio = w.r.med / w.u.med;
    w.target = f.target.label;
    if (f.target.kind == Target::RATIO && w.has_ref) w.need = f.target.v;
    if (f.target.kind == Target::MS && w.has_ref) w.need = w.r.med / f.target.v;
    if (f.target.kind == Target::NONE) w.status = "";
    else if (f.target.kind == Target::MS) w.status = w.u.med <= f.target.v ? "PASS" : "short";
    else if (!w.has_ref) w.status = "n/a";
    else w.status = w.ratio >= f.target.v ? "PASS" : "short";
    rows.push_back(w);
  }
  return rows;
}

// ---- printing ----------------------------------------------------------------

std::string Num(double v) {
  char b[32];
  if (std::isnan(v)) return "-";
  if (v >= 100) snprintf(b, sizeof b, "%.0f", v);
  else if (v >= 10) snprintf(b, sizeof b, "%.1f", v);
  else if (v >= 1) snprintf(b, sizeof b, "%.2f", v);
  else snprintf(b, sizeof b, "%.3g", v);
  return b;
}
std::string Timing(bool has, const Stats &s) {
  return has ? Num(s.med) + " (" + Num(s.min) + "-" + Num(s.max) + ")" : "-";
}

void PrintHeader() {
  printf("%-12s %-16s %8s %3s %-22s %-30s %-22s %8s %14s %14s %-20s %-5s %s\n", "workload", "variant", "compile",
         "n", "uopc ms (min-max)",
         "reference", "ref ms (min-max)", "ref/uopc", "uopc rate", "ref rate", "target", "mark", "output");
}

void PrintRow(const Row &w) {
  std::string ratio = std::isnan(w.ratio) ? "-" : Num(w.ratio) + "x";
  std::string ur = std::isnan(w.urate) ? "-" : Num(w.urate) + " " + w.unit;
  std::string rr = std::isnan(w.rrate) ? "-" : Num(w.rrate) + " " + w.unit;
  std::string comp = std::isnan(w.compile_ms) ? "-" : Num(w.compile_ms) + "ms";
  printf("%-12s %-16s %8s %3d %-22s %-30s %-22s %8s %14s %14s %-20s %-5s %s\n", w.workload.c_str(), w.variant.c_str(),
         comp.c_str(), w.rounds, Timing(w.has_uopc, w.u).c_str(), w.reference.c_str(), Timing(w.has_ref, w.r).c_str(), ratio.c_str(),
         ur.c_str(), rr.c_str(), w.target.c_str(), w.status.c_str(), w.check.c_str());
  fflush(stdout);
}

std::string Tsv(double v) {
  char b[32];
  if (std::isnan(v)) return "-";
  snprintf(b, sizeof b, "%.6g", v);
  return b;
}

bool WriteTsv(const std::string &path, const std::vector<std::string> &meta, const std::vector<Row> &rows) {
  FILE *f = fopen(path.c_str(), "w");
  if (!f) return false;
  for (const std::string &m : meta) fprintf(f, "# %s\n", m.c_str());
  fprintf(f,
          "workload\tvariant\tuopc_med_ms\tuopc_min_ms\tuopc_max_ms\treference\tref_med_ms\tref_min_ms\tref_max_ms\t"
          "ratio\tuopc_rate\tref_rate\tunit\ttarget\tneed_ratio\tstatus\tcheck\tcompile_ms\trounds\n");
  for (const Row &w : rows) {
    auto u = [&](double v) { return w.has_uopc ? Tsv(v) : std::string("-"); };
    auto r = [&](double v) { return w.has_ref ? Tsv(v) : std::string("-"); };
    fprintf(f, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", w.workload.c_str(),
            w.variant.c_str(), u(w.u.med).c_str(), u(w.u.min).c_str(), u(w.u.max).c_str(), w.reference.c_str(),
            r(w.r.med).c_str(), r(w.r.min).c_str(), r(w.r.max).c_str(), Tsv(w.ratio).c_str(), Tsv(w.urate).c_str(),
            Tsv(w.rrate).c_str(), w.unit.c_str(), w.target.empty() ? "-" : w.target.c_str(), Tsv(w.need).c_str(),
            w.status.empty() ? "-" : w.status.c_str(), w.check.empty() ? "-" : w.check.c_str(),
            Tsv(w.compile_ms).c_str(), w.rounds);
  }
  return fclose(f) == 0;
}

// ---- the machine -------------------------------------------------------------

std::string Trim(std::string s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// "model name", "cpu family", "model" of the first processor in /proc/cpuinfo.
std::string CpuinfoField(const char *key) {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    size_t c = line.find(':');
    if (c != std::string::npos && Trim(line.substr(0, c)) == key) return Trim(line.substr(c + 1));
  }
  return "?";
}

// The lines of `lscpu` that name the CPU and its caches, joined by "; ".
std::string Lscpu() {
  FILE *p = popen("lscpu 2>/dev/null", "r");
  if (!p) return "lscpu not available";
  std::string out;
  char buf[512];
  const char *keep[] = {"Model name:", "CPU family:", "Model:", "CPU(s):", "L1d cache:", "L2 cache:", "L3 cache:"};
  while (fgets(buf, sizeof buf, p)) {
    std::string line;  // "Model name:       AMD EPYC" -> "Model name: AMD EPYC"
    for (const char *q = buf; *q; q++)
      if (*q != ' ' || (q[1] != ' ' && q[1] != '\n')) line += *q;
    for (const char *k : keep)
      if (!strncmp(buf, k, strlen(k))) out += (out.empty() ? "" : "; ") + Trim(line);
  }
  pclose(p);
  return out.empty() ? "lscpu printed nothing" : out;
}

// The 1, 5 and 15 minute load averages (other work on the machine).
std::string LoadAvg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  if (!(f >> a >> b >> c)) return "?";
  return a + " " + b + " " + c;
}

std::string SelfExe() {
  char b[4096];
  ssize_t n = readlink("/proc/self/exe", b, sizeof b - 1);
  if (n <= 0) return "";
  b[n] = 0;
  return b;
}

// ---- OpenBLAS: which core ------------------------------------------------------

// The median ms of 5 sgemm of n x n on one thread, in this process.
double ProbeSgemm(long n) {
  float *a = Alloc((size_t)(n * n)), *b = Alloc((size_t)(n * n)), *c = Alloc((size_t)(n * n));
  Fill(a, (size_t)(n * n), 1, 1), Fill(b, (size_t)(n * n), 2, 1);
  std::vector<double> t;
  for (int r = 0; r < 6; r++) {
    auto s = Clock::now();
    ref_sgemm(c, a, b, n, 1);
    if (r) t.push_back(Ms(s, Clock::now()));
  }
  free(a), free(b), free(c);
  return Of(t).med;
}

// The sgemm probe of a child process loading OpenBLAS with
// OPENBLAS_CORETYPE=core ("" unset: as detected): false when it failed.
bool ProbeChild(const std::string &core, long n, double *ms, std::string *name) {
  std::string cmd = (core.empty() ? std::string("env -u OPENBLAS_CORETYPE") : "OPENBLAS_CORETYPE=" + core) +
                    " UOPC_BENCH_BLAS_NOTE=probe '" + SelfExe() + "' --probe-sgemm " + std::to_string(n);
  char got[128] = "?";
  double t = NAN;
  FILE *p = popen(cmd.c_str(), "r");
  if (!p) return false;
  if (fscanf(p, "%lf %127s", &t, got) != 2) t = NAN;
  if (pclose(p) != 0 || std::isnan(t)) return false;
  *ms = t, *name = got;
  return true;
}

// Before anything else: when OpenBLAS is linked and this is not the
// re-executed process, time sgemm on one thread with the core OpenBLAS
// loaded with (as detected, or the caller's OPENBLAS_CORETYPE) and, in
// child processes, with every other core this CPU can run (as detected,
// SkylakeX and Cooperlake on AVX-512, Haswell on AVX2, Zen on AMD), keep the
// fastest and re-execute with it (the variable is read when the library
// loads; returns only when exec failed).  A caller's OPENBLAS_CORETYPE is a
// candidate, not a choice: issue 12 compares against the best kernel
// OpenBLAS has for the CPU.  The note says what each core took and which
// was kept; the re-executed process finds it in UOPC_BENCH_BLAS_NOTE.
void ChooseOpenblasCore(char **argv, long n) {
  if (!ref_openblas_available() || getenv("UOPC_BENCH_BLAS_NOTE")) return;
  const char *preset = getenv("OPENBLAS_CORETYPE");
  const std::string loaded_env = preset ? preset : "", loaded = ref_openblas_corename();
  struct Cand {
    std::string env, core;  // env: the OPENBLAS_CORETYPE value ("" unset)
    double ms;
  };
  std::vector<Cand> got = {{loaded_env, loaded, ProbeSgemm(n)}};
  std::vector<std::string> tries;
  if (!loaded_env.empty()) tries.push_back("");  // as detected
  if (__builtin_cpu_supports("avx512f")) tries.push_back("SkylakeX");
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16")) tries.push_back("Cooperlake");
  if (__builtin_cpu_supports("avx2")) tries.push_back("Haswell");
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_is("amd")) tries.push_back("Zen");
  std::string failed;
  for (const std::string &t : tries) {
    if (!t.empty() && !strcasecmp(t.c_str(), loaded.c_str())) continue;  // the one loaded here
    Cand c{t, "", NAN};
    if (ProbeChild(t, n, &c.ms, &c.core)) got.push_back(c);
    else failed += " " + (t.empty() ? std::string("as-detected") : t);
  }
  size_t best = 0;
  for (size_t i = 1; i < got.size(); i++)
    if (got[i].ms < got[best].ms) best = i;
  std::string note = "sgemm " + std::to_string(n) + " 1T:";
  for (size_t i = 0; i < got.size(); i++) {
    const Cand &c = got[i];
    note += (i ? ", " : " ") + c.core + " " + Num(c.ms) + " ms";
    if (i == 0) note += loaded_env.empty() ? " (as detected)" : " (OPENBLAS_CORETYPE=" + loaded_env + " from the caller)";
    else if (c.env.empty()) note += " (as detected)";
  }
  if (!failed.empty()) note += "; probe failed:" + failed;
  note += "; using " + got[best].core + " (the fastest)";
  if (got[best].env.empty()) unsetenv("OPENBLAS_CORETYPE");
  else setenv("OPENBLAS_CORETYPE", got[best].env.c_str(), 1);
  if (!getenv("OPENBLAS_THREAD_TIMEOUT")) setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
  setenv("UOPC_BENCH_BLAS_NOTE", note.c_str(), 1);
  std::string self = SelfExe();
  execv(self.c_str(), argv);
  fprintf(stderr, "bench_throughput: cannot re-execute %s (%s): OpenBLAS keeps the environment it loaded with\n",
          self.c_str(), strerror(errno));
}

// ---- the plans -----------------------------------------------------------------

// Compiles and frees a small plan, untimed: the first compile of a process
// also creates the JIT engine and its first TargetMachines (several ms),
// which belong to no workload's compile column.
void WarmEngine() {
  static const char text[] =
      "%A = param : slot=0 dtype=f32 shape=(64,)\n%B = param : slot=1 dtype=f32 shape=(64,)\n"
      "%m = mul %A, %B\n%o = add %m, %A\n";
  uopc_ctx *c = uopc_ctx_new(nullptr);
  uopc_error e;
  uopc_node *root = uopc_uir_parse(c, text, sizeof text - 1, "warm-up", &e);
  uopc_plan *p = root ? uopc_plan_compile(c, root, nullptr, &e) : nullptr;
  if (!p) fprintf(stderr, "bench_throughput: warm-up compile: %s\n", e.msg), std::exit(1);
  uopc_plan_free(p);
  uopc_ctx_free(c);
}

std::string ReadFile(const std::string &path) {
  std::ifstream f(path);
  if (!f) fprintf(stderr, "bench_throughput: cannot read %s\n", path.c_str()), std::exit(2);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Replaces every whole-number token `from` in text by `to` (the smoke sizes).
std::string Resize(std::string text, const std::string &from, const std::string &to) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(from, i);
    if (j == std::string::npos) break;
    size_t k = j + from.size();
    bool left = j == 0 || (!isdigit((unsigned char)text[j - 1]) && text[j - 1] != '.');
    bool right = k >= text.size() || (!isdigit((unsigned char)text[k]) && text[k] != '.');
    out += text.substr(i, j - i) + (left && right ? to : from);
    i = j + from.size();
  }
  return out + text.substr(i);
}

struct Variant {
  const char *name;
  unsigned flags;
  uint32_t threads;
  size_t offset = 0;  // 0, or 16: every array (arguments, result, the references' too) 16 bytes past a 64-byte boundary
};
const Variant kVariants[] = {
    {"strict 1T", 0, 1}, {"fast 1T", UOPC_COMPILE_FAST_MATH, 1}, {"strict 2T", 0, 2}, {"fast 2T", UOPC_COMPILE_FAST_MATH, 2},
    // the opt-in for plans called many times (docs/loops.md): only where PlanWork.hot
    {"strict hot 1T", UOPC_COMPILE_HOT, 1}, {"fast hot 1T", UOPC_COMPILE_FAST_MATH | UOPC_COMPILE_HOT, 1},
    // without streaming stores (docs/loops.md), beside the default: only where PlanWork.stream
    {"strict nostream 1T", UOPC_COMPILE_NO_STREAM, 1}, {"strict nostream 2T", UOPC_COMPILE_NO_STREAM, 2},
    {"fast nostream 1T", UOPC_COMPILE_FAST_MATH | UOPC_COMPILE_NO_STREAM, 1},
    // every array where glibc's malloc puts a large block, 16 bytes past a page (docs/loops.md, "Streaming
    // stores"): only where PlanWork.stream
    {"strict malloc 1T", 0, 1, 16}, {"strict malloc 2T", 0, 2, 16}};

// The max over elements of |fast - strict| / |strict| (|strict| below FLT_MIN
// counts as FLT_MIN); a NaN on one side only is infinite.
double MaxRelErr(const float *f, const float *s, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) {
    if (std::isnan(f[i]) || std::isnan(s[i])) {
      if (std::isnan(f[i]) != std::isnan(s[i])) return INFINITY;
      continue;
    }
    double d = std::fabs((double)f[i] - s[i]) / std::fmax(std::fabs((double)s[i]), FLT_MIN);
    m = std::fmax(m, d);
  }
  return m;
}

// A plan workload: its program, inputs, output, and per variant the references.
struct PlanWork {
  std::string name, file, unit;
  std::vector<std::vector<int64_t>> in;
  std::vector<int64_t> out;
  double work;
  int reps;
  std::function<void(float *const *in, float *out)> check;  // same op order as strict
  // the references of a variant (index into kVariants), given the inputs and a scratch output
  std::function<std::vector<Ref>(int v, float *const *in, float *scratch)> refs;
  std::vector<std::pair<std::string, std::string>> resize;  // smoke: size tokens
  bool hot = false;     // also the UOPC_COMPILE_HOT variants (4, 5)
  bool stream = false;  // also the UOPC_COMPILE_NO_STREAM variants (6, 7, 8) and the +16B ones (9, 10)
};

int64_t Numel(const std::vector<int64_t> &s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

struct Options {
  int reps = 0;
  bool smoke = false;
  std::string out = "bench-results", only;
  uopc_tier tier = UOPC_TIER_FAST;
};

bool Wanted(const Options &o, const std::string &name) {
  if (o.only.empty()) return true;
  std::stringstream s(o.only);
  std::string w;
  while (std::getline(s, w, ','))
    if (w == name) return true;
  return false;
}

// Compiles and runs the four variants of w; appends their rows.  Returns
// false when a strict output differs from the check reference's.
bool RunPlanWork(const PlanWork &w, const Options &o, std::vector<Row> &rows) {
  std::string text = ReadFile(std::string(UOPC_BENCH_DATA) + "/" + w.file);
  if (o.smoke)
    for (auto &r : w.resize) text = Resize(text, r.first, r.second);
  std::vector<float *> in;
  std::vector<uopc_tensor> args;
  for (size_t k = 0; k < w.in.size(); k++) {
    in.push_back(Alloc((size_t)Numel(w.in[k])));
    Fill(in.back(), (size_t)Numel(w.in[k]), 17 + (uint32_t)k, 4.0f);
  }
  std::vector<float *> inoff;  // the same inputs at +16 bytes, made when a variant asks
  for (size_t k = 0; k < w.in.size(); k++)
    args.push_back({in[k], UOPC_DT_F32, (uint32_t)w.in[k].size(), w.in[k].data()});
  size_t nout = (size_t)Numel(w.out);
  float *outmem = Alloc(nout + 16), *want = Alloc(nout), *strict = Alloc(nout), *scratchmem = Alloc(nout + 16);
  w.check(in.data(), want);
  bool ok = true, have_strict = false;
  for (int v = 0; v < (int)(sizeof kVariants / sizeof kVariants[0]); v++) {
    if ((v >= 4 && v < 6 && !w.hot) || (v >= 6 && !w.stream)) continue;
    const Variant &var = kVariants[v];
    float *out = outmem + var.offset / sizeof(float), *scratch = scratchmem + var.offset / sizeof(float);
    if (var.offset && inoff.empty())
      for (size_t k = 0; k < w.in.size(); k++) {
        size_t n = (size_t)Numel(w.in[k]);
        inoff.push_back(Alloc(n + 16));
        memcpy(inoff.back() + 16 / sizeof(float), in[k], n * sizeof(float));
      }
    std::vector<float *> vin = in;  // this variant's inputs
    for (size_t k = 0; k < w.in.size(); k++) {
      if (var.offset) vin[k] = inoff[k] + 16 / sizeof(float);
      args[k].data = vin[k];
    }
    uopc_tensor ot = {out, UOPC_DT_F32, (uint32_t)w.out.size(), w.out.empty() ? nullptr : w.out.data()};
    const bool exact = !(var.flags & UOPC_COMPILE_FAST_MATH);  // strict mode: bit-identical
    uopc_ctx *c = uopc_ctx_new(nullptr);
    uopc_error e;
    uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), w.file.c_str(), &e);
    if (!root) fprintf(stderr, "%s: %s\n", w.file.c_str(), e.msg), std::exit(1);
    uopc_compile_opts opts = {o.tier, var.flags, var.threads};
    auto t0 = Clock::now();
    uopc_plan *p = uopc_plan_compile(c, root, &opts, &e);
    double compile_ms = Ms(t0, Clock::now());
    if (!p) fprintf(stderr, "%s %s: %s\n", w.name.c_str(), var.name, e.msg), std::exit(1);
    Group g;
    g.workload = w.name;
    g.variant = var.name;
    g.unit = w.unit;
    g.work = w.work;
    g.reps = o.reps ? o.reps : w.reps;
    g.fixed_reps = o.reps != 0;
    g.uopc = [&]() {
      if (uopc_plan_call(p, args.data(), (uint32_t)args.size(), &ot, &e) == UOPC_OK) return true;
      fprintf(stderr, "%s %s: %s\n", w.name.c_str(), var.name, e.msg);
      return false;
    };
    g.refs = w.refs(v, vin.data(), scratch);
    std::vector<Row> got = RunGroup(g);
    std::string check;
    if (exact) {
      size_t bad = 0;
      for (size_t i = 0; i < nout; i++) bad += memcmp(&out[i], &want[i], sizeof(float)) != 0;
      char b[96];
      if (bad) snprintf(b, sizeof b, "DIFFER (%zu of %zu elements)", bad, nout), ok = false;
      else snprintf(b, sizeof b, "bit-identical");
      check = b;
      if (!have_strict) memcpy(strict, out, nout * sizeof(float)), have_strict = true;
    } else if (have_strict) {
      char b[96];
      snprintf(b, sizeof b, "max rel err %.2g vs strict", MaxRelErr(out, strict, nout));
      check = b;
    }
    for (Row &r : got) {
      r.check = check;
      r.compile_ms = compile_ms;
      if (exact && !ok) r.status = "WRONG";
      PrintRow(r);
      rows.push_back(r);
    }
    uopc_plan_free(p);
    uopc_ctx_free(c);
    uopc_cache_clear_memory();  // the next variant compiles its kernels again
  }
  for (float *x : in) free(x);
  for (float *x : inoff) free(x);
  free(outmem), free(want), free(strict), free(scratchmem);
  return ok;
}

}  // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    bool more = i + 1 < argc;
    if (!strcmp(argv[i], "--probe-sgemm") && more) {  // the OpenBLAS core probe's child
      double ms = ProbeSgemm(atol(argv[i + 1]));
      printf("%.6g %s\n", ms, ref_openblas_corename());
      return 0;
    } else if (!strcmp(argv[i], "--reps") && more) o.reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--out") && more) o.out = argv[++i];
    else if (!strcmp(argv[i], "--only") && more) o.only = argv[++i];
    else if (!strcmp(argv[i], "--tier") && more) o.tier = strcmp(argv[++i], "strong") ? UOPC_TIER_FAST : UOPC_TIER_STRONG;
    else if (!strcmp(argv[i], "--smoke")) o.smoke = true;
    else {
      fprintf(stderr,
              "usage: %s [--reps N] [--smoke] [--out DIR] [--only NAME[,NAME...]] [--tier fast|strong]\n"
              "  NAME: triad fma ew16M sum16M matmul1024 attention512 softmax4096\n",
              argv[0]);
      return 2;
    }
  }
  {
    std::stringstream names(o.only);
    std::string n;
    const std::string known = " triad fma ew16M sum16M matmul1024 attention512 softmax4096 ";
    while (std::getline(names, n, ','))
      if (known.find(" " + n + " ") == std::string::npos)
        return fprintf(stderr, "bench_throughput: --only %s: no workload '%s' (one of:%s)\n", o.only.c_str(),
                       n.c_str(), known.substr(0, known.size() - 1).c_str()),
               2;
  }
  const bool S = o.smoke;
  if (S && !o.reps) o.reps = 1;
  const long M = S ? 4096 : 1L << 24;        // ew, sum
  const long TN = M;                         // triad: the bytes of a*b+a
  const long MN = S ? 64 : 1024;             // matmul
  const long AN = S ? 32 : 512, AD = 64;     // attention
  const long SR = S ? 64 : 4096;             // softmax rows and columns
  const long FI = S ? 10000 : 4000000;       // FMA rounds per call
  ChooseOpenblasCore(argv, MN);

  setenv("UOPC_CACHE", "0", 1);  // compile times are real compiles, no stale kernel
  uopc_plan_cache_set_limit(0, 0);
  WarmEngine();  // the first compile of a process also starts the JIT engine: not a plan's compile time
  if (mkdir(o.out.c_str(), 0777) && errno != EEXIST)
    return fprintf(stderr, "bench_throughput: cannot create %s: %s\n", o.out.c_str(), strerror(errno)), 2;

  std::vector<std::string> meta;
  char date[64];
  time_t now = time(nullptr);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
  meta.push_back(std::string("date\t") + date);
  meta.push_back("cpu\t" + CpuinfoField("model name") + " (family " + CpuinfoField("cpu family") + ", model " +
                 CpuinfoField("model") + ", " + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " CPUs online" +
                 (__builtin_cpu_supports("avx512f") ? ", AVX-512" : ", no AVX-512") + ")");
  meta.push_back("lscpu\t" + Lscpu());
  meta.push_back("load\t" + LoadAvg() + " at the start (1/5/15-minute averages; on " +
                 std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " CPUs, more than that means others' work shared them)");
  meta.push_back(std::string("openblas\t") +
                 (ref_openblas_available() ? std::string(ref_openblas_config()) + "; " +
                                                 (getenv("UOPC_BENCH_BLAS_NOTE") ? getenv("UOPC_BENCH_BLAS_NOTE")
                                                                                  : "core chosen as detected")
                                           : std::string("OpenBLAS not installed (libopenblas-dev)")));
  meta.push_back(std::string("mode\t") + (S ? "smoke (small sizes, 1 round: the figures mean nothing)" : "full") +
                 ", tier " + (o.tier == UOPC_TIER_STRONG ? "strong" : "fast") +
                 ", rounds " + (o.reps ? std::to_string(o.reps) : std::string("per workload (fewer, >= 3, past 15 s a group)")) +
                 ", FMA lanes " + std::to_string(ref_fma_lanes()));
  for (const std::string &m : meta) {
    std::string s = m;
    s[s.find('\t')] = ':';
    printf("%s\n", s.c_str());
  }
  printf("ratio = reference median / uopc median (>= 1: uopc as fast); rounds alternate uopc and references\n\n");
  PrintHeader();

  std::vector<Row> rows;
  bool ok = true;
  // the STREAM arrays stay for the a*b+a rows, which compare with the triad
  float *ta = Alloc((size_t)TN), *tb = Alloc((size_t)TN), *tc = Alloc((size_t)TN);
  Fill(tb, (size_t)TN, 3, 1), Fill(tc, (size_t)TN, 4, 1);
  const double tbytes = 12.0 * TN;
  auto triad = [&](int threads, bool nt, Target t) {
    char b[64];
    snprintf(b, sizeof b, "STREAM triad %dT%s", threads, nt ? " NT" : "");
    return Ref{b,
               [=]() {
                 if (nt) ref_triad_nt(ta, tb, tc, 3.0f, TN, threads);
                 else ref_triad(ta, tb, tc, 3.0f, TN, threads);
               },
               tbytes, t, true, std::string(nt ? "NT " : "") + std::to_string(threads) + "T"};
  };

  if (Wanted(o, "triad")) {
    Group g;
    g.workload = "triad";
    g.unit = "GB/s";
    g.reps = o.reps ? o.reps : 20;
    g.fixed_reps = o.reps != 0;
    g.refs = {triad(1, false, {}), triad(2, false, {}), triad(1, true, {}), triad(2, true, {})};
    for (Row &r : RunGroup(g)) PrintRow(r), rows.push_back(r);
  }
  if (Wanted(o, "fma")) {
    Group g;
    g.workload = "fma-peak";
    g.unit = "GFLOP/s";
    g.reps = o.reps ? o.reps : 10;
    g.fixed_reps = o.reps != 0;
    static volatile float fma_sink;
    for (int t = 1; t <= 2; t++)
      g.refs.push_back(Ref{"FMA f32 chains " + std::to_string(t) + "T", [=]() { fma_sink = ref_fma_peak(FI, t); },
                           (double)ref_fma_per_iter() * FI * t, {}, true, std::to_string(t) + "T"});
    for (Row &r : RunGroup(g)) PrintRow(r), rows.push_back(r);
    (void)fma_sink;
  }

  static float sum_sink;
  static std::vector<float> att_s, att_p, sm_e;
  att_s.resize((size_t)(AN * AN)), att_p.resize((size_t)(AN * AN)), sm_e.resize((size_t)(SR * SR));
  const bool blas = ref_openblas_available();
  auto sgemm = [&](int threads, float *const *in, float *o2, Target t) {
    return Ref{"OpenBLAS sgemm " + std::to_string(threads) + "T",
               [=]() { ref_sgemm(o2, in[0], in[1], MN, threads); }, 2.0 * MN * MN * MN, t, blas, ""};
  };

  std::vector<PlanWork> works;
  works.push_back(PlanWork{
      "ew16M", "ew16M.uir", "GB/s", {{M}, {M}}, {M}, 12.0 * M, 20,
      [=](float *const *in, float *out) { ref_ew(out, in[0], in[1], M); },
      [&, M](int v, float *const *in, float *s) {
        int th = kVariants[v].threads;
        std::vector<Ref> r;
        if (th == 1)
          r.push_back(Ref{"C loop clang -O3", [=]() { ref_ew(s, in[0], in[1], M); }, 12.0 * M,
                          v == 0 ? AtLeast(0.95, ">=0.95x clang") : Target{}});
        else
          r.push_back(Ref{"C loop clang -O3 2T", [=]() { ref_ew_threads(s, in[0], in[1], M, 2); }, 12.0 * M, {}});
        if (!(kVariants[v].flags & UOPC_COMPILE_FAST_MATH)) {  // the triad moves the same 12 bytes per element
          r.push_back(triad(th, false, v < 4 ? AtLeast(0.90, th == 1 ? ">=90% triad 1T" : ">=90% triad 2T") : Target{}));
          if (!(kVariants[v].flags & UOPC_COMPILE_NO_STREAM)) r.push_back(triad(th, true, {}));  // and its streaming stores
        }
        return r;
      },
      {{"16777216", "4096"}},
      false,
      true});
  works.push_back(PlanWork{
      "sum16M", "sum16M.uir", "GB/s", {{M}}, {}, 4.0 * M, 20,
      [=](float *const *in, float *out) { *out = ref_sum(in[0], M); },
      [=](int v, float *const *in, float *) {
        bool fast = kVariants[v].flags;
        if (!fast)
          return std::vector<Ref>{Ref{"C loop strict", [=]() { sum_sink = ref_sum(in[0], M); }, 4.0 * M,
                                      v == 0 ? AtLeast(0.95, ">=0.95x strict C") : Target{}}};
        return std::vector<Ref>{Ref{"C loop -ffast-math", [=]() { sum_sink = ref_sum_fastmath(in[0], M); }, 4.0 * M,
                                    v == 1 ? AtLeast(0.90, ">=0.9x -ffast-math") : Target{}},
                                Ref{"C loop -ffast-math from -0.0", [=]() { sum_sink = ref_sum_fastmath0(in[0], M); },
                                    4.0 * M, {}}};
      },
      {{"16777216", "4096"}}});
  works.push_back(PlanWork{
      "matmul1024", "matmul1024.uir", "GFLOP/s", {{MN, MN}, {MN, MN}}, {MN, MN}, 2.0 * MN * MN * MN, 5,
      [=](float *const *in, float *out) { ref_matmul_ikj_seq(out, in[0], in[1], MN); },
      [=](int v, float *const *in, float *s) {
        std::vector<Ref> r;
        switch (v) {
          case 0:
            r.push_back(Ref{"C i-k-j loop clang -O3", [=]() { ref_matmul_ikj_seq(s, in[0], in[1], MN); },
                            2.0 * MN * MN * MN, {}});
            r.push_back(sgemm(1, in, s, AtLeast(0.60, ">=0.6x OpenBLAS 1T")));
            break;
          case 1: r.push_back(sgemm(1, in, s, AtLeast(0.80, ">=0.8x OpenBLAS 1T"))); break;
          case 2: r.push_back(sgemm(2, in, s, {})); break;
          default:
            r.push_back(sgemm(1, in, s, AtLeast(1.44, ">=1.44x OB 1T (1.8x80%)")));
            r.push_back(sgemm(2, in, s, {}));
        }
        return r;
      },
      {{"1024", std::to_string(MN)}}});
  works.push_back(PlanWork{
      "attention512", "attention512.uir", "GFLOP/s", {{AN, AD}, {AN, AD}, {AN, AD}}, {AN, AD}, 4.0 * AN * AN * AD, 10,
      [=](float *const *in, float *out) {
        ref_attention(out, att_s.data(), att_p.data(), in[0], in[1], in[2], AN, AD);
      },
      [=](int v, float *const *in, float *s) {
        Target t = v == 0 ? AtMostMs(3.5, "<=3.5 ms")
                   : v == 1 ? AtMostMs(1.5, "<=1.5 ms")
                   : v == 4 ? AtMostMs(3.5, "<=3.5 ms (--hot)")
                   : v == 5 ? AtMostMs(1.5, "<=1.5 ms (--hot)")
                            : Target{};
        return std::vector<Ref>{Ref{"C same ops clang -O3",
                                    [=]() { ref_attention(s, att_s.data(), att_p.data(), in[0], in[1], in[2], AN, AD); },
                                    4.0 * AN * AN * AD, t}};
      },
      {{"512", std::to_string(AN)}},
      true});
  works.push_back(PlanWork{
      "softmax4096", "softmax4096.uir", "GB/s", {{SR, SR}}, {SR, SR}, 8.0 * SR * SR, 5,
      [=](float *const *in, float *out) { ref_softmax(out, sm_e.data(), in[0], SR, SR); },
      [=](int, float *const *in, float *s) {
        return std::vector<Ref>{
            Ref{"C same ops clang -O3", [=]() { ref_softmax(s, sm_e.data(), in[0], SR, SR); }, 8.0 * SR * SR, {}}};
      },
      {{"4096", std::to_string(SR)}},
      false,
      true});

  for (const PlanWork &w : works)
    if (Wanted(o, w.name)) ok &= RunPlanWork(w, o, rows);
  free(ta), free(tb), free(tc);

  std::string tsv = o.out + "/bench.tsv";
  if (!WriteTsv(tsv, meta, rows))
    return fprintf(stderr, "bench_throughput: cannot write %s: %s\n", tsv.c_str(), strerror(errno)), 2;
  int pass = 0, shortn = 0;
  for (const Row &r : rows) pass += r.status == "PASS", shortn += r.status == "short";
  printf("\ntargets: %d PASS, %d short%s; load at the end %s; table: %s\n", pass, shortn,
         ok ? "" : "; A STRICT OUTPUT DIFFERS", LoadAvg().c_str(), tsv.c_str());
  return ok ? 0 : 1;
}
