// bench_poison: what the poison check of plans (docs/semantics.md,
// "Undefined operations in plans") costs.  There is no switch that turns
// the check off, so each plan runs side by side with the same computation
// written by hand as a loop kernel (RANGE/INDEX/LOAD/STORE) through
// uopc_compile, which tracks no poison (a hand kernel's undefined op gives a
// defined, unspecified value):
//
//   div   i32 a // b + a % b          2 checked ops per element (b may be 0,
//                                     a may be INT_MIN with b = -1)
//   cast  i32(a) + i32(b * 0.5), f32  2 checked casts per element
//   ew    a * b + a, f32              nothing can be undefined: no check code
//                                     at all (the IR is checked here too)
//
// over 4M elements (16 MiB per array), N calls of each, alternating, same
// inputs (no element undefined, so both compute the same values; checked).
// Then, for a plan with checks, N calls that fail (the last element made
// undefined: b = 0, a = inf): the plain kernel, then its recording variant,
// which runs only after a failure, to find the operands for the message.
//
//   bench_poison [--reps N] [--tier fast|strong]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "timing.h"
#include "uopc/uopc.h"

namespace {

[[noreturn]] void Die(const char *what, const char *msg) {
  fprintf(stderr, "bench_poison: %s: %s\n", what, msg);
  exit(1);
}

const long N = 1 << 22;

struct Work {
  const char *name;
  uopc_dtype in_t, out_t;
  const char *expr;  // the value, over %a and %b (each the element of an input)
};

// The program: PARAMs %a, %b of shape (N,).  The kernel: the same lines over
// loads of BUFFER slots 0, 1 at RANGE %r, stored to slot 2.
std::string Program(const Work &w, bool kernel) {
  std::string t = uopc_dtype_name(w.in_t), n = std::to_string(N), s;
  if (kernel) {
    s = "%A = buffer : slot=0 dtype=" + t + " shape=(" + n + ",)\n%B = buffer : slot=1 dtype=" + t + " shape=(" + n +
        ",)\n%O = buffer : slot=2 dtype=" + uopc_dtype_name(w.out_t) + " shape=(" + n + ",)\n%r = range " + n +
        " : idx=0\n%ia = index %A, %r\n%a = load %ia\n%ib = index %B, %r\n%b = load %ib\n";
  } else {
    s = "%a = param : slot=0 dtype=" + t + " shape=(" + n + ",)\n%b = param : slot=1 dtype=" + t + " shape=(" + n + ",)\n";
  }
  s += w.expr;
  if (kernel) s += "%io = index %O, %r\n%st = store %io, %v\n%e = end %st, %r\n%k = sink %e\n";
  return s;
}

uopc_node *Parse(uopc_ctx *c, const std::string &text) {
  uopc_error e;
  uopc_node *r = uopc_uir_parse(c, text.data(), text.size(), "bench_poison.uir", &e);
  if (!r) Die("parse", e.msg);
  return r;
}

}  // namespace

