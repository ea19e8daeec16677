// The acceptance programs of issue 11 (test/golden/plan_*.uir): tensor
// programs with PARAMs, each run through the CLI as
//
//     UOPC_DEBUG=schedule uopc exec PROG --arg S=IN.npy ... --out OUT.npy --print
//
// on random inputs, and checked bit for bit against `uopc run` of the same
// program with each PARAM replaced by a STACK literal of the same values (the
// printed value, and OUT.npy printed by the same printer), or, for a file
// with "# plan: ref=attention", against a C computation here with the same
// op order.  "# plan: kernels=N" is the kernel count UOPC_DEBUG=schedule
// must print (docs/schedule.md says why each has that many).
#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "support/cli.h"
#include "support/ctx.h"

namespace {

// "# plan: KEY=VALUE" of a file
std::string Tag(const std::string &text, const std::string &key) {
  std::smatch m;
  std::regex re("# plan: " + key + "=(\\S+)");
  return std::regex_search(text, m, re) ? m[1].str() : "";
}

struct Arg {
  uint32_t slot;
  uopc_dtype dtype;
  std::vector<int64_t> shape;
  std::vector<float> f;    // f32
  std::vector<int32_t> i;  // i32
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

// A STACK literal (nested, C order) of a's values from element *at on, over axes d.. of its shape.
uopc_node *Literal(uopc_ctx *c, const Arg &a, size_t d, int64_t *at) {
  if (d == a.shape.size()) {
    int64_t k = (*at)++;
    return a.dtype == UOPC_DT_F32 ? uopc_const_f(c, UOPC_DT_F32, (double)a.f[k]) : uopc_const_i(c, a.dtype, a.i[k]);
  }
  std::vector<uopc_node *> v;
  for (int64_t j = 0; j < a.shape[d]; j++) v.push_back(Literal(c, a, d + 1, at));
  return uopc_stack(c, v.data(), (uint32_t)v.size());
}

std::string TensorText(uopc_ctx *c, const void *data, uopc_dtype t, const std::vector<int64_t> &shape) {
  uopc_tensor x = {const_cast<void *>(data), t, (uint32_t)shape.size(), shape.data()};
  char *s = uopc_tensor_print(c, &x);
  std::string r = s ? s : "(print failed)";
  if (s) uopc_mem_free(c, s, strlen(s) + 1);
  return r + "\n";
}

// softmax(Q K^T) V as plan_attention.uir computes it, op by op in f32:
// every sum and max left to right from the first element, exp2 by libm in
// double rounded once, the divide as a multiply by the f32 reciprocal.
__attribute__((optimize("fp-contract=off"))) std::vector<float> Attention(const std::vector<float> &q,
                                                                          const std::vector<float> &k,
                                                                          const std::vector<float> &v, int n, int d) {
  std::vector<float> s(n * n), e(n * n), p(n * n), o(n * d);
  const float log2e = (float)1.4426950408889634;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      float acc = q[i * d] * k[j * d];
      for (int t = 1; t < d; t++) acc = acc + q[i * d + t] * k[j * d + t];
      s[i * n + j] = acc;
    }
  for (int i = 0; i < n; i++) {
    float m = s[i * n];
    for (int j = 1; j < n; j++) m = s[i * n + j] > m ? s[i * n + j] : m;
    float nm = m * -1.0f;
    for (int j = 0; j < n; j++) e[i * n + j] = (float)exp2((double)((s[i * n + j] + nm) * log2e));
    float z = e[i * n];
    for (int j = 1; j < n; j++) z = z + e[i * n + j];
    float rz = 1.0f / z;
    for (int j = 0; j < n; j++) p[i * n + j] = e[i * n + j] * rz;
  }
  for (int i = 0; i < n; i++)
    for (int t = 0; t < d; t++) {
      float acc = p[i * n] * v[t];
      for (int j = 1; j < n; j++) acc = acc + p[i * n + j] * v[j * d + t];
      o[i * d + t] = acc;
    }
  return o;
}

void CheckFile(const std::string &path, uint32_t seed) {
  SCOPED_TRACE(path);
  std::string text = Slurp(path);
  std::string want_kernels = Tag(text, "kernels"), ref = Tag(text, "ref");
  ASSERT_FALSE(want_kernels.empty()) << "no '# plan: kernels=N' line";
  Ctx c;
  uopc_error e;
  uopc_node *root = uopc_uir_parse(c, text.data(), text.size(), path.c_str(), &e);
  ASSERT_NE(root, nullptr) << e.msg;
  uopc_plan *p = uopc_plan_compile(c, root, nullptr, &e);
  ASSERT_NE(p, nullptr) << e.msg;
  EXPECT_EQ(std::to_string(uopc_plan_nkernels(p)), want_kernels);
  uopc_dtype rt;
  uint32_t rnd;
  const int64_t *rshape;
  ASSERT_TRUE(uopc_plan_result(p, &rt, &rnd, &rshape));
  std::vector<int64_t> out_shape(rshape, rshape + rnd);
  // random inputs, one .npy per free PARAM
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uf(-3.0f, 3.0f);
  std::vector<Arg> args;
  std::string cmd = "exec " + Q(path);
  std::string base = path.substr(path.rfind('/') + 1);
  for (uint32_t s = 0; s < uopc_plan_nargs(p); s++) {
    Arg a;
    uint32_t nd;
    const int64_t *shape;
    if (!uopc_plan_arg(p, s, &a.dtype, &nd, &shape)) continue;
    a.slot = s, a.shape.assign(shape, shape + nd);
    ASSERT_TRUE(a.dtype == UOPC_DT_F32 || a.dtype == UOPC_DT_I32);
    for (int64_t k = 0; k < a.numel(); k++) {
      if (a.dtype == UOPC_DT_F32) a.f.push_back(uf(rng));
      else a.i.push_back((int32_t)(rng() % 201) - 100);
    }
    std::string in = TmpPath(base + ".in" + std::to_string(s) + ".npy"), err;
    bool ok = a.dtype == UOPC_DT_F32 ? SaveNpy(in, a.dtype, a.f, a.shape, &err) : SaveNpy(in, a.dtype, a.i, a.shape, &err);
    ASSERT_TRUE(ok) << err;
    cmd += " --arg " + std::to_string(s) + "=" + Q(in);
    args.push_back(a);
  }
  uopc_plan_free(p);
  std::string out = TmpPath(base + ".out.npy");
  CliRun r = UopcEnv("UOPC_DEBUG=schedule", cmd + " --out " + Q(out) + " --print");
  ASSERT_EQ(r.status, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex("uopc schedule: (\\d+) kernels?\n"))) << r.err;
  EXPECT_EQ(m[1].str(), want_kernels) << r.err;
  std::string err;
  std::vector<uint8_t> got = LoadNpyRaw(out, rt, &err);
  ASSERT_TRUE(err.empty()) << err;
  std::string got_text = TensorText(c, got.data(), rt, out_shape);
  EXPECT_EQ(r.out, got_text);  // --print prints the .npy's values
  if (ref == "attention") {
    ASSERT_EQ(args.size(), 3u);
    int n = (int)args[0].shape[0], d = (int)args[0].shape[1];
    std::vector<float> want = Attention(args[0].f, args[1].f, args[2].f, n, d);
    ASSERT_EQ(got.size(), want.size() * 4);
    int bad = 0;
    for (size_t k = 0; k < want.size(); k++) {
      float g;
      memcpy(&g, &got[k * 4], 4);
      uint32_t gb, wb;
      memcpy(&gb, &g, 4), memcpy(&wb, &want[k], 4);
      if (gb != wb && bad++ < 5) ADD_FAILURE() << "element " << k << ": plan " << g << " (0x" << std::hex << gb << "), C " << want[k] << " (0x" << wb << ")" << std::dec;
    }
    EXPECT_EQ(bad, 0);
    return;
  }
  ASSERT_TRUE(ref.empty()) << "unknown ref " << ref;
  // run of the same program with the inputs as STACK literals
  std::vector<uopc_node *> from, to;
  uint32_t n;
  uopc_node **all = uopc_toposort(c, root, &n);
  ASSERT_NE(all, nullptr);
  for (const Arg &a : args)
      for (uint32_t k = 0; k < n; k++) {
        uopc_node *u = all[k];
        if (u->op != UOPC_OP_PARAM || u->arg.i != a.slot || u->ndim != a.shape.size()) continue;
        bool same = true;
        for (uint32_t j = 0; j < u->ndim; j++) same &= u->shape[j] == a.shape[j];
        if (!same) continue;  // a CALL body's own PARAM of the same slot
        int64_t at = 0;
        from.push_back(u);
        to.push_back(Literal(c, a, 0, &at));
      }
  uopc_mem_free(c, all, n * sizeof *all);
  ASSERT_EQ(from.size(), args.size());
  uopc_node *closed = uopc_substitute(c, root, from.data(), to.data(), (uint32_t)from.size());
  ASSERT_NE(closed, nullptr) << c.err();
  char *t = uopc_uir_print(c, closed);
  ASSERT_NE(t, nullptr);
  std::string cfile = UirFile(base + ".closed.uir", t);
  uopc_mem_free(c, t, strlen(t) + 1);
  CliRun rr = Uopc("run " + Q(cfile));
  ASSERT_EQ(rr.status, 0) << rr.err;
  EXPECT_EQ(r.out, rr.out) << "exec --print against run";
  // and jit-run of the closed program: the same again
  CliRun rj = Uopc("jit-run " + Q(cfile));
  EXPECT_EQ(rj.status, 0) << rj.err;
  EXPECT_EQ(rj.out, rr.out) << "jit-run against run";
}

