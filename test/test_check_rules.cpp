// uopc check-rules (issue 9, item 4): every built-in rule checked on its own,
// a bounded run of the CLI in the suite, and rules of our own that are wrong
// on purpose, checked with the checker's core (tools/check_rules.h, the
// uopc_check library).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli.h"

extern "C" {
#include "check_rules.h"
}

namespace {

struct Line {
  std::string set, rule, file, cls;
  int line = 0;
  unsigned long long tried = 0, fired = 0, mismatches = 0, dtype_changes = 0;
};

// The rule lines of a check-rules report (other lines are left out), and the summary.
std::vector<Line> ParseReport(const std::string &out, std::string *summary, std::vector<std::string> *bad) {
  static const std::regex re(
      R"(^(\S+) (\S+) (\S+):(\d+) (exact|nowrap|inexact) tried=(\d+) fired=(\d+) mismatches=(\d+) dtype_changes=(\d+)$)");
  std::vector<Line> lines;
  std::istringstream in(out);
  std::string s;
  while (std::getline(in, s)) {
    std::smatch m;
    if (s.rfind("summary: ", 0) == 0) {
      *summary = s;
    } else if (std::regex_match(s, m, re)) {
      Line l;
      l.set = m[1], l.rule = m[2], l.file = m[3], l.line = std::stoi(m[4]), l.cls = m[5];
      l.tried = std::stoull(m[6]), l.fired = std::stoull(m[7]), l.mismatches = std::stoull(m[8]),
      l.dtype_changes = std::stoull(m[9]);
      lines.push_back(l);
    } else if (bad) {
      bad->push_back(s);
    }
  }
  return lines;
}

chk_counts Check(const uopc_rule &r, chk_family fam, uint64_t count = 2000, uint64_t seed = 1) {
  chk_opts o{};
  o.count = count;
  o.seed = seed;
  chk_counts c;
  char err[256] = "";
  EXPECT_EQ(chk_rule(&r, fam, "test", &o, &c, err, sizeof err), 0) << err;
  return c;
}

// ---- rules of our own ----

uopc_node *KeepX(uopc_ctx *, uopc_node *const *b, void *) { return b[0]; }
uopc_node *FirstElement(uopc_ctx *, uopc_node *const *b, void *) { return b[0]->src[0]; }
uopc_node *AddrZero(uopc_ctx *c, uopc_node *const *b, void *) {
  uopc_node *k = uopc_const_i(c, UOPC_DT_I32, 0);
  return uopc_index(c, b[0], &k, 1);
}
uopc_node *AddrSame(uopc_ctx *c, uopc_node *const *b, void *) {
  uopc_node *i = uopc_add_k(c, b[1], 0);  // i + 0: the same address, another node
  return uopc_index(c, b[0], &i, 1);
}

// The seed's bugs that the library fixed (docs/semantics.md, "Rule set"):
// (x % c1) // c2 -> (x // c2) % (c1 // c2) without c1 > 0, and MAX swapped
// into canonical form for floats.
uopc_node *SeedModDiv(uopc_ctx *c, uopc_node *const *b, void *) {
  int64_t k1 = b[1]->arg.i, k2 = b[2]->arg.i;
  if (k2 <= 0 || k1 % k2 != 0) return nullptr;
  return uopc_mod_k(c, uopc_idiv(c, b[0], b[2]), (double)(k1 / k2));
}
uopc_node *SwapMax(uopc_ctx *c, uopc_node *const *b, void *) {
  if (b[2]->op == UOPC_OP_CONST) return nullptr;
  uopc_node *s[2] = {b[2], b[1]};
  return uopc_replace(c, b[0], s, 2);
}

}  // namespace

