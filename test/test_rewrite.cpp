// test_rewrite.cpp - patterns, matchers and graph_rewrite (seed chapter 2,
// sections 2.2-2.5, the examples that need no chapter-3 algebra).
#include <gtest/gtest.h>

#include <pthread.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "uopc/uopc.h"
#include "support/ctx.h"
}

namespace {

// A matcher that frees itself; fails the test when the rules do not build.
struct Matcher {
  uopc_matcher *m = nullptr;
  Matcher(std::initializer_list<uopc_rule> rules) {
    std::vector<uopc_rule> v(rules);
    uopc_error e{};
    m = uopc_matcher_new(v.data(), v.size(), &e);
    EXPECT_NE(m, nullptr) << e.msg;
  }
  explicit Matcher(uopc_matcher *mm) : m(mm) {}
  Matcher(const Matcher &) = delete;
  Matcher &operator=(const Matcher &) = delete;
  ~Matcher() { uopc_matcher_free(m); }
  operator const uopc_matcher *() const { return m; }
};

struct Pattern {
  uopc_pattern *p = nullptr;
  explicit Pattern(const char *src) {
    uopc_error e{};
    p = uopc_pattern_parse(src, &e);
    EXPECT_NE(p, nullptr) << src << ": " << e.msg;
  }
  Pattern(const Pattern &) = delete;
  Pattern &operator=(const Pattern &) = delete;
  ~Pattern() { uopc_pattern_free(p); }
  // Every match, each as its bindings.
  std::vector<std::vector<uopc_node *>> match(uopc_node *u) const {
    uint32_t nv = uopc_pattern_nvars(p);
    uint32_t total = uopc_pattern_match(p, u, nullptr, 0);
    std::vector<uopc_node *> flat((size_t)total * nv + 1);
    EXPECT_EQ(uopc_pattern_match(p, u, flat.data(), total), total);
    std::vector<std::vector<uopc_node *>> out;
    for (uint32_t k = 0; k < total; k++) out.emplace_back(flat.begin() + k * nv, flat.begin() + (k + 1) * nv);
    return out;
  }
};

std::string show(uopc_ctx *c, uopc_node *u) {
  char *s = uopc_show(c, u, 4096);
  std::string r = s ? s : "<null>";
  if (s) uopc_mem_free(c, s, strlen(s) + 1);
  return r;
}

uopc_node *p_i32(uopc_ctx *c, int slot) { return uopc_param(c, slot, UOPC_DT_I32, nullptr, 0); }
uopc_node *ci(uopc_ctx *c, int64_t v) { return uopc_const_i(c, UOPC_DT_I32, v); }
uopc_node *cb(uopc_ctx *c, bool v) { return uopc_const_i(c, UOPC_DT_BOOL, v); }
uopc_node *cf(uopc_ctx *c, double v) { return uopc_const_f(c, UOPC_DT_F32, v); }

// ---- rule functions -------------------------------------------------------

uopc_node *r_keep0(uopc_ctx *, uopc_node *const *b, void *) { return b[0]; }
uopc_node *r_keep1(uopc_ctx *, uopc_node *const *b, void *) { return b[1]; }
uopc_node *r_decline(uopc_ctx *, uopc_node *const *, void *) { return nullptr; }

// x * c -> x + x when c == 2 (seed 2.5, test_custom_pattern_matcher)
uopc_node *r_twice(uopc_ctx *c, uopc_node *const *b, void *) {
  return uopc_const_value(b[1]) == 2 ? uopc_add(c, b[0], b[0]) : nullptr;
}
// where(c, 1, 0) -> cast(c, i32) (seed 2.5's b2i)
uopc_node *r_b2i(uopc_ctx *c, uopc_node *const *b, void *) { return uopc_cast(c, b[0], UOPC_DT_I32); }
// x + y -> y + x: the textbook non-terminating rule
uopc_node *r_swap(uopc_ctx *c, uopc_node *const *b, void *) { return uopc_add(c, b[1], b[0]); }

// Counts its calls in *(int *)ctx; declines.
uopc_node *r_count(uopc_ctx *, uopc_node *const *, void *ctx) {
  ++*static_cast<int *>(ctx);
  return nullptr;
}

// ---- parsing ----------------------------------------------------------------

TEST(Pattern, NamesInOrderOfFirstAppearance) {
  Pattern p("$u=(add (add $x:i32 #c1) #c2)");
  ASSERT_EQ(uopc_pattern_nvars(p.p), 4u);
  EXPECT_STREQ(uopc_pattern_var(p.p, 0), "u");
  EXPECT_STREQ(uopc_pattern_var(p.p, 1), "x");
  EXPECT_STREQ(uopc_pattern_var(p.p, 2), "c1");
  EXPECT_STREQ(uopc_pattern_var(p.p, 3), "c2");
  EXPECT_EQ(uopc_pattern_var(p.p, 4), nullptr);
  Pattern q("(add $x (mul $y $x))");
  EXPECT_EQ(uopc_pattern_nvars(q.p), 2u);
}

TEST(Pattern, AcceptsTheNotation) {
  const char *ok[] = {
      "(add $x 0)",         "[mul $x:i32|bool 0]",   "$u=(add (add $x:i32 #c1) #c2)",
      "(index $b $i ...)",  "(add|mul $x _)",        "(* $x $y)",
      "(alu:f32 ...)",      "(const)",               "  ( where   $c  1  0 )  ",
      "(where:i32 $c 1 0)", "True",                  "-1.5e3:f32|f16",
      "_:bool",             "#c",                    "$x",
      "(add $x -inf)",      "[where $a $b $c]",      "$u = (add $x $x)",
      "(add $x 2.)",        "(index (stack) _ ...)", "(add (mul $x #c) $x)",
  };
  for (const char *s : ok) {
    uopc_error e{};
    uopc_pattern *p = uopc_pattern_parse(s, &e);
    EXPECT_NE(p, nullptr) << s << ": " << e.msg;
    uopc_pattern_free(p);
  }
}

TEST(Pattern, ErrorsNameTheColumn) {
  struct Case {
    const char *src;
    int col;
    const char *msg;  // a part of the message
  } cases[] = {
      {"", 1, "empty pattern"},
      {"   ", 4, "empty pattern"},
      {"(ad $x)", 2, "unknown op 'ad'"},
      {"(ADD $x)", 2, "lower case: 'add'"},
      {"(add $x", 8, "missing ')'"},
      {"(add $x]", 8, "expected ')'"},
      {"$x:i33", 4, "unknown dtype 'i33'"},
      {"$x:", 4, "expected a dtype"},
      {"(add $x $y) (mul)", 13, "after the pattern"},
      {"(add ... $x)", 10, "'...' must be the last"},
      {"[add $a $b $c $d]", 15, "at most 3"},
      {"(add $ $y)", 7, "expected a name after '$'"},
      {"(add x 0)", 6, "found 'x'"},
      {"(add $x 0x10)", 9, "bad literal '0x10'"},
      {"(add $x 1e)", 9, "bad number"},
      {"(add $x nan)", 9, "no NaN literal"},
      {"($x)", 2, "expected an op name"},
      {"(add$x)", 5, "unexpected '$'"},
      {"$u=$x", 4, "already has a name"},
      {"(add $x $y $x $y $x $y $x $y $x)", 30, "too many sources"},
      {"(add $x))", 9, "after the pattern"},
      {"#c=(add)", 3, "unexpected '='"},
  };
  for (const Case &k : cases) {
    uopc_error e{};
    uopc_pattern *p = uopc_pattern_parse(k.src, &e);
    EXPECT_EQ(p, nullptr) << k.src;
    uopc_pattern_free(p);
    EXPECT_EQ(e.code, UOPC_ERR_SYNTAX) << k.src;
    EXPECT_EQ(e.line, 1) << k.src;
    EXPECT_EQ(e.col, k.col) << k.src << ": " << e.msg;
    EXPECT_NE(strstr(e.msg, k.msg), nullptr) << k.src << ": " << e.msg;
  }
  uopc_error e{};
  EXPECT_EQ(uopc_pattern_parse(nullptr, &e), nullptr);
  EXPECT_EQ(e.code, UOPC_ERR_ARG);
  EXPECT_EQ(uopc_pattern_parse("(", nullptr), nullptr);  // no error object: fine
}

TEST(Pattern, LimitsAreErrors) {
  std::string deep;
  for (int i = 0; i < 80; i++) deep += "(recip ";
  deep += "$x";
  for (int i = 0; i < 80; i++) deep += ")";
  uopc_error e{};
  EXPECT_EQ(uopc_pattern_parse(deep.c_str(), &e), nullptr);
  EXPECT_NE(strstr(e.msg, "more than 64 parts"), nullptr) << e.msg;
  std::string vars = "(sink";
  for (int i = 0; i < 8; i++) vars += " (sink $a" + std::to_string(i) + " $b" + std::to_string(i) + " $c" +
                                      std::to_string(i) + " $d" + std::to_string(i) + " $e" + std::to_string(i) + ")";
  vars += ")";
  EXPECT_EQ(uopc_pattern_parse(vars.c_str(), &e), nullptr);
  EXPECT_NE(strstr(e.msg, "too many names"), nullptr) << e.msg;
  std::string longtext(5000, ' ');
  longtext += "$x";
  EXPECT_EQ(uopc_pattern_parse(longtext.c_str(), &e), nullptr);
  EXPECT_NE(strstr(e.msg, "longer than"), nullptr) << e.msg;
}

// Token soup: the parser never crashes, and what it accepts can be matched.
TEST(Pattern, RandomTextNeverCrashes) {
  const char *tok[] = {"(", ")", "[", "]", "$x", "$y", "#c", "_", "...", "add", "mul|add", "*", "alu",
                       ":i32", ":bool|f32", "0", "-1.5", "True", "inf", "=", " ", " ", "$u=", "where",
                       ":", "|", "$", "#", "e", "1e", "x", "\t"};
  Ctx c;
  uopc_node *x = p_i32(c, 0);
  uopc_node *nodes[] = {x, ci(c, 0), uopc_add(c, x, ci(c, 0)), uopc_mul(c, uopc_add(c, x, x), ci(c, 1)),
                        uopc_where(c, uopc_lt(c, x, ci(c, 3)), x, ci(c, 0))};
  unsigned seed = 12345;
  auto rnd = [&seed](unsigned n) {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 16) % n;
  };
  int accepted = 0;
  for (int it = 0; it < 20000; it++) {
    std::string s;
    unsigned len = 1 + rnd(12);
    for (unsigned k = 0; k < len; k++) s += tok[rnd(sizeof tok / sizeof tok[0])];
    uopc_error e{};
    uopc_pattern *p = uopc_pattern_parse(s.c_str(), &e);
    if (!p) {
      EXPECT_EQ(e.code, UOPC_ERR_SYNTAX) << s;
      EXPECT_GE(e.col, 1) << s;
      EXPECT_LE(e.col, (int)s.size() + 1) << s;
      continue;
    }
    accepted++;
    uopc_node *out[4 * 32];
    for (uopc_node *u : nodes) uopc_pattern_match(p, u, out, 4);
    uopc_pattern_free(p);
  }
  EXPECT_GT(accepted, 100);
}

