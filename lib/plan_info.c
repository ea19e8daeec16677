/* lib/plan_info.c - a plan's schedule for looking at, without compiling it
 * (uopc_plan_schedule, include/uopc/plan.h): what uopc viz draws.
 */
#include <stdlib.h>
#include <string.h>

#include "jit/jit.h"
#include "schedule/schedule.h"
#include "uopc/plan.h"

uopc_status uopc_plan_schedule(uopc_ctx *c, uopc_node *root, uopc_node ***kernels, uint32_t *nkernels, char **text,
                               uopc_error *e) {
  if (kernels) *kernels = NULL;
  if (nkernels) *nkernels = 0;
  if (text) *text = NULL;
  if (e) memset(e, 0, sizeof *e);
  if (!c || !kernels || !nkernels) {
    if (e) {
      e->code = UOPC_ERR_ARG;
      snprintf(e->msg, sizeof e->msg, "plan_schedule: NULL %s", !c ? "context" : "output pointer");
    }
    return UOPC_ERR_ARG;
  }
  uopi_errsave saved; /* *e only; c's error left as the caller had it (uopc.h) */
  uopi_err_begin(c, &saved);
  uopi_schedule s;
  uopc_status st = uopi_schedule_build(c, root, 0, uopi_jit_vector_bits(), &s);
  if (st == UOPC_OK) {
    uopc_node **ks = malloc((s.nkernels ? s.nkernels : 1) * sizeof *ks);
    char *t = NULL;
    if (ks && text) {
      uopi_sbuf b;
      uopi_sb_init(&b, c);
      uopi_schedule_describe(&s, &b, "");
      char *ct = uopi_sb_finish(&b);
      if (ct) t = strdup(ct), uopc_mem_free(c, ct, strlen(ct) + 1);
    }
    if (!ks || (text && !t)) {
      free(ks), free(t);
      uopc_fail(c, UOPC_ERR_NOMEM, "plan_schedule: out of memory");
      st = UOPC_ERR_NOMEM;
    } else {
      for (uint32_t k = 0; k < s.nkernels; k++) ks[k] = s.kernels[k].root;
      *kernels = ks;
      *nkernels = s.nkernels;
      if (text) *text = t;
    }
  }
  uopi_schedule_free(&s);
  return uopi_err_end(c, &saved, st, e);
}
