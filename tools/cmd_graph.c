/* tools/cmd_graph.c - verbs on graphs: print, run, simplify. */
#include <string.h>

#include "cli.h"

/* One FILE argument and no options. */
static int one_file(const char *verb, int argc, char **argv) {
  if (argc != 1) return verb_usage(verb, "takes one argument: FILE.uir");
  if (argv[0][0] == '-' && argv[0][1]) return verb_usage(verb, "unknown option '%s'", argv[0]);
  return EXIT_OK;
}

/* uopc print FILE: parse, then print in canonical form. */
int cmd_print(cli *k, int argc, char **argv) {
  if (one_file("print", argc, argv)) return EXIT_USAGE;
  uopc_node *root = load(k, argv[0]);
  if (!root) return EXIT_ERR;
  char *s = uopc_uir_print(k->c, root);
  if (!s) return report_ctx(k, argv[0]);
  out_str(k, s);
  uopc_mem_free(k->c, s, strlen(s) + 1);
  return EXIT_OK;
}

/* uopc run FILE: the value of a closed program. */
int cmd_run(cli *k, int argc, char **argv) {
  if (one_file("run", argc, argv)) return EXIT_USAGE;
  uopc_node *root = load(k, argv[0]);
  if (!root) return EXIT_ERR;
  uopc_node *v = uopc_run_value(k->c, root);
  char *s = v ? uopc_value_print(k->c, v) : NULL;
  if (!s) return report_ctx(k, argv[0]);
  out_str(k, s);
  out_str(k, "\n");
  uopc_mem_free(k->c, s, strlen(s) + 1);
  return EXIT_OK;
}

/* uopc simplify FILE: the simplified graph as .uir. */
int cmd_simplify(cli *k, int argc, char **argv) {
  if (one_file("simplify", argc, argv)) return EXIT_USAGE;
  uopc_node *root = load(k, argv[0]);
  if (!root) return EXIT_ERR;
  uopc_node *r = uopc_simplify(k->c, root);
  char *s = r ? uopc_uir_print(k->c, r) : NULL;
  if (!s) return report_ctx(k, argv[0]);
  out_str(k, s);
  uopc_mem_free(k->c, s, strlen(s) + 1);
  return EXIT_OK;
}