// ---- matching (seed 2.2) -------------------------------------------------------

TEST(Pattern, ConsistentNames) {
  Ctx c;
  uopc_node *x = p_i32(c, 0), *y = p_i32(c, 1);
  Pattern same("(add $a $a)");
  EXPECT_TRUE(same.match(uopc_add(c, x, y)).empty());
  auto m = same.match(uopc_add(c, x, x));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0][0], x);
}

TEST(Pattern, TupleVsListSources) {
  Ctx c;
  uopc_node *x = p_i32(c, 0), *y = p_i32(c, 1), *xy = uopc_add(c, x, y);
  auto any = Pattern("[add $a $b]").match(xy);
  ASSERT_EQ(any.size(), 2u);
  EXPECT_EQ(any[0], (std::vector<uopc_node *>{x, y}));
  EXPECT_EQ(any[1], (std::vector<uopc_node *>{y, x}));
  auto ord = Pattern("(add $a $b)").match(xy);
  ASSERT_EQ(ord.size(), 1u);
  EXPECT_EQ(ord[0], (std::vector<uopc_node *>{x, y}));
}

TEST(Pattern, SugarConstantOnEitherSide) {
  // UPat.var("x") + UPat.cvar("c") is [add $x #c]
  Ctx c;
  uopc_node *x = p_i32(c, 0), *three = ci(c, 3);
  Pattern pat("[add $x #c]");
  auto a = pat.match(uopc_add(c, x, three));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0], (std::vector<uopc_node *>{x, three}));
  auto b = pat.match(uopc_add(c, three, x));
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0], (std::vector<uopc_node *>{x, three}));
  EXPECT_TRUE(pat.match(uopc_add(c, x, x)).empty());
  // UPat.var("x") // 2 is ordered
  Pattern div("(floordiv $x 2)");
  EXPECT_EQ(div.match(uopc_idiv(c, x, ci(c, 2))).size(), 1u);
  EXPECT_TRUE(div.match(uopc_idiv(c, ci(c, 2), x)).empty());
}