int main(int argc, char **argv) {
  int reps = 21;
  uopc_tier tier = UOPC_TIER_FAST;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--tier")) tier = strcmp(argv[i + 1], "strong") ? UOPC_TIER_FAST : UOPC_TIER_STRONG;
    else return fprintf(stderr, "usage: %s [--reps N] [--tier fast|strong]\n", argv[0]), 2;
  }
  const Work works[] = {
      {"div", UOPC_DT_I32, UOPC_DT_I32, "%q = floordiv %a, %b\n%m = floormod %a, %b\n%v = add %q, %m\n"},
      {"cast", UOPC_DT_F32, UOPC_DT_I32,
       "%c = cast %a : dtype=i32\n%h = mul %b, 0.5\n%d = cast %h : dtype=i32\n%v = add %c, %d\n"},
      {"ew", UOPC_DT_F32, UOPC_DT_F32, "%m = mul %a, %b\n%v = add %m, %a\n"},
  };
  printf("%-6s %12s %18s %12s %18s %8s  %s\n", "plan", "checked ms", "(min-max)", "hand ms", "(min-max)", "cost",
         "check code in the plan's IR");
  int bad = 0;
  for (const Work &w : works) {
    uopc_ctx *c = uopc_ctx_new(nullptr);
    uopc_error e;
    uopc_compile_opts o = {tier};
    uopc_node *prog = Parse(c, Program(w, false)), *kern = Parse(c, Program(w, true));
    uopc_plan *p = uopc_plan_compile(c, prog, &o, &e);
    if (!p) Die(w.name, e.msg);
    uopc_kernel *k = uopc_compile(c, kern, &o, &e);
    if (!k) Die(w.name, e.msg);
    char *ir = uopc_plan_emit(c, prog, &o, 0, &e);
    if (!ir) Die(w.name, e.msg);
    bool has_check = strstr(ir, "i32 999999") != nullptr;
    free(ir);
    // inputs: i32 a anything but INT_MIN, b nonzero; f32 within the i32 range
    std::vector<int32_t> ai(N), bi(N), oi(N), wi(N);
    std::vector<float> af(N), bf(N), of(N), wf(N);
    uint32_t s = 12345;
    for (long i = 0; i < N; i++) {
      s = s * 1664525u + 1013904223u;
      int32_t x = (int32_t)s;
      ai[i] = x == INT32_MIN ? 0 : x;
      s = s * 1664525u + 1013904223u;
      int32_t y = (int32_t)(s >> 16) % 2000 - 1000;
      bi[i] = y ? y : 7;
      af[i] = (float)((int32_t)(s >> 1) % 2000000000) * 1.0f;
      bf[i] = (float)ai[i] * 0.75f;
    }
    bool f = w.in_t == UOPC_DT_F32;
    void *a = f ? (void *)af.data() : ai.data(), *b = f ? (void *)bf.data() : bi.data();
    void *out = w.out_t == UOPC_DT_F32 ? (void *)of.data() : oi.data();
    void *want = w.out_t == UOPC_DT_F32 ? (void *)wf.data() : wi.data();
    const int64_t shape[] = {N};
    uopc_tensor args[2] = {{a, w.in_t, 1, shape}, {b, w.in_t, 1, shape}}, ot = {out, w.out_t, 1, shape};
    void *bufs[3] = {a, b, want};
    std::vector<double> tp, th;
    for (int r = 0; r < reps + 1; r++) {  // the first pair warms up
      auto t0 = Clock::now();
      if (uopc_plan_call(p, args, 2, &ot, &e) != UOPC_OK) Die(w.name, e.msg);
      auto t1 = Clock::now();
      if (uopc_kernel_call(k, bufs, 3, &e) != UOPC_OK) Die(w.name, e.msg);
      auto t2 = Clock::now();
      if (r) tp.push_back(Ms(t0, t1)), th.push_back(Ms(t1, t2));
    }
    bool same = memcmp(out, want, (size_t)N * 4) == 0;
    bad += !same;
    Stats sp = Of(tp), sh = Of(th);
    char r1[64], r2[64];
    snprintf(r1, sizeof r1, "(%.2f-%.2f)", sp.min, sp.max);
    snprintf(r2, sizeof r2, "(%.2f-%.2f)", sh.min, sh.max);
    printf("%-6s %10.2fms %18s %10.2fms %18s %+7.0f%%  %s%s\n", w.name, sp.med, r1, sh.med, r2,
           (sp.med / sh.med - 1) * 100, has_check ? "yes" : "none", same ? "" : "  (OUTPUTS DIFFER)");
    if (has_check) {  // the cost of a failing call: the kernel runs twice
      if (f) af[N - 1] = INFINITY;
      else bi[N - 1] = 0;
      std::vector<double> tf;
      std::string msg;
      for (int r = 0; r < reps + 1; r++) {
        auto t0 = Clock::now();
        uopc_status st = uopc_plan_call(p, args, 2, &ot, &e);
        auto t1 = Clock::now();
        if (st != UOPC_ERR_EVAL) Die(w.name, "the failing call did not fail");
        if (r) tf.push_back(Ms(t0, t1));
        msg = e.msg;
      }
      Stats sf = Of(tf);
      snprintf(r1, sizeof r1, "(%.2f-%.2f)", sf.min, sf.max);
      printf("%-6s %10.2fms %18s  a failing call: %s\n", "", sf.med, r1, msg.c_str());
    }
    fflush(stdout);
    uopc_plan_free(p);
    uopc_kernel_free(k);
    uopc_ctx_free(c);
  }
  return bad ? 1 : 0;
}
