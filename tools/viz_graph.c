/* tools/viz_graph.c - what each picture of `uopc viz` shows.
 *
 * A step shows the neighbourhood of one rewrite: the nodes the rule's
 * pattern covered, one level of their sources, and what the rule built, down
 * to nodes already drawn.  A whole graph (the input, the result) is drawn in
 * full when it is small; a large one is made smaller first: CONST leaves are
 * folded into their users' labels, constant subtrees become one box, long
 * chains of single-use nodes become first node, box, last node, and at most
 * a budget of boxes nearest the root is kept, with "... N more" stubs where
 * sources are cut.  Everything is a loop over toposort order or an explicit
 * queue; the one recursive function walks a rule's pattern (bounded by the
 * pattern's text, never by the graph).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz.h"

/* ---- small helpers --------------------------------------------------------- */

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem) {
  if (need <= *cap) return 1;
  uint32_t n = *cap ? *cap : 16;
  while (n < need) n *= 2;
  void *q = realloc(*p, (size_t)n * elem);
  if (!q) return 0;
  *p = q;
  *cap = n;
  return 1;
}

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *p = malloc((size_t)n + 1);
  if (!p) return NULL;
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

void vz_draw_free(vz_draw *d) {
  for (uint32_t i = 0; i < d->n; i++) free(d->it[i].label);
  free(d->it);
  free(d->e);
  memset(d, 0, sizeof *d);
}

/* Adds an item; label is taken over (may be NULL).  Returns its index or -1. */
static int32_t add_item(vz_draw *d, uopc_node *u, int cls, char *label) {
  if (!grow((void **)&d->it, &d->cap, d->n + 1, sizeof *d->it)) {
    free(label);
    return -1;
  }
  d->it[d->n] = (vz_item){u, u ? (int64_t)u->id : -1, cls, label};
  return (int32_t)d->n++;
}

static int add_edge(vz_draw *d, uint32_t from, uint32_t to, int rw) {
  if (!grow((void **)&d->e, &d->ecap, d->ne + 1, sizeof *d->e)) return 0;
  d->e[d->ne++] = (vz_edge){from, to, rw};
  return 1;
}

int vz_scratch_begin(vz_scratch *s, uint32_t nids) {
  if (nids > s->cap) {
    uint32_t *g = realloc(s->gen, (size_t)nids * sizeof *g);
    if (!g) return 0;
    s->gen = g;
    int32_t *v = realloc(s->val, (size_t)nids * sizeof *v);
    if (!v) return 0;
    s->val = v;
    memset(s->gen + s->cap, 0, (size_t)(nids - s->cap) * sizeof *g);
    s->cap = nids;
  }
  if (++s->cur == 0) {
    memset(s->gen, 0, (size_t)s->cap * sizeof *s->gen);
    s->cur = 1;
  }
  return 1;
}

void vz_scratch_free(vz_scratch *s) {
  free(s->gen);
  free(s->val);
  memset(s, 0, sizeof *s);
}

static int32_t sget(const vz_scratch *s, const uopc_node *u) {
  return u->id < s->cap && s->gen[u->id] == s->cur ? s->val[u->id] : -1;
}
static void sset(vz_scratch *s, const uopc_node *u, int32_t v) {
  s->gen[u->id] = s->cur;
  s->val[u->id] = v;
}

/* ---- labels ------------------------------------------------------------------ */

static void put_tuple(char *buf, size_t size, const int32_t *v, uint32_t n, int pairs) {
  size_t k = 0;
  k += (size_t)snprintf(buf + k, size - k, "(");
  for (uint32_t i = 0; i < n && k < size; i++) {
    if (pairs) k += (size_t)snprintf(buf + k, size - k, "%s(%d, %d)", i ? ", " : "", (int)v[2 * i], (int)v[2 * i + 1]);
    else k += (size_t)snprintf(buf + k, size - k, "%s%d", i ? ", " : "", (int)v[i]);
  }
  if (k < size) snprintf(buf + k, size - k, "%s", n == 1 ? ",)" : ")");
}