TEST(Pattern, AllowAnyLenOnIndex) {
  Ctx c;
  uopc_node *row0[] = {ci(c, 1), ci(c, 2)}, *row1[] = {ci(c, 3), ci(c, 4)};
  uopc_node *rows[] = {uopc_stack(c, row0, 2), uopc_stack(c, row1, 2)};
  uopc_node *st = uopc_stack(c, rows, 2);
  uopc_node *i = p_i32(c, 0), *j = p_i32(c, 1);
  uopc_node *idx[] = {i, j};
  uopc_node *ix = uopc_index(c, st, idx, 2);
  ASSERT_NE(ix, nullptr) << c.err();
  EXPECT_TRUE(Pattern("(index $b $i)").match(ix).empty());
  auto m = Pattern("(index $b $i ...)").match(ix);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0], (std::vector<uopc_node *>{st, i}));
  EXPECT_EQ(Pattern("(index (stack) _ ...)").match(ix).size(), 1u);
  EXPECT_EQ(Pattern("(index $b ...)").match(ix).size(), 1u);
  EXPECT_EQ(Pattern("(index $b $i $j ...)").match(ix).size(), 1u);  // ... may match nothing
  EXPECT_TRUE(Pattern("(index $b $i $j $k ...)").match(ix).empty());
  EXPECT_EQ(Pattern("(index)").match(ix).size(), 1u);  // sources not looked at
}

TEST(Pattern, LiteralsCompareAsNumbers) {
  Ctx c;
  Pattern zero("0"), one("1"), zero_i32("0:i32"), inf("inf"), neg("-1"), half("2.5"), tru("True");
  uopc_node *zeros[] = {ci(c, 0), cf(c, 0.0), cf(c, -0.0), cb(c, false), uopc_const_f(c, UOPC_DT_F16, 0.0)};
  for (uopc_node *z : zeros) {
    EXPECT_EQ(zero.match(z).size(), 1u) << show(c, z);
    EXPECT_TRUE(one.match(z).empty()) << show(c, z);
  }
  EXPECT_EQ(zero_i32.match(ci(c, 0)).size(), 1u);
  EXPECT_TRUE(zero_i32.match(cf(c, 0.0)).empty());
  EXPECT_TRUE(zero_i32.match(cb(c, false)).empty());
  EXPECT_EQ(one.match(cb(c, true)).size(), 1u);
  EXPECT_EQ(tru.match(ci(c, 1)).size(), 1u);
  EXPECT_EQ(Pattern("False:bool").match(cb(c, false)).size(), 1u);
  EXPECT_TRUE(Pattern("False:bool").match(ci(c, 0)).empty());
  EXPECT_EQ(one.match(cf(c, 1.0)).size(), 1u);
  EXPECT_EQ(inf.match(cf(c, INFINITY)).size(), 1u);
  EXPECT_TRUE(inf.match(cf(c, -INFINITY)).empty());
  EXPECT_EQ(neg.match(ci(c, -1)).size(), 1u);
  EXPECT_EQ(half.match(cf(c, 2.5)).size(), 1u);
  uopc_node *nan = cf(c, NAN);
  for (const Pattern *p : {&zero, &one, &inf, &neg, &half}) EXPECT_TRUE(p->match(nan).empty());
  EXPECT_EQ(Pattern("#c").match(nan).size(), 1u);
  // a literal is a CONST: a PARAM never matches
  EXPECT_TRUE(zero.match(p_i32(c, 0)).empty());
}

TEST(Pattern, OpAndDtypeSets) {
  Ctx c;
  uopc_node *x = p_i32(c, 0), *y = p_i32(c, 1), *f = uopc_param(c, 2, UOPC_DT_F32, nullptr, 0);
  uopc_node *add = uopc_add(c, x, y), *mul = uopc_mul(c, x, y), *lt = uopc_lt(c, x, y);
  Pattern am("(add|mul $a $b)"), alu("(alu)"), any("(* ...)"), i32("$v:i32|bool"), lt_bool("(cmplt:bool _ _)");
  EXPECT_EQ(am.match(add).size(), 1u);
  EXPECT_EQ(am.match(mul).size(), 1u);
  EXPECT_TRUE(am.match(lt).empty());
  EXPECT_EQ(alu.match(lt).size(), 1u);
  EXPECT_EQ(alu.match(uopc_cast(c, x, UOPC_DT_F32)).size(), 1u);
  EXPECT_TRUE(alu.match(x).empty());
  EXPECT_EQ(any.match(x).size(), 1u);
  EXPECT_EQ(i32.match(x).size(), 1u);
  EXPECT_EQ(i32.match(lt).size(), 1u);
  EXPECT_TRUE(i32.match(f).empty());
  EXPECT_EQ(lt_bool.match(lt).size(), 1u);
  EXPECT_TRUE(Pattern("(add:f32 ...)").match(add).empty());
}

