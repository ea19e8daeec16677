// The bounded property test of the symbolic rules (the long one:
// bench/bench_symprop).  Exact mode: no wrong value, bound or fixed point,
// `run` agreeing; the seed's mode on the same programs is wrong somewhere,
// which shows the generator reaches the overflow the seed assumes away.
#include <gtest/gtest.h>

#include "support/symprop.h"

TEST(SymbolicProperty, ExactModeOnRandomPrograms) {
  PropOpts o;
  o.exprs = 3000;
  PropStats st = sym_property(o);
  EXPECT_EQ(st.failures(), 0u) << st.first_failure;
  EXPECT_EQ(st.exprs, 3000u);
  EXPECT_GT(st.evals, 3000u * 20 / 2);  // most inputs are defined
  EXPECT_GT(st.smaller, 300u);          // the rules do something
  EXPECT_GT(st.runs, 300u);
}

TEST(SymbolicProperty, SeedModeAssumesNoOverflow) {
  PropOpts o;
  o.exprs = 3000;
  o.run_every = 0;
  o.rules = uopc_rules_symbolic_seed();
  PropStats st = sym_property(o);
  EXPECT_GT(st.wrong, 0u) << "the generator no longer reaches i32 overflow";
  EXPECT_EQ(st.unsound, 0u) << st.first_failure;  // bounds do not depend on the rules
}
