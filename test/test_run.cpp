// Chapter 2 section 2.6: running programs by rewriting (symbolic + evaluate).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "support/fmt.h"

namespace {

struct Run : ::testing::Test {
  Ctx c;
  uopc_node *I(int64_t v) { return uopc_const_i(c, UOPC_DT_I32, v); }
  uopc_node *F(double v) { return uopc_const_f(c, UOPC_DT_F32, v); }
  uopc_node *stack(std::vector<uopc_node *> v) { return uopc_stack(c, v.data(), (uint32_t)v.size()); }
  uopc_node *ints(std::vector<int64_t> v) {
    std::vector<uopc_node *> n;
    for (auto x : v) n.push_back(I(x));
    return stack(n);
  }
  uopc_node *p0 = uopc_param(c, 0, UOPC_DT_I32, nullptr, 0);
  std::string value(uopc_node *prog) {
    uopc_ctx_clear_error(c);
    uopc_node *r = uopc_run_value(c, prog);
    if (!r) return "error: " + c.err();
    char *s = uopc_value_print(c, r);
    if (!s) return "error: " + c.err();
    std::string out = s;
    uopc_mem_free(c, s, strlen(s) + 1);
    return out;
  }
};

TEST_F(Run, ElementwiseThroughStack) {
  uopc_node *a = ints({1, 2, 3}), *b = ints({10, 20, 30});
  EXPECT_EQ(value(uopc_add(c, uopc_mul(c, a, b), a)), "[11, 42, 93]");
}

TEST_F(Run, WhereThroughStack) {
  uopc_node *cond = uopc_lt(c, ints({1, 2, 3}), ints({2, 2, 2}));
  EXPECT_EQ(value(uopc_where(c, cond, ints({1, 2, 3}), ints({10, 20, 30}))), "[1, 20, 30]");
}

TEST_F(Run, IndexOfStack) {
  uopc_node *s = stack({ints({1, 2, 3}), ints({10, 20, 30})});
  uopc_node *one = I(1), *two = I(2);
  uopc_node *e = uopc_index(c, uopc_index(c, s, &one, 1), &two, 1);
  EXPECT_EQ(value(e), "30");
  uopc_node *both[] = {one, two};
  EXPECT_EQ(value(uopc_index(c, s, both, 2)), "30");
  uopc_node *five = I(5);
  EXPECT_EQ(value(uopc_index(c, ints({1, 2, 3}), &five, 1)), "error: index 5 out of bounds for STACK of 3");
}

TEST_F(Run, MovementAndReduce) {
  uopc_node *row = stack({F(1.0), F(2.0), F(3.0)});
  uopc_node *m = stack({row, row});
  uopc_node *e = uopc_mul_k(c, m, 2.0);  // reshape + expand of 2.0, as the .uir sugar builds it
  int32_t perm[] = {1, 0};
  uopc_node *r = uopc_reduce(c, uopc_permute(c, e, perm, 2), UOPC_OP_ADD, 1);
  EXPECT_EQ(value(r), "[4.0, 8.0, 12.0]");
  int32_t sh[] = {1, 2}, s32[] = {0, 1, 1, 3};
  EXPECT_EQ(value(uopc_shrink(c, m, s32, 2)), "[[2.0, 3.0]]");
  int32_t r6[] = {6};
  EXPECT_EQ(value(uopc_reshape(c, m, r6, 1)), "[1.0, 2.0, 3.0, 1.0, 2.0, 3.0]");
  (void)sh;
}

TEST_F(Run, CallIsBetaReduction) {
  uopc_node *sq = uopc_mul(c, p0, p0);
  uopc_node *seven = I(7);
  EXPECT_EQ(value(uopc_call(c, sq, &seven, 1, "sq")), "49");
}

// f(5) where f(y) = g(y + 1), g(z) = sq(z) * 2, sq(w) = w * w: 72, never 98.
TEST_F(Run, NestedCallsAreScoped) {
  uopc_node *sq_body = uopc_mul(c, p0, p0);
  uopc_node *sq_call = uopc_call(c, sq_body, &p0, 1, "sq");
  uopc_node *g_body = uopc_mul(c, sq_call, I(2));
  uopc_node *y1 = uopc_add(c, p0, I(1));
  uopc_node *g_call = uopc_call(c, g_body, &y1, 1, "g");
  uopc_node *five = I(5);
  uopc_node *f_call = uopc_call(c, g_call, &five, 1, "f");
  EXPECT_EQ(value(f_call), "72");
  // inline_call directly on the middle CALL: sq keeps its own parameter
  uopc_node *inl = uopc_inline_call(c, g_call);
  ASSERT_NE(inl, nullptr) << c.err();
  EXPECT_EQ(fmt(c, inl), "(call((x*x), (x+1))*2)");
  EXPECT_EQ(value(uopc_call(c, inl, &five, 1, nullptr)), "72");
}

TEST_F(Run, CallBodyMayDropItsParameter) {
  uopc_node *five = I(5);
  EXPECT_EQ(value(uopc_call(c, uopc_mul(c, p0, I(0)), &five, 1, nullptr)), "0");
}

TEST_F(Run, StuckPrograms) {
  EXPECT_EQ(value(uopc_add(c, p0, I(1))), "error: program did not evaluate to a value, stuck at ADD");
  EXPECT_EQ(value(p0), "error: program did not evaluate to a value, stuck at PARAM");
  // an undefined op says what and why (issue 10)
  EXPECT_EQ(value(uopc_idiv(c, I(5), I(0))), "error: division by zero in FLOORDIV (5 // 0)");
  EXPECT_EQ(value(uopc_add(c, uopc_mod(c, I(INT32_MIN), I(-1)), I(1))),
            "error: overflow in FLOORMOD (-2147483648 % -1 is undefined)");
  EXPECT_EQ(value(uopc_cast(c, F(3e9), UOPC_DT_I32)), "error: CAST of 3000000000.0 to i32 is undefined (outside the i32 range)");
}

// run_value decides "a value" without a walk when every STACK's sources are
// constants or STACKs (is_value), and falls back to the full search past
// 4096 STACKs or at anything else: the same answers either way, at the
// stuck node, in nested values, and past the budget (5000 rows of 2).
TEST_F(Run, ValuesAndStuckNodesInNestedStacks) {
  uopc_node *row = ints({1, 2});
  EXPECT_EQ(value(stack({row, row})), "[[1, 2], [1, 2]]");
  EXPECT_EQ(value(stack({row, stack({I(3), uopc_add(c, p0, I(1))})})),
            "error: program did not evaluate to a value, stuck at ADD");
  EXPECT_EQ(value(stack({row, stack({I(3), uopc_idiv(c, I(5), I(0))})})),
            "error: division by zero in FLOORDIV (5 // 0)");
  std::vector<uopc_node *> rows;
  for (int i = 0; i < 5000; i++) rows.push_back(ints({i, -i}));
  std::string big = value(stack(rows));
  EXPECT_EQ(big.rfind("[[0, 0], [1, -1], ", 0), 0u) << big.substr(0, 80);
  EXPECT_NE(big.find("[4999, -4999]]"), std::string::npos);
  rows.back() = stack({I(1), p0});  // stuck in the last row, past the budget
  EXPECT_EQ(value(stack(rows)), "error: program did not evaluate to a value, stuck at PARAM");
}

// push_stack makes an element's constant at once when every operand is a
// constant (the fold rule's result, without the ALU node in between), but
// not while a trace is on, which shows each fold.  Both ways give the very
// same value node, for every ALU op and dtype, with undefined elements (which
// stay nodes: an error where used, dropped where not) and 2-D stacks.
TEST(RunFold, ShortcutGivesTheTracedResult) {
  const uopc_op ops[] = {UOPC_OP_ADD, UOPC_OP_MUL, UOPC_OP_MAX, UOPC_OP_FLOORDIV, UOPC_OP_FLOORMOD,
                         UOPC_OP_CMPLT, UOPC_OP_CMPNE, UOPC_OP_RECIP, UOPC_OP_WHERE, UOPC_OP_CAST, UOPC_OP_EXP2,
                         UOPC_OP_SQRT};
  const double fv[] = {0.0, -0.0, 1.5, -2.0, 3e9, NAN, INFINITY, 7.0};
  const int64_t iv[] = {0, 1, -1, 7, -7, INT32_MIN, INT32_MAX, 3};
  int compared = 0, undefined = 0;
  for (uopc_op op : ops)
    for (uopc_dtype t : {UOPC_DT_I32, UOPC_DT_F32, UOPC_DT_F16, UOPC_DT_BOOL}) {
      if (uopc_dtype_is_float(t) && (op == UOPC_OP_FLOORDIV || op == UOPC_OP_FLOORMOD)) continue;
      bool unary_float = op == UOPC_OP_EXP2 || op == UOPC_OP_RECIP || op == UOPC_OP_SQRT;
      if (!uopc_dtype_is_float(t) && unary_float) continue;
      if (t == UOPC_DT_BOOL && op != UOPC_OP_ADD && op != UOPC_OP_MUL && op != UOPC_OP_MAX && op != UOPC_OP_CMPNE &&
          op != UOPC_OP_WHERE)
        continue;
      std::string results[2];
      for (int traced = 0; traced < 2; traced++) {
        Ctx c;
        int events = 0;
        if (traced)
          uopc_ctx_set_trace_fn(c, [](void *ud, const uopc_trace_event *) { ++*(int *)ud; }, &events);
        auto vec = [&](int shift) {
          std::vector<uopc_node *> v;
          for (int k = 0; k < 8; k++) {
            int j = (k + shift) % 8;
            v.push_back(t == UOPC_DT_BOOL ? uopc_const_i(c, t, iv[j] & 1)
                        : uopc_dtype_is_float(t) ? uopc_const_f(c, t, fv[j])
                                                 : uopc_const_i(c, t, iv[j]));
          }
          return uopc_stack(c, v.data(), 8);
        };
        uopc_node *a = vec(0), *b = vec(3), *x;
        if (op == UOPC_OP_CAST) x = uopc_cast(c, a, t == UOPC_DT_I32 ? UOPC_DT_F32 : UOPC_DT_I32);
        else if (unary_float) x = uopc_alu1(c, op, a);
        else if (op == UOPC_OP_WHERE) x = uopc_where(c, uopc_lt(c, a, b), a, b);
        else x = uopc_alu2(c, op, a, b);
        ASSERT_NE(x, nullptr) << uopc_op_name(op) << " " << uopc_dtype_name(t) << ": " << c.err();
        uopc_node *xx[2] = {x, x};
        uopc_node *two = uopc_stack(c, xx, 2);  // x as an element of a STACK
        uopc_node *r = uopc_run_value(c, two);
        if (!r) {
          results[traced] = "error: " + c.err();
          continue;
        }
        char *s = uopc_value_print(c, r);
        results[traced] = s;
        uopc_mem_free(c, s, strlen(s) + 1);
        if (traced) EXPECT_GT(events, 0);
      }
      EXPECT_EQ(results[0], results[1]) << uopc_op_name(op) << " " << uopc_dtype_name(t);
      compared++;
      if (results[0].rfind("error", 0) == 0) undefined++;
    }
  EXPECT_GT(compared, 20);
  EXPECT_GT(undefined, 0);  // FLOORDIV/FLOORMOD by 0 and the i32 CAST of 3e9 reach the result
}

TEST_F(Run, FloatValuesPrintAtTheirPrecision) {
  EXPECT_EQ(value(stack({F(0.1)})), "[0.1]");
  EXPECT_EQ(value(uopc_add(c, F(0.1), F(0.2))), "0.3");
  EXPECT_EQ(value(uopc_cast(c, F(-2.7), UOPC_DT_I32)), "-2");
}

static uopc_node *bind(uopc_ctx *c, uopc_node *const *b, void *ctx) {
  int64_t v = *(const int64_t *)ctx;
  return b[0]->arg.i == 0 ? uopc_const_i(c, (uopc_dtype)b[0]->dtype, v) : nullptr;
}

TEST_F(Run, PartialEvaluationWithContext) {
  uopc_node *p1 = uopc_param(c, 1, UOPC_DT_I32, nullptr, 0);
  uopc_node *e = uopc_add(c, uopc_mul(c, uopc_add(c, p0, I(2)), p1), uopc_mul(c, p0, I(0)));
  uopc_rule rules[] = {{"$p=(param)", bind, "bind"}};
  uopc_error err{};
  uopc_matcher *m = uopc_matcher_new(rules, 1, &err);
  ASSERT_NE(m, nullptr) << err.msg;
  int64_t five = 5;
  uopc_node *bound = uopc_graph_rewrite(c, e, m, &five, 0);
  EXPECT_EQ(fmt(c, bound), "(((5+2)*y)+(5*0))");
  EXPECT_EQ(fmt(c, uopc_simplify(c, bound)), "(y*7)");
  uopc_matcher_free(m);
}

}  // namespace