TEST(PlanAccept, ProgramsMatchRunBitForBit) {
  std::vector<std::string> files = GoldenPlans();
  ASSERT_GE(files.size(), 12u);
  uint32_t seed = 1;
  for (const std::string &f : files) CheckFile(f, seed++);
  uopc_plan_cache_clear();
}

// Seed chapter 2's `run` examples (section 2.6: examples/, and the a * b + a
// of its timing table, bench/data/run_abn*.uir): jit-run prints what run prints.
TEST(PlanAccept, SeedChapter2RunExamplesThroughJitRun) {
  const std::string src = UOPC_SOURCE_DIR;
  std::vector<std::string> files;
  for (const char *f : {"mul_add.uir", "where.uir", "movement_reduce.uir", "sq_call.uir", "nested_calls.uir"})
    files.push_back(src + "/examples/" + f);
  for (const char *f : {"run_abn10.uir", "run_abn100.uir", "run_abn1000.uir"}) files.push_back(src + "/bench/data/" + f);
  for (const std::string &f : files) {
    ASSERT_NE(Slurp(f).find("seed"), std::string::npos) << f << ": not a seed example";
    CliRun run = Uopc("run " + Q(f)), jit = UopcEnv("UOPC_DEBUG=schedule", "jit-run " + Q(f));
    EXPECT_EQ(run.status, 0) << f << ": " << run.err;
    EXPECT_EQ(jit.status, 0) << f << ": " << jit.err;
    EXPECT_FALSE(run.out.empty()) << f;
    EXPECT_EQ(jit.out, run.out) << f;
    EXPECT_NE(jit.err.find("uopc schedule: "), std::string::npos) << f << ": not compiled to a plan\n" << jit.err;
  }
}

