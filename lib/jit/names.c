/* lib/jit/names.c - unique kernel symbols.
 *
 * Every kernel in the JIT needs its own symbol: redefining one is a
 * DuplicateDefinition error.  A name carries a per-process random nonce, so
 * objects written to a cache by another process do not collide with this
 * process's own kernels, and a per-process counter.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "jit/jit_impl.h"

static pthread_once_t nonce_once = PTHREAD_ONCE_INIT;
static uint64_t nonce;
static atomic_uint_fast64_t counter;

static void make_nonce(void) {
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 40);
  }
  nonce = r & 0xffffffffffffu; /* 48 bits: 12 hex digits */
}

void uopi_jit_unique_name(char *buf, size_t n, const char *prefix) {
  pthread_once(&nonce_once, make_nonce);
  uint64_t i = atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
  snprintf(buf, n, "%s_%012" PRIx64 "_%" PRIu64, prefix, nonce, i);
}
