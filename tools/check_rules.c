/* tools/check_rules.c - one rule checked on its own: build instances, apply
 * the rule alone, evaluate both sides, count (tools/check_rules.h).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "check_impl.h"

#define NDRAW_SCALAR 12      /* inputs per fired instance */
#define NDRAW_EVAL 3
#define NDRAW_KERNEL 4
#define CTX_INSTANCES 2000   /* a fresh context every so many instances bounds memory */
#define CTX_NODES (1u << 20) /* ... or when a context holds this many nodes */
#define KERNEL_STEPS 20000   /* stores and loop iterations a kernel run may take */
#define MAX_FREE 16          /* free PARAMs of a CHK_EVAL instance */

/* ---- the sets ------------------------------------------------------------------ */

static const chk_set sets[] = {
    {"fold", uopc_rules_fold, CHK_SCALAR, 0},
    {"symbolic", uopc_rules_symbolic, CHK_SCALAR, 0},
    {"symbolic_seed", uopc_rules_symbolic_seed, CHK_SCALAR, 1},
    {"symbolic_strong", uopc_rules_symbolic_strong, CHK_SCALAR, 0},
    {"evaluate", uopc_rules_evaluate, CHK_EVAL, 0},
    {"kernel", uopc_rules_kernel, CHK_KERNEL, 0},
};

const chk_set *chk_sets(size_t *n) {
  *n = sizeof sets / sizeof sets[0];
  return sets;
}

const chk_set *chk_set_find(const char *name) {
  for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
    if (strcmp(sets[i].name, name) == 0) return &sets[i];
  return NULL;
}

int chk_must_hold(const chk_set *s, const uopc_rule *r) { return !s->seed_mode || r->cls == UOPC_RULE_EXACT; }

/* ---- one rule -------------------------------------------------------------------- */

typedef struct run {
  const chk_opts *o;
  chk_family fam;
  uopc_ctx *c;
  chk_rng rng;
  chk_gen g;
  chk_tab val;
  chk_inputs in;
  chk_counts *out;
  char rule_err[256]; /* the rule's error on this instance, or "" */
} run;

static uint64_t mix_str(uint64_t h, const char *s) {
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h * 0x9e3779b97f4a7c15ull;
}

static void show_into(run *R, char *buf, size_t n, uopc_node *u) {
  char *s = u ? uopc_show(R->c, u, 300) : NULL;
  size_t len = strlen(buf);
  if (len < n) snprintf(buf + len, n - len, "%s", s ? s : u ? "?" : "(none)");
  if (s) uopc_mem_free(R->c, s, strlen(s) + 1);
}

static void cat(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t n, const char *fmt, ...) {
  size_t len = strlen(buf);
  if (len + 1 >= n) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + len, n - len, fmt, ap);
  va_end(ap);
}

/* Starts the example (the first mismatch of the rule): "BEFORE -> AFTER". */
static char *example_start(run *R, uopc_node *inst, uopc_node *res) {
  char *ex = R->out->example;
  if (ex[0]) return NULL;
  show_into(R, ex, sizeof R->out->example, inst);
  cat(ex, sizeof R->out->example, " -> ");
  if (res) show_into(R, ex, sizeof R->out->example, res);
  else cat(ex, sizeof R->out->example, "(rule failed: %s)", R->rule_err);
  return ex;
}

static void free_topo(uopc_ctx *c, uopc_node **t, uint32_t n) {
  if (t) uopc_mem_free(c, t, (size_t)n * sizeof *t);
}

/* ---- scalar rules: node by node with exec_alu ---- */

