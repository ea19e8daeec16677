/* test/fuzz_uir.c - libFuzzer target for the .uir parser and printer.
 *
 * Any bytes: parse them; when they parse, print, reparse the print and
 * check that it is the very same node (and that printing is deterministic);
 * when they do not, check that the error says something.  A fresh context
 * each time.  Seeds: test/corpus_uir/.  Build with -DUOPC_FUZZ=ON
 * -DCMAKE_C_COMPILER=clang-19, then: fuzz_uir test/corpus_uir
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uopc/uopc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, const char *text) {
  fprintf(stderr, "fuzz_uir: %s\n%s\n", what, text ? text : "");
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uopc_ctx *c = uopc_ctx_new(NULL);
  if (!c) return 0;
  uopc_error e;
  uopc_node *root = uopc_uir_parse(c, (const char *)data, size, "fuzz.uir", &e);
  if (!root) {
    if (!e.msg[0] || e.line < 0 || e.col < 0 || (e.line == 0 && e.col != 0)) die("error without a message or position", e.msg);
  } else {
    char *s = uopc_uir_print(c, root);
    if (!s) die("print failed", uopc_ctx_error(c) ? uopc_ctx_error(c)->msg : "");
    size_t n = strlen(s);
    uopc_node *back = uopc_uir_parse(c, s, n, "printed.uir", &e);
    if (back != root) {
      fprintf(stderr, "reparse: %s at %d:%d\n", back ? "a different node" : e.msg, e.line, e.col);
      die("parse(print(g)) != g", s);
    }
    char *s2 = uopc_uir_print(c, back);
    if (!s2 || strcmp(s, s2) != 0) die("printing is not deterministic", s);
    uopc_mem_free(c, s2, strlen(s2) + 1);
    uopc_mem_free(c, s, n + 1);
    char *v = uopc_value_print(c, root);
    if (v) uopc_mem_free(c, v, strlen(v) + 1);
  }
  uopc_ctx_free(c);
  return 0;
}
