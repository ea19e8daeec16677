/* tools/check_rules.h - the core of `uopc check-rules` (seed chapter 2,
 * exercise 6): every rule checked on its own.
 *
 * For one rule, chk_rule builds random instances of the rule's pattern,
 * applies the rule alone (a one-rule matcher, uopc_matcher_rewrite on the
 * instance), and compares the value of the instance with the value of the
 * result at random inputs, in the spec's arithmetic (docs/cli.md, "uopc
 * check-rules", says how each family is generated and evaluated).  Built as
 * the small static library uopc_check, which the CLI verb and the tests link;
 * it uses only the public API.
 */
#ifndef UOPC_TOOLS_CHECK_RULES_H
#define UOPC_TOOLS_CHECK_RULES_H

#include <stdint.h>
#include <stdio.h>

#include "uopc/uopc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a rule's instances are built and evaluated. */
typedef enum chk_family {
  CHK_SCALAR = 0, /* scalar expressions over CONST, PARAM, RANGE; node by node with exec_alu */
  CHK_EVAL = 1,   /* closed programs (STACK, INDEX, CALL, movement, REDUCE); uopc_run before and after */
  CHK_KERNEL = 2, /* RANGE and INDEX of a BUFFER inside a small kernel; interpreted before and after */
} chk_family;

typedef struct chk_counts {
  uint64_t tried;         /* instances built (the rule was tried on each) */
  uint64_t fired;         /* the rule returned a node */
  uint64_t mismatches;    /* a fired instance whose result computes another value somewhere */
  uint64_t dtype_changes; /* a result whose dtype or shape differs from the matched node */
  uint64_t unbuilt;       /* instances the generator gave up on (construction kept failing) */
  uint64_t errors;        /* the rule recorded an error instead of returning a node */
  uint64_t compared;      /* evaluations of a fired instance compared */
  uint64_t skipped;       /* evaluations skipped: the instance is undefined at those inputs */
  uint64_t oracle;        /* CHK_EVAL: run of the instance has no value, or another, where the
                             reference evaluator has one (a finding about run, not the rule) */
  uint64_t lazier;        /* CHK_EVAL: run of the instance has a value where the reference has
                             none (allowed: x * 0 -> 0, a CALL argument the body ignores) */
  char example[1024];     /* the first mismatch or dtype change ("" when none) */
  char oracle_example[512]; /* the first input counted in oracle, in lazier ("" when none) */
  char lazier_example[512];
} chk_counts;

typedef struct chk_opts {
  uint64_t count; /* instances per rule */
  uint64_t seed;  /* with the rule's name and set: the random stream */
  FILE *trace;    /* rewrite trace of the checker's contexts, or NULL */
} chk_opts;

/* Checks rule r alone: count instances from its pattern, built and evaluated
   as family fam.  salt (the set's name, or NULL) goes into the random
   stream with o->seed and the rule's name, so a rule's counts do not depend
   on which other rules are checked.  Returns 0 and fills *out; -1 when the
   rule cannot be checked at all (its pattern does not parse, no memory),
   with a message in err. */
int chk_rule(const uopc_rule *r, chk_family fam, const char *salt, const chk_opts *o, chk_counts *out, char *err,
             size_t nerr);

/* The built-in sets, in the order `--set all` checks them. */
typedef struct chk_set {
  const char *name;
  const uopc_matcher *(*get)(void);
  chk_family fam;
  int seed_mode; /* symbolic_seed: the rules that are inexact by design do not fail a run */
} chk_set;

const chk_set *chk_sets(size_t *n);
/* The set named name, or NULL. */
const chk_set *chk_set_find(const char *name);
/* 1 when a mismatch or dtype change of rule r in set s is a failure: every
   rule of an exact set, and the EXACT rules of the seed's set. */
int chk_must_hold(const chk_set *s, const uopc_rule *r);

#ifdef __cplusplus
}
#endif
#endif