static int check_scalar(run *R, uopc_node *inst, uopc_node *res) {
  uopc_ctx *c = R->c;
  uint32_t nb = 0, na = 0;
  uopc_node **tb = uopc_toposort(c, inst, &nb), **ta = res ? uopc_toposort(c, res, &na) : NULL;
  int bad = 0;
  if (!tb || (res && !ta) || !chk_tab_fit(&R->val, uopc_ctx_count(c)) || !chk_tab_fit(&R->in.tab, uopc_ctx_count(c)))
    goto done;
  R->in.pool = R->g.pool;
  R->in.npool = R->g.npool;
  for (int d = 0; d < NDRAW_SCALAR && !bad; d++) {
    chk_tab_clear(&R->in.tab);
    uopc_val vb, va = {0, 0.0};
    if (chk_scalar_eval(&R->val, &R->in, tb, nb, &vb) != 1) { /* undefined (or vacuous) as written */
      R->out->skipped++;
      continue;
    }
    int ra = res ? chk_scalar_eval(&R->val, &R->in, ta, na, &va) : 0;
    R->out->compared++;
    if (ra == 1 && chk_same(vb, va, (uopc_dtype)inst->dtype)) continue;
    bad = 1;
    char *ex = example_start(R, inst, res);
    if (!ex) continue;
    size_t n = sizeof R->out->example;
    cat(ex, n, " at");
    for (uint32_t i = 0; i < nb; i++) {
      uopc_node *u = tb[i];
      if ((u->op != UOPC_OP_PARAM && u->op != UOPC_OP_RANGE) || !chk_tab_has(&R->in.tab, u->id)) continue;
      cat(ex, n, " %s%lld=", u->op == UOPC_OP_PARAM ? "p" : "r", (long long)u->arg.i);
      chk_fmt_val(ex, n, R->in.tab.v[u->id], (uopc_dtype)u->dtype);
    }
    cat(ex, n, ": ");
    chk_fmt_val(ex, n, vb, (uopc_dtype)inst->dtype);
    cat(ex, n, " vs ");
    if (ra == 1) chk_fmt_val(ex, n, va, (uopc_dtype)inst->dtype);
    else cat(ex, n, "%s", ra == 0 ? "undefined" : "not evaluable");
  }
done:
  free_topo(c, tb, nb);
  free_topo(c, ta, na);
  return bad;
}

/* ---- evaluate rules: run before and after, and the reference ---- */

/* A value node (a CONST, or a STACK tree of CONSTs) of dtype t and shape sh. */
static uopc_node *value_node(uopc_ctx *c, uopc_dtype t, const int32_t *sh, uint32_t nd, const uopc_val *v) {
  int64_t n = 1;
  for (uint32_t i = 0; i < nd; i++) n *= sh[i];
  uopc_node **lvl = malloc((size_t)n * sizeof *lvl), *r = NULL;
  if (!lvl) return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory");
  int fl = uopc_dtype_is_float(t);
  for (int64_t i = 0; i < n; i++)
    if (!(lvl[i] = fl ? uopc_const_f(c, t, v[i].f) : uopc_const_i(c, t, v[i].i))) goto done;
  for (uint32_t d = nd; d-- > 0;) { /* group the innermost axis into STACKs */
    int64_t groups = n / sh[d];
    for (int64_t g = 0; g < groups; g++)
      if (!(lvl[g] = uopc_stack(c, lvl + g * sh[d], (uint32_t)sh[d]))) goto done;
    n = groups;
  }
  r = lvl[0];
done:
  free(lvl);
  return r;
}

/* 1 when the value node u holds exactly the values f (C order). */
static int value_equals(uopc_node *u, const chk_flat *f) {
  uopc_node *st[256];
  uint32_t sp = 0, k = 0;
  st[sp++] = u;
  while (sp) {
    uopc_node *x = st[--sp];
    if (x->op == UOPC_OP_CONST) {
      if (k >= f->n || !chk_same(chk_const_val(x), f->v[k], (uopc_dtype)x->dtype)) return 0;
      k++;
    } else if (x->op == UOPC_OP_STACK && sp + x->nsrc <= sizeof st / sizeof st[0]) {
      for (uint32_t i = x->nsrc; i-- > 0;) st[sp++] = x->src[i];
    } else {
      return 0;
    }
  }
  return k == f->n;
}

/* The free PARAMs of u (CHK_FREE_SLOT and above) added to ps. */
static int free_params(uopc_ctx *c, uopc_node *u, uopc_node **ps, uint32_t *n) {
  uint32_t nt = 0;
  uopc_node **t = uopc_toposort(c, u, &nt);
  if (!t) return 0;
  for (uint32_t i = 0; i < nt; i++) {
    uopc_node *x = t[i];
    if (x->op != UOPC_OP_PARAM || x->arg.i < CHK_FREE_SLOT) continue;
    int dup = 0;
    for (uint32_t j = 0; j < *n && !dup; j++) dup = ps[j] == x;
    if (!dup && *n < MAX_FREE) ps[(*n)++] = x;
  }
  free_topo(c, t, nt);
  return 1;
}

/* run_value of u, or NULL with the error message in msg (and cleared). */
static uopc_node *run_or(uopc_ctx *c, uopc_node *u, char *msg, size_t n) {
  uopc_node *v = u ? uopc_run_value(c, u) : NULL;
  if (!v) {
    const uopc_error *e = uopc_ctx_error(c);
    snprintf(msg, n, "%s", e ? e->msg : "no program");
    uopc_ctx_clear_error(c);
  }
  return v;
}

