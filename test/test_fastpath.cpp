// The fast paths of the constructors and of the bounds, checked against the
// general paths they shortcut, on random and edge inputs:
//   * uopc_alu2 (and so uopc_add, uopc_mul, ...), uopc_const_i and
//     uopc_full_like take the hash-cons table directly when every check
//     would pass (lib/core/fast.h); uopi_make_checked is the general path
//     with every check.  Each call runs in one of two contexts built alike,
//     fast in one, general in the other: the same node (id), or the same
//     error (code, message, and the same count of failures).
//   * the hash-cons table's inline miss path (lib/core/intern.c,
//     insert_here) files a node like the general insert: nodes built through
//     uopc_alu2 / uopc_const_i in one context and through uopi_make_checked
//     (uopi_intern) in another are field for field the same, across table
//     growth and arena chunks, and each context finds the other's way.
//   * div_sum / mod_sum split a sum into a buffer on the C stack that grows
//     into scratch memory past 16 terms: sums of 1 to 40 terms (and a shared
//     DAG past MAX_TERMS) simplify to the same values (the reference
//     evaluator on every input), with the sum split whole.
//   * uopi_vmin / uopi_vmax (lib/algebra/bounds.h) answer like uopc_vmin /
//     uopc_vmax, and bounds come out the same whatever order the nodes are
//     asked in (the leaf shortcut of ensure vs the walk of ensure_slow).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "algebra/bounds.h"
#include "core/fast.h"
#include "uopc/uopc.h"
}
#include "support/refeval.h"

namespace {

// Two contexts with the same nodes (same ids), plus a node of a third.
struct Twin {
  uopc_ctx *c[2];
  uopc_ctx *other;
  std::vector<uopc_node *> pool[2];
  uopc_node *foreign;