/* A CONST's value as the .uir printer writes it. */
static void const_text(const uopc_node *u, char *buf) {
  if (u->dtype == UOPC_DT_BOOL) strcpy(buf, u->arg.i ? "True" : "False");
  else if (u->dtype == UOPC_DT_I32) snprintf(buf, 32, "%lld", (long long)u->arg.i);
  else uopc_fmt_double(u->arg.f, buf);
}

/* The label of u, as uopc_dot writes it (lib/text/dot.c), into a new string. */
static char *make_label(const uopc_node *u) {
  char sh[200] = "", arg[240] = "", num[32];
  if (u->ndim) {
    sh[0] = ' ';
    uopc_shape_str(u->shape, u->ndim, sh + 1, sizeof sh - 1);
  }
  switch (u->op) {
  case UOPC_OP_CONST: const_text(u, num), snprintf(arg, sizeof arg, "\n%s", num); break;
  case UOPC_OP_PARAM:
  case UOPC_OP_BUFFER: snprintf(arg, sizeof arg, "\nslot=%lld", (long long)u->arg.i); break;
  case UOPC_OP_RANGE: snprintf(arg, sizeof arg, "\nidx=%lld", (long long)u->arg.i); break;
  case UOPC_OP_PERMUTE: /* RESHAPE, EXPAND: the arg is the shape, already shown */
  case UOPC_OP_SHRINK:
    arg[0] = '\n';
    put_tuple(arg + 1, sizeof arg - 1, u->arg.v, u->arg.n, u->op == UOPC_OP_SHRINK);
    break;
  case UOPC_OP_REDUCE:
    snprintf(arg, sizeof arg, "\nop=%s pop=%lld", uopc_op_spelling((uopc_op)u->arg.rop), (long long)u->arg.i);
    break;
  case UOPC_OP_CALL:
    if (u->arg.name) snprintf(arg, sizeof arg, "\nname=%.60s", u->arg.name);
    break;
  default: break;
  }
  return xprintf("%s %s%s%s", uopc_op_name((uopc_op)u->op), uopc_dtype_name((uopc_dtype)u->dtype), sh, arg);
}

const char *vz_label(vz_labels *L, uopc_node *u) {
  if (u->id >= L->cap) {
    uint32_t old = L->cap;
    if (!grow((void **)&L->s, &L->cap, u->id + 1, sizeof *L->s)) return NULL;
    memset(L->s + old, 0, (size_t)(L->cap - old) * sizeof *L->s);
  }
  return L->s[u->id] ? L->s[u->id] : (L->s[u->id] = make_label(u));
}

void vz_labels_free(vz_labels *L) {
  for (uint32_t i = 0; i < L->cap; i++) free(L->s[i]);
  free(L->s);
  memset(L, 0, sizeof *L);
}

/* ---- the nodes a pattern covered ------------------------------------------------ */

typedef struct cover {
  const uopc_pattern *p;
  uopc_node *const *b; /* bindings of one match */
  uint32_t nv;
  uopc_node **out;
  uint32_t n, max;
} cover;

static const uint8_t perm2[] = {0, 1, 1, 0};
static const uint8_t perm3[] = {0, 1, 2, 0, 2, 1, 1, 0, 2, 1, 2, 0, 2, 0, 1, 2, 1, 0};

/* Does part `part` fit u under the bindings?  Appends the nodes it covers.
   Recursion over the pattern's parts (a rule's text: a few levels). */