// A plan checks undefined ops only where one can be: a * b + a (f32, i32)
// has no status buffer and no check code (the poison ranks 1000000 - code,
// "i32 999999" for the first check, compares and selects); a // b and a
// float-to-i32 cast have both.
TEST(PlanAccept, NoCheckCodeWhereNothingIsUndefined) {
  struct Case {
    const char *text;
    bool checks;
  } cases[] = {
      {"%a = param : slot=0 dtype=f32 shape=(16,)\n%b = param : slot=1 dtype=f32 shape=(16,)\n%m = mul %a, %b\n%r = add %m, %a\n", false},
      {"%a = param : slot=0 dtype=i32 shape=(16,)\n%b = param : slot=1 dtype=i32 shape=(16,)\n%m = mul %a, %b\n%r = add %m, %a\n", false},
      {"%a = param : slot=0 dtype=i32 shape=(16,)\n%b = param : slot=1 dtype=i32 shape=(16,)\n%q = floordiv %a, %b\n", true},
      {"%a = param : slot=0 dtype=f32 shape=(16,)\n%q = cast %a : dtype=i32\n", true},
  };
  for (const Case &k : cases) {
    SCOPED_TRACE(k.text);
    Ctx c;
    uopc_error e;
    uopc_node *root = uopc_uir_parse(c, k.text, strlen(k.text), "t.uir", &e);
    ASSERT_NE(root, nullptr) << e.msg;
    uopc_node **kernels = nullptr;
    uint32_t nk = 0;
    char *sched = nullptr;
    ASSERT_EQ(uopc_plan_schedule(c, root, &kernels, &nk, &sched, &e), UOPC_OK) << e.msg;
    std::string st = sched;
    free(sched);
    free(kernels);
    EXPECT_EQ(nk, 1u);
    char *ir = uopc_plan_emit(c, root, nullptr, 0, &e);
    ASSERT_NE(ir, nullptr) << e.msg;
    std::string t = ir;
    free(ir);
    EXPECT_EQ(st.find("status") != std::string::npos, k.checks) << st;
    EXPECT_EQ(st.find("checks undefined ops") != std::string::npos, k.checks) << st;
    EXPECT_EQ(t.find("i32 999999") != std::string::npos, k.checks) << t;
    if (k.checks) {
      // the loop every call runs records no operands (the recording variant
      // runs only after a failure): its stores are the result's and the
      // status rank's, nothing carried from element to element but the max
      size_t n = 0;
      for (size_t at = 0; (at = t.find(" store ", at)) != std::string::npos; at++) n++;
      EXPECT_EQ(n, 2u) << t;
    }
    if (!k.checks) {
      // no compare but the loop's own, no select: the check code is compares
      // and selects on the operands and the status words
      size_t n = 0;
      for (size_t at = 0; (at = t.find(" icmp ", at)) != std::string::npos; at++) n++;
      EXPECT_EQ(n, 1u) << t;
      EXPECT_EQ(t.find(" select "), std::string::npos) << t;
    }
  }
}

