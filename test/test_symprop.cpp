// The bounded property test of the symbolic rules (the long one: bench/bench_symprop).
#include <gtest/gtest.h>

#include "support/symprop.h"

TEST(SymbolicProperty, RandomIndexExpressions) {
  PropStats st = sym_property(1, 3000, 20, 5);
  EXPECT_EQ(st.failures(), 0u) << st.first_failure;
  EXPECT_EQ(st.exprs, 3000u);
  EXPECT_GT(st.evals, 3000u * 20 * 9 / 10);  // few inputs overflow
  EXPECT_GT(st.smaller, 300u);               // the rules do something
}
