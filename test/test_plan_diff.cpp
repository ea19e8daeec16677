// jit-run == run: random closed tensor programs (support/progen.h) through
// the rewriting interpreter and through a plan of compiled loop kernels,
// value for value, bit for bit (the same printer).  Where run fails (an
// undefined operation), the plan fails too.  The long version:
// bench/bench_plandiff.
#include <gtest/gtest.h>

#include "support/fmt.h"
#include "support/progen.h"

TEST(PlanDiff, RandomProgramsMatchRun) {
  std::mt19937_64 rng(5);
  int n = 0, errors = 0;
  for (int round = 0; round < 25; round++) {
    Ctx c;
    uopc_ctx_set_check(c, 0);
    for (int k = 0; k < 10; k++, n++) {
      uopc_node *u = gen_program(c, rng, 4);
      std::string want = run_text(c, u), got = plan_text(c, u);
      errors += want.rfind("error:", 0) == 0;
      if (plan_agrees(c, u, want, got)) continue;
      char *t = uopc_uir_print(c, u);
      ADD_FAILURE() << "run: " << want << "\nplan: " << got << "\nprogram:\n" << (t ? t : "");
      if (t) uopc_mem_free(c, t, strlen(t) + 1);
    }
  }
  EXPECT_LT(errors, n / 2);
  uopc_plan_cache_clear();  // cached plans hold kernels: leave none to later tests
}
