// The property test of seed section 3.8, stronger: random i32 index
// expressions over RANGEs and PARAMs with + * // % < max where (negative
// divisors included), checked on random inputs:
//   simplify keeps the value; bounds contain every value;
//   graph_rewrite(simplify(e), symbolic) is simplify(e) itself.
// Used by the suite (bounded) and by bench/bench_symprop (long runs).
#pragma once
#include <cstdint>
#include <string>

struct PropStats {
  uint64_t exprs = 0, evals = 0, skipped = 0;  // skipped: an input where the original overflowed i32
  uint64_t wrong = 0, unsound = 0, not_fixed = 0, smaller = 0;
  std::string first_failure;
  uint64_t failures() const { return wrong + unsound + not_fixed; }
};

// Checks n_exprs expressions of the given depth, evals_per_expr random inputs each.
PropStats sym_property(uint64_t seed, uint64_t n_exprs, int evals_per_expr, int depth);
