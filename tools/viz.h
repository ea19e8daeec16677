/* tools/viz.h - what the files of `uopc viz` share (docs/viz.md).
 *
 *   cmd_viz.c    the verb: options, recording the trace, the compile panes
 *   viz_graph.c  what each picture shows: node labels, the neighbourhood of
 *                one rewrite step, whole graphs with long chains and
 *                constant subtrees collapsed and a node budget
 *   viz_dot.c    running Graphviz's `dot` on many pictures at once and
 *                reading its layout back (-Tplain) as JSON
 *   viz_html.c   the page: the recorded data as JSON, the inline CSS and JS
 *                (tools/viz_page.{html,css,js}, embedded at build time)
 *
 * Memory here is plain malloc/free (this is the CLI, not the library); every
 * walk over a graph is a loop, never recursion.
 */
#ifndef UOPC_TOOLS_VIZ_H
#define UOPC_TOOLS_VIZ_H

#include <stddef.h>
#include <stdint.h>

#include "uopc/uopc.h"

/* ---- a growing string (malloc; zeroed is empty; failure is sticky: bad) ---- */
typedef struct vz_buf {
  char *s;
  size_t n, cap;
  int bad;
} vz_buf;
void vz_put(vz_buf *b, const char *s, size_t n);
void vz_puts(vz_buf *b, const char *s);
void vz_printf(vz_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as a JSON string literal, quotes included; '<' and '>' as \u003c and
   \u003e so that the text can sit inside a <script> element. */
void vz_json_str(vz_buf *b, const char *s);
void vz_buf_free(vz_buf *b);

/* ---- the recorded trace -------------------------------------------------- */
typedef struct vz_step {
  const uopc_rule *rule;     /* owned by its matcher (built-in sets live for the process) */
  uopc_node *before, *after;
  uint32_t depth, rw;        /* nesting, and the graph_rewrite call it belongs to */
} vz_step;

typedef struct vz_rw {       /* one graph_rewrite call */
  const char *set;           /* the matcher's name, or NULL */
  uint32_t depth;
  uint32_t first, nsteps;    /* its own steps and those of nested calls */
  uopc_node *root, *result;  /* result NULL: it failed (or has not ended) */
} vz_rw;

typedef struct vz_trace {
  vz_step *s;
  size_t n, cap;
  vz_rw *rw;
  size_t nrw, rwcap;
  uint32_t open[64];         /* indices of the calls still running, by depth */
  uint32_t nopen;
  int oom;
} vz_trace;

/* The uopc_trace_fn that fills a vz_trace (ud). */
void vz_trace_record(void *ud, const uopc_trace_event *ev);
void vz_trace_free(vz_trace *t);

/* ---- pictures ------------------------------------------------------------ */

/* Item classes (the page's CSS): */
enum {
  VZ_PLAIN = 0,
  VZ_BEFORE = 'b',    /* the node a rule matched */
  VZ_AFTER = 'a',     /* what it became */
  VZ_MATCH = 'm',     /* the other nodes the rule's pattern matched */
  VZ_STUB = 's',      /* sources not drawn: "... 3 more" */
  VZ_CHAIN = 'c',     /* a collapsed chain of single-use nodes */
  VZ_KONST = 'k',     /* a collapsed constant subtree */
};

typedef struct vz_item {
  uopc_node *node;    /* the node drawn (a collapsed constant subtree: its root), or NULL */
  int64_t id;         /* node->id, or -1 */
  int cls;            /* VZ_* */
  char *label;        /* malloc'd; NULL: the node's label (vz_labels) */
} vz_item;

typedef struct vz_edge {
  uint32_t from, to;  /* item indices: data flows from -> to (source -> user) */
  int rw;             /* 1: the rewrite arrow, before -> after */
} vz_edge;

typedef struct vz_draw {
  vz_item *it;
  uint32_t n, cap;
  vz_edge *e;
  uint32_t ne, ecap;
  int big;            /* lay out with the fast settings */
} vz_draw;

void vz_draw_free(vz_draw *d);

/* Node labels, by node id, made once: "OP DTYPE [SHAPE]" and a second line
   with the arg ('\n' between lines), as uopc_dot writes them. */
typedef struct vz_labels {
  char **s;
  uint32_t cap;
} vz_labels;
const char *vz_label(vz_labels *L, uopc_node *u); /* NULL when out of memory */
void vz_labels_free(vz_labels *L);

/* Scratch shared by the picture builders: stamped arrays by node id. */
typedef struct vz_scratch {
  uint32_t *gen, cur;
  int32_t *val;
  uint32_t cap;
} vz_scratch;
int vz_scratch_begin(vz_scratch *s, uint32_t nids); /* 0 on OOM */
void vz_scratch_free(vz_scratch *s);

/* The picture of one step: the matched nodes (matched[0..nm), before
   included), one level of their sources, what `after` is made of, down to
   nodes already drawn; at most about 40 boxes; the rewrite arrow.  0 on OOM. */
int vz_step_draw(vz_draw *d, vz_scratch *s, uopc_node *before, uopc_node *after, uopc_node *const *matched,
                 uint32_t nm);

/* The nodes a rule's pattern covered on before (before first), into
   out[0..max): the pattern's parts walked against the node with the
   bindings uopc_pattern_match found.  Returns how many (at least 1). */
uint32_t vz_matched(const uopc_pattern *p, uopc_node *before, uopc_node **out, uint32_t max);

/* The picture of a whole graph: CONST leaves folded into their users'
   labels (for graphs of more than 60 boxes), constant subtrees of 8 nodes
   or more as one box, chains of 6 or more single-use nodes as first, box,
   last; then at most max_items boxes, nearest the root first, with stubs
   for what is cut.  at[i] (for the nodes of uopc_toposort(root), written
   into *order / *norder, which the caller frees with free()) is the item
   that shows node order[i], or -1 when it is not drawn.  0 on OOM. */
int vz_graph_draw(uopc_ctx *c, vz_draw *d, vz_scratch *s, vz_labels *L, uopc_node *root, uint32_t max_items,
                  uopc_node ***order, uint32_t *norder, int32_t **at);

/* ---- layout (viz_dot.c) -------------------------------------------------- */

/* The path of the `dot` program, or NULL when it is not on PATH. */
const char *vz_dot_path(void);

/* Lays out d[0..n) with `dot -Tplain`, in a few batched processes (one per
   core, at most 4), and writes for each picture a JSON object
       {"w":W,"h":H,"n":[[x,y,w,h,id,"cls"(,"label")],...],"e":[[from,to,rw,x,y,x,y,...],...]}
   (points, y down; edges as cubic Bezier control points) into json[i]
   (malloc'd).  Returns 1, or 0 with a message in err. */
int vz_layout(const char *dot, vz_draw *const *d, size_t n, vz_labels *L, char **json, char *err, size_t errsz);

/* ---- the page (viz_html.c) ----------------------------------------------- */

/* Writes the page to path: the title and the data JSON (a complete JSON
   object) into the template; *bytes is the page's size.  Returns 1, or 0
   with errno set. */
int vz_write_page(const char *path, const char *title, const vz_buf *data, size_t *bytes);

#endif
