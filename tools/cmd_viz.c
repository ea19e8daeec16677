/* tools/cmd_viz.c - uopc viz: the compiler's work as a web page.
 *
 *   uopc viz FILE.uir [--verb simplify|run|compile] -o OUT.html
 *
 * Runs the verb on FILE with a trace callback (uopc_ctx_set_trace_fn) that
 * records every graph_rewrite call and every rule that fires, then draws the
 * input graph, one picture per step (the neighbourhood of the rewrite) and
 * the final graph, has Graphviz lay them all out (viz_dot.c) and writes one
 * self-contained HTML file (viz_html.c).  docs/viz.md describes the page.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "viz.h"

#define GRAPH_MAX_ITEMS 400 /* boxes of the input and final pictures */
#define SHOW_MAX 160        /* bytes of a step's one-line before/after */
#define VALUE_MAX 4000      /* bytes of a run's value kept for the page */

/* ---- recording ------------------------------------------------------------------ */

void vz_trace_record(void *ud, const uopc_trace_event *ev) {
  vz_trace *t = ud;
  if (t->oom) return;
  if (ev->kind == UOPC_TRACE_BEGIN) {
    if (t->nrw == t->rwcap) {
      size_t cap = t->rwcap ? t->rwcap * 2 : 16;
      vz_rw *p = realloc(t->rw, cap * sizeof *p);
      if (!p) return (void)(t->oom = 1);
      t->rw = p, t->rwcap = cap;
    }
    t->rw[t->nrw] = (vz_rw){ev->set, ev->depth, (uint32_t)t->n, 0, ev->before, NULL};
    if (t->nopen < sizeof t->open / sizeof t->open[0]) t->open[t->nopen] = (uint32_t)t->nrw;
    t->nopen++;
    t->nrw++;
  } else if (ev->kind == UOPC_TRACE_RULE) {
    if (t->n == t->cap) {
      size_t cap = t->cap ? t->cap * 2 : 64;
      vz_step *p = realloc(t->s, cap * sizeof *p);
      if (!p) return (void)(t->oom = 1);
      t->s = p, t->cap = cap;
    }
    uint32_t rw = t->nopen && t->nopen <= 64 ? t->open[t->nopen - 1] : UINT32_MAX;
    t->s[t->n++] = (vz_step){ev->rule, ev->before, ev->after, ev->depth, rw};
  } else if (t->nopen) {
    t->nopen--;
    if (t->nopen < 64) {
      vz_rw *r = &t->rw[t->open[t->nopen]];
      r->result = ev->after;
      r->nsteps = (uint32_t)t->n - r->first;
    }
  }
}

void vz_trace_free(vz_trace *t) {
  free(t->s);
  free(t->rw);
  memset(t, 0, sizeof *t);
}

/* ---- helpers ---------------------------------------------------------------------- */

/* A closed program: no free PARAM and no kernel op (BUFFER, RANGE, LOAD,
   STORE, END, SINK) anywhere: `run` can give it a value. */
static int is_closed(uopc_ctx *c, uopc_node *root) {
  uint32_t np = 0, n = 0;
  uopc_node **ps = uopc_call_params(c, root, &np);
  if (ps) uopc_mem_free(c, ps, (size_t)np * sizeof *ps);
  if (np) return 0;
  uopc_node **all = uopc_toposort(c, root, &n);
  if (!all) return 0;
  int closed = 1;
  for (uint32_t i = 0; i < n && closed; i++) {
    uopc_op op = (uopc_op)all[i]->op;
    closed = !(op == UOPC_OP_BUFFER || op == UOPC_OP_RANGE || op == UOPC_OP_LOAD || op == UOPC_OP_STORE ||
               op == UOPC_OP_END || op == UOPC_OP_SINK);
  }
  uopc_mem_free(c, all, (size_t)n * sizeof *all);
  return closed;
}

static char *show(uopc_ctx *c, const uopc_node *u) {
  char *s = uopc_show(c, u, SHOW_MAX);
  if (!s) return NULL;
  char *r = strdup(s);
  uopc_mem_free(c, s, strlen(s) + 1);
  return r;
}

/* The kernel's loop nest, one line a loop or effect:
       for r0 in range(4):
         for r1 in range(8):
           store(index(b1, ...), load(...))                              */
