/* lib/compile.c - the kernel compile pipeline, top down.
 *
 *   check ─▶ raw key ─▶ prepare ─▶ key ─▶ cache get ─▶ linearize ─▶ emit ─▶ JIT ─▶ cache put
 *            lookup     (simplify          (memory,     (ordered     (LLVM   (passes,  (memory,
 *            (as given)  indices)           then disk;   program)     IR)     codegen,  disk)
 *                                           a hit stops                       link)
 *                                           here)
 *
 * Every stage is one call into the layer that owns it (docs/design.md):
 * lib/lower prepares and linearizes, lib/codegen emits LLVM IR, lib/jit
 * optimizes, generates code and links, lib/kcache stores.  Verifiers run
 * between stages: LLVM's on every module the JIT compiles, and under
 * UOPC_DEBUG=check (read through the context) the program's after
 * linearize (a failure is a bug: it aborts with the reason) and LLVM's on
 * the modules printed as text.  Under
 * UOPC_DEBUG=linearize the program is printed to stderr.  Only this file
 * knows their order, and only this file drives the cache: on a miss it
 * becomes the filler of the pending entry and fills it (or abandons it on
 * failure, and the threads waiting for it start over).
 *
 * The raw-key lookup comes before any rewriting: preparing a kernel costs
 * about as much as the rest of a memory hit, so a graph compiled before (in
 * any context) is found by its serialization as given.
 *
 * A plan's kernels go through it as one batch (uopi_compile_kernels): the
 * front halves (check to emit: they read the context) one after another on
 * the calling thread, then the JIT halves (passes, codegen, link, cache put:
 * nearly all of the time) on the plan's threads at once, each from its own
 * LLVM module.  While a batch holds pending entries it never waits for one
 * (two batches could wait for each other, and a plan with two equal
 * kernels for itself): such a kernel is put off until its batch is done.
 *
 * Ordered shutdown lives here too: the thread pool, cached code, then the engine.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/emit.h"
#include "compile.h"
#include "support/pool.h"

/* ---- helpers of the stages ---------------------------------------------------- */

/* A kernel root: a SINK, STORE or END (the rest is checked by prepare). */
static uopc_status check(uopc_ctx *c, uopc_node *root) { return uopi_kernel_check_root(c, root); }

/* The verifier after linearize, under the debug switch (which also prints
   the program under UOPC_DEBUG=linearize): UOPC_OK, or UOPC_ERR_NOMEM; a
   broken program is a bug (abort with the reason). */
static uopc_status verify(uopc_ctx *c, const uopi_prog *p, const char *name) {
  const char *d = getenv("UOPC_DEBUG");
  if (d && strstr(d, "linearize")) {
    fprintf(stderr, "uopc linearize: kernel %s\n", name);
    uopi_prog_print(p, stderr);
  }
  if (!uopi_check(c)) return UOPC_OK;
  const char *why;
  uint32_t at;
  int r = uopi_prog_verify(p, &why, &at);
  if (r < 0) return UOPC_ERR_NOMEM;
  if (r > 0) {
    fprintf(stderr, "uopc: linearized program broken at instruction %u: %s\n", at, why);
    uopi_prog_print(p, stderr);
    uopi_die(__FILE__, __LINE__, "uopi_prog_verify");
  }
  return UOPC_OK;
}

/* LLVM's verifier on an emitted module, as the context's error (a failure
   is a bug of the emitter, reported, not fatal: the module is only text). */
static uopc_status verify_module(uopc_ctx *c, LLVMModuleRef m) {
  uopc_error je = {0};
  uopc_status st = uopi_jit_verify(m, &je);
  if (st) uopc_fail(c, je.code, "%s", je.msg);
  return st;
}

/* A monotonic clock in ms (the compile time UOPC_DEBUG=cache reports). */
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* How the cache answered (BUSY: not at all; another thread, or the caller
   itself, fills the entry: a batch asks again after its own fills). */
enum { FROM_MEMORY, FROM_DISK, MISSED, BUSY };

/* cache get: the entry of key, held: ready (FROM_MEMORY), or pending and
   ours to fill, with its code from disk (FROM_DISK) or not (MISSED: meta's
   name is then a fresh symbol for the compile); or nothing (BUSY, only when
   wait is 0). */
