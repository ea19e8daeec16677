/* lib/rewrite/ruleset.c - built-in rule sets from RULE declarations
 * (lib/rewrite/rule.h): the exact mode and the seed's mode of one list.
 */
#include <stdlib.h>

#include "rewrite/rule.h"
#include "uopc/rewrite.h"

static uopc_matcher *built(uopc_matcher *m, const char *name, const uopc_error *e) {
  if (!m) {
    fprintf(stderr, "uopc: built-in rule set %s: %s\n", name, e ? e->msg : "out of memory");
    uopi_die(__FILE__, __LINE__, "bad built-in rule set");
  }
  uopi_matcher_set_name(m, name);
  return m;
}

uopc_matcher *uopi_ruleset_build(const uopi_rule_def *const *defs, size_t n, const char *name, int exact) {
  uopc_rule *rules = calloc(n ? n : 1, sizeof *rules);
  if (!rules) return built(NULL, name, NULL);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const uopi_rule_def *d = defs[i];
    if (exact && d->cls == UOPC_RULE_INEXACT) continue; /* the seed's mode only */
    rules[k++] = (uopc_rule){d->pat, exact ? d->exact_fn : d->seed_fn, d->name, d->file, d->line, d->cls, d->vars};
  }
  uopc_error e = {0};
  uopc_matcher *m = uopc_matcher_new(rules, k, &e);
  free(rules);
  return built(m, name, &e);
}

uopc_matcher *uopi_ruleset_cat(const uopc_matcher *a, const uopc_matcher *b, const char *name) {
  return built(uopc_matcher_cat(a, b), name, NULL);
}
