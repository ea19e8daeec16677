#include "support/progen.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace {

struct PG {
  uopc_ctx *c;
  std::mt19937_64 &rng;
  std::vector<uopc_node *> pool;
  int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  bool one_in(int n) { return rnd(0, n - 1) == 0; }

  uopc_dtype dtype() {
    const uopc_dtype d[] = {UOPC_DT_I32, UOPC_DT_I32, UOPC_DT_F32, UOPC_DT_F32, UOPC_DT_F16, UOPC_DT_BOOL};
    return d[rnd(0, 5)];
  }
  uopc_node *scalar(uopc_dtype t) {
    switch (t) {
    case UOPC_DT_BOOL: return uopc_const_i(c, t, rnd(0, 1));
    case UOPC_DT_I32: {
      const int64_t edge[] = {0, 1, -1, 2, 3, 7, -5, 100, INT32_MAX, INT32_MIN, 65536, -65536};
      return uopc_const_i(c, t, one_in(3) ? edge[rnd(0, 11)] : rnd(-20, 20));
    }
    default: {
      const double edge[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-45, 65504.0, 1e30, INFINITY, -INFINITY, NAN, 3.0};
      return uopc_const_f(c, t, one_in(3) ? edge[rnd(0, 11)] : rnd(-40, 40) / 4.0);
    }
    }
  }
  std::vector<int32_t> shape() {
    std::vector<int32_t> s(rnd(0, 3));
    for (auto &d : s) d = rnd(1, 4);
    return s;
  }
  uopc_node *literal(uopc_dtype t, const std::vector<int32_t> &s, size_t axis = 0) {
    if (axis == s.size()) return scalar(t);
    std::vector<uopc_node *> e;
    for (int i = 0; i < s[axis]; i++) e.push_back(literal(t, s, axis + 1));
    return uopc_stack(c, e.data(), (uint32_t)e.size());
  }
  uopc_node *leaf(uopc_dtype t, const std::vector<int32_t> *want) {
    if (!pool.empty() && one_in(2)) {  // shared subgraphs
      std::vector<uopc_node *> ok;
      for (uopc_node *u : pool)
        if (u->dtype == t && (!want || (u->ndim == want->size() && std::equal(want->begin(), want->end(), u->shape))))
          ok.push_back(u);
      if (!ok.empty()) return ok[rnd(0, (int)ok.size() - 1)];
    }
    std::vector<int32_t> s = want ? *want : shape();
    if (s.empty() && one_in(2)) return scalar(t);
    return literal(t, s);
  }
  uopc_node *keep(uopc_node *u) {
    if (u) pool.push_back(u);
    return u;
  }
  // a node of dtype t; of shape *want when given
  uopc_node *node(int d, uopc_dtype t, const std::vector<int32_t> *want) {
    if (d <= 0 || one_in(5)) return leaf(t, want);
    for (int tries = 0; tries < 8; tries++) {
      uopc_node *r = attempt(d, t, want);
      if (r && r->dtype == t && (!want || (r->ndim == want->size() && std::equal(want->begin(), want->end(), r->shape))))
        return keep(r);
      uopc_ctx_clear_error(c);
    }
    return leaf(t, want);
  }
  std::vector<int32_t> shape_of(uopc_node *u) { return std::vector<int32_t>(u->shape, u->shape + u->ndim); }
  uopc_node *attempt(int d, uopc_dtype t, const std::vector<int32_t> *want) {
    bool fl = uopc_dtype_is_float(t);
    switch (rnd(0, 13)) {
    case 0: case 1: {  // binary elementwise of dtype t
      uopc_op ops[] = {UOPC_OP_ADD, UOPC_OP_MUL, UOPC_OP_MAX, UOPC_OP_FLOORDIV, UOPC_OP_FLOORMOD};
      uopc_op op = ops[rnd(0, t == UOPC_DT_I32 ? 4 : 2)];
      uopc_node *a = node(d - 1, t, want);
      std::vector<int32_t> s = shape_of(a);
      uopc_node *b = one_in(3) ? scalar(t) : node(d - 1, t, &s);
      if (b->ndim == 0 && a->ndim) {  // the broadcast sugar
        std::vector<int32_t> ones(a->ndim, 1);
        b = uopc_expand(c, uopc_reshape(c, b, ones.data(), a->ndim), a->shape, a->ndim);
      }
      return one_in(2) ? uopc_alu2(c, op, a, b) : uopc_alu2(c, op, b, a);
    }
    case 2: {  // comparison -> bool
      if (t != UOPC_DT_BOOL) return nullptr;
      uopc_dtype o = dtype();
      uopc_node *a = node(d - 1, o, want);
      std::vector<int32_t> s = shape_of(a);
      return uopc_alu2(c, one_in(2) ? UOPC_OP_CMPLT : UOPC_OP_CMPNE, a, node(d - 1, o, &s));
    }
    case 3: {  // unary float
      if (!fl) return nullptr;
      uopc_op ops[] = {UOPC_OP_RECIP, UOPC_OP_SQRT, UOPC_OP_EXP2, UOPC_OP_LOG2, UOPC_OP_SIN};
      return uopc_alu1(c, ops[rnd(0, 4)], node(d - 1, t, want));
    }
    case 4: {  // cast
      return uopc_cast(c, node(d - 1, dtype(), want), t);
    }
    case 5: {  // where
      uopc_node *a = node(d - 1, t, want);
      std::vector<int32_t> s = shape_of(a);
      return uopc_where(c, node(d - 1, UOPC_DT_BOOL, &s), a, node(d - 1, t, &s));
    }
    case 6: {  // reshape
      uopc_node *a = node(d - 1, t, nullptr);
      std::vector<int32_t> s;
      if (want) s = *want;
      else {
        int64_t n = uopc_numel(a);
        for (int f : {2, 3, 4})
          while (n % f == 0 && n > 1 && one_in(2)) s.push_back(f), n /= f;
        if (n > 1) s.push_back((int32_t)n);
        std::shuffle(s.begin(), s.end(), rng);
      }
      return uopc_reshape(c, a, s.data(), (uint32_t)s.size());
    }
    case 7: {  // expand
      std::vector<int32_t> s = want ? *want : shape();
      std::vector<int32_t> in = s;
      for (auto &x : in)
        if (one_in(2)) x = 1;
      return uopc_expand(c, node(d - 1, t, &in), s.data(), (uint32_t)s.size());
    }
    case 8: {  // permute
      uopc_node *a = node(d - 1, t, nullptr);
      std::vector<int32_t> perm(a->ndim);
      for (uint32_t i = 0; i < a->ndim; i++) perm[i] = (int32_t)i;
      std::shuffle(perm.begin(), perm.end(), rng);
      return uopc_permute(c, a, perm.data(), a->ndim);
    }
    case 9: {  // shrink
      uopc_node *a = node(d - 1, t, nullptr);
      std::vector<int32_t> b;
      for (uint32_t i = 0; i < a->ndim; i++) {
        int lo = rnd(0, a->shape[i] - 1), hi = rnd(lo + 1, a->shape[i]);
        b.push_back(lo), b.push_back(hi);
      }
      return uopc_shrink(c, a, b.data(), a->ndim);
    }
    case 10: {  // reduce over the last 1-2 axes
      std::vector<int32_t> s = want ? *want : shape();
      if (s.size() > 2) s.pop_back();
      int k = rnd(1, 2);
      for (int i = 0; i < k; i++) s.push_back(rnd(1, 4));
      uopc_op ops[] = {UOPC_OP_ADD, UOPC_OP_MUL, UOPC_OP_MAX};
      return uopc_reduce(c, node(d - 1, t, &s), ops[rnd(0, 2)], k);
    }
    case 11: {  // stack of shaped values
      std::vector<int32_t> s = shape();
      if (s.size() > 2) s.pop_back();
      uopc_node *e[3];
      int n = rnd(1, 3);
      for (int i = 0; i < n; i++) e[i] = node(d - 1, t, &s);
      return uopc_stack(c, e, (uint32_t)n);
    }
    case 12: {  // index by constants
      uopc_node *a = node(d - 1, t, nullptr);
      if (!a->ndim) return nullptr;
      uint32_t k = (uint32_t)rnd(1, (int)a->ndim);
      std::vector<uopc_node *> idx(k);
      for (uint32_t i = 0; i < k; i++) idx[i] = uopc_const_i(c, UOPC_DT_I32, rnd(0, a->shape[i] - 1));
      return uopc_index(c, a, idx.data(), k);
    }
    default: {  // a call: body over PARAM 0 (and 1), applied to computed values
      std::vector<int32_t> s = want ? *want : shape();
      uopc_node *p0 = uopc_param(c, 0, t, s.data(), (uint32_t)s.size());
      uopc_node *p1 = uopc_param(c, 1, t, s.data(), (uint32_t)s.size());
      uopc_node *body;
      if (t == UOPC_DT_BOOL) body = uopc_mul(c, p0, one_in(2) ? p1 : p0);
      else body = uopc_add(c, uopc_mul(c, p0, p1), one_in(2) ? p0 : p1);
      uopc_node *args[2] = {node(d - 1, t, &s), node(d - 1, t, &s)};
      return uopc_call(c, body, args, 2, nullptr);
    }
    }
  }
};

}  // namespace