static uopc_status cache_get(uopc_ctx *c, const uopi_kernel_ir *k, uopi_kkey *key, int wait, uopi_kmeta *meta,
                             uopi_kentry **e, uopi_jit_code **code, int *from) {
  int found = uopi_kcache_acquire(key, wait, e); /* memory (may wait for another thread's fill) */
  if (found == UOPI_KCACHE_NOMEM) return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory"), UOPC_ERR_NOMEM;
  *from = found == UOPI_KCACHE_BUSY ? BUSY : FROM_MEMORY;
  if (found != UOPI_KCACHE_FILL) return UOPC_OK;
  uopi_kmeta_of(k, meta);
  *from = FROM_DISK;
  if (uopi_kdisk_load(key, meta, code, meta->name, sizeof meta->name)) return UOPC_OK;
  *from = MISSED;
  uopi_jit_unique_name(meta->name, sizeof meta->name, "uopc_k");
  return UOPC_OK;
}

/* cache put: the pending entry e becomes ready with code (waiters wake up);
   a compiled kernel (ms of compile, ninst linearized instructions at tier
   t: for UOPC_DEBUG=cache) is also written to disk. */
static void cache_put(const uopi_kkey *key, const uopi_kmeta *meta, uopi_kentry *e, uopi_jit_code *code,
                      int compiled, double ms, uint32_t ninst, uopi_jit_tier t) {
  uopi_kcache_fill(e, code, meta);
  if (!compiled) return;
  uopi_kstat_add(UOPI_KSTAT_MISS, 1);
  char hex[2 * UOPI_KCACHE_HASH + 1];
  uopi_kcache_hex(key->hash, hex);
  uopi_kcache_debug("miss %s: compiled in %.2f ms (%u instructions, tier %d)", hex, ms, ninst, (int)t);
  uopi_kdisk_store(key, meta, code);
}

/* The flags kernel k compiles with: flags, and UOPI_EMIT_STREAM where
   streaming stores are asked for and pay (codegen/stream.c).  UOPC_ERR_NOMEM
   recorded in c. */
static uopc_status with_stream(uopc_ctx *c, const uopi_kernel_ir *k, unsigned *flags) {
  int pays = uopi_stream_pays(c, k, *flags);
  if (pays < 0) return uopc_ctx_error(c)->code;
  if (pays) *flags |= UOPI_EMIT_STREAM;
  return UOPC_OK;
}

/* ---- the pipeline ---------------------------------------------------------------- */

/* One kernel on its way through the pipeline.  The front half (check to
   emit) reads the context and runs on the caller's thread; the JIT half
   (JIT, cache put) touches only the job, the cache and LLVM (the module has
   its own LLVMContext), so a plan's misses can run it on the pool. */
typedef struct kjob {
  uopc_node *root;
  uopi_jit_tier t;
  unsigned flags;   /* its compile flags */
  uopi_kkey raw, key;
  uopi_kmeta meta;
  uopi_kentry *e;   /* held: ready, or pending and ours to fill */
  int raw_hit;      /* e came from the raw-key lookup */
  int from;         /* FROM_MEMORY (e ready), FROM_DISK, MISSED (m to compile), BUSY (e NULL) */
  LLVMModuleRef m;  /* MISSED: the emitted module, for the JIT half */
  unsigned nargs;   /* the kernel's parameters (its buffers and the status word) */
  uint32_t ninst;   /* linearized instructions (UOPC_DEBUG=cache) */
  double ms;        /* the compile's time so far: linearize and emit (ms) */
  uopc_status st;   /* the JIT half's result, with its error in err */
  uopc_error err;
} kjob;

/* The front half: check, raw-key lookup, prepare, key, cache get (blocking
   when wait is 1), and on a miss linearize and emit.  UOPC_OK with j->from
   set (a disk hit is filled here at once), or the error in c (nothing held,
   no module).  A batch (wait 0) keeps the raw key until after later
   kernels' fronts, which may reuse the context's raw-key memo: the key owns
   a copy of its bytes. */
