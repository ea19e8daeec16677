/* tools/cli.h - what the CLI's verbs share.  Each verb is one function,
 *     int cmd_NAME(cli *k, int argc, char **argv)
 * that gets the arguments after the verb (options included: a verb parses its
 * own) and calls into the library.  Verbs are listed in tools/uopc.c.
 */
#ifndef UOPC_TOOLS_CLI_H
#define UOPC_TOOLS_CLI_H

#include <stdio.h>

#include "uopc/uopc.h"

enum { EXIT_OK = 0, EXIT_ERR = 1, EXIT_USAGE = 2 };

typedef struct cli {
  uopc_ctx *c;
  int trace;
  char *out; /* stdout, held back until success */
  size_t n, cap;
  int oom;
} cli;

/* Appends to the held-back stdout. */
void out_put(cli *k, const char *s, size_t n);
void out_str(cli *k, const char *s);
void out_fmt(cli *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints `FILE:LINE:COL: error: MESSAGE` (or `FILE: error: MESSAGE`) and
   returns EXIT_ERR; file is used when the error names none. */
int report(const uopc_error *e, const char *file);
/* The context's recorded error, reported against file. */
int report_ctx(cli *k, const char *file);
/* `uopc VERB: MESSAGE` on stderr; returns EXIT_USAGE. */
int verb_usage(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* --threads N of exec and jit-run: N from 1 to 64 in *out and EXIT_OK, else
   a usage message and EXIT_USAGE. */
int parse_threads(const char *verb, const char *s, uint32_t *out);
/* Parses a .uir file, or standard input when path is "-".  NULL after
   reporting the error. */
uopc_node *load(cli *k, const char *path);

/* the verbs */
int cmd_print(cli *k, int argc, char **argv);
int cmd_run(cli *k, int argc, char **argv);
int cmd_simplify(cli *k, int argc, char **argv);
int cmd_compile(cli *k, int argc, char **argv);
int cmd_exec(cli *k, int argc, char **argv);
int cmd_fuzz(cli *k, int argc, char **argv);
int cmd_cache(cli *k, int argc, char **argv);
int cmd_jit_run(cli *k, int argc, char **argv);
int cmd_check_rules(cli *k, int argc, char **argv);
int cmd_viz(cli *k, int argc, char **argv);

#endif
