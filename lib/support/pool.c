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
 * A short spin before each sleep: a worker that finds no batch, and a
 * caller whose batch still has a worker in it, first poll (with the CPU's
 * pause hint) for up to UOPI_POOL_SPIN_NS before sleeping on the condition
 * variable.  A plan runs its split kernels back to back, a few hundred
 * microseconds each; sleeping between them put a wake-up, tens of
 * microseconds on a VM's idle vCPU, on the critical path of every kernel
 * (docs/decisions.md, stop 28).  The spin only moves the sleep later: every
 * state change still happens under the mutex and is still signalled, so the
 * pool behaves the same with the spin at 1 us (UOPC_POOL_SPIN_US=1).  No
 * spin for a batch of more threads (its caller and workers) than the
 * process has CPUs: a polling thread would hold a CPU that a thread with
 * work is waiting for.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "support/pool.h"
#include "support/support.h"

#define UOPI_POOL_SPIN_NS 200000u /* the default spin, 200 us (UOPC_POOL_SPIN_US) */

typedef struct batch {
  uopi_pool_fn *fn;
  void *arg;
  uint32_t n;
  _Atomic uint32_t next;   /* the next job to claim */
  _Atomic uint32_t active; /* workers holding it (changed under the mutex,
                              read by the caller's spin without it) */
  int queued;              /* in the queue (under the mutex) */
  struct batch *qnext;
} batch;

static struct {
  pthread_mutex_t mu;
  pthread_cond_t work;    /* a batch was queued, or stop */
  pthread_cond_t idle;    /* a worker let go of a batch */
  batch *head, *tail;
  /* what a spinning thread polls (changed under the mutex, read without it) */
  _Atomic uint32_t wake;    /* batches queued since the start, plus stops */
  _Atomic uint64_t spin_ns; /* the spin, as the last batch's caller read it */
  pthread_t th[UOPI_POOL_MAX];
  uint32_t nth;
  uint32_t cpus;            /* uopi_cpu_count() when the workers were last started */
  int stop;
} P = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0, UOPI_POOL_SPIN_NS,
       {0}, 0, 1, 0};

/* The spin for a batch of n jobs: UOPC_POOL_SPIN_US, read at every batch (a
   getenv against a kernel's hundreds of microseconds), else the default; 0
   when the batch's threads (the caller and n - 1 workers, at most all of
   them) outnumber the CPUs (counted when workers are started). */
static uint64_t spin_for(uint32_t n) {
  if ((n - 1 < P.nth ? n : P.nth + 1) > P.cpus) return 0;
  uint64_t us;
  return uopi_env_count("UOPC_POOL_SPIN_US", &us) && us < UINT64_MAX / 1000 ? us * 1000 : UOPI_POOL_SPIN_NS;
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Polls *x until it is 0 (until_zero) or until it differs from from, for
   up to P.spin_ns; 1 when it did (acquire: what was released before the
   change is seen). */
static int spin(_Atomic uint32_t *x, int until_zero, uint32_t from) {
  uint64_t end = 0, ns = atomic_load_explicit(&P.spin_ns, memory_order_relaxed);
  if (!ns) return 0;
  for (uint32_t i = 0;; i++) {
    uint32_t v = atomic_load_explicit(x, memory_order_acquire);
    if (until_zero ? v == 0 : v != from) return 1;
    if ((i & 63) == 0) {
      uint64_t t = now_ns();
      if (!end) end = t + ns;
      else if (t >= end) return 0;
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

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
    if (!P.head && !P.stop) {
      /* the next kernel's batch usually comes soon: poll before sleeping */
      uint32_t w = atomic_load_explicit(&P.wake, memory_order_relaxed);
      pthread_mutex_unlock(&P.mu);
      spin(&P.wake, 0, w);
      pthread_mutex_lock(&P.mu);
      while (!P.head && !P.stop) pthread_cond_wait(&P.work, &P.mu);
    }
    if (P.stop) break;
    batch *b = P.head;
    atomic_fetch_add_explicit(&b->active, 1, memory_order_relaxed);
    pthread_mutex_unlock(&P.mu);
    drain(b);
    pthread_mutex_lock(&P.mu);
    unqueue(b); /* every job is claimed: nobody else needs to find it */
    /* release: the jobs' results before the caller's spin sees 0; b may be
       gone once it is 0 (its caller returns) */
    if (atomic_fetch_sub_explicit(&b->active, 1, memory_order_release) == 1) pthread_cond_broadcast(&P.idle);
  }
  pthread_mutex_unlock(&P.mu);
  return NULL;
}

/* Under the mutex: at least want workers (as many as could be started). */
static void grow(uint32_t want) {
  if (want > UOPI_POOL_MAX) want = UOPI_POOL_MAX;
  P.stop = 0;
  if (P.nth < want) P.cpus = uopi_cpu_count();
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
  atomic_store_explicit(&P.spin_ns, spin_for(n), memory_order_relaxed);
  int helpers = P.nth > 0;
  if (helpers) {
    b.queued = 1;
    if (P.tail) P.tail->qnext = &b;
    else P.head = &b;
    P.tail = &b;
    atomic_fetch_add_explicit(&P.wake, 1, memory_order_release);
    if (n - 1 >= P.nth) pthread_cond_broadcast(&P.work);
    else
      for (uint32_t i = 0; i < n - 1; i++) pthread_cond_signal(&P.work);
  }
  pthread_mutex_unlock(&P.mu);
  drain(&b);
  if (!helpers) return;
  pthread_mutex_lock(&P.mu);
  unqueue(&b); /* no worker takes it from here on: active only falls */
  if (atomic_load_explicit(&b.active, memory_order_relaxed)) {
    pthread_mutex_unlock(&P.mu);
    if (spin(&b.active, 1, 0)) return; /* acquire: the workers' jobs are done and seen */
    pthread_mutex_lock(&P.mu);
    while (atomic_load_explicit(&b.active, memory_order_relaxed)) pthread_cond_wait(&P.idle, &P.mu);
  }
  pthread_mutex_unlock(&P.mu);
}

void uopi_pool_shutdown(void) {
  pthread_mutex_lock(&P.mu);
  P.stop = 1;
  atomic_fetch_add_explicit(&P.wake, 1, memory_order_release); /* a spinning worker stops spinning */
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