static char *print_value(uopc_ctx *c, uopc_node *v) {
  char *s = v ? uopc_value_print(c, v) : NULL;
  if (!s) uopc_ctx_clear_error(c);
  return s;
}

static int check_eval(run *R, uopc_node *inst, uopc_node *res) {
  uopc_ctx *c = R->c;
  uopc_node *fp[MAX_FREE], *fk[MAX_FREE];
  chk_flat fv[MAX_FREE];
  uint32_t nf = 0;
  int bad = 0;
  if (!free_params(c, inst, fp, &nf) || (res && !free_params(c, res, fp, &nf))) return uopc_ctx_clear_error(c), 0;
  memset(fv, 0, sizeof fv);
  for (uint32_t i = 0; i < nf; i++) {
    fv[i].n = (uint32_t)uopc_numel(fp[i]);
    if (!(fv[i].v = malloc(fv[i].n * sizeof *fv[i].v))) goto done;
  }
  for (int d = 0; d < NDRAW_EVAL && !bad; d++) {
    for (uint32_t i = 0; i < nf; i++) {
      for (uint32_t j = 0; j < fv[i].n; j++) fv[i].v[j] = chk_rand_val(&R->rng, (uopc_dtype)fp[i]->dtype, R->g.pool, R->g.npool);
      if (!(fk[i] = value_node(c, (uopc_dtype)fp[i]->dtype, fp[i]->shape, fp[i]->ndim, fv[i].v))) goto done;
    }
    uopc_node *bs = nf ? uopc_substitute(c, inst, fp, fk, nf) : inst;
    uopc_node *as = res && nf ? uopc_substitute(c, res, fp, fk, nf) : res;
    if (!bs || (res && !as)) {
      uopc_ctx_clear_error(c);
      R->out->skipped++;
      continue;
    }
    char eb[256], ea[256];
    uopc_node *rb = run_or(c, bs, eb, sizeof eb), *ra = run_or(c, as, ea, sizeof ea);
    chk_flat rf = {0};
    int ref = chk_ref_eval(c, inst, fp, fv, nf, &rf);
    /* run of the instance against the reference: run may have a value where
       the reference has none (x * 0 -> 0 drops an undefined x; a CALL
       argument the body ignores is never evaluated), not the reverse */
    int lazier = ref == 0 && rb, worse = ref == 1 && (!rb || !value_equals(rb, &rf));
    if (lazier || worse) {
      R->out->lazier += (uint64_t)lazier;
      R->out->oracle += (uint64_t)worse;
      char *ox = worse ? R->out->oracle_example : R->out->lazier_example;
      size_t n = sizeof R->out->oracle_example;
      if (!ox[0]) {
        show_into(R, ox, n, inst);
        cat(ox, n, " at");
        for (uint32_t i = 0; i < nf; i++) {
          cat(ox, n, " p%lld=", (long long)fp[i]->arg.i);
          show_into(R, ox, n, fk[i]);
        }
        char *sb = print_value(c, rb);
        cat(ox, n, ": run %s, reference %s", sb ? sb : eb, ref == 1 ? "a value" : "undefined");
        if (ref == 1)
          for (uint32_t j = 0; j < rf.n && j < 8; j++) {
            cat(ox, n, " ");
            chk_fmt_val(ox, n, rf.v[j], (uopc_dtype)inst->dtype);
          }
        if (sb) uopc_mem_free(c, sb, strlen(sb) + 1);
      }
    }
    /* Undefined as written: the reference (which evaluates every CALL
       argument) has no value, or, where it cannot tell, run has none. */
    if (ref == 0 || (ref == -2 && !rb)) {
      R->out->skipped++;
      free(rf.v);
      continue;
    }
    R->out->compared++;
    char *sb = print_value(c, rb), *sa = print_value(c, ra);
    int mis = (rb && (!ra || !sa || !sb || strcmp(sa, sb) != 0)) || (ref == 1 && ra && !value_equals(ra, &rf));
    if (mis) {
      bad = 1;
      char *ex = example_start(R, inst, res);
      if (ex) {
        size_t n = sizeof R->out->example;
        cat(ex, n, " at");
        for (uint32_t i = 0; i < nf; i++) {
          cat(ex, n, " p%lld=", (long long)fp[i]->arg.i);
          show_into(R, ex, n, fk[i]);
        }
        cat(ex, n, ": run before %s, after %s", sb ? sb : eb, sa ? sa : ea);
        if (ref == 1) {
          cat(ex, n, ", reference");
          for (uint32_t j = 0; j < rf.n && j < 8; j++) {
            cat(ex, n, " ");
            chk_fmt_val(ex, n, rf.v[j], (uopc_dtype)inst->dtype);
          }
        }
      }
    }
    if (sb) uopc_mem_free(c, sb, strlen(sb) + 1);
    if (sa) uopc_mem_free(c, sa, strlen(sa) + 1);
    free(rf.v);
  }
done:
  uopc_ctx_clear_error(c);
  for (uint32_t i = 0; i < nf; i++) free(fv[i].v);
  return bad;
}