// Which failing element a plan's error names (docs/semantics.md, "Undefined
// operations in plans"): the operands come from the kernel that computes the
// op, run again in its recording variant after the failure, and are those of
// the last element, in loop order, whose poison at the kernel's store has the
// failing check's rank: an element that a WHERE drops does not record, nor
// does another check of the same kind (the two cases, against `uopc run`:
// PlanPoison.ErrorNamesAnElementThatReaches).  The call fails the
// same way twice and writes the same result both times (nothing of the
// first call is left over), and a call without an undefined element succeeds.
std::string PoisonCall(const char *text, const void *a, const void *b, uopc_dtype t, uopc_dtype ot, int64_t n) {
  Ctx c;
  uopc_error e;
  uopc_node *root = uopc_uir_parse(c, text, strlen(text), "t.uir", &e);
  if (!root) return std::string("parse: ") + e.msg;
  uopc_plan *p = uopc_plan_compile(c, root, nullptr, &e);
  if (!p) return std::string("compile: ") + e.msg;
  std::vector<char> o((size_t)n * 4), first;
  const int64_t s[] = {n};
  uopc_tensor args[2] = {{(void *)a, t, 1, s}, {(void *)b, t, 1, s}}, out = {o.data(), ot, 1, s};
  std::string r;
  for (int k = 0; k < 2; k++) {
    uopc_status st = uopc_plan_call(p, args, 2, &out, &e);
    std::string one = st == UOPC_OK ? "ok" : std::to_string(e.line) + ":" + std::to_string(e.col) + ": " + e.msg;
    if (k == 0) r = one, first = o;
    else if (one != r || o != first) r += " (the second call differs: " + one + ")";
  }
  uopc_plan_free(p);
  return r;
}