static int fits(cover *k, uint32_t part, uopc_node *u, int depth) {
  uopc_pattern_part pp;
  if (depth > 32 || uopc_pattern_part_get(k->p, part, &pp) != UOPC_OK) return 0;
  if (!((pp.ops >> u->op) & 1) || !((pp.dtypes >> u->dtype) & 1)) return 0;
  if (pp.var >= 0 && (uint32_t)pp.var < k->nv && k->b[pp.var] != u) return 0;
  if (pp.has_lit && (u->op != UOPC_OP_CONST || uopc_const_value(u) != pp.lit)) return 0;
  uint32_t mark = k->n;
  if (k->n < k->max) k->out[k->n++] = u;
  if (!pp.has_src) return 1;
  uint32_t ns = pp.nsrc;
  if (pp.any_len ? u->nsrc < ns : u->nsrc != ns) return k->n = mark, 0;
  const uint8_t *perm = NULL;
  uint32_t nperm = 1;
  if (pp.any_order && (ns == 2 || ns == 3)) perm = ns == 2 ? perm2 : perm3, nperm = ns == 2 ? 2 : 6;
  for (uint32_t q = 0; q < nperm; q++) {
    uint32_t j = 0;
    for (; j < ns; j++)
      if (!fits(k, pp.src[perm ? perm[q * ns + j] : j], u->src[j], depth + 1)) break;
    if (j == ns) return 1;
    k->n = mark + 1;
  }
  k->n = mark;
  return 0;
}

uint32_t vz_matched(const uopc_pattern *p, uopc_node *before, uopc_node **out, uint32_t max) {
  enum { MAXM = 8, MAXV = 16 };
  uopc_node *b[MAXM * MAXV];
  uint32_t nv = p ? uopc_pattern_nvars(p) : 0, n = 1;
  out[0] = before;
  if (!p || nv > MAXV || max < 2) return 1;
  uint32_t nm = uopc_pattern_match(p, before, b, MAXM);
  if (nm > MAXM) nm = MAXM;
  for (uint32_t m = 0; m < nm || (nm == 0 && m == 0 && nv == 0); m++) {
    cover k = {p, b + m * nv, nv, out, 0, max};
    if (fits(&k, 0, before, 0)) {
      n = k.n;
      break;
    }
    if (nm == 0) break;
  }
  /* each node once, before first */
  uint32_t w = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t j = 0;
    while (j < w && out[j] != out[i]) j++;
    if (j == w) out[w++] = out[i];
  }
  return w ? w : (out[0] = before, 1);
}

/* ---- one step ----------------------------------------------------------------- */

#define STEP_MAX 40 /* boxes of a step's picture, stubs aside */
#define STEP_FAN 8  /* sources drawn per node */
#define STEP_DEPTH 3

/* Sources of the items [0, n0) that are not drawn: one stub each, and the
   edges between drawn items. */
static int finish_edges(vz_draw *d, vz_scratch *s, uint32_t n0) {
  for (uint32_t k = 0; k < n0; k++) {
    uopc_node *u = d->it[k].node;
    uint32_t missing = 0;
    for (uint32_t j = 0; j < u->nsrc; j++) {
      int32_t t = sget(s, u->src[j]);
      if (t >= 0) {
        if (!add_edge(d, (uint32_t)t, k, 0)) return 0;
      } else {
        missing++;
      }
    }
    if (missing) {
      int32_t st = add_item(d, NULL, VZ_STUB, xprintf("... %u more", missing));
      if (st < 0 || !add_edge(d, (uint32_t)st, k, 0)) return 0;
    }
  }
  return 1;
}

