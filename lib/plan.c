/* lib/plan.c - plans: a tensor program's schedule (lib/schedule) with its
 * kernels compiled, and the call that runs them on the caller's arrays.
 *
 *   compile   schedule (inline CALLs, decide buffers, lower each computed
 *             buffer to a kernel graph) -> uopc_compile every kernel (the
 *             kernel cache: memory, then disk) -> the plan: owned by malloc,
 *             independent of the context
 *             (plan_cache.c: a program compiled before comes from memory)
 *   call      check every argument's dtype and shape -> one block for the
 *             temporaries and status words -> each kernel in order -> after
 *             each, its status: a poison code becomes the error of the op,
 *             with the operands that the recording variant of the kernel that
 *             computes the op finds when it runs again (only then)
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "plan_cache.h"
#include "schedule/schedule.h"
#include "uopc/jit.h"
#include "uopc/plan.h"
#include "uopc/tensor.h"
#include "uopc/uir.h"

#define ALIGN 64

typedef struct pbuf {
  uopi_pb_kind kind;
  uopc_dtype dtype;
  uint32_t ndim;
  int64_t *shape;
  int64_t numel;
  int64_t slot;
  void *data;      /* CONST */
  size_t offset;   /* TEMP, STATUS: in the call's block */
} pbuf;

typedef struct pkernel {
  uopc_kernel *k;
  uint32_t nbufs;
  uint32_t *map;
  uint32_t out, status, statusf;
  uopc_kernel *rec;   /* the recording variant (run after a failure), or NULL */
  uint32_t rec_nbufs;
  uint32_t *rec_map;
} pkernel;

typedef struct pcheck {
  uopi_check_kind kind;
  uopc_op op;
  int64_t size;
  char *file;      /* the op's .uir position, or NULL */
  int line, col;
  uint32_t kernel;  /* whose status holds the operands */
} pcheck;

struct uopc_plan {
  uint32_t nbufs, nkernels, nchecks, nargs, out;
  pbuf *bufs;
  pkernel *kernels;
  pcheck *checks;
  size_t block;    /* bytes of the per-call block */
  _Atomic(char *) spare; /* a block of an earlier call, kept for the next (its pages are already
                            touched: a 4 MiB block costs 1,000 page faults when new) */
  _Atomic uint32_t refs; /* uopc_plan_compile results and the plan cache's own */
};

void uopi_plan_ref(uopc_plan *p) { atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed); }
int uopi_plan_unref(uopc_plan *p) { return atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1; }

uint64_t uopi_plan_bytes(const uopc_plan *p) {
  uint64_t n = sizeof *p + p->nbufs * sizeof *p->bufs + p->nkernels * sizeof *p->kernels + p->nchecks * sizeof *p->checks;
  for (uint32_t i = 0; i < p->nbufs; i++)
    if (p->bufs[i].kind == UOPI_PB_CONST) n += (uint64_t)p->bufs[i].numel * uopc_dtype_size(p->bufs[i].dtype);
  return n + p->block; /* the spare block a call leaves */
}

