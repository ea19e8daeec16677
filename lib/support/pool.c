/* lib/support/pool.c - the engine's thread pool (pool.h).
 *
 * A queue of batches under one mutex.  A batch stays at the head of the
 * queue until all its jobs are claimed; jobs are claimed by an atomic
 * counter, by the caller and by any worker that found the batch there.
 * A worker that holds a batch counts in its `active`; the caller, after
 * claiming what is left, takes the batch off the queue and waits until
 * active is 0 (every claimed job finished, no worker still looking at
 * the batch, which lives on the caller's stack).
 *
 * No spinning: a worker sleeps on a condition variable between batches.
 * A split kernel has at least the split threshold's work (docs/schedule.md),
 * a few hundred microseconds, against a wake-up of some microseconds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "support/pool.h"

typedef struct batch {
  uopi_pool_fn *fn;
  void *arg;
  uint32_t n;
  _Atomic uint32_t next;  /* the next job to claim */
  uint32_t active;        /* workers holding it (under the mutex) */
  int queued;             /* in the queue (under the mutex) */
  struct batch *qnext;
} batch;

static struct {
  pthread_mutex_t mu;
  pthread_cond_t work;    /* a batch was queued, or stop */
  pthread_cond_t idle;    /* a worker let go of a batch */
  batch *head, *tail;
  pthread_t th[UOPI_POOL_MAX];
  uint32_t nth;
  int stop;
} P = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, {0}, 0, 0};

/* Runs b's jobs until none is left to claim. */
static void drain(batch *b) {
  for (;;) {
    uint32_t j = atomic_fetch_add_explicit(&b->next, 1, memory_order_relaxed);
    if (j >= b->n) return;
    b->fn(b->arg, j);
  }
}

/* Under the mutex: b off the queue (when it is there). */
static void unqueue(batch *b) {
  if (!b->queued) return;
  batch **pp = &P.head, *prev = NULL;
  while (*pp && *pp != b) prev = *pp, pp = &(*pp)->qnext;
  if (*pp) {
    *pp = b->qnext;
    if (P.tail == b) P.tail = prev;
  }
  b->queued = 0;
}

static void *worker(void *unused) {
  (void)unused;
  pthread_mutex_lock(&P.mu);
  for (;;) {
    while (!P.head && !P.stop) pthread_cond_wait(&P.work, &P.mu);
    if (P.stop) break;
    batch *b = P.head;
    b->active++;
    pthread_mutex_unlock(&P.mu);
    drain(b);
    pthread_mutex_lock(&P.mu);
    unqueue(b); /* every job is claimed: nobody else needs to find it */
    if (--b->active == 0) pthread_cond_broadcast(&P.idle);
  }
  pthread_mutex_unlock(&P.mu);
  return NULL;
}

/* Under the mutex: at least want workers (as many as could be started). */
static void grow(uint32_t want) {
  if (want > UOPI_POOL_MAX) want = UOPI_POOL_MAX;
  P.stop = 0;
  while (P.nth < want) {
    pthread_attr_t at;
    if (pthread_attr_init(&at)) return;
    pthread_attr_setstacksize(&at, 1u << 20); /* the jobs are JIT kernels: a small stack is plenty */
    int r = pthread_create(&P.th[P.nth], &at, worker, NULL);
    pthread_attr_destroy(&at);
    if (r) return;
    P.nth++;
  }
}

void uopi_pool_run(uopi_pool_fn *fn, void *arg, uint32_t n) {
  if (n <= 1) {
    if (n) fn(arg, 0);
    return;
  }
  batch b = {fn, arg, n, 0, 0, 0, NULL};
  pthread_mutex_lock(&P.mu);
  grow(n - 1);
  int helpers = P.nth > 0;
  if (helpers) {
    b.queued = 1;
    if (P.tail) P.tail->qnext = &b;
    else P.head = &b;
    P.tail = &b;
    if (n - 1 >= P.nth) pthread_cond_broadcast(&P.work);
    else
      for (uint32_t i = 0; i < n - 1; i++) pthread_cond_signal(&P.work);
  }
  pthread_mutex_unlock(&P.mu);
  drain(&b);
  if (!helpers) return;
  pthread_mutex_lock(&P.mu);
  unqueue(&b);
  while (b.active) pthread_cond_wait(&P.idle, &P.mu);
  pthread_mutex_unlock(&P.mu);
}

void uopi_pool_shutdown(void) {
  pthread_mutex_lock(&P.mu);
  P.stop = 1;
  pthread_cond_broadcast(&P.work);
  uint32_t n = P.nth;
  pthread_mutex_unlock(&P.mu);
  for (uint32_t i = 0; i < n; i++) pthread_join(P.th[i], NULL);
  pthread_mutex_lock(&P.mu);
  P.nth = 0;
  P.stop = 0;
  pthread_mutex_unlock(&P.mu);
}

uint32_t uopi_pool_workers(void) {
  pthread_mutex_lock(&P.mu);
  uint32_t n = P.nth;
  pthread_mutex_unlock(&P.mu);
  return n;
}

uint32_t uopi_cpu_count(void) {
  cpu_set_t s;
  if (sched_getaffinity(0, sizeof s, &s) != 0) return 1;
  int n = CPU_COUNT(&s);
  return n > 0 ? (uint32_t)n : 1;
}