int vz_step_draw(vz_draw *d, vz_scratch *s, uopc_node *before, uopc_node *after, uopc_node *const *matched,
                 uint32_t nm) {
  uint32_t nids = (before->id > after->id ? before->id : after->id) + 1;
  for (uint32_t i = 0; i < nm; i++)
    if (matched[i]->id + 1 > nids) nids = matched[i]->id + 1;
  if (!vz_scratch_begin(s, nids)) return 0;
  /* the pattern's nodes, then one level of their sources */
  for (uint32_t i = 0; i < nm; i++) {
    if (sget(s, matched[i]) >= 0) continue;
    int32_t k = add_item(d, matched[i], matched[i] == before ? VZ_BEFORE : VZ_MATCH, NULL);
    if (k < 0) return 0;
    sset(s, matched[i], k);
  }
  if (sget(s, before) < 0) {
    int32_t k = add_item(d, before, VZ_BEFORE, NULL);
    if (k < 0) return 0;
    sset(s, before, k);
  }
  uint32_t npat = d->n;
  for (uint32_t i = 0; i < npat && d->n < STEP_MAX; i++) {
    uopc_node *u = d->it[i].node;
    for (uint32_t j = 0; j < u->nsrc && j < STEP_FAN && d->n < STEP_MAX; j++) {
      if (sget(s, u->src[j]) >= 0) continue;
      int32_t k = add_item(d, u->src[j], VZ_PLAIN, NULL);
      if (k < 0) return 0;
      sset(s, u->src[j], k);
    }
  }
  /* what after is made of: breadth first from after, not through nodes
     already drawn */
  int32_t ka = sget(s, after);
  if (ka >= 0) {
    d->it[ka].cls = VZ_AFTER;
  } else {
    ka = add_item(d, after, VZ_AFTER, NULL);
    if (ka < 0) return 0;
    sset(s, after, ka);
    uint32_t head = (uint32_t)ka, level_end = d->n;
    int depth = 0;
    for (; head < d->n && depth < STEP_DEPTH; head++) {
      if (head == level_end) depth++, level_end = d->n;
      if (depth >= STEP_DEPTH) break;
      uopc_node *u = d->it[head].node;
      for (uint32_t j = 0; j < u->nsrc && j < STEP_FAN && d->n < STEP_MAX; j++) {
        if (sget(s, u->src[j]) >= 0) continue;
        int32_t k = add_item(d, u->src[j], VZ_PLAIN, NULL);
        if (k < 0) return 0;
        sset(s, u->src[j], k);
      }
    }
  }
  uint32_t n0 = d->n;
  if (!finish_edges(d, s, n0)) return 0;
  return add_edge(d, (uint32_t)sget(s, before), (uint32_t)ka, 1);
}

/* ---- a whole graph -------------------------------------------------------------- */

#define BIG_NODES 60     /* larger graphs are made smaller (fold, collapse) */
#define KONST_MIN 8      /* nodes of a constant subtree drawn as one box */
#define CHAIN_MIN 6      /* nodes of a chain that is collapsed */
#define GRAPH_FAN 16     /* sources drawn per box */

enum { ST_HIDDEN = 0, ST_DRAWN, ST_FOLDED, ST_BOX, ST_CHAIN };

/* A value's text for a constant box: uopc_value_print, cut at 48 bytes. */
static void value_preview(uopc_ctx *c, uopc_node *u, char *buf, size_t size) {
  buf[0] = 0;
  if (u->op != UOPC_OP_STACK) return;
  char *v = uopc_value_print(c, u);
  if (!v) {
    uopc_ctx_clear_error(c);
    return;
  }
  size_t n = strlen(v);
  if (n > 48) snprintf(buf, size, "\n%.45s...", v);
  else snprintf(buf, size, "\n%s", v);
  uopc_mem_free(c, v, n + 1);
}

/* "1234 x ADD, 5 x MUL" for the ops of the chain's interior. */
static char *chain_label(const uint32_t *count, uint32_t total) {
  char buf[200];
  size_t k = (size_t)snprintf(buf, sizeof buf, "%u nodes", total);
  uint32_t shown = 0, used[UOPC_OP_COUNT] = {0};
  while (shown < 3) {
    int best = -1;
    for (int o = 0; o < UOPC_OP_COUNT; o++)
      if (count[o] && !used[o] && (best < 0 || count[o] > count[best])) best = o;
    if (best < 0) break;
    used[best] = 1;
    k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%u x %s", shown ? ", " : "\n", count[best], uopc_op_name((uopc_op)best));
    shown++;
    if (k >= sizeof buf) break;
  }
  return xstrdup(buf);
}

