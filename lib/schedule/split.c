/* lib/schedule/split.c - a scheduled kernel as chunks for threads (split.h).
 *
 * A post-pass on the kernel graphs lower.c makes: it reads only the graph
 * (the outermost END's first RANGE is the axis to split), so it holds
 * whatever loop nest lower.c builds inside that loop.
 */
#include <stdlib.h>
#include <string.h>

#include "schedule/split.h"
#include "uopc/algebra.h"

static int is_shared(uint32_t slot, const uint32_t *shared, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (shared[i] == slot) return 1;
  return 0;
}

/* The kernel slot an address (INDEX(BUFFER, i)) is of, or -1 when it is not one. */
static int64_t slot_of(const uopc_node *addr) {
  if (addr->op != UOPC_OP_INDEX || addr->nsrc != 2 || addr->src[0]->op != UOPC_OP_BUFFER) return -1;
  return addr->src[0]->arg.i;
}

uint64_t uopi_kernel_work(uopc_ctx *c, uopc_node *root) {
  uint32_t n = 0;
  uopc_node **all = uopc_toposort(c, root, &n);
  if (!all) return UINT64_MAX;
  uint64_t w = 1;
  for (uint32_t i = 0; i < n; i++) {
    if (all[i]->op != UOPC_OP_RANGE) continue;
    const uopc_node *e = all[i]->src[0];
    if (e->op != UOPC_OP_CONST) {
      w = UINT64_MAX;
      break;
    }
    uint64_t s = e->arg.i > 0 ? (uint64_t)e->arg.i : 0;
    w = s && w > UINT64_MAX / s ? UINT64_MAX : w * s;
  }
  uopc_mem_free(c, all, (size_t)n * sizeof *all);
  return w;
}

/* Whether the stores and loads of root keep to the rules of split.h (the
   parts that hold of the whole graph): 1 yes, 0 no. */
static int accesses_ok(uopc_ctx *c, uopc_node *root, const uint32_t *shared, uint32_t nshared) {
  uint32_t n = 0;
  uopc_node **all = uopc_toposort(c, root, &n);
  if (!all) return 0;
  int ok = 1;
  for (uint32_t i = 0; i < n && ok; i++) {
    const uopc_node *u = all[i];
    if (u->op == UOPC_OP_STORE && slot_of(u->src[0]) < 0) ok = 0;
    if (u->op != UOPC_OP_LOAD) continue;
    int64_t s = slot_of(u->src[0]);
    if (s < 0) continue; /* not a buffer's: nothing a chunk writes */
    if (is_shared((uint32_t)s, shared, nshared)) continue;
    int stored = 0, same = 0;
    for (uint32_t j = 0; j < n; j++)
      if (all[j]->op == UOPC_OP_STORE && slot_of(all[j]->src[0]) == s) stored = 1, same |= all[j]->src[0] == u->src[0];
    if (stored && !same) ok = 0;
  }
  uopc_mem_free(c, all, (size_t)n * sizeof *all);
  return ok;
}

/* The address bounds chunk root writes, per kernel slot (lo[s] > hi[s]:
   none); 0 when an index has no finite bounds or on OOM. */
static int store_bounds(uopc_ctx *c, uopc_node *root, const uint32_t *shared, uint32_t nshared, int64_t *lo,
                        int64_t *hi, uint32_t nslots) {
  uint32_t n = 0;
  uopc_node **all = uopc_toposort(c, root, &n);
  if (!all) return 0;
  int ok = 1;
  for (uint32_t i = 0; i < n && ok; i++) {
    const uopc_node *u = all[i];
    if (u->op != UOPC_OP_STORE) continue;
    int64_t s = slot_of(u->src[0]);
    if (s < 0 || (uint64_t)s >= nslots) {
      ok = 0;
      break;
    }
    if (is_shared((uint32_t)s, shared, nshared)) continue;
    uopc_node *idx = uopc_simplify(c, u->src[0]->src[1]);
    if (!idx) {
      ok = 0;
      break;
    }
    int64_t a = uopc_vmin(c, idx), b = uopc_vmax(c, idx);
    if (a <= INT64_MIN / 2 || b >= INT64_MAX / 2) ok = 0; /* unbounded */
    if (a < lo[s]) lo[s] = a;
    if (b > hi[s]) hi[s] = b;
  }
  uopc_mem_free(c, all, (size_t)n * sizeof *all);
  return ok;
}