TEST(Pattern, ThreeSourcesTryEveryOrder) {
  Ctx c;
  uopc_node *x = p_i32(c, 0), *y = p_i32(c, 1), *cond = uopc_lt(c, x, y);
  uopc_node *w = uopc_where(c, cond, x, y);
  // itertools.permutations order of the sub-patterns
  auto all = Pattern("[where $a $b $c]").match(w);
  ASSERT_EQ(all.size(), 6u);
  using V = std::vector<uopc_node *>;
  EXPECT_EQ(all[0], (V{cond, x, y}));
  EXPECT_EQ(all[1], (V{cond, y, x}));
  EXPECT_EQ(all[2], (V{x, cond, y}));
  EXPECT_EQ(all[3], (V{y, cond, x}));
  EXPECT_EQ(all[4], (V{x, y, cond}));
  EXPECT_EQ(all[5], (V{y, x, cond}));
  auto typed = Pattern("[where $c:bool $a $b]").match(w);
  ASSERT_EQ(typed.size(), 2u);
  EXPECT_EQ(typed[0], (V{cond, x, y}));
  EXPECT_EQ(typed[1], (V{cond, y, x}));
  // nested any-order: 2 x 2 matches, outer order first
  uopc_node *s = uopc_add(c, uopc_mul(c, x, y), x);
  auto nested = Pattern("[add [mul $a $b] $c]").match(s);
  ASSERT_EQ(nested.size(), 2u);
  EXPECT_EQ(nested[0], (V{x, y, x}));
  EXPECT_EQ(nested[1], (V{y, x, x}));
  // a name bound in one source constrains the others, in every order
  EXPECT_EQ(Pattern("[add [mul $a $b] $a]").match(s).size(), 1u);
}

TEST(Pattern, MatchCountsBeyondMax) {
  Ctx c;
  uopc_node *x = p_i32(c, 0), *y = p_i32(c, 1);
  Pattern p("[add $a $b]");
  uopc_node *out[2] = {nullptr, nullptr};
  EXPECT_EQ(uopc_pattern_match(p.p, uopc_add(c, x, y), out, 1), 2u);
  EXPECT_EQ(out[0], x);
  EXPECT_EQ(out[1], y);
  EXPECT_EQ(uopc_pattern_match(p.p, uopc_add(c, x, y), nullptr, 5), 2u);
  EXPECT_EQ(uopc_pattern_match(nullptr, x, out, 1), 0u);
}

// ---- matchers (seed 2.3) -----------------------------------------------------

TEST(Matcher, IndexedByRootOp) {
  Matcher m({
      {"(add $x 0)", r_keep0, "x+0"},
      {"[mul $x 1]", r_keep0, nullptr},
      {"(add|mul $x $y)", r_decline, nullptr},
      {"$x", r_decline, "any"},
      {"#c", r_decline, nullptr},
      {"(alu)", r_decline, nullptr},
  });
  EXPECT_EQ(uopc_matcher_size(m), 6u);
  EXPECT_EQ(uopc_matcher_count_for(m, UOPC_OP_ADD), 4u);
  EXPECT_EQ(uopc_matcher_count_for(m, UOPC_OP_MUL), 4u);
  EXPECT_EQ(uopc_matcher_count_for(m, UOPC_OP_CONST), 2u);
  EXPECT_EQ(uopc_matcher_count_for(m, UOPC_OP_PARAM), 1u);
  EXPECT_EQ(uopc_matcher_count_for(m, UOPC_OP_WHERE), 2u);
  EXPECT_EQ(uopc_matcher_count_for(m, UOPC_OP_CAST), 2u);
  EXPECT_EQ(uopc_matcher_count_for(m, UOPC_OP_SINK), 1u);
  EXPECT_EQ(uopc_matcher_count_for(m, (uopc_op)UOPC_OP_COUNT), 0u);
  Matcher empty(uopc_matcher_new(nullptr, 0, nullptr));
  ASSERT_NE(empty.m, nullptr);
  EXPECT_EQ(uopc_matcher_size(empty), 0u);
  Matcher both(uopc_matcher_cat(m, m));
  ASSERT_NE(both.m, nullptr);
  EXPECT_EQ(uopc_matcher_size(both), 12u);
  EXPECT_EQ(uopc_matcher_count_for(both, UOPC_OP_ADD), 8u);
}

TEST(Matcher, BadRuleNamesItsIndex) {
  uopc_rule rules[] = {{"(add $x 0)", r_keep0, nullptr}, {"(add $x (mull $y))", r_keep0, nullptr}};
  uopc_error e{};
  EXPECT_EQ(uopc_matcher_new(rules, 2, &e), nullptr);
  EXPECT_EQ(e.code, UOPC_ERR_SYNTAX);
  EXPECT_EQ(e.col, 10);
  EXPECT_NE(strstr(e.msg, "rule 1: unknown op 'mull'"), nullptr) << e.msg;
  EXPECT_EQ(uopc_matcher_new(nullptr, 3, &e), nullptr);
  EXPECT_EQ(e.code, UOPC_ERR_ARG);
  uopc_rule nofn[] = {{"(add $x 0)", nullptr, nullptr}};
  EXPECT_EQ(uopc_matcher_new(nofn, 1, &e), nullptr);
  EXPECT_EQ(e.code, UOPC_ERR_ARG);
  EXPECT_NE(strstr(e.msg, "rule 0: function is NULL"), nullptr) << e.msg;
}

