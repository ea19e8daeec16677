// The long property test of the symbolic rules (seed 3.8, stronger; the
// bounded version is test/test_symprop.cpp).  Also times the seed-sized run.
//   bench_symprop [--count N] [--seed S] [--depth D] [--evals E]
// Prints how many expressions were checked and the failures (exit 1 if any).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "support/symprop.h"

int main(int argc, char **argv) {
  uint64_t count = 3000, seed = 1;
  int depth = 5, evals = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--count")) count = strtoull(argv[i + 1], nullptr, 10);
    else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], nullptr, 10);
    else if (!strcmp(argv[i], "--depth")) depth = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--evals")) evals = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: %s [--count N] [--seed S] [--depth D] [--evals E]\n", argv[0]);
      return 2;
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  PropStats st = sym_property(seed, count, evals, depth);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("%llu random expressions (%.3f million), %llu evaluations: %llu wrong, %llu out of bounds, "
         "%llu not a fixed point, %llu got smaller, %llu inputs skipped (overflow) (%.2f s)\n",
         (unsigned long long)st.exprs, st.exprs / 1e6, (unsigned long long)st.evals, (unsigned long long)st.wrong,
         (unsigned long long)st.unsound, (unsigned long long)st.not_fixed, (unsigned long long)st.smaller,
         (unsigned long long)st.skipped, s);
  if (count == 3000 && evals == 20) printf("seed (Python): 3000 expressions in 2.7 s; ratio %.0fx\n", 2.7 / s);
  if (st.failures()) printf("first failure: %s\n", st.first_failure.c_str());
  return st.failures() ? 1 : 0;
}
