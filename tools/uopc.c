/* tools/uopc.c - the command line.  Thin: every verb is one function that
 * calls into the library.  To add a verb, write `static int cmd_NAME(cli *k,
 * char **args)` and add a row to `verbs` below.
 *
 *     uopc [--trace] VERB ARGS...
 *
 * Output goes to a buffer and is written to stdout only when the verb
 * succeeds, so a failure never leaves partial output.  Errors go to stderr
 * as `FILE:LINE:COL: error: MESSAGE` (or `FILE: error: MESSAGE`).  Exit
 * status: 0 success, 1 error, 2 usage error.  docs/cli.md documents it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uopc/uopc.h"

enum { EXIT_OK = 0, EXIT_ERR = 1, EXIT_USAGE = 2 };

typedef struct cli {
  uopc_ctx *c;
  int trace;
  char *out; /* stdout, held back until success */
  size_t n, cap;
  int oom;
} cli;

/* ---- output and errors -------------------------------------------------- */

static void out_put(cli *k, const char *s, size_t n) {
  if (k->oom) return;
  if (k->n + n + 1 > k->cap) {
    size_t cap = k->cap ? k->cap : 4096;
    while (cap < k->n + n + 1) cap *= 2;
    char *p = realloc(k->out, cap);
    if (!p) {
      k->oom = 1;
      return;
    }
    k->out = p;
    k->cap = cap;
  }
  memcpy(k->out + k->n, s, n);
  k->n += n;
}

static void out_str(cli *k, const char *s) { out_put(k, s, strlen(s)); }

/* `FILE:LINE:COL: error: MESSAGE`, or `FILE: error: MESSAGE` where no line
   applies.  file is used when the error names none. */
static int report(const uopc_error *e, const char *file) {
  const char *f = e && e->file ? e->file : file ? file : "uopc";
  const char *msg = e && e->msg[0] ? e->msg : "unknown error";
  if (e && e->line > 0) fprintf(stderr, "%s:%d:%d: error: %s\n", f, e->line, e->col, msg);
  else fprintf(stderr, "%s: error: %s\n", f, msg);
  return EXIT_ERR;
}

/* The context's recorded error, reported against file. */
static int report_ctx(cli *k, const char *file) {
  const uopc_error *e = uopc_ctx_error(k->c);
  uopc_error none = {.code = UOPC_ERR_NOMEM, .msg = "out of memory"};
  uopc_error copy = e ? *e : none;
  copy.file = NULL;
  return report(&copy, file);
}

/* ---- input -------------------------------------------------------------- */

/* Parses a .uir file, or standard input when path is "-".  NULL after
   reporting the error. */
static uopc_node *load(cli *k, const char *path) {
  uopc_error e;
  if (strcmp(path, "-") != 0) {
    uopc_node *root = uopc_uir_parse_file(k->c, path, &e);
    if (!root) report(&e, path);
    return root;
  }
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n == cap) {
      cap = cap ? cap * 2 : 65536;
      char *p = realloc(buf, cap);
      if (!p) {
        free(buf);
        fprintf(stderr, "<stdin>: error: out of memory\n");
        return NULL;
      }
      buf = p;
    }
    size_t got = fread(buf + n, 1, cap - n, stdin);
    n += got;
    if (got == 0) break;
  }
  if (ferror(stdin)) {
    fprintf(stderr, "<stdin>: error: cannot read: %s\n", strerror(errno));
    free(buf);
    return NULL;
  }
  uopc_node *root = uopc_uir_parse(k->c, buf, n, "<stdin>", &e);
  free(buf);
  if (!root) report(&e, "<stdin>");
  return root;
}

/* ---- verbs -------------------------------------------------------------- */

/* uopc print FILE: parse, then print in canonical form. */
static int cmd_print(cli *k, char **args) {
  uopc_node *root = load(k, args[0]);
  if (!root) return EXIT_ERR;
  char *s = uopc_uir_print(k->c, root);
  if (!s) return report_ctx(k, args[0]);
  out_str(k, s);
  uopc_mem_free(k->c, s, strlen(s) + 1);
  return EXIT_OK;
}

typedef struct verb {
  const char *name;
  const char *args;    /* for the usage line */
  const char *summary;
  int nargs;           /* positional arguments after the verb */
  int (*run)(cli *k, char **args);
} verb;

static const verb verbs[] = {
    {"print", "FILE.uir", "parse FILE and print it back in canonical .uir form", 1, cmd_print},
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
  char **pos = calloc((size_t)argc + 1, sizeof *pos);
  int npos = 0, flags_done = 0;
  if (!pos) return fprintf(stderr, "uopc: error: out of memory\n"), EXIT_ERR;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!flags_done && a[0] == '-' && a[1]) {
      if (strcmp(a, "--") == 0) flags_done = 1;
      else if (strcmp(a, "--trace") == 0) k.trace = 1;
      else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
        free(pos);
        usage(stdout);
        return EXIT_OK;
      } else {
        free(pos);
        return usage_error("unknown option", a);
      }
      continue;
    }
    pos[npos++] = argv[i];
  }
  if (npos == 0) {
    free(pos);
    return usage_error("no verb given", NULL);
  }
  const verb *v = NULL;
  for (size_t i = 0; i < NVERBS; i++)
    if (strcmp(verbs[i].name, pos[0]) == 0) v = &verbs[i];
  if (!v) {
    int r = usage_error("unknown verb", pos[0]);
    free(pos);
    return r;
  }
  if (npos - 1 != v->nargs) {
    fprintf(stderr, "uopc: %s takes %d argument%s: uopc %s %s\n", v->name, v->nargs, v->nargs == 1 ? "" : "s",
            v->name, v->args);
    free(pos);
    return EXIT_USAGE;
  }
  k.c = uopc_ctx_new(NULL);
  if (!k.c) {
    free(pos);
    fprintf(stderr, "uopc: error: out of memory\n");
    return EXIT_ERR;
  }
  if (k.trace) uopc_ctx_set_trace(k.c, stderr);
  int rc = v->run(&k, pos + 1);
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
  free(pos);
  uopc_ctx_free(k.c);
  return rc;
}
