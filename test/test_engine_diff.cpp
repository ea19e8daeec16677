// graph_rewrite (lib/rewrite/graph_rewrite.c: an explicit stack, the step
// and uopc_replace's fast path inline) against the seed's algorithm written
// plainly, recursively, on the public calls (uopc_replace,
// uopc_matcher_rewrite): on random graphs and every built-in rule set, in
// twin contexts, the same result node (id), the same nodes made, and the
// same rules firing in the same order on the same nodes.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

extern "C" {
#include "uopc/uopc.h"
}

namespace {

// The seed's graph_rewrite (2.4): post-order, memoized, a rule's result
// rewritten again.  Recursion is fine on these small graphs.
struct Ref {
  uopc_ctx *c;
  const uopc_matcher *m;
  std::unordered_map<uopc_node *, uopc_node *> done;
  bool failed = false;
  uopc_node *rw(uopc_node *u) {
    auto it = done.find(u);
    if (it != done.end()) return it->second;
    for (uint32_t i = 0; i < u->nsrc && !failed; i++) rw(u->src[i]);
    if (failed) return nullptr;
    it = done.find(u);  // finished meanwhile (by a rule's result)
    if (it != done.end()) return it->second;
    std::vector<uopc_node *> s(u->nsrc);
    for (uint32_t i = 0; i < u->nsrc; i++) s[i] = done[u->src[i]];
    uopc_node *n = uopc_replace(c, u, s.data(), u->nsrc);
    if (!n) return failed = true, nullptr;
    uint32_t errs = uopc_ctx_error(c) ? 1 : 0;
    uopc_node *r = uopc_matcher_rewrite(m, c, n, nullptr);
    if (!r && (uopc_ctx_error(c) ? 1u : 0u) != errs) return failed = true, nullptr;
    uopc_node *v = r ? rw(r) : n;
    if (failed) return nullptr;
    done[u] = v;
    return v;
  }
};

struct Log {
  std::vector<std::string> ev;
};
void on_trace(void *ud, const uopc_trace_event *e) {
  if (e->kind != UOPC_TRACE_RULE) return;
  static_cast<Log *>(ud)->ev.push_back(std::string(e->rule->name ? e->rule->name : e->rule->pat) + " " +
                                       std::to_string(e->before->id) + " -> " + std::to_string(e->after->id));
}

// A random scalar graph: i32 index arithmetic (sums of products, floor
// division and modulo by constants, comparisons, where), with edge constants.
uopc_node *build(uopc_ctx *c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t ks[] = {0, 1, -1, 2, 3, 4, 6, 7, 8, 12, 16, 100, INT32_MAX, INT32_MIN, 46341};
  std::vector<uopc_node *> p;
  p.push_back(uopc_param(c, 0, UOPC_DT_I32, nullptr, 0));
  p.push_back(uopc_param(c, 1, UOPC_DT_I32, nullptr, 0));
  for (int i = 0; i < 3; i++) p.push_back(uopc_range_k(c, (int32_t)(2 + rng() % 9), i));
  int n = 5 + (int)(rng() % 40);
  for (int i = 0; i < n; i++) {
    uopc_node *a = p[rng() % p.size()];
    uopc_node *k = uopc_const_i(c, UOPC_DT_I32, ks[rng() % 15]);
    uopc_node *b = rng() % 2 ? k : p[rng() % p.size()];
    uopc_node *r;
    switch (rng() % 9) {
    case 0: case 1: r = uopc_add(c, a, b); break;
    case 2: case 3: r = uopc_mul(c, a, b); break;
    case 4: r = uopc_idiv(c, a, k); break;
    case 5: r = uopc_mod(c, a, k); break;
    case 6: r = uopc_max(c, a, b); break;
    case 7: r = uopc_where(c, uopc_lt(c, a, b), a, uopc_add(c, b, k)); break;
    default: r = uopc_add(c, k, a); break;  // a constant on the left
    }
    if (r) p.push_back(r);
    uopc_ctx_clear_error(c);
  }
  uopc_node *root = p.back();
  for (int i = 0; i < 3; i++) root = uopc_add(c, root, p[rng() % p.size()]);
  return root;
}

TEST(EngineDiff, GraphRewriteMatchesTheSeedsAlgorithm) {
  const uopc_matcher *sets[] = {uopc_rules_symbolic(), uopc_rules_symbolic_seed(), uopc_rules_symbolic_strong(),
                                uopc_rules_run(), uopc_rules_fold()};
  int fired = 0;
  for (uint64_t seed = 1; seed <= 300; seed++) {
    for (const uopc_matcher *m : sets) {
      uopc_ctx *c[2] = {uopc_ctx_new(nullptr), uopc_ctx_new(nullptr)};
      Log log[2];
      uopc_node *root[2], *res[2];
      for (int k = 0; k < 2; k++) {
        root[k] = build(c[k], seed);
        ASSERT_TRUE(root[k]);
        uopc_ctx_set_trace_fn(c[k], on_trace, &log[k]);
      }
      res[0] = uopc_graph_rewrite(c[0], root[0], m, nullptr, 0);
      Ref ref{c[1], m, {}, false};
      res[1] = ref.rw(root[1]);
      ASSERT_EQ(res[0] == nullptr, res[1] == nullptr) << "seed " << seed << " set " << uopc_matcher_name(m);
      if (res[0]) ASSERT_EQ(res[0]->id, res[1]->id) << "seed " << seed << " set " << uopc_matcher_name(m);
      ASSERT_EQ(uopc_ctx_count(c[0]), uopc_ctx_count(c[1])) << "seed " << seed;
      ASSERT_EQ(log[0].ev, log[1].ev) << "seed " << seed << " set " << uopc_matcher_name(m);
      fired += (int)log[0].ev.size();
      uopc_ctx_free(c[0]);
      uopc_ctx_free(c[1]);
    }
  }
  EXPECT_GT(fired, 3000);  // the rules did fire
}

}  // namespace
