#include "support/symprop.h"

#include <cmath>
#include <random>
#include <vector>

#include "support/fmt.h"
#include "support/refeval.h"

namespace {

const int64_t kRangeEnds[] = {3, 5, 8, 16, 1000, 65536, 16777216, 2147483647};
constexpr int kRanges = 9;  // the last one gets a random end per batch

struct Gen {
  uopc_ctx *c;
  std::mt19937_64 &rng;
  std::vector<uopc_node *> ranges, params;  // params: x, y (i32), f (f32)
  std::vector<uopc_node *> pool;            // earlier subexpressions, for sharing
  int in_body = 0;                          // generating a CALL body
  int64_t rnd(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
  bool one_in(int n) { return rnd(0, n - 1) == 0; }
  uopc_node *I(int64_t v) { return uopc_const_i(c, UOPC_DT_I32, v); }
  int64_t any_i32() {
    switch (rnd(0, 4)) {
    case 0: case 1: return rnd(-8, 8);
    case 2: return rnd(0, 1) ? INT32_MIN + rnd(0, 4) : INT32_MAX - rnd(0, 4);
    case 3: {
      int64_t p = int64_t(1) << rnd(0, 30);
      return (rnd(0, 1) ? p : -p) + rnd(-1, 1);
    }
    default: return rnd(INT32_MIN, INT32_MAX);
    }
  }
  uopc_node *konst() { return I(any_i32()); }
  uopc_node *leaf() {
    int k = (int)rnd(0, 9);
    if (k < 4) return ranges[rnd(0, (int64_t)ranges.size() - 1)];
    if (k < 7) return params[rnd(0, 1)];
    if (k < 8 && !pool.empty() && !in_body) return pool[rnd(0, (int64_t)pool.size() - 1)];
    return konst();
  }
  uopc_node *divisor(int d) {
    switch (rnd(0, 6)) {
    case 0: case 1: return I(rnd(1, 9));
    case 2: return I(rnd(-9, -1));
    case 3: return I(int64_t(1) << rnd(0, 30));
    case 4: {
      const int64_t big[] = {1073741824, -1073741824, INT32_MAX, INT32_MIN, 65536, 16777216, 46341};
      return I(big[rnd(0, 6)]);
    }
    case 5: return I(any_i32() | 1);
    default: return expr(d - 1);  // may be 0: undefined there
    }
  }
  uopc_node *fexpr(int d) {  // an f32 scalar
    if (d <= 0 || one_in(3)) {
      const float fk[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 3.0f, 1e9f, 2147483648.0f, INFINITY, NAN};
      int k = (int)rnd(0, 12);
      if (k < 10) return uopc_const_f(c, UOPC_DT_F32, fk[k]);
      if (k == 10 && !in_body) return params[2];
      return uopc_cast(c, expr(d - 1), UOPC_DT_F32);
    }
    switch (rnd(0, 5)) {
    case 0: return uopc_add(c, fexpr(d - 1), fexpr(d - 1));
    case 1: return uopc_mul(c, fexpr(d - 1), fexpr(d - 1));
    case 2: return uopc_max(c, fexpr(d - 1), fexpr(d - 1));
    case 3: return uopc_alu1(c, UOPC_OP_RECIP, fexpr(d - 1));
    default: return uopc_cast(c, expr(d - 1), UOPC_DT_F32);
    }
  }
  uopc_node *cond(int d) {  // a bool scalar
    switch (rnd(0, 5)) {
    case 0: case 1: return uopc_lt(c, expr(d - 1), rnd(0, 1) ? expr(d - 1) : konst());
    case 2: return uopc_ne(c, expr(d - 1), rnd(0, 1) ? expr(d - 1) : konst());
    case 3: return uopc_cast(c, expr(d - 1), UOPC_DT_BOOL);
    case 4: return uopc_lt(c, fexpr(d - 1), fexpr(d - 1));
    default: return uopc_ne(c, fexpr(d - 1), fexpr(d - 1));
    }
  }
  uopc_node *call(int d) {  // CALL(body over x, y, ..., a0, a1)
    in_body++;
    uopc_node *body = expr(d - 1);
    in_body--;
    uopc_node *args[2] = {expr(d - 1), expr(d - 1)};
    return uopc_call(c, body, args, 2, nullptr);
  }
  uopc_node *expr(int d) {  // an i32 scalar
    if (d <= 0 || one_in(4)) return leaf();
    uopc_node *r;
    switch (rnd(0, 15)) {
    case 0: case 1: r = uopc_add(c, expr(d - 1), expr(d - 1)); break;
    case 2: r = uopc_add(c, expr(d - 1), konst()); break;
    case 3: case 4: r = uopc_mul(c, expr(d - 1), konst()); break;
    case 5: r = uopc_mul(c, expr(d - 1), expr(d - 1)); break;
    case 6: r = uopc_idiv(c, expr(d - 1), divisor(d)); break;
    case 7: r = uopc_mod(c, expr(d - 1), divisor(d)); break;
    case 8: r = uopc_max(c, expr(d - 1), rnd(0, 1) ? expr(d - 1) : konst()); break;
    case 9: r = uopc_where(c, cond(d), expr(d - 1), expr(d - 1)); break;
    case 10: r = uopc_cast(c, cond(d), UOPC_DT_I32); break;
    case 11: r = uopc_cast(c, fexpr(d - 1), UOPC_DT_I32); break;
    case 12: r = call(d); break;
    case 13: r = uopc_add(c, uopc_mul(c, expr(d - 1), konst()), expr(d - 1)); break;
    default: r = uopc_add(c, expr(d - 1), I(rnd(-8, 8))); break;
    }
    if (r && !in_body && one_in(3)) pool.push_back(r);
    return r;
  }
};

RefVal param_value(Gen &g, int slot) {
  if (slot == 2) {
    const float fv[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.25f, 1e9f, -3e9f, INFINITY, -INFINITY, NAN, 1e-45f};
    if (g.one_in(2)) return ref_f(fv[g.rnd(0, 10)]);
    return ref_f((float)std::ldexp((double)g.rnd(-1000000, 1000000), (int)g.rnd(-30, 20)));
  }
  if (g.one_in(3)) return ref_i(g.rnd(-1000, 1000));
  return ref_i(g.any_i32());
}

int64_t range_value(Gen &g, int64_t end) {
  switch (g.rnd(0, 3)) {
  case 0: return 0;
  case 1: return end - 1;
  default: return g.rnd(0, end - 1);
  }
}

std::string show_env(const RefEnv &env) {
  std::string s = " at";
  for (size_t k = 0; k < env.range.size(); k++) s += " r" + std::to_string(k) + "=" + std::to_string(env.range[k]);
  s += " x=" + std::to_string(env.param[0].i) + " y=" + std::to_string(env.param[1].i);
  s += " f=" + std::to_string(env.param[2].f);
  return s;
}

std::string show_val(const RefVal &v) { return v.def ? std::to_string(v.i) : std::string("undefined"); }

}  // namespace

PropStats sym_property(const PropOpts &o) {
  PropStats st;
  std::mt19937_64 rng(o.seed);
  const uopc_matcher *rules = o.rules ? o.rules : uopc_rules_symbolic();
  const uint64_t batch = 2000;  // a fresh context every batch bounds memory
  RefProg pe, ps;
  for (uint64_t done = 0; done < o.exprs;) {
    Ctx c;
    uopc_ctx_set_check(c, 0);
    Gen g{c, rng, {}, {}, {}, 0};
    std::vector<int64_t> ends(std::begin(kRangeEnds), std::end(kRangeEnds));
    ends.push_back(g.rnd(1, INT32_MAX));
    for (int k = 0; k < kRanges; k++) g.ranges.push_back(uopc_range(c, g.I(ends[k]), k));
    g.params = {uopc_param(c, 0, UOPC_DT_I32, nullptr, 0), uopc_param(c, 1, UOPC_DT_I32, nullptr, 0),
                uopc_param(c, 2, UOPC_DT_F32, nullptr, 0)};
    for (uint64_t b = 0; b < batch && done < o.exprs; b++, done++) {
      uopc_node *e = g.expr(o.depth);
      st.exprs++;
      auto fail = [&](uint64_t &counter, const std::string &what) {
        counter++;
        if (st.first_failure.empty()) st.first_failure = what;
      };
      if (!e) {
        fail(st.errors, "generator built a bad node: " + c.err());
        uopc_ctx_clear_error(c);
        continue;
      }
      uopc_node *s = uopc_simplify_with(c, e, rules);
      if (!s) {
        fail(st.errors, "simplify failed on " + fmt(c, e) + ": " + c.err());
        uopc_ctx_clear_error(c);
        continue;
      }
      if (uopc_graph_size(c, s) < uopc_graph_size(c, e)) st.smaller++;
      if (uopc_graph_rewrite(c, s, rules, nullptr, 0) != s) fail(st.not_fixed, "not a fixed point: " + fmt(c, s));
      if (!pe.build(e) || !ps.build(s)) {
        fail(st.errors, "evaluator cannot read " + fmt(c, e) + " -> " + fmt(c, s));
        continue;
      }
      int64_t lo = uopc_vmin(c, e), hi = uopc_vmax(c, e);
      bool check_run = o.run_every > 0 && st.exprs % (uint64_t)o.run_every == 0;
      for (int k = 0; k < o.evals; k++) {
        RefEnv env;
        for (int r = 0; r < kRanges; r++) env.range.push_back(range_value(g, ends[r]));
        for (int p = 0; p < 3; p++) env.param.push_back(param_value(g, p));
        RefVal ve = pe.eval(env);
        if (!ve.def) {
          st.skipped++;
          continue;
        }
        st.evals++;
        RefVal vs = ps.eval(env);
        if (!ref_same(ve, vs, UOPC_DT_I32))
          fail(st.wrong, "value changed: " + fmt(c, e) + " -> " + fmt(c, s) + show_env(env) + ": " + show_val(ve) +
                             " vs " + show_val(vs));
        if (ve.i < lo || ve.i > hi)
          fail(st.unsound, "bounds [" + std::to_string(lo) + ", " + std::to_string(hi) + "] miss " +
                               std::to_string(ve.i) + " of " + fmt(c, e) + show_env(env));
        if (check_run) {  // run(CALL(e, x, y, f)) with the ranges bound too
          check_run = false;
          st.runs++;
          std::vector<uopc_node *> from, to;
          for (int r = 0; r < kRanges; r++) from.push_back(g.ranges[r]), to.push_back(g.I(env.range[r]));
          uopc_node *closed = uopc_substitute(c, e, from.data(), to.data(), (uint32_t)from.size());
          uopc_node *args[3] = {g.I(env.param[0].i), g.I(env.param[1].i),
                                uopc_const_f(c, UOPC_DT_F32, (double)env.param[2].f)};
          uopc_node *prog = closed ? uopc_call(c, closed, args, 3, nullptr) : nullptr;
          uopc_node *v = prog ? uopc_run_value(c, prog) : nullptr;
          if (!v || v->op != UOPC_OP_CONST || v->arg.i != ve.i)
            fail(st.run_wrong, "run of " + fmt(c, e) + show_env(env) + " gives " +
                                   (v ? fmt(c, v) : "an error: " + c.err()) + ", want " + show_val(ve));
          uopc_ctx_clear_error(c);
        }
      }
    }
  }
  return st;
}
