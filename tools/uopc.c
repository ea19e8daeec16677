/* tools/uopc.c - the command line.  Thin: every verb is one function that
 * calls into the library (tools/cmd_*.c); to add one, declare it in
 * tools/cli.h and add a row to `verbs` below.
 *
 *     uopc [--trace] VERB ARGS...
 *
 * Output goes to a buffer and is written to stdout only when the verb
 * succeeds, so a failure never leaves partial output.  Errors go to stderr
 * as `FILE:LINE:COL: error: MESSAGE` (or `FILE: error: MESSAGE`).  Exit
 * status: 0 success, 1 error, 2 usage error.  docs/cli.md documents it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct verb {
  const char *name;
  const char *args;    /* for the usage line */
  const char *summary;
  int (*run)(cli *k, int argc, char **argv);
} verb;

static const verb verbs[] = {
    {"print", "FILE.uir", "parse FILE and print it back in canonical .uir form", cmd_print},
    {"run", "FILE.uir", "print the value of a closed program", cmd_run},
    {"simplify", "FILE.uir", "print the simplified graph as .uir", cmd_simplify},
    {"compile", "FILE.uir", "print a kernel's LLVM IR or assembly (--emit=llvm|asm)", cmd_compile},
    {"exec", "FILE.uir", "run a kernel on .npy files (--arg S=IN.npy, --out S=OUT.npy)", cmd_exec},
    {"fuzz", "[OPTIONS]", "compiled ALU ops against exec_alu (--count N --op OP --dtype D)", cmd_fuzz},
    {"cache", "stats|clear|warm FILE.uir", "the kernel cache: show, empty, or fill it", cmd_cache},
    {"check-rules", "[OPTIONS]", "check every built-in rule on its own (--set NAME|all --count N --seed S)", cmd_check_rules},
};
#define NVERBS (sizeof verbs / sizeof verbs[0])

static void usage(FILE *f) {
  fprintf(f, "usage: uopc [--trace] VERB ARGS...\n\nverbs:\n");
  for (size_t i = 0; i < NVERBS; i++) {
    char head[64];
    snprintf(head, sizeof head, "%s %s", verbs[i].name, verbs[i].args);
    fprintf(f, "  %-24s %s\n", head, verbs[i].summary);
  }
  fprintf(f, "\noptions:\n"
             "  --trace                  print every rewrite rule that fires to stderr\n"
             "  -h, --help               show this help\n"
             "\nFILE may be '-' for standard input.  Exit status: 0 success, 1 error,\n"
             "2 usage error.  Errors are printed as FILE:LINE:COL: error: MESSAGE.\n");
}

/* "uopc: WHAT 'ARG'" (or just WHAT), then the usage, on stderr. */
static int usage_error(const char *what, const char *arg) {
  if (arg) fprintf(stderr, "uopc: %s '%s'\n", what, arg);
  else fprintf(stderr, "uopc: %s\n", what);
  usage(stderr);
  return EXIT_USAGE;
}

int main(int argc, char **argv) {
  cli k = {0};
  int i = 1;
  for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--trace") == 0) k.trace = 1;
    else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else {
      return usage_error("unknown option", a);
    }
  }
  if (i == argc) return usage_error("no verb given", NULL);
  const verb *v = NULL;
  for (size_t j = 0; j < NVERBS; j++)
    if (strcmp(verbs[j].name, argv[i]) == 0) v = &verbs[j];
  if (!v) return usage_error("unknown verb", argv[i]);
  /* --trace may also follow the verb */
  char **rest = calloc((size_t)argc, sizeof *rest);
  int nrest = 0;
  if (!rest) return fprintf(stderr, "uopc: error: out of memory\n"), EXIT_ERR;
  for (int j = i + 1; j < argc; j++) {
    if (strcmp(argv[j], "--trace") == 0) k.trace = 1;
    else rest[nrest++] = argv[j];
  }
  k.c = uopc_ctx_new(NULL);
  if (!k.c) {
    free(rest);
    fprintf(stderr, "uopc: error: out of memory\n");
    return EXIT_ERR;
  }
  if (k.trace) uopc_ctx_set_trace(k.c, stderr);
  int rc = v->run(&k, nrest, rest);
  if (rc == EXIT_OK && k.oom) {
    fprintf(stderr, "uopc: error: out of memory\n");
    rc = EXIT_ERR;
  }
  if (rc == EXIT_OK && k.n) {
    if (fwrite(k.out, 1, k.n, stdout) != k.n || fflush(stdout) != 0) {
      fprintf(stderr, "uopc: error: cannot write output: %s\n", strerror(errno));
      rc = EXIT_ERR;
    }
  }
  free(k.out);
  free(rest);
  uopc_ctx_free(k.c);
  return rc;
}