// (a) the suite's bounded run: every rule of every set listed, in the
// documented format, none unsound in the exact sets.
TEST(CheckRules, BoundedRunOfEverySetIsSound) {
  CliRun r = Uopc("check-rules --set all --count 150 --seed 3");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  std::string summary;
  std::vector<std::string> bad;
  std::vector<Line> lines = ParseReport(r.out, &summary, &bad);
  EXPECT_TRUE(bad.empty()) << "unexpected line: " << bad[0];
  // every rule of every built-in set, in order
  size_t nsets = 0;
  const chk_set *sets = chk_sets(&nsets);
  ASSERT_EQ(nsets, 6u);
  size_t k = 0;
  for (size_t s = 0; s < nsets; s++) {
    const uopc_matcher *m = sets[s].get();
    for (size_t i = 0; i < uopc_matcher_size(m); i++, k++) {
      ASSERT_LT(k, lines.size());
      const uopc_rule *rule = uopc_matcher_rule(m, i);
      EXPECT_EQ(lines[k].set, sets[s].name);
      EXPECT_EQ(lines[k].rule, rule->name);
      EXPECT_EQ(lines[k].file, rule->file);
      EXPECT_EQ(lines[k].line, rule->line);
      EXPECT_EQ(lines[k].cls, uopc_rule_class_name(rule->cls));
    }
  }
  EXPECT_EQ(k, lines.size());
  for (const Line &l : lines) {
    SCOPED_TRACE(l.set + " " + l.rule);
    EXPECT_EQ(l.tried, 150u);  // every instance could be built
    EXPECT_LE(l.fired, l.tried);
    EXPECT_GT(l.fired, 0u);
    if (l.set != "symbolic_seed" || l.cls == "exact") {
      EXPECT_EQ(l.mismatches, 0u);
      EXPECT_EQ(l.dtype_changes, 0u);
    }
    EXPECT_TRUE(l.file.rfind("lib/", 0) == 0) << l.file;  // relative to the repository
  }
  EXPECT_NE(summary.find("unsound: 0;"), std::string::npos) << summary;
  EXPECT_NE(summary.find("symbolic_seed: "), std::string::npos) << summary;
}

// (c) the seed's mode: x + 0.0 -> x is caught on -0.0, the unguarded
// no-overflow rules on wrapping inputs; listed, and not failures.
TEST(CheckRules, SeedModeListsItsInexactRules) {
  CliRun r = Uopc("check-rules --set symbolic_seed --count 1000");
  EXPECT_EQ(r.status, 0) << r.err;
  std::string summary;
  std::vector<Line> lines = ParseReport(r.out, &summary, nullptr);
  ASSERT_EQ(lines.size(), uopc_matcher_size(uopc_rules_symbolic_seed()));
  std::map<std::string, Line> by;
  for (const Line &l : lines) by[l.rule] = l;
  ASSERT_TRUE(by.count("add_zero_f"));
  EXPECT_EQ(by["add_zero_f"].cls, "inexact");
  EXPECT_GT(by["add_zero_f"].mismatches, 0u);
  int nowrap_bad = 0;
  for (const Line &l : lines) {
    if (l.cls == "nowrap" && l.mismatches > 0) nowrap_bad++;
    if (l.cls == "exact") EXPECT_EQ(l.mismatches + l.dtype_changes, 0u) << l.rule;
  }
  EXPECT_GT(nowrap_bad, 0);
  EXPECT_NE(summary.find("inexact by design"), std::string::npos) << summary;
  EXPECT_NE(summary.find("unsound: 0;"), std::string::npos) << summary;
  // the exact set has no add_zero_f, and its guarded nowrap rules hold
  r = Uopc("check-rules --set symbolic --count 1000");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("add_zero_f"), std::string::npos);
}

// (b) rules that are wrong on purpose are caught, in each family.
TEST(CheckRules, CatchesAWrongScalarRule) {
  uopc_rule wrong{"[add $x:i32 1]", KeepX, "x_plus_1_is_x"};
  chk_counts c = Check(wrong, CHK_SCALAR);
  EXPECT_EQ(c.tried, 2000u);
  EXPECT_EQ(c.fired, 2000u);
  EXPECT_GT(c.mismatches, 1000u);
  EXPECT_NE(std::string(c.example).find(" -> "), std::string::npos) << c.example;

  uopc_rule right{"[add $x:i32 0]", KeepX, "x_plus_0_is_x"};
  c = Check(right, CHK_SCALAR);
  EXPECT_EQ(c.fired, 2000u);
  EXPECT_EQ(c.mismatches, 0u) << c.example;
  EXPECT_GT(c.compared, 2000u);

  // the seed's x * 0 -> 0 for every dtype (chapter 2, exercise 3): inf * 0 is nan
  uopc_rule mul0{"[mul $x:f32 0]", KeepX, "x_times_0"};
  c = Check(mul0, CHK_SCALAR);
  EXPECT_GT(c.mismatches, 0u);
}