TEST(PlanPoison, ErrorNamesTheRecordedElement) {
  const int64_t N = 1000;
  std::vector<int32_t> a(N), b(N), b1(N);
  std::vector<float> f(N), g(N);
  for (int64_t i = 0; i < N; i++) {
    a[i] = (int32_t)(i * 7 - 3000);
    b[i] = (int32_t)(i % 13) - 6; /* 0 at i = 6, 19, ..., 994 */
    b1[i] = b[i] ? b[i] : 1;
    f[i] = (float)i * 3e6f; /* outside the i32 range from i = 716 */
    g[i] = (float)i;
  }
  const char *div =
      "%a = param : slot=0 dtype=i32 shape=(1000,)\n%b = param : slot=1 dtype=i32 shape=(1000,)\n"
      "%q = floordiv %a, %b\n%m = floormod %a, %b\n%r = add %q, %m\n";
  const char *masked =
      "%a = param : slot=0 dtype=i32 shape=(1000,)\n%b = param : slot=1 dtype=i32 shape=(1000,)\n"
      "%q = floordiv %a, %b\n%lt = cmplt %a, 3000\n%r = where %lt, %q, 1\n";
  const char *cast =
      "%a = param : slot=0 dtype=f32 shape=(1000,)\n%b = param : slot=1 dtype=f32 shape=(1000,)\n"
      "%c = cast %a : dtype=i32\n%h = mul %b, 0.5\n%d = cast %h : dtype=i32\n%r = add %c, %d\n";
  // the failing op in a temporary (exp2: cost 8, two consumers): its kernel
  // is the one that runs again
  const char *temp =
      "%a = param : slot=0 dtype=i32 shape=(1000,)\n%b = param : slot=1 dtype=i32 shape=(1000,)\n"
      "%q = floordiv %a, %b\n%f = cast %q : dtype=f32\n%t = exp2 %f\n%u = mul %t, %t\n%r = add %u, %t\n";
  EXPECT_EQ(PoisonCall(div, a.data(), b.data(), UOPC_DT_I32, UOPC_DT_I32, N),
            "4:6: division by zero in FLOORMOD (3958 % 0)");
  // b is 0 at i = 6 + 13k; a < 3000 keeps i <= 857: the last kept one is
  // i = 851, a = 2957 (i = 994, a = 3958, is dropped by the WHERE)
  EXPECT_EQ(PoisonCall(masked, a.data(), b.data(), UOPC_DT_I32, UOPC_DT_I32, N),
            "3:6: division by zero in FLOORDIV (2957 // 0)");
  EXPECT_EQ(PoisonCall(cast, f.data(), g.data(), UOPC_DT_F32, UOPC_DT_I32, N),
            "3:6: CAST of 2996999936.0 to i32 is undefined (outside the i32 range)");
  EXPECT_EQ(PoisonCall(temp, a.data(), b.data(), UOPC_DT_I32, UOPC_DT_F32, N),
            "3:6: division by zero in FLOORDIV (3958 // 0)");
  // the same with the WHERE of masked in the temporary: its poison buffer
  // holds the rank that the WHERE leaves, so the dropped 3958 // 0 does not record
  const char *tempmasked =
      "%a = param : slot=0 dtype=i32 shape=(1000,)\n%b = param : slot=1 dtype=i32 shape=(1000,)\n"
      "%q = floordiv %a, %b\n%lt = cmplt %a, 3000\n%w = where %lt, %q, 1\n%f = cast %w : dtype=f32\n"
      "%t = exp2 %f\n%u = mul %t, %t\n%r = add %u, %t\n";
  EXPECT_EQ(PoisonCall(tempmasked, a.data(), b.data(), UOPC_DT_I32, UOPC_DT_F32, N),
            "3:6: division by zero in FLOORDIV (2957 // 0)");
  // %q in both kernels (one code, the temporary's kernel's), its poison
  // dropped in the temporary (a < -5000 never holds) and reaching the result
  // directly: the temporary's kernel records nothing, the result's does
  const char *twice =
      "%a = param : slot=0 dtype=i32 shape=(1000,)\n%b = param : slot=1 dtype=i32 shape=(1000,)\n"
      "%q = floordiv %a, %b\n%lt = cmplt %a, -5000\n%w = where %lt, %q, 1\n%f = cast %w : dtype=f32\n"
      "%t = exp2 %f\n%u = mul %t, %t\n%v = add %u, %t\n%g = cast %q : dtype=f32\n%r = add %v, %g\n";
  EXPECT_EQ(PoisonCall(twice, a.data(), b.data(), UOPC_DT_I32, UOPC_DT_F32, N),
            "3:6: division by zero in FLOORDIV (3958 // 0)");
  EXPECT_EQ(PoisonCall(temp, a.data(), b1.data(), UOPC_DT_I32, UOPC_DT_F32, N), "ok");
  EXPECT_EQ(PoisonCall(div, a.data(), b1.data(), UOPC_DT_I32, UOPC_DT_I32, N), "ok");
  uopc_plan_cache_clear();  // cached plans hold kernels: leave none to later tests
}

// The program text with "%NAME = param ..." lines of slot k given by decl[k]
// (a STACK literal for `uopc run`, a PARAM for the plan).
std::string Prog(const std::vector<std::string> &decl, const char *body) {
  std::string t;
  for (const std::string &d : decl) t += d + "\n";
  return t + body;
}

std::string Stack(const char *name, const std::vector<int32_t> &v) {
  std::string t = std::string("%") + name + " = stack ";
  for (size_t i = 0; i < v.size(); i++) t += (i ? ", " : "") + std::to_string(v[i]);
  return t;
}