/* ---- kernel rules: a small kernel around the instance, interpreted ---- */

/* The kernel an instance is checked in, or NULL:
     RANGE r:           O[0] += 1 and O[1] += r, each in its own loop over r;
     INDEX(B, i):       either B[i] = (the iteration's number) in the loops
                        of the RANGEs of i, or, when their ends are
                        constants, O[iteration] = LOAD(B[i]). */
static uopc_node *kernel_of(run *R, uopc_node *inst) {
  uopc_ctx *c = R->c;
  uint32_t oslot = R->g.next_slot;
  uopc_node *k0 = uopc_const_i(c, UOPC_DT_I32, 0), *k1 = uopc_const_i(c, UOPC_DT_I32, 1);
  if (inst->op == UOPC_OP_RANGE) {
    uopc_node *O = uopc_buffer(c, oslot, UOPC_DT_I32, 2);
    uopc_node *a0 = uopc_index(c, O, &k0, 1), *a1 = uopc_index(c, O, &k1, 1);
    uopc_node *e[2] = {uopc_end(c, uopc_store(c, a0, uopc_add(c, uopc_load(c, a0), k1)), &inst, 1),
                       uopc_end(c, uopc_store(c, a1, uopc_add(c, uopc_load(c, a1), inst)), &inst, 1)};
    return uopc_sink(c, e, 2);
  }
  if (inst->op != UOPC_OP_INDEX || inst->nsrc != 2 || inst->src[0]->op != UOPC_OP_BUFFER) return NULL;
  uint32_t nt = 0, nr = 0;
  uopc_node **t = uopc_toposort(c, inst, &nt), *rs[8];
  if (!t) return NULL;
  for (uint32_t i = 0; i < nt; i++)
    if (t[i]->op == UOPC_OP_RANGE && nr < 8) rs[nr++] = t[i];
  free_topo(c, t, nt);
  for (uint32_t i = 1; i < nr; i++) /* outermost first: by idx */
    for (uint32_t j = i; j > 0 && rs[j - 1]->arg.i > rs[j]->arg.i; j--) {
      uopc_node *x = rs[j];
      rs[j] = rs[j - 1], rs[j - 1] = x;
    }
  int64_t total = 1;
  int consts = 1;
  for (uint32_t i = 0; i < nr; i++) {
    uopc_node *e = rs[i]->src[0];
    if (e->op != UOPC_OP_CONST || e->arg.i < 1) consts = 0;
    else total *= e->arg.i;
  }
  uopc_node *st;
  if (consts && total <= 4096 && rng_pct(&R->rng, 50)) { /* B is read: O[iteration] = B[i] */
    uopc_node *flat = nr ? rs[0] : k0;
    for (uint32_t i = 1; i < nr; i++) flat = uopc_add(c, uopc_mul(c, flat, rs[i]->src[0]), rs[i]);
    uopc_node *O = uopc_buffer(c, oslot, (uopc_dtype)inst->dtype, (int32_t)total);
    st = uopc_store(c, uopc_index(c, O, &flat, 1), uopc_load(c, inst));
  } else { /* B is written: B[i] = the iteration's number */
    uopc_node *v = k1;
    for (uint32_t i = 0; i < nr; i++) v = uopc_add(c, uopc_mul_k(c, v, 64), rs[i]);
    if (inst->dtype != UOPC_DT_I32) v = uopc_cast(c, v, (uopc_dtype)inst->dtype);
    st = uopc_store(c, inst, v);
  }
  uopc_node *e = nr ? uopc_end(c, st, rs, nr) : st;
  return uopc_sink(c, &e, 1);
}

