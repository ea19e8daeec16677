// The three matching paths checked against each other on random patterns and
// random graphs (issue 9, item 5):
//   * the backtracking search (uopi_pattern_run_search): the reference, the
//     seed's UPat.match order;
//   * the compiled linear variants (uopi_pattern_run);
//   * a matcher's rewrite step (uopc_matcher_rewrite), which adds the per-op
//     candidate filter, the early reject by child ops and the trivial-group
//     shortcut: the first rule in order, and within it the first binding in
//     the search's order, whose function accepts, must be the one that fires.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "rewrite/rw.h"
#include "support/fmt.h"

namespace {

struct PatGen {
  std::mt19937_64 rng;
  int names = 0;
  explicit PatGen(uint64_t seed) : rng(seed) {}
  int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  std::string name() {  // a few names, so that some repeat
    const char *v[] = {"x", "y", "z", "w"};
    return v[rnd(0, 3)];
  }
  std::string dts() {
    switch (rnd(0, 5)) {
    case 0: return ":i32";
    case 1: return ":f32";
    case 2: return ":i32|bool";
    default: return "";
    }
  }
  std::string leaf() {
    switch (rnd(0, 7)) {
    case 0: case 1: case 2: return "$" + name() + dts();
    case 3: return "#k" + std::to_string(rnd(0, 2)) + dts();
    case 4: return "_";
    case 5: { const char *l[] = {"0", "1", "-1", "2", "0.0", "True"}; return l[rnd(0, 5)]; }
    case 6: return "(const)";
    default: return "(param)";
    }
  }
  std::string ops(int arity) {
    if (arity == 2) {
      const char *o[] = {"add", "mul", "max", "add|mul", "cmplt", "cmpne", "*", "alu"};
      return o[rnd(0, 7)];
    }
    if (arity == 1) {
      const char *o[] = {"cast", "recip", "cast|recip", "*"};
      return o[rnd(0, 3)];
    }
    return rnd(0, 1) ? "where" : "*";
  }
  std::string pat(int d) {
    if (d <= 0 || rnd(0, 4) == 0) return leaf();
    int arity = rnd(0, 5) < 4 ? 2 : rnd(0, 1) ? 1 : 3;
    bool perm = arity >= 2 && rnd(0, 2) == 0;
    std::string s = perm ? "[" : "(";
    s += ops(arity);
    for (int i = 0; i < arity; i++) s += " " + pat(d - 1);
    if (!perm && rnd(0, 9) == 0) s += " ...";
    s += perm ? "]" : ")";
    if (rnd(0, 5) == 0) s = "$" + name() + "=" + s;
    return s;
  }
};

struct GraphGen {
  uopc_ctx *c;
  std::mt19937_64 &rng;
  std::vector<uopc_node *> pool;
  int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  uopc_node *leaf(uopc_dtype t) {
    switch (rnd(0, 3)) {
    case 0: return uopc_param(c, rnd(0, 2), t, nullptr, 0);
    case 1: {
      const double v[] = {0, 1, -1, 2, 3};
      return uopc_const_like(c, uopc_param(c, 0, t, nullptr, 0), v[rnd(0, 4)]);
    }
    default: {
      std::vector<uopc_node *> same;
      for (uopc_node *u : pool)
        if (u->dtype == t) same.push_back(u);
      if (!same.empty()) return same[rnd(0, (int)same.size() - 1)];
      return uopc_param(c, rnd(0, 2), t, nullptr, 0);
    }
    }
  }
  uopc_node *node(int d, uopc_dtype t) {
    if (d <= 0 || rnd(0, 3) == 0) return leaf(t);
    uopc_node *r = nullptr;
    if (t == UOPC_DT_BOOL && rnd(0, 1)) {
      uopc_dtype o = rnd(0, 1) ? UOPC_DT_I32 : UOPC_DT_F32;
      r = (rnd(0, 1) ? uopc_lt : uopc_ne)(c, node(d - 1, o), node(d - 1, o));
    } else {
      switch (rnd(0, 5)) {
      case 0: r = uopc_add(c, node(d - 1, t), node(d - 1, t)); break;
      case 1: r = uopc_mul(c, node(d - 1, t), node(d - 1, t)); break;
      case 2: r = uopc_max(c, node(d - 1, t), node(d - 1, t)); break;
      case 3: r = uopc_where(c, node(d - 1, UOPC_DT_BOOL), node(d - 1, t), node(d - 1, t)); break;
      case 4: r = uopc_cast(c, node(d - 1, t == UOPC_DT_I32 ? UOPC_DT_F32 : UOPC_DT_I32), t); break;
      default: r = t == UOPC_DT_F32 ? uopc_alu1(c, UOPC_OP_RECIP, node(d - 1, t)) : uopc_add(c, node(d - 1, t), leaf(t));
      }
    }
    if (r) pool.push_back(r);
    return r;
  }
};

using Binding = std::vector<uopc_node *>;

int collect(void *ud, uopc_node *const *b) {
  auto *v = static_cast<std::pair<uint32_t, std::vector<Binding>> *>(ud);
  v->second.emplace_back(b, b + v->first);
  return 0;
}

std::vector<Binding> matches(const uopc_pattern *p, uopc_node *u, bool search) {
  std::pair<uint32_t, std::vector<Binding>> acc{p->nvars, {}};
  Binding scratch(p->nvars + 1, nullptr);
  if (search) uopi_pattern_run_search(p, u, scratch.data(), collect, &acc);
  else uopi_pattern_run(p, u, scratch.data(), collect, &acc);
  return acc.second;
}

// A rule function that accepts some bindings and declines others (by a hash
// of the binding), and records what it accepted.
struct Probe {
  uopc_node *result;   // what an accepting rule returns
  int rule = -1;       // the rule that accepted last
  Binding binding;
  std::vector<uint32_t> nvars;
};
thread_local Probe *g_probe;
bool accepts(int rule, uopc_node *const *b, uint32_t n) {
  uint64_t h = (uint64_t)rule * 0x9e3779b97f4a7c15ull;
  for (uint32_t i = 0; i < n; i++) h = (h ^ (b[i] ? b[i]->id + 1 : 0)) * 0x100000001b3ull;
  return (h >> 17) % 3 != 0;
}
template <int R>
uopc_node *probe_fn(uopc_ctx *, uopc_node *const *b, void *) {
  uint32_t n = g_probe->nvars[R];
  if (!accepts(R, b, n)) return nullptr;
  g_probe->rule = R;
  g_probe->binding.assign(b, b + n);
  return g_probe->result;
}
const uopc_rule_fn kProbes[] = {probe_fn<0>, probe_fn<1>, probe_fn<2>, probe_fn<3>,
                                probe_fn<4>, probe_fn<5>, probe_fn<6>, probe_fn<7>};

TEST(MatcherDiff, CompiledVariantsAgreeWithTheSearch) {
  PatGen pg(11);
  std::mt19937_64 rng(12);
  uint64_t compared = 0, nonempty = 0, compiled = 0, patterns = 0;
  for (int round = 0; round < 60; round++) {
    Ctx c;
    uopc_ctx_set_check(c, 0);
    GraphGen gg{c, rng, {}};
    std::vector<uopc_node *> nodes;
    for (int k = 0; k < 150; k++) {
      uopc_dtype t = k % 3 == 0 ? UOPC_DT_F32 : k % 3 == 1 ? UOPC_DT_I32 : UOPC_DT_BOOL;
      if (uopc_node *u = gg.node(4, t)) nodes.push_back(u);
      uopc_ctx_clear_error(c);
    }
    for (int q = 0; q < 40; q++) {
      std::string text = pg.pat(3);
      uopc_error e{};
      uopc_pattern *p = uopc_pattern_parse(text.c_str(), &e);
      if (!p) continue;  // e.g. too many names
      patterns++;
      compiled += p->lin != nullptr;
      for (uopc_node *u : nodes) {
        std::vector<Binding> a = matches(p, u, true), b = matches(p, u, false);
        ASSERT_EQ(a, b) << text << " on " << fmt(c, u);
        compared++;
        nonempty += !a.empty();
      }
      uopc_pattern_free(p);
    }
  }
  EXPECT_GT(patterns, 1500u);
  EXPECT_GT(compiled, patterns / 2);   // most compile; the rest use the search
  EXPECT_LT(compiled, patterns);
  EXPECT_GT(nonempty, compared / 50);  // enough of them match
}

TEST(MatcherDiff, RewriteStepAgreesWithTheSearchInRuleOrder) {
  PatGen pg(21);
  std::mt19937_64 rng(22);
  uint64_t fired = 0, steps = 0;
  for (int round = 0; round < 150; round++) {
    Ctx c;
    uopc_ctx_set_check(c, 0);
    GraphGen gg{c, rng, {}};
    // a rule set of up to 8 random rules (some with a trivial `$x=(alu)`)
    std::vector<std::string> texts;
    std::vector<uopc_pattern *> pats;
    Probe probe;
    probe.result = uopc_param(c, 7, UOPC_DT_I32, nullptr, 0);
    while (texts.size() < 8) {
      std::string t = pg.rnd(0, 9) == 0 ? "$x=(alu)" : pg.pat(3);
      uopc_error e{};
      uopc_pattern *p = uopc_pattern_parse(t.c_str(), &e);
      if (!p) continue;
      texts.push_back(t);
      pats.push_back(p);
      probe.nvars.push_back(p->nvars);
    }
    std::vector<uopc_rule> rules;
    for (size_t i = 0; i < texts.size(); i++) rules.push_back({texts[i].c_str(), kProbes[i], nullptr});
    uopc_error e{};
    uopc_matcher *m = uopc_matcher_new(rules.data(), rules.size(), &e);
    ASSERT_NE(m, nullptr) << e.msg;
    g_probe = &probe;
    for (int k = 0; k < 100; k++) {
      uopc_dtype t = k % 3 == 0 ? UOPC_DT_F32 : k % 3 == 1 ? UOPC_DT_I32 : UOPC_DT_BOOL;
      uopc_node *u = gg.node(4, t);
      uopc_ctx_clear_error(c);
      if (!u) continue;
      // the reference: rules in order, bindings in the search's order
      int want_rule = -1;
      Binding want;
      for (size_t r = 0; r < pats.size() && want_rule < 0; r++)
        for (const Binding &b : matches(pats[r], u, true))
          if (accepts((int)r, b.data(), (uint32_t)b.size())) {
            want_rule = (int)r, want = b;
            break;
          }
      probe.rule = -1;
      uopc_node *got = uopc_matcher_rewrite(m, c, u, nullptr);
      steps++;
      if (want_rule < 0) {
        EXPECT_EQ(got, nullptr) << fmt(c, u) << " fired rule " << probe.rule << " " << texts[(size_t)std::max(probe.rule, 0)];
        continue;
      }
      fired++;
      ASSERT_EQ(got, probe.result) << fmt(c, u) << " should fire " << texts[(size_t)want_rule];
      ASSERT_EQ(probe.rule, want_rule) << fmt(c, u) << ": fired " << texts[(size_t)probe.rule] << ", want "
                                       << texts[(size_t)want_rule];
      ASSERT_EQ(probe.binding, want) << fmt(c, u) << " rule " << texts[(size_t)want_rule];
    }
    g_probe = nullptr;
    uopc_matcher_free(m);
    for (uopc_pattern *p : pats) uopc_pattern_free(p);
  }
  EXPECT_GT(fired, steps / 10);
}

}  // namespace