uopc_node *gen_program(uopc_ctx *c, std::mt19937_64 &rng, int depth) {
  PG g{c, rng, {}};
  return g.node(depth, g.dtype(), nullptr);
}

std::string run_text(uopc_ctx *c, uopc_node *u) {
  uopc_ctx_clear_error(c);
  uopc_node *v = uopc_run_value(c, u);
  char *s = v ? uopc_value_print(c, v) : nullptr;
  std::string r = s ? s : "error: " + std::string(uopc_ctx_error(c) ? uopc_ctx_error(c)->msg : "?");
  if (s) uopc_mem_free(c, s, strlen(s) + 1);
  uopc_ctx_clear_error(c);
  return r;
}

std::string plan_text(uopc_ctx *c, uopc_node *u, uopc_tier tier, uint32_t threads) {
  return plan_text_opts(c, u, {tier, 0, threads});
}

std::string plan_text_opts(uopc_ctx *c, uopc_node *u, const uopc_compile_opts &o) {
  uopc_error e;
  uopc_plan *p = uopc_plan_compile(c, u, &o, &e);
  if (!p) return "error: " + std::string(e.msg);
  uopc_tensor out;
  const int64_t *shape;
  uopc_plan_result(p, &out.dtype, &out.ndim, &shape);
  out.shape = shape;
  int64_t n = 1;
  for (uint32_t d = 0; d < out.ndim; d++) n *= shape[d];
  // 64-byte aligned, as a host that wants streaming stores passes it: a plan
  // whose result kernel streams then runs its streaming copy (docs/loops.md)
  std::vector<unsigned char> data((size_t)n * uopc_dtype_size(out.dtype) + 64);
  out.data = data.data() + (64 - (uintptr_t)data.data() % 64) % 64;
  std::string r;
  if (uopc_plan_call(p, nullptr, 0, &out, &e) != UOPC_OK) {
    r = "error: " + std::string(e.msg);
  } else {
    char *s = uopc_tensor_print(c, &out);
    r = s ? s : "error: print";
    if (s) uopc_mem_free(c, s, strlen(s) + 1);
  }
  uopc_plan_free(p);
  uopc_ctx_clear_error(c);
  return r;
}

