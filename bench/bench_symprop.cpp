// The long property test of the symbolic rules (seed 3.8, exercise 5,
// stronger; the bounded version is test/test_symprop.cpp).
//   bench_symprop [--count N] [--seed S] [--depth D] [--evals E] [--run-every K] [--seed-rules]
// Prints how many expressions were checked and the failures (exit 1 if any
// in exact mode).  --seed-rules checks the seed's mode instead, which is
// expected to give wrong values (it assumes no i32 overflow).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "support/symprop.h"

int main(int argc, char **argv) {
  PropOpts o;
  bool seed_rules = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!strcmp(a, "--seed-rules")) seed_rules = true;
    else if (v && !strcmp(a, "--count")) o.exprs = strtoull(v, nullptr, 10), i++;
    else if (v && !strcmp(a, "--seed")) o.seed = strtoull(v, nullptr, 10), i++;
    else if (v && !strcmp(a, "--depth")) o.depth = atoi(v), i++;
    else if (v && !strcmp(a, "--evals")) o.evals = atoi(v), i++;
    else if (v && !strcmp(a, "--run-every")) o.run_every = atoi(v), i++;
    else {
      fprintf(stderr, "usage: %s [--count N] [--seed S] [--depth D] [--evals E] [--run-every K] [--seed-rules]\n",
              argv[0]);
      return 2;
    }
  }
  if (seed_rules) o.rules = uopc_rules_symbolic_seed();
  auto t0 = std::chrono::steady_clock::now();
  PropStats st = sym_property(o);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("%s: %llu random expressions (%.3f million), %llu evaluations: %llu wrong, %llu out of bounds, "
         "%llu not a fixed point, %llu errors, %llu got smaller, %llu inputs skipped (undefined); "
         "run checked %llu programs, %llu wrong (%.2f s)\n",
         seed_rules ? "seed mode" : "exact mode", (unsigned long long)st.exprs, st.exprs / 1e6,
         (unsigned long long)st.evals, (unsigned long long)st.wrong, (unsigned long long)st.unsound,
         (unsigned long long)st.not_fixed, (unsigned long long)st.errors, (unsigned long long)st.smaller,
         (unsigned long long)st.skipped, (unsigned long long)st.runs, (unsigned long long)st.run_wrong, s);
  if (st.failures()) printf("first failure: %s\n", st.first_failure.c_str());
  return st.failures() && !seed_rules ? 1 : 0;
}
