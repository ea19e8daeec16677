// The property test of seed section 3.8, exercise 5, made strong enough to
// find overflow: random scalar programs over RANGEs (ends up to 2^31 - 1),
// i32 PARAMs and an f32 PARAM, with constants near the i32 limits, negative,
// huge and data-dependent divisors, + * // % max where < != casts (through
// f32 too), shared subexpressions and CALLs.  Each is simplified and
// checked on random inputs against an independent evaluator (support/
// refeval.h: wrapping i32, C float arithmetic, undefined results as
// poison):
//   wherever the original is defined, the simplified program is defined and
//   computes the same value;
//   bounds of the original contain every value;
//   graph_rewrite(simplify(e)) is simplify(e) (an un-memoized rewrite);
//   for some programs, `run` of the closed program (the leaves bound to the
//   inputs, through a CALL) gives the same value.
// Used by the suite (bounded) and by bench/bench_symprop (long runs).
#pragma once
#include <cstdint>
#include <string>

extern "C" {
#include "uopc/uopc.h"
}

struct PropStats {
  uint64_t exprs = 0, evals = 0, skipped = 0;  // skipped: the original is undefined there
  uint64_t wrong = 0, unsound = 0, not_fixed = 0, smaller = 0, errors = 0;
  uint64_t runs = 0, run_wrong = 0;  // `run` of closed programs
  std::string first_failure;
  uint64_t failures() const { return wrong + unsound + not_fixed + errors + run_wrong; }
};

struct PropOpts {
  uint64_t seed = 1;
  uint64_t exprs = 3000;
  int evals = 20;       // inputs per expression
  int depth = 5;
  int run_every = 8;    // check `run` on every N-th expression (0: never)
  const uopc_matcher *rules = nullptr;  // nullptr: the exact symbolic set
};

PropStats sym_property(const PropOpts &o);