  explicit Twin(uint64_t seed) {
    other = uopc_ctx_new(nullptr);
    foreign = uopc_param(other, 0, UOPC_DT_I32, nullptr, 0);
    for (int k = 0; k < 2; k++) {
      c[k] = uopc_ctx_new(nullptr);
      std::mt19937_64 rng(seed);
      build(c[k], pool[k], rng);
    }
  }
  ~Twin() {
    uopc_ctx_free(c[0]);
    uopc_ctx_free(c[1]);
    uopc_ctx_free(other);
  }
  static void build(uopc_ctx *c, std::vector<uopc_node *> &p, std::mt19937_64 &rng) {
    const int64_t ks[] = {0, 1, -1, 2, 7, INT32_MAX, INT32_MIN, 1 << 20};
    int32_t sh[2] = {3, 2};
    const uopc_dtype dts[] = {UOPC_DT_I32, UOPC_DT_BOOL, UOPC_DT_F32, UOPC_DT_F16};
    for (uopc_dtype t : dts) {
      p.push_back(uopc_param(c, (int64_t)p.size(), t, nullptr, 0));
      p.push_back(uopc_param(c, (int64_t)p.size(), t, sh, 2));
      p.push_back(uopc_param(c, (int64_t)p.size(), t, sh, 1));
    }
    for (int64_t k : ks) p.push_back(uopc_const_i(c, UOPC_DT_I32, k));
    p.push_back(uopc_const_i(c, UOPC_DT_BOOL, 1));
    p.push_back(uopc_const_f(c, UOPC_DT_F32, -0.0));
    p.push_back(uopc_const_f(c, UOPC_DT_F16, NAN));
    uopc_node *buf = uopc_buffer(c, 9, UOPC_DT_I32, 8);
    p.push_back(buf);
    p.push_back(uopc_index1(c, buf, p[0]));                  // an address
    p.push_back(uopc_store1(c, buf, p[0], p[0]));            // an effect
    p.push_back(uopc_range_k(c, 5, 0));
    for (int i = 0; i < 20; i++) {  // some ALU nodes over them
      uopc_node *a = p[rng() % p.size()], *b = p[rng() % p.size()];
      uopc_node *r = uopc_alu2(c, (uopc_op)(UOPC_OP_ADD + rng() % 7), a, b);
      if (r) p.push_back(r);
      uopc_ctx_clear_error(c);
    }
  }
};

struct Outcome {
  uint32_t id = UINT32_MAX;  // UINT32_MAX: NULL
  int code = 0;
  std::string msg;
  uint64_t fails = 0;
  bool operator==(const Outcome &o) const { return id == o.id && code == o.code && msg == o.msg && fails == o.fails; }
};

template <class F> Outcome run(uopc_ctx *c, F f) {
  uint64_t f0 = uopi_fail_count(c);
  uopc_node *r = f();
  Outcome o;
  if (r) o.id = r->id;
  if (const uopc_error *e = uopc_ctx_error(c)) o.code = e->code, o.msg = e->msg;
  o.fails = uopi_fail_count(c) - f0;
  uopc_ctx_clear_error(c);
  return o;
}

std::string show(const Outcome &o) {
  return "id " + std::to_string(o.id) + " code " + std::to_string(o.code) + " '" + o.msg + "' fails " +
         std::to_string(o.fails);
}

// A node of context k: from its pool, or NULL, or another context's node.
uopc_node *pick(Twin &t, int k, size_t i) {
  size_t n = t.pool[k].size();
  if (i % (n + 2) == n) return nullptr;
  if (i % (n + 2) == n + 1) return t.foreign;
  return t.pool[k][i % (n + 2)];
}

TEST(FastPath, Alu2MatchesTheGeneralPath) {
  for (uint64_t seed = 1; seed <= 20; seed++) {
    Twin t(seed);
    std::mt19937_64 rng(seed * 7919);
    for (int it = 0; it < 400; it++) {
      // every ALU op but CAST (uopc_alu refuses those before uopc_make)
      uopc_op op = (uopc_op)(UOPC_OP_ADD + rng() % (UOPC_OP_CAST - UOPC_OP_ADD));
      size_t ia = rng(), ib = rng();
      Outcome fast = run(t.c[0], [&] { return uopc_alu2(t.c[0], op, pick(t, 0, ia), pick(t, 0, ib)); });
      Outcome slow = run(t.c[1], [&] {
        uopc_node *s[2] = {pick(t, 1, ia), pick(t, 1, ib)};
        return uopi_make_checked(t.c[1], op, UOPC_DT_VOID, s, 2, nullptr);
      });
      ASSERT_EQ(fast, slow) << uopc_op_name(op) << " seed " << seed << " it " << it << ": " << show(fast) << " vs "
                            << show(slow);
    }
    ASSERT_EQ(uopc_ctx_count(t.c[0]), uopc_ctx_count(t.c[1]));
  }
}

TEST(FastPath, ConstIMatchesTheGeneralPath) {
  const int64_t vs[] = {0, 1, -1, 2, INT32_MAX, INT32_MIN, (int64_t)INT32_MAX + 1, (int64_t)INT32_MIN - 1,
                        INT64_MAX, INT64_MIN, 123456789, -7};
  Twin t(3);
  std::mt19937_64 rng(5);
  const int nd = UOPC_DT_COUNT + 1;  // bool and i32 (the fast path), and the others (VOID, out of range)
  for (int it = 0; it < 2000; it++) {
    // every edge value with every dtype, then random ones
    int64_t v = it < 12 * nd ? vs[it / nd] : (int64_t)rng() >> (rng() % 64);
    uopc_dtype dt = (uopc_dtype)(it < 12 * nd ? it % nd : (int)(rng() % nd));
    if (uopc_dtype_is_float(dt)) continue;  // uopc_const_f's path, not a fast path
    Outcome fast = run(t.c[0], [&] { return uopc_const_i(t.c[0], dt, v); });
    Outcome slow = run(t.c[1], [&] {
      uopc_arg a = {};
      a.i = dt == UOPC_DT_BOOL ? (v != 0) : v;
      return uopi_make_checked(t.c[1], UOPC_OP_CONST, dt, nullptr, 0, &a);
    });
    ASSERT_EQ(fast, slow) << "dtype " << (int)dt << " v " << v << ": " << show(fast) << " vs " << show(slow);
  }
}

// uopc_full_like's fast path against its general path (uopc_const_like, then
// reshape and expand for a shaped x), whose constants are made by the general
// path of uopc_make for anything but the common bool/i32 case checked above.
TEST(FastPath, FullLikeMatchesTheGeneralPath) {
  const double vs[] = {0, -0.0, 1, -1, 0.5, -0.5, 2147483647.0, -2147483648.0, 2147483647.5, -2147483648.5,
                       2147483648.0, -2147483649.0, 1e10, -1e19, 9.4e18, NAN, INFINITY, -INFINITY, 3, 1e-300};
  for (uint64_t seed = 1; seed <= 5; seed++) {
    Twin t(seed);
    std::mt19937_64 rng(seed);
    for (int it = 0; it < 3000; it++) {
      // every edge value with every node of the pool (and NULL, another
      // context's node), then random ones
      size_t np = t.pool[0].size() + 2;
      bool edge = (size_t)it < 20 * np;
      double v = edge ? vs[it / np] : (double)(int64_t)(rng() >> (rng() % 64)) * ((rng() & 1) ? 1 : 0.25);
      size_t ix = edge ? (size_t)it % np : rng();
      Outcome fast = run(t.c[0], [&] { return uopc_full_like(t.c[0], pick(t, 0, ix), v); });
      Outcome slow = run(t.c[1], [&]() -> uopc_node * {
        uopc_ctx *c = t.c[1];
        uopc_node *x = pick(t, 1, ix);
        if (!x) return uopc_full_like(c, x, v);  // its own NULL check (its name in the message)
        uopc_node *k = uopc_const_like(c, x, v);
        if (!k || x->ndim == 0) return k;
        std::vector<int32_t> ones(x->ndim, 1);
        return uopc_expand(c, uopc_reshape(c, k, ones.data(), x->ndim), x->shape, x->ndim);
      });
      ASSERT_EQ(fast, slow) << "v " << v << ": " << show(fast) << " vs " << show(slow);
    }
  }
}

TEST(FastPath, InternMissMatchesTheGeneralInsert) {
  for (uint64_t seed = 1; seed <= 3; seed++) {
    uopc_ctx *c[2] = {uopc_ctx_new(nullptr), uopc_ctx_new(nullptr)};
    std::vector<uopc_node *> p[2];
    std::mt19937_64 rng(seed);
    for (int k = 0; k < 2; k++) p[k].push_back(uopc_param(c[k], 0, UOPC_DT_I32, nullptr, 0));
    for (int i = 0; i < 6000; i++) {  // past several table growths and arena chunks
      size_t ia = rng() % p[0].size(), ib = rng() % p[0].size();
      int kind = (int)(rng() % 4);
      int64_t v = (int64_t)(int32_t)rng() >> (rng() % 32);
      uopc_op op = (uopc_op)(UOPC_OP_ADD + rng() % 7);
      uopc_node *r[2];
      for (int k = 0; k < 2; k++) {
        uopc_node *s[2] = {p[k][ia], p[k][ib]};
        uopc_arg a = {};
        a.i = v;
        if (kind == 0) r[k] = k ? uopi_make_checked(c[k], UOPC_OP_CONST, UOPC_DT_I32, nullptr, 0, &a)
                                 : uopc_const_i(c[k], UOPC_DT_I32, v);
        else r[k] = k ? uopi_make_checked(c[k], op, UOPC_DT_VOID, s, 2, nullptr) : uopc_alu2(c[k], op, s[0], s[1]);
        ASSERT_TRUE(r[k]) << uopc_ctx_error(c[k])->msg;
        if (r[k]->dtype == UOPC_DT_I32) p[k].push_back(r[k]);
      }
      uopc_node *x = r[0], *y = r[1];
      ASSERT_EQ(x->id, y->id);
      ASSERT_EQ(uopc_ctx_node(c[0], x->id), x);
      ASSERT_TRUE(x->op == y->op && x->dtype == y->dtype && x->ndim == y->ndim && x->flags == y->flags &&
                  x->nsrc == y->nsrc && x->hash == y->hash && x->srcops == y->srcops && x->simplified == y->simplified)
          << "node " << x->id;
      ASSERT_EQ(x->shape, (const int32_t *)(x->src + x->nsrc));
      ASSERT_EQ(0, memcmp(&x->arg, &y->arg, sizeof x->arg));
      for (uint32_t j = 0; j < x->nsrc; j++) ASSERT_EQ(x->src[j]->id, y->src[j]->id);
    }
    // each context finds every node the other way
    uint32_t n = uopc_ctx_count(c[0]);
    ASSERT_EQ(n, uopc_ctx_count(c[1]));
    for (uint32_t i = 0; i < n; i++) {
      for (int k = 0; k < 2; k++) {
        uopc_node *u = uopc_ctx_node(c[k], i);
        if (u->op == UOPC_OP_PARAM) continue;
        uopc_arg a = {};
        a.i = u->arg.i;
        uopc_node *again = u->op == UOPC_OP_CONST
                               ? (k ? uopc_const_i(c[k], UOPC_DT_I32, u->arg.i)
                                    : uopi_make_checked(c[k], UOPC_OP_CONST, UOPC_DT_I32, nullptr, 0, &a))
                               : (k ? uopc_alu2(c[k], (uopc_op)u->op, u->src[0], u->src[1])
                                    : uopi_make_checked(c[k], (uopc_op)u->op, UOPC_DT_VOID, u->src, 2, nullptr));
        ASSERT_EQ(again, u) << "node " << i;
      }
    }
    ASSERT_EQ(n, uopc_ctx_count(c[0]));
    uopc_ctx_free(c[0]);
    uopc_ctx_free(c[1]);
  }
}

TEST(FastPath, SumsPastTheStackBufferSimplifyToTheSameValues) {
  for (int n = 1; n <= 40; n++) {
    for (int mod = 0; mod < 2; mod++) {
      uopc_ctx *c = uopc_ctx_new(nullptr);
      // (r0*4 + r1*4 + ... + r{n-1}*4 + rn) // 4 or % 4, rN < 3 and the others < 5
      uopc_node *sum = nullptr;
      for (int i = 0; i < n; i++) {
        uopc_node *t = uopc_mul_k(c, uopc_range_k(c, 5, i), 4);
        sum = sum ? uopc_add(c, sum, t) : t;
      }
      sum = uopc_add(c, sum, uopc_range_k(c, 3, n));
      uopc_node *e = mod ? uopc_mod_k(c, sum, 4) : uopc_idiv_k(c, sum, 4);
      uopc_node *s = uopc_simplify(c, e);
      ASSERT_TRUE(s) << uopc_ctx_error(c)->msg;
      if (mod) EXPECT_EQ(s->op, UOPC_OP_RANGE) << "n " << n;       // rn: every multiple of 4 dropped
      else EXPECT_NE(uopc_graph_size(c, s), uopc_graph_size(c, e));  // split
      RefProg pe, ps;
      ASSERT_TRUE(pe.build(e) && ps.build(s));
      std::mt19937_64 rng(n);
      for (int k = 0; k < 50; k++) {
        RefEnv env;
        for (int i = 0; i < n; i++) env.range.push_back((int64_t)(rng() % 5));
        env.range.push_back((int64_t)(rng() % 3));
        ASSERT_TRUE(ref_same(pe.eval(env), ps.eval(env), UOPC_DT_I32)) << "n " << n << " mod " << mod;
      }
      uopc_ctx_free(c);
    }
  }
  // a shared DAG that spells more than MAX_TERMS (4096) terms: the rules
  // decline to split it, and the value stays
  uopc_ctx *c = uopc_ctx_new(nullptr);
  uopc_node *s = uopc_add(c, uopc_mul_k(c, uopc_range_k(c, 5, 0), 4), uopc_range_k(c, 3, 1));
  for (int i = 0; i < 13; i++) s = uopc_add(c, s, s);
  uopc_node *e = uopc_idiv_k(c, s, 4), *r = uopc_simplify(c, e);
  ASSERT_TRUE(r) << uopc_ctx_error(c)->msg;
  RefProg pe, pr;
  ASSERT_TRUE(pe.build(e) && pr.build(r));
  for (int64_t a = 0; a < 5; a++)
    for (int64_t b = 0; b < 3; b++) {
      RefEnv env;
      env.range = {a, b};
      ASSERT_TRUE(ref_same(pe.eval(env), pr.eval(env), UOPC_DT_I32));
    }
  uopc_ctx_free(c);
}

// Random i32 graphs: the same bounds whatever order the nodes are asked in
// (every node bottom-up, only the roots, a random order), and uopi_vmin /
// uopi_vmax answer like the public calls (also for NULL and another
// context's node, with the same error).
TEST(FastPath, BoundsInAnyOrderAndInlineReads) {
  for (uint64_t seed = 1; seed <= 30; seed++) {
    uopc_ctx *c[3];
    std::vector<uopc_node *> nodes[3];
    for (int k = 0; k < 3; k++) {
      c[k] = uopc_ctx_new(nullptr);
      std::mt19937_64 rng(seed);
      std::vector<uopc_node *> &p = nodes[k];
      const int64_t ks[] = {0, 1, -1, 3, 8, INT32_MAX, INT32_MIN, 46341};
      p.push_back(uopc_param(c[k], 0, UOPC_DT_I32, nullptr, 0));
      p.push_back(uopc_range_k(c[k], 10, 0));
      p.push_back(uopc_range_k(c[k], 1000, 1));
      for (int i = 0; i < 60; i++) {
        uopc_node *a = p[rng() % p.size()];
        uopc_node *b = rng() % 3 ? uopc_const_i(c[k], UOPC_DT_I32, ks[rng() % 8]) : p[rng() % p.size()];
        uopc_op op = (uopc_op)(UOPC_OP_ADD + rng() % 7);
        uopc_node *r = uopc_alu2(c[k], op, a, b);
        if (r && r->dtype == UOPC_DT_BOOL && rng() % 2) r = uopc_where(c[k], r, a, b);
        if (r && r->dtype == UOPC_DT_BOOL) r = uopc_cast(c[k], r, UOPC_DT_I32);
        if (r) p.push_back(r);
        uopc_ctx_clear_error(c[k]);
      }
    }
    uint32_t n = uopc_ctx_count(c[0]);
    ASSERT_EQ(n, uopc_ctx_count(c[1]));
    ASSERT_EQ(n, uopc_ctx_count(c[2]));
    // 0: every node in id order (sources first); 1: the last nodes only, each
    // a walk; 2: a random order, through the inline reads
    for (uint32_t i = 0; i < n; i++) (void)uopc_vmin(c[0], uopc_ctx_node(c[0], i));
    for (uint32_t i = n; i-- > n - 5;) (void)uopc_vmax(c[1], uopc_ctx_node(c[1], i));
    std::mt19937_64 rng(seed + 100);
    for (int i = 0; i < 40; i++) (void)uopi_vmin(c[2], uopc_ctx_node(c[2], (uint32_t)(rng() % n)));
    for (uint32_t i = 0; i < n; i++) {
      uopc_node *u[3] = {uopc_ctx_node(c[0], i), uopc_ctx_node(c[1], i), uopc_ctx_node(c[2], i)};
      int64_t lo = uopc_vmin(c[0], u[0]), hi = uopc_vmax(c[0], u[0]);
      ASSERT_LE(lo, hi);
      ASSERT_EQ(lo, uopi_vmin(c[1], u[1])) << "seed " << seed << " node " << i;
      ASSERT_EQ(hi, uopi_vmax(c[1], u[1])) << "seed " << seed << " node " << i;
      ASSERT_EQ(lo, uopi_vmin(c[2], u[2])) << "seed " << seed << " node " << i;
      ASSERT_EQ(hi, uopc_vmax(c[2], u[2])) << "seed " << seed << " node " << i;
    }
    // NULL and another context's node: the public calls' answers and errors
    uopc_node *f = uopc_ctx_node(c[0], 0);
    for (uopc_node *x : {(uopc_node *)nullptr, f}) {
      Outcome a = run(c[1], [&] { return uopi_vmin(c[1], x) == INT64_MIN ? f : nullptr; });
      Outcome b = run(c[2], [&] { return uopc_vmin(c[2], x) == INT64_MIN ? f : nullptr; });
      ASSERT_EQ(a, b) << show(a) << " vs " << show(b);
      a = run(c[1], [&] { return uopi_vmax(c[1], x) == INT64_MAX ? f : nullptr; });
      b = run(c[2], [&] { return uopc_vmax(c[2], x) == INT64_MAX ? f : nullptr; });
      ASSERT_EQ(a, b) << show(a) << " vs " << show(b);
    }
    for (int k = 0; k < 3; k++) uopc_ctx_free(c[k]);
  }
}

}  // namespace