TEST(Matcher, RewriteIsOneStep) {
  Ctx c;
  Matcher m({{"(add $x 0)", r_keep0, nullptr}, {"(mul $x 1)", r_keep0, nullptr}});
  uopc_node *x = p_i32(c, 0);
  uopc_node *e = uopc_mul(c, uopc_add(c, x, ci(c, 0)), ci(c, 1));
  EXPECT_EQ(uopc_matcher_rewrite(m, c, e, nullptr), uopc_add(c, x, ci(c, 0)));
  EXPECT_EQ(uopc_matcher_rewrite(m, c, x, nullptr), nullptr);
  EXPECT_EQ(uopc_ctx_error(c), nullptr);
  EXPECT_EQ(uopc_matcher_rewrite(nullptr, c, x, nullptr), nullptr);
  EXPECT_EQ(c.code(), UOPC_ERR_ARG);
  uopc_ctx_clear_error(c);
  EXPECT_EQ(uopc_matcher_rewrite(m, c, nullptr, nullptr), nullptr);
  EXPECT_EQ(c.code(), UOPC_ERR_ARG);
}

// seed 2.5: test_custom_pattern_matcher
TEST(GraphRewrite, CustomStrengthReduction) {
  Ctx c;
  Matcher pm({{"[mul $x #c:i32]", r_twice, "x*2 -> x+x"}});
  uopc_node *x = p_i32(c, 0);
  EXPECT_EQ(uopc_graph_rewrite(c, uopc_mul(c, x, ci(c, 2)), pm, nullptr, 0), uopc_add(c, x, x));
  EXPECT_EQ(uopc_graph_rewrite(c, uopc_mul(c, ci(c, 2), x), pm, nullptr, 0), uopc_add(c, x, x));
  uopc_node *x3 = uopc_mul(c, x, ci(c, 3));
  EXPECT_EQ(uopc_graph_rewrite(c, x3, pm, nullptr, 0), x3);  // declines when c != 2
  uopc_node *f = uopc_param(c, 1, UOPC_DT_F32, nullptr, 0);
  uopc_node *f2 = uopc_mul(c, f, cf(c, 2.0));
  EXPECT_EQ(uopc_graph_rewrite(c, f2, pm, nullptr, 0), f2);  // 2.0 is another rule's business
  EXPECT_EQ(uopc_ctx_error(c), nullptr) << c.err();
}

// seed 2.5: where(c, 1, 0) is a cast, and its dtype bug
TEST(GraphRewrite, WhereToCastDtypeBugCaughtByCheck) {
  Ctx c;
  uopc_node *cond = uopc_lt(c, p_i32(c, 0), p_i32(c, 1));
  uopc_node *wi = uopc_where(c, cond, ci(c, 1), ci(c, 0));
  uopc_node *wb = uopc_where(c, cond, cb(c, true), cb(c, false));
  ASSERT_EQ(wb->dtype, UOPC_DT_BOOL);
  Matcher b2i({{"(where $c 1 0)", r_b2i, "where(c,1,0) -> cast"}});
  // on an i32 WHERE the rule is right
  EXPECT_EQ(uopc_graph_rewrite(c, wi, b2i, nullptr, 0), uopc_cast(c, cond, UOPC_DT_I32));
  // on a bool WHERE it changes the dtype: the check names the rule
  EXPECT_EQ(uopc_graph_rewrite(c, wb, b2i, nullptr, 0), nullptr);
  EXPECT_EQ(c.code(), UOPC_ERR_REWRITE);
  EXPECT_EQ(c.err(), "rule 'where(c,1,0) -> cast' changed dtype bool -> i32 on where(cmplt(p0, p1), True, False)");
  uopc_ctx_clear_error(c);
  // without the check: the seed's silent bug
  uopc_ctx_set_check(c, 0);
  uopc_node *bad = uopc_graph_rewrite(c, wb, b2i, nullptr, 0);
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(bad->dtype, UOPC_DT_I32);
  uopc_ctx_set_check(c, 1);
  // the fix: constrain the dtype of the node replaced
  Matcher fixed({{"(where:i32 $c 1 0)", r_b2i, "where(c,1,0) -> cast"}});
  EXPECT_EQ(uopc_graph_rewrite(c, wb, fixed, nullptr, 0), wb);
  EXPECT_EQ(uopc_graph_rewrite(c, wi, fixed, nullptr, 0), uopc_cast(c, cond, UOPC_DT_I32));
  EXPECT_EQ(uopc_ctx_error(c), nullptr) << c.err();
}

TEST(GraphRewrite, CheckCatchesShapeChanges) {
  Ctx c;
  int32_t s23[] = {2, 3}, s32[] = {3, 2};
  uopc_node *x = uopc_param(c, 0, UOPC_DT_F32, s23, 2);
  uopc_node *r = uopc_reshape(c, x, s32, 2);
  ASSERT_NE(r, nullptr) << c.err();
  Matcher m({{"(reshape $x)", r_keep0, nullptr}});
  EXPECT_EQ(uopc_graph_rewrite(c, r, m, nullptr, 0), nullptr);
  EXPECT_EQ(c.err(), "rule '(reshape $x)' changed shape (3, 2) -> (2, 3) on reshape(p0, (3, 2))");
  // uopc_matcher_rewrite checks too
  uopc_ctx_clear_error(c);
  EXPECT_EQ(uopc_matcher_rewrite(m, c, r, nullptr), nullptr);
  EXPECT_EQ(c.code(), UOPC_ERR_REWRITE);
}

// seed 2.4: Termination, detected
TEST(GraphRewrite, CommutativitySwapDoesNotConverge) {
  Ctx c;
  Matcher swap({{"(add $x $y)", r_swap, "swap"}});
  uopc_node *a = p_i32(c, 0), *b = p_i32(c, 1);
  EXPECT_EQ(uopc_graph_rewrite(c, uopc_add(c, a, b), swap, nullptr, 1000), nullptr);
  EXPECT_EQ(c.code(), UOPC_ERR_REWRITE);
  EXPECT_EQ(c.err(), "graph_rewrite did not converge: 1000 rule steps, the max_steps given (a rule loops?)");
}

