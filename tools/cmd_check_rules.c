/* tools/cmd_check_rules.c - uopc check-rules: every rule of the built-in
 * sets checked on its own (seed chapter 2, exercise 6; docs/cli.md).
 *
 *   uopc check-rules [--set NAME|all] [--count N] [--seed S] [--examples]
 *
 * One line per rule, then a summary line:
 *   SET RULE FILE:LINE CLASS tried=N fired=N mismatches=N dtype_changes=N
 * Exit status 1 when a rule that must hold (every rule of an exact set, the
 * exact rules of symbolic_seed) has a mismatch or a dtype/shape change.
 * Lines go to stdout as each rule is done (the long run shows its progress,
 * and the report stands when the status is 1).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "check_rules.h"
#include "cli.h"

#define DEFAULT_COUNT 2000
#define MAX_COUNT 1000000000ull

/* `name=VALUE` or `name VALUE`: 1 and *val; 0 when argv[*i] is not this
   option; -1 (after the usage message) when the value is missing. */
static int opt_value(int argc, char **argv, int *i, const char *name, const char **val) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '=') {
    *val = a + n + 1;
    return 1;
  }
  if (a[n]) return 0;
  if (*i + 1 >= argc) {
    verb_usage("check-rules", "%s needs a value", name);
    return -1;
  }
  *val = argv[++*i];
  return 1;
}

/* A whole decimal (or 0x hex) number that fits in 64 bits. */
static int parse_u64(const char *s, uint64_t *v) {
  if (!*s || *s == '-' || *s == '+' || *s == ' ') return 0;
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 0);
  if (errno || *end) return 0;
  *v = x;
  return 1;
}

static int say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vprintf(fmt, ap);
  va_end(ap);
  return r < 0 || fflush(stdout) != 0 ? -1 : 0;
}

