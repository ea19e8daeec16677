// Core: hash consing, construction checks, traversal, show.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

extern "C" {
#include "uopc/uopc.h"
#include "support/ctx.h"
}

namespace {

std::string show(uopc_ctx *c, uopc_node *u) {
  char *s = uopc_show(c, u, 4096);
  std::string r = s ? s : "<null>";
  if (s) uopc_mem_free(c, s, strlen(s) + 1);
  return r;
}

uopc_node *p_i32(uopc_ctx *c, int slot) { return uopc_param(c, slot, UOPC_DT_I32, nullptr, 0); }
uopc_node *ci(uopc_ctx *c, int64_t v) { return uopc_const_i(c, UOPC_DT_I32, v); }

TEST(Core, HashConsingReturnsSamePointer) {
  Ctx c;
  uopc_node *x = p_i32(c, 0);
  EXPECT_EQ(uopc_add(c, x, ci(c, 3)), uopc_add(c, p_i32(c, 0), ci(c, 3)));
  EXPECT_NE(uopc_add(c, x, ci(c, 3)), uopc_add(c, ci(c, 3), x));
  uint32_t n = uopc_ctx_count(c);
  uopc_add(c, x, ci(c, 3));
  EXPECT_EQ(uopc_ctx_count(c), n);
}

// The node's size is what the bytes-per-node budget rests on (docs/hardening.md:
// a binary node is 96 bytes of arena with its two sources); the interval cache
// lives in the context, not the node.  A field added to uopc_node shows here.
TEST(Core, NodeIs80Bytes) {
  EXPECT_EQ(sizeof(uopc_node), 80u);
}

TEST(Core, ConstantKeyTellsZerosApart) {
  Ctx c;
  uopc_node *i0 = ci(c, 0), *f0 = uopc_const_f(c, UOPC_DT_F32, 0.0), *fm0 = uopc_const_f(c, UOPC_DT_F32, -0.0);
  uopc_node *b0 = uopc_const_i(c, UOPC_DT_BOOL, 0), *h0 = uopc_const_f(c, UOPC_DT_F16, 0.0);
  uopc_node *all[] = {i0, f0, fm0, b0, h0};
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 5; j++) EXPECT_EQ(i == j, all[i] == all[j]) << i << " " << j;
  EXPECT_EQ(uopc_const_f(c, UOPC_DT_F32, NAN), uopc_const_f(c, UOPC_DT_F32, -NAN));
  EXPECT_TRUE(std::isnan(uopc_const_f(c, UOPC_DT_F32, -NAN)->arg.f));
  // ids are dense
  for (uint32_t i = 0; i < uopc_ctx_count(c); i++) EXPECT_EQ(uopc_ctx_node(c, i)->id, i);
}

