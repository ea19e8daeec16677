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
 *   threads   the thread count is fixed at compile (threads_of); a kernel
 *             with work enough (split_min) and an outer output axis is
 *             compiled as chunks too (schedule/split.h), each with its own
 *             status buffers, run at once on the engine's pool
 *             (support/pool.h) and the caller; their status words are then
 *             combined as the one kernel would have left them
 *             (status[0] = the max), so the same error follows.  The
 *             recording variant stays whole and runs on the caller.
 *   guard     UOPC_COMPILE_GUARD_PAGES: the block laid out with each
 *             temporary at the end of pages of its own between
 *             inaccessible pages, each constant array copied into such
 *             pages (a check for tests; "guard pages" below)
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define HAVE_GUARD 1
#else
#define HAVE_GUARD 0
#endif

#include "compile.h"
#include "lower/kernel.h"
#include "plan_cache.h"
#include "schedule/schedule.h"
#include "schedule/split.h"
#include "support/pool.h"
#include "support/support.h"
#include "uopc/jit.h"
#include "uopc/plan.h"
#include "uopc/tensor.h"
#include "uopc/uir.h"

#define ALIGN 64
#define MAX_THREADS 64          /* the pool's limit with the caller (UOPI_POOL_MAX + 1) */
#define SPLIT_MIN (1ull << 18)  /* work (loop iterations) from which a kernel is split (docs/schedule.md) */

typedef struct pbuf {
  uopi_pb_kind kind;
  uopc_dtype dtype;
  uint32_t ndim;
  int64_t *shape;
  int64_t numel;
  int64_t slot;
  void *data;      /* CONST */
  void *map;       /* CONST under guard pages: the mapping data is in (else data is malloc's) */
  size_t map_size;
  size_t offset;   /* TEMP, STATUS: in the call's block */
} pbuf;

