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
 * Ordered shutdown lives here too: the thread pool, cached code, then the engine.
 */
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

/* The JIT's error as the context's. */
static uopc_status jit(uopc_ctx *c, LLVMModuleRef m, const char *name, unsigned nargs, uopi_jit_tier t,
                       uopi_jit_code **out) {
  uopc_error je = {0};
  uopc_status st = uopi_jit_compile(m, name, nargs, t, out, &je); /* disposes m */
  if (st) uopc_fail(c, je.code, "%s", je.msg);
  return st;
}

/* A monotonic clock in ms (the compile time UOPC_DEBUG=cache reports). */
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* How the cache answered. */
enum { FROM_MEMORY, FROM_DISK, MISSED };

/* cache get: the entry of key, held: ready (FROM_MEMORY), or pending and
   ours to fill, with its code from disk (FROM_DISK) or not (MISSED: meta's
   name is then a fresh symbol for the compile). */
static uopc_status cache_get(uopc_ctx *c, const uopi_kernel_ir *k, uopi_kkey *key, uopi_kmeta *meta,
                             uopi_kentry **e, uopi_jit_code **code, int *from) {
  int found = uopi_kcache_acquire(key, e); /* memory (may wait for another thread's fill) */
  if (found == UOPI_KCACHE_NOMEM) return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory"), UOPC_ERR_NOMEM;
  *from = FROM_MEMORY;
  if (found == UOPI_KCACHE_HIT) return UOPC_OK;
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

/* ---- the pipeline ---------------------------------------------------------------- */

uopc_status uopi_compile_kernel(uopc_ctx *c, uopc_node *root, uopi_jit_tier t, unsigned flags, uopi_kentry **out) {
  uopi_kkey raw = {0}, key = {0};
  uopi_kernel_ir k;
  uopi_kmeta meta;
  uopi_prog p = {0};
  LLVMModuleRef m = NULL;
  uopi_jit_code *code = NULL;
  uopi_kentry *e = NULL;
  int from = FROM_MEMORY;
  *out = NULL;

  uopc_status st = check(c, root);                             /* a kernel's root? */
  if (!st) st = uopi_kkey_raw(c, root, t, flags, &raw);             /* raw-key lookup: the graph as given, */
  if (!st && (*out = uopi_kcache_find_raw(&raw))) goto done; /*   seen before: a memory hit */
  if (!st) st = uopi_kernel_prepare(c, root, &k);            /* prepare: indices simplified */
  if (!st) st = uopi_kkey_make(c, &k, t, flags, &key);             /* key of the prepared graph */
  if (!st) st = cache_get(c, &k, &key, &meta, &e, &code, &from); /* cache get: memory, then disk */
  double t0 = 0;
  uint32_t ninst = 0;
  if (!st && from == MISSED) {
    t0 = now_ms();
    st = uopi_linearize(c, &k, &p);                           /* linearize: the ordered program */
    ninst = p.n;
    if (!st) st = verify(c, &p, meta.name);
    if (!st) st = uopi_emit(c, &p, meta.name, flags, &m);     /* emit: LLVM IR */
    if (!st) st = jit(c, m, meta.name, k.nbufs + 1, t, &code); /* JIT: passes, codegen, link */
    if (st && e) uopi_kcache_abandon(e);                      /* waiters start over */
    uopi_prog_free(&p);
  }
  if (!st && from != FROM_MEMORY)
    cache_put(&key, &meta, e, code, from == MISSED, from == MISSED ? now_ms() - t0 : 0, ninst, t); /* cache put */
  if (!st) uopi_kcache_alias(e, &raw);                       /* remember the graph as given */
  if (!st) *out = e;
done:
  uopi_kkey_free(&key);
  uopi_kkey_free(&raw);
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
  if (o && (o->flags & ~(UOPC_COMPILE_FAST_MATH | UOPC_COMPILE_NO_REORDER | UOPC_COMPILE_NO_UPCAST | UOPC_COMPILE_HOT))) {
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