static void set_err(uopc_error *e, uopc_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(uopc_error *e, uopc_status code, const char *fmt, ...) {
  if (!e) return;
  memset(e, 0, sizeof *e);
  e->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
}

/* A tier that is a uopc_tier (opts NULL: the default); 0 with *e otherwise. */
static int tier_ok(const uopc_compile_opts *opts, uopc_error *e) {
  uopi_jit_tier t;
  return uopi_tier_of(opts, &t, e) == UOPC_OK;
}

void uopc_plan_free(uopc_plan *p) {
  if (!p || !uopi_plan_unref(p)) return;
  for (uint32_t i = 0; i < p->nbufs; i++) {
    free(p->bufs[i].shape);
    free(p->bufs[i].data);
  }
  for (uint32_t i = 0; i < p->nkernels; i++) {
    uopc_kernel_free(p->kernels[i].k);
    uopc_kernel_free(p->kernels[i].rec);
    free(p->kernels[i].map);
    free(p->kernels[i].rec_map);
  }
  for (uint32_t i = 0; i < p->nchecks; i++) free(p->checks[i].file);
  free(p->bufs);
  free(p->kernels);
  free(p->checks);
  free(atomic_load(&p->spare));
  free(p);
}

static char *dup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* The plan of schedule s (kernels compiled); NULL with the context's error. */
static uopc_plan *build(uopc_ctx *c, uopi_schedule *s, const uopc_compile_opts *opts) {
  uopc_plan *p = calloc(1, sizeof *p);
  if (!p) return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory");
  atomic_init(&p->refs, 1);
  atomic_init(&p->spare, NULL);
  p->bufs = calloc(s->nbufs ? s->nbufs : 1, sizeof *p->bufs);
  p->kernels = calloc(s->nkernels ? s->nkernels : 1, sizeof *p->kernels);
  p->checks = calloc(s->nchecks ? s->nchecks : 1, sizeof *p->checks);
  if (!p->bufs || !p->kernels || !p->checks) goto oom;
  p->nbufs = s->nbufs;
  p->out = s->out;
  for (uint32_t i = 0; i < s->nbufs; i++) {
    const uopi_pbuf *sb = &s->bufs[i];
    pbuf *b = &p->bufs[i];
    b->kind = sb->kind, b->dtype = sb->dtype, b->ndim = sb->ndim, b->numel = sb->numel, b->slot = sb->slot;
    if (!(b->shape = malloc((sb->ndim ? sb->ndim : 1) * sizeof *b->shape))) goto oom;
    for (uint32_t d = 0; d < sb->ndim; d++) b->shape[d] = sb->shape[d];
    if (sb->kind == UOPI_PB_CONST) b->data = s->bufs[i].data, s->bufs[i].data = NULL; /* the plan owns it */
    if (sb->kind == UOPI_PB_TEMP || sb->kind == UOPI_PB_STATUS || sb->kind == UOPI_PB_STATUSF ||
        sb->kind == UOPI_PB_POISON) {
      b->offset = p->block;
      size_t bytes = (size_t)sb->numel * uopc_dtype_size(sb->dtype);
      p->block += (bytes + ALIGN - 1) / ALIGN * ALIGN;
    }
    if (sb->kind == UOPI_PB_INPUT && (uint64_t)sb->slot + 1 > p->nargs) p->nargs = (uint32_t)sb->slot + 1;
  }
  for (uint32_t i = 0; i < s->nchecks; i++) {
    const uopi_scheck *sc = &s->checks[i];
    pcheck *k = &p->checks[i];
    k->kind = sc->kind, k->op = sc->op, k->size = sc->size, k->kernel = sc->kernel;
    const char *file;
    if (uopc_node_pos(c, sc->at, &file, &k->line, &k->col) && !(k->file = dup(file))) goto oom;
    p->nchecks++;
  }
  for (uint32_t i = 0; i < s->nkernels; i++) {
    const uopi_skernel *sk = &s->kernels[i];
    pkernel *k = &p->kernels[i];
    k->status = sk->status, k->statusf = sk->statusf, k->nbufs = sk->nbufs, k->out = sk->out;
    if (!(k->map = malloc((sk->nbufs ? sk->nbufs : 1) * sizeof *k->map))) goto oom;
    memcpy(k->map, sk->map, sk->nbufs * sizeof *k->map);
    uopc_error e;
    if (sk->rec) {
      if (!(k->rec_map = malloc((sk->rec_nbufs ? sk->rec_nbufs : 1) * sizeof *k->rec_map))) goto oom;
      memcpy(k->rec_map, sk->rec_map, sk->rec_nbufs * sizeof *k->rec_map);
      k->rec_nbufs = sk->rec_nbufs;
    }
    /* a register-tiled kernel in fast mode compiles at the strong tier: the
       fast tier's register allocation copies every FMA accumulator per
       iteration (matmul 1024: 44 -> 21 ms a call, 11 ms more compile;
       docs/loops.md); strict tiles gain nothing there */
    uopc_compile_opts ko = opts ? *opts : (uopc_compile_opts){0};
    if (sk->tiled && (ko.flags & UOPC_COMPILE_FAST_MATH)) ko.tier = UOPC_TIER_STRONG;
    if (!(k->k = uopc_compile(c, sk->root, &ko, &e)) || (sk->rec && !(k->rec = uopc_compile(c, sk->rec, &ko, &e)))) {
      if (!uopc_ctx_error(c)) uopc_fail(c, e.code, "%s", e.msg);
      uopc_plan_free(p);
      return NULL;
    }
    p->nkernels++;
  }
  return p;
oom:
  uopc_plan_free(p);
  return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory");
}

uopc_plan *uopc_plan_compile(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, uopc_error *e) {
  if (!c) {
    set_err(e, UOPC_ERR_ARG, "plan_compile: NULL context");
    return NULL;
  }
  if (!tier_ok(opts, e)) return NULL;
  uopi_errsave saved; /* this call's own error in *e, never an earlier one; c's left as it was */
  uopi_err_begin(c, &saved);
  uopi_plan_key key = {0};
  uopc_plan *p = NULL;
  uopc_status st = UOPC_OK;
  int keyed = uopi_check_node(c, root, "plan") && uopi_plan_key_make(c, root, opts, &key);
  if (keyed && (p = uopi_plan_cache_get(&key))) {
    uopi_plan_key_free(&key);
    const char *d = getenv("UOPC_DEBUG");
    if (d && strstr(d, "schedule")) fprintf(stderr, "uopc schedule: from the plan cache, %u kernel%s\n", p->nkernels, p->nkernels == 1 ? "" : "s");
    uopi_err_end(c, &saved, UOPC_OK, e);
    return p;
  }
  uopc_ctx_clear_error(c); /* a failed key only means no caching */
  uopi_schedule s;
  st = uopi_schedule_build(c, root, opts ? opts->flags : 0, &s);
  if (!st && !(p = build(c, &s, opts))) st = uopc_ctx_error(c) ? uopc_ctx_error(c)->code : UOPC_ERR_NOMEM;
  uopi_schedule_free(&s);
  if (p && keyed) p = uopi_plan_cache_put(&key, p);
  uopi_plan_key_free(&key);
  uopi_err_end(c, &saved, st, e);
  return p;
}

/* ---- calling ---- */

static int same_shape(const pbuf *b, const uopc_tensor *t) {
  if (t->ndim != b->ndim || (t->ndim && !t->shape)) return 0;
  for (uint32_t d = 0; d < b->ndim; d++)
    if (t->shape[d] != b->shape[d]) return 0;
  return 1;
}

static void shape_text(const int64_t *shape, uint32_t nd, char *buf, size_t n) {
  int32_t s32[UOPC_LIMIT_DIMS];
  for (uint32_t d = 0; d < nd && d < UOPC_LIMIT_DIMS; d++) s32[d] = shape[d] > INT32_MAX ? INT32_MAX : (int32_t)shape[d];
  uopc_shape_str(s32, nd, buf, n);
}

static uopc_status check_arg(const pbuf *b, const uopc_tensor *t, const char *what, uopc_error *e) {
  char want[160], got[160];
  if (!t || (!t->data && b->numel)) {
    set_err(e, UOPC_ERR_ARG, "%s: no array given", what);
    return UOPC_ERR_ARG;
  }
  if (t->dtype != b->dtype || !same_shape(b, t)) {
    shape_text(b->shape, b->ndim, want, sizeof want);
    if (t->ndim <= UOPC_LIMIT_DIMS && (!t->ndim || t->shape)) shape_text(t->shape, t->ndim, got, sizeof got);
    else snprintf(got, sizeof got, "(a bad shape)");
    set_err(e, UOPC_ERR_ARG, "%s must be %s%s, got %s%s", what, uopc_dtype_name(b->dtype), want,
            (unsigned)t->dtype < UOPC_DT_COUNT ? uopc_dtype_name(t->dtype) : "?", got);
    return UOPC_ERR_ARG;
  }
  return UOPC_OK;
}

/* bufs[0..n) for a kernel whose slot j is plan buffer map[j] */
static void bind(const uopc_plan *p, const uint32_t *map, uint32_t n, const uopc_tensor *args, const uopc_tensor *out,
                 char *block, void **bufs) {
  for (uint32_t j = 0; j < n; j++) {
    const pbuf *b = &p->bufs[map[j]];
    switch (b->kind) {
    case UOPI_PB_INPUT: bufs[j] = args[b->slot].data; break;
    case UOPI_PB_CONST: bufs[j] = b->data; break;
    case UOPI_PB_OUTPUT: bufs[j] = out->data; break;
    default: bufs[j] = block + b->offset;
    }
    if (!bufs[j]) bufs[j] = block ? block : (void *)out; /* a 0-element array: never read */
  }
}

/* Runs kernel pk's recording variant again for the failing rank: its status
   words zeroed, status[0] the rank (the records look for it: lower.c);
   everything it reads is as it was when it ran, and it writes the same
   values again.  *recorded: whether an element recorded its operands. */
static uopc_status rerun(const uopc_plan *p, const pkernel *pk, const uopc_tensor *args, const uopc_tensor *out,
                         char *block, int32_t rank, int *recorded, uopc_error *e) {
  *recorded = 0;
  if (!pk->rec || pk->status == UINT32_MAX) return UOPC_OK;
  void *local[16], **bufs = pk->rec_nbufs <= 16 ? local : malloc(pk->rec_nbufs * sizeof *bufs);
  if (!bufs) return set_err(e, UOPC_ERR_NOMEM, "out of memory"), UOPC_ERR_NOMEM;
  int32_t *sw = (int32_t *)(block + p->bufs[pk->status].offset);
  memset(sw, 0, (size_t)p->bufs[pk->status].numel * 4);
  sw[0] = rank;
  if (pk->statusf != UINT32_MAX) memset(block + p->bufs[pk->statusf].offset, 0, (size_t)p->bufs[pk->statusf].numel * 4);
  bind(p, pk->rec_map, pk->rec_nbufs, args, out, block, bufs);
  uopc_status rs = uopc_kernel_call(pk->rec, bufs, pk->rec_nbufs, e);
  if (bufs != local) free(bufs);
  *recorded = sw[3] != 0;
  return rs;
}

/* The error of a failing check: its code from the result kernel's status
   (kernel fk), its operands from the status of the kernel that computes the
   op, which runs again here in its recording variant: they are those of the
   last element, in loop order, whose poison at its store has this code.
   When no element there has it (a node computed by two kernels has one
   code, its first kernel's), the result's kernel runs again instead. */
static uopc_status poison_error(const uopc_plan *p, const uopc_tensor *args, const uopc_tensor *out, char *block,
                                uint32_t fk, int32_t rank, uopc_error *e) {
  uint32_t code = (uint32_t)(1000000 - (int64_t)rank);
  if (code < 1 || code > p->nchecks) {
    set_err(e, UOPC_ERR_EVAL, "undefined operation (unknown check %u)", code);
    return e->code;
  }
  const pcheck *k = &p->checks[code - 1];
  const pkernel *rk = k->kernel < p->nkernels ? &p->kernels[k->kernel] : NULL;
  int recorded = 0;
  uopc_status rs = rk ? rerun(p, rk, args, out, block, rank, &recorded, e) : UOPC_OK;
  if (rs == UOPC_OK && !recorded && k->kernel != fk && p->kernels[fk].rec) {
    rk = &p->kernels[fk];
    rs = rerun(p, rk, args, out, block, rank, &recorded, e);
  }
  if (rs != UOPC_OK) return rs;
  static const int32_t none[4];
  const int32_t *st = rk && rk->status != UINT32_MAX ? (const int32_t *)(block + p->bufs[rk->status].offset) : none;
  const float *stf = rk && rk->statusf != UINT32_MAX ? (const float *)(block + p->bufs[rk->statusf].offset) : NULL;
  const char *op = uopc_op_name(k->op), *sym = k->op == UOPC_OP_FLOORDIV ? "//" : "%";
  char num[40];
  switch (k->kind) {
  case UOPI_CHECK_DIV0: set_err(e, UOPC_ERR_EVAL, "division by zero in %s (%d %s 0)", op, st[1], sym); break;
  case UOPI_CHECK_OVERFLOW: set_err(e, UOPC_ERR_EVAL, "overflow in %s (-2147483648 %s -1 is undefined)", op, sym); break;
  case UOPI_CHECK_CAST:
    uopc_fmt_double(stf ? (double)stf[0] : 0.0, num);
    set_err(e, UOPC_ERR_EVAL, "CAST of %s to i32 is undefined (%s)", num,
            stf && stf[0] - stf[0] == 0 ? "outside the i32 range" : "not finite");
    break;
  case UOPI_CHECK_INDEX:
    set_err(e, UOPC_ERR_EVAL, "index %d out of bounds for STACK of %lld", st[1], (long long)k->size);
    break;
  }
  if (k->file) e->file = k->file, e->line = k->line, e->col = k->col;
  return e->code;
}

uopc_status uopc_plan_call(const uopc_plan *p, const uopc_tensor *args, uint32_t nargs, const uopc_tensor *out,
                           uopc_error *e) {
  uopc_error tmp;
  if (!e) e = &tmp;
  memset(e, 0, sizeof *e);
  if (!p) return set_err(e, UOPC_ERR_ARG, "plan_call: NULL plan"), UOPC_ERR_ARG;
  if (nargs < p->nargs) return set_err(e, UOPC_ERR_ARG, "the plan takes %u arguments (PARAM slots 0..%u), got %u", p->nargs, p->nargs - 1, nargs), UOPC_ERR_ARG;
  if (p->nargs && !args) return set_err(e, UOPC_ERR_ARG, "plan_call: NULL arguments"), UOPC_ERR_ARG;
  char what[64];
  const pbuf *ob = &p->bufs[p->out];
  for (uint32_t i = 0; i < p->nbufs; i++) {
    const pbuf *b = &p->bufs[i];
    if (b->kind != UOPI_PB_INPUT) continue;
    snprintf(what, sizeof what, "argument %lld (PARAM slot %lld)", (long long)b->slot, (long long)b->slot);
    if (check_arg(b, &args[b->slot], what, e)) return e->code;
  }
  if (check_arg(ob, out, "the result", e)) return e->code;
  /* the result must not overlap an argument */
  uintptr_t o0 = (uintptr_t)out->data, o1 = o0 + (uintptr_t)ob->numel * uopc_dtype_size(ob->dtype);
  for (uint32_t i = 0; i < p->nbufs; i++) {
    const pbuf *b = &p->bufs[i];
    if (b->kind != UOPI_PB_INPUT) continue;
    uintptr_t a0 = (uintptr_t)args[b->slot].data, a1 = a0 + (uintptr_t)b->numel * uopc_dtype_size(b->dtype);
    if (a0 < o1 && o0 < a1) {
      set_err(e, UOPC_ERR_ARG, "the result overlaps argument %lld", (long long)b->slot);
      return UOPC_ERR_ARG;
    }
  }
  char *block = NULL;
  _Atomic(char *) *spare = (_Atomic(char *) *)&((uopc_plan *)p)->spare; /* the one mutable field */
  if (p->block && !(block = atomic_exchange(spare, NULL)) && !(block = aligned_alloc(ALIGN, p->block)))
    return set_err(e, UOPC_ERR_NOMEM, "out of memory (%zu bytes of temporaries)", p->block), UOPC_ERR_NOMEM;
  for (uint32_t i = 0; i < p->nbufs; i++)
    if (p->bufs[i].kind == UOPI_PB_STATUS || p->bufs[i].kind == UOPI_PB_STATUSF || p->bufs[i].kind == UOPI_PB_POISON)
      memset(block + p->bufs[i].offset, 0, (size_t)p->bufs[i].numel * 4);
  uopc_status st = UOPC_OK;
  void *bufs_local[16], **bufs = bufs_local;
  uint32_t cap = 16;
  for (uint32_t k = 0; k < p->nkernels && st == UOPC_OK; k++) {
    const pkernel *pk = &p->kernels[k];
    if (pk->nbufs > cap) {
      void **nb = malloc(pk->nbufs * sizeof *nb);
      if (!nb) {
        st = UOPC_ERR_NOMEM;
        set_err(e, st, "out of memory");
        break;
      }
      if (bufs != bufs_local) free(bufs);
      bufs = nb, cap = pk->nbufs;
    }
    bind(p, pk->map, pk->nbufs, args, out, block, bufs);
    if ((st = uopc_kernel_call(pk->k, bufs, pk->nbufs, e)) != UOPC_OK) break;
    /* only the result's kernel fails the call: poison in a temporary is an
       error only where it reaches the result */
    if (pk->status != UINT32_MAX && p->kernels[k].out == p->out) {
      const int32_t *sw = (const int32_t *)(block + p->bufs[pk->status].offset);
      if (sw[0]) st = poison_error(p, args, out, block, k, sw[0], e);
    }
  }
  if (bufs != bufs_local) free(bufs);
  char *none = NULL;
  if (block && !atomic_compare_exchange_strong(spare, &none, block)) free(block); /* another call's is kept */
  return st;
}

uint32_t uopc_plan_nargs(const uopc_plan *p) { return p ? p->nargs : 0; }
uint32_t uopc_plan_nkernels(const uopc_plan *p) { return p ? p->nkernels : 0; }

int uopc_plan_arg(const uopc_plan *p, uint32_t slot, uopc_dtype *dtype, uint32_t *ndim, const int64_t **shape) {
  if (!p) return 0;
  for (uint32_t i = 0; i < p->nbufs; i++) {
    const pbuf *b = &p->bufs[i];
    if (b->kind != UOPI_PB_INPUT || b->slot != slot) continue;
    if (dtype) *dtype = b->dtype;
    if (ndim) *ndim = b->ndim;
    if (shape) *shape = b->shape;
    return 1;
  }
  return 0;
}

int uopc_plan_result(const uopc_plan *p, uopc_dtype *dtype, uint32_t *ndim, const int64_t **shape) {
  if (!p) return 0;
  const pbuf *b = &p->bufs[p->out];
  if (dtype) *dtype = b->dtype;
  if (ndim) *ndim = b->ndim;
  if (shape) *shape = b->shape;
  return 1;
}

char *uopc_plan_emit(uopc_ctx *c, uopc_node *root, const uopc_compile_opts *opts, int emit_asm, uopc_error *e) {
  if (!c) {
    set_err(e, UOPC_ERR_ARG, "plan_emit: NULL context");
    return NULL;
  }
  if (!tier_ok(opts, e)) return NULL;
  uopi_errsave saved; /* as uopc_plan_compile */
  uopi_err_begin(c, &saved);
  uopi_schedule s;
  char *all = NULL;
  size_t n = 0;
  uopc_status st = uopi_schedule_build(c, root, opts ? opts->flags : 0, &s);
  for (uint32_t k = 0; st == UOPC_OK && k < s.nkernels; k++) {
    uopc_error ke;
    char *t = emit_asm ? uopc_emit_asm(c, s.kernels[k].root, opts, &ke) : uopc_emit_llvm(c, s.kernels[k].root, opts, &ke);
    if (!t) {
      if (!uopc_ctx_error(c)) uopc_fail(c, ke.code, "%s", ke.msg);
      st = ke.code;
      break;
    }
    char head[160];
    int hn = snprintf(head, sizeof head, "; kernel %u of %u: computes buffer %u (%s)\n", k, s.nkernels, s.kernels[k].out,
                      uopc_op_name((uopc_op)s.bufs[s.kernels[k].out].node->op));
    size_t tn = strlen(t);
    char *na = realloc(all, n + (size_t)hn + tn + 2);
    if (!na) {
      free(t);
      uopc_fail(c, UOPC_ERR_NOMEM, "out of memory");
      st = UOPC_ERR_NOMEM;
      break;
    }
    all = na;
    memcpy(all + n, head, (size_t)hn);
    memcpy(all + n + hn, t, tn);
    n += (size_t)hn + tn;
    all[n++] = '\n';
    all[n] = 0;
    free(t);
  }
  uopi_schedule_free(&s);
  if (st != UOPC_OK) free(all), all = NULL;
  uopi_err_end(c, &saved, st, e);
  return all;
}
