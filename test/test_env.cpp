// Junk in a UOPC_* variable: the CLI warns in one line each and goes on with
// the documented fallback; the library keeps its defaults.
#include <gtest/gtest.h>

#include <cstdlib>

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