TEST(CheckRules, CatchesTheSeedsBugs) {
  uopc_rule mod_div{"(floordiv (floormod $x:i32 #k1) #k2)", SeedModDiv, "seed_mod_div"};
  chk_counts c = Check(mod_div, CHK_SCALAR, 5000);
  EXPECT_GT(c.mismatches, 0u);  // x = 1, c1 = -12, c2 = 4
  uopc_rule swap{"$u=(max:f32|f16 #k $y)", SwapMax, "seed_max_swap"};
  c = Check(swap, CHK_SCALAR, 2000);
  EXPECT_GT(c.mismatches, 0u);  // max(nan, 1) is nan, max(1, nan) is 1
}

TEST(CheckRules, CatchesADtypeChange) {
  uopc_rule wrong{"(cmplt $x:i32 $y)", KeepX, "lt_is_x"};  // bool -> i32
  chk_counts c = Check(wrong, CHK_SCALAR, 500);
  EXPECT_EQ(c.fired, 500u);
  EXPECT_EQ(c.dtype_changes, 500u);
  EXPECT_NE(std::string(c.example).find("bool () becomes i32 ()"), std::string::npos) << c.example;

  uopc_rule reshape{"(reshape $x)", KeepX, "reshape_is_x"};  // a shape change
  c = Check(reshape, CHK_EVAL, 500);
  EXPECT_GT(c.dtype_changes, 0u);
}

TEST(CheckRules, CatchesWrongEvaluateAndKernelRules) {
  uopc_rule first{"(index $s=(stack) #i)", FirstElement, "index_is_first"};
  chk_counts c = Check(first, CHK_EVAL, 1000);
  EXPECT_GT(c.fired, 500u);
  EXPECT_GT(c.mismatches, 0u);

  uopc_rule addr0{"(index $b=(buffer) $i)", AddrZero, "address_zero"};
  c = Check(addr0, CHK_KERNEL, 1000);
  EXPECT_GT(c.fired, 500u);
  EXPECT_GT(c.mismatches, 0u);

  uopc_rule same{"(index $b=(buffer) $i)", AddrSame, "address_plus_0"};
  c = Check(same, CHK_KERNEL, 1000);
  EXPECT_GT(c.fired, 500u);
  EXPECT_EQ(c.mismatches, 0u) << c.example;
  EXPECT_GT(c.compared, 500u);
}

TEST(CheckRules, RepeatableBySeed) {
  CliRun a = Uopc("check-rules --set symbolic_strong --count 300 --seed 42");
  CliRun b = Uopc("check-rules --set=symbolic_strong --count=300 --seed=42");
  EXPECT_EQ(a.status, 0);
  EXPECT_EQ(a.out, b.out);
  // a rule's counts do not depend on the other rules checked
  CliRun all = Uopc("check-rules --count 300 --seed 42");
  EXPECT_NE(all.out.find(a.out.substr(0, a.out.find('\n') + 1)), std::string::npos);
}

TEST(CheckRules, UsageErrors) {
  for (const char *args : {"--count 0", "--count -3", "--count 12x", "--count 18446744073709551616",
                           "--count 99999999999", "--count", "--set", "--set nope", "--seed x", "--bogus", "extra"}) {
    SCOPED_TRACE(args);
    CliRun r = Uopc(std::string("check-rules ") + args);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("uopc check-rules: "), std::string::npos) << r.err;
  }
  CliRun h = Uopc("--help");
  EXPECT_NE(h.out.find("check-rules"), std::string::npos);
}

TEST(CheckRules, ABadPatternIsAnError) {
  uopc_rule bad{"(add $x", KeepX, "bad"};
  chk_opts o{};
  o.count = 10;
  chk_counts c;
  char err[256] = "";
  EXPECT_EQ(chk_rule(&bad, CHK_SCALAR, nullptr, &o, &c, err, sizeof err), -1);
  EXPECT_NE(std::string(err), "");
}