typedef struct pkernel {
  uopc_kernel *k;     /* the whole kernel; NULL when split (only the chunks run) */
  uint32_t nbufs;
  uint32_t *map;
  uint32_t out, status, statusf;
  uopc_kernel *rec;   /* the recording variant (run after a failure), or NULL */
  uint32_t rec_nbufs;
  uint32_t *rec_map;
  uint32_t nchunks;       /* 0: runs whole; else the chunks run at once */
  uopc_kernel **chunk;    /* nchunks kernels */
  uint32_t *chunk_map;    /* chunk t's slot j is plan buffer chunk_map[t * nbufs + j] */
  uint32_t *chunk_status; /* chunk t's status buffer (chunk 0's: status), when status is set */
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
  uint32_t threads; /* the thread count it was compiled for */
  int guard;        /* UOPC_COMPILE_GUARD_PAGES: the block is a mapping laid out by guard pages */
  size_t page;      /* the page size, when guard */
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

/* ---- guard pages (UOPC_COMPILE_GUARD_PAGES) ----
 * An array then ends where its pages end, with an inaccessible page after
 * it and one before, so that a kernel reading or writing past either end
 * stops with SIGSEGV (the spec's "a kernel never reads or writes outside
 * its buffers", checked; the CLI's --guard-pages, docs/hardening.md).  The
 * block is one mapping: per temporary an inaccessible page and the
 * temporary's whole pages, with the temporary at their end (its offset,
 * set by build), and one inaccessible page after the last. */

static size_t whole_pages(size_t bytes, size_t page) { return (bytes + page - 1) / page * page; }

#if HAVE_GUARD
static size_t page_size(void) {
  long ps = sysconf(_SC_PAGESIZE);
  return ps > 0 ? (size_t)ps : 4096;
}

/* A copy of bytes at data into pages of its own (*map, *size: the mapping
   to unmap); NULL when out of memory. */
static void *guard_copy(const void *data, size_t bytes, size_t page, void **map, size_t *size) {
  size_t d = whole_pages(bytes, page);
  *size = d + 2 * page;
  char *m = mmap(NULL, *size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  if (d && mprotect(m + page, d, PROT_READ | PROT_WRITE) != 0) {
    munmap(m, *size);
    return NULL;
  }
  *map = m;
  char *at = m + page + d - bytes;
  memcpy(at, data, bytes);
  return at;
}
#endif

static size_t bytes_of(const pbuf *b) { return (size_t)b->numel * uopc_dtype_size(b->dtype); }

static int in_block(uopi_pb_kind k) {
  return k == UOPI_PB_TEMP || k == UOPI_PB_STATUS || k == UOPI_PB_STATUSF || k == UOPI_PB_POISON;
}

/* A call's block of temporaries (NULL: out of memory). */
static char *block_new(const uopc_plan *p) {
#if HAVE_GUARD
  if (p->guard) {
    char *m = mmap(NULL, p->block, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    for (uint32_t i = 0; i < p->nbufs; i++) {
      const pbuf *b = &p->bufs[i];
      size_t bytes = bytes_of(b), d = whole_pages(bytes, p->page);
      if (in_block(b->kind) && d && mprotect(m + b->offset + bytes - d, d, PROT_READ | PROT_WRITE) != 0) {
        munmap(m, p->block);
        return NULL;
      }
    }
    return m;
  }
#endif
  return aligned_alloc(ALIGN, p->block);
}

static void block_free(const uopc_plan *p, char *block) {
#if HAVE_GUARD
  if (p->guard) {
    if (block) munmap(block, p->block);
    return;
  }
#endif
  free(block);
}

void uopc_plan_free(uopc_plan *p) {
  if (!p || !uopi_plan_unref(p)) return;
  for (uint32_t i = 0; i < p->nbufs; i++) {
    free(p->bufs[i].shape);
#if HAVE_GUARD
    if (p->bufs[i].map) {
      munmap(p->bufs[i].map, p->bufs[i].map_size);
      continue;
    }
#endif
    free(p->bufs[i].data);
  }
  for (uint32_t i = 0; i < p->nkernels; i++) {
    uopc_kernel_free(p->kernels[i].k);
    uopc_kernel_free(p->kernels[i].rec);
    free(p->kernels[i].map);
    free(p->kernels[i].rec_map);
    for (uint32_t t = 0; p->kernels[i].chunk && t < p->kernels[i].nchunks; t++) uopc_kernel_free(p->kernels[i].chunk[t]);
    free(p->kernels[i].chunk);
    free(p->kernels[i].chunk_map);
    free(p->kernels[i].chunk_status);
  }
  for (uint32_t i = 0; i < p->nchecks; i++) free(p->checks[i].file);
  free(p->bufs);
  free(p->kernels);
  free(p->checks);
  block_free(p, atomic_load(&p->spare));
  free(p);
}

static char *str_dup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* ---- threads ---- */

/* The threads a plan compiled with o uses: o->threads, else UOPC_THREADS
   (junk ignored: uopc_env_check warns about it), else the CPUs this
   process may run on; at most MAX_THREADS. */
static uint32_t threads_of(const uopc_compile_opts *o) {
  uint64_t t = o && o->threads ? o->threads : 0;
  if (!t && !uopi_env_count("UOPC_THREADS", &t)) t = uopi_cpu_count();
  return t > MAX_THREADS ? MAX_THREADS : (uint32_t)t;
}

/* The work from which kernels are split: UOPC_SPLIT_MIN_WORK (tests and
   tuning), else SPLIT_MIN. */
static uint64_t split_min(void) {
  uint64_t w;
  return uopi_env_count("UOPC_SPLIT_MIN_WORK", &w) ? w : SPLIT_MIN;
}

/* How one scheduled kernel runs on T threads: whole (n 0), or n chunks. */
typedef struct ksplit {
  uint32_t n;
  uopc_node **roots;  /* n chunk graphs (context nodes) */
  uint32_t *map;      /* n * nbufs: each chunk's slots (its own status buffers) */
  uint32_t *status;   /* n: each chunk's status buffer, when the kernel has one */
  int64_t axis;
} ksplit;

static void splits_free(ksplit *sp, uint32_t n) {
  for (uint32_t i = 0; sp && i < n; i++) free(sp[i].roots), free(sp[i].map), free(sp[i].status);
  free(sp);
}

/* The splits of every kernel of s for T threads (s gains the chunks' status
   buffers); NULL with the context's error when out of memory.  Only the
   plain variant is split: the recording one runs whole. */
static ksplit *split_all(uopc_ctx *c, uopi_schedule *s, uint32_t T, uint64_t min) {
  ksplit *sp = calloc(s->nkernels ? s->nkernels : 1, sizeof *sp);
  if (!sp) return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory");
  const char *d = getenv("UOPC_DEBUG");
  int debug = d && strstr(d, "schedule");
  for (uint32_t k = 0; T > 1 && k < s->nkernels; k++) {
    const uopi_skernel *sk = &s->kernels[k];
    uint32_t shared[4], ns = 0;
    for (uint32_t j = 0; j < sk->nbufs && ns < 4; j++)
      if (sk->map[j] == sk->status || sk->map[j] == sk->statusf) shared[ns++] = j;
    ksplit *x = &sp[k];
    if (!(x->roots = malloc(T * sizeof *x->roots))) goto oom;
    uint32_t n = uopi_split_kernel(c, sk->root, T, min, shared, ns, x->roots, &x->axis);
    if (n == UINT32_MAX) goto fail;
    if (!n) {
      free(x->roots), x->roots = NULL;
      continue;
    }
    if (!(x->map = malloc((size_t)n * (sk->nbufs ? sk->nbufs : 1) * sizeof *x->map)) || !(x->status = malloc(n * sizeof *x->status)))
      goto oom;
    for (uint32_t t = 0; t < n; t++) {
      uint32_t st = sk->status, sf = sk->statusf;
      int32_t four = 4, one = 1;
      if (t && st != UINT32_MAX && (st = uopi_schedule_add_buf(s, UOPI_PB_STATUS, UOPC_DT_I32, &four, 1, NULL)) == UINT32_MAX) goto fail;
      if (t && sf != UINT32_MAX && (sf = uopi_schedule_add_buf(s, UOPI_PB_STATUSF, UOPC_DT_F32, &one, 1, NULL)) == UINT32_MAX) goto fail;
      sk = &s->kernels[k];
      for (uint32_t j = 0; j < sk->nbufs; j++) {
        uint32_t b = sk->map[j];
        x->map[t * sk->nbufs + j] = b == sk->status ? st : b == sk->statusf ? sf : b;
      }
      x->status[t] = st;
    }
    x->n = n;
    if (debug)
      fprintf(stderr, "uopc schedule: kernel %u: x%u threads (its outer axis of %lld split in %u chunks)\n", k, n,
              (long long)x->axis, n);
  }
  return sp;
oom:
  uopc_fail(c, UOPC_ERR_NOMEM, "out of memory");
fail:
  splits_free(sp, s->nkernels);
  return NULL;
}

/* The plan of schedule s (kernels compiled, split as sp says, for T
   threads); NULL with the context's error. */
/* The JIT tier kernel sk compiles at: opts' tier, but a register-tiled
   kernel (docs/loops.md) of at least TIER1_MIN_WORK multiply-adds, where
   the slower pipeline pays back within the call, at TIER2 in fast mode,
   where the fast tier's register allocation copies every FMA accumulator
   per iteration (matmul 1024: 44 -> 21 ms a call on Zen 2, 11 ms more
   compile), and at least TIER1 in strict mode, whose loop strength
   reduction takes the tile's inner loop from ~37 to ~25 instructions
   (matmul 1024 on Zen 2: 47 -> 37 ms a call, 3.5 ms more compile).  Below
   it the slower pipeline does not pay back: attention's Q K^T (2^24) costs
   4 ms more compile at TIER1 for no faster call, and 12.5 ms more at TIER2
   in fast mode for 0.03-0.05 ms a call (Zen 5).  A plan marked
   UOPC_COMPILE_HOT (called many times) takes TIER2 for every tiled kernel
   in fast mode. */
#define TIER1_MIN_WORK 536870912.0 /* 2^29 */
static uopi_jit_tier kernel_tier(const uopi_skernel *sk, const uopc_compile_opts *opts) {
  uopi_jit_tier t = UOPI_JIT_TIER0;
  (void)uopi_tier_of(opts, &t, NULL); /* checked by the caller */
  if (!sk->tiled) return t;
  const int hot = opts && (opts->flags & UOPC_COMPILE_HOT), big = sk->tiled >= TIER1_MIN_WORK;
  if (opts && (opts->flags & UOPC_COMPILE_FAST_MATH)) return big || hot ? UOPI_JIT_TIER2 : t;
  return t == UOPI_JIT_TIER0 && big ? UOPI_JIT_TIER1 : t;
}

/* The compile flags of a kernel of the plan: the plan's, with streaming
   stores (UOPC_COMPILE_STREAM: codegen/stream.c decides whether they pay)
   asked for the kernel that writes the result, unless the plan says
   UOPC_COMPILE_NO_STREAM, and never for another: a temporary is read again
   by a later kernel, which finds part of it in the cache after ordinary
   stores (softmax's exp2 kernel streamed made fast softmax 1.2x slower). */
static unsigned kernel_flags(int result, const uopc_compile_opts *opts) {
  /* the guard pages are the plan's, not its kernels' (the same kernels, the same cache entries) */
  unsigned f = opts ? opts->flags & ~(UOPC_COMPILE_STREAM | UOPC_COMPILE_NO_STREAM | UOPC_COMPILE_GUARD_PAGES) : 0;
  return result && !(opts && (opts->flags & UOPC_COMPILE_NO_STREAM)) ? f | UOPC_COMPILE_STREAM : f;
}

static uopc_plan *build(uopc_ctx *c, uopi_schedule *s, const ksplit *sp, uint32_t T, const uopc_compile_opts *opts) {
  uopc_plan *p = calloc(1, sizeof *p);
  if (!p) return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory");
  atomic_init(&p->refs, 1);
  atomic_init(&p->spare, NULL);
  p->threads = T;
#if HAVE_GUARD
  if (opts && (opts->flags & UOPC_COMPILE_GUARD_PAGES)) p->guard = 1, p->page = page_size();
#endif
  uopc_error e = {0};
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
#if HAVE_GUARD
    if (p->guard && b->data) {
      void *at = guard_copy(b->data, bytes_of(b), p->page, &b->map, &b->map_size);
      if (!at) goto oom;
      free(b->data);
      b->data = at;
    }
#endif
    if (in_block(sb->kind)) {
      size_t bytes = bytes_of(b);
      if (p->guard) { /* an inaccessible page, then whole pages with the array at their end */
        size_t d = whole_pages(bytes, p->page);
        b->offset = p->block + p->page + d - bytes;
        p->block += p->page + d;
      } else {
        b->offset = p->block;
        p->block += (bytes + ALIGN - 1) / ALIGN * ALIGN;
      }
    }
    if (sb->kind == UOPI_PB_INPUT && (uint64_t)sb->slot + 1 > p->nargs) p->nargs = (uint32_t)sb->slot + 1;
  }
  if (p->guard && p->block) p->block += p->page; /* after the last temporary */
  for (uint32_t i = 0; i < s->nchecks; i++) {
    const uopi_scheck *sc = &s->checks[i];
    pcheck *k = &p->checks[i];
    k->kind = sc->kind, k->op = sc->op, k->size = sc->size, k->kernel = sc->kernel;
    const char *file;
    if (uopc_node_pos(c, sc->at, &file, &k->line, &k->col) && !(k->file = str_dup(file))) goto oom;
    p->nchecks++;
  }
  /* every kernel's compiles (its root, its recording variant, its chunks),
     made at once: uopi_kernels_compile runs their JIT halves on T threads */
  uint32_t nj = 0;
  for (uint32_t i = 0; i < s->nkernels; i++) nj += (sp[i].n ? sp[i].n : 1) + (s->kernels[i].rec != NULL);
  size_t nja = nj ? nj : 1;
  uopc_node **roots = malloc(nja * sizeof *roots);
  uopi_jit_tier *tiers = malloc(nja * sizeof *tiers);
  unsigned *kf = malloc(nja * sizeof *kf);
  uopc_kernel **got = calloc(nja, sizeof *got), ***dst = malloc(nja * sizeof *dst);
  if (!roots || !tiers || !kf || !got || !dst) goto oom_jobs;
  nj = 0;
  for (uint32_t i = 0; i < s->nkernels; i++, p->nkernels++) {
    const uopi_skernel *sk = &s->kernels[i];
    pkernel *k = &p->kernels[i];
    k->status = sk->status, k->statusf = sk->statusf, k->nbufs = sk->nbufs, k->out = sk->out;
    if (!(k->map = malloc((sk->nbufs ? sk->nbufs : 1) * sizeof *k->map))) goto oom_jobs;
    memcpy(k->map, sk->map, sk->nbufs * sizeof *k->map);
    if (sk->rec) {
      if (!(k->rec_map = malloc((sk->rec_nbufs ? sk->rec_nbufs : 1) * sizeof *k->rec_map))) goto oom_jobs;
      memcpy(k->rec_map, sk->rec_map, sk->rec_nbufs * sizeof *k->rec_map);
      k->rec_nbufs = sk->rec_nbufs;
    }
    uopi_jit_tier kt = kernel_tier(sk, opts);
    unsigned kfl = kernel_flags(sk->out == s->out, opts);
    const ksplit *x = &sp[i];
    if (!x->n) tiers[nj] = kt, kf[nj] = kfl, roots[nj] = sk->root, dst[nj++] = &k->k; /* split: only its chunks run */
    if (sk->rec) tiers[nj] = kt, kf[nj] = kfl, roots[nj] = sk->rec, dst[nj++] = &k->rec;
    if (!x->n) continue;
    size_t nm = (size_t)x->n * sk->nbufs;
    if (!(k->chunk = calloc(x->n, sizeof *k->chunk)) || !(k->chunk_map = malloc((nm ? nm : 1) * sizeof *k->chunk_map)) ||
        !(k->chunk_status = malloc(x->n * sizeof *k->chunk_status)))
      goto oom_jobs;
    k->nchunks = x->n;
    memcpy(k->chunk_map, x->map, nm * sizeof *k->chunk_map);
    memcpy(k->chunk_status, x->status, x->n * sizeof *k->chunk_status);
    for (uint32_t t = 0; t < x->n; t++) tiers[nj] = kt, kf[nj] = kfl, roots[nj] = x->roots[t], dst[nj++] = &k->chunk[t];
  }
  uopc_status cst = uopi_kernels_compile(c, roots, tiers, kf, nj, opts, T, got, &e);
  for (uint32_t j = 0; !cst && j < nj; j++) *dst[j] = got[j]; /* the plan owns them */
  free(roots), free(tiers), free(kf), free(got), free(dst);
  if (cst) goto failed;
  return p;
failed:
  if (!uopc_ctx_error(c)) uopc_fail(c, e.code, "%s", e.msg);
  uopc_plan_free(p);
  return NULL;
oom_jobs:
  free(roots), free(tiers), free(kf), free(got), free(dst);
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
  uopc_compile_opts ko = opts ? *opts : (uopc_compile_opts){.tier = UOPC_TIER_FAST};
  ko.threads = threads_of(opts);
  uint64_t min = split_min();
  int keyed = uopi_check_node(c, root, "plan") && uopi_plan_key_make(c, root, &ko, min, &key);
  if (keyed && (p = uopi_plan_cache_get(&key))) {
    uopi_plan_key_free(&key);
    const char *d = getenv("UOPC_DEBUG");
    if (d && strstr(d, "schedule")) fprintf(stderr, "uopc schedule: from the plan cache, %u kernel%s\n", p->nkernels, p->nkernels == 1 ? "" : "s");
    uopi_err_end(c, &saved, UOPC_OK, e);
    return p;
  }
  uopc_ctx_clear_error(c); /* a failed key only means no caching */
  uopi_schedule s;
  st = uopi_schedule_build(c, root, opts ? opts->flags : 0, uopi_jit_vector_bits(), &s);
  ksplit *sp = NULL;
  if (!st && !(sp = split_all(c, &s, ko.threads, min))) st = uopc_ctx_error(c) ? uopc_ctx_error(c)->code : UOPC_ERR_NOMEM;
  if (!st && !(p = build(c, &s, sp, ko.threads, opts))) st = uopc_ctx_error(c) ? uopc_ctx_error(c)->code : UOPC_ERR_NOMEM;
  splits_free(sp, s.nkernels);
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

/* The chunks of a split kernel, run at once (uopi_pool_run). */
typedef struct chunks_job {
  const uopc_plan *p;
  const pkernel *pk;
  const uopc_tensor *args, *out;
  char *block;
  uopc_status *st;   /* per chunk */
  uopc_error *err;   /* per chunk */
} chunks_job;

static void run_chunk(void *arg, uint32_t t) {
  const chunks_job *j = arg;
  const pkernel *pk = j->pk;
  void *bufs[UOPI_KERNEL_MAX_BUFS];
  bind(j->p, pk->chunk_map + (size_t)t * pk->nbufs, pk->nbufs, j->args, j->out, j->block, bufs);
  j->st[t] = uopc_kernel_call(pk->chunk[t], bufs, pk->nbufs, &j->err[t]);
}

/* Kernel pk as its chunks: the first failing chunk's error (in loop order),
   else the chunks' status[0] folded into pk's status as one kernel leaves it
   (each chunk's is the max of its elements' ranks: the max of those). */
static uopc_status call_chunks(const uopc_plan *p, const pkernel *pk, const uopc_tensor *args, const uopc_tensor *out,
                               char *block, uopc_error *e) {
  uopc_status st_local[8];
  uopc_error err_local[8];
  uint32_t n = pk->nchunks;
  uopc_status *st = n <= 8 ? st_local : malloc(n * sizeof *st);
  uopc_error *err = n <= 8 ? err_local : malloc(n * sizeof *err);
  uopc_status r = UOPC_OK;
  if (!st || !err) {
    r = UOPC_ERR_NOMEM;
    set_err(e, r, "out of memory");
    goto done;
  }
  UOPI_ASSERT(pk->nbufs <= UOPI_KERNEL_MAX_BUFS);
  chunks_job j = {p, pk, args, out, block, st, err};
  uopi_pool_run(run_chunk, &j, n);
  for (uint32_t t = 0; t < n; t++)
    if (st[t] != UOPC_OK) {
      *e = err[t];
      r = st[t];
      goto done;
    }
  if (pk->status != UINT32_MAX) {
    int32_t *sw = (int32_t *)(block + p->bufs[pk->status].offset);
    for (uint32_t t = 1; t < n; t++) {
      const int32_t *cw = (const int32_t *)(block + p->bufs[pk->chunk_status[t]].offset);
      if (cw[0] > sw[0]) sw[0] = cw[0];
    }
  }
done:
  if (st != st_local) free(st);
  if (err != err_local) free(err);
  return r;
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
  if (p->block && !(block = atomic_exchange(spare, NULL)) && !(block = block_new(p)))
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
    if (pk->nchunks) {
      if ((st = call_chunks(p, pk, args, out, block, e)) != UOPC_OK) break;
    } else {
      bind(p, pk->map, pk->nbufs, args, out, block, bufs);
      if ((st = uopc_kernel_call(pk->k, bufs, pk->nbufs, e)) != UOPC_OK) break;
    }
    /* only the result's kernel fails the call: poison in a temporary is an
       error only where it reaches the result */
    if (pk->status != UINT32_MAX && p->kernels[k].out == p->out) {
      const int32_t *sw = (const int32_t *)(block + p->bufs[pk->status].offset);
      if (sw[0]) st = poison_error(p, args, out, block, k, sw[0], e);
    }
  }
  if (bufs != bufs_local) free(bufs);
  char *none = NULL;
  if (p->guard) block_free(p, block);
  else if (block && !atomic_compare_exchange_strong(spare, &none, block)) free(block); /* another call's is kept */
  return st;
}

uint32_t uopc_plan_nargs(const uopc_plan *p) { return p ? p->nargs : 0; }
uint32_t uopc_plan_nkernels(const uopc_plan *p) { return p ? p->nkernels : 0; }

uint32_t uopc_plan_threads(const uopc_plan *p) { return p ? p->threads : 0; }

uint32_t uopc_plan_nsplit(const uopc_plan *p) {
  uint32_t n = 0;
  for (uint32_t i = 0; p && i < p->nkernels; i++) n += p->kernels[i].nchunks > 0;
  return n;
}

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
  uopc_status st = uopi_schedule_build(c, root, opts ? opts->flags : 0, uopi_jit_vector_bits(), &s);
  for (uint32_t k = 0; st == UOPC_OK && k < s.nkernels; k++) {
    uopc_error ke;
    uopc_compile_opts ko = opts ? *opts : (uopc_compile_opts){UOPC_TIER_FAST, 0, 0};
    ko.flags = kernel_flags(s.kernels[k].out == s.out, opts); /* as uopc_plan_compile */
    char *t = uopi_kernel_emit(c, s.kernels[k].root, &ko, kernel_tier(&s.kernels[k], opts), emit_asm, &ke);
    if (!t) {
      if (!uopc_ctx_error(c)) uopc_fail(c, ke.code, "%s", ke.msg);
      st = ke.code;
      break;
    }
    char head[160];
    int hn = snprintf(head, sizeof head, "; kernel %u of %u: computes buffer %u (%s), JIT tier %d\n", k, s.nkernels,
                      s.kernels[k].out, uopc_op_name((uopc_op)s.bufs[s.kernels[k].out].node->op),
                      (int)kernel_tier(&s.kernels[k], opts));
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