TEST(Core, RefusesBadNodesWithMessages) {
  Ctx c;
  int32_t s2[] = {2}, s3[] = {3};
  uopc_node *a = uopc_param(c, 0, UOPC_DT_F32, s2, 1), *b = uopc_param(c, 1, UOPC_DT_F32, s3, 1);
  EXPECT_EQ(uopc_add(c, a, b), nullptr);
  EXPECT_EQ(c.err(), "ADD shape mismatch (2,) vs (3,)");
  EXPECT_EQ(uopc_ctx_error(c)->code, UOPC_ERR_TYPE);
  uint32_t n = uopc_ctx_count(c);
  // NULL propagates without overwriting the first error
  EXPECT_EQ(uopc_mul(c, uopc_add(c, a, b), a), nullptr);
  EXPECT_EQ(c.err(), "ADD shape mismatch (2,) vs (3,)");
  EXPECT_EQ(uopc_ctx_count(c), n);  // nothing half-built
  uopc_ctx_clear_error(c);
  EXPECT_EQ(uopc_add(c, p_i32(c, 0), uopc_const_f(c, UOPC_DT_F32, 1.0)), nullptr);
  EXPECT_EQ(c.err(), "ADD dtype mismatch i32 vs f32");
  uopc_ctx_clear_error(c);
  EXPECT_EQ(uopc_idiv(c, uopc_const_f(c, UOPC_DT_F32, 1.0), uopc_const_f(c, UOPC_DT_F32, 2.0)), nullptr);
  EXPECT_EQ(c.err(), "FLOORDIV needs i32, got f32");
  uopc_ctx_clear_error(c);
  EXPECT_EQ(uopc_where(c, p_i32(c, 0), ci(c, 1), ci(c, 2)), nullptr);
  EXPECT_EQ(c.err(), "WHERE condition is i32, must be bool");
  uopc_ctx_clear_error(c);
  int32_t r4[] = {4};
  EXPECT_EQ(uopc_reshape(c, a, r4, 1), nullptr);
  EXPECT_EQ(c.err(), "RESHAPE from (2,) to (4,) changes the element count");
  uopc_ctx_clear_error(c);
  int32_t bad_shrink[] = {1, 1};
  EXPECT_EQ(uopc_shrink(c, a, bad_shrink, 1), nullptr);
  uopc_ctx_clear_error(c);
  int32_t perm[] = {1};
  EXPECT_EQ(uopc_permute(c, a, perm, 1), nullptr);
  uopc_ctx_clear_error(c);
  EXPECT_EQ(uopc_reduce(c, a, UOPC_OP_ADD, 2), nullptr);
  uopc_ctx_clear_error(c);
  EXPECT_EQ(uopc_const_i(c, UOPC_DT_I32, 3000000000LL), nullptr);
  uopc_ctx_clear_error(c);
  int32_t zero[] = {0};
  EXPECT_EQ(uopc_param(c, 0, UOPC_DT_F32, zero, 1), nullptr);
  uopc_ctx_clear_error(c);
  uopc_node *buf = uopc_buffer(c, 0, UOPC_DT_F32, 4);
  uopc_node *i0 = ci(c, 0);
  uopc_node *addr = uopc_index(c, buf, &i0, 1);
  ASSERT_NE(addr, nullptr);
  EXPECT_EQ(uopc_add(c, addr, addr), nullptr);  // an address is not a value
  uopc_ctx_clear_error(c);
  EXPECT_EQ(uopc_store(c, addr, ci(c, 1)), nullptr);
  EXPECT_EQ(c.err(), "STORE value is i32 but the buffer is f32");
}

TEST(Core, ShapesInferred) {
  Ctx c;
  int32_t s23[] = {2, 3};
  uopc_node *x = uopc_param(c, 0, UOPC_DT_F32, s23, 2);
  uopc_node *m = uopc_mul_k(c, x, 2.0);  // broadcast sugar
  ASSERT_NE(m, nullptr) << c.err();
  EXPECT_EQ(m->ndim, 2);
  EXPECT_EQ(m->src[1]->op, UOPC_OP_EXPAND);
  EXPECT_EQ(m->src[1]->src[0]->op, UOPC_OP_RESHAPE);
  int32_t p10[] = {1, 0};
  uopc_node *t = uopc_permute(c, m, p10, 2);
  EXPECT_EQ(t->shape[0], 3);
  EXPECT_EQ(t->shape[1], 2);
  uopc_node *r = uopc_reduce(c, t, UOPC_OP_ADD, 1);
  EXPECT_EQ(r->ndim, 1);
  EXPECT_EQ(r->shape[0], 3);
  uopc_node *st[] = {ci(c, 1), ci(c, 2), ci(c, 3)};
  uopc_node *s = uopc_stack(c, st, 3);
  EXPECT_EQ(s->shape[0], 3);
  uopc_node *two = ci(c, 2);
  uopc_node *e = uopc_index(c, s, &two, 1);
  EXPECT_EQ(e->ndim, 0);
  EXPECT_EQ(e->dtype, UOPC_DT_I32);
}

