// The long jit-run == run differential test (the bounded one is
// test/test_plan_diff.cpp): random closed tensor programs through run and
// through plans, compared bit for bit.
//   bench_plandiff [--count N] [--seed S] [--depth D] [--tier fast|strong]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "support/progen.h"

int main(int argc, char **argv) {
  uint64_t count = 1000, seed = 1;
  int depth = 4;
  uopc_tier tier = UOPC_TIER_FAST;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--count")) count = strtoull(argv[i + 1], nullptr, 10);
    else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], nullptr, 10);
    else if (!strcmp(argv[i], "--depth")) depth = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--tier")) tier = strcmp(argv[i + 1], "strong") ? UOPC_TIER_FAST : UOPC_TIER_STRONG;
    else return fprintf(stderr, "usage: %s [--count N] [--seed S] [--depth D] [--tier fast|strong]\n", argv[0]), 2;
  }
  std::mt19937_64 rng(seed);
  uint64_t same = 0, both_err = 0, dropped = 0, bad = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (uint64_t k = 0; k < count; k++) {
    uopc_ctx *c = uopc_ctx_new(nullptr);
    uopc_node *u = gen_program(c, rng, depth);
    std::string want = run_text(c, u), got = plan_text(c, u, tier);
    bool werr = want.rfind("error:", 0) == 0, gerr = got.rfind("error:", 0) == 0;
    if (werr && gerr) both_err++;
    else if (want == got) same++;
    else if (plan_agrees(c, u, want, got)) dropped++;
    else {
      bad++;
      if (bad <= 5 || getenv("PLANDIFF_DIR")) {
        char *t = uopc_uir_print(c, u);
        if (getenv("PLANDIFF_DIR") && t) {
          char path[512];
          snprintf(path, sizeof path, "%s/m%llu.uir", getenv("PLANDIFF_DIR"), (unsigned long long)k);
          if (FILE *f = fopen(path, "w")) fputs(t, f), fclose(f);
        }
        printf("MISMATCH (program %llu)\nrun:  %s\nplan: %s\n%s\n", (unsigned long long)k, want.c_str(), got.c_str(), t ? t : "");
        if (t) uopc_mem_free(c, t, strlen(t) + 1);
      }
    }
    uopc_ctx_free(c);
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("%llu random programs: %llu same value, %llu both undefined, %llu poison where run's rules dropped it, "
         "%llu mismatches (%.1f s)\n",
         (unsigned long long)count, (unsigned long long)same, (unsigned long long)both_err, (unsigned long long)dropped,
         (unsigned long long)bad, s);
  return bad ? 1 : 0;
}