std::string strict_run_text(uopc_ctx *c, uopc_node *u) {
  static uopc_matcher *m = [] {
    std::vector<uopc_rule> rules;
    const uopc_matcher *sym = uopc_rules_symbolic();
    for (size_t i = 0; i < uopc_matcher_size(sym); i++) {
      const uopc_rule *r = uopc_matcher_rule(sym, i);
      if (!strcmp(r->name, "fold") || !strcmp(r->name, "where_const")) rules.push_back(*r);
    }
    const uopc_matcher *ev = uopc_rules_evaluate();
    for (size_t i = 0; i < uopc_matcher_size(ev); i++) rules.push_back(*uopc_matcher_rule(ev, i));
    uopc_error e;
    return uopc_matcher_new(rules.data(), rules.size(), &e);
  }();
  uopc_ctx_clear_error(c);
  uopc_node *v = uopc_graph_rewrite(c, u, m, nullptr, 0);
  char *s = v ? uopc_value_print(c, v) : nullptr;
  std::string r = s ? s : "error: " + std::string(uopc_ctx_error(c) ? uopc_ctx_error(c)->msg : "?");
  if (s) uopc_mem_free(c, s, strlen(s) + 1);
  uopc_ctx_clear_error(c);
  return r;
}

bool plan_agrees(uopc_ctx *c, uopc_node *u, const std::string &run, const std::string &plan) {
  bool rerr = run.rfind("error:", 0) == 0, perr = plan.rfind("error:", 0) == 0;
  if (rerr || run == plan) return rerr == perr || run == plan;
  if (!perr) return false;
  static const char *undef[] = {"division by zero", "overflow in", "CAST of", "out of bounds"};
  bool is_undef = false;
  for (const char *w : undef) is_undef |= plan.find(w) != std::string::npos;
  return is_undef && strict_run_text(c, u).rfind("error:", 0) == 0;
}

std::string random_plans_disagree(uint64_t seed, unsigned flags) {
  std::mt19937_64 rng(seed);
  std::string bad;
  for (int round = 0; round < 6; round++) {
    uopc_ctx *c = uopc_ctx_new(nullptr);
    if (!c) return "out of memory";
    uopc_ctx_set_check(c, 0);
    for (int k = 0; k < 10; k++) {
      uopc_node *u = gen_program(c, rng, 4);
      for (uint32_t threads : {1u, 2u}) {
        uopc_compile_opts o = {round % 2 ? UOPC_TIER_STRONG : UOPC_TIER_FAST, flags, threads};
        std::string want = run_text(c, u), got = plan_text_opts(c, u, o);
        if (plan_agrees(c, u, want, got)) continue;
        char *t = uopc_uir_print(c, u);
        bad += "run: " + want + "\nplan (" + std::to_string(threads) + " threads): " + got + "\nprogram:\n" +
               (t ? t : "") + "\n";
        if (t) uopc_mem_free(c, t, strlen(t) + 1);
      }
    }
    uopc_ctx_free(c);
  }
  return bad;
}
