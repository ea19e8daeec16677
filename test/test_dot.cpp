// uopc_dot and `uopc print --emit=dot`: labels, shared nodes once, any
// depth, and every bundled example parses with Graphviz (when installed).
#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "support/cli.h"
#include "support/fmt.h"

namespace {

std::string Dot(uopc_ctx *c, uopc_node *u) {
  char *s = uopc_dot(c, u);
  if (!s) return "";
  std::string r = s;
  uopc_mem_free(c, s, strlen(s) + 1);
  return r;
}

size_t Count(const std::string &s, const std::string &what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) n++;
  return n;
}

bool HaveDot() { return std::system("command -v dot >/dev/null 2>&1") == 0; }

std::vector<std::string> Examples() {
  std::vector<std::string> v;
  std::string dir = std::string(UOPC_SOURCE_DIR) + "/examples";
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *de = readdir(d)) {
      std::string n = de->d_name;
      if (n.size() > 4 && n.compare(n.size() - 4, 4, ".uir") == 0) v.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(v.begin(), v.end());
  return v;
}

TEST(Dot, SharedNodesOnceEdgesInSourceOrder) {
  Ctx c;
  uopc_node *i = uopc_range_k(c, 4, 0);
  uopc_node *s = uopc_add(c, uopc_mul_k(c, i, 8), i); /* i is used twice */
  std::string d = Dot(c, s);
  EXPECT_EQ(Count(d, "[label="), uopc_graph_size(c, s)) << d;
  EXPECT_EQ(Count(d, "label=\"RANGE i32\\nidx=0\""), 1u) << d;
  EXPECT_EQ(Count(d, " -> "), 5u) << d; /* 4 -> range, range -> mul, 8 -> mul, mul -> add, range -> add */
  EXPECT_NE(d.find("n3 -> n4;\n  n1 -> n4;"), std::string::npos) << d; /* add's sources: mul, then range */
  EXPECT_EQ(d, Dot(c, s)); /* deterministic */
}

TEST(Dot, LabelsCarryOpDtypeShapeAndArg) {
  Ctx c;
  int32_t sh[] = {2, 3};
  uopc_node *p = uopc_param(c, 0, UOPC_DT_F16, sh, 2);
  int32_t perm[] = {1, 0};
  uopc_node *t = uopc_permute(c, p, perm, 2);
  uopc_node *r = uopc_reduce(c, t, UOPC_OP_MAX, 1);
  uopc_node *call = uopc_call(c, uopc_cast(c, r, UOPC_DT_F32), &p, 1, "f\"\n"); /* f(p) */
  ASSERT_NE(call, nullptr) << c.err();
  std::string d = Dot(c, call);
  EXPECT_NE(d.find("label=\"PARAM f16 (2, 3)\\nslot=0\""), std::string::npos) << d;
  EXPECT_NE(d.find("label=\"PERMUTE f16 (3, 2)\\n(1, 0)\""), std::string::npos) << d;
  EXPECT_NE(d.find("label=\"REDUCE f16 (3,)\\nop=max pop=1\""), std::string::npos) << d;
  EXPECT_NE(d.find("label=\"CALL f32 (3,)\\nname=f\\\"\\\\x0a\""), std::string::npos) << d;
  uopc_node *k = uopc_const_f(c, UOPC_DT_F32, 0.1);
  EXPECT_NE(Dot(c, k).find("label=\"CONST f32\\n0.1\""), std::string::npos);
}

TEST(Dot, NullForeignAndDeep) {
  EXPECT_EQ(uopc_dot(nullptr, nullptr), nullptr);
  Ctx c, other;
  EXPECT_EQ(uopc_dot(c, nullptr), nullptr);
  EXPECT_NE(c.err().find("dot: NULL node"), std::string::npos) << c.err();
  uopc_ctx_clear_error(c);
  EXPECT_EQ(uopc_dot(c, uopc_const_i(other, UOPC_DT_I32, 1)), nullptr);
  EXPECT_NE(c.err().find("another context"), std::string::npos) << c.err();
  uopc_ctx_clear_error(c);
  /* 10^6 deep: no recursion */
  uopc_node *x = uopc_param(c, 0, UOPC_DT_I32, nullptr, 0);
  for (int k = 0; k < 1000000 && x; k++) x = uopc_add_k(c, x, k % 2 ? 1 : 2);
  ASSERT_NE(x, nullptr) << c.err();
  std::string d = Dot(c, x);
  EXPECT_EQ(Count(d, "[label="), 1000003u);
}

TEST(Dot, EveryExampleParsesWithGraphviz) {
  if (!HaveDot()) GTEST_SKIP() << "Graphviz 'dot' is not installed (Debian's graphviz): the --emit=dot output is not checked";
  for (const std::string &f : Examples()) {
    std::string out = TmpPath("ex.dot");
    CliRun r = Uopc("print --emit=dot " + Q(f));
    ASSERT_EQ(r.status, 0) << f << ": " << r.err;
    Spit(out, r.out);
    int st = std::system(("dot -Tsvg " + Q(out) + " -o /dev/null 2>" + Q(out + ".err")).c_str());
    EXPECT_EQ(st, 0) << f << ": dot -Tsvg: " << Slurp(out + ".err");
    std::remove(out.c_str());
    std::remove((out + ".err").c_str());
  }
}

TEST(PrintEmit, OptionsAndErrors) {
  std::string f = ExamplePath("mul_add.uir");
  EXPECT_EQ(Uopc("print --emit=uir " + Q(f)).out, Uopc("print " + Q(f)).out);
  CliRun r = Uopc("print --emit=svg " + Q(f));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--emit must be --emit=uir or --emit=dot"), std::string::npos) << r.err;
  EXPECT_EQ(Uopc("print --emit=dot").status, 2);
  r = Uopc("print --emit=dot " + Q(TmpPath("missing.uir")));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
}

}  // namespace