// The plan's error on PARAMs bound to the vectors (line:col: message).
std::string PlanError(const std::string &text, const std::vector<std::vector<int32_t>> &in) {
  Ctx c;
  uopc_error e;
  uopc_node *root = uopc_uir_parse(c, text.c_str(), text.size(), "t.uir", &e);
  if (!root) return std::string("parse: ") + e.msg;
  uopc_plan *p = uopc_plan_compile(c, root, nullptr, &e);
  if (!p) return std::string("compile: ") + e.msg;
  const int64_t s[] = {(int64_t)in[0].size()};
  std::vector<uopc_tensor> args;
  for (const std::vector<int32_t> &v : in) args.push_back({(void *)v.data(), UOPC_DT_I32, 1, s});
  std::vector<int32_t> o(in[0].size());
  uopc_tensor out = {o.data(), UOPC_DT_I32, 1, s};
  uopc_status st = uopc_plan_call(p, args.data(), (uint32_t)args.size(), &out, &e);
  std::string r = st == UOPC_OK ? "ok" : std::to_string(e.line) + ":" + std::to_string(e.col) + ": " + e.msg;
  uopc_plan_free(p);
  return r;
}

// The two examples of the recorded operands that were another element's
// (docs/decisions.md, "The poison check off the hot path").  The expected
// message is derived from the inputs by hand; `uopc run` of the same program
// with the inputs as STACK literals reports the same error (each input has
// one undefined element that reaches the result, so run, which stops at the
// first it evaluates, and the plan, which names the last, agree), and so
// does `uopc jit-run` (the closed program through a plan), at the same .uir
// position.
TEST(PlanPoison, ErrorNamesAnElementThatReaches) {
  // where(a < 3000, a // b, 1): b = 0 at elements 0 (a = 2957, kept) and 1
  // (a = 3958, dropped: 3958 >= 3000, and last in loop order): 2957 // 0
  const std::vector<int32_t> a1 = {2957, 3958, 5, 6}, b1 = {0, 0, 1, 2};
  const char *masked = "%q = floordiv %a, %b\n%lt = cmplt %a, 3000\n%r = where %lt, %q, 1\n";
  // a // b + where(a < 50, a % c, 0): b = 0 at element 0 (a = 11) reaches;
  // c = 0 at element 5 (a = 77) is dropped (77 >= 50): 11 // 0, not 77 // 0
  const std::vector<int32_t> a2 = {11, 22, 33, 44, 55, 77, 88, 99}, b2 = {0, 1, 1, 1, 1, 1, 1, 1},
                             c2 = {1, 1, 1, 1, 1, 0, 1, 1};
  const char *two = "%x = floordiv %a, %b\n%lt = cmplt %a, 50\n%m = floormod %a, %c\n%w = where %lt, %m, 0\n"
                    "%r = add %x, %w\n";
  struct Case {
    const char *body;
    std::vector<std::vector<int32_t>> in;
    const char *want;  // line:col of the op in the PARAM text, message
  } cases[] = {
      {masked, {a1, b1}, "3:6: division by zero in FLOORDIV (2957 // 0)"},
      {two, {a2, b2, c2}, "4:6: division by zero in FLOORDIV (11 // 0)"},
  };
  const char *names[] = {"a", "b", "c"};
  for (const Case &k : cases) {
    std::vector<std::string> params, stacks;
    for (size_t j = 0; j < k.in.size(); j++) {
      params.push_back(std::string("%") + names[j] + " = param : slot=" + std::to_string(j) +
                       " dtype=i32 shape=(" + std::to_string(k.in[j].size()) + ",)");
      stacks.push_back(Stack(names[j], k.in[j]));
    }
    EXPECT_EQ(PlanError(Prog(params, k.body), k.in), k.want);
    // run and jit-run of the closed program (the same lines: jit-run gives
    // the same position)
    std::string f = UirFile("reach.uir", Prog(stacks, k.body)), msg = strstr(k.want, ": ") + 2;
    std::string pos = std::string(k.want, strstr(k.want, ": ") - k.want);
    for (const char *verb : {"run ", "jit-run "}) {
      CliRun r = Uopc(verb + Q(f));
      EXPECT_NE(r.status, 0) << verb << k.body;
      EXPECT_NE(r.err.find(msg), std::string::npos) << verb << k.body << "\n" << r.err;
      if (!strcmp(verb, "jit-run "))  // run's error names no position
        EXPECT_NE(r.err.find(":" + pos + ": error: "), std::string::npos) << verb << k.body << "\n" << r.err;
    }
  }
  uopc_plan_cache_clear();
}

}  // namespace
