/* tools/cmd_plan.c - tensor programs through the JIT:
 *
 *   uopc jit-run [--tier=fast|strong] [--fast-math] [--hot] [--stream|--no-stream] [--threads N]
 *                [--guard-pages] FILE.uir
 *
 * A closed program (no free PARAM) compiled to a plan of loop kernels
 * (include/uopc/plan.h) and run; its value printed exactly as `uopc run`
 * prints it (the same printer), errors included.  --guard-pages: the
 * result, the plan's temporaries and its constant arrays each end where
 * their pages end, between inaccessible pages (UOPC_COMPILE_GUARD_PAGES,
 * guarded_alloc: a kernel reading or writing outside them stops with
 * SIGSEGV).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_jit_run(cli *k, int argc, char **argv) {
  uopc_compile_opts o = {.tier = UOPC_TIER_FAST};
  const char *file = NULL;
  int guard = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--tier=fast") == 0) o.tier = UOPC_TIER_FAST;
    else if (strcmp(a, "--tier=strong") == 0) o.tier = UOPC_TIER_STRONG;
    else if (parse_compile_flag(a, &o.flags)) continue; /* --fast-math, --hot, --stream, --no-stream */
    else if (strcmp(a, "--guard-pages") == 0) guard = 1, o.flags |= UOPC_COMPILE_GUARD_PAGES;
    else if (strncmp(a, "--threads=", 10) == 0) {
      if (parse_threads("jit-run", a + 10, &o.threads)) return EXIT_USAGE;
    } else if (strcmp(a, "--threads") == 0) {
      if (i + 1 >= argc) return verb_usage("jit-run", "--threads needs a value");
      if (parse_threads("jit-run", argv[++i], &o.threads)) return EXIT_USAGE;
    }
    else if (a[0] == '-' && a[1]) return verb_usage("jit-run", "unknown option '%s'", a);
    else if (file) return verb_usage("jit-run", "takes one argument: FILE.uir");
    else file = a;
  }
  if (!file) return verb_usage("jit-run", "takes one argument: FILE.uir");
  uopc_node *root = load(k, file);
  if (!root) return EXIT_ERR;
  uopc_error e;
  uopc_plan *p = uopc_plan_compile(k->c, root, &o, &e);
  if (!p) return report(&e, file);
  int rc = EXIT_OK;
  if (uopc_plan_nargs(p)) {
    uopc_dtype t;
    uint32_t slot = 0;
    while (!uopc_plan_arg(p, slot, &t, NULL, NULL)) slot++;
    e = (uopc_error){.code = UOPC_ERR_EVAL};
    snprintf(e.msg, sizeof e.msg, "program did not evaluate to a value, stuck at PARAM (slot %u is free: use uopc exec --arg %u=FILE.npy)", slot, slot);
    uopc_plan_free(p);
    return report(&e, file);
  }
  uopc_tensor out;
  int64_t const *shape;
  uopc_plan_result(p, &out.dtype, &out.ndim, &shape);
  out.shape = shape;
  int64_t n = 1;
  for (uint32_t d = 0; d < out.ndim; d++) n *= shape[d];
  guarded g = {0};
  size_t bytes = (size_t)n * uopc_dtype_size(out.dtype);
  out.data = guard ? guarded_alloc(bytes, &g) : calloc(bytes ? bytes : 1, 1);
  if (!out.data) {
    uopc_plan_free(p);
    return fprintf(stderr, "%s: error: out of memory\n", file), EXIT_ERR;
  }
  if (uopc_plan_call(p, NULL, 0, &out, &e) != UOPC_OK) {
    rc = report(&e, file);
  } else {
    char *s = uopc_tensor_print(k->c, &out);
    if (!s) rc = report_ctx(k, file);
    else {
      out_str(k, s);
      out_str(k, "\n");
      uopc_mem_free(k->c, s, strlen(s) + 1);
    }
  }
  if (guard) guarded_free(&g);
  else free(out.data);
  uopc_plan_free(p);
  return rc;
}
