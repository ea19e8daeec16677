#include "support/symprop.h"

#include <random>
#include <unordered_map>
#include <vector>

#include "support/fmt.h"

namespace {

const int kRangeEnds[] = {3, 5, 8, 16};

struct Gen {
  uopc_ctx *c;
  std::mt19937_64 &rng;
  std::vector<uopc_node *> leaves;  // ranges and params
  int64_t rnd(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
  uopc_node *I(int64_t v) { return uopc_const_i(c, UOPC_DT_I32, v); }
  uopc_node *leaf() {
    if (rnd(0, 9) < 6) return leaves[rnd(0, (int64_t)leaves.size() - 1)];
    return I(rnd(-6, 6));
  }
  uopc_node *cond(int d) { return uopc_lt(c, expr(d - 1), rnd(0, 1) ? expr(d - 1) : I(rnd(-4, 12))); }
  uopc_node *divisor() {
    int64_t v = rnd(-3, 9);
    return I(v == 0 ? 1 : v);
  }
  uopc_node *expr(int d) {
    if (d <= 0 || rnd(0, 3) == 0) return leaf();
    switch (rnd(0, 9)) {
    case 0: case 1: return uopc_add(c, expr(d - 1), expr(d - 1));
    case 2: case 3: return uopc_mul(c, expr(d - 1), I(rnd(-4, 6)));
    case 4: return uopc_idiv(c, expr(d - 1), divisor());
    case 5: return uopc_mod(c, expr(d - 1), divisor());
    case 6: return uopc_max(c, expr(d - 1), expr(d - 1));
    case 7: return uopc_where(c, cond(d), expr(d - 1), expr(d - 1));
    case 8: return uopc_cast(c, cond(d), UOPC_DT_I32);
    default: return uopc_add(c, expr(d - 1), I(rnd(-8, 8)));
    }
  }
};

int64_t fdiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Scratch shared by every walk: a stamp per node id (this walk's stamp means
// "seen"), each node's position, the walk's stack.
struct Walk {
  std::vector<uint32_t> mark;
  std::vector<int> pos;
  std::vector<std::pair<uopc_node *, uint32_t>> stack;
  uint32_t stamp = 0;
};

// An expression flattened once (post-order, sources as positions) so that
// each evaluation is a loop over a small array.  The walk is the harness's
// own (a stamp per node id instead of uopc_toposort's allocations); its
// length is the graph size.
struct Prog {
  struct Ins {
    uint8_t op;
    int a, b, d;
    int64_t imm;  // CONST: the value; RANGE/PARAM: the env index
  };
  std::vector<Ins> ins;
  // Flattens root (the array is reused: no allocation once it is large enough).
  void build(uopc_ctx *c, uopc_node *root, Walk &w) {
    ins.clear();
    uint32_t nn = uopc_ctx_count(c);
    if (w.mark.size() < nn) w.mark.resize(nn, 0), w.pos.resize(nn);
    uint32_t stamp = ++w.stamp;
    std::vector<uint32_t> &mark = w.mark;
    std::vector<int> &pos = w.pos;
    auto &st = w.stack;
    st.clear();
    st.push_back({root, 0});
    mark[root->id] = stamp;
    while (!st.empty()) {
      auto &f = st.back();
      if (f.second < f.first->nsrc) {
        uopc_node *s = f.first->src[f.second++];
        if (mark[s->id] != stamp) {
          mark[s->id] = stamp;
          st.push_back({s, 0});
        }
        continue;
      }
      uopc_node *u = f.first;
      st.pop_back();
      Ins in{u->op, -1, -1, -1, 0};
      if (u->nsrc > 0) in.a = pos[u->src[0]->id];
      if (u->nsrc > 1) in.b = pos[u->src[1]->id];
      if (u->nsrc > 2) in.d = pos[u->src[2]->id];
      if (u->op == UOPC_OP_CONST) in.imm = u->arg.i;
      else if (u->op == UOPC_OP_RANGE) in.imm = u->arg.i;
      else if (u->op == UOPC_OP_PARAM) in.imm = 4 + u->arg.i;
      pos[u->id] = (int)ins.size();
      ins.push_back(in);
    }
  }
  size_t size() const { return ins.size(); }
  // Evaluates the program on L inputs at once (lanes: env[l*6 ..], RANGE
  // idx 0..3 then PARAM slot 0..1), Python semantics on int64: res[l] is the
  // value and ovf[l] is set when any value of that lane left i32 (the lane's
  // value is then meaningless; its later values are computed from 0s).
  // One dispatch per instruction for all the lanes.
  void eval(const int64_t *env, int L, int64_t *res, char *ovf, std::vector<int64_t> &vv) const {
    if (L == 20) eval_lanes<20>(env, L, res, ovf, vv);  // the usual count: loops of known length
    else eval_lanes<0>(env, L, res, ovf, vv);
  }
  template <int LC>
  void eval_lanes(const int64_t *env, int Lrun, int64_t *res, char *ovf, std::vector<int64_t> &vv) const {
    const int L = LC ? LC : Lrun;
    size_t n = ins.size();
    if (vv.size() < n * (size_t)L) vv.resize(n * (size_t)L);
    int64_t *v = vv.data();
    for (int l = 0; l < L; l++) ovf[l] = false;
    for (size_t k = 0; k < n; k++) {
      const Ins &in = ins[k];
      int64_t *o = v + k * L;
      const int64_t *A = in.a >= 0 ? v + (size_t)in.a * L : nullptr;
      const int64_t *B = in.b >= 0 ? v + (size_t)in.b * L : nullptr;
      switch (in.op) {
      case UOPC_OP_CONST: for (int l = 0; l < L; l++) o[l] = in.imm; break;
      case UOPC_OP_RANGE:
      case UOPC_OP_PARAM: for (int l = 0; l < L; l++) o[l] = env[l * 6 + in.imm]; break;
      case UOPC_OP_ADD: for (int l = 0; l < L; l++) o[l] = A[l] + B[l]; break;
      case UOPC_OP_MUL: for (int l = 0; l < L; l++) o[l] = A[l] * B[l]; break;
      case UOPC_OP_FLOORDIV: for (int l = 0; l < L; l++) o[l] = fdiv(A[l], B[l]); break;
      case UOPC_OP_FLOORMOD: for (int l = 0; l < L; l++) o[l] = A[l] - fdiv(A[l], B[l]) * B[l]; break;
      case UOPC_OP_MAX: for (int l = 0; l < L; l++) o[l] = B[l] > A[l] ? B[l] : A[l]; break;
      case UOPC_OP_CMPLT: for (int l = 0; l < L; l++) o[l] = A[l] < B[l]; break;
      case UOPC_OP_CMPNE: for (int l = 0; l < L; l++) o[l] = A[l] != B[l]; break;
      case UOPC_OP_WHERE: {
        const int64_t *D = v + (size_t)in.d * L;
        for (int l = 0; l < L; l++) o[l] = A[l] ? B[l] : D[l];
        break;
      }
      case UOPC_OP_CAST: for (int l = 0; l < L; l++) o[l] = A[l]; break;
      default: for (int l = 0; l < L; l++) o[l] = 0, ovf[l] = true;
      }
      // Only these can leave i32 when their operands are in it (constants,
      // inputs, comparisons, max, where, cast, floormod cannot).
      if (in.op != UOPC_OP_ADD && in.op != UOPC_OP_MUL && in.op != UOPC_OP_FLOORDIV) continue;
      uint64_t out = 0;  // some lane left i32 (rare): then find which
      for (int l = 0; l < L; l++) out |= ((uint64_t)o[l] + UINT64_C(0x80000000)) >> 32;
      if (out)
        for (int l = 0; l < L; l++)
          if (o[l] < INT32_MIN || o[l] > INT32_MAX) ovf[l] = true, o[l] = 0;
    }
    for (int l = 0; l < L; l++) res[l] = v[(n - 1) * L + l];
  }
};

}  // namespace

PropStats sym_property(uint64_t seed, uint64_t n_exprs, int evals_per_expr, int depth) {
  PropStats st;
  std::mt19937_64 rng(seed);
  const uint64_t batch = 20000;
  std::vector<int64_t> scratch, env, ve, vs;
  std::vector<char> ovf_e, ovf_s;  // (char: vector<bool> has no data())
  Prog pe, ps;
  // a fresh context every batch bounds memory
  for (uint64_t done = 0; done < n_exprs;) {
    Ctx c;
    Walk walk;  // node ids are per context
    Gen g{c, rng, {}};
    std::vector<uopc_node *> ranges, params;
    for (int k = 0; k < 4; k++) ranges.push_back(uopc_range(c, g.I(kRangeEnds[k]), k));
    for (int k = 0; k < 2; k++) params.push_back(uopc_param(c, k, UOPC_DT_I32, nullptr, 0));
    g.leaves = ranges;
    g.leaves.insert(g.leaves.end(), params.begin(), params.end());
    for (uint64_t b = 0; b < batch && done < n_exprs; b++, done++) {
      uopc_node *e = g.expr(depth);
      uopc_node *s = e ? uopc_simplify(c, e) : nullptr;
      st.exprs++;
      if (!s) {
        st.wrong++;
        if (st.first_failure.empty()) st.first_failure = "simplify failed: " + c.err();
        uopc_ctx_clear_error(c);
        continue;
      }
      pe.build(c, e, walk), ps.build(c, s, walk);  // their sizes are the graph sizes
      if (ps.size() < pe.size()) st.smaller++;
      if (uopc_graph_rewrite(c, s, uopc_rules_symbolic(), nullptr, 0) != s) {
        st.not_fixed++;
        if (st.first_failure.empty()) st.first_failure = "not a fixed point: " + fmt(c, s);
      }
      int64_t lo = uopc_vmin(c, e), hi = uopc_vmax(c, e);
      // the inputs first (the generator's calls in the same order as one
      // input at a time), then both programs on all of them
      int L = evals_per_expr;
      env.resize((size_t)L * 6);
      for (int k = 0; k < L; k++) {
        for (int r = 0; r < 4; r++) env[k * 6 + r] = g.rnd(0, kRangeEnds[r] - 1);
        for (int p = 0; p < 2; p++) env[k * 6 + 4 + p] = g.rnd(-1000, 1000);
      }
      ve.resize(L), vs.resize(L), ovf_e.resize(L), ovf_s.resize(L);
      pe.eval(env.data(), L, ve.data(), ovf_e.data(), scratch);
      ps.eval(env.data(), L, vs.data(), ovf_s.data(), scratch);
      for (int k = 0; k < L; k++) {
        if (ovf_e[k]) {  // the rules assume no overflow (seed 3.5, pitfalls)
          st.skipped++;
          continue;
        }
        st.evals++;
        if (ovf_s[k] || vs[k] != ve[k]) {
          st.wrong++;
          if (st.first_failure.empty())
            st.first_failure = "value changed: " + fmt(c, e) + " -> " + fmt(c, s) + ": " + std::to_string(ve[k]) +
                               " vs " + std::to_string(vs[k]);
        }
        if (ve[k] < lo || ve[k] > hi) {
          st.unsound++;
          if (st.first_failure.empty())
            st.first_failure = "bounds [" + std::to_string(lo) + ", " + std::to_string(hi) + "] miss " +
                               std::to_string(ve[k]) + " of " + fmt(c, e);
        }
      }
    }
  }
  return st;
}
