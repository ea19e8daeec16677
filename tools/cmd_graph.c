/* tools/cmd_graph.c - verbs on graphs: print (.uir or dot), run, simplify. */
#include <string.h>

#include "cli.h"

/* One FILE argument and no options. */
static int one_file(const char *verb, int argc, char **argv) {
  if (argc != 1) return verb_usage(verb, "takes one argument: FILE.uir");
  if (argv[0][0] == '-' && argv[0][1]) return verb_usage(verb, "unknown option '%s'", argv[0]);
  return EXIT_OK;
}

/* uopc print [--emit=uir|dot] FILE: parse, then print in canonical .uir
   form, or as Graphviz dot (uopc_dot). */
int cmd_print(cli *k, int argc, char **argv) {
  int dot = 0, i = 0;
  for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
    if (strcmp(argv[i], "--") == 0) {
      i++;
      break;
    }
    if (strcmp(argv[i], "--emit=uir") == 0) dot = 0;
    else if (strcmp(argv[i], "--emit=dot") == 0) dot = 1;
    else if (strncmp(argv[i], "--emit", 6) == 0) return verb_usage("print", "--emit must be --emit=uir or --emit=dot, not '%s'", argv[i]);
    else return verb_usage("print", "unknown option '%s'", argv[i]);
  }
  if (argc - i != 1) return verb_usage("print", "takes one argument: [--emit=uir|dot] FILE.uir");
  uopc_node *root = load(k, argv[i]);
  if (!root) return EXIT_ERR;
  if (!dot) return out_graph(k, root, argv[i]);
  char *s = uopc_dot(k->c, root);
  if (!s) return report_ctx(k, argv[i]);
  out_take(k, s);
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

/* uopc simplify [--seed-rules] FILE: the simplified graph as .uir (exact
   rules; --seed-rules: the seed's, which assume no i32 overflow). */
int cmd_simplify(cli *k, int argc, char **argv) {
  const uopc_matcher *rules = uopc_rules_symbolic();
  int i = 0;
  for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
    if (strcmp(argv[i], "--") == 0) {
      i++;
      break;
    }
    if (strcmp(argv[i], "--seed-rules") == 0) rules = uopc_rules_symbolic_seed();
    else return verb_usage("simplify", "unknown option '%s'", argv[i]);
  }
  if (argc - i != 1) return verb_usage("simplify", "takes one argument: [--seed-rules] FILE.uir");
  uopc_node *root = load(k, argv[i]);
  if (!root) return EXIT_ERR;
  uopc_node *r = uopc_simplify_with(k->c, root, rules);
  if (!r) return report_ctx(k, argv[i]);
  return out_graph(k, r, argv[i]);
}
