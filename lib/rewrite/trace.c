/* lib/rewrite/trace.c - the two debug switches of a fired rule.
 *
 * Trace (uopc_ctx_set_trace, UOPC_DEBUG=rewrite): one line per rule that
 * fires, `FILE:LINE NAME: BEFORE -> AFTER`, each side in uopc_show form
 * (`NAME: BEFORE -> AFTER` for a rule that does not say where it is).
 * Check (uopc_ctx_set_check, UOPC_DEBUG=check): a rule's result must have
 * the dtype and shape of the node it replaces (seed 2.5, exercise 4);
 * otherwise the rewrite fails with an error naming the rule.
 */
#include <string.h>

#include "core/ctx.h"
#include "rewrite/rw.h"
#include "uopc/rewrite.h"

/* Longest side of a trace line, and of the node quoted by a check error. */
#define TRACE_MAX 400
#define CHECK_MAX 60

static void show_free(uopc_ctx *c, char *s) {
  if (s) uopc_mem_free(c, s, strlen(s) + 1);
}

/* uopc_show failed: make sure the failure is recorded (uopc_fail keeps the
   first error). */
static int oom(uopc_ctx *c) {
  uopc_fail(c, UOPC_ERR_NOMEM, "out of memory");
  return 0;
}

static int same_shape(const uopc_node *a, const uopc_node *b) {
  if (a->ndim != b->ndim) return 0;
  for (uint32_t i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

static int check(const uopi_rw_env *env, const uopi_mrule *r, uopc_node *before, uopc_node *after) {
  uopc_ctx *c = env->c;
  char what[256];
  if (before->dtype != after->dtype) {
    snprintf(what, sizeof what, "dtype %s -> %s", uopc_dtype_name((uopc_dtype)before->dtype),
             uopc_dtype_name((uopc_dtype)after->dtype));
  } else if (!same_shape(before, after)) {
    char s0[96], s1[96];
    uopc_shape_str(before->shape, before->ndim, s0, sizeof s0);
    uopc_shape_str(after->shape, after->ndim, s1, sizeof s1);
    snprintf(what, sizeof what, "shape %s -> %s", s0, s1);
  } else {
    return 1;
  }
  char *at = uopc_show(c, before, CHECK_MAX);
  if (!at) return oom(c);
  uopc_fail(c, UOPC_ERR_REWRITE, "rule '%s' changed %s on %s", uopi_rule_name(r), what, at);
  show_free(c, at);
  return 0;
}

int uopi_rule_fired(const uopi_rw_env *env, const uopi_mrule *r, uopc_node *before, uopc_node *after) {
  if (env->check && !check(env, r, before, after)) return 0;
  uopc_ctx *c = env->c;
  if (c->trace_fn) {
    uopc_trace_event ev = {UOPC_TRACE_RULE, env->m->name, &r->info, before, after, c->trace_depth ? c->trace_depth - 1 : 0};
    c->trace_fn(c->trace_ud, &ev);
  }
  if (env->trace) {
    char *s0 = uopc_show(env->c, before, TRACE_MAX);
    char *s1 = s0 ? uopc_show(env->c, after, TRACE_MAX) : NULL;
    if (s1 && r->info.file) fprintf(env->trace, "%s:%d %s: %s -> %s\n", r->info.file, r->info.line, uopi_rule_name(r), s0, s1);
    else if (s1) fprintf(env->trace, "%s: %s -> %s\n", uopi_rule_name(r), s0, s1);
    show_free(env->c, s0);
    show_free(env->c, s1);
    if (!s1) return oom(env->c);
  }
  return 1;
}