static void loop_nest(uopc_ctx *c, uopc_node *root, vz_buf *b) {
  typedef struct frame {
    uopc_node *u;
    uint32_t indent;
  } frame;
  size_t cap = 64, sp = 0;
  frame *st = malloc(cap * sizeof *st);
  if (!st) return (void)(b->bad = 1);
  st[sp++] = (frame){root, 0};
  while (sp) {
    frame f = st[--sp];
    uopc_node *u = f.u;
    if (sp + u->nsrc + 1 > cap) {
      while (sp + u->nsrc + 1 > cap) cap *= 2;
      frame *p = realloc(st, cap * sizeof *p);
      if (!p) {
        b->bad = 1;
        break;
      }
      st = p;
    }
    if (u->op == UOPC_OP_SINK) {
      for (uint32_t j = u->nsrc; j-- > 0;) st[sp++] = (frame){u->src[j], f.indent};
    } else if (u->op == UOPC_OP_END) {
      uint32_t in = f.indent;
      for (uint32_t j = 1; j < u->nsrc; j++, in++) {
        uopc_node *r = u->src[j];
        char *end = r->nsrc ? show(c, r->src[0]) : NULL;
        vz_printf(b, "%*sfor r%lld in range(%s):\n", (int)(2 * in), "", (long long)r->arg.i, end ? end : "?");
        free(end);
      }
      st[sp++] = (frame){u->src[0], in};
    } else {
      char *s = show(c, u);
      vz_printf(b, "%*s%s\n", (int)(2 * f.indent), "", s ? s : "?");
      free(s);
    }
  }
  free(st);
}

/* One kernel pane's JSON: {"title":..., "graph": a picture reference or null,
   "nest":..., "llvm":..., "asm":...}. */
static void put_kernel(uopc_ctx *c, vz_buf *b, const char *title, uopc_node *root, const char *llvm, const char *asmtext,
                       const char *graph) {
  vz_buf nest = {0};
  if (root) loop_nest(c, root, &nest);
  vz_puts(b, "{\"title\":");
  vz_json_str(b, title);
  vz_printf(b, ",\"graph\":%s", graph ? graph : "null");
  vz_puts(b, ",\"nest\":");
  vz_json_str(b, nest.s ? nest.s : "");
  vz_puts(b, ",\"llvm\":");
  vz_json_str(b, llvm ? llvm : "");
  vz_puts(b, ",\"asm\":");
  vz_json_str(b, asmtext ? asmtext : "");
  vz_puts(b, "}");
  vz_buf_free(&nest);
}

static void free_kernels(uopc_node **kernels, uint32_t n, char *schedule, char **kllvm, char **kasm) {
  for (uint32_t q = 0; q < n; q++) {
    if (kllvm) free(kllvm[q]);
    if (kasm) free(kasm[q]);
  }
  free(kllvm), free(kasm), free(kernels), free(schedule);
}

/* The %NAME of each line of the .uir text, for the node the line made (the
   last node built with that line's position). */
static void put_names(uopc_ctx *c, const char *path, uopc_node *const *order, uint32_t n, vz_buf *b) {
  vz_puts(b, "{");
  FILE *f = strcmp(path, "-") == 0 ? NULL : fopen(path, "rb");
  if (!f) return vz_puts(b, "}");
  size_t nl = 0, lcap = 0;
  char **lines = NULL, buf[512];
  int bad = 0;
  while (fgets(buf, sizeof buf, f)) {
    size_t len = strlen(buf);
    int whole = len && buf[len - 1] == '\n';
    if (nl == lcap) {
      lcap = lcap ? lcap * 2 : 256;
      char **p = realloc(lines, lcap * sizeof *p);
      if (!p) {
        bad = 1;
        break;
      }
      lines = p;
    }
    lines[nl++] = strdup(buf);
    if (!whole) { /* the rest of a long line */
      int ch;
      while ((ch = fgetc(f)) != EOF && ch != '\n') {
      }
    }
  }
  fclose(f);
  /* the line's own node is the last one built with its position */
  uint32_t *owner = bad ? NULL : calloc(nl + 1, sizeof *owner); /* node index + 1 */
  for (uint32_t i = 0; owner && i < n; i++) {
    const char *file;
    int line, col;
    uopc_node *u = order[i];
    if (u->op == UOPC_OP_CONST || !uopc_node_pos(c, u, &file, &line, &col) || line < 1 || (size_t)line > nl) continue;
    if (!owner[line] || order[owner[line] - 1]->id < u->id) owner[line] = i + 1;
  }
  int first = 1;
  for (size_t line = 1; owner && line <= nl; line++) {
    const char *s = lines[line - 1];
    if (!owner[line] || !s) continue;
    while (*s == ' ' || *s == '\t') s++;
    if (*s != '%') continue;
    size_t k = 1;
    while (s[k] && s[k] != ' ' && s[k] != '\t' && s[k] != '=' && s[k] != '\n' && s[k] != '\r' && k < 80) k++;
    char name[96];
    snprintf(name, sizeof name, "%.*s", (int)k, s);
    vz_printf(b, "%s\"%u\":", first ? "" : ",", order[owner[line] - 1]->id);
    vz_json_str(b, name);
    first = 0;
  }
  free(owner);
  for (size_t i = 0; i < nl; i++) free(lines[i]);
  free(lines);
  vz_puts(b, "}");
}