TEST(GraphRewrite, StepLimitCountsStageOneVisits) {
  Ctx c;
  Matcher none(uopc_matcher_new(nullptr, 0, nullptr));
  uopc_node *x = p_i32(c, 0);
  uopc_node *e = uopc_add(c, uopc_mul(c, x, ci(c, 3)), ci(c, 4));  // 5 nodes
  EXPECT_EQ(uopc_graph_rewrite(c, e, none, nullptr, 5), e);
  EXPECT_EQ(uopc_graph_rewrite(c, e, none, nullptr, 4), nullptr);
  EXPECT_EQ(c.code(), UOPC_ERR_REWRITE);
}

// seed 2.5: Rules with context (partial evaluation)
uopc_node *r_bind(uopc_ctx *c, uopc_node *const *b, void *ctx) {
  const int64_t *slot_value = static_cast<const int64_t *>(ctx);  // {slot, value}
  return b[0]->arg.i == slot_value[0] ? uopc_const_i(c, (uopc_dtype)b[0]->dtype, slot_value[1]) : nullptr;
}

TEST(GraphRewrite, ContextRuleBindsParam) {
  Ctx c;
  Matcher bind({{"$p=(param)", r_bind, "bind"}});
  uopc_node *p0 = p_i32(c, 0), *p1 = p_i32(c, 1);
  uopc_node *e = uopc_add(c, uopc_mul(c, uopc_add(c, p0, ci(c, 2)), p1), uopc_mul(c, p0, ci(c, 0)));
  int64_t env[2] = {0, 5};
  uopc_node *r = uopc_graph_rewrite(c, e, bind, env, 0);
  uopc_node *want = uopc_add(c, uopc_mul(c, uopc_add(c, ci(c, 5), ci(c, 2)), p1), uopc_mul(c, ci(c, 5), ci(c, 0)));
  EXPECT_EQ(r, want) << show(c, r);
  EXPECT_EQ(show(c, r), "add(mul(add(5, 2), p1), mul(5, 0))");
  // ctx reaches every rule; rules that need none ignore it (no seed pitfall 5)
  Matcher mixed({{"(add $x 0)", r_keep0, nullptr}, {"$p=(param)", r_bind, "bind"}});
  EXPECT_EQ(uopc_graph_rewrite(c, uopc_add(c, p0, ci(c, 0)), mixed, env, 0), ci(c, 5));
}

TEST(GraphRewrite, RuleOrderIsPriority) {
  Ctx c;
  uopc_rule first[] = {{"(add $x $y)", r_keep0, "left"}};
  uopc_rule second[] = {{"(add $x $y)", r_keep1, "right"}};
  Matcher a(uopc_matcher_new(first, 1, nullptr)), b(uopc_matcher_new(second, 1, nullptr));
  Matcher ab(uopc_matcher_cat(a, b)), ba(uopc_matcher_cat(b, a));
  uopc_node *x = p_i32(c, 0), *y = p_i32(c, 1), *e = uopc_add(c, x, y);
  EXPECT_EQ(uopc_graph_rewrite(c, e, ab, nullptr, 0), x);
  EXPECT_EQ(uopc_graph_rewrite(c, e, ba, nullptr, 0), y);
}

uopc_node *r_self(uopc_ctx *, uopc_node *const *b, void *) { return b[0]; }  // b[0] is the matched node

TEST(GraphRewrite, ReturningTheInputDeclines) {
  Ctx c;
  uopc_node *x = p_i32(c, 0), *y = p_i32(c, 1), *e = uopc_add(c, x, y);
  // rule 1 returns its input (declines), so rule 2 gets its turn
  Matcher m({{"$u=(add _ _)", r_self, "self"}, {"(add $x $y)", r_keep1, "right"}});
  EXPECT_EQ(uopc_graph_rewrite(c, e, m, nullptr, 0), y);
  // a rule that returns the node itself for every binding declines
  Matcher perm({{"$u=[add $a $b]", r_keep0, "u"}, {"[add $a $b]", r_keep0, "a"}});
  EXPECT_EQ(uopc_graph_rewrite(c, e, perm, nullptr, 0), x);
  Matcher only_self({{"$u=(add _ _)", r_self, "self"}});
  EXPECT_EQ(uopc_graph_rewrite(c, e, only_self, nullptr, 0), e);
}

uopc_node *r_second_binding(uopc_ctx *c, uopc_node *const *b, void *) {
  // [add $a $b] on x+y: decline a=x, fire on a=y
  return b[0]->arg.i == 1 ? uopc_mul(c, b[0], b[1]) : nullptr;
}

TEST(GraphRewrite, EveryBindingIsTried) {
  Ctx c;
  uopc_node *x = p_i32(c, 0), *y = p_i32(c, 1);
  Matcher m({{"[add $a $b]", r_second_binding, nullptr}});
  EXPECT_EQ(uopc_graph_rewrite(c, uopc_add(c, x, y), m, nullptr, 0), uopc_mul(c, y, x));
}

// seed 2.4: rewrite t = t*t to depth 20: 21 nodes, not 2^21 lookups
TEST(GraphRewrite, SharingVisitsEachNodeOnce) {
  Ctx c;
  uopc_node *t = p_i32(c, 0);
  for (int i = 0; i < 20; i++) t = uopc_mul(c, t, t);
  EXPECT_EQ(uopc_graph_size(c, t), 21u);
  int calls = 0;
  Matcher every({{"_", r_count, "count"}});
  EXPECT_EQ(uopc_graph_rewrite(c, t, every, &calls, 0), t);
  EXPECT_EQ(calls, 21);
  int squares = 0;
  Matcher sq({{"(mul $a $a)", r_count, "count"}});
  EXPECT_EQ(uopc_graph_rewrite(c, t, sq, &squares, 0), t);
  EXPECT_EQ(squares, 20);
}

uopc_node *r_record(uopc_ctx *, uopc_node *const *b, void *ctx) {
  static_cast<std::vector<uopc_node *> *>(ctx)->push_back(b[0]);
  return nullptr;
}

