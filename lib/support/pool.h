/* lib/support/pool.h - the engine's thread pool (pool.c): a process-wide
 * set of worker threads that run the chunks of split plan kernels
 * (lib/plan.c, docs/schedule.md "Threads").
 *
 * One call, uopi_pool_run, runs a batch of n jobs fn(arg, 0..n-1), each
 * exactly once, on the calling thread and on up to n - 1 workers, and
 * returns when every job has finished.  The caller takes part: it claims
 * jobs like a worker does, so a batch always finishes even when every
 * worker is busy with other callers' batches (several host threads may run
 * batches at once; a busy pool only means the caller runs more of its own
 * jobs).  Which thread runs a job never changes what the job computes.
 *
 * The workers are created lazily, on the first batch that needs them (the
 * largest n - 1 seen, at most UOPI_POOL_MAX), and live until
 * uopi_pool_shutdown.  Threads: every function may be called from any
 * thread, except uopi_pool_shutdown, which must not run at the same time as
 * a batch (the library's shutdown order: lib/compile.h).
 */
#ifndef UOPI_POOL_H
#define UOPI_POOL_H

#include <stdint.h>

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define UOPI_POOL_MAX 63 /* workers at most (64 threads with the caller) */

typedef void uopi_pool_fn(void *arg, uint32_t job);

/* Runs fn(arg, j) for j = 0..n-1 and returns when all have returned.  n 0
   or 1, or no worker could be started: every job on the calling thread, in
   order.  fn must not call uopi_pool_run itself. */
UOPI_FUNC void uopi_pool_run(uopi_pool_fn *fn, void *arg, uint32_t n);

/* Stops and joins the workers (idle ones: no batch may be running).  A later
   uopi_pool_run starts workers again.  Safe to call when none were started. */
UOPI_FUNC void uopi_pool_shutdown(void);

/* The workers started (for tests and the debug output). */
UOPI_FUNC uint32_t uopi_pool_workers(void);

/* The threads this process may run on (sched_getaffinity), at least 1. */
UOPI_FUNC uint32_t uopi_cpu_count(void);

#ifdef __cplusplus
}
#endif
#endif