/* A whole picture's JSON reference: {"pic":P,"ids":[...],"at":[...]} */
static void put_graph_ref(vz_buf *b, size_t pic, uopc_node *const *order, uint32_t n, const int32_t *at) {
  vz_printf(b, "{\"pic\":%zu,\"ids\":[", pic);
  for (uint32_t i = 0; i < n; i++) vz_printf(b, "%s%u", i ? "," : "", order[i]->id);
  vz_puts(b, "],\"at\":[");
  for (uint32_t i = 0; i < n; i++) vz_printf(b, "%s%d", i ? "," : "", at[i]);
  vz_puts(b, "]}");
}

typedef struct pat_cache {
  const uopc_rule *rule;
  uopc_pattern *p;
} pat_cache;

/* ---- the verb ---------------------------------------------------------------------- */

int cmd_viz(cli *k, int argc, char **argv) {
  const char *file = NULL, *out = NULL, *verb = NULL;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--verb") == 0 || strcmp(a, "-o") == 0) {
      if (i + 1 >= argc) return verb_usage("viz", "%s needs a value", a);
      if (a[1] == 'o') out = argv[++i];
      else verb = argv[++i];
    } else if (strncmp(a, "--verb=", 7) == 0) {
      verb = a + 7;
    } else if (a[0] == '-' && a[1]) {
      return verb_usage("viz", "unknown option '%s'", a);
    } else if (file) {
      return verb_usage("viz", "takes one FILE.uir");
    } else {
      file = a;
    }
  }
  if (!file) return verb_usage("viz", "needs a FILE.uir");
  if (!out) return verb_usage("viz", "needs -o OUT.html (the page to write)");
  if (verb && strcmp(verb, "simplify") && strcmp(verb, "run") && strcmp(verb, "compile"))
    return verb_usage("viz", "--verb must be simplify, run or compile, not '%s'", verb);
  const char *dot = vz_dot_path();
  if (!dot) {
    fprintf(stderr, "uopc viz: Graphviz 'dot' not found: install Debian's graphviz package\n");
    return EXIT_ERR;
  }
  uopc_ctx *c = k->c;
  uopc_node *root = load(k, file);
  if (!root) return EXIT_ERR;
  if (!verb) verb = is_closed(c, root) ? "run" : "simplify";
  uopc_ctx_clear_error(c);

  /* run the verb, recording */
  vz_trace t = {0};
  uopc_ctx_set_trace_fn(c, vz_trace_record, &t);
  uopc_node *final = NULL;
  char *value = NULL, *llvm = NULL, *asmtext = NULL;
  uopc_node **kernels = NULL; /* compile of a tensor program: the plan's kernels */
  uint32_t nkernels = 0;
  char *schedule = NULL, **kllvm = NULL, **kasm = NULL;
  uopc_error verr = {0};
  int failed = 0;
  if (strcmp(verb, "simplify") == 0) {
    final = uopc_simplify(c, root);
  } else if (strcmp(verb, "run") == 0) {
    final = uopc_run_value(c, root);
    if (final) {
      char *v = uopc_value_print(c, final);
      if (v) value = strndup(v, VALUE_MAX), uopc_mem_free(c, v, strlen(v) + 1);
    } else if (t.nrw && t.rw[0].result) {
      final = t.rw[0].result; /* stuck: show where */
    }
  } else if (uopc_op_flags((uopc_op)root->op) & UOPC_OPF_EFFECT) { /* one kernel: this file */
    uopc_error e = {0};
    llvm = uopc_emit_llvm(c, root, NULL, &e);
    uopc_ctx_set_trace_fn(c, NULL, NULL);
    if (llvm) asmtext = uopc_emit_asm(c, root, NULL, &e);
    if (!llvm || !asmtext) verr = e, failed = 1;
    for (size_t i = t.nrw; i-- > 0;)
      if (t.rw[i].depth == 0 && t.rw[i].result) {
        final = t.rw[i].result;
        break;
      }
  } else { /* a tensor program: its plan's kernels */
    uopc_error e = {0};
    if (uopc_plan_schedule(c, root, &kernels, &nkernels, &schedule, &e) != UOPC_OK) {
      verr = e, failed = 1;
    } else {
      uopc_ctx_set_trace_fn(c, NULL, NULL); /* the steps are the scheduling's; the panes compile */
      final = nkernels ? kernels[nkernels - 1] : NULL; /* the result's kernel; every kernel has its pane */
      kllvm = calloc(nkernels ? nkernels : 1, sizeof *kllvm);
      kasm = calloc(nkernels ? nkernels : 1, sizeof *kasm);
      if (!kllvm || !kasm) verr = (uopc_error){.code = UOPC_ERR_NOMEM, .msg = "out of memory"}, failed = 1;
      for (uint32_t q = 0; !failed && q < nkernels; q++) {
        kllvm[q] = uopc_emit_llvm(c, kernels[q], NULL, &e);
        if (kllvm[q]) kasm[q] = uopc_emit_asm(c, kernels[q], NULL, &e);
        if (!kllvm[q] || !kasm[q]) verr = e, failed = 1;
      }
    }
  }
  uopc_ctx_set_trace_fn(c, NULL, NULL);
  if (!failed && uopc_ctx_error(c)) verr = *uopc_ctx_error(c), failed = 1;
  uopc_ctx_clear_error(c);
  if (t.oom) {
    fprintf(stderr, "uopc: error: out of memory\n");
    free(value), free(llvm), free(asmtext);
    free_kernels(kernels, nkernels, schedule, kllvm, kasm);
    vz_trace_free(&t);
    return EXIT_ERR;
  }

  /* the pictures: input, one per step, final */
  int rc = EXIT_OK;
  vz_labels L = {0};
  vz_scratch sc = {0};
  size_t npic = 0, nsteps = t.n;
  size_t maxpic = nsteps + 2 + nkernels; /* input, steps, final, each kernel of a plan */
  vz_draw *pics = calloc(maxpic, sizeof *pics);
  vz_draw **ptr = calloc(maxpic, sizeof *ptr);
  char **json = calloc(maxpic, sizeof *json);
  char **kref = nkernels ? calloc(nkernels, sizeof *kref) : NULL; /* each kernel's picture reference (JSON) */
  uint32_t **matched = calloc(nsteps + 1, sizeof *matched);
  uint32_t *nmatched = calloc(nsteps + 1, sizeof *nmatched);
  pat_cache *pc = NULL;
  size_t npc = 0;
  uopc_node **in_order = NULL, **fin_order = NULL;
  uint32_t in_n = 0, fin_n = 0;
  int32_t *in_at = NULL, *fin_at = NULL;
  size_t in_pic = 0, fin_pic = 0;
  vz_buf data = {0};
  char err[512] = "out of memory";
  int ok = pics && ptr && json && matched && nmatched;
  if (ok) {
    in_pic = npic;
    ok = vz_graph_draw(c, &pics[npic++], &sc, &L, root, GRAPH_MAX_ITEMS, &in_order, &in_n, &in_at);
  }
  for (size_t i = 0; ok && i < nsteps; i++) {
    const vz_step *s = &t.s[i];
    uopc_pattern *p = NULL;
    size_t j = 0;
    while (j < npc && pc[j].rule != s->rule) j++;
    if (j == npc) {
      pat_cache *q = realloc(pc, (npc + 1) * sizeof *q);
      if (!q) {
        ok = 0;
        break;
      }
      pc = q;
      uopc_error pe;
      pc[npc++] = (pat_cache){s->rule, s->rule && s->rule->pat ? uopc_pattern_parse(s->rule->pat, &pe) : NULL};
    }
    p = pc[j].p;
    uopc_node *m[64];
    uint32_t nm = vz_matched(p, s->before, m, 64);
    matched[i] = malloc(nm * sizeof *matched[i]);
    if (!matched[i]) {
      ok = 0;
      break;
    }
    for (uint32_t q = 0; q < nm; q++) matched[i][q] = m[q]->id;
    nmatched[i] = nm;
    ok = vz_step_draw(&pics[npic++], &sc, s->before, s->after, m, nm);
  }
  if (ok && final) {
    if (final == root) {
      fin_pic = in_pic;
    } else {
      fin_pic = npic;
      ok = vz_graph_draw(c, &pics[npic++], &sc, &L, final, GRAPH_MAX_ITEMS, &fin_order, &fin_n, &fin_at);
    }
  }
  if (ok && nkernels && !kref) ok = 0;
  for (uint32_t q = 0; ok && q < nkernels; q++) { /* a plan: every kernel's own picture */
    uopc_node **ko = NULL;
    uint32_t kn = 0;
    int32_t *kat = NULL;
    size_t kp = npic;
    ok = vz_graph_draw(c, &pics[npic++], &sc, &L, kernels[q], GRAPH_MAX_ITEMS, &ko, &kn, &kat);
    if (ok) {
      vz_buf r = {0};
      for (uint32_t i = 0; i < kn; i++) vz_label(&L, ko[i]);
      put_graph_ref(&r, kp, ko, kn, kat);
      ok = !r.bad;
      kref[q] = r.s;
    }
    free(ko), free(kat);
  }
  for (size_t i = 0; i < npic; i++) ptr[i] = &pics[i];
  if (ok) ok = vz_layout(dot, ptr, npic, &L, json, err, sizeof err);
  if (!ok) {
    fprintf(stderr, "uopc viz: error: %s\n", err);
    rc = EXIT_ERR;
    goto done;
  }

  /* the data */
  vz_puts(&data, "{\"file\":");
  vz_json_str(&data, file);
  vz_puts(&data, ",\"verb\":");
  vz_json_str(&data, verb);
  vz_printf(&data, ",\"version\":\"%s\"", uopc_version());
  vz_puts(&data, ",\"error\":");
  if (failed) {
    char msg[400];
    if (verr.line > 0) snprintf(msg, sizeof msg, "%s:%d:%d: error: %s", verr.file ? verr.file : file, verr.line, verr.col, verr.msg);
    else snprintf(msg, sizeof msg, "%s: error: %s", file, verr.msg[0] ? verr.msg : "unknown error");
    vz_json_str(&data, msg);
  } else {
    vz_puts(&data, "null");
  }
  vz_puts(&data, ",\"value\":");
  if (value) vz_json_str(&data, value);
  else vz_puts(&data, "null");
  /* rules, in order of first firing */
  vz_puts(&data, ",\"rules\":[");
  for (size_t j = 0; j < npc; j++) {
    const uopc_rule *r = pc[j].rule;
    vz_puts(&data, j ? ",[" : "[");
    vz_json_str(&data, r && r->name ? r->name : r && r->pat ? r->pat : "?");
    vz_puts(&data, ",");
    vz_json_str(&data, r && r->file ? r->file : "");
    vz_printf(&data, ",%d,", r ? r->line : 0);
    vz_json_str(&data, r ? (uopc_rule_class_name(r->cls) ? uopc_rule_class_name(r->cls) : "") : "");
    vz_puts(&data, ",");
    vz_json_str(&data, r && r->pat ? r->pat : "");
    vz_puts(&data, "]");
  }
  vz_puts(&data, "],\"rewrites\":[");
  for (size_t j = 0; j < t.nrw; j++) {
    const vz_rw *w = &t.rw[j];
    vz_puts(&data, j ? ",[" : "[");
    vz_json_str(&data, w->set ? w->set : "");
    vz_printf(&data, ",%u,%u,%u,%u,%lld]", w->depth, w->first, w->nsteps, w->root->id,
              w->result ? (long long)w->result->id : -1LL);
  }
  vz_puts(&data, "],\"steps\":[");
  for (size_t i = 0; i < nsteps; i++) {
    const vz_step *s = &t.s[i];
    size_t r = 0;
    while (r < npc && pc[r].rule != s->rule) r++;
    vz_printf(&data, "%s[%zu,%u,%u,%lld,%u,%zu,[", i ? "," : "", r, s->before->id, s->after->id,
              s->rw == UINT32_MAX ? -1LL : (long long)s->rw, s->depth, i + 1);
    for (uint32_t q = 0; q < nmatched[i]; q++) vz_printf(&data, "%s%u", q ? "," : "", matched[i][q]);
    vz_puts(&data, "],");
    char *sb = show(c, s->before), *sa = show(c, s->after);
    vz_json_str(&data, sb ? sb : "?");
    vz_puts(&data, ",");
    vz_json_str(&data, sa ? sa : "?");
    free(sb), free(sa);
    vz_puts(&data, "]");
    vz_label(&L, s->before), vz_label(&L, s->after);
  }
  vz_puts(&data, "],\"input\":");
  for (uint32_t i = 0; i < in_n; i++) vz_label(&L, in_order[i]);
  put_graph_ref(&data, in_pic, in_order, in_n, in_at);
  vz_puts(&data, ",\"final\":");
  if (!final) vz_puts(&data, "null");
  else if (final == root) put_graph_ref(&data, in_pic, in_order, in_n, in_at);
  else {
    for (uint32_t i = 0; i < fin_n; i++) vz_label(&L, fin_order[i]);
    put_graph_ref(&data, fin_pic, fin_order, fin_n, fin_at);
  }
  vz_puts(&data, ",\"names\":");
  put_names(c, file, in_order, in_n, &data);
  vz_puts(&data, ",\"labels\":{");
  for (size_t i = 0, first = 1; i < L.cap; i++)
    if (L.s[i]) {
      vz_printf(&data, "%s\"%zu\":", first ? "" : ",", i);
      vz_json_str(&data, L.s[i]);
      first = 0;
    }
  vz_puts(&data, "},\"pics\":[");
  for (size_t i = 0; i < npic; i++) vz_printf(&data, "%s%s", i ? ",\n" : "\n", json[i]);
  vz_puts(&data, "],\"kernel\":");
  if (strcmp(verb, "compile") == 0 && !kernels) { /* one kernel */
    vz_puts(&data, "{\"schedule\":");
    vz_json_str(&data, "One kernel: this file. No temporaries.");
    vz_puts(&data, ",\"kernels\":[");
    put_kernel(c, &data, "the kernel", final, llvm, asmtext, NULL);
    vz_puts(&data, "]}");
  } else if (strcmp(verb, "compile") == 0) { /* a plan */
    vz_puts(&data, "{\"schedule\":");
    vz_json_str(&data, schedule ? schedule : "");
    vz_puts(&data, ",\"kernels\":[");
    for (uint32_t q = 0; q < nkernels; q++) {
      char title[64];
      snprintf(title, sizeof title, "kernel %u of %u", q, nkernels);
      if (q) vz_puts(&data, ",");
      put_kernel(c, &data, title, kernels[q], kllvm ? kllvm[q] : NULL, kasm ? kasm[q] : NULL, kref ? kref[q] : NULL);
    }
    vz_puts(&data, "]}");
  } else {
    vz_puts(&data, "null");
  }
  vz_puts(&data, "}");
  if (data.bad) {
    fprintf(stderr, "uopc: error: out of memory\n");
    rc = EXIT_ERR;
    goto done;
  }
  char title[600];
  snprintf(title, sizeof title, "uopc viz: %s (%s)", file, verb);
  size_t bytes = 0;
  if (!vz_write_page(out, title, &data, &bytes)) {
    fprintf(stderr, "%s: error: cannot write: %s\n", out, strerror(errno));
    rc = EXIT_ERR;
    goto done;
  }
  out_fmt(k, "%s: %zu steps, %zu pictures, %zu bytes\n", out, nsteps, npic, bytes);
  if (failed) { /* the page shows how far it got; the error is still an error */
    uopc_error e = verr;
    e.file = NULL;
    rc = report(&e, file);
  }
done:
  vz_buf_free(&data);
  for (size_t i = 0; i < npic; i++) vz_draw_free(&pics[i]);
  for (size_t i = 0; json && i < maxpic; i++) free(json[i]);
  for (uint32_t q = 0; kref && q < nkernels; q++) free(kref[q]);
  free(kref);
  for (size_t i = 0; matched && i < nsteps; i++) free(matched[i]);
  for (size_t j = 0; j < npc; j++) uopc_pattern_free(pc[j].p);
  free(pc), free(pics), free(ptr), free(json), free(matched), free(nmatched);
  free(in_order), free(in_at), free(fin_order), free(fin_at);
  vz_labels_free(&L);
  vz_scratch_free(&sc);
  vz_trace_free(&t);
  free(value), free(llvm), free(asmtext);
  free_kernels(kernels, nkernels, schedule, kllvm, kasm);
  return rc;
}