static uopc_status front(uopc_ctx *c, kjob *j, int wait) {
  uopi_kernel_ir k;
  uopi_prog p = {0};
  uopi_jit_code *code = NULL;
  j->from = FROM_MEMORY;
  uopc_status st = check(c, j->root);                                 /* a kernel's root? */
  unsigned flags = j->flags; /* with UOPI_EMIT_STREAM once it is known to pay */
  if (!st) st = uopi_kkey_raw(c, j->root, j->t, flags, &j->raw);     /* raw-key lookup: the graph as given, */
  if (!st && !wait && !uopi_kkey_own(&j->raw)) uopc_fail(c, st = UOPC_ERR_NOMEM, "out of memory");
  if (!st && (j->e = uopi_kcache_find_raw(&j->raw))) return j->raw_hit = 1, UOPC_OK; /* seen before: a memory hit */
  if (!st) st = uopi_kernel_prepare(c, j->root, &k);                 /* prepare: indices simplified */
  if (!st) st = with_stream(c, &k, &flags);                          /* streaming stores? */
  if (!st) st = uopi_kkey_make(c, &k, j->t, flags, &j->key);         /* key of the prepared graph */
  if (!st) st = cache_get(c, &k, &j->key, wait, &j->meta, &j->e, &code, &j->from); /* memory, then disk */
  if (!st && j->from == FROM_DISK) cache_put(&j->key, &j->meta, j->e, code, 0, 0, 0, j->t);
  if (st || j->from != MISSED) return st;
  double t0 = now_ms();
  j->nargs = k.nbufs + 1;
  st = uopi_linearize(c, &k, &p);                                   /* linearize: the ordered program */
  j->ninst = p.n;
  if (!st) st = verify(c, &p, j->meta.name);
  if (!st) st = uopi_emit(c, &p, j->meta.name, flags, &j->m);       /* emit: LLVM IR */
  uopi_prog_free(&p);
  j->ms = now_ms() - t0;
  if (st) {
    uopi_kcache_abandon(j->e);                                      /* waiters start over */
    j->e = NULL;
  }
  return st;
}

/* The JIT half of a MISSED job: passes, codegen, link (uopi_jit_compile
   disposes the module), then cache put, or the entry abandoned on failure
   (waiters start over).  Any thread; the error goes to j->err. */
static void back(kjob *j) {
  uopi_jit_code *code = NULL;
  double t0 = now_ms();
  j->st = uopi_jit_compile(j->m, j->meta.name, j->nargs, j->t, &code, &j->err);
  j->m = NULL;
  if (j->st) {
    uopi_kcache_abandon(j->e);
    j->e = NULL;
    return;
  }
  cache_put(&j->key, &j->meta, j->e, code, 1, j->ms + (now_ms() - t0), j->ninst, j->t);
}

/* The end of a job: its entry (held, ready; NULL when a half failed or it
   was BUSY), the graph as given remembered for it; the keys freed. */
static uopi_kentry *finish(kjob *j) {
  uopi_kentry *e = j->e;
  if (e && !j->raw_hit) uopi_kcache_alias(e, &j->raw);
  uopi_kkey_free(&j->key);
  uopi_kkey_free(&j->raw);
  *j = (kjob){.root = j->root, .t = j->t, .flags = j->flags};
  return e;
}

uopc_status uopi_compile_kernel(uopc_ctx *c, uopc_node *root, uopi_jit_tier t, unsigned flags, uopi_kentry **out) {
  kjob j = {.root = root, .t = t, .flags = flags};
  *out = NULL;
  uopc_status st = front(c, &j, 1);
  if (!st && j.from == MISSED) {
    back(&j);
    if ((st = j.st)) uopc_fail(c, j.err.code, "%s", j.err.msg);
  }
  uopi_kentry *e = finish(&j);
  if (!st) *out = e;
  return st;
}

/* The JIT halves of a batch's misses, shared by its lanes: each lane takes
   the next job until none is left. */
typedef struct batch {
  kjob **miss;
  uint32_t n;
  _Atomic uint32_t next;
} batch;

static void lane(void *arg, uint32_t unused) {
  (void)unused;
  batch *b = arg;
  for (uint32_t i; (i = atomic_fetch_add_explicit(&b->next, 1, memory_order_relaxed)) < b->n;) back(b->miss[i]);
}

/* The most emitted modules a batch keeps before its JIT halves run, per
   thread: a plan of hundreds of kernels must not hold hundreds of LLVM
   modules at once (one thread: 1, each kernel compiled as soon as emitted). */
#define WINDOW_PER_THREAD 8

