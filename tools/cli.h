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
  char *tail; /* out_take's string (from uopc_mem_alloc in c), after out */
  size_t tail_n;
} cli;

/* Appends to the held-back stdout. */
void out_put(cli *k, const char *s, size_t n);
void out_str(cli *k, const char *s);
/* Appends s, a NUL-terminated string from uopc_mem_alloc in k->c, and takes
   it: it is freed by the CLI.  When s is the last output (a printed graph),
   it is written as it is, without a copy into the held-back buffer: a graph
   of a million nodes prints without a second 30 MB.  NULL s: nothing. */
void out_take(cli *k, char *s);
/* Appends root as .uir text (uopc_uir_print), as the verb's last output,
   and returns the verb's exit code (an error is reported against file).
   With nothing held back before it, the text is written to stdout as it is
   made (uopc_uir_write), never all in memory; its tables are built first,
   so out of memory still leaves stdout empty. */
int out_graph(cli *k, uopc_node *root, const char *file);
/* Writes the held-back output to stdout and flushes it: 0 on success.  The
   buffers stay k's (main frees them). */
int out_flush(cli *k);
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
/* The compile options every compiling verb takes: --fast-math
   (docs/fast-math.md), --hot, --stream (kernels) and --no-stream (plans)
   (docs/loops.md): 1 with the bit set in *flags when a is one of them,
   else 0. */
int parse_compile_flag(const char *a, unsigned *flags);
/* --guard-pages: memory for `bytes` bytes (zeroed) in pages of their own
   that end where the bytes end, with an inaccessible page after them and
   one before, so that a kernel reading or writing past either end stops
   with SIGSEGV (docs/hardening.md).  Its start is aligned only as `bytes`
   allows.  NULL when the pages cannot be mapped; guarded_free(g) unmaps
   (g zeroed: nothing to do). */
typedef struct guarded {
  void *map;
  size_t size;
} guarded;
void *guarded_alloc(size_t bytes, guarded *g);
void guarded_free(guarded *g);
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
