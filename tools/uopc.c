/* tools/uopc.c - the command line.  Thin: every verb is one function that
 * calls into the library (tools/cmd_*.c); to add one, declare it in
 * tools/cli.h and add a row to `verbs` below.
 *
 *     uopc [--trace] VERB ARGS...
 *     uopc --version | --help | VERB --help | VERB --version
 *
 * Options may stand anywhere before `--`; after it every argument is
 * positional, even one that starts with '-'.  Output goes to a buffer and is
 * written to stdout only when the verb succeeds, so a failure never leaves
 * partial output.  Errors go to stderr as `FILE:LINE:COL: error: MESSAGE`
 * (or `FILE: error: MESSAGE`).  Exit status: 0 success, 1 error, 2 usage
 * error.  docs/cli.md documents it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* tools/cli.c: arguments after `--` (declared here: cli.h is the verbs') */
const char *cli_positional(const char *arg);
void cli_positional_free(void);

typedef struct verb {
  const char *name;
  const char *args;    /* for the usage line */
  const char *summary;
  int (*run)(cli *k, int argc, char **argv);
  int subcommand;      /* 1: the first argument is a subcommand word, not a path */
} verb;

static const verb verbs[] = {
    {"print", "FILE.uir", "parse FILE and print it back in canonical .uir form", cmd_print, 0},
    {"run", "FILE.uir", "print the value of a closed program", cmd_run, 0},
    {"simplify", "FILE.uir", "print the simplified graph as .uir", cmd_simplify, 0},
    {"jit-run", "FILE.uir", "compile a closed program to loop kernels, run it, print its value (--threads N)", cmd_jit_run, 0},
    {"compile", "FILE.uir", "print a kernel's LLVM IR or assembly (--emit=llvm|asm)", cmd_compile, 0},
    {"exec", "FILE.uir", "run a kernel on .npy files (--arg S=IN.npy, --out S=OUT.npy, --threads N)", cmd_exec, 0},
    {"fuzz", "[OPTIONS]", "compiled ALU ops against exec_alu (--count N --op OP --dtype D)", cmd_fuzz, 0},
    {"cache", "stats|clear|warm FILE.uir", "the kernel cache: show, empty, or fill it", cmd_cache, 1},
    {"check-rules", "[OPTIONS]", "check every built-in rule on its own (--set NAME|all --count N --seed S)", cmd_check_rules, 0},
    {"viz", "FILE.uir -o OUT.html", "a web page of the graph and every rewrite (--verb simplify|run|compile)", cmd_viz, 0},
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
             "  -h, --help               show this help (VERB --help: the verb's)\n"
             "  --version                print the version of uopc and of LLVM\n"
             "  --                       end of options: every later argument is positional\n"
             "\nFILE may be '-' for standard input.  Exit status: 0 success, 1 error,\n"
             "2 usage error.  Errors are printed as FILE:LINE:COL: error: MESSAGE.\n");
}

/* uopc VERB --help */
static void verb_help(const verb *v) {
  printf("usage: uopc [--trace] %s %s\n\n%s\n\n(uopc --help lists every verb; docs/cli.md has the options)\n",
         v->name, v->args, v->summary);
}

/* uopc --version: one line, `uopc 0.3.0 (LLVM 19.1.7)` */
static int version(void) {
  printf("uopc %s (LLVM %s)\n", uopc_version(), uopc_llvm_version());
  return fflush(stdout) == 0 ? EXIT_OK : EXIT_ERR;
}

static int is_help(const char *a) { return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0; }

/* "uopc: WHAT 'ARG'" (or just WHAT), then the usage, on stderr. */
static int usage_error(const char *what, const char *arg) {
  if (arg) fprintf(stderr, "uopc: %s '%s'\n", what, arg);
  else fprintf(stderr, "uopc: %s\n", what);
  usage(stderr);
  return EXIT_USAGE;
}

static void env_warning(void *ud, const char *msg) {
  (void)ud;
  fprintf(stderr, "uopc: warning: %s\n", msg);
}

int main(int argc, char **argv) {
  cli k = {0};
  uopc_env_check(env_warning, NULL); /* junk in a UOPC_* variable: one line each */
  int i = 1, ended = 0; /* ended: `--` seen, no more options */
  for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      ended = 1;
      i++;
      break;
    }
    if (strcmp(a, "--trace") == 0) k.trace = 1;
    else if (is_help(a)) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--version") == 0) {
      return version();
    } else {
      return usage_error("unknown option", a);
    }
  }
  if (i == argc) return usage_error("no verb given", NULL);
  const verb *v = NULL;
  for (size_t j = 0; j < NVERBS; j++)
    if (strcmp(verbs[j].name, argv[i]) == 0) v = &verbs[j];
  if (!v) return usage_error("unknown verb", argv[i]);
  /* --trace, --help and --version may also follow the verb (before `--`);
     after `--`, an argument that starts with '-' reaches the verb as a path
     (cli_positional), except a subcommand word */
  char **rest = calloc((size_t)argc, sizeof *rest);
  int nrest = 0;
  if (!rest) return fprintf(stderr, "uopc: error: out of memory\n"), EXIT_ERR;
  for (int j = i + 1; j < argc; j++) {
    const char *a = argv[j];
    if (!ended && strcmp(a, "--") == 0) {
      ended = 1;
    } else if (!ended && strcmp(a, "--trace") == 0) {
      k.trace = 1;
    } else if (!ended && is_help(a)) {
      free(rest);
      verb_help(v);
      return EXIT_OK;
    } else if (!ended && strcmp(a, "--version") == 0) {
      free(rest);
      return version();
    } else if (ended && !(v->subcommand && nrest == 0)) {
      const char *p = cli_positional(a);
      if (!p) {
        free(rest);
        cli_positional_free();
        return fprintf(stderr, "uopc: error: out of memory\n"), EXIT_ERR;
      }
      rest[nrest++] = (char *)p;
    } else {
      rest[nrest++] = argv[j];
    }
  }
  k.c = uopc_ctx_new(NULL);
  if (!k.c) {
    free(rest);
    cli_positional_free();
    fprintf(stderr, "uopc: error: out of memory\n");
    return EXIT_ERR;
  }
  if (k.trace) uopc_ctx_set_trace(k.c, stderr);
  int rc = v->run(&k, nrest, rest);
  if (rc == EXIT_OK && k.oom) {
    fprintf(stderr, "uopc: error: out of memory\n");
    rc = EXIT_ERR;
  }
  if (rc == EXIT_OK) { /* also for text a verb wrote itself (out_graph) */
    if (out_flush(&k) != 0) {
      fprintf(stderr, "uopc: error: cannot write output: %s\n", strerror(errno));
      rc = EXIT_ERR;
    }
  }
  free(k.out);
  if (k.tail) uopc_mem_free(k.c, k.tail, k.tail_n + 1);
  free(rest);
  cli_positional_free();
  uopc_ctx_free(k.c);
  return rc;
}