uopc_status uopi_compile_kernels(uopc_ctx *c, uopc_node *const *roots, const uopi_jit_tier *tiers,
                                 const unsigned *kflags, uint32_t n, unsigned flags, uint32_t threads,
                                 uopi_kentry **out) {
  for (uint32_t i = 0; i < n; i++) out[i] = NULL;
  if (threads < 1) threads = 1;
  const uint32_t window = threads > 1 ? WINDOW_PER_THREAD * threads : 1;
  kjob *jobs = calloc(n ? n : 1, sizeof *jobs);
  kjob **miss = calloc(window, sizeof *miss);
  if (!jobs || !miss) {
    free(jobs), free(miss);
    return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory"), UOPC_ERR_NOMEM;
  }
  /* the front halves, in order, without waiting: a kernel whose entry is
     pending (another thread's, or an equal kernel's earlier in the batch)
     is BUSY and comes after the batch; every `window` misses, their JIT
     halves on up to `threads` threads, which fill or abandon every pending
     entry the batch holds (others may be waiting for them) */
  uopc_status st = UOPC_OK;
  uint32_t nf = 0;
  while (nf < n && !st) {
    uint32_t nmiss = 0;
    for (; nf < n && nmiss < window; nf++) {
      kjob *j = &jobs[nf];
      *j = (kjob){.root = roots[nf], .t = tiers[nf], .flags = kflags ? kflags[nf] : flags};
      if ((st = front(c, j, 0))) break;
      if (j->from == MISSED) miss[nmiss++] = j;
    }
    batch b = {miss, nmiss, 0};
    uint32_t lanes = threads < nmiss ? threads : nmiss;
    if (lanes > 1) uopi_pool_run(lane, &b, lanes);
    else lane(&b, 0);
  }
  /* in order: the first error, then the BUSY kernels, now waiting safely
     (the batch holds no pending entry any more) */
  uint32_t used = st ? nf + 1 : n;
  for (uint32_t i = 0; i < used; i++) {
    kjob *j = &jobs[i];
    if (!st && j->from == MISSED && j->st) st = j->st, uopc_fail(c, j->err.code, "%s", j->err.msg);
    if (!st && j->from == BUSY) {
      finish(j); /* nothing held: the keys freed, the job as new */
      st = front(c, j, 1);
      if (!st && j->from == MISSED) {
        back(j);
        if ((st = j->st)) uopc_fail(c, j->err.code, "%s", j->err.msg);
      }
    }
    out[i] = finish(j);
  }
  if (st)
    for (uint32_t i = 0; i < n; i++) {
      uopi_kcache_release(out[i]);
      out[i] = NULL;
    }
  free(jobs);
  free(miss);
  return st;
}

char *uopi_compile_text(uopc_ctx *c, uopc_node *root, uopi_jit_tier t, unsigned flags, int asm_text) {
  uopi_kernel_ir k;
  uopi_prog p = {0};
  char name[64];
  LLVMModuleRef m = NULL;
  uopi_jit_unique_name(name, sizeof name, "uopc_k");
  uopc_status st = check(c, root);
  if (!st) st = uopi_kernel_prepare(c, root, &k);
  if (!st) st = with_stream(c, &k, &flags);
  if (!st) st = uopi_linearize(c, &k, &p);
  if (!st) st = verify(c, &p, name);
  if (!st) st = uopi_emit(c, &p, name, flags, &m);
  if (!st && uopi_check(c)) st = verify_module(c, m); /* no JIT here to verify it */
  uopi_prog_free(&p);
  if (st) {
    uopi_jit_module_free(m);
    return NULL;
  }
  char *s = NULL;
  if (!asm_text) {
    s = uopi_jit_ir_text(m);
    if (!s) uopc_fail(c, UOPC_ERR_NOMEM, "out of memory");
  } else {
    uopc_error je = {0};
    if (uopi_jit_asm_text(m, t, &s, &je) != UOPC_OK) uopc_fail(c, je.code, "%s", je.msg);
  }
  uopi_jit_module_free(m);
  return s;
}

uopc_status uopi_tier_of(const uopc_compile_opts *o, uopi_jit_tier *t, uopc_error *e) {
  *t = UOPI_JIT_TIER0;
  if (o && (o->flags & ~(UOPC_COMPILE_FAST_MATH | UOPC_COMPILE_NO_REORDER | UOPC_COMPILE_NO_UPCAST | UOPC_COMPILE_HOT |
                         UOPC_COMPILE_STREAM | UOPC_COMPILE_NO_STREAM | UOPC_COMPILE_GUARD_PAGES))) {
    if (e) {
      memset(e, 0, sizeof *e);
      e->code = UOPC_ERR_ARG;
      snprintf(e->msg, sizeof e->msg, "unknown compile flags 0x%x (UOPC_COMPILE_* bits)", o->flags);
    }
    return UOPC_ERR_ARG;
  }
  if (!o || o->tier == UOPC_TIER_FAST) return UOPC_OK;
  if (o->tier == UOPC_TIER_STRONG) return *t = UOPI_JIT_TIER2, UOPC_OK;
  if (e) {
    memset(e, 0, sizeof *e);
    e->code = UOPC_ERR_ARG;
    snprintf(e->msg, sizeof e->msg, "unknown tier %d (UOPC_TIER_FAST or UOPC_TIER_STRONG)", (int)o->tier);
  }
  return UOPC_ERR_ARG;
}

uopc_status uopi_compile_shutdown(uopc_error *e) {
  uopi_pool_shutdown();      /* the plans' worker threads (idle: no call may be running) */
  uopi_kcache_drop_unheld(); /* cached code would keep the engine alive */
  return uopi_jit_shutdown(e);
}