uint32_t uopi_split_kernel(uopc_ctx *c, uopc_node *root, uint32_t T, uint64_t min_work, const uint32_t *shared,
                           uint32_t nshared, uopc_node **chunks, int64_t *axis) {
  *axis = 0;
  if (T < 2 || !root || root->op != UOPC_OP_SINK || root->nsrc != 1) return 0;
  uopc_node *end = root->src[0];
  if (end->op != UOPC_OP_END || end->nsrc < 2) return 0;
  uopc_node *r = end->src[1];
  if (r->op != UOPC_OP_RANGE || r->src[0]->op != UOPC_OP_CONST) return 0;
  int64_t N = r->src[0]->arg.i;
  if (N < (int64_t)T || N > INT32_MAX) return 0;
  uint64_t work = uopi_kernel_work(c, root);
  if (work == UINT64_MAX || work < min_work) return 0;
  if (!accesses_ok(c, root, shared, nshared)) return 0;
  /* a fresh RANGE id: above every id in the graph */
  uint32_t n = 0;
  uopc_node **all = uopc_toposort(c, root, &n);
  if (!all) return UINT32_MAX;
  int64_t fresh = 0;
  uint32_t nslots = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (all[i]->op == UOPC_OP_RANGE && all[i]->arg.i >= fresh) fresh = all[i]->arg.i + 1;
    if (all[i]->op == UOPC_OP_BUFFER && all[i]->arg.i >= 0 && (uint64_t)all[i]->arg.i >= nslots) nslots = (uint32_t)all[i]->arg.i + 1;
  }
  uopc_mem_free(c, all, (size_t)n * sizeof *all);
  size_t sz = (size_t)(nslots ? nslots : 1) * sizeof(int64_t);
  int64_t *lo = malloc(sz), *hi = malloc(sz), *plo = malloc(sz), *phi = malloc(sz);
  uint32_t got = 0;
  if (!lo || !hi || !plo || !phi) {
    uopc_fail(c, UOPC_ERR_NOMEM, "out of memory");
    got = UINT32_MAX;
    goto done;
  }
  uopc_node *rest[UOPC_LIMIT_DIMS + 1];
  uint32_t nr = end->nsrc - 1;
  if (nr > UOPC_LIMIT_DIMS + 1) goto done;
  for (uint32_t j = 1; j < nr; j++) rest[j] = end->src[1 + j];
  for (uint32_t t = 0; t < T; t++) {
    int64_t a = (int64_t)t * N / T, b = (int64_t)(t + 1) * N / T;
    uopc_node *nr0 = uopc_range(c, uopc_const_i(c, UOPC_DT_I32, b - a), fresh);
    uopc_node *at = a ? uopc_add(c, nr0, uopc_const_i(c, UOPC_DT_I32, a)) : nr0;
    uopc_node *body = at ? uopc_substitute(c, end->src[0], &r, &at, 1) : NULL;
    rest[0] = nr0;
    uopc_node *e = body ? uopc_end(c, body, rest, nr) : NULL;
    uopc_node *k = e ? uopc_sink(c, &e, 1) : NULL;
    if (!k) {
      got = UINT32_MAX;
      goto done;
    }
    /* this chunk's writes lie wholly after the previous chunk's */
    for (uint32_t s = 0; s < nslots; s++) lo[s] = INT64_MAX, hi[s] = INT64_MIN;
    if (!store_bounds(c, k, shared, nshared, lo, hi, nslots)) goto done;
    for (uint32_t s = 0; t && s < nslots; s++)
      if (lo[s] <= hi[s] && plo[s] <= phi[s] && lo[s] <= phi[s]) goto done;
    for (uint32_t s = 0; s < nslots; s++)
      if (lo[s] <= hi[s]) plo[s] = lo[s], phi[s] = hi[s];
      else if (!t) plo[s] = INT64_MAX, phi[s] = INT64_MIN;
    chunks[t] = k;
  }
  got = T;
  *axis = N;
done:
  if (got == 0) uopc_ctx_clear_error(c); /* a failed check only means no split */
  free(lo), free(hi), free(plo), free(phi);
  return got;
}
