// `uopc viz` run as a program: options, the page it writes (self-contained,
// one step per --trace line, the compile panes, long chains collapsed), and
// the one-line message without Graphviz.  The page in a real browser:
// test/viz/test_viz_browser.py.
#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "support/cli.h"

namespace {

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

int TraceLines(const std::string &verb, const std::string &file) {
  CliRun r = Uopc("--trace " + verb + " " + Q(file));
  return (int)Count(r.err, "\n");
}

TEST(Viz, UsageErrors) {
  std::string f = ExamplePath("mul_add.uir");
  CliRun r = Uopc("viz " + Q(f));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("needs -o OUT.html"), std::string::npos) << r.err;
  r = Uopc("viz " + Q(f) + " --verb exec -o x.html");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--verb must be simplify, run or compile"), std::string::npos) << r.err;
  EXPECT_EQ(Uopc("viz " + Q(f) + " --bogus -o x.html").status, 2);
  EXPECT_EQ(Uopc("viz -o x.html").status, 2);
  EXPECT_EQ(Uopc("viz " + Q(f) + " -o").status, 2);
}

TEST(Viz, WithoutGraphvizSaysSoInOneLine) {
  std::string page = TmpPath("nodot.html");
  CliRun r = UopcEnv("PATH=/nonexistent", "viz " + Q(ExamplePath("mul_add.uir")) + " -o " + Q(page));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "uopc viz: Graphviz 'dot' not found: install Debian's graphviz package\n");
  EXPECT_EQ(Slurp(page), "");
  /* everything else works without it */
  EXPECT_EQ(UopcEnv("PATH=/nonexistent", "run " + Q(ExamplePath("mul_add.uir"))).out, "[11, 42, 93]\n");
}

// Every example with its default verb: a self-contained page with one step
// per --trace line.
TEST(Viz, EveryExamplePageIsSelfContained) {
  if (!HaveDot()) GTEST_SKIP() << "Graphviz 'dot' is not installed (Debian's graphviz): uopc viz is not run";
  struct Case {
    const char *file, *verb;
  };
  const Case cases[] = {{"mul_add.uir", "run"},         {"copy_kernel.uir", "simplify"}, {"movement_reduce.uir", "run"},
                        {"nested_calls.uir", "run"},    {"sq_call.uir", "run"},          {"where.uir", "run"}};
  ASSERT_EQ(Examples().size(), sizeof cases / sizeof cases[0]) << "a new example: add it here";
  for (const Case &k : cases) {
    std::string f = ExamplePath(k.file), page = TmpPath(std::string(k.file) + ".html");
    CliRun r = Uopc("viz " + Q(f) + " -o " + Q(page)); /* the default verb */
    ASSERT_EQ(r.status, 0) << k.file << ": " << r.err;
    int n = TraceLines(k.verb, f);
    EXPECT_NE(r.out.find(": " + std::to_string(n) + " steps,"), std::string::npos) << k.file << ": " << r.out;
    std::string html = Slurp(page);
    EXPECT_NE(html.find("\"verb\":\"" + std::string(k.verb) + "\""), std::string::npos) << k.file;
    EXPECT_EQ(Count(html, "\"steps\":["), 1u);
    /* nothing from outside: no src=, href=, <link, @import, url(http */
    EXPECT_EQ(html.find(" src="), std::string::npos) << k.file;
    EXPECT_EQ(html.find("href="), std::string::npos) << k.file;
    EXPECT_EQ(html.find("<link"), std::string::npos) << k.file;
    EXPECT_EQ(html.find("@import"), std::string::npos) << k.file;
    EXPECT_EQ(html.find("url(http"), std::string::npos) << k.file;
    EXPECT_EQ(Count(html, "http"), 1u) << k.file << ": only the SVG namespace"; /* http://www.w3.org/2000/svg */
    EXPECT_EQ(Count(html, "</script>"), 2u) << k.file << ": the data cannot close its script element";
    std::remove(page.c_str());
  }
}

TEST(Viz, CompileAndFailures) {
  if (!HaveDot()) GTEST_SKIP() << "Graphviz 'dot' is not installed (Debian's graphviz): uopc viz is not run";
  std::string f = ExamplePath("copy_kernel.uir"), page = TmpPath("compile.html");
  CliRun r = Uopc("viz --verb compile " + Q(f) + " -o " + Q(page));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(": " + std::to_string(TraceLines("compile", f)) + " steps,"), std::string::npos) << r.out;
  std::string html = Slurp(page);
  EXPECT_NE(html.find("define void @uopc_k"), std::string::npos);          /* the LLVM IR */
  EXPECT_NE(html.find("for r0 in range(4):\\n  for r1 in range(8):"), std::string::npos); /* the loop nest */
  EXPECT_NE(html.find("id=\"plan\""), std::string::npos);                 /* the plan's place */
  /* a tensor program: its plan, every kernel with its nest, graph, IR and assembly */
  std::string prog = std::string(UOPC_SOURCE_DIR) + "/test/golden/softmax_rows.uir";
  r = Uopc("viz --verb compile " + Q(prog) + " -o " + Q(page));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(": " + std::to_string(TraceLines("compile", prog)) + " steps,"), std::string::npos) << r.out;
  html = Slurp(page);
  EXPECT_NE(html.find("kernel 3: computes buffer 4 (output of MUL)"), std::string::npos); /* the schedule */
  EXPECT_NE(html.find("\"title\":\"kernel 3 of 4\""), std::string::npos);
  EXPECT_EQ(Count(html, "define void @uopc_k"), 4u);
  EXPECT_EQ(Count(html, "\"graph\":{\"pic\":"), 4u); /* each kernel's picture */
  /* a failing verb: the page shows how far it got, and the error is reported */
  r = Uopc("viz --verb=run " + Q(f) + " -o " + Q(page));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("program did not evaluate to a value, stuck at SINK"), std::string::npos) << r.err;
  EXPECT_NE(Slurp(page).find("stuck at SINK"), std::string::npos);
  /* a parse error: nothing written */
  std::string bad = UirFile("bad.uir", "%a = add 1\n");
  r = Uopc("viz " + Q(bad) + " -o " + Q(page + "2"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad.uir:1:"), std::string::npos) << r.err;
  EXPECT_EQ(Slurp(page + "2"), "");
  /* an unwritable page */
  r = Uopc("viz " + Q(f) + " -o /nonexistent/dir/x.html");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
  std::remove(page.c_str());
}

// A graph too big to draw in full: the page stays small (collapsed chains,
// a box budget) and still has every step.
TEST(Viz, LongChainCollapses) {
  if (!HaveDot()) GTEST_SKIP() << "Graphviz 'dot' is not installed (Debian's graphviz): uopc viz is not run";
  std::string text = "%x = param : slot=0 dtype=i32\n%c0 = max %x, 3\n";
  for (int i = 1; i < 3000; i++) text += "%c" + std::to_string(i) + " = max %c" + std::to_string(i - 1) + ", " + std::to_string(i % 5 + 3) + "\n";
  std::string f = UirFile("chain.uir", text), page = TmpPath("chain.html");
  CliRun r = Uopc("viz " + Q(f) + " -o " + Q(page));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string html = Slurp(page);
  EXPECT_NE(html.find("2999 nodes\\n2999 x MAX"), std::string::npos) << "the chain is one box";
  EXPECT_LT(html.size(), 2000000u);
  std::remove(page.c_str());
}

}  // namespace
