// Junk in a UOPC_* variable: the CLI warns in one line each and goes on with
// the documented fallback; the library keeps its defaults.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "support/cli.h"
#include "support/fmt.h"

TEST(Env, CliWarnsAboutJunkAndKeepsGoing) {
  CliRun r = UopcEnv("UOPC_CACHE_MAX_MB=abc UOPC_CACHE=maybe UOPC_DEBUG=rewrit UOPC_CAHCE=0 UOPC_REWRITE_CHAIN=-5",
                     "run " + Q(ExamplePath("sq_call.uir")));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "49\n");
  for (const char *want : {"uopc: warning: UOPC_CACHE_MAX_MB='abc' is not a number of megabytes",
                           "uopc: warning: UOPC_CACHE='maybe' is not 0 or 1", "UOPC_DEBUG: unknown switch 'rewrit'",
                           "UOPC_CAHCE is not a variable uopc reads", "UOPC_REWRITE_CHAIN='-5' is not a positive integer"})
    EXPECT_NE(r.err.find(want), std::string::npos) << want << "\n" << r.err;
  size_t lines = 0;
  for (char ch : r.err) lines += ch == '\n';
  EXPECT_EQ(lines, 5u) << r.err;
  r = UopcEnv("UOPC_CACHE=0 UOPC_REWRITE_CHAIN=500", "run " + Q(ExamplePath("sq_call.uir")));
  EXPECT_EQ(r.err, "");
}

TEST(Env, LibraryKeepsItsDefaultOnJunk) {
  setenv("UOPC_REWRITE_CHAIN", "lots", 1);
  setenv("UOPC_REWRITE_MIN_STEPS", "123", 1);
  Ctx c;
  uopc_rewrite_limits l = uopc_ctx_rewrite_limits(c);
  EXPECT_EQ(l.max_chain, (uint64_t)UOPC_LIMIT_CHAIN);
  EXPECT_EQ(l.min_steps, 123u);
  EXPECT_EQ(l.steps_per_node, (uint64_t)UOPC_LIMIT_STEPS_PER_NODE);
  EXPECT_EQ(uopc_env_check(nullptr, nullptr), 1u);
  unsetenv("UOPC_REWRITE_CHAIN");
  unsetenv("UOPC_REWRITE_MIN_STEPS");
}

// Every UOPC_* name the library and the CLI read (a string literal in lib/ or
// tools/) is in the checker's table: setting it to a valid value draws no
// warning.  UOPC_PACK_MIN_BYTES, read by the lowering, once drew "is not a
// variable uopc reads (ignored)".
TEST(Env, EveryVariableTheSourcesReadIsKnown) {
  std::set<std::string> names;
  const std::regex lit("\"(UOPC_[A-Z0-9_]+)\"");
  for (const char *dir : {"lib", "tools"})
    for (const auto &f : std::filesystem::recursive_directory_iterator(std::string(UOPC_SOURCE_DIR) + "/" + dir)) {
      if (!f.is_regular_file()) continue;
      std::ifstream in(f.path());
      std::stringstream ss;
      ss << in.rdbuf();
      std::string text = ss.str();
      for (std::sregex_iterator m(text.begin(), text.end(), lit), end; m != end; ++m) names.insert((*m)[1]);
    }
  ASSERT_GE(names.size(), 15u);  // the scan found the variables (UOPC_DEBUG, UOPC_THREADS, ...)
  // a valid value for each (a positive count for the rest; the CPU valgrind's runs use)
  const std::map<std::string, std::string> value = {
      {"UOPC_DEBUG", "check"},       {"UOPC_CACHE", "1"},
      {"UOPC_STREAM", "1"},          {"UOPC_JIT_DUALMAP", "1"},
      {"UOPC_CACHE_DIR", "''"},      {"UOPC_LONG_TESTS", "''"},
      {"UOPC_JIT_CPU", "x86-64-v3"}, {"UOPC_JIT_FEATURES", "-avx512f"}};
  std::string env;
  for (const std::string &n : names) {
    auto it = value.find(n);
    env += n + "=" + (it != value.end() ? it->second : "64") + " ";
  }
  CliRun r = UopcEnv(env, "run " + Q(ExamplePath("sq_call.uir")));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "") << env;
}