// seed 2.4 "Watching it run": with no rule firing, stage-1 visits come in
// toposort order
TEST(GraphRewrite, VisitOrderIsToposort) {
  Ctx c;
  uopc_node *p0 = p_i32(c, 0), *p1 = p_i32(c, 1);
  uopc_node *e = uopc_add(c, uopc_mul(c, uopc_add(c, p0, ci(c, 2)), ci(c, 3)), uopc_add(c, ci(c, 1), ci(c, 4)));
  uopc_node *shared = uopc_add(c, p1, e);
  uopc_node *root = uopc_mul(c, uopc_add(c, shared, uopc_mul(c, e, p0)), uopc_add(c, shared, p1));
  std::vector<uopc_node *> visits;
  Matcher rec({{"$u", r_record, "record"}});
  EXPECT_EQ(uopc_graph_rewrite(c, root, rec, &visits, 0), root);
  uint32_t n = 0;
  uopc_node **topo = uopc_toposort(c, root, &n);
  ASSERT_NE(topo, nullptr);
  std::vector<uopc_node *> want(topo, topo + n);
  uopc_mem_free(c, topo, n * sizeof topo[0]);
  EXPECT_EQ(visits, want);
  EXPECT_EQ(show(c, visits[3]), "add(p0, 2)");
}

// seed 2.4 "Why results are rewritten again": a rule's result is normalized
TEST(GraphRewrite, ResultsAreRewrittenAgain) {
  Ctx c;
  Matcher m({{"(add $x 0)", r_keep0, "x+0"}, {"(mul $x 1)", [](uopc_ctx *cc, uopc_node *const *b, void *) {
                                                 return uopc_add(cc, b[0], ci(cc, 0));
                                               }, "x*1 -> x+0"}});
  uopc_node *x = p_i32(c, 0), *y = p_i32(c, 1);
  EXPECT_EQ(uopc_graph_rewrite(c, uopc_mul(c, x, ci(c, 1)), m, nullptr, 0), x);
  // users are rebuilt from their sources' normal forms
  uopc_node *e = uopc_add(c, uopc_mul(c, uopc_add(c, x, ci(c, 0)), ci(c, 1)), y);
  EXPECT_EQ(uopc_graph_rewrite(c, e, m, nullptr, 0), uopc_add(c, x, y));
  // a rule whose result is already done
  Matcher none(uopc_matcher_new(nullptr, 0, nullptr));
  EXPECT_EQ(uopc_graph_rewrite(c, e, none, nullptr, 0), e);
}

// A rule with state in ctx (seed 2.4 warns this breaks memoization; here it
// builds the one case where a node is finished while its own frame still
// waits for its sources): the first call on p0 rewrites p0 to the root
// add(p0, p1); later calls decline.
uopc_node *r_once_to_root(uopc_ctx *c, uopc_node *const *b, void *ctx) {
  int *calls = static_cast<int *>(ctx);
  if (b[0]->arg.i != 0 || (*calls)++) return nullptr;
  return uopc_add(c, b[0], p_i32(c, 1));
}

TEST(GraphRewrite, NodeFinishedMeanwhileIsSkipped) {
  Ctx c;
  uopc_node *p0 = p_i32(c, 0), *u = uopc_add(c, p0, p_i32(c, 1));
  int calls = 0;
  Matcher m({{"$p=(param)", r_once_to_root, nullptr}});
  // p0 -> u (first call); u is normalized inside p0's rewrite (p0 declines
  // the second time), so done[u] = u and done[p0] = u.  The root's own frame
  // then finds u done and skips it, as the seed does; rebuilding it would
  // give add(add(p0, p1), p1).
  EXPECT_EQ(uopc_graph_rewrite(c, u, m, &calls, 0), u);
  EXPECT_EQ(calls, 2);
}

uopc_node *r_fail(uopc_ctx *c, uopc_node *const *, void *) {
  return static_cast<uopc_node *>(uopc_fail(c, UOPC_ERR_EVAL, "rule says no"));
}
uopc_node *r_bad_node(uopc_ctx *c, uopc_node *const *b, void *) { return uopc_add(c, b[0], cb(c, true)); }

TEST(GraphRewrite, RuleErrorsStopTheRewrite) {
  Ctx c;
  uopc_node *x = p_i32(c, 0), *e = uopc_add(c, x, ci(c, 7));
  Matcher fail({{"#c", r_fail, nullptr}});
  EXPECT_EQ(uopc_graph_rewrite(c, e, fail, nullptr, 0), nullptr);
  EXPECT_EQ(c.code(), UOPC_ERR_EVAL);
  EXPECT_EQ(c.err(), "rule says no");  // not prefixed
  uopc_ctx_clear_error(c);
  Matcher bad({{"(add $x #c)", r_bad_node, nullptr}});
  EXPECT_EQ(uopc_graph_rewrite(c, e, bad, nullptr, 0), nullptr);
  EXPECT_EQ(c.code(), UOPC_ERR_TYPE) << c.err();
  uopc_ctx_clear_error(c);
  EXPECT_EQ(uopc_graph_rewrite(c, nullptr, bad, nullptr, 0), nullptr);
  EXPECT_EQ(c.code(), UOPC_ERR_ARG);
  uopc_ctx_clear_error(c);
  EXPECT_EQ(uopc_graph_rewrite(c, e, nullptr, nullptr, 0), nullptr);
  EXPECT_EQ(c.code(), UOPC_ERR_ARG);
}

