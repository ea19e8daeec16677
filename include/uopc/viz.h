/* uopc/viz.h - graphs as pictures: the Graphviz `dot` form of a graph.
 *
 * `uopc print FILE.uir --emit=dot` prints it; `uopc viz` (docs/viz.md) lays
 * graphs out with the `dot` program and writes a self-contained web page.
 * Nothing here runs Graphviz or needs it installed: the library only writes
 * text.
 */
#ifndef UOPC_VIZ_H
#define UOPC_VIZ_H

#include "uopc/uop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The graph reachable from root in Graphviz's dot language, one node
   statement per node (each node once, however many users it has: shared
   nodes are drawn once) and one edge per source, from the source to its
   user, in source order.  Nodes are named n0, n1, ... in uopc_toposort
   order and labelled with their op, dtype and shape on the first line and
   their arg on the second, where they have one:

       digraph uopc {              (from test/golden/dot_small.uir)
         ordering=in;
         node [shape=box, fontname="monospace", fontsize=10];
         n0 [label="CONST i32\n4"];
         n1 [label="RANGE i32\nidx=0"];
         n0 -> n1;
         n2 [label="CONST i32\n8"];
         n3 [label="MUL i32"];
         n1 -> n3;
         n2 -> n3;
         ...
       }

   The arg line: a CONST's value (as the .uir printer writes it), `slot=S`
   for PARAM and BUFFER, `idx=I` for RANGE, the tuple of PERMUTE and SHRINK
   (RESHAPE's and EXPAND's arg is the shape, on the first line),
   `op=add pop=K` for REDUCE, `name=N` for a named CALL (bytes outside
   printable ASCII as \xHH).  Deterministic: the same graph gives the same
   text.  Iterative (any depth).

   Returns a NUL-terminated string from uopc_mem_alloc; free it with
   uopc_mem_free(c, s, strlen(s) + 1).  NULL when c is NULL, when root is
   NULL or a node of another context (UOPC_ERR_ARG recorded in c, unless an
   error is already recorded), or when out of memory (UOPC_ERR_NOMEM). */
UOPC_API char *uopc_dot(uopc_ctx *c, uopc_node *root);

#ifdef __cplusplus
}
#endif
#endif