static int check_kernel(run *R, uopc_node *inst, uopc_node *res, uopc_node *K) {
  uopc_ctx *c = R->c;
  uopc_node *K2 = res ? uopc_substitute(c, K, &inst, &res, 1) : NULL;
  chk_buf bb[CHK_NSLOTS], ba[CHK_NSLOTS];
  uint32_t nslots = 0, nt = 0;
  int bad = 0;
  char why[320] = "";
  memset(bb, 0, sizeof bb);
  memset(ba, 0, sizeof ba);
  if (res && !K2) {
    const uopc_error *e = uopc_ctx_error(c);
    snprintf(why, sizeof why, "the result cannot stand in the kernel: %s", e ? e->msg : "?");
    uopc_ctx_clear_error(c);
  }
  uopc_node **t = uopc_toposort(c, K, &nt);
  if (!t) return uopc_ctx_clear_error(c), 0;
  for (uint32_t i = 0; i < nt; i++) {
    uopc_node *b = t[i];
    if (b->op != UOPC_OP_BUFFER || b->arg.i >= CHK_NSLOTS || bb[b->arg.i].v) continue;
    uint32_t s = (uint32_t)b->arg.i, n = (uint32_t)b->shape[0];
    bb[s] = (chk_buf){(uopc_dtype)b->dtype, (int32_t)n, malloc(n * sizeof(uopc_val)), malloc(n)};
    ba[s] = (chk_buf){(uopc_dtype)b->dtype, (int32_t)n, malloc(n * sizeof(uopc_val)), malloc(n)};
    if (!bb[s].v || !bb[s].def || !ba[s].v || !ba[s].def) goto done;
    if (s + 1 > nslots) nslots = s + 1;
  }
  for (int d = 0; d < NDRAW_KERNEL && !bad; d++) {
    for (uint32_t s = 0; s < nslots; s++) {
      chk_buf *B = &bb[s];
      int ends = R->g.endbuf && (uint32_t)R->g.endbuf->arg.i == s;
      for (int32_t i = 0; i < B->n; i++) {
        B->v[i] = ends ? (uopc_val){(int64_t)rng_below(&R->rng, 13) - 2, 0.0}
                       : chk_rand_val(&R->rng, B->t, R->g.pool, R->g.npool);
        B->def[i] = 1;
      }
      if (B->n) {
        memcpy(ba[s].v, B->v, (size_t)B->n * sizeof *B->v);
        memcpy(ba[s].def, B->def, (size_t)B->n);
      }
    }
    if (chk_kernel_run(K, bb, nslots, KERNEL_STEPS) != 1) { /* undefined (or too long) as written */
      R->out->skipped++;
      continue;
    }
    R->out->compared++;
    int ra = K2 ? chk_kernel_run(K2, ba, nslots, KERNEL_STEPS) : 0;
    if (ra != 1) {
      bad = 1;
      if (!why[0]) snprintf(why, sizeof why, "the kernel with the result %s", ra == 0 ? "stops (undefined)" : ra == -1 ? "runs too long" : "cannot be interpreted");
    }
    for (uint32_t s = 0; s < nslots && !bad; s++)
      for (int32_t i = 0; i < bb[s].n && !bad; i++)
        if (bb[s].def[i] && (!ba[s].def[i] || !chk_same(bb[s].v[i], ba[s].v[i], bb[s].t))) {
          bad = 1;
          char vb[48] = "", va[48] = "";
          chk_fmt_val(vb, sizeof vb, bb[s].v[i], bb[s].t);
          if (ba[s].def[i]) chk_fmt_val(va, sizeof va, ba[s].v[i], ba[s].t);
          snprintf(why, sizeof why, "buffer %u[%d]: %s vs %s", s, i, vb, ba[s].def[i] ? va : "undefined");
        }
  }
  if (bad) {
    char *ex = example_start(R, inst, res);
    if (ex) cat(ex, sizeof R->out->example, " in the kernel %s", why);
  }
done:
  for (uint32_t s = 0; s < CHK_NSLOTS; s++) free(bb[s].v), free(bb[s].def), free(ba[s].v), free(ba[s].def);
  free_topo(c, t, nt);
  uopc_ctx_clear_error(c);
  return bad;
}

static int check(run *R, uopc_node *inst, uopc_node *res, uopc_node *K) {
  switch (R->fam) {
  case CHK_SCALAR: return check_scalar(R, inst, res);
  case CHK_EVAL: return check_eval(R, inst, res);
  case CHK_KERNEL: return check_kernel(R, inst, res, K);
  }
  return 0;
}

