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
 * optimizes, generates code and links, lib/kcache stores.  Under
 * UOPC_DEBUG=check (read through the context) a verifier runs between
 * stages; a failing one is a bug and aborts with its reason.  Under
 * UOPC_DEBUG=linearize the program is printed to stderr.  Only this file knows their
 * order, and only this file drives the cache: on a miss it becomes the
 * filler of the pending entry and fills it (or abandons it on failure).
 *
 * The raw-key lookup comes before any rewriting: preparing a kernel costs
 * about as much as the rest of a memory hit, so a graph compiled before (in
 * any context) is found by its serialization as given.
 *
 * Ordered shutdown lives here too: cached code first, then the engine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/emit.h"
#include "compile.h"

/* ---- the stages -------------------------------------------------------------- */

/* A kernel root: a SINK, STORE or END (the rest is checked by prepare). */
static uopc_status check(uopc_ctx *c, uopc_node *root) {
  return uopi_kernel_check_root(c, root);
}

/* The verifier after linearize, under the debug switch: UOPC_OK, or
   UOPC_ERR_NOMEM; a broken program is a bug (abort with the reason). */
static uopc_status verify_prog(uopc_ctx *c, const uopi_prog *p) {
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

/* The program on stderr under UOPC_DEBUG=linearize. */
static void dump_prog(const uopi_prog *p, const char *name) {
  const char *d = getenv("UOPC_DEBUG");
  if (!d || !strstr(d, "linearize")) return;
  fprintf(stderr, "uopc linearize: kernel %s\n", name);
  uopi_prog_print(p, stderr);
}

/* linearize + emit: the LLVM module of the prepared kernel k as `name`. */
static uopc_status lower(uopc_ctx *c, const uopi_kernel_ir *k, const char *name, LLVMModuleRef *m) {
  uopi_prog p;
  *m = NULL;
  uopc_status st = uopi_linearize(c, k, &p); /* the ordered program */
  if (!st) st = verify_prog(c, &p);
  if (!st) dump_prog(&p, name);
  if (!st) st = uopi_emit(c, &p, name, m); /* LLVM IR */
  uopi_prog_free(&p);
  return st;
}

/* linearize + emit + JIT: the code of the prepared kernel k as `name`. */
static uopc_status build(uopc_ctx *c, const uopi_kernel_ir *k, const char *name, uopi_jit_tier t,
                         uopi_jit_code **out) {
  LLVMModuleRef m;
  uopc_status st = lower(c, k, name, &m);
  if (st) return st;
  uopc_error je = {0};
  st = uopi_jit_compile(m, name, k->nbufs + 1, t, out, &je); /* optimize, generate code, link; disposes m */
  if (st) uopc_fail(c, je.code, "%s", je.msg);
  return st;
}

/* cache get (memory, then disk) and, on a miss, the rest of the pipeline and
   cache put: the entry of the prepared kernel k with key `key`, held. */
static uopc_status get(uopc_ctx *c, const uopi_kernel_ir *k, uopi_kkey *key, uopi_jit_tier t, uopi_kentry **out) {
  uopi_kentry *e;
  int found = uopi_kcache_acquire(key, &e); /* memory: ready, or pending and ours to fill */
  if (found == UOPI_KCACHE_NOMEM) return uopc_fail(c, UOPC_ERR_NOMEM, "out of memory"), UOPC_ERR_NOMEM;
  if (found == UOPI_KCACHE_HIT) {
    *out = e;
    return UOPC_OK;
  }
  uopi_kmeta meta;
  uopi_kmeta_of(k, &meta);
  uopi_jit_code *code = NULL;
  if (uopi_kdisk_load(key, &meta, &code, meta.name, sizeof meta.name)) { /* disk */
    uopi_kcache_fill(e, code, &meta);
    *out = e;
    return UOPC_OK;
  }
  uopi_jit_unique_name(meta.name, sizeof meta.name, "uopc_k");
  uopc_status st = build(c, k, meta.name, t, &code);
  if (st) {
    uopi_kcache_abandon(e);
    return st;
  }
  uopi_kstat_add(UOPI_KSTAT_MISS, 1);
  char hex[2 * UOPI_KCACHE_HASH + 1];
  uopi_kcache_hex(key->hash, hex);
  uopi_kcache_debug("miss %s: compiled", hex);
  uopi_kcache_fill(e, code, &meta); /* cache put: memory, then disk */
  uopi_kdisk_store(key, &meta, code);
  *out = e;
  return UOPC_OK;
}

/* ---- the pipeline ---------------------------------------------------------------- */

uopc_status uopi_compile_kernel(uopc_ctx *c, uopc_node *root, uopi_jit_tier t, uopi_kentry **out) {
  uopi_kkey raw = {0}, key = {0};
  uopi_kernel_ir k;
  *out = NULL;
  uopc_status st = check(c, root);
  if (!st) st = uopi_kkey_raw(c, root, t, &raw);              /* the graph as given */
  if (!st && (*out = uopi_kcache_find_raw(&raw))) goto done; /* seen before: a memory hit */
  if (!st) st = uopi_kernel_prepare(c, root, &k);            /* simplify indices */
  if (!st) st = uopi_kkey_make(c, &k, t, &key);              /* the prepared graph's key */
  if (!st) st = get(c, &k, &key, t, out);                    /* memory, disk, or compile */
  if (!st) uopi_kcache_alias(*out, &raw);                    /* remember the graph as given */
done:
  uopi_kkey_free(&key);
  uopi_kkey_free(&raw);
  return st;
}

char *uopi_compile_text(uopc_ctx *c, uopc_node *root, uopi_jit_tier t, int asm_text) {
  uopi_kernel_ir k;
  char name[64];
  LLVMModuleRef m = NULL;
  uopc_status st = check(c, root);
  if (!st) st = uopi_kernel_prepare(c, root, &k);
  uopi_jit_unique_name(name, sizeof name, "uopc_k");
  if (!st) st = lower(c, &k, name, &m);
  if (st) return NULL;
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

uopc_status uopi_compile_shutdown(uopc_error *e) {
  uopi_kcache_drop_unheld(); /* cached code would keep the engine alive */
  return uopi_jit_shutdown(e);
}
