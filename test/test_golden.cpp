// Golden files: each .uir file of test/golden/ and examples/ carries its
// expectations in comments, and this one test checks them all by running the
// CLI.  A line
//
//     # expect: ARGS -> TEXT          `uopc ARGS FILE` prints TEXT (one line), exit 0
//     # expect: ARGS >>>              ... prints the lines that follow, each
//     #   LINE                        after "# ", up to "# <<<", exit 0
//     # <<<
//     # expect: ARGS has: TEXT        its stdout contains TEXT, exit 0
//     # expect: ARGS lacks: TEXT      its stdout does not contain TEXT, exit 0
//     # expect: ARGS error: TEXT      exit 1, nothing on stdout, stderr contains TEXT
//
// ARGS is a verb and its options (`run`, `simplify --seed-rules`,
// `compile --emit=llvm`); the file's path is appended.  To add a case, add a
// file (docs/cli.md has the verbs).
#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli.h"

namespace {

struct Expect {
  int line;
  std::string args, kind, text;  // kind: "->", ">>>", "has", "lacks", "error"
};

std::vector<Expect> ReadExpects(const std::string &text, std::string *bad) {
  std::vector<Expect> out;
  std::istringstream in(text);
  std::string l;
  int n = 0;
  while (std::getline(in, l)) {
    n++;
    const std::string tag = "# expect: ";
    if (l.rfind(tag, 0) != 0) continue;
    std::string rest = l.substr(tag.size());
    Expect e{n, "", "", ""};
    size_t p;
    if (rest.size() >= 4 && rest.compare(rest.size() - 4, 4, " >>>") == 0) {
      e.args = rest.substr(0, rest.size() - 4), e.kind = ">>>";
      while (std::getline(in, l)) {
        n++;
        if (l == "# <<<") break;
        if (l.rfind("# ", 0) != 0 && l != "#") {
          *bad = "line " + std::to_string(n) + ": a block line must start with '# '";
          return out;
        }
        e.text += (l.size() > 2 ? l.substr(2) : "") + "\n";
      }
    } else if ((p = rest.find(" -> ")) != std::string::npos) {
      e.args = rest.substr(0, p), e.kind = "->", e.text = rest.substr(p + 4) + "\n";
    } else if ((p = rest.find(" has: ")) != std::string::npos) {
      e.args = rest.substr(0, p), e.kind = "has", e.text = rest.substr(p + 6);
    } else if ((p = rest.find(" lacks: ")) != std::string::npos) {
      e.args = rest.substr(0, p), e.kind = "lacks", e.text = rest.substr(p + 8);
    } else if ((p = rest.find(" error: ")) != std::string::npos) {
      e.args = rest.substr(0, p), e.kind = "error", e.text = rest.substr(p + 8);
    } else {
      *bad = "line " + std::to_string(n) + ": cannot read the expectation";
      return out;
    }
    out.push_back(e);
  }
  return out;
}

std::vector<std::string> UirFiles(const std::string &dir) {
  std::vector<std::string> v;
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

TEST(Golden, EveryFileMeetsItsExpectations) {
  std::vector<std::string> files = UirFiles(std::string(UOPC_SOURCE_DIR) + "/test/golden");
  size_t ngolden = files.size();
  for (const std::string &f : UirFiles(std::string(UOPC_SOURCE_DIR) + "/examples")) files.push_back(f);
  ASSERT_GE(ngolden, 5u);
  int checked = 0;
  for (const std::string &f : files) {
    std::string bad;
    std::vector<Expect> ex = ReadExpects(Slurp(f), &bad);
    ASSERT_TRUE(bad.empty()) << f << ": " << bad;
    EXPECT_FALSE(ex.empty()) << f << " has no expectation";
    for (const Expect &e : ex) {
      CliRun r = Uopc(e.args + " " + Q(f));
      std::string where = f + ":" + std::to_string(e.line) + ": uopc " + e.args;
      checked++;
      if (e.kind == "error") {
        EXPECT_EQ(r.status, 1) << where;
        EXPECT_EQ(r.out, "") << where;
        EXPECT_NE(r.err.find(e.text), std::string::npos) << where << "\nstderr: " << r.err;
        continue;
      }
      EXPECT_EQ(r.status, 0) << where << "\nstderr: " << r.err;
      if (e.kind == "->" || e.kind == ">>>") EXPECT_EQ(r.out, e.text) << where;
      else if (e.kind == "has") EXPECT_NE(r.out.find(e.text), std::string::npos) << where << "\n" << r.out;
      else EXPECT_EQ(r.out.find(e.text), std::string::npos) << where << "\n" << r.out;
    }
  }
  EXPECT_GT(checked, 20);
}

}  // namespace
