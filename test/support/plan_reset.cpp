// Every test starts with an empty plan cache: cached plans hold kernels, and
// a kernel held from an earlier test would show in the kernel cache's counts
// and keep the JIT engine from shutting down, so that a test's outcome would
// depend on which tests ran before it in the same process (valgrind's and
// ctest's shards run them in other orders and groupings than one full run).
#include <gtest/gtest.h>

#include "uopc/plan.h"

namespace {

class PlanCacheReset : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo &) override { uopc_plan_cache_clear(); }
  void OnTestEnd(const ::testing::TestInfo &) override { uopc_plan_cache_clear(); }
};

const bool registered = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new PlanCacheReset);
  return true;
}();

}  // namespace