int cmd_check_rules(cli *k, int argc, char **argv) {
  const char *setname = "all", *v;
  uint64_t count = DEFAULT_COUNT, seed = 1;
  int examples = 0;
  for (int i = 0; i < argc; i++) {
    int r;
    if (strcmp(argv[i], "--") == 0) {
      if (i + 1 < argc) return verb_usage("check-rules", "takes no arguments, only options ('%s')", argv[i + 1]);
      break;
    }
    if ((r = opt_value(argc, argv, &i, "--set", &v))) {
      if (r < 0) return EXIT_USAGE;
      if (strcmp(v, "all") != 0 && !chk_set_find(v))
        return verb_usage("check-rules",
                          "unknown rule set '%s' (fold, symbolic, symbolic_seed, symbolic_strong, evaluate, kernel, all)", v);
      setname = v;
    } else if ((r = opt_value(argc, argv, &i, "--count", &v))) {
      if (r < 0) return EXIT_USAGE;
      if (!parse_u64(v, &count) || count == 0 || count > MAX_COUNT)
        return verb_usage("check-rules", "--count must be a whole number from 1 to %llu, not '%s'", MAX_COUNT, v);
    } else if ((r = opt_value(argc, argv, &i, "--seed", &v))) {
      if (r < 0) return EXIT_USAGE;
      if (!parse_u64(v, &seed)) return verb_usage("check-rules", "--seed must be a whole number (64 bits), not '%s'", v);
    } else if (strcmp(argv[i], "--examples") == 0) {
      examples = 1;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return verb_usage("check-rules", "unknown option '%s'", argv[i]);
    } else {
      return verb_usage("check-rules", "takes no arguments, only options ('%s')", argv[i]);
    }
  }

  chk_opts o = {.count = count, .seed = seed, .trace = k->trace ? stderr : NULL};
  size_t nsets, nrules = 0, unsound = 0, seed_by_design = 0, seed_mis = 0, never = 0, used = 0;
  uint64_t tried = 0, fired = 0, oracle = 0, lazier = 0;
  int eval_in = 0;
  const chk_set *sets = chk_sets(&nsets);
  char unsound_names[512] = "";
  for (size_t si = 0; si < nsets; si++) {
    const chk_set *s = &sets[si];
    if (strcmp(setname, "all") != 0 && strcmp(setname, s->name) != 0) continue;
    used++;
    eval_in |= s->fam == CHK_EVAL;
    const uopc_matcher *m = s->get();
    for (size_t ri = 0; ri < uopc_matcher_size(m); ri++) {
      const uopc_rule *r = uopc_matcher_rule(m, ri);
      chk_counts cnt;
      char err[256] = "";
      if (chk_rule(r, s->fam, s->name, &o, &cnt, err, sizeof err) < 0) {
        fprintf(stderr, "uopc check-rules: error: %s %s: %s\n", s->name, r->name ? r->name : r->pat, err);
        return EXIT_ERR;
      }
      const char *cls = uopc_rule_class_name(r->cls);
      if (say("%s %s %s:%d %s tried=%llu fired=%llu mismatches=%llu dtype_changes=%llu\n", s->name,
              r->name ? r->name : "(unnamed)", r->file ? r->file : "?", r->file ? r->line : 0, cls ? cls : "?",
              (unsigned long long)cnt.tried, (unsigned long long)cnt.fired, (unsigned long long)cnt.mismatches,
              (unsigned long long)cnt.dtype_changes) < 0 ||
          (examples && cnt.example[0] && say("  example: %s\n", cnt.example) < 0) ||
          (examples && cnt.oracle &&
           say("  note: run of the instance had no value or another than the reference evaluator on %llu "
               "inputs, first: %s\n",
               (unsigned long long)cnt.oracle, cnt.oracle_example) < 0) ||
          (examples && cnt.lazier &&
           say("  note: run of the instance had a value where the reference evaluator has none on %llu inputs "
               "(allowed), first: %s\n",
               (unsigned long long)cnt.lazier, cnt.lazier_example) < 0)) {
        fprintf(stderr, "uopc: error: cannot write output: %s\n", strerror(errno));
        return EXIT_ERR;
      }
      nrules++;
      tried += cnt.tried, fired += cnt.fired, oracle += cnt.oracle, lazier += cnt.lazier;
      never += cnt.fired == 0;
      int bad = cnt.mismatches || cnt.dtype_changes;
      if (s->seed_mode && r->cls != UOPC_RULE_EXACT) {
        seed_by_design++;
        seed_mis += bad != 0;
      }
      if (bad && chk_must_hold(s, r)) {
        size_t len = strlen(unsound_names);
        if (len + 80 < sizeof unsound_names)
          snprintf(unsound_names + len, sizeof unsound_names - len, "%s%s/%s", unsound ? ", " : "", s->name,
                   r->name ? r->name : "(unnamed)");
        unsound++;
      }
    }
  }
  int seed_in = strcmp(setname, "all") == 0 || strcmp(setname, "symbolic_seed") == 0;
  char seed_part[256] = "";
  if (seed_in)
    snprintf(seed_part, sizeof seed_part,
             "; symbolic_seed: %zu rules inexact by design (class inexact, or nowrap applied without its guard), "
             "%zu of them with mismatches, listed and not failures",
             seed_by_design, seed_mis);
  char eval_part[256] = "";
  if (eval_in)
    snprintf(eval_part, sizeof eval_part,
             "; evaluate: run of the instance against the reference evaluator: %llu inputs with no value or another "
             "(%llu with a value where the reference has none, allowed)",
             (unsigned long long)oracle, (unsigned long long)lazier);
  if (say("summary: %zu set%s, %zu rules, tried=%llu fired=%llu; unsound: %zu%s%s%s%s%s; never fired: %zu\n", used,
          used == 1 ? "" : "s", nrules, (unsigned long long)tried, (unsigned long long)fired, unsound,
          unsound ? " (" : "", unsound_names, unsound ? ")" : "", seed_part, eval_part, never) < 0) {
    fprintf(stderr, "uopc: error: cannot write output: %s\n", strerror(errno));
    return EXIT_ERR;
  }
  return unsound ? EXIT_ERR : EXIT_OK;
}