static int same_type(const uopc_node *a, const uopc_node *b) {
  return a->dtype == b->dtype && a->ndim == b->ndim &&
         (a->ndim == 0 || memcmp(a->shape, b->shape, a->ndim * sizeof *a->shape) == 0);
}

int chk_rule(const uopc_rule *rule, chk_family fam, const char *salt, const chk_opts *o, chk_counts *out, char *err,
             size_t nerr) {
  memset(out, 0, sizeof *out);
  if (!rule || !rule->pat || !o) return snprintf(err, nerr, "no rule"), -1;
  uopc_error e = {0};
  uopc_rule one = *rule; /* the rule alone, in a matcher of its own */
  uopc_matcher *m = uopc_matcher_new(&one, 1, &e);
  uopc_pattern *pat = m ? uopc_pattern_parse(rule->pat, &e) : NULL;
  if (!pat) {
    uopc_matcher_free(m);
    return snprintf(err, nerr, "%s", e.msg), -1;
  }
  uopc_pattern_part parts[CHK_MAX_PARTS];
  uint32_t np = uopc_pattern_nparts(pat);
  if (np > CHK_MAX_PARTS) np = CHK_MAX_PARTS;
  for (uint32_t i = 0; i < np; i++) uopc_pattern_part_get(pat, i, &parts[i]);
  uopc_pattern_free(pat);

  run *R = calloc(1, sizeof *R);
  if (!R) {
    uopc_matcher_free(m);
    return snprintf(err, nerr, "out of memory"), -1;
  }
  R->o = o, R->fam = fam, R->out = out;
  R->rng.s = mix_str(mix_str(o->seed * 0x9e3779b97f4a7c15ull + 1, salt), rule->name ? rule->name : rule->pat);
  R->in.r = &R->rng;
  int rc = 0;
  uint64_t since = 0;
  for (uint64_t k = 0; k < o->count; k++) {
    if (!R->c || since >= CTX_INSTANCES || uopc_ctx_count(R->c) > CTX_NODES) {
      uopc_ctx_free(R->c);
      if (!(R->c = uopc_ctx_new(NULL))) {
        rc = -1;
        snprintf(err, nerr, "out of memory");
        break;
      }
      uopc_ctx_set_check(R->c, 0); /* a dtype change is counted here, not an error */
      uopc_ctx_set_trace(R->c, o->trace);
      since = 0;
    }
    since++;
    uopc_ctx *c = R->c;
    R->g = (chk_gen){.c = c, .r = &R->rng, .fam = fam, .parts = parts, .nparts = np};
    uopc_node *inst = NULL, *K = NULL;
    for (int a = 0; a < 8 && !inst; a++) {
      inst = chk_gen_instance(&R->g);
      if (inst && fam == CHK_KERNEL && !(K = kernel_of(R, inst))) {
        uopc_ctx_clear_error(c);
        inst = NULL;
      }
    }
    if (!inst) {
      out->unbuilt++;
      continue;
    }
    out->tried++;
    R->rule_err[0] = 0;
    uopc_node *res = uopc_matcher_rewrite(m, c, inst, NULL);
    if (!res) {
      const uopc_error *re = uopc_ctx_error(c);
      if (re) { /* the rule failed: a mismatch if the instance has a value */
        out->errors++;
        snprintf(R->rule_err, sizeof R->rule_err, "%s", re->msg);
        uopc_ctx_clear_error(c);
        out->mismatches += (uint64_t)check(R, inst, NULL, K);
      }
      continue;
    }
    out->fired++;
    if (!same_type(res, inst)) {
      out->dtype_changes++;
      char *ex = example_start(R, inst, res);
      if (ex) {
        char a[64], b[64];
        uopc_shape_str(inst->shape, inst->ndim, a, sizeof a);
        uopc_shape_str(res->shape, res->ndim, b, sizeof b);
        cat(ex, sizeof out->example, ": %s %s becomes %s %s", uopc_dtype_name((uopc_dtype)inst->dtype), a,
            uopc_dtype_name((uopc_dtype)res->dtype), b);
      }
      continue;
    }
    out->mismatches += (uint64_t)check(R, inst, res, K);
  }
  uopc_ctx_free(R->c);
  chk_tab_free(&R->val);
  chk_tab_free(&R->in.tab);
  free(R);
  uopc_matcher_free(m);
  return rc;
}