std::string read_all(FILE *f) {
  fflush(f);
  rewind(f);
  std::string s;
  char buf[512];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

TEST(GraphRewrite, TraceLines) {
  Ctx c;
  FILE *f = tmpfile();
  ASSERT_NE(f, nullptr);
  uopc_ctx_set_trace(c, f);
  Matcher m({{"[mul $x #c:i32]", r_twice, "x*2 -> x+x"}, {"(add $x 0)", r_keep0, nullptr}});
  uopc_node *x = p_i32(c, 0);
  uopc_node *e = uopc_add(c, uopc_add(c, uopc_mul(c, x, ci(c, 2)), ci(c, 0)), uopc_mul(c, x, ci(c, 3)));
  uopc_node *r = uopc_graph_rewrite(c, e, m, nullptr, 0);
  EXPECT_EQ(r, uopc_add(c, uopc_add(c, x, x), uopc_mul(c, x, ci(c, 3))));
  const std::string want =
      "x*2 -> x+x: mul(p0, 2) -> add(p0, p0)\n"
      "(add $x 0): add(add(p0, p0), 0) -> add(p0, p0)\n";
  EXPECT_EQ(read_all(f), want);
  uopc_ctx_set_trace(c, nullptr);
  uopc_graph_rewrite(c, uopc_mul(c, ci(c, 2), x), m, nullptr, 0);
  EXPECT_EQ(read_all(f), want);  // off: nothing more
  fclose(f);
}

// seed pitfall 2 / test_deep_graph_no_recursion_error, 50x deeper, on a small stack
struct DeepResult {
  bool built = false, rewritten = false, topo = false;
  uint32_t topo_n = 0, size = 0;
  std::string err;
};

void *deep_thread(void *arg) {
  DeepResult *res = static_cast<DeepResult *>(arg);
  const int N = 1000000;
  uopc_ctx *c = uopc_ctx_new(nullptr);
  uopc_node *p0 = p_i32(c, 0), *p1 = p_i32(c, 1), *zero = ci(c, 0);
  uopc_node *x = p0, *want = p0;
  for (int i = 0; i < N && x; i++) {
    uopc_node *k = i % 3 == 0 ? zero : i % 3 == 1 ? p1 : ci(c, i % 1000 + 1);
    x = uopc_add(c, x, k);
    if (k != zero) want = uopc_add(c, want, k);
  }
  res->built = x != nullptr;
  if (x) {
    uopc_rule rules[] = {{"(add $x 0)", r_keep0, "x+0 -> x"}};
    uopc_matcher *m = uopc_matcher_new(rules, 1, nullptr);
    uopc_node *r = m ? uopc_graph_rewrite(c, x, m, nullptr, 0) : nullptr;
    res->rewritten = r != nullptr && r == want;
    uopc_matcher_free(m);
    uopc_node **t = uopc_toposort(c, x, &res->topo_n);
    res->topo = t != nullptr && t[res->topo_n - 1] == x;
    if (t) uopc_mem_free(c, t, res->topo_n * sizeof t[0]);
    res->size = uopc_graph_size(c, x);
  }
  if (uopc_ctx_error(c)) res->err = uopc_ctx_error(c)->msg;
  uopc_ctx_free(c);
  return nullptr;
}

TEST(GraphRewrite, MillionDeepChainOnSmallStack) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
  pthread_t th;
  DeepResult res;
  ASSERT_EQ(pthread_create(&th, &attr, deep_thread, &res), 0);
  pthread_join(th, nullptr);
  pthread_attr_destroy(&attr);
  EXPECT_TRUE(res.built) << res.err;
  EXPECT_TRUE(res.rewritten) << res.err;
  EXPECT_TRUE(res.topo) << res.err;
  EXPECT_EQ(res.topo_n, 1000000u + 1000 + 3);
  EXPECT_EQ(res.size, res.topo_n);
}

// ---- out of memory -------------------------------------------------------------

// Runs graph_rewrite on a depth-level chain that rewrites at every level,
// failing the n-th allocation for n = 0, 1, 2, ... until it succeeds.
// Returns the number of failure points tried.
long oom_loop(int depth, FILE *trace) {
  Matcher m({{"[mul $x #c:i32]", r_twice, "x*2 -> x+x"}, {"(add $x 0)", r_keep0, nullptr}});
  bool succeeded = false;
  long n = 0;
  for (; n < 100000 && !succeeded; n++) {
    FailAlloc fa;
    uopc_alloc a = fa.alloc();
    uopc_ctx *c = uopc_ctx_new(&a);
    EXPECT_NE(c, nullptr);
    if (!c) return n;
    uopc_ctx_set_check(c, 1);
    uopc_ctx_set_trace(c, trace);
    uopc_node *x = p_i32(c, 0), *want = x;
    for (int i = 0; i < depth; i++) {
      x = uopc_add(c, uopc_mul(c, x, ci(c, 2)), ci(c, i % 2));
      want = uopc_add(c, want, want);
      if (i % 2) want = uopc_add(c, want, ci(c, 1));
    }
    EXPECT_NE(want, nullptr);
    fa.left = n;
    uopc_node *r = uopc_graph_rewrite(c, x, m, nullptr, 0);
    if (r) {
      EXPECT_EQ(r, want);
      succeeded = true;
    } else {
      EXPECT_NE(uopc_ctx_error(c), nullptr) << "n=" << n;
      if (uopc_ctx_error(c)) {
        EXPECT_EQ(uopc_ctx_error(c)->code, UOPC_ERR_NOMEM) << "n=" << n << ": " << uopc_ctx_error(c)->msg;
      }
      // the context is still usable
      fa.left = -1;
      uopc_ctx_clear_error(c);
      EXPECT_EQ(uopc_graph_rewrite(c, x, m, nullptr, 0), want) << "n=" << n;
    }
    uopc_ctx_free(c);
    EXPECT_EQ(fa.live, 0) << "n=" << n;
    if (trace) rewind(trace);
  }
  EXPECT_TRUE(succeeded);
  return n;
}

TEST(GraphRewrite, OutOfMemoryEverywhere) {
  // deep enough that the memo table, the work stack and the node table grow
  EXPECT_GT(oom_loop(3000, nullptr), 5);
  // with the trace and the check on (uopc_show allocates)
  FILE *trace = tmpfile();
  ASSERT_NE(trace, nullptr);
  EXPECT_GT(oom_loop(6, trace), 20);
  fclose(trace);
}

}  // namespace
