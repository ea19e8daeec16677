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
  uopc_node *I(int64_t v) { return uopc_const_i(c, UOPC_I32, v); }
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
    case 8: return uopc_cast(c, cond(d), UOPC_I32);
    default: return uopc_add(c, expr(d - 1), I(rnd(-8, 8)));
    }
  }
};

int64_t fdiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// An expression flattened once (toposort, sources as positions) so that each
// evaluation is a loop over arrays.
struct Prog {
  struct Ins {
    uopc_node *u;
    int a, b, d;
  };
  std::vector<Ins> ins;
  // pos: scratch indexed by node id
  Prog(uopc_ctx *c, uopc_node *root, std::vector<int> &pos) {
    uint32_t n;
    uopc_node **order = uopc_toposort(c, root, &n);
    pos.resize(uopc_ctx_count(c));
    for (uint32_t k = 0; k < n; k++) {
      uopc_node *u = order[k];
      pos[u->id] = (int)k;
      Ins in{u, -1, -1, -1};
      if (u->nsrc > 0) in.a = pos[u->src[0]->id];
      if (u->nsrc > 1) in.b = pos[u->src[1]->id];
      if (u->nsrc > 2) in.d = pos[u->src[2]->id];
      ins.push_back(in);
    }
    uopc_mem_free(c, order, n * sizeof *order);
  }
  // Python semantics on int64; *overflow is set when any value leaves i32.
  // env: RANGE idx 0..3 then PARAM slot 0..1
  int64_t eval(const int64_t *env, bool *overflow, std::vector<int64_t> &v) const {
    v.resize(ins.size());
    for (size_t k = 0; k < ins.size(); k++) {
      const Ins &in = ins[k];
      int64_t a = in.a >= 0 ? v[in.a] : 0, b = in.b >= 0 ? v[in.b] : 0, r = 0;
      switch (in.u->op) {
      case UOPC_CONST: r = in.u->arg.i; break;
      case UOPC_RANGE: r = env[in.u->arg.i]; break;
      case UOPC_PARAM: r = env[4 + in.u->arg.i]; break;
      case UOPC_ADD: r = a + b; break;
      case UOPC_MUL: r = a * b; break;
      case UOPC_FLOORDIV: r = fdiv(a, b); break;
      case UOPC_FLOORMOD: r = a - fdiv(a, b) * b; break;
      case UOPC_MAX: r = b > a ? b : a; break;
      case UOPC_CMPLT: r = a < b; break;
      case UOPC_CMPNE: r = a != b; break;
      case UOPC_WHERE: r = a ? b : v[in.d]; break;
      case UOPC_CAST: r = a; break;
      default: r = 0; *overflow = true;
      }
      if (r < INT32_MIN || r > INT32_MAX) *overflow = true;
      v[k] = r;
    }
    return v.back();
  }
};

}  // namespace

PropStats sym_property(uint64_t seed, uint64_t n_exprs, int evals_per_expr, int depth) {
  PropStats st;
  std::mt19937_64 rng(seed);
  const uint64_t batch = 20000;
  std::vector<int> pos;
  std::vector<int64_t> scratch;  // a fresh context every batch bounds memory
  for (uint64_t done = 0; done < n_exprs;) {
    Ctx c;
    Gen g{c, rng, {}};
    std::vector<uopc_node *> ranges, params;
    for (int k = 0; k < 4; k++) ranges.push_back(uopc_range(c, g.I(kRangeEnds[k]), k));
    for (int k = 0; k < 2; k++) params.push_back(uopc_param(c, k, UOPC_I32, nullptr, 0));
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
      if (uopc_graph_size(c, s) < uopc_graph_size(c, e)) st.smaller++;
      if (uopc_graph_rewrite(c, s, uopc_rules_symbolic(), nullptr, 0) != s) {
        st.not_fixed++;
        if (st.first_failure.empty()) st.first_failure = "not a fixed point: " + fmt(c, s);
      }
      int64_t lo = uopc_vmin(c, e), hi = uopc_vmax(c, e);
      Prog pe(c, e, pos), ps(c, s, pos);
      for (int k = 0; k < evals_per_expr; k++) {
        int64_t env[6];
        for (int r = 0; r < 4; r++) env[r] = g.rnd(0, kRangeEnds[r] - 1);
        for (int p = 0; p < 2; p++) env[4 + p] = g.rnd(-1000, 1000);
        bool ovf = false;
        int64_t ve = pe.eval(env, &ovf, scratch);
        if (ovf) {  // the rules assume no overflow (seed 3.5, pitfalls)
          st.skipped++;
          continue;
        }
        st.evals++;
        bool ovs = false;
        int64_t vs = ps.eval(env, &ovs, scratch);
        if (ovs || vs != ve) {
          st.wrong++;
          if (st.first_failure.empty())
            st.first_failure = "value changed: " + fmt(c, e) + " -> " + fmt(c, s) + ": " + std::to_string(ve) +
                               " vs " + std::to_string(vs);
        }
        if (ve < lo || ve > hi) {
          st.unsound++;
          if (st.first_failure.empty())
            st.first_failure = "bounds [" + std::to_string(lo) + ", " + std::to_string(hi) + "] miss " +
                               std::to_string(ve) + " of " + fmt(c, e);
        }
      }
    }
  }
  return st;
}
