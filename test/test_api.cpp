// The API convention of include/uopc/uopc.h, misuse by misuse: nodes of
// another context, stale errors, NULL and out-of-range arguments (each with
// its documented status or sentinel and message), and the checked kernel
// call (wrong dtype, short array, overlap, 64 buffers with the right sums).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "uopc/uopc.h"
#include "support/ctx.h"

namespace {

bool Has(const std::string &s, const char *part) { return s.find(part) != std::string::npos; }

// The kernel O[i] = A[i] * 2 over n f32 elements (slots 0 and 1).
uopc_node *Double(uopc_ctx *c, int n) {
  uopc_node *A = uopc_buffer(c, 0, UOPC_DT_F32, n), *O = uopc_buffer(c, 1, UOPC_DT_F32, n);
  uopc_node *i = uopc_range_k(c, n, 0);
  return uopc_sink1(c, uopc_end1(c, uopc_store1(c, O, i, uopc_mul_k(c, uopc_load1(c, A, i), 2)), i));
}

// A tensor program: p0 + 1 over an i32 (4,) PARAM.
uopc_node *AddOne(uopc_ctx *c) {
  int32_t shape[1] = {4};
  uopc_node *p = uopc_param(c, 0, UOPC_DT_I32, shape, 1);
  return uopc_add_k(c, p, 1);
}

// ---- nodes never cross contexts ------------------------------------------------------------------

TEST(Api, CrossContextSourceIsRefusedAtConstruction) {
  Ctx a, b;
  uopc_node *three = uopc_const_i(a, UOPC_DT_I32, 3), *four = uopc_const_i(b, UOPC_DT_I32, 4);
  ASSERT_NE(three, nullptr);
  ASSERT_NE(four, nullptr);
  // the fast path (binary of scalars) and the general one (WHERE, STACK, INDEX, CALL)
  EXPECT_EQ(uopc_add(b, three, four), nullptr);
  EXPECT_EQ(b.code(), UOPC_ERR_ARG);
  EXPECT_TRUE(Has(b.err(), "another context")) << b.err();
  uopc_ctx_clear_error(b);
  uopc_node *two[2] = {four, three};
  EXPECT_EQ(uopc_stack(b, two, 2), nullptr);
  EXPECT_TRUE(Has(b.err(), "source 1 belongs to another context")) << b.err();
  uopc_ctx_clear_error(b);
  EXPECT_EQ(uopc_replace(b, uopc_add(b, four, four), two, 2), nullptr);
  EXPECT_TRUE(Has(b.err(), "another context")) << b.err();
  uopc_ctx_clear_error(b);
  EXPECT_EQ(uopc_const_like(b, three, 1.0), nullptr);
  EXPECT_TRUE(Has(b.err(), "another context")) << b.err();
  uopc_ctx_clear_error(b);
  EXPECT_EQ(uopc_full_like(b, three, 1.0), nullptr);
  EXPECT_TRUE(Has(b.err(), "another context")) << b.err();
  // a's own nodes still build, and give 7
  uopc_node *v = uopc_run_value(a, uopc_add(a, three, uopc_const_i(a, UOPC_DT_I32, 4)));
  ASSERT_NE(v, nullptr) << a.err();
  EXPECT_EQ(v->arg.i, 7);
  EXPECT_EQ(uopc_node_in(a, three), 1);
  EXPECT_EQ(uopc_node_in(b, three), 0);
  EXPECT_EQ(uopc_node_in(nullptr, three), 0);
}

TEST(Api, CrossContextRootIsRefusedByEveryEntryPoint) {
  Ctx a, b;
  uopc_node *k = Double(a, 8), *prog = AddOne(a), *val = uopc_const_i(a, UOPC_DT_I32, 3);
  ASSERT_NE(k, nullptr) << a.err();
  ASSERT_NE(prog, nullptr) << a.err();
  uopc_node *call = uopc_call(a, val, nullptr, 0, nullptr);
  ASSERT_NE(call, nullptr) << a.err();
  uopc_node *mine = uopc_const_i(b, UOPC_DT_I32, 1);
  // context channel: NULL (or the sentinel) and UOPC_ERR_ARG in b
  struct CtxCase {
    const char *name;
    std::function<bool()> refused;  // true when the documented sentinel came back
  };
  uopc_ctx *B = b;
  uint32_t n = 7;
  std::vector<CtxCase> ctx_cases = {
      {"simplify", [&] { return uopc_simplify(B, val) == nullptr; }},
      {"simplify_with", [&] { return uopc_simplify_with(B, val, uopc_rules_fold()) == nullptr; }},
      {"run", [&] { return uopc_run(B, val) == nullptr; }},
      {"run_value", [&] { return uopc_run_value(B, val) == nullptr; }},
      {"inline_call", [&] { return uopc_inline_call(B, call) == nullptr; }},
      {"graph_rewrite", [&] { return uopc_graph_rewrite(B, val, uopc_rules_symbolic(), nullptr, 0) == nullptr; }},
      {"matcher_rewrite", [&] { return uopc_matcher_rewrite(uopc_rules_symbolic(), B, val, nullptr) == nullptr; }},
      {"uir_print", [&] { return uopc_uir_print(B, val) == nullptr; }},
      {"show", [&] { return uopc_show(B, val, 100) == nullptr; }},
      {"dot", [&] { return uopc_dot(B, val) == nullptr; }},
      {"value_print", [&] { return uopc_value_print(B, val) == nullptr; }},
      {"toposort", [&] { return uopc_toposort(B, val, &n) == nullptr && n == 0; }},
      {"call_params", [&] { return uopc_call_params(B, val, &n) == nullptr && n == 0; }},
      {"substitute root", [&] { return uopc_substitute(B, val, &mine, &mine, 1) == nullptr; }},
      {"substitute from", [&] { return uopc_substitute(B, mine, &val, &mine, 1) == nullptr; }},
      {"vmin", [&] { return uopc_vmin(B, val) == INT64_MIN; }},
      {"vmax", [&] { return uopc_vmax(B, val) == INT64_MAX; }},
  };
  for (const CtxCase &t : ctx_cases) {
    SCOPED_TRACE(t.name);
    uopc_ctx_clear_error(b);
    EXPECT_TRUE(t.refused());
    EXPECT_EQ(b.code(), UOPC_ERR_ARG);
    EXPECT_TRUE(Has(b.err(), "another context")) << b.err();
  }
  // queries without a channel: their sentinel, nothing recorded
  uopc_ctx_clear_error(b);
  EXPECT_EQ(uopc_graph_size(b, val), 0u);
  EXPECT_EQ(uopc_node_pos(b, val, nullptr, nullptr, nullptr), 0);
  EXPECT_EQ(b.code(), UOPC_OK);
  // error-out channel: NULL / status and UOPC_ERR_ARG in e; b's error untouched
  struct ECase {
    const char *name;
    std::function<bool(uopc_error *)> refused;
  };
  std::vector<ECase> e_cases = {
      {"compile", [&](uopc_error *e) { return uopc_compile(B, k, nullptr, e) == nullptr; }},
      {"emit_llvm", [&](uopc_error *e) { return uopc_emit_llvm(B, k, nullptr, e) == nullptr; }},
      {"emit_asm", [&](uopc_error *e) { return uopc_emit_asm(B, k, nullptr, e) == nullptr; }},
      {"plan_compile", [&](uopc_error *e) { return uopc_plan_compile(B, prog, nullptr, e) == nullptr; }},
      {"plan_emit", [&](uopc_error *e) { return uopc_plan_emit(B, prog, nullptr, 0, e) == nullptr; }},
      {"plan_schedule", [&](uopc_error *e) {
         uopc_node **ks = nullptr;
         uint32_t nk = 9;
         return uopc_plan_schedule(B, prog, &ks, &nk, nullptr, e) == UOPC_ERR_ARG && !ks && nk == 0;
       }},
  };
  uopc_ctx_clear_error(b);
  for (const ECase &t : e_cases) {
    SCOPED_TRACE(t.name);
    uopc_error e{};
    EXPECT_TRUE(t.refused(&e));
    EXPECT_EQ(e.code, UOPC_ERR_ARG);
    EXPECT_TRUE(Has(e.msg, "another context")) << e.msg;
    EXPECT_EQ(uopc_ctx_error(b), nullptr) << "the context's slot is left as it was";
  }
  // the same roots in their own context work
  uopc_error e{};
  uopc_kernel *kern = uopc_compile(a, k, nullptr, &e);
  ASSERT_NE(kern, nullptr) << e.msg;
  uopc_kernel_free(kern);
  uopc_plan *p = uopc_plan_compile(a, prog, nullptr, &e);
  ASSERT_NE(p, nullptr) << e.msg;
  uopc_plan_free(p);
  uopc_plan_cache_clear(); /* cached plans hold kernels: leave none to later tests */
}

// ---- a call with a uopc_error * reports its own error ---------------------------------------------

TEST(Api, StaleConstructorErrorIsNotReportedByLaterCalls) {
  Ctx c;
  EXPECT_EQ(uopc_const_i(c, UOPC_DT_I32, 1LL << 40), nullptr);
  const std::string first = c.err();
  ASSERT_EQ(first, "CONST 1099511627776 is out of the i32 range");
  uopc_node *val = uopc_add(c, uopc_const_i(c, UOPC_DT_I32, 1), uopc_const_i(c, UOPC_DT_I32, 2));
  ASSERT_NE(val, nullptr);
  uopc_error e{};
  // uopc_compile of a non-SINK root: its own error, not the constructor's
  EXPECT_EQ(uopc_compile(c, val, nullptr, &e), nullptr);
  EXPECT_EQ(e.code, UOPC_ERR_TYPE);
  EXPECT_TRUE(Has(e.msg, "root must be a SINK")) << e.msg;
  EXPECT_EQ(c.err(), first) << "neither overwritten nor cleared";
  e = uopc_error{};
  EXPECT_EQ(uopc_emit_llvm(c, val, nullptr, &e), nullptr);
  EXPECT_TRUE(Has(e.msg, "root must be a SINK")) << e.msg;
  e = uopc_error{};
  EXPECT_EQ(uopc_emit_asm(c, val, nullptr, &e), nullptr);
  EXPECT_TRUE(Has(e.msg, "root must be a SINK")) << e.msg;
  EXPECT_EQ(c.err(), first);
  // a plan of a kernel root: the plan's own error
  uopc_node *k = Double(c, 4);
  ASSERT_NE(k, nullptr);
  e = uopc_error{};
  EXPECT_EQ(uopc_plan_compile(c, nullptr, nullptr, &e), nullptr);
  EXPECT_EQ(e.code, UOPC_ERR_ARG);
  EXPECT_TRUE(Has(e.msg, "NULL node")) << e.msg;
  EXPECT_EQ(c.err(), first);
  // successes with an error recorded: they succeed, *e is zeroed, the slot stays
  e.code = UOPC_ERR_JIT;
  uopc_kernel *kern = uopc_compile(c, k, nullptr, &e);
  ASSERT_NE(kern, nullptr) << e.msg;
  EXPECT_EQ(e.code, UOPC_OK);
  EXPECT_STREQ(e.msg, "");
  uopc_kernel_free(kern);
  uopc_plan *p = uopc_plan_compile(c, AddOne(c), nullptr, &e);
  ASSERT_NE(p, nullptr) << e.msg;
  uopc_plan_free(p);
  uopc_plan_cache_clear(); /* cached plans hold kernels: leave none to later tests */
  uopc_node **ks = nullptr;
  uint32_t nk = 0;
  char *text = nullptr;
  ASSERT_EQ(uopc_plan_schedule(c, AddOne(c), &ks, &nk, &text, &e), UOPC_OK) << e.msg;
  EXPECT_GE(nk, 1u);
  free(ks);
  free(text);
  char *ir = uopc_plan_emit(c, AddOne(c), nullptr, 0, &e);
  ASSERT_NE(ir, nullptr) << e.msg;
  EXPECT_TRUE(Has(ir, "; kernel 0 of")) << ir;
  free(ir);
  EXPECT_EQ(c.err(), first);
  // a clean context stays clean after a failing error-out call
  Ctx d;
  EXPECT_EQ(uopc_compile(d, uopc_const_i(d, UOPC_DT_I32, 1), nullptr, &e), nullptr);
  EXPECT_TRUE(Has(e.msg, "root must be a SINK")) << e.msg;
  EXPECT_EQ(uopc_ctx_error(d), nullptr);
  // e may be NULL
  EXPECT_EQ(uopc_compile(d, uopc_const_i(d, UOPC_DT_I32, 1), nullptr, nullptr), nullptr);
  EXPECT_EQ(uopc_ctx_error(d), nullptr);
}

TEST(Api, NestedConstructorsKeepTheFirstError) {
  Ctx c;
  uopc_node *B = uopc_buffer(c, 0, UOPC_DT_F32, 4);
  uopc_node *i = uopc_range_k(c, 4, 0);
  // the innermost failure (an f32 + i32 ADD), then NULL through every level
  uopc_node *bad = uopc_add(c, uopc_load1(c, B, i), i);
  EXPECT_EQ(bad, nullptr);
  const std::string first = c.err();
  EXPECT_EQ(first, "ADD dtype mismatch f32 vs i32");
  uopc_node *root = uopc_sink1(c, uopc_end1(c, uopc_store1(c, B, i, bad), i));
  EXPECT_EQ(root, nullptr);
  uopc_node *srcs[2] = {bad, i};
  EXPECT_EQ(uopc_make(c, UOPC_OP_ADD, UOPC_DT_VOID, srcs, 2, nullptr), nullptr);
  EXPECT_EQ(uopc_index(c, i, srcs, 1), nullptr);
  EXPECT_EQ(uopc_end(c, bad, &i, 1), nullptr);
  EXPECT_EQ(uopc_reshape(c, bad, nullptr, 0), nullptr);
  EXPECT_EQ(uopc_cast(c, bad, UOPC_DT_I32), nullptr);
  EXPECT_EQ(uopc_neg(c, bad), nullptr);
  EXPECT_EQ(uopc_const_like(c, bad, 1), nullptr);
  EXPECT_EQ(c.err(), first);
  // without an earlier error a NULL operand is itself the error
  Ctx d;
  EXPECT_EQ(uopc_add(d, nullptr, uopc_const_i(d, UOPC_DT_I32, 1)), nullptr);
  EXPECT_EQ(d.code(), UOPC_ERR_ARG);
  EXPECT_EQ(d.err(), "ADD source 0 is NULL");
}

// ---- NULL arguments ------------------------------------------------------------------------------

// A call through the context channel: the result is refused (NULL or the
// sentinel) and the context holds code and a message containing msg.
struct CtxMisuse {
  const char *name;
  std::function<bool(uopc_ctx *)> refused;
  uopc_status code;
  const char *msg;
};

TEST(Api, NullArgumentsThroughTheContext) {
  int32_t two[2] = {2, 2};
  const std::vector<CtxMisuse> cases = {
      {"make NULL sources", [](uopc_ctx *c) { return !uopc_make(c, UOPC_OP_ADD, UOPC_DT_VOID, nullptr, 2, nullptr); },
       UOPC_ERR_ARG, "make: 2 sources given as NULL"},
      {"stack NULL sources", [](uopc_ctx *c) { return !uopc_stack(c, nullptr, 3); }, UOPC_ERR_ARG,
       "3 sources given as NULL"},
      {"sink NULL sources", [](uopc_ctx *c) { return !uopc_sink(c, nullptr, 1); }, UOPC_ERR_ARG,
       "1 sources given as NULL"},
      {"index NULL indices",
       [](uopc_ctx *c) { return !uopc_index(c, uopc_buffer(c, 0, UOPC_DT_F32, 4), nullptr, 1); }, UOPC_ERR_ARG,
       "INDEX: 1 sources given as NULL"},
      {"end NULL ranges",
       [](uopc_ctx *c) {
         uopc_node *B = uopc_buffer(c, 0, UOPC_DT_I32, 4);
         uopc_node *i = uopc_range_k(c, 4, 0);
         return !uopc_end(c, uopc_store1(c, B, i, i), nullptr, 1);
       },
       UOPC_ERR_ARG, "END: 1 sources given as NULL"},
      {"call NULL args", [](uopc_ctx *c) { return !uopc_call(c, uopc_const_i(c, UOPC_DT_I32, 1), nullptr, 2, nullptr); },
       UOPC_ERR_ARG, "CALL: 2 sources given as NULL"},
      {"param NULL shape", [](uopc_ctx *c) { return !uopc_param(c, 0, UOPC_DT_I32, nullptr, 2); }, UOPC_ERR_ARG,
       "PARAM: a tuple of 2 entries given as NULL"},
      {"reshape NULL shape", [](uopc_ctx *c) { return !uopc_reshape(c, uopc_const_i(c, UOPC_DT_I32, 1), nullptr, 1); },
       UOPC_ERR_ARG, "RESHAPE: a tuple of 1 entries given as NULL"},
      {"permute NULL perm",
       [&](uopc_ctx *c) { return !uopc_permute(c, uopc_param(c, 0, UOPC_DT_I32, two, 2), nullptr, 2); },
       UOPC_ERR_ARG, "PERMUTE: a tuple of 2 entries given as NULL"},
      {"shrink NULL bounds",
       [&](uopc_ctx *c) { return !uopc_shrink(c, uopc_param(c, 0, UOPC_DT_I32, two, 2), nullptr, 2); },
       UOPC_ERR_ARG, "SHRINK: a tuple of 2 entries given as NULL"},
      {"expand NULL shape",
       [&](uopc_ctx *c) { return !uopc_expand(c, uopc_param(c, 0, UOPC_DT_I32, two, 2), nullptr, 2); },
       UOPC_ERR_ARG, "EXPAND: a tuple of 2 entries given as NULL"},
      {"replace NULL node", [](uopc_ctx *c) { return !uopc_replace(c, nullptr, nullptr, 0); }, UOPC_ERR_ARG,
       "replace: NULL node"},
      {"const_like NULL", [](uopc_ctx *c) { return !uopc_const_like(c, nullptr, 1); }, UOPC_ERR_ARG, "NULL node"},
      {"toposort NULL root",
       [](uopc_ctx *c) {
         uint32_t n = 5;
         return !uopc_toposort(c, nullptr, &n) && n == 0;
       },
       UOPC_ERR_ARG, "toposort: NULL node"},
      {"toposort NULL count", [](uopc_ctx *c) { return !uopc_toposort(c, uopc_const_i(c, UOPC_DT_I32, 1), nullptr); },
       UOPC_ERR_ARG, "toposort: NULL count pointer"},
      {"call_params NULL count",
       [](uopc_ctx *c) { return !uopc_call_params(c, uopc_const_i(c, UOPC_DT_I32, 1), nullptr); }, UOPC_ERR_ARG,
       "call_params: NULL count pointer"},
      {"substitute NULL arrays",
       [](uopc_ctx *c) { return !uopc_substitute(c, uopc_const_i(c, UOPC_DT_I32, 1), nullptr, nullptr, 1); },
       UOPC_ERR_ARG, "substitute: 1 replacements given as NULL arrays"},
      {"show NULL", [](uopc_ctx *c) { return !uopc_show(c, nullptr, 10); }, UOPC_ERR_ARG, "show: NULL node"},
      {"uir_print NULL", [](uopc_ctx *c) { return !uopc_uir_print(c, nullptr); }, UOPC_ERR_ARG, "uir_print: NULL node"},
      {"value_print NULL", [](uopc_ctx *c) { return !uopc_value_print(c, nullptr); }, UOPC_ERR_ARG,
       "value_print: NULL node"},
      {"tensor_print NULL", [](uopc_ctx *c) { return !uopc_tensor_print(c, nullptr); }, UOPC_ERR_ARG, ""},
      {"simplify NULL", [](uopc_ctx *c) { return !uopc_simplify(c, nullptr); }, UOPC_ERR_ARG, "simplify: NULL node"},
      {"simplify_with NULL rules",
       [](uopc_ctx *c) { return !uopc_simplify_with(c, uopc_const_i(c, UOPC_DT_I32, 1), nullptr); }, UOPC_ERR_ARG,
       "simplify: NULL rule set"},
      {"run NULL", [](uopc_ctx *c) { return !uopc_run(c, nullptr); }, UOPC_ERR_ARG, "run: NULL node"},
      {"inline_call NULL", [](uopc_ctx *c) { return !uopc_inline_call(c, nullptr); }, UOPC_ERR_ARG,
       "inline_call: NULL node"},
      {"graph_rewrite NULL root", [](uopc_ctx *c) { return !uopc_graph_rewrite(c, nullptr, uopc_rules_fold(), nullptr, 0); },
       UOPC_ERR_ARG, "graph_rewrite: NULL node"},
      {"graph_rewrite NULL matcher",
       [](uopc_ctx *c) { return !uopc_graph_rewrite(c, uopc_const_i(c, UOPC_DT_I32, 1), nullptr, nullptr, 0); },
       UOPC_ERR_ARG, "graph_rewrite: matcher is NULL"},
      {"matcher_rewrite NULL matcher",
       [](uopc_ctx *c) { return !uopc_matcher_rewrite(nullptr, c, uopc_const_i(c, UOPC_DT_I32, 1), nullptr); },
       UOPC_ERR_ARG, "matcher_rewrite: matcher is NULL"},
      {"vmin NULL", [](uopc_ctx *c) { return uopc_vmin(c, nullptr) == INT64_MIN; }, UOPC_ERR_ARG, "vmin: NULL node"},
      {"vmax NULL", [](uopc_ctx *c) { return uopc_vmax(c, nullptr) == INT64_MAX; }, UOPC_ERR_ARG, "vmax: NULL node"},
      {"dot NULL", [](uopc_ctx *c) { return !uopc_dot(c, nullptr); }, UOPC_ERR_ARG, "dot: NULL node"},
  };
  for (const CtxMisuse &t : cases) {
    SCOPED_TRACE(t.name);
    Ctx c;
    EXPECT_TRUE(t.refused(c));
    EXPECT_EQ(c.code(), t.code);
    EXPECT_TRUE(Has(c.err(), t.msg)) << c.err();
  }
}

TEST(Api, NullContextAndNullPointersGiveTheirSentinel) {
  // constructors and context calls with a NULL context: NULL, no crash
  int32_t one = 1;
  EXPECT_EQ(uopc_const_i(nullptr, UOPC_DT_I32, 1), nullptr);
  EXPECT_EQ(uopc_const_f(nullptr, UOPC_DT_I32, 1), nullptr);  // the dtype error has nowhere to go
  EXPECT_EQ(uopc_const_like(nullptr, nullptr, 1), nullptr);
  EXPECT_EQ(uopc_param(nullptr, 0, UOPC_DT_I32, &one, 1), nullptr);
  EXPECT_EQ(uopc_alu(nullptr, UOPC_OP_SINK, nullptr, 0), nullptr);
  EXPECT_EQ(uopc_cast(nullptr, nullptr, UOPC_DT_VOID), nullptr);
  EXPECT_EQ(uopc_index(nullptr, nullptr, nullptr, 1), nullptr);
  EXPECT_EQ(uopc_show(nullptr, nullptr, 4), nullptr);
  EXPECT_EQ(uopc_uir_print(nullptr, nullptr), nullptr);
  EXPECT_EQ(uopc_value_print(nullptr, nullptr), nullptr);
  EXPECT_EQ(uopc_tensor_print(nullptr, nullptr), nullptr);
  EXPECT_EQ(uopc_dot(nullptr, nullptr), nullptr);
  EXPECT_EQ(uopc_simplify(nullptr, nullptr), nullptr);
  EXPECT_EQ(uopc_run(nullptr, nullptr), nullptr);
  EXPECT_EQ(uopc_run_value(nullptr, nullptr), nullptr);
  EXPECT_EQ(uopc_inline_call(nullptr, nullptr), nullptr);
  EXPECT_EQ(uopc_graph_rewrite(nullptr, nullptr, uopc_rules_fold(), nullptr, 0), nullptr);
  EXPECT_EQ(uopc_vmin(nullptr, nullptr), INT64_MIN);
  EXPECT_EQ(uopc_vmax(nullptr, nullptr), INT64_MAX);
  uint32_t n = 3;
  EXPECT_EQ(uopc_toposort(nullptr, nullptr, &n), nullptr);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(uopc_graph_size(nullptr, nullptr), 0u);
  // context queries
  EXPECT_EQ(uopc_ctx_count(nullptr), 0u);
  EXPECT_EQ(uopc_ctx_node(nullptr, 0), nullptr);
  EXPECT_EQ(uopc_ctx_error(nullptr), nullptr);
  uopc_ctx_clear_error(nullptr);
  uopc_ctx_set_trace(nullptr, stderr);
  uopc_ctx_set_check(nullptr, 1);
  uopc_ctx_set_trace_fn(nullptr, nullptr, nullptr);
  uopc_ctx_set_rewrite_limits(nullptr, nullptr);
  EXPECT_EQ(uopc_ctx_rewrite_limits(nullptr).max_chain, (uint64_t)UOPC_LIMIT_CHAIN);
  EXPECT_EQ(uopc_fail(nullptr, UOPC_ERR_ARG, "x"), nullptr);
  EXPECT_EQ(uopc_mem_alloc(nullptr, 8), nullptr);
  EXPECT_EQ(uopc_mem_realloc(nullptr, nullptr, 0, 8), nullptr);
  uopc_mem_free(nullptr, nullptr, 8);
  EXPECT_EQ(uopc_node_pos(nullptr, nullptr, nullptr, nullptr, nullptr), 0);
  uopc_ctx_free(nullptr);
  // node queries
  EXPECT_EQ(uopc_numel(nullptr), 0);
  EXPECT_EQ(uopc_const_value(nullptr), 0.0);
  char buf[16] = "junk";
  uopc_shape_str(nullptr, 2, buf, sizeof buf);
  EXPECT_STREQ(buf, "");
  uopc_shape_str(nullptr, 0, nullptr, 8);
  EXPECT_EQ(uopc_op_parse(nullptr, 3), -1);
  EXPECT_EQ(uopc_dtype_parse(nullptr, 3), -1);
  EXPECT_EQ(uopc_fmt_double(1.0, nullptr), 0);
  EXPECT_EQ(uopc_fmt_scalar(1.0, UOPC_DT_F32, nullptr), 0);
  // patterns and matchers
  EXPECT_EQ(uopc_pattern_nvars(nullptr), 0u);
  EXPECT_EQ(uopc_pattern_var(nullptr, 0), nullptr);
  EXPECT_EQ(uopc_pattern_nparts(nullptr), 0u);
  EXPECT_EQ(uopc_pattern_part_get(nullptr, 0, nullptr), UOPC_ERR_ARG);
  EXPECT_EQ(uopc_pattern_match(nullptr, nullptr, nullptr, 0), 0u);
  uopc_pattern_free(nullptr);
  EXPECT_EQ(uopc_matcher_size(nullptr), 0u);
  EXPECT_EQ(uopc_matcher_count_for(nullptr, UOPC_OP_ADD), 0u);
  EXPECT_EQ(uopc_matcher_rule(nullptr, 0), nullptr);
  EXPECT_EQ(uopc_matcher_name(nullptr), nullptr);
  EXPECT_EQ(uopc_matcher_cat(nullptr, nullptr), nullptr);
  uopc_matcher_free(nullptr);
  // kernels and plans
  EXPECT_EQ(uopc_kernel_nbufs(nullptr), 0u);
  EXPECT_EQ(uopc_kernel_buf_dtype(nullptr, 0), UOPC_DT_VOID);
  EXPECT_EQ(uopc_kernel_buf_len(nullptr, 0), 0);
  uopc_kernel_free(nullptr);
  EXPECT_EQ(uopc_plan_nargs(nullptr), 0u);
  EXPECT_EQ(uopc_plan_nkernels(nullptr), 0u);
  EXPECT_EQ(uopc_plan_arg(nullptr, 0, nullptr, nullptr, nullptr), 0);
  EXPECT_EQ(uopc_plan_result(nullptr, nullptr, nullptr, nullptr), 0);
  uopc_plan_free(nullptr);
  // npy and cache
  uopc_npy_free(nullptr);
  uopc_cache_get_stats(nullptr);
  EXPECT_EQ(uopc_cache_dir(nullptr, 64), 0);
  EXPECT_EQ(uopc_cache_disk_usage(nullptr, nullptr, nullptr) == UOPC_OK ||
                uopc_cache_disk_usage(nullptr, nullptr, nullptr) == UOPC_ERR_ARG,
            true);
}

// An error-out call: its status and e.code, and msg in e.msg.
struct EMisuse {
  const char *name;
  std::function<uopc_status(uopc_error *)> call;  // the status the call reported
  uopc_status code;
  const char *msg;
};

TEST(Api, NullArgumentsThroughTheErrorOut) {
  static Ctx keep;  // a context for the cases that need one
  uopc_ctx *c = keep;
  // a call that returns a pointer: UOPC_OK when it returned one, else e's code
  // (UOPC_ERR_IO, a code none of these cases expects, when e is NULL)
  auto st = [](const void *r, uopc_error *e) { return r ? UOPC_OK : e ? e->code : UOPC_ERR_IO; };
  const std::vector<EMisuse> cases = {
      {"compile NULL ctx", [&](uopc_error *e) { return st(uopc_compile(nullptr, nullptr, nullptr, e), e); },
       UOPC_ERR_ARG, "compile: NULL context"},
      {"compile NULL root", [&](uopc_error *e) { return st(uopc_compile(c, nullptr, nullptr, e), e); }, UOPC_ERR_ARG,
       "compile: NULL node"},
      {"emit_llvm NULL ctx", [&](uopc_error *e) { return st(uopc_emit_llvm(nullptr, nullptr, nullptr, e), e); },
       UOPC_ERR_ARG, "emit_llvm: NULL context"},
      {"emit_asm NULL root", [&](uopc_error *e) { return st(uopc_emit_asm(c, nullptr, nullptr, e), e); },
       UOPC_ERR_ARG, "emit_asm: NULL node"},
      {"plan_compile NULL ctx", [&](uopc_error *e) { return st(uopc_plan_compile(nullptr, nullptr, nullptr, e), e); },
       UOPC_ERR_ARG, "NULL context"},
      {"plan_emit NULL root", [&](uopc_error *e) { return st(uopc_plan_emit(c, nullptr, nullptr, 1, e), e); },
       UOPC_ERR_ARG, "NULL node"},
      {"plan_schedule NULL outputs",
       [&](uopc_error *e) { return uopc_plan_schedule(c, AddOne(c), nullptr, nullptr, nullptr, e); }, UOPC_ERR_ARG,
       "plan_schedule: NULL output pointer"},
      {"plan_call NULL plan", [&](uopc_error *e) { return uopc_plan_call(nullptr, nullptr, 0, nullptr, e); },
       UOPC_ERR_ARG, "plan_call: NULL plan"},
      {"kernel_call NULL kernel", [&](uopc_error *e) { return uopc_kernel_call(nullptr, nullptr, 0, e); },
       UOPC_ERR_ARG, "NULL kernel"},
      {"kernel_call_checked NULL kernel",
       [&](uopc_error *e) { return uopc_kernel_call_checked(nullptr, nullptr, 0, e); }, UOPC_ERR_ARG, "NULL kernel"},
      {"uir_parse NULL ctx",
       [&](uopc_error *e) { return st(uopc_uir_parse(nullptr, "%a = add 1, 2\n", 14, "t.uir", e), e); },
       UOPC_ERR_ARG, "uir_parse: NULL context"},
      {"uir_parse NULL text", [&](uopc_error *e) { return st(uopc_uir_parse(c, nullptr, 5, "t.uir", e), e); },
       UOPC_ERR_SYNTAX, "no text"},
      {"uir_parse_file NULL path", [&](uopc_error *e) { return st(uopc_uir_parse_file(c, nullptr, e), e); },
       UOPC_ERR_ARG, "uir_parse_file: NULL path"},
      {"pattern_parse NULL", [&](uopc_error *e) { return st(uopc_pattern_parse(nullptr, e), e); }, UOPC_ERR_ARG, ""},
      {"matcher_new NULL rules", [&](uopc_error *e) { return st(uopc_matcher_new(nullptr, 3, e), e); }, UOPC_ERR_ARG,
       ""},
      {"npy_parse NULL buffer",
       [&](uopc_error *e) {
         uopc_npy o;
         return uopc_npy_parse(nullptr, 10, "x.npy", &o, e);
       },
       UOPC_ERR_ARG, ""},
      {"npy_parse NULL out", [&](uopc_error *e) { return uopc_npy_parse("abc", 3, "x.npy", nullptr, e); },
       UOPC_ERR_ARG, ""},
      {"npy_encode NULL", [&](uopc_error *e) {
         size_t n;
         return st(uopc_npy_encode(nullptr, &n, e), e);
       },
       UOPC_ERR_ARG, ""},
      {"npy_save NULL", [&](uopc_error *e) { return uopc_npy_save(nullptr, nullptr, e); }, UOPC_ERR_ARG, ""},
      {"matcher_new rule without function",
       [&](uopc_error *e) {
         uopc_rule r = {"$x", nullptr, "r", nullptr, 0, UOPC_RULE_EXACT, nullptr};
         return st(uopc_matcher_new(&r, 1, e), e);
       },
       UOPC_ERR_ARG, "rule 0: function is NULL"},
  };
  for (const EMisuse &t : cases) {
    SCOPED_TRACE(t.name);
    uopc_error e{};
    EXPECT_EQ(t.call(&e), t.code);
    EXPECT_EQ(e.code, t.code);
    EXPECT_NE(e.msg[0], '\0');
    EXPECT_TRUE(Has(e.msg, t.msg)) << e.msg;
    EXPECT_NE(t.call(nullptr), UOPC_OK) << "e may be NULL: still refused";
  }
  EXPECT_EQ(uopc_ctx_error(c), nullptr) << "error-out calls leave the context's slot alone";
}

// ---- out-of-range enums and counts -----------------------------------------------------------------

TEST(Api, OutOfRangeEnumsAndCounts) {
  int32_t four = 4;
  const std::vector<CtxMisuse> cases = {
      {"make op 999", [](uopc_ctx *c) { return !uopc_make(c, (uopc_op)999, UOPC_DT_VOID, nullptr, 0, nullptr); },
       UOPC_ERR_ARG, "unknown op 999"},
      {"make op -1", [](uopc_ctx *c) { return !uopc_make(c, (uopc_op)-1, UOPC_DT_VOID, nullptr, 0, nullptr); },
       UOPC_ERR_ARG, "unknown op -1"},
      {"make CONST dtype 999",
       [](uopc_ctx *c) {
         uopc_arg a{};
         return !uopc_make(c, UOPC_OP_CONST, (uopc_dtype)999, nullptr, 0, &a);
       },
       UOPC_ERR_ARG, "unknown dtype 999"},
      {"make ADD dtype 999",
       [](uopc_ctx *c) {
         uopc_node *s[2] = {uopc_const_i(c, UOPC_DT_I32, 1), uopc_const_i(c, UOPC_DT_I32, 2)};
         return !uopc_make(c, UOPC_OP_ADD, (uopc_dtype)999, s, 2, nullptr);
       },
       UOPC_ERR_ARG, "unknown dtype 999"},
      {"const_i dtype 999", [](uopc_ctx *c) { return !uopc_const_i(c, (uopc_dtype)999, 1); }, UOPC_ERR_ARG,
       "unknown dtype 999"},
      {"buffer dtype 999", [](uopc_ctx *c) { return !uopc_buffer(c, 0, (uopc_dtype)999, 4); }, UOPC_ERR_ARG,
       "unknown dtype 999"},
      {"param dtype 999", [&](uopc_ctx *c) { return !uopc_param(c, 0, (uopc_dtype)999, &four, 1); }, UOPC_ERR_ARG,
       "unknown dtype 999"},
      {"cast to dtype 999", [](uopc_ctx *c) { return !uopc_cast(c, uopc_const_i(c, UOPC_DT_I32, 1), (uopc_dtype)999); },
       UOPC_ERR_ARG, "unknown dtype 999"},
      {"alu op 999", [](uopc_ctx *c) { return !uopc_alu1(c, (uopc_op)999, uopc_const_i(c, UOPC_DT_I32, 1)); },
       UOPC_ERR_ARG, "uopc_alu: ? is not an ALU op"},
      {"alu of a non-ALU op", [](uopc_ctx *c) { return !uopc_alu1(c, UOPC_OP_SINK, uopc_const_i(c, UOPC_DT_I32, 1)); },
       UOPC_ERR_ARG, "uopc_alu: SINK is not an ALU op"},
      {"reduce op 999",
       [&](uopc_ctx *c) { return !uopc_reduce(c, uopc_param(c, 0, UOPC_DT_I32, &four, 1), (uopc_op)999, 1); },
       UOPC_ERR_TYPE, "REDUCE op must be add, mul or max"},
      {"reduce pop -1",
       [&](uopc_ctx *c) { return !uopc_reduce(c, uopc_param(c, 0, UOPC_DT_I32, &four, 1), UOPC_OP_ADD, -1); },
       UOPC_ERR_TYPE, "REDUCE pop=-1 must be between 1"},
      {"buffer of -4 elements", [](uopc_ctx *c) { return !uopc_buffer(c, 0, UOPC_DT_F32, -4); }, UOPC_ERR_TYPE,
       "BUFFER dim 0 is -4"},
      {"buffer slot -1", [](uopc_ctx *c) { return !uopc_buffer(c, -1, UOPC_DT_F32, 4); }, UOPC_ERR_TYPE,
       "BUFFER slot -1 is out of range"},
      {"param of 65 dims",
       [](uopc_ctx *c) {
         std::vector<int32_t> s(65, 1);
         return !uopc_param(c, 0, UOPC_DT_I32, s.data(), 65);
       },
       UOPC_ERR_TYPE, "PARAM shape has 65 dims, at most 64"},
      {"range idx -1", [](uopc_ctx *c) { return !uopc_range_k(c, 4, -1); }, UOPC_ERR_TYPE, "RANGE idx -1"},
      {"index of UINT32_MAX indices",
       [](uopc_ctx *c) {
         uopc_node *k = uopc_const_i(c, UOPC_DT_I32, 1);
         return !uopc_index(c, k, &k, UINT32_MAX);
       },
       UOPC_ERR_ARG, "is too many"},
  };
  for (const CtxMisuse &t : cases) {
    SCOPED_TRACE(t.name);
    Ctx c;
    EXPECT_TRUE(t.refused(c));
    EXPECT_EQ(c.code(), t.code);
    EXPECT_TRUE(Has(c.err(), t.msg)) << c.err();
  }
  // tables without a channel: their sentinel
  EXPECT_STREQ(uopc_op_name((uopc_op)999), "?");
  EXPECT_STREQ(uopc_op_spelling((uopc_op)-1), "?");
  EXPECT_EQ(uopc_op_arity((uopc_op)999), 0);
  EXPECT_EQ(uopc_op_flags((uopc_op)999), 0u);
  EXPECT_STREQ(uopc_dtype_name((uopc_dtype)999), "?");
  EXPECT_EQ(uopc_dtype_size((uopc_dtype)999), 0u);
  EXPECT_EQ(uopc_dtype_is_float((uopc_dtype)999), 0);
  EXPECT_EQ(uopc_npy_descr((uopc_dtype)999), nullptr);
  EXPECT_EQ(uopc_rule_class_name((uopc_rule_class)99), nullptr);
  EXPECT_EQ(uopc_matcher_count_for(uopc_rules_symbolic(), (uopc_op)999), 0u);
  EXPECT_EQ(uopc_matcher_rule(uopc_rules_symbolic(), 1u << 30), nullptr);
  uopc_val in[3] = {{1, 0}, {2, 0}, {3, 0}}, out = {77, 0};
  EXPECT_EQ(uopc_exec_alu((uopc_op)999, UOPC_DT_I32, UOPC_DT_I32, in, &out), 0);
  EXPECT_EQ(uopc_exec_alu(UOPC_OP_ADD, (uopc_dtype)999, (uopc_dtype)999, in, &out), 0);
  EXPECT_EQ(uopc_exec_alu(UOPC_OP_ADD, UOPC_DT_I32, UOPC_DT_I32, nullptr, nullptr), 0);
  EXPECT_EQ(out.i, 77) << "nothing written for an undefined result";
  char buf[32];
  EXPECT_EQ(uopc_fmt_scalar(1.5, (uopc_dtype)999, buf), 3);  // as a double
  EXPECT_STREQ(buf, "1.5");
  // a tier that is not a uopc_tier: every call that takes options
  Ctx c;
  uopc_compile_opts bad = {(uopc_tier)7};
  uopc_error e{};
  EXPECT_EQ(uopc_compile(c, Double(c, 4), &bad, &e), nullptr);
  EXPECT_EQ(e.code, UOPC_ERR_ARG);
  EXPECT_STREQ(e.msg, "unknown tier 7 (UOPC_TIER_FAST or UOPC_TIER_STRONG)");
  e = uopc_error{};
  EXPECT_EQ(uopc_emit_llvm(c, Double(c, 4), &bad, &e), nullptr);
  EXPECT_STREQ(e.msg, "unknown tier 7 (UOPC_TIER_FAST or UOPC_TIER_STRONG)");
  e = uopc_error{};
  EXPECT_EQ(uopc_plan_compile(c, AddOne(c), &bad, &e), nullptr);
  EXPECT_STREQ(e.msg, "unknown tier 7 (UOPC_TIER_FAST or UOPC_TIER_STRONG)");
  e = uopc_error{};
  EXPECT_EQ(uopc_plan_emit(c, AddOne(c), &bad, 0, &e), nullptr);
  EXPECT_STREQ(e.msg, "unknown tier 7 (UOPC_TIER_FAST or UOPC_TIER_STRONG)");
  bad.tier = (uopc_tier)1;  // between the two tiers: not one either
  EXPECT_EQ(uopc_compile(c, Double(c, 4), &bad, &e), nullptr);
  EXPECT_STREQ(e.msg, "unknown tier 1 (UOPC_TIER_FAST or UOPC_TIER_STRONG)");
  // flags: every UOPC_COMPILE_* bit is taken, any other bit refused
  uopc_compile_opts all = {UOPC_TIER_FAST, UOPC_COMPILE_FAST_MATH | UOPC_COMPILE_NO_REORDER | UOPC_COMPILE_NO_UPCAST |
                                               UOPC_COMPILE_HOT | UOPC_COMPILE_STREAM | UOPC_COMPILE_NO_STREAM |
                                               UOPC_COMPILE_GUARD_PAGES, 1};
  uopc_plan *p = uopc_plan_compile(c, AddOne(c), &all, &e);
  EXPECT_NE(p, nullptr) << e.msg;
  uopc_plan_free(p);
  uopc_kernel *kall = uopc_compile(c, Double(c, 4), &all, &e);
  EXPECT_NE(kall, nullptr) << e.msg;
  uopc_kernel_free(kall);
  for (unsigned bit : {128u, 0x100u, 0x80000000u}) {  // 0x100: the emitter's own bit (codegen/emit.h), never a user's
    uopc_compile_opts other = {UOPC_TIER_FAST, bit, 1};
    char want[80];
    snprintf(want, sizeof want, "unknown compile flags 0x%x (UOPC_COMPILE_* bits)", bit);
    e = uopc_error{};
    EXPECT_EQ(uopc_plan_compile(c, AddOne(c), &other, &e), nullptr);
    EXPECT_STREQ(e.msg, want);
    e = uopc_error{};
    EXPECT_EQ(uopc_compile(c, Double(c, 4), &other, &e), nullptr);
    EXPECT_STREQ(e.msg, want);
  }
  EXPECT_EQ(uopc_ctx_error(c), nullptr);
}

// ---- the checked kernel call ----------------------------------------------------------------------

struct KernelHandle {
  uopc_kernel *k = nullptr;
  ~KernelHandle() { uopc_kernel_free(k); }
};

TEST(Api, CheckedCallRefusesBadArraysBeforeRunning) {
  constexpr int kN = 64;
  Ctx c;
  uopc_error e{};
  KernelHandle h;
  h.k = uopc_compile(c, Double(c, kN), nullptr, &e);
  ASSERT_NE(h.k, nullptr) << e.msg;
  std::vector<float> a(kN), o(kN, -7.0f);
  for (int j = 0; j < kN; j++) a[j] = 0.25f * (float)j - 3.0f;
  std::vector<int32_t> ints(kN);
  int64_t n64[1] = {kN}, n4[1] = {4}, n8x8[2] = {8, 8}, neg[1] = {-1}, big[1] = {kN + 10};
  auto desc = [](void *p, uopc_dtype t, uint32_t nd, const int64_t *s) { return uopc_tensor{p, t, nd, s}; };
  struct Bad {
    const char *name;
    std::vector<uopc_tensor> bufs;
    const char *msg;
  };
  const std::vector<Bad> bad = {
      {"wrong count", {desc(a.data(), UOPC_DT_F32, 1, n64)}, "the kernel takes 2 buffers, got 1"},
      {"wrong dtype",
       {desc(ints.data(), UOPC_DT_I32, 1, n64), desc(o.data(), UOPC_DT_F32, 1, n64)},
       "buffer 0: the kernel's BUFFER is f32, the array is i32"},
      {"unknown dtype",
       {desc(a.data(), UOPC_DT_F32, 1, n64), desc(o.data(), (uopc_dtype)999, 1, n64)},
       "buffer 1: unknown dtype 999"},
      {"short array",
       {desc(a.data(), UOPC_DT_F32, 1, n64), desc(o.data(), UOPC_DT_F32, 1, n4)},
       "buffer 1: the array has 4 elements, the kernel's BUFFER 64"},
      {"scalar for a buffer",
       {desc(a.data(), UOPC_DT_F32, 0, nullptr), desc(o.data(), UOPC_DT_F32, 1, n64)},
       "buffer 0: the array has 1 elements, the kernel's BUFFER 64"},
      {"NULL shape",
       {desc(a.data(), UOPC_DT_F32, 1, nullptr), desc(o.data(), UOPC_DT_F32, 1, n64)},
       "buffer 0: a shape of 1 dims given as NULL"},
      {"negative dim",
       {desc(a.data(), UOPC_DT_F32, 1, neg), desc(o.data(), UOPC_DT_F32, 1, n64)}, "buffer 0: dim 0 is -1"},
      {"too many dims",
       {desc(a.data(), UOPC_DT_F32, 1, n64), desc(o.data(), UOPC_DT_F32, 1000, n64)},
       "buffer 1: 1000 dims, at most 64"},
      {"NULL data",
       {desc(a.data(), UOPC_DT_F32, 1, n64), desc(nullptr, UOPC_DT_F32, 1, n64)}, "buffer 1: NULL data"},
      {"same array in and out",
       {desc(a.data(), UOPC_DT_F32, 1, n64), desc(a.data(), UOPC_DT_F32, 1, n64)},
       "buffers 0 and 1 overlap (kernels need distinct memory per slot)"},
      {"overlapping arrays",
       {desc(a.data() + 10, UOPC_DT_F32, 1, n64), desc(a.data(), UOPC_DT_F32, 1, big)},
       "buffers 0 and 1 overlap"},
  };
  const std::vector<float> o_before = o, a_before = a;
  for (const Bad &b : bad) {
    SCOPED_TRACE(b.name);
    e = uopc_error{};
    EXPECT_EQ(uopc_kernel_call_checked(h.k, b.bufs.data(), (uint32_t)b.bufs.size(), &e), UOPC_ERR_ARG);
    EXPECT_EQ(e.code, UOPC_ERR_ARG);
    EXPECT_TRUE(Has(e.msg, b.msg)) << e.msg;
    EXPECT_EQ(o, o_before) << "nothing ran";
    EXPECT_EQ(a, a_before) << "nothing ran";
  }
  EXPECT_EQ(uopc_kernel_call_checked(h.k, nullptr, 2, &e), UOPC_ERR_ARG);
  EXPECT_TRUE(Has(e.msg, "NULL buffers")) << e.msg;
  // the unchecked call refuses the same array in and out too (the kernel assumes no aliasing)
  void *same[2] = {a.data(), a.data()};
  EXPECT_EQ(uopc_kernel_call(h.k, same, 2, &e), UOPC_ERR_ARG);
  EXPECT_TRUE(Has(e.msg, "buffers 0 and 1 overlap")) << e.msg;
  // right arrays, any shape with enough elements: the right answer
  std::vector<float> longer(kN + 10, -1.0f);
  std::vector<uopc_tensor> good = {desc(a.data(), UOPC_DT_F32, 2, n8x8), desc(longer.data(), UOPC_DT_F32, 1, big)};
  e.code = UOPC_ERR_JIT;
  ASSERT_EQ(uopc_kernel_call_checked(h.k, good.data(), 2, &e), UOPC_OK) << e.msg;
  EXPECT_EQ(e.code, UOPC_OK);
  for (int j = 0; j < kN; j++) ASSERT_EQ(longer[j], a[j] * 2.0f) << j;
  for (int j = kN; j < kN + 10; j++) ASSERT_EQ(longer[j], -1.0f) << "past the buffer: untouched";
}

// In place is one slot both loaded and stored: O[i] = O[i] * 2 + 1.
TEST(Api, InPlaceIsOneSlotLoadedAndStored) {
  constexpr int kN = 100;
  Ctx c;
  uopc_node *O = uopc_buffer(c, 0, UOPC_DT_I32, kN);
  uopc_node *i = uopc_range_k(c, kN, 0);
  uopc_node *root =
      uopc_sink1(c, uopc_end1(c, uopc_store1(c, O, i, uopc_add_k(c, uopc_mul_k(c, uopc_load1(c, O, i), 2), 1)), i));
  uopc_error e{};
  KernelHandle h;
  h.k = uopc_compile(c, root, nullptr, &e);
  ASSERT_NE(h.k, nullptr) << e.msg;
  std::vector<int32_t> v(kN);
  for (int j = 0; j < kN; j++) v[j] = j * 3 - 50;
  int64_t shape[1] = {kN};
  uopc_tensor t = {v.data(), UOPC_DT_I32, 1, shape};
  ASSERT_EQ(uopc_kernel_call_checked(h.k, &t, 1, &e), UOPC_OK) << e.msg;
  for (int j = 0; j < kN; j++) ASSERT_EQ(v[j], (j * 3 - 50) * 2 + 1) << j;
}

// O[i] = B0[i] + ... + B62[i]: 64 buffers through the checked call.
TEST(Api, SixtyFourBuffersThroughTheCheckedCall) {
  constexpr int kIn = 63, kN = 257;
  Ctx c;
  uopc_node *i = uopc_range_k(c, kN, 0);
  uopc_node *sum = nullptr;
  for (int s = 0; s < kIn; s++) {
    uopc_node *v = uopc_load1(c, uopc_buffer(c, s, UOPC_DT_I32, kN), i);
    sum = sum ? uopc_add(c, sum, v) : v;
  }
  uopc_node *root = uopc_sink1(c, uopc_end1(c, uopc_store1(c, uopc_buffer(c, kIn, UOPC_DT_I32, kN), i, sum), i));
  ASSERT_NE(root, nullptr) << c.err();
  uopc_error e{};
  KernelHandle h;
  h.k = uopc_compile(c, root, nullptr, &e);
  ASSERT_NE(h.k, nullptr) << e.msg;
  ASSERT_EQ(uopc_kernel_nbufs(h.k), 64u);
  std::vector<std::vector<int32_t>> b(kIn + 1, std::vector<int32_t>(kN, -1));
  for (int s = 0; s < kIn; s++)
    for (int j = 0; j < kN; j++) b[s][j] = (s + 1) * 7919 - j * (s % 5 + 1);
  int64_t shape[1] = {kN};
  std::vector<uopc_tensor> t;
  for (auto &v : b) t.push_back({v.data(), UOPC_DT_I32, 1, shape});
  ASSERT_EQ(uopc_kernel_call_checked(h.k, t.data(), 64, &e), UOPC_OK) << e.msg;
  for (int j = 0; j < kN; j++) {
    int64_t want = 0;
    for (int s = 0; s < kIn; s++) want += b[s][j];
    ASSERT_EQ(b[kIn][j], (int32_t)want) << j;
  }
  // slot 63 (the last) checked like the others
  t[63].dtype = UOPC_DT_F32;
  EXPECT_EQ(uopc_kernel_call_checked(h.k, t.data(), 64, &e), UOPC_ERR_ARG);
  EXPECT_STREQ(e.msg, "buffer 63: the kernel's BUFFER is i32, the array is f32");
  t[63].dtype = UOPC_DT_I32;
  t[40].data = b[20].data() + 3;
  EXPECT_EQ(uopc_kernel_call_checked(h.k, t.data(), 64, &e), UOPC_ERR_ARG);
  EXPECT_STREQ(e.msg, "buffers 20 and 40 overlap (kernels need distinct memory per slot)");
  EXPECT_EQ(uopc_kernel_call_checked(h.k, t.data(), 65, &e), UOPC_ERR_ARG);
  EXPECT_STREQ(e.msg, "the kernel takes 64 buffers, got 65");
}

}  // namespace
