/* lib/codegen/stream.c - which kernels get streaming stores (emit.h,
 * uopi_stream_pays; the stores themselves: lib/jit/nontemporal.c).
 *
 * Asked for by UOPC_COMPILE_STREAM (a plan asks for its result's kernel:
 * plan.c; UOPC_STREAM=off turns it off everywhere): a temporary is read
 * again by the next kernel, which finds part of it in the cache after
 * ordinary stores (softmax's exp2 kernel streamed made fast softmax 1.2x
 * slower).  Only where a vector is a whole cache line (512-bit vectors):
 * narrower stores are never made non-temporal, so the second copy of the
 * loops would be compile time for nothing.  Measured: docs/loops.md,
 * "Streaming stores".
 *
 * A streaming store pays when what a kernel writes does not stay in the
 * cache anyway: then reading each line before writing it (what an ordinary
 * store does) is a third more memory traffic for a*b+a, and the written
 * lines evict data that is read again.  Under the threshold (half the last
 * level cache, at most 16 MiB) an ordinary store keeps the output in the
 * cache for the next kernel, which a streaming store would send to memory.
 * A kernel that reads what it writes (an accumulation) never streams.
 */
#include <unistd.h>

#include "codegen/emit.h"
#include "support/support.h"
#include "uopc/jit.h"

#define DEFAULT_LLC (32ull << 20)
/* The threshold is at most this: a VM reports its host socket's whole
   cache (480 MiB on the Intel Xeon kind of machine here, shared with every
   other guest), of which a guest of 2 vCPUs holds a small part.  There,
   a*b+a over 16M f32 (a 64 MiB result, under half of 480 MiB) ran 1.37x
   the clang loop streamed against 1.01x not (docs/loops.md). */
#define MAX_THRESHOLD (16ull << 20)

static uint64_t min_bytes(void) {
  uint64_t v;
  if (uopi_env_count("UOPC_STREAM_MIN_BYTES", &v)) return v;
  uint64_t llc = DEFAULT_LLC;
#ifdef _SC_LEVEL3_CACHE_SIZE
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) llc = (uint64_t)l3;
#endif
  return llc / 2 < MAX_THRESHOLD ? llc / 2 : MAX_THRESHOLD;
}

int uopi_stream_pays(uopc_ctx *c, const uopi_kernel_ir *k, unsigned flags) {
#if !defined(__x86_64__)
  (void)c, (void)k, (void)flags;
  return 0;
#else
  /* asked for, not turned off, and whole-line vector stores (lib/jit/nontemporal.c) */
  if (!(flags & UOPC_COMPILE_STREAM) || uopi_env_onoff("UOPC_STREAM") == 0 || uopi_jit_vector_bits() < 512) return 0;
  uint32_t n = 0;
  uopc_node **all = uopc_toposort(c, k->root, &n);
  if (!all) return -1; /* out of memory, recorded */
  uint64_t stored = 0, loaded = 0, iters = 1;
  size_t size = 0; /* of the largest dtype stored */
  for (uint32_t i = 0; i < n; i++) {
    const uopc_node *u = all[i];
    if (u->op == UOPC_OP_RANGE) {
      const uopc_node *e = u->src[0];
      uint64_t s = e->op == UOPC_OP_CONST && e->arg.i > 0 ? (uint64_t)e->arg.i : 0;
      iters = s && iters <= UINT64_MAX / s ? iters * s : s ? UINT64_MAX : 0;
    } else if ((u->op == UOPC_OP_STORE || u->op == UOPC_OP_LOAD) && u->src[0]->op == UOPC_OP_INDEX &&
               u->src[0]->src[0]->op == UOPC_OP_BUFFER) {
      int64_t slot = u->src[0]->src[0]->arg.i;
      uint64_t bit = slot >= 0 && slot < 64 ? 1ull << slot : 0;
      if (u->op == UOPC_OP_LOAD) {
        loaded |= bit;
      } else {
        stored |= bit;
        size_t b = uopc_dtype_size((uopc_dtype)u->src[1]->dtype);
        if (b > size) size = b;
      }
    }
  }
  uopc_mem_free(c, all, (size_t)n * sizeof *all);
  if (!stored || (stored & loaded) || !iters || !size) return 0;
  uint64_t bytes = iters > UINT64_MAX / size ? UINT64_MAX : iters * size;
  return bytes >= min_bytes();
#endif
}