TEST(Core, ToposortOrderAndNoRecursion) {
  Ctx c;
  uopc_node *x = p_i32(c, 0);
  uopc_node *e = uopc_add(c, uopc_mul(c, uopc_add(c, x, ci(c, 2)), ci(c, 3)), uopc_add(c, ci(c, 1), ci(c, 4)));
  uint32_t n;
  uopc_node **o = uopc_toposort(c, e, &n);
  std::string got;
  for (uint32_t i = 0; i < n; i++) got += show(c, o[i]) + ";";
  uopc_mem_free(c, o, n * sizeof *o);
  EXPECT_EQ(got, "p0;2;add(p0, 2);3;mul(add(p0, 2), 3);1;4;add(1, 4);add(mul(add(p0, 2), 3), add(1, 4));");
  // a deep chain
  uopc_node *d = x;
  for (int i = 0; i < 200000; i++) d = uopc_add(c, d, ci(c, i % 7));
  EXPECT_EQ(uopc_graph_size(c, d), 200000u + 1 + 7);
}

TEST(Core, CallParamsDoNotEnterNestedBodies) {
  Ctx c;
  uopc_node *p0 = p_i32(c, 0);
  uopc_node *sq = uopc_mul(c, p0, p0);
  uopc_node *inner = uopc_call(c, sq, &p0, 1, "sq");
  uopc_node *g = uopc_mul(c, inner, ci(c, 2));
  uint32_t n;
  uopc_node **ps = uopc_call_params(c, g, &n);
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(ps[0], p0);
  uopc_mem_free(c, ps, n * sizeof *ps);
  // a body whose nested call takes a constant has no params of its own
  uopc_node *five = ci(c, 5);
  uopc_node *closed = uopc_call(c, sq, &five, 1, nullptr);
  ps = uopc_call_params(c, closed, &n);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(ps, nullptr);
  EXPECT_EQ(uopc_ctx_error(c), nullptr);
  // a body may ignore a parameter (the seed refused this)
  uopc_node *zero_body = ci(c, 0);
  EXPECT_NE(uopc_call(c, zero_body, &five, 1, nullptr), nullptr);
  // slot beyond the arguments, or a mismatched argument, is refused
  uopc_node *p1 = p_i32(c, 1);
  EXPECT_EQ(uopc_call(c, uopc_add(c, p0, p1), &five, 1, nullptr), nullptr);
  EXPECT_EQ(c.err(), "CALL body uses PARAM slot 1 but the call has 1 argument");
}

TEST(Core, SubstituteAndShow) {
  Ctx c;
  uopc_node *x = p_i32(c, 0), *y = p_i32(c, 1);
  uopc_node *e = uopc_add(c, uopc_mul(c, x, ci(c, 3)), x);
  uopc_node *from[] = {x}, *to[] = {y};
  uopc_node *r = uopc_substitute(c, e, from, to, 1);
  EXPECT_EQ(r, uopc_add(c, uopc_mul(c, y, ci(c, 3)), y));
  EXPECT_EQ(show(c, uopc_neg(c, x)), "mul(p0, -1)");
  EXPECT_EQ(show(c, uopc_sub(c, x, y)), "add(p0, mul(p1, -1))");
  EXPECT_EQ(show(c, uopc_cast(c, uopc_lt(c, x, y), UOPC_DT_F32)), "cast(cmplt(p0, p1), f32)");
  EXPECT_EQ(show(c, uopc_const_f(c, UOPC_DT_F32, 2.0)), "2.0");
  EXPECT_EQ(show(c, uopc_const_i(c, UOPC_DT_BOOL, 1)), "True");
  uopc_node *k = uopc_const_f(c, UOPC_DT_F32, 2.0);
  int32_t s11[] = {1, 1};
  EXPECT_EQ(show(c, uopc_reshape(c, k, s11, 2)), "reshape(2.0, (1, 1))");
  char *s = uopc_show(c, uopc_add(c, uopc_add(c, x, x), x), 8);
  EXPECT_EQ(std::string(s), "add(add(...");
  uopc_mem_free(c, s, strlen(s) + 1);
}

}  // namespace