typedef struct gnode {   /* per toposort index */
  uint32_t size;         /* tree size, capped */
  int32_t item;          /* item in the full item list, or -1 */
  int32_t prev, next;    /* chain links (toposort indices), or -1 */
  uint32_t users;        /* edges to drawn users */
  uint8_t konst, state;
} gnode;

int vz_graph_draw(uopc_ctx *c, vz_draw *d, vz_scratch *s, vz_labels *L, uopc_node *root, uint32_t max_items,
                  uopc_node ***order_out, uint32_t *norder, int32_t **at_out) {
  uint32_t n = 0;
  uopc_node **order = uopc_toposort(c, root, &n);
  *order_out = NULL, *norder = 0, *at_out = NULL;
  if (!order) return 0;
  /* a plain copy for the caller (free() it), and the tables */
  uopc_node **ord = malloc((size_t)n * sizeof *ord);
  gnode *g = calloc(n, sizeof *g);
  int32_t *at = malloc((size_t)n * sizeof *at);
  uint32_t *stack = malloc((size_t)n * sizeof *stack);
  vz_draw full = {0};
  int32_t *newidx = NULL, *queue = NULL;
  uint32_t *efirst = NULL;
  vz_edge *esorted = NULL;
  int ok = ord && g && at && stack && vz_scratch_begin(s, root->id + 1);
  if (ok) memcpy(ord, order, (size_t)n * sizeof *ord);
  uopc_mem_free(c, order, (size_t)n * sizeof *order);
  if (!ok) goto done;
  for (uint32_t t = 0; t < n; t++) sset(s, ord[t], (int32_t)t), g[t].item = -1, g[t].prev = g[t].next = -1, at[t] = -1;
  int compact = n > BIG_NODES;

  /* constant subtrees and their sizes (sources come first in toposort) */
  for (uint32_t t = 0; t < n; t++) {
    uopc_node *u = ord[t];
    uint64_t size = 1;
    int k = u->op == UOPC_OP_CONST;
    if (u->nsrc && u->op != UOPC_OP_RANGE && u->op != UOPC_OP_LOAD && !(uopc_op_flags((uopc_op)u->op) & UOPC_OPF_EFFECT)) {
      k = 1;
      for (uint32_t j = 0; j < u->nsrc; j++) {
        gnode *sg = &g[sget(s, u->src[j])];
        k &= sg->konst;
        size += sg->size;
      }
    }
    g[t].konst = (uint8_t)k;
    g[t].size = size > (1u << 30) ? 1u << 30 : (uint32_t)size;
  }

  /* what is drawn: from the root, not into constant boxes */
  uint32_t sp = 0;
  stack[sp++] = n - 1;
  g[n - 1].state = ST_DRAWN;
  while (sp) {
    uint32_t t = stack[--sp];
    uopc_node *u = ord[t];
    int box = 0;
    if (compact && g[t].konst && g[t].size >= KONST_MIN && u->nsrc) {
      box = 1;
      for (uint32_t j = 0; j < u->nsrc; j++)
        if (g[sget(s, u->src[j])].size >= KONST_MIN) box = 0;
    }
    if (box) {
      g[t].state = ST_BOX;
      continue;
    }
    if (compact && u->op == UOPC_OP_CONST && t != n - 1) g[t].state = ST_FOLDED;
    for (uint32_t j = 0; j < u->nsrc; j++) {
      uint32_t q = (uint32_t)sget(s, u->src[j]);
      if (g[q].state == ST_HIDDEN) g[q].state = ST_DRAWN, stack[sp++] = q;
    }
  }

  /* chains: a node with one drawn source, itself used once */
  if (compact) {
    for (uint32_t t = 0; t < n; t++) {
      if (g[t].state != ST_DRAWN && g[t].state != ST_BOX) continue;
      uopc_node *u = ord[t];
      if (g[t].state == ST_DRAWN)
        for (uint32_t j = 0; j < u->nsrc; j++) g[sget(s, u->src[j])].users++;
    }
    for (uint32_t t = 0; t < n; t++) {
      if (g[t].state != ST_DRAWN) continue;
      uopc_node *u = ord[t];
      int32_t only = -1, edges = 0;
      for (uint32_t j = 0; j < u->nsrc; j++) {
        int32_t q = sget(s, u->src[j]);
        if (g[q].state == ST_DRAWN || g[q].state == ST_BOX) only = q, edges++;
      }
      if (edges == 1 && g[only].state == ST_DRAWN && g[only].users == 1) g[t].prev = only, g[only].next = (int32_t)t;
    }
    for (uint32_t t = 0; t < n; t++) {
      if (g[t].state != ST_DRAWN || g[t].prev >= 0 || g[t].next < 0) continue;
      uint32_t len = 1;
      for (int32_t q = g[t].next; q >= 0; q = g[q].next) len++;
      if (len < CHAIN_MIN) continue;
      for (int32_t q = g[t].next; q >= 0 && g[q].next >= 0; q = g[q].next) g[q].state = ST_CHAIN;
    }
  }

  /* items, root first */
  for (uint32_t r = n; ok && r-- > 0;) {
    uopc_node *u = ord[r];
    gnode *gt = &g[r];
    if (gt->state == ST_DRAWN) {
      char *label = NULL;
      int folded = 0;
      for (uint32_t j = 0; j < u->nsrc; j++) folded |= g[sget(s, u->src[j])].state == ST_FOLDED;
      if (folded) { /* "MUL i32\n(., 8)": the folded constants in place */
        vz_buf b = {0};
        const char *l0 = vz_label(L, u);
        vz_puts(&b, l0 ? l0 : "?");
        vz_puts(&b, "\n(");
        for (uint32_t j = 0; j < u->nsrc && j < 12; j++) {
          char num[32] = ".";
          if (g[sget(s, u->src[j])].state == ST_FOLDED) const_text(u->src[j], num);
          vz_printf(&b, "%s%s", j ? ", " : "", num);
        }
        vz_puts(&b, u->nsrc > 12 ? ", ...)" : ")");
        vz_put(&b, "", 1);
        if (b.bad) {
          vz_buf_free(&b);
          ok = 0;
          break;
        }
        label = b.s;
      }
      ok = (gt->item = add_item(&full, u, VZ_PLAIN, label)) >= 0;
    } else if (gt->state == ST_BOX) {
      char pre[64];
      value_preview(c, u, pre, sizeof pre);
      const char *l0 = vz_label(L, u);
      ok = (gt->item = add_item(&full, u, VZ_KONST, xprintf("%s\nconstant: %u nodes%s", l0 ? l0 : "?", gt->size, pre))) >= 0;
    } else if (gt->state == ST_CHAIN && (gt->next < 0 || g[gt->next].state != ST_CHAIN)) {
      /* the chain's last interior node (met first, root first): one box for all */
      uint32_t count[UOPC_OP_COUNT] = {0}, total = 0;
      for (int32_t q = (int32_t)r; q >= 0 && g[q].state == ST_CHAIN; q = g[q].prev) count[ord[q]->op]++, total++;
      ok = (gt->item = add_item(&full, NULL, VZ_CHAIN, chain_label(count, total))) >= 0;
      for (int32_t q = g[r].prev; ok && q >= 0 && g[q].state == ST_CHAIN; q = g[q].prev) g[q].item = gt->item;
    }
  }
  /* the nodes inside constant boxes show as their box */
  for (uint32_t t = n; ok && t-- > 0;) {
    if (g[t].state != ST_BOX) continue;
    sp = 0;
    stack[sp++] = t;
    while (sp) {
      uopc_node *u = ord[stack[--sp]];
      for (uint32_t j = 0; j < u->nsrc; j++) {
        uint32_t q = (uint32_t)sget(s, u->src[j]);
        if (g[q].state == ST_HIDDEN && g[q].item < 0) g[q].item = g[t].item, stack[sp++] = q;
      }
    }
  }
  /* the full item graph's edges; a folded constant shows as its first user */
  for (uint32_t t = 0; ok && t < n; t++) {
    if (g[t].state != ST_DRAWN && g[t].state != ST_CHAIN) continue;
    uopc_node *u = ord[t];
    for (uint32_t j = 0; ok && j < u->nsrc; j++) {
      gnode *sg = &g[sget(s, u->src[j])];
      if (sg->state == ST_FOLDED) {
        if (sg->item < 0) sg->item = g[t].item;
        continue;
      }
      if (sg->item != g[t].item) ok = add_edge(&full, (uint32_t)sg->item, (uint32_t)g[t].item, 0);
    }
  }
  if (!ok) goto done;

  /* the budget: breadth first from the root over sources, GRAPH_FAN sources
     a box; edges sorted by their user for the walk */
  newidx = malloc((size_t)(full.n ? full.n : 1) * sizeof *newidx);
  queue = malloc((size_t)(full.n ? full.n : 1) * sizeof *queue);
  efirst = calloc((size_t)full.n + 1, sizeof *efirst);
  esorted = malloc((size_t)(full.ne ? full.ne : 1) * sizeof *esorted);
  if (!newidx || !queue || !efirst || !esorted) goto fail;
  for (uint32_t i = 0; i < full.ne; i++) efirst[full.e[i].to + 1]++;
  for (uint32_t i = 0; i < full.n; i++) efirst[i + 1] += efirst[i];
  {
    uint32_t *fill = malloc((size_t)(full.n ? full.n : 1) * sizeof *fill);
    if (!fill) goto fail;
    memcpy(fill, efirst, (size_t)full.n * sizeof *fill);
    for (uint32_t i = 0; i < full.ne; i++) esorted[fill[full.e[i].to]++] = full.e[i];
    free(fill);
  }
  for (uint32_t i = 0; i < full.n; i++) newidx[i] = -1;
  uint32_t qn = 0;
  int32_t r0 = g[n - 1].item;
  newidx[r0] = 0;
  queue[qn++] = r0;
  for (uint32_t h = 0; h < qn; h++) {
    uint32_t it = (uint32_t)queue[h], shown = 0;
    for (uint32_t e = efirst[it]; e < efirst[it + 1] && qn < max_items && shown < GRAPH_FAN; e++, shown++) {
      uint32_t from = esorted[e].from;
      if (newidx[from] < 0) newidx[from] = (int32_t)qn, queue[qn++] = (int32_t)from;
    }
  }
  /* the drawing: items in walk order, their edges, a stub per box with cut sources */
  for (uint32_t h = 0; h < qn; h++) {
    vz_item *src = &full.it[queue[h]];
    char *label = src->label;
    src->label = NULL; /* moved into d */
    if (add_item(d, src->node, src->cls, label) < 0) goto fail;
  }
  for (uint32_t h = 0; h < qn; h++) {
    uint32_t it = (uint32_t)queue[h], cut = 0;
    for (uint32_t e = efirst[it]; e < efirst[it + 1]; e++) {
      int32_t f = newidx[esorted[e].from];
      if (f >= 0 && e - efirst[it] < GRAPH_FAN) {
        if (!add_edge(d, (uint32_t)f, h, 0)) goto fail;
      } else {
        cut++;
      }
    }
    if (cut) {
      int32_t st = add_item(d, NULL, VZ_STUB, xprintf("... %u more", cut));
      if (st < 0 || !add_edge(d, (uint32_t)st, h, 0)) goto fail;
    }
  }
  d->big = qn > 150;
  for (uint32_t t = 0; t < n; t++) at[t] = g[t].item >= 0 ? newidx[g[t].item] : -1;
  goto done;
fail:
  ok = 0;
done:
  vz_draw_free(&full);
  free(newidx), free(queue), free(efirst), free(esorted), free(stack), free(g);
  if (!ok) {
    free(ord), free(at);
    return 0;
  }
  *order_out = ord, *norder = n, *at_out = at;
  return 1;
}
